/* Loader bad input: a program in a section no libbpf convention names. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("frobnicate/now")
int in_unknown_section(void *ctx)
{
	return 1;
}
