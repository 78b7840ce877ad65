/* Private stacks: the contract between the engine (JIT backends, the
 * interpreter, the run path) and the host that maps the stacks
 * (stack/privstack.c). The engine reads and writes a per-thread slot
 * array and calls two slow paths; everything that allocates, frees or
 * handles a fault is the host's, behind a hook registered once.
 *
 * Per thread, an array indexed by a small program id holds the frame top
 * of every private stack the thread has that is not in use now; 0 means
 * "none yet" or "in use". An initial-exec TLS pointer
 * (bpfrt_privstack_slots) reaches it: a thread that never ran such a
 * program points at bpfrt_privstack_no_slots, read-only zeros, and the
 * host's first-run slow path points it at the thread's own array. The
 * array is not in TLS itself so that the library's static TLS stays small
 * enough to be loaded into a running process (dlopen can place only a few
 * hundred bytes of initial-exec TLS: the injected tracing agent). A run
 * claims its stack by reading the slot and storing 0, and gives it back
 * by storing the top again: so the fast path of native code is one
 * thread-pointer-relative load of the array, one load, one test and one
 * store at entry, the array load and one store at exit, and a second
 * activation of the same program on the thread finds 0, takes the slow
 * path and is refused (a private stack is never shared by two live
 * activations). Only a slot that held a top is ever written, so the
 * read-only array of zeros is never written (a write would fault).
 *
 * Layout of one stack (the host maps it):
 *	[guard page][usable pages                  ][guard page]
 *	            ^lo      ^top = lo + round16(size), C area above it
 * BPF r10 of the main program is `top`; subprograms carve their frames
 * below their caller's. Sizing puts the deepest legal frame exactly on the
 * low guard, so touching one byte more faults at once. The
 * BPFRT_PRIVSTACK_C_AREA bytes above the top belong to the engine running
 * on the stack (the interpreter's saved frames, the JIT's entry sp).
 *
 * What a backend does when prog->privstack is set (x86-64: rbp, arm64: x25,
 * riscv64: s5; the shared decisions are in jit/passes.c, which hands the
 * backend the slot offset and the two slow paths' addresses):
 *	- main prologue: save the host's frame register, load the array
 *	  pointer at thread pointer + bpfrt_privstack_slots_tp_offset(), then
 *	  the slot at array + 8 * prog->privstack_id into the register that holds BPF r10 (callee-saved, so helper,
 *	  kfunc and local calls need no save/restore), and if it is 0 call
 *	  the host's claim_slow(prog) (args preserved): a non-NULL result is
 *	  the frame top (already claimed), NULL means "skip this run" (return
 *	  0 without the release below); else store 0 to the slot;
 *	- store the native stack pointer at top + BPFRT_PRIVSTACK_ENTRY_SP_OFF
 *	  and emit an abort stub (rsp = release_aborted(prog)), so that a
 *	  guard-page fault can unwind the run (prog->privstack_abort tells the
 *	  host's fault handler where the stub is); main saves every
 *	  callee-saved register when the program has subprograms (the unwind
 *	  skips their epilogues);
 *	- main epilogue: load the array pointer again (the slow path may have
 *	  replaced it) and store r10 back to the slot (release); the abort stub
 *	  calls release_aborted(prog) instead;
 *	- local calls: r10 -= caller's own frame before the call, += after
 *	  (the callee's frame lies below the caller's);
 *	- subprograms that are callbacks (lddw BPF_PSEUDO_FUNC targets: a
 *	  helper calls them with its own frame register) keep a native frame
 *	  of their whole chain depth.
 *
 * The interpreter does the same in C (bpfrt_privstack_enter/exit below)
 * and registers each run on a private stack in bpfrt_privstack_interp_top,
 * so that the host's fault handler can unwind it (a longjmp).
 *
 * Nest stacks (the host's too): a nested JIT run of a program without a
 * private stack runs whole on the thread's stack of its nesting level,
 * BPFRT_NEST_STACK_SIZE bytes, at most BPFRT_NEST_STACK_LEVELS levels;
 * past them the run is skipped with abort_err = ELOOP, and a stack that
 * cannot be mapped is abort_err = ENOMEM (core/run.h has the record). */
