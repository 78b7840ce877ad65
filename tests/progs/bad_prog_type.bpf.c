/* Loader bad input: a program of a Linux program type bpfrt does not run
 * (libbpf's "lsm/" sections are BPF_PROG_TYPE_LSM). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int in_lsm_section(void *ctx)
{
	return 0;
}
