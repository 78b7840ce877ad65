/* libtrace_plugin.so for tests/trace/plugin_host.c. */
long plugin_fn(long x)
{
	return x * x;
}
