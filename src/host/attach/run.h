/* Running the programs attached to a host event: the fast path shared by
 * tracepoints, trampolines (fentry/fexit/fmod_ret), fentry.multi and
 * kprobes.
 *
 * The caller brackets its event with bpfrt_attach_enter()/exit() (an RCU
 * read section: a detach unpublishes a program array, waits a grace period
 * and only then frees it) and calls bpfrt_attach_run() for each program.
 *
 * Recursion guard (Linux's prog->active, per thread instead of per CPU):
 * each thread keeps the stack of attached programs it is running now. A
 * program already on that stack (its run reached, directly or through a
 * helper or kfunc, an event it is attached to) is skipped and its miss
 * counter (bpfrt_prog_misses) incremented; so is any run nested deeper
 * than BPFRT_ATTACH_MAX_NEST. Outer runs of other programs are unaffected.
 *
 * A run starts with a fresh tail-call budget and its own abort status; the
 * outer run's (when an event fires inside a program run) come back intact.
 * An aborted attached run returns 0 and counts in prog->attach_aborts.
 *
 * Stacks: a JIT run at depth > 0 (an event fired inside an attached run)
 * of a program without a private stack moves to the thread's nest stack
 * of its level (stack/privstack.h). The depth-0 run is not switched, even
 * inside a direct bpfrt_prog_run (depth counts attached runs only, and
 * the top-level path stays one test): that run and what it calls use the
 * stack in use, one level; anything nested below it switches. */
#ifndef BPFRT_ATTACH_RUN_H
#define BPFRT_ATTACH_RUN_H

#include "stack/privstack.h"
#include "core/prog.h"
#include "core/rcu.h"
#include "core/run.h"
#include "interp/interp.h"
#include "jit/trampoline_backend.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BPFRT_ATTACH_MAX_NEST 8

struct bpfrt_attach_tls {
	uint32_t depth;                         /* entries used in active[] */
	const struct bpfrt_prog *active[BPFRT_ATTACH_MAX_NEST];
	uint64_t cookie;                        /* of the program running now */
	const void *event;                      /* attach point running now (func ip, tp) */
};

extern __thread struct bpfrt_attach_tls bpfrt_attach_tls
	__attribute__((tls_model("initial-exec")));

/* One attached program: what a program array (the RCU-published list of an
 * attach point) holds. ctx_off lets one argument buffer serve programs that
 * want different views of it (tp: the header, raw_tp: the u64 args). */
struct bpfrt_prog_array_item {
	struct bpfrt_prog *prog;
	uint64_t cookie;
	uint32_t ctx_off;       /* bytes added to the event's ctx for this program */
	uint32_t flags;
	void *link;             /* the struct bpfrt_link that owns this entry */
};

struct bpfrt_prog_array {
	uint32_t cnt;
	struct bpfrt_rcu_head rcu;
	struct bpfrt_prog_array_item items[];
};

/* Miss and abort counters live in struct bpfrt_prog (attach_misses,
 * attach_aborts); rare paths, kept out of line. */
void bpfrt_attach_count_miss(struct bpfrt_prog *prog);
void bpfrt_attach_count_abort(struct bpfrt_prog *prog);

static inline void bpfrt_attach_enter(void)
{
	bpfrt_rcu_read_lock();
}

static inline void bpfrt_attach_exit(void)
{
	bpfrt_rcu_read_unlock();
}

static inline bool bpfrt_attach_is_active(const struct bpfrt_prog *prog)
{
	uint32_t depth = bpfrt_attach_tls.depth;

	for (uint32_t i = 0; i < depth; i++)
		if (bpfrt_attach_tls.active[i] == prog)
			return true;
	return depth >= BPFRT_ATTACH_MAX_NEST;
}

/* Runs prog with r1 = ctx (JIT code if compiled, else the interpreter).
 * Returns true with *ret = r0, or false if the recursion guard skipped it
 * (miss counted; *ret untouched). Must be called between enter and exit. */
