/* Executable memory: where JIT images live, and what bpfrt reports about it.
 *
 * Ownership: bpfrt owns every mapping; an image is freed with its program.
 * The caller owns only the stats structure it passes in.
 *
 * struct bpfrt_execmem_stats is an output struct of the options convention
 * (bpfrt/opts.h): it starts with `size_t sz`, which the caller sets to the
 * size it was compiled with (BPFRT_OPTS, or `= { .sz = sizeof(x) }`).
 * bpfrt writes only the fields that lie wholly within sz (an older
 * caller's smaller struct gets the fields it knows, nothing past its end)
 * and zeroes the bytes of a newer caller's larger struct past the fields
 * this bpfrt knows (a field it does not report reads 0).
 *
 * Thread safety: every call may be made from any thread while programs
 * load, run and unload; stats are a snapshot taken under the allocator's
 * lock. */
#ifndef BPFRT_PUBLIC_EXECMEM_H
#define BPFRT_PUBLIC_EXECMEM_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* JIT images are packed into 2 MiB packs of 64-byte chunks (the userspace
 * bpf_prog_pack); larger images, or all images with packing off, get a
 * mapping of their own. Code pages are never writable and executable. */
#define BPFRT_EXECMEM_PACK_SIZE  (2u << 20)
#define BPFRT_EXECMEM_CHUNK_SIZE 64u
#define BPFRT_EXECMEM_STATS_PACKS 64

enum bpfrt_execmem_backing {
	BPFRT_EXECMEM_BACKING_4K = 0,    /* ordinary pages */
	BPFRT_EXECMEM_BACKING_THP_SHMEM, /* memfd with shmem transparent huge pages (requested) */
	BPFRT_EXECMEM_BACKING_HUGETLB,   /* memfd from reserved hugetlb pages */
	BPFRT_EXECMEM_BACKING_THP_ANON,  /* private anonymous memory, one PMD-mapped transparent
					  * huge page (checked), written through /proc/self/mem */
	BPFRT_EXECMEM_BACKING_CNT,
};

struct bpfrt_execmem_pack_stats {
	uint64_t addr;                   /* executable address of the pack */
	uint32_t backing;                /* enum bpfrt_execmem_backing */
	uint32_t chunks_used;            /* of PACK_SIZE / CHUNK_SIZE */
};

struct bpfrt_execmem_stats {
	size_t sz;                       /* set by the caller: sizeof(struct bpfrt_execmem_stats) */
	bool packing;                    /* new images go into packs */
	uint32_t pack_cnt;               /* packs mapped, the spare included */
	uint32_t spare_cnt;              /* empty pack kept for reuse (0 or 1) */
	uint32_t packs_by_backing[BPFRT_EXECMEM_BACKING_CNT];
	uint32_t own_cnt;                /* images in a mapping of their own */
	uint64_t image_cnt;              /* live images, packed or not */
	uint64_t bytes_used;             /* chunk-rounded bytes in packs + own mappings */
	uint64_t bytes_mapped;           /* executable bytes mapped (packs + own) */
	uint32_t pack_info_cnt;          /* packs[] entries filled (first packs) */
	struct bpfrt_execmem_pack_stats packs[BPFRT_EXECMEM_STATS_PACKS];
};

#define bpfrt_execmem_stats__first_field packing
#define bpfrt_execmem_stats__last_field packs

/* Snapshot of the executable-memory allocator. Returns 0, or -EINVAL
 * naming the struct in bpfrt_last_error() (NULL stats, an sz that does not
 * reach packing, or above BPFRT_OPTS_SZ_MAX), nothing written. */
BPFRT_API int bpfrt_execmem_stats(struct bpfrt_execmem_stats *stats);
/* Returns the spare empty pack (kept so that a load/unload loop does not
 * map and fill 2 MiB each time) to the system. */
BPFRT_API void bpfrt_execmem_trim(void);
/* Writes the stats as text, one line per pack with its backing (for the
 * CLI and benchmarks). Returns 0 or -errno. */
BPFRT_API int bpfrt_execmem_dump(FILE *out);
/* "4k", "thp-shmem", "hugetlb" or "thp-anon". */
BPFRT_API const char *bpfrt_execmem_backing_name(uint32_t backing);
/* Turns packing on or off for images allocated from now on (default on;
 * the environment variable BPFRT_NO_PACK=1 starts it off). */
BPFRT_API void bpfrt_execmem_set_packing(bool on);
BPFRT_API bool bpfrt_execmem_packing(void);

#ifdef __cplusplus
}
#endif
#endif
