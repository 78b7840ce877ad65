/* Loader bad input: a strong typed __ksym variable (a kernel variable,
 * which a process does not have). The load must fail naming it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

extern const int bpf_prog_active __ksym;

SEC("syscall")
int read_ksym(void *ctx)
{
	return bpf_prog_active;
}