static inline bool bpfrt_attach_run(struct bpfrt_prog *prog, const void *ctx,
				    uint64_t cookie, uint64_t *ret)
{
	struct bpfrt_attach_tls *t = &bpfrt_attach_tls;
	int outer_abort;
	uint32_t outer_tail_calls, outer_may_goto, depth;
	struct bpfrt_check_run *outer_check;
	uint64_t outer_cookie, r0;

	if (__builtin_expect(bpfrt_attach_is_active(prog), 0)) {
		bpfrt_attach_count_miss(prog);
		return false;
	}
	depth = t->depth;
	t->active[depth] = prog;
	t->depth = depth + 1;
	outer_cookie = t->cookie;
	t->cookie = cookie;
	outer_abort = bpfrt_run_state.abort_err;
	outer_tail_calls = bpfrt_run_state.tail_call_cnt;
	outer_may_goto = bpfrt_run_state.may_goto_left;
	outer_check = bpfrt_run_state.check;
	bpfrt_run_state.abort_err = 0;
	bpfrt_run_state.tail_call_cnt = 0;
	bpfrt_run_state.may_goto_left = BPFRT_MAY_GOTO_BUDGET;
	bpfrt_run_state.check = NULL; /* never checked, even inside a checked run */

	if (__builtin_expect(prog->jit_func != NULL, 1)) {
		/* fired inside another attached run: without a private stack
		 * the run goes to this level's nest stack (stack/privstack.h) */
		if (__builtin_expect(depth != 0, 0) && !prog->privstack)
			r0 = bpfrt_nest_stack_run(prog, (uint64_t)(uintptr_t)ctx, 0);
		else
			r0 = prog->jit_func((uint64_t)(uintptr_t)ctx, 0);
	} else
		r0 = bpfrt_interp_run(prog, (uint64_t)(uintptr_t)ctx, 0);

	if (__builtin_expect(bpfrt_run_state.abort_err != 0, 0)) {
		bpfrt_attach_count_abort(prog);
		r0 = 0;
	}
	bpfrt_run_state.abort_err = outer_abort;
	bpfrt_run_state.tail_call_cnt = outer_tail_calls;
	bpfrt_run_state.may_goto_left = outer_may_goto;
	bpfrt_run_state.check = outer_check;
	t->cookie = outer_cookie;
	t->depth = depth;
	*ret = r0;
	return true;
}

/* Runs every program of an array in order with ctx + item->ctx_off; the
 * results are ignored (tracepoints, fentry, fexit). Call between enter and
 * exit with the array loaded by bpfrt_prog_array_load(). */
static inline void bpfrt_prog_array_run(const struct bpfrt_prog_array *arr, const void *ctx)
{
	uint64_t r0;

	for (uint32_t i = 0; i < arr->cnt; i++) {
		const struct bpfrt_prog_array_item *it = &arr->items[i];

		bpfrt_attach_run(it->prog, (const char *)ctx + it->ctx_off, it->cookie, &r0);
	}
}

/* The usual case, run without the general path: an array of one program
 * flagged BPFRT_TRAMP_ITEM_INLINE (JIT'ed, calls nothing: it cannot abort
 * or tail call and reads neither the cookie nor the probe frame) with the
 * recursion guard free; the x86 trampolines emit the same run inline.
 * Returns false, having done nothing, for any other array. */
static inline bool bpfrt_attach_run_inline(const struct bpfrt_prog_array *arr, const void *ctx)
{
	struct bpfrt_attach_tls *t = &bpfrt_attach_tls;
	struct bpfrt_prog *prog;

	if (arr->cnt != 1 || !(arr->items[0].flags & BPFRT_TRAMP_ITEM_INLINE) || t->depth)
		return false;
	prog = arr->items[0].prog;
	t->active[0] = prog;
	t->depth = 1;
	prog->jit_func((uint64_t)(uintptr_t)ctx + arr->items[0].ctx_off, 0);
	t->depth = 0;
	return true;
}

/* Reads an RCU-published array pointer inside the read section. */
static inline const struct bpfrt_prog_array *
bpfrt_prog_array_load(struct bpfrt_prog_array *_Atomic *slot)
{
	return atomic_load_explicit(slot, memory_order_acquire);
}

/* Writer side (callers serialise writers to one slot with their own lock):
 * copies of the array with one item added or removed, the old array freed
 * after a grace period. Return 0 or -errno. */
struct bpfrt_prog_array *bpfrt_prog_array_alloc(uint32_t cnt);
int bpfrt_prog_array_add(struct bpfrt_prog_array *_Atomic *slot,
			 const struct bpfrt_prog_array_item *item);
/* Removes the item owned by link; -ENOENT if there is none. With sync the
 * call returns after a grace period (no reader still runs the program). */
int bpfrt_prog_array_remove(struct bpfrt_prog_array *_Atomic *slot, const void *link,
			    bool sync);
/* Frees an array after a grace period (NULL is fine). */
void bpfrt_prog_array_free_rcu(struct bpfrt_prog_array *arr);

#endif