#ifndef BPFRT_STACK_ABI_H
#define BPFRT_STACK_ABI_H

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

/* Nest stacks: usable bytes of one (generous C room for helpers and
 * kfuncs above the BPF frames), and levels per thread. */
#define BPFRT_NEST_STACK_SIZE (256u << 10)
#define BPFRT_NEST_STACK_LEVELS 256

extern __thread void **bpfrt_privstack_slots __attribute__((tls_model("initial-exec")));
extern void *const bpfrt_privstack_no_slots[BPFRT_PRIVSTACK_MAX_IDS];

/* Offset of bpfrt_privstack_slots from the thread pointer. */
intptr_t bpfrt_privstack_slots_tp_offset(void);

/* What the engine gets from the host that owns the stacks. Registered
 * once (the host does it before main: stack/privstack.c); without it no
 * program gets a private stack and nested interpreter runs use the
 * native stack. Every function may run in a signal handler except
 * prog_init and prog_fini. */
struct bpfrt_stack_host {
	/* Load (bpfrt_prog_prepare, after validation, before the JIT):
	 * decides whether prog uses a private stack (policy, load flags)
	 * and if so gives it an id (prog->privstack, privstack_id). Returns
	 * 0 or -errno with bpfrt_last_error() set. */
	int (*prog_init)(struct bpfrt_prog *prog);
	/* Unload (bpfrt_prog_unprepare): frees every thread's stack of prog
	 * and its id. No run of prog is in progress. */
	void (*prog_fini)(struct bpfrt_prog *prog);
	/* Slow path of the claim: gives prog an id if it has none (nested
	 * interpreter runs), maps this thread's stack on its first run, or
	 * refuses a second activation (a miss). Returns the frame top,
	 * claimed, or NULL: skip the run (with bpfrt_run_state.abort_err =
	 * ENOMEM if no stack could be had). */
	void *(*claim_slow)(struct bpfrt_prog *prog);
	/* The JIT abort stub: gives the stack back after an aborted run and
	 * returns the native stack pointer the run stored at entry. */
	void *(*release_aborted)(struct bpfrt_prog *prog);
};

/* The registered host, or NULL. Set once, before any program is loaded. */
extern const struct bpfrt_stack_host *bpfrt_stack_host;

/* Registers the host's stack functions; a second, different host is
 * -EBUSY. */
int bpfrt_stack_host_register(const struct bpfrt_stack_host *host);

/* C engines (interpreter): claim and release around a run. id is
 * prog->privstack_id of a program that has one. */
static inline void *bpfrt_privstack_enter(struct bpfrt_prog *prog, uint32_t id)
{
	void **const slots = bpfrt_privstack_slots;
	void *const top = slots[id];

	if (__builtin_expect(top != NULL, 1)) {
		slots[id] = NULL;
		return top;
	}
	return bpfrt_stack_host->claim_slow(prog);
}

static inline void bpfrt_privstack_exit(uint32_t id, void *top)
{
	bpfrt_privstack_slots[id] = top;
}

/* Interpreter runs on a private stack, innermost first (the records live
 * in the runs' frames): the host's fault handler unwinds a guard-page hit
 * of the innermost one by resuming at a longjmp to jmpbuf. */
struct bpfrt_privstack_interp_run {
	struct bpfrt_privstack_interp_run *outer;
	const struct bpfrt_prog *prog;
	void *jmpbuf;                 /* jmp_buf * */
	uint32_t rcu_nesting;         /* to drop read sections the run took */
};

extern __thread struct bpfrt_privstack_interp_run *bpfrt_privstack_interp_top
	__attribute__((tls_model("initial-exec")));

#endif
