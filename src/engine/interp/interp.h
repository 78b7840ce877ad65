/* Threaded-code interpreter with exact RFC 9669 semantics. */
#ifndef BPFRT_INTERP_H
#define BPFRT_INTERP_H

#include "core/prog.h"

#include <stdbool.h>

/* Runs a validated program with r1 = arg1, r2 = arg2 and returns r0. The
 * stack (prog->stack_depth bytes across all frames) lives on the native
 * stack of the caller, or on the program's private stack for this thread
 * when prog->privstack is set. */
uint64_t bpfrt_interp_run(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2);
/* Same; nested (another program runs on this thread) forces the private
 * stack. */
uint64_t bpfrt_interp_run_nested(const struct bpfrt_prog *prog, uint64_t arg1,
				 uint64_t arg2, bool nested);

/* Same run, also counting executed instructions into *executed (for the
 * ns-per-instruction figure of the benchmarks). */
uint64_t bpfrt_interp_run_counted(const struct bpfrt_prog *prog, uint64_t arg1,
				  uint64_t arg2, uint64_t *executed);

/* The checking interpreter (BPFRT_EXEC_CHECKED, interp/check.h): the
 * same run with every access and call argument checked against the
 * regions the program may touch; arg2 is the context's length (as
 * bpfrt_prog_run has it). A violation aborts the run:
 * bpfrt_run_state.abort_err = EFAULT with the report in abort_msg.
 * Always on a native stack. */
uint64_t bpfrt_interp_run_checked(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2);

/* Runs the subprogram starting at insn `start` as a fresh activation (its
 * own stack) with r1-r5 = args and returns its r0: interpreter callbacks.
 * start must be a subprogram start (bpfrt_callback_invoke checks). Inside
 * a checked run it runs checked. */
uint64_t bpfrt_interp_run_subprog(const struct bpfrt_prog *prog, uint32_t start,
				  const uint64_t args[5]);

#endif
