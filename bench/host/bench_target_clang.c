/* The function the fentry benchmarks call (seed 003's kfunc_md_test), built
 * with padding and a nop5 entry (mk/attach.mk). */
volatile long bench_target_result;

__attribute__((noinline)) void bench_target(long a)
{
	bench_target_result = a;
}
