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
 * The layout of a stack, the per-thread slots and what JIT code and the
 * interpreter do with them are the engine's contract (core/stack_abi.h);
 * this module is the host behind it: it registers its stack functions
 * (struct bpfrt_stack_host: the load-time policy and id, the free at
 * unload, the first-run claim, the abort stub's release) before main, so
 * every program load sees them.
 */
#ifndef BPFRT_PRIVSTACK_H
#define BPFRT_PRIVSTACK_H

#include "core/stack_abi.h"

#include <stdint.h>

struct bpfrt_prog;

/* Runs prog's JIT image with r1, r2 on this thread's nest stack of the
 * next level (callers: nested runs of programs without a private stack).
 * A failed switch returns 0 with bpfrt_run_state.abort_err set: ENOMEM
 * (cannot map a stack or the thread's record) or ELOOP (levels exhausted,
 * miss counted). */
uint64_t bpfrt_nest_stack_run(const struct bpfrt_prog *prog, uint64_t r1, uint64_t r2);

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
