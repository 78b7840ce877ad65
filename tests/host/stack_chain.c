/* A known chain of calls for tests/test_stackmap.c, built with frame
 * pointers (mk/host-targets.mk): stack_chain_a -> _b -> _c -> _leaf. The
 * barrier after each call keeps it a call (no tail call), so every
 * caller's return address is inside the caller. */
__attribute__((noinline)) long stack_chain_leaf(long x)
{
	__asm__ volatile("" : "+r"(x) :: "memory");
	return x * 3;
}

__attribute__((noinline)) long stack_chain_c(long x)
{
	long r = stack_chain_leaf(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) long stack_chain_b(long x)
{
	long r = stack_chain_c(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) long stack_chain_a(long x)
{
	long r = stack_chain_b(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* The walker itself, on every architecture: stack_walk_a -> _b -> _here,
 * which walks from its own frame (as a helper called without a probe
 * does) into stack_walk_ips. */
#include "helpers/stack.h"

uint64_t stack_walk_ips[3];
uint32_t stack_walk_nr;

__attribute__((noinline)) long stack_walk_here(long x)
{
	struct bpfrt_stack_regs regs = {
		.fp = (uintptr_t)__builtin_frame_address(0),
		.sp = (uintptr_t)__builtin_frame_address(0),
	};

	stack_walk_nr = bpfrt_stack_walk(&regs, stack_walk_ips, 3);
	__asm__ volatile("" : "+r"(x) :: "memory");
	return x + 1;
}

__attribute__((noinline)) long stack_walk_b(long x)
{
	long r = stack_walk_here(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) long stack_walk_a(long x)
{
	long r = stack_walk_b(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}
