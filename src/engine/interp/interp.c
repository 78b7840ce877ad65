/* Threaded-code interpreter with exact RFC 9669 (cpu v4) semantics.
 *
 * The dispatch loop lives in interp_loop.h and is instantiated three
 * times: plain, counting executed instructions, and checking (the
 * BPFRT_EXEC_CHECKED mode, interp/check.h). GCC refuses to inline or
 * clone a function containing a computed goto, so an always_inline core
 * with a constant flag cannot work; including the one loop body once per
 * variant with INTERP_COUNTED / INTERP_CHECKED set to 0 or 1 gives the
 * same result: one source of truth, and a plain run pays nothing for the
 * counter or the checks. */
#include "interp/interp.h"
#include "interp/check.h"
#include "core/rcu.h"
#include "core/run.h"
#include "core/stack_abi.h"
#include "core/extable.h"
#include "helpers/callback.h"
#include "isa/isa.h"
#include "maps/map.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Arithmetic whose RFC 9669 result differs from plain C (division by zero,
 * INT_MIN / -1) lives here so the loop stays a list of one-liners. */
static inline uint64_t div64(uint64_t a, uint64_t b, bool is_signed)
{
	if (unlikely(b == 0))
		return 0;
	if (!is_signed)
		return a / b;
	if ((int64_t)b == -1)
		return -a; /* INT64_MIN / -1 wraps to INT64_MIN instead of trapping */
	return (uint64_t)((int64_t)a / (int64_t)b);
}

static inline uint64_t mod64(uint64_t a, uint64_t b, bool is_signed)
{
	if (unlikely(b == 0))
		return a;
	if (!is_signed)
		return a % b;
	if ((int64_t)b == -1)
		return 0;
	return (uint64_t)((int64_t)a % (int64_t)b);
}

static inline uint32_t div32(uint32_t a, uint32_t b, bool is_signed)
{
	if (unlikely(b == 0))
		return 0;
	if (!is_signed)
		return a / b;
	if ((int32_t)b == -1)
		return -a;
	return (uint32_t)((int32_t)a / (int32_t)b);
}

static inline uint32_t mod32(uint32_t a, uint32_t b, bool is_signed)
{
	if (unlikely(b == 0))
		return a;
	if (!is_signed)
		return a % b;
	if ((int32_t)b == -1)
		return 0;
	return (uint32_t)((int32_t)a % (int32_t)b);
}

/* Program memory may be unaligned and is only known as an integer address:
 * go through memcpy so neither the compiler nor UBSan assumes alignment. */
#define MEM_LOAD(type, addr) ({                                                \
	type v_;                                                               \
	__builtin_memcpy(&v_, (const void *)(uintptr_t)(addr), sizeof(v_));    \
	v_;                                                                    \
})
#define MEM_STORE(type, addr, val) do {                                        \
	type v_ = (type)(val);                                                 \
	__builtin_memcpy((void *)(uintptr_t)(addr), &v_, sizeof(v_));          \
} while (0)

/* Saved state of a BPF-to-BPF caller. */
struct interp_frame {
	const struct bpf_insn *ret;
	const struct bpfrt_prog *prog; /* the caller's (a tail call may replace the callee's) */
	uint64_t callee_saved[4]; /* r6-r9 */
	uint64_t fp;
};

/* Records why the run stopped; bpfrt_prog_run reports it. */
static __attribute__((noinline, cold)) uint64_t
interp_abort(const struct bpfrt_prog *prog, const struct bpf_insn *insn, int err,
	     uint64_t arg)
{
	bpfrt_run_state.abort_err = err;
	bpfrt_run_state.abort_pc = (uint32_t)(insn - prog->insns);
	bpfrt_run_state.abort_arg = arg;
	return 0;
}

#define INTERP_NAME interp_run_plain
#define INTERP_COUNTED 0
#define INTERP_CHECKED 0
#include "interp/interp_loop.h"
#undef INTERP_NAME
#undef INTERP_COUNTED
#undef INTERP_CHECKED

#define INTERP_NAME interp_run_counting
#define INTERP_COUNTED 1
#define INTERP_CHECKED 0
#include "interp/interp_loop.h"
#undef INTERP_NAME
#undef INTERP_COUNTED
#undef INTERP_CHECKED

