/* The function the fentry benchmarks call (in the role of the kernel's
 * kfunc_md_test), built with padding and a nop5 entry (mk/host-targets.mk). */
volatile long bench_target_result;

__attribute__((noinline)) void bench_target(long a)
{
	bench_target_result = a;
}
