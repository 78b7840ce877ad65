/* Loader bad input: a strong __kconfig extern that no config sets. The
 * open must fail naming it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

extern unsigned int CONFIG_BPFRT_NOWHERE_SET __kconfig;

SEC("syscall")
int read_strong(void *ctx)
{
	return CONFIG_BPFRT_NOWHERE_SET;
}
