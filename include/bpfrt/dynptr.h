/* struct bpf_dynptr as bpfrt lays it out in memory (16 bytes, 8-aligned,
 * the size of Linux's opaque struct bpf_dynptr): what the dynptr helpers
 * (dynptr_from_mem, ringbuf_reserve_dynptr, dynptr_read/write/data...) and
 * an embedder's helper taking BPFRT_ARG_PTR_TO_DYNPTR (bpfrt/helpers.h)
 * read. Programs never see the fields: the verifier keeps them from
 * reading or writing a dynptr's bytes, so a helper may trust them.
 * Included by bpfrt/bpfrt.h. */
#ifndef BPFRT_PUBLIC_DYNPTR_H
#define BPFRT_PUBLIC_DYNPTR_H

#include <stdint.h>

struct bpfrt_dynptr {
	uint64_t data;     /* the memory's address; 0: a null dynptr (its
			    * initialisation failed, or it was released) */
	uint32_t size;     /* bits 0-23: bytes from data + offset; bits 28-30:
			    * the kind; bit 31: read-only */
	uint32_t offset;   /* where the dynptr starts in the memory */
};

#define BPFRT_DYNPTR_MAX_SIZE   ((1u << 24) - 1) /* Linux's DYNPTR_MAX_SIZE */
#define BPFRT_DYNPTR_SIZE_MASK  BPFRT_DYNPTR_MAX_SIZE
#define BPFRT_DYNPTR_KIND_SHIFT 28
#define BPFRT_DYNPTR_RDONLY     (1u << 31)

/* Linux's enum bpf_dynptr_type values */
enum bpfrt_dynptr_kind {
	BPFRT_DYNPTR_INVALID = 0,
	BPFRT_DYNPTR_LOCAL = 1,    /* memory of the program (a map value), a user
				    * ringbuf sample (read-only) */
	BPFRT_DYNPTR_RINGBUF = 2,  /* a ringbuf record, until submitted/discarded */
};

#endif
