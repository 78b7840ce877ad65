/* Loader bad input: a program reading a global variable that no section
 * of this object defines. Load must fail naming the symbol. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

extern int elsewhere_var;

SEC("tp/bpfrt/bad_extern_var")
int use_elsewhere_var(void *ctx)
{
	return elsewhere_var;
}