#define INTERP_NAME interp_run_checking
#define INTERP_COUNTED 0
#define INTERP_CHECKED 1
#include "interp/interp_loop.h"
#undef INTERP_NAME
#undef INTERP_COUNTED
#undef INTERP_CHECKED

/* Native BPF stack: big enough for the deepest chain any validated
 * program can have (8 frames of at most 512 bytes). */
#define NATIVE_STACK (BPFRT_MAX_CALL_FRAMES * BPFRT_STACK_PER_FRAME)

/* Private stack (core/stack_abi.h): claimed for the run, frames carved
 * below the program's frame top, and a setjmp point the SIGSEGV handler
 * resumes at when the run touches a guard page. The native frame holds
 * no BPF stack, so runs nested through kfuncs stay small. */
/* What the interpreter keeps in the C area above the frame top of a
 * private stack, so a nested run's native frame stays small. */
struct interp_priv_area {
	jmp_buf jb;
	struct interp_frame frames[BPFRT_MAX_CALL_FRAMES - 1];
};

_Static_assert(sizeof(struct interp_priv_area) <= BPFRT_PRIVSTACK_C_AREA,
	       "interpreter state must fit the private stack's C area");

static __attribute__((noinline)) uint64_t
interp_run_guarded(const struct bpfrt_prog *prog, const uint64_t args[5], uint8_t *top)
{
	struct interp_priv_area *area = (struct interp_priv_area *)top;
	struct bpfrt_privstack_interp_run run = { .prog = prog };
	volatile uint64_t r0 = 0;

	run.jmpbuf = &area->jb;
	run.rcu_nesting = bpfrt_rcu_self.nesting;
	run.outer = bpfrt_privstack_interp_top;
	bpfrt_privstack_interp_top = &run;
	if (!setjmp(area->jb)) {
		r0 = interp_run_plain(prog, 0, args, NULL, top - prog->stack_depth,
				      (uint64_t)(uintptr_t)top, area->frames);
	} else {
		r0 = 0; /* guard-page fault: the handler set the abort */
		/* and the read sections the run took were not left */
		while (bpfrt_rcu_self.nesting > run.rcu_nesting)
			bpfrt_rcu_read_unlock();
	}
	bpfrt_privstack_interp_top = run.outer;
	return r0;
}

static __attribute__((noinline)) uint64_t
interp_run_private(const struct bpfrt_prog *prog, const uint64_t args[5])
{
	struct bpfrt_prog *p = (struct bpfrt_prog *)prog;
	uint64_t r0;
	void *top;

	/* without an id yet (a nested run of a program the policy gave
	 * none), the host's slow path gives it one */
	if (__builtin_expect(prog->privstack_has_id, 1))
		top = bpfrt_privstack_enter(p, prog->privstack_id);
	else
		top = bpfrt_stack_host->claim_slow(p);
	if (!top)
		return 0; /* skipped: a live activation holds it (miss counted), or no stack */
	r0 = interp_run_guarded(prog, args, top);
	bpfrt_privstack_exit(prog->privstack_id, top);
	return r0;
}

static __attribute__((noinline)) uint64_t
interp_run_native(const struct bpfrt_prog *prog, uint32_t entry, const uint64_t args[5],
		  uint64_t *executed)
{
	uint8_t stack[NATIVE_STACK] __attribute__((aligned(16)));
	struct interp_frame frames[BPFRT_MAX_CALL_FRAMES - 1];
	uint64_t fp = (uint64_t)(uintptr_t)(stack + sizeof(stack));

	if (executed)
		return interp_run_counting(prog, entry, args, executed, stack, fp, frames);
	return interp_run_plain(prog, entry, args, NULL, stack, fp, frames);
}

/* A checking activation (the run's entry or a callback): always on a
 * native stack with its init shadow, pushed on the run's stacks for the
 * time it runs, so the activations it is nested in stay reachable. */
