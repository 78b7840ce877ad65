/* Private stacks: what bpfrt reports about the BPF stacks it maps for
 * programs (one per program and thread, with guard pages; the policy is
 * set by the load flags in bpfrt/prog.h).
 *
 * Ownership: bpfrt owns every stack; the caller owns only the structures
 * it passes in to be filled.
 *
 * Both structs are output structs of the options convention (bpfrt/opts.h):
 * they start with `size_t sz`, which the caller sets to the size it was
 * compiled with (BPFRT_OPTS, or `= { .sz = sizeof(x) }`). bpfrt writes only
 * the fields that lie wholly within sz (an older caller's smaller struct
 * gets the fields it knows, nothing past its end) and zeroes the bytes of a
 * newer caller's larger struct past the fields this bpfrt knows (a field it
 * does not report reads 0). An sz that does not reach the first field
 * after sz, or above BPFRT_OPTS_SZ_MAX (4096), or a NULL struct: -EINVAL
 * naming the struct in bpfrt_last_error(), nothing written. Stacks of a thread are freed when it exits,
 * a program's when it is freed.
 *
 * Thread safety: both calls may be made from any thread while programs
 * run; the figures are a snapshot (each counter read atomically, not all
 * of them at one instant). */
#ifndef BPFRT_PUBLIC_PRIVSTACK_H
#define BPFRT_PUBLIC_PRIVSTACK_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;

/* Private stack of a program. A run that touches a guard page is aborted
 * (bpfrt_prog_run returns -EFAULT naming the program and its stack size;
 * attached runs count an abort) and the program is marked faulted. */
struct bpfrt_privstack_info {
	size_t sz;              /* set by the caller: sizeof(struct bpfrt_privstack_info) */
	bool enabled;           /* runs use a private stack */
	bool faulted;           /* some run hit a guard page */
	uint32_t stack_size;    /* bytes of frames per thread (the deepest chain) */
	uint32_t thread_cnt;    /* threads that hold a stack of this program now */
	uint64_t faults;        /* runs aborted on a guard page */
};
#define bpfrt_privstack_info__first_field enabled
#define bpfrt_privstack_info__last_field faults
/* Returns 0, or -EINVAL (NULL prog, or info as above). */
BPFRT_API int bpfrt_prog_privstack_info(const struct bpfrt_prog *prog,
					struct bpfrt_privstack_info *info);

/* Process-wide private-stack counters. */
struct bpfrt_privstack_stats {
	size_t sz;              /* set by the caller: sizeof(struct bpfrt_privstack_stats) */
	uint64_t live;          /* stacks mapped now */
	uint64_t bytes_mapped;  /* their mappings, guard pages included */
	uint64_t allocs, frees; /* since start */
	uint64_t threads;       /* threads holding at least one stack (any kind) */
	uint64_t nest_stacks;   /* stacks of nesting levels (JIT runs nested without
				 * a private stack) mapped now, all threads */
	uint64_t nest_bytes;    /* their mappings, guard pages included */
};
#define bpfrt_privstack_stats__first_field live
#define bpfrt_privstack_stats__last_field nest_bytes
/* Returns 0, or -EINVAL (stats as above). */
BPFRT_API int bpfrt_privstack_stats(struct bpfrt_privstack_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
