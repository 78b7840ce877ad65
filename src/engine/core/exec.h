/* Executing a program on the stack in use: the engine's part of a direct
 * run. bpfrt_prog_run (host: stack/run.c) is these pieces around the
 * host's nested-run policy (recursion guard, which stack a nested run
 * takes); they are inline so that it stays one function on its hot path.
 *
 *	err = bpfrt_exec_check(prog, &mode, arg1, arg2, retval);
 *	outer = bpfrt_run_state;        (before the check: the caller's copy)
 *	bpfrt_exec_begin();
 *	*retval = jit_func(...) / bpfrt_interp_run_nested(...) / ...
 *	return bpfrt_exec_end(prog, &outer);
 *
 * Runs nest (a helper or kfunc may run another program): the outer run's
 * state comes back intact whatever the inner one did, including a JIT
 * abort that unwound past other bookkeeping. */
#ifndef BPFRT_EXEC_H
#define BPFRT_EXEC_H

#include "core/error.h"
#include "core/prog.h"
#include "core/rcu.h"
#include "core/run.h"

#include <errno.h>

/* A verified program's run refused for its context: the message. */
int bpfrt_exec_ctx_refused(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2)
	__attribute__((noinline, cold));
/* A program of a kind whose context only a kernel builds: the message. */
int bpfrt_exec_kind_refused(const struct bpfrt_prog *prog) __attribute__((noinline, cold));
/* Reports the aborted run (-errno and bpfrt_last_error() from the abort
 * record) and puts the outer run's state back. */
int bpfrt_exec_report_abort(const struct bpfrt_prog *prog, const struct bpfrt_run_state *outer)
	__attribute__((noinline, cold));

/* The arguments of bpfrt_prog_run: resolves BPFRT_EXEC_DEFAULT in *mode.
 * Returns 0 or -errno with bpfrt_last_error() set. A verified program runs
 * only with a context it was verified for: r1 is a valid pointer to the
 * verifier (it prunes `if (ctx == 0)` branches unchecked), and arg2, the
 * context length, covers every byte it reaches. */
static inline int bpfrt_exec_check(const struct bpfrt_prog *prog, enum bpfrt_exec_mode *mode,
				   uint64_t arg1, uint64_t arg2, const uint64_t *retval)
{
	if (!prog || !retval)
		return bpfrt_err(-EINVAL, "prog_run: NULL argument");
	if (__builtin_expect(!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE), 0))
		return bpfrt_err(-EINVAL, "prog_run: %s is not loaded", prog->name);
	if (__builtin_expect(prog->kernel_only, 0))
		return bpfrt_exec_kind_refused(prog);
	if (*mode == BPFRT_EXEC_DEFAULT)
		*mode = prog->jit_func ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	if (*mode == BPFRT_EXEC_JIT && !prog->jit_func)
		return bpfrt_err(-ENOTSUP, "prog_run: %s was not JIT-compiled", prog->name);
	if (*mode != BPFRT_EXEC_INTERP && *mode != BPFRT_EXEC_JIT && *mode != BPFRT_EXEC_CHECKED)
		return bpfrt_err(-EINVAL, "prog_run: %s: unknown execution mode %d", prog->name,
				 (int)*mode);
	if (prog->verified && __builtin_expect(!arg1 || arg2 < prog->max_ctx_access, 0))
		return bpfrt_exec_ctx_refused(prog, arg1, arg2);
	return 0;
}

/* A fresh run state (abort, tail-call budget) and the run's RCU read
 * section: map values and tail-call targets the program reaches stay
 * alive until the run ends. */
static inline void bpfrt_exec_begin(void)
{
	bpfrt_run_state.abort_err = 0;
	bpfrt_run_state.abort_msg = NULL;
	bpfrt_run_state.tail_call_cnt = 0;
	bpfrt_run_state.may_goto_left = BPFRT_MAY_GOTO_BUDGET;
	/* a run nested in a checked one is not checked (unless asked):
	 * its callbacks must not look for the outer run's regions */
	bpfrt_run_state.check = NULL;
	bpfrt_rcu_read_lock();
}

/* Ends what bpfrt_exec_begin started: 0, or the aborted run's -errno;
 * the outer run's state is back either way. */
static inline int bpfrt_exec_end(const struct bpfrt_prog *prog,
				 const struct bpfrt_run_state *outer)
{
	bpfrt_rcu_read_unlock();
	if (__builtin_expect(bpfrt_run_state.abort_err != 0, 0))
		return bpfrt_exec_report_abort(prog, outer);
	bpfrt_run_state = *outer;
	return 0;
}

/* The whole run on the stack in use, without the host's nested-run
 * policy: for the engine's own callers that never run nested (the
 * conformance runner). Same arguments and results as bpfrt_prog_run. */
int bpfrt_prog_exec(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
		    uint64_t arg1, uint64_t arg2, uint64_t *retval);

#endif
