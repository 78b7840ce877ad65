/* Private stacks: one BPF stack per (program, thread), so that programs
 * which run other programs (a kfunc running the programs of the children
 * of a cgroup, a tracepoint fired inside a program) do not stack their
 * frames on the host thread's stack.
 *
 * What is true of nested runs (a run started while another run is in
 * progress on the thread: bpfrt_prog_run inside a run, or an attached
 * program run at attach depth > 0):
 *	- interpreter: BPF frames on the program's private stack (it gets
 *	  an id on its first nested run); the interpreter's C frame stays
 *	  on the stack in use;
 *	- JIT code of a program with a private stack: BPF frames there; the
 *	  image's few saved registers and the C frames of what it calls stay
 *	  on the stack in use;
 *	- JIT code of a program without one (policy off: stack <= 64 bytes,
 *	  BPFRT_F_DISABLE_PRIVATE_STACK, ids exhausted): the whole run moves
 *	  to this thread's nest stack of the next level (bpfrt_nest_stack_run:
 *	  BPFRT_NEST_STACK_SIZE bytes, guard pages below and above, mapped on
 *	  first use, kept for later runs at that level, unmapped at thread
 *	  exit), BPF frames and the C of its helpers and kfuncs included; a
 *	  run deeper than BPFRT_NEST_STACK_LEVELS such levels is skipped
 *	  (-ELOOP, counted as a miss). Top-level runs and the generated
 *	  fentry fast path (attach depth 0 only) never switch.
 * So nesting N levels deep costs the host stack at most the frames up to
 * the first switched level. A nest stack's guard page is not handled: an
 * overflow there is fatal, as it would have been on the native stack.
 *
 * Allocation on a thread's first run (stack records, thread records, nest
 * stacks) is async-signal-safe: runs start in signal handlers (int3
 * kprobes). privstack.c says how (mmap only, a spin lock that a handler
 * interrupting its own thread's holder does not wait for: the run is
 * skipped as a miss).
 *
 * Layout of one stack (one mapping):
 *	[guard page][usable pages                  ][guard page]
 *	            ^lo      ^top = lo + round16(size), C area above it
 * BPF r10 of the main program is `top`; subprograms carve their frames
 * below their caller's. Sizing puts the deepest legal frame exactly on the
 * low guard, so touching one byte more faults at once.
 *
 * Per thread, an initial-exec TLS array indexed by a small program id
 * (bpfrt_privstack_slot) holds the frame top of every private stack the
 * thread has that is not in use now; 0 means "none yet" or "in use". A run
 * claims its stack by reading the slot and storing 0, and gives it back
 * by storing the top again: so the fast path of native code is one
 * fs:-relative load, one test and one store at entry, one store at exit,
 * and a second activation of the same program on the thread finds 0,
 * takes the slow path and is refused (a private stack is never shared by
 * two live activations).
 *
 * What a backend does when prog->privstack is set (x86-64: rbp, arm64: x25,
 * riscv64: s5; the shared decisions are in jit/passes.c):
 *	- main prologue: save the host's frame register, load the slot at
 *	  thread pointer + bpfrt_privstack_slot_tp_offset(prog->privstack_id)
 *	  into the register that holds BPF r10 (callee-saved, so helper,
 *	  kfunc and local calls need no save/restore), and if it is 0 call
 *	  bpfrt_privstack_enter_slow(prog) (args preserved): a non-NULL
 *	  result is the frame top (already claimed), NULL means "skip this
 *	  run" (return 0 without the release below); else store 0 to the slot;
 *	- store the native stack pointer at top + BPFRT_PRIVSTACK_ENTRY_SP_OFF
 *	  and emit an abort stub (rsp = bpfrt_privstack_release(prog)), so that a guard-page fault
 *	  can unwind the run (bpfrt_privstack_abort_addr tells the handler
 *	  where the stub is); main saves every callee-saved register when the
 *	  program has subprograms (the unwind skips their epilogues);
 *	- main epilogue: store r10 back to the slot (release); the abort stub
 *	  calls bpfrt_privstack_release(prog) instead;
 *	- local calls: r10 -= caller's own frame before the call, += after
 *	  (the callee's frame lies below the caller's);
 *	- subprograms that are callbacks (lddw BPF_PSEUDO_FUNC targets: a
 *	  helper calls them with its own frame register) keep a native frame
 *	  of their whole chain depth.
 */
#ifndef BPFRT_PRIVSTACK_H
#define BPFRT_PRIVSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpfrt_prog;

/* Program ids (slots per thread); a program that needs a private stack
 * when all are taken runs without one (default policy) or fails to load
 * (forced on). */
