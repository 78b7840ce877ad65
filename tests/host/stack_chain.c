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