static __attribute__((noinline)) uint64_t
interp_run_checked_native(const struct bpfrt_prog *prog, uint32_t entry, const uint64_t args[5])
{
	uint8_t stack[NATIVE_STACK] __attribute__((aligned(16)));
	uint8_t init[NATIVE_STACK];
	struct interp_frame frames[BPFRT_MAX_CALL_FRAMES - 1];
	struct bpfrt_check_run *cr = bpfrt_run_state.check;
	uint64_t fp = (uint64_t)(uintptr_t)(stack + sizeof(stack));
	struct bpfrt_check_stack cs = {
		.base = (uint64_t)(uintptr_t)stack, .top = fp, .init = init, .outer = cr->stack,
	};
	uint64_t r0;

	bpfrt_check_frame_enter(&cs, fp - prog->subprogs[prog->insn_subprog[entry]].stack_depth,
				fp);
	cr->stack = &cs;
	r0 = interp_run_checking(prog, entry, args, NULL, stack, fp, frames);
	cr->stack = cs.outer;
	return r0;
}

uint64_t bpfrt_interp_run_checked(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2)
{
	const struct bpfrt_prog *outer_prog = bpfrt_run_state.cur_prog;
	struct bpfrt_check_run *outer_check = bpfrt_run_state.check;
	const uint64_t args[5] = { arg1, arg2 };
	struct bpfrt_check_run cr;
	uint64_t r0;

	bpfrt_check_run_init(&cr, prog, arg1, arg2);
	bpfrt_run_state.check = &cr;
	bpfrt_run_state.cur_prog = prog;
	r0 = interp_run_checked_native(prog, 0, args);
	bpfrt_run_state.cur_prog = outer_prog;
	bpfrt_run_state.check = outer_check;
	bpfrt_check_run_fini(&cr);
	return r0;
}

/* Every activation publishes the program it runs for callbacks and puts
 * back the previous one, so runs nested inside helpers find their own. */
uint64_t bpfrt_interp_run_nested(const struct bpfrt_prog *prog, uint64_t arg1,
				 uint64_t arg2, bool nested)
{
	const struct bpfrt_prog *outer = bpfrt_run_state.cur_prog;
	const uint64_t args[5] = { arg1, arg2 };
	uint64_t r0;

	bpfrt_run_state.cur_prog = prog;
	/* nested runs need a host that maps stacks (core/stack_abi.h);
	 * prog->privstack is only set by one */
	if (prog->privstack || (nested && bpfrt_stack_host))
		r0 = interp_run_private(prog, args);
	else
		r0 = interp_run_native(prog, 0, args, NULL);
	bpfrt_run_state.cur_prog = outer;
	return r0;
}

uint64_t bpfrt_interp_run(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2)
{
	return bpfrt_interp_run_nested(prog, arg1, arg2, false);
}

uint64_t bpfrt_interp_run_counted(const struct bpfrt_prog *prog, uint64_t arg1,
				  uint64_t arg2, uint64_t *executed)
{
	const struct bpfrt_prog *outer = bpfrt_run_state.cur_prog;
	const uint64_t args[5] = { arg1, arg2 };
	uint32_t outer_tail_calls = bpfrt_run_state.tail_call_cnt;
	uint32_t outer_may_goto = bpfrt_run_state.may_goto_left;
	uint64_t dummy, r0;

	/* a run of its own: its tail calls count from zero, its may_goto
	 * budget is whole */
	bpfrt_run_state.tail_call_cnt = 0;
	bpfrt_run_state.may_goto_left = BPFRT_MAY_GOTO_BUDGET;
	bpfrt_run_state.cur_prog = prog;
	r0 = interp_run_native(prog, 0, args, executed ? executed : &dummy);
	bpfrt_run_state.cur_prog = outer;
	bpfrt_run_state.tail_call_cnt = outer_tail_calls;
	bpfrt_run_state.may_goto_left = outer_may_goto;
	return r0;
}

uint64_t bpfrt_interp_run_subprog(const struct bpfrt_prog *prog, uint32_t start,
				  const uint64_t args[5])
{
	const struct bpfrt_prog *outer = bpfrt_run_state.cur_prog;
	uint64_t r0;

	bpfrt_run_state.cur_prog = prog;
	if (bpfrt_run_state.check) /* a callback of a checked run runs checked */
		r0 = interp_run_checked_native(prog, start, args);
	else
		r0 = interp_run_native(prog, start, args, NULL);
	bpfrt_run_state.cur_prog = outer;
	return r0;
}
