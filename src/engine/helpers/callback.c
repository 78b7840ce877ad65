/* Callback invocation for helpers, and the tail-call entry points that do
 * not live in an engine. See callback.h for the callback value format. */
#include "helpers/callback.h"
#include "core/run.h"
#include "interp/interp.h"
#include "maps/map.h"

#include <errno.h>

__thread uint64_t bpfrt_tail_call_fallbacks;

typedef uint64_t (*native_callback_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

static uint64_t callback_abort(int err, uint64_t cb)
{
	struct bpfrt_run_state *rs = &bpfrt_run_state;

	if (!rs->abort_err) {
		rs->abort_err = err;
		rs->abort_arg = cb;
	}
	return 1;
}

/* Interpreter handle: must name a subprogram start of the running
 * program, so a forged or stale value cannot start execution mid-code. */
static bool interp_callback_valid(const struct bpfrt_prog *prog, uint64_t cb)
{
	uint64_t start = cb & ~BPFRT_CALLBACK_INTERP_TAG;

	if (!prog || !prog->insns || start >= prog->insn_cnt)
		return false;
	return prog->subprogs[prog->insn_subprog[start]].start == start;
}

/* Out of line so that bpfrt_callback_invoke has no stack arrays: a JIT
 * abort unwinds past its frame without running any epilogue, which would
 * leave ASan's redzones around such arrays poisoned. */
static __attribute__((noinline)) uint64_t
invoke_interp(const struct bpfrt_prog *prog, uint64_t cb, uint64_t a1, uint64_t a2,
	      uint64_t a3, uint64_t a4, uint64_t a5)
{
	const uint64_t args[5] = { a1, a2, a3, a4, a5 };

	return bpfrt_interp_run_subprog(prog, (uint32_t)(cb & ~BPFRT_CALLBACK_INTERP_TAG), args);
}

uint64_t bpfrt_callback_invoke(uint64_t cb, uint64_t a1, uint64_t a2, uint64_t a3,
			       uint64_t a4, uint64_t a5)
{
	struct bpfrt_run_state *rs = &bpfrt_run_state;
	uint64_t r0;

	if (rs->callback_depth >= BPFRT_MAX_CALLBACK_DEPTH)
		return callback_abort(E2BIG, cb);
	if (cb & BPFRT_CALLBACK_INTERP_TAG) {
		if (!interp_callback_valid(rs->cur_prog, cb))
			return callback_abort(EINVAL, cb);
		rs->callback_depth++;
		r0 = invoke_interp(rs->cur_prog, cb, a1, a2, a3, a4, a5);
	} else {
		if (!cb)
			return callback_abort(EINVAL, cb);
		rs->callback_depth++;
		r0 = ((native_callback_fn)(uintptr_t)cb)(a1, a2, a3, a4, a5);
	}
	rs->callback_depth--;
	return r0;
}

bool bpfrt_run_aborted(void)
{
	return bpfrt_run_state.abort_err != 0;
}

uint64_t bpfrt_helper_tail_call(uint64_t ctx, uint64_t map, uint64_t index,
				uint64_t r4, uint64_t r5)
{
	bpfrt_tail_call_fallbacks++;
	return (uint64_t)-EOPNOTSUPP;
}

bpfrt_jit_fn bpfrt_tail_call_jit_target(uint64_t ctx, uint64_t map, uint64_t index)
{
	struct bpfrt_run_state *rs = &bpfrt_run_state;
	const struct bpfrt_prog *target;

	if (rs->tail_call_cnt >= BPFRT_MAX_TAIL_CALLS)
		return NULL;
	target = bpfrt_prog_array_get((struct bpfrt_map *)(uintptr_t)map, (uint32_t)index);
	if (!target || !target->jit_func)
		return NULL;
	rs->tail_call_cnt++;
	rs->tail_call_ctx = ctx;
	return target->jit_func;
}
