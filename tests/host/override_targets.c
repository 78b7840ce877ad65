/* bpf_override_return's target (tests/test_override_return.c): plain C,
 * built with the default flags (no patchable entry), with a side effect
 * that shows whether its body ran. */
volatile long ov_body_runs;

__attribute__((noinline)) long ov_target(long x)
{
	ov_body_runs++;
	return x * 2;
}

/* A caller, so the override's return lands in ordinary compiled code. */
__attribute__((noinline)) long ov_caller(long x)
{
	return ov_target(x) + 1000;
}
