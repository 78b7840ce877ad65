/* Host functions the trampoline tests hook: clang, nop5 entries
 * (mk/host-targets.mk builds this file with mk/bpfrt-host.mk's clang flags). */
#include <stdint.h>

volatile long tramp_sink;

__attribute__((noinline)) long tramp_add(long a, long b)
{
	tramp_sink = a;
	return a + b;
}

__attribute__((noinline)) long tramp_six(long a, long b, long c, long d, long e, long f)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

__attribute__((noinline)) int tramp_may_fail(int x)
{
	tramp_sink = x;
	return x * 2;
}

/* Float arguments and returns live in xmm registers the trampoline saves. */
__attribute__((noinline)) double tramp_scale(double x, long k, double y)
{
	return x * (double)k + y;
}

/* Calls another hooked function: nested trampolines. */
__attribute__((noinline)) long tramp_outer(long a)
{
	return tramp_add(a, 1) * 10;
}

__attribute__((noinline)) long tramp_stress(long a)
{
	tramp_sink = a;
	return a + 1;
}

__attribute__((noinline)) void tramp_void(void)
{
	tramp_sink++;
}
