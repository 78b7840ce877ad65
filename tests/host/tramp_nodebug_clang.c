/* A hooked host function built without debug info (mk/host-targets.mk
 * leaves out -g), so nothing says how many arguments it takes: attaching
 * fexit to it needs nr_args. */
volatile long tramp_nodebug_sink;

__attribute__((noinline)) long tramp_nodebug(long a, long b)
{
	tramp_nodebug_sink = a;
	return a * b;
}
