/* Nested execution: BPF programs that run other programs through the
 * bpfrt_run_children kfunc.
 *
 * Ownership: a child list holds a use of each program in it (bpfrt/prog.h):
 * a program freed by its owner while listed lives until the list is
 * replaced or emptied. The caller's progs array is copied.
 *
 * Thread safety: bpfrt_nest_set_children may be called from any thread
 * while other threads run the lists (they see the old list or the new one
 * whole); it waits for runs still using the old list, so it must not be
 * called from inside a run. */
#ifndef BPFRT_PUBLIC_NEST_H
#define BPFRT_PUBLIC_NEST_H

#include "bpfrt/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;

/* bpfrt_nest_kfunc_register() registers (once) the kfunc
 * `__u64 bpfrt_run_children(__u64 list, __u64 arg)`, which runs every
 * program of child list `list` with r1 = arg (nested runs, on the stacks
 * bpfrt_prog_run describes, the recursion guard refusing a program already
 * running on the thread) and returns the sum of their results; it returns
 * the kfunc id or -errno. Call it before loading programs that use it.
 * bpfrt_nest_set_children() publishes a list (cnt 0 empties it).
 * arg is a number, not a context: children get no context, so a verified
 * child must read none (bpfrt_prog_ctx_access() 0, counting what its
 * tail-call targets and host kfuncs given r1 may read); others are
 * refused with -EINVAL naming them. Unverified children are trusted. */
#define BPFRT_NEST_MAX_LISTS 256
BPFRT_API int bpfrt_nest_kfunc_register(void);
BPFRT_API int bpfrt_nest_set_children(uint32_t list, struct bpfrt_prog *const *progs, uint32_t cnt);

#ifdef __cplusplus
}
#endif
#endif
