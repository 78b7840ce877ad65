/* The out-of-line parts of a run (exec.h): the refusals and reports, and
 * the engine's own whole run. */
#include "core/exec.h"
#include "core/stack_abi.h"
#include "interp/interp.h"

int bpfrt_exec_ctx_refused(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2)
{
	if (!arg1)
		return bpfrt_err(-EINVAL, "prog_run: %s: NULL context (the program was verified "
				 "for a %u-byte context)", prog->name, prog->ctx_size);
	return bpfrt_err(-EINVAL, "prog_run: %s: context of %llu bytes, the program reads %u",
			 prog->name, (unsigned long long)arg2, prog->max_ctx_access);
}

int bpfrt_exec_kind_refused(const struct bpfrt_prog *prog)
{
	return bpfrt_err(-EOPNOTSUPP, "prog_run: %s: kind %s cannot run here: its context (%s) "
			 "is built only by a kernel", prog->name, bpfrt_prog_kind_str(prog->kind),
			 bpfrt_prog_kind_info((enum bpfrt_prog_kind)prog->kind)->ctx_type);
}

int bpfrt_exec_report_abort(const struct bpfrt_prog *prog, const struct bpfrt_run_state *outer)
{
	const struct bpfrt_run_state copy = bpfrt_run_state, *inner = &copy;

	bpfrt_run_state = *outer;
	if (inner->abort_msg) /* the engine wrote the report */
		return bpfrt_err(-inner->abort_err, "%s", inner->abort_msg);
	if (inner->abort_err == ENOENT)
		return bpfrt_err(-EINVAL, "%s: insn %u: callx to unregistered helper %llu",
				 prog->name, inner->abort_pc, (unsigned long long)inner->abort_arg);
	/* the codes of the stack contract (core/stack_abi.h) */
	if (inner->abort_err == EFAULT)
		return bpfrt_err(-EFAULT, "%s: private stack overflow (stack %u bytes, "
				 "fault at %#llx): run aborted", prog->name, prog->privstack_size,
				 (unsigned long long)inner->abort_arg);
	if (inner->abort_err == ENOMEM)
		return bpfrt_err(-ENOMEM, "%s: cannot allocate a %s stack: run skipped",
				 prog->name, prog->privstack || !prog->jit_func ? "private" : "nest");
	if (inner->abort_err == ELOOP)
		return bpfrt_err(-ELOOP, "%s: nested more than %u levels deep without a "
				 "private stack: run skipped", prog->name, BPFRT_NEST_STACK_LEVELS);
	return bpfrt_err(-inner->abort_err, "%s: insn %u: run aborted", prog->name,
			 inner->abort_pc);
}

int bpfrt_prog_exec(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
		    uint64_t arg1, uint64_t arg2, uint64_t *retval)
{
	const struct bpfrt_run_state outer = bpfrt_run_state;
	int err = bpfrt_exec_check(prog, &mode, arg1, arg2, retval);

	if (err)
		return err;
	bpfrt_exec_begin();
	if (mode == BPFRT_EXEC_JIT)
		*retval = prog->jit_func(arg1, arg2);
	else if (mode == BPFRT_EXEC_CHECKED)
		*retval = bpfrt_interp_run_checked(prog, arg1, arg2);
	else
		*retval = bpfrt_interp_run(prog, arg1, arg2);
	return bpfrt_exec_end(prog, &outer);
}
