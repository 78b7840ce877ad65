/* bpfrt_prog_run: the host's nested-run policy around the engine's run
 * (core/exec.h). A run started while another is in progress on the thread
 * (bpfrt_prog_run inside a run, or inside an attached run) is nested: a
 * program already running here is refused (recursion), a JIT run of a
 * program without a private stack moves to the thread's nest stack of its
 * level (privstack.h), and an interpreter run always takes the program's
 * private stack. Top-level runs pay two TLS tests for it. */
#include "attach/run.h"
#include "core/exec.h"
#include "interp/interp.h"
#include "stack/privstack.h"

#include <stdatomic.h>

/* Direct runs in progress on this thread, innermost first (frames live on
 * the callers' stacks): the recursion guard and the "nested" test. */
struct run_frame {
	const struct bpfrt_prog *prog;
	struct run_frame *outer;
};

static __thread struct run_frame *run_top __attribute__((tls_model("initial-exec")));

static bool prog_running_here(const struct bpfrt_prog *prog)
{
	for (const struct run_frame *f = run_top; f; f = f->outer)
		if (f->prog == prog)
			return true;
	for (uint32_t i = 0; i < bpfrt_attach_tls.depth && i < BPFRT_ATTACH_MAX_NEST; i++)
		if (bpfrt_attach_tls.active[i] == prog)
			return true;
	return false;
}

static int run_refused(const struct bpfrt_prog *prog)
{
	atomic_fetch_add_explicit(&((struct bpfrt_prog *)prog)->attach_misses, 1,
				  memory_order_relaxed);
	return bpfrt_err(-EBUSY, "%s: already running on this thread: run skipped (recursion)",
			 prog->name);
}

int bpfrt_prog_run(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
		   uint64_t arg1, uint64_t arg2, uint64_t *retval)
{
	const struct bpfrt_run_state outer = bpfrt_run_state;
	struct run_frame frame;
	bool nested;
	int err;

	err = bpfrt_exec_check(prog, &mode, arg1, arg2, retval);
	if (err)
		return err;
	nested = run_top || bpfrt_attach_tls.depth;
	if (__builtin_expect(nested, 0) && prog_running_here(prog))
		return run_refused(prog);
	frame.prog = prog;
	frame.outer = run_top;
	run_top = &frame;
	bpfrt_exec_begin();
	if (mode == BPFRT_EXEC_JIT) {
		/* nested without a private stack: the run goes to this
		 * level's nest stack (privstack.h) */
		if (__builtin_expect(nested, 0) && !prog->privstack)
			*retval = bpfrt_nest_stack_run(prog, arg1, arg2);
		else
			*retval = prog->jit_func(arg1, arg2);
	} else if (mode == BPFRT_EXEC_CHECKED)
		*retval = bpfrt_interp_run_checked(prog, arg1, arg2);
	else
		*retval = bpfrt_interp_run_nested(prog, arg1, arg2, nested);
	run_top = frame.outer;
	return bpfrt_exec_end(prog, &outer);
}
