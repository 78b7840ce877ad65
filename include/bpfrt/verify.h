/* Verification of a loaded program, and what the verifier proved about it.
 *
 * Ownership: the log buffer is the caller's; bpfrt writes it only during
 * bpfrt_prog_verify. The program is not changed.
 *
 * Thread safety: bpfrt_prog_verify reads the program and may run while
 * other threads run it; the accessors read facts fixed at load. */
#ifndef BPFRT_PUBLIC_VERIFY_H
#define BPFRT_PUBLIC_VERIFY_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;

struct bpfrt_verify_opts {
	size_t sz;              /* sizeof(struct bpfrt_verify_opts) */
	char *log_buf;          /* may be NULL: message in bpfrt_last_error() only */
	size_t log_size;
	uint32_t log_level;     /* 0, 1 (insns of the failing path) or 2 (+ register states) */
	uint32_t ctx_size;      /* BPFRT_PROG_UNSPEC/SYSCALL: bytes at r1 */
	uint64_t insn_processed; /* out: instructions the verifier processed */
	uint32_t states;        /* out: states kept for pruning */
	uint32_t log_true_size; /* out: log_size the whole log needs, NUL included
				 * (libbpf's; the buffer keeps its tail if smaller) */
	uint32_t peak_states;   /* out: most states kept for pruning at once */
	uint64_t peak_state_bytes; /* out: the memory they took at the peak */
};
#define bpfrt_verify_opts__last_field peak_state_bytes

/* Runs the verifier on a loaded program (e.g. one loaded trusted) as its
 * kind, without changing it. Returns 0, or -EACCES/-EINVAL/-E2BIG with
 * bpfrt_last_error() "insn N: reason" and the log in opts->log_buf. */
BPFRT_API int bpfrt_prog_verify(struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts);
/* Largest context offset + size the program reads, or its tail-call
 * targets may (the context its prog arrays' owner was verified for):
 * attach points with a smaller context refuse it. 0 if unverified. */
BPFRT_API uint32_t bpfrt_prog_ctx_access(const struct bpfrt_prog *prog);
/* Size of the context the program was verified against (its kind's
 * largest context, or the ctx_size of UNSPEC/SYSCALL), 0 if unverified. */
BPFRT_API uint32_t bpfrt_prog_ctx_size(const struct bpfrt_prog *prog);
/* True if the program was verified at load. */
BPFRT_API bool bpfrt_prog_verified(const struct bpfrt_prog *prog);

#ifdef __cplusplus
}
#endif
#endif
