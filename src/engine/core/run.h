/* Per-thread run state shared by the interpreter, JIT code and the API.
 * A run can be aborted (callx to an unregistered helper now; faults and
 * stack-guard hits later): the engine records why in bpfrt_run_state and
 * unwinds to the entry; bpfrt_prog_run then reports -abort_err. */
#ifndef BPFRT_RUN_H
#define BPFRT_RUN_H

#include <stdint.h>

struct bpfrt_prog;
struct bpfrt_check_run;

/* may_goto fall-throughs one run may take (Linux's BPF_MAX_LOOPS) */
#define BPFRT_MAY_GOTO_BUDGET (8u * 1024 * 1024)

struct bpfrt_run_state {
	int abort_err;      /* 0, or a positive errno when the last run aborted */
	uint32_t abort_pc;  /* instruction index that aborted */
	uint64_t abort_arg; /* detail (e.g. the bad helper id) */
	void *entry_sp;     /* JIT: native stack pointer at program entry */
	/* Interpreter: the program whose code runs now (tail calls switch
	 * it); bpfrt_callback_invoke resolves interpreter callbacks in it. */
	const struct bpfrt_prog *cur_prog;
	uint32_t callback_depth; /* nested bpfrt_callback_invoke calls */
	uint32_t tail_call_cnt;  /* JIT: tail calls taken in this run */
	/* may_goto fall-throughs the run may still take (isa.h): every run
	 * entry sets BPFRT_MAY_GOTO_BUDGET and puts the outer run's back at
	 * its end (a nested run never refills the budget of the run around
	 * it); BPF-to-BPF calls, callbacks and tail calls share it. Not on a
	 * stack, so private and nest stacks change nothing. */
	uint32_t may_goto_left;
	uint64_t tail_call_ctx;  /* JIT: r1 of the tail call being made */
	/* fentry/fexit/fmod_ret/fentry.multi: the trampoline frame (struct
	 * bpfrt_tramp_frame, attach/trampoline.h) whose programs run now, for
	 * the get_func_ip/arg/ret helpers; NULL elsewhere. */
	void *tramp_frame;
	/* The report of an aborted run when the engine wrote one (the
	 * checking interpreter's violations), else NULL. */
	const char *abort_msg;
	/* Checking interpreter: the run's regions (interp/check.h), NULL in
	 * the other engines. */
	struct bpfrt_check_run *check;
};

/* initial-exec keeps the offset from the thread pointer the same in every
 * thread, so JIT code can reach it with one fs:/tpidr/tp-relative access. */
extern __thread struct bpfrt_run_state bpfrt_run_state
	__attribute__((tls_model("initial-exec")));

/* Offset of bpfrt_run_state from the thread pointer. */
intptr_t bpfrt_run_state_tp_offset(void);

#endif
