/* Running a function on another stack: nested JIT runs of programs
 * without a private stack move to a per-thread stack of their nesting
 * level (stack/privstack.c, bpfrt_nest_stack_run), so that N levels of
 * programs running programs do not stack N frames of BPF and helper C on
 * the host thread's stack.
 *
 * bpfrt_call_on_stack is a few instructions of assembly per architecture
 * (stack_switch.c). Its frame is an ordinary frame with unwind info: the
 * caller's stack pointer is kept in the frame-pointer register, which the
 * CFI names as the canonical frame address, so unwinders (libgcc, gdb)
 * walk from the new stack back to the old one. */
#ifndef BPFRT_STACK_SWITCH_H
#define BPFRT_STACK_SWITCH_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*bpfrt_stack_fn)(uint64_t a1, uint64_t a2);

/* Calls fn(a1, a2) with the stack pointer at top (16-byte aligned; the
 * stack grows down from it) and returns fn's result back on the caller's
 * stack. */
uint64_t bpfrt_call_on_stack(bpfrt_stack_fn fn, uint64_t a1, uint64_t a2, void *top);

#if defined(__SANITIZE_ADDRESS__)
#define BPFRT_STACK_SWITCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BPFRT_STACK_SWITCH_ASAN 1
#endif
#endif

/* The same, telling AddressSanitizer about the switch (its fiber API, so
 * that its notion of "the current stack" follows); stack is [top - size,
 * top). A plain call elsewhere. */
#ifdef BPFRT_STACK_SWITCH_ASAN
uint64_t bpfrt_run_on_stack(bpfrt_stack_fn fn, uint64_t a1, uint64_t a2, void *top,
			    size_t size);
#else
static inline uint64_t bpfrt_run_on_stack(bpfrt_stack_fn fn, uint64_t a1, uint64_t a2,
					  void *top, size_t size)
{
	(void)size;
	return bpfrt_call_on_stack(fn, a1, a2, top);
}
#endif

#endif