#define BPFRT_PRIVSTACK_MAX_IDS 512

/* Bytes above the frame top kept for a C engine's own state (the
 * interpreter's saved caller frames and unwind point), 16-aligned. */
#define BPFRT_PRIVSTACK_C_AREA 1024
/* JIT code stores its native stack pointer at entry at top + this (the
 * unwind point of a guard-page fault). */
#define BPFRT_PRIVSTACK_ENTRY_SP_OFF (BPFRT_PRIVSTACK_C_AREA - 8)

/* Nest stacks (see above): usable bytes of one (generous C room for
 * helpers and kfuncs above the BPF frames), and levels per thread. */
#define BPFRT_NEST_STACK_SIZE (256u << 10)
#define BPFRT_NEST_STACK_LEVELS 256

extern __thread void *bpfrt_privstack_slot[BPFRT_PRIVSTACK_MAX_IDS]
	__attribute__((tls_model("initial-exec")));

/* Offset of bpfrt_privstack_slot[id] from the thread pointer. */
intptr_t bpfrt_privstack_slot_tp_offset(uint32_t id);

/* Load time: decides whether prog uses a private stack (policy, flags),
 * and if so gives it an id. Called by bpfrt_prog_prepare after validation
 * and before the JIT. Returns 0 or -errno. */
int bpfrt_privstack_prog_init(struct bpfrt_prog *prog);
/* Unload: frees every thread's stack of prog and its id. */
void bpfrt_privstack_prog_fini(struct bpfrt_prog *prog);
/* Gives prog an id without turning the policy on (nested interpreter
 * runs). Returns 0 or -errno. */
int bpfrt_privstack_prog_need_id(struct bpfrt_prog *prog);

/* Slow path of the claim: allocates this thread's stack on the first run,
 * or refuses a second activation (counted as a miss). Returns the frame
 * top, claimed, or NULL (skip the run). */
void *bpfrt_privstack_enter_slow(struct bpfrt_prog *prog);
/* Gives the stack back after an aborted run (the abort stub) and returns
 * the native stack pointer the run stored at entry. */
void *bpfrt_privstack_release(struct bpfrt_prog *prog);

/* C engines (interpreter): claim and release around a run. */
static inline void *bpfrt_privstack_enter(struct bpfrt_prog *prog, uint32_t id)
{
	void *const top = bpfrt_privstack_slot[id];

	if (__builtin_expect(top != NULL, 1)) {
		bpfrt_privstack_slot[id] = NULL;
		return top;
	}
	return bpfrt_privstack_enter_slow(prog);
}

static inline void bpfrt_privstack_exit(uint32_t id, void *top)
{
	bpfrt_privstack_slot[id] = top;
}

/* Runs prog's JIT image with r1, r2 on this thread's nest stack of the
 * next level (callers: nested runs of programs without a private stack).
 * A failed switch returns 0 with bpfrt_run_state.abort_err set: ENOMEM
 * (cannot map a stack or the thread's record) or ELOOP (levels exhausted,
 * miss counted). */
uint64_t bpfrt_nest_stack_run(const struct bpfrt_prog *prog, uint64_t r1, uint64_t r2);

/* Interpreter runs on a private stack register here so that a guard-page
 * fault can unwind them (the handler returns into a longjmp). */
struct bpfrt_privstack_interp_run {
	struct bpfrt_privstack_interp_run *outer;
	const struct bpfrt_prog *prog;
	void *jmpbuf;                 /* jmp_buf * */
	uint32_t rcu_nesting;         /* to drop read sections the run took */
};
void bpfrt_privstack_interp_push(struct bpfrt_privstack_interp_run *run);
void bpfrt_privstack_interp_pop(struct bpfrt_privstack_interp_run *run);

/* The JIT records the address of the abort stub (and the image bounds)
 * so the fault handler can resume there. */
void bpfrt_privstack_set_jit_info(struct bpfrt_prog *prog, uintptr_t abort_addr);

/* Test-only: size new stacks as if the program needed `bytes` (0: the
 * program's own stack depth). Lets tests hit the guard on purpose. */
void bpfrt_privstack_test_set_size(uint32_t bytes);

/* Test-only: calls fn(arg) holding the lock of the stack lists, as a
 * thread interrupted inside it would (a signal handler's first run on the
 * thread must then skip, not wait). */
void bpfrt_privstack_test_locked(void (*fn)(void *), void *arg);

/* Sets up the SIGSEGV handler (once, when the first program gets a
 * private-stack id: at load, or on its first nested interpreter run). Each
 * thread gets an alternate signal stack with its first stack of any kind. */
int bpfrt_privstack_fault_init(void);

#endif
