/* A hooked host function whose only type information is BTF: built with
 * -g, its DWARF encoded as .BTF by pahole and then stripped
 * (mk/host-targets.mk), so its argument count can only come from BTF. */
volatile long tramp_btf_sink;

__attribute__((noinline)) long tramp_btf3(long a, long b, long c)
{
	tramp_btf_sink = a;
	return a * 100 + b * 10 + c;
}
