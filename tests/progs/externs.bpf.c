/* __kconfig and __ksym externs, map_extra and pinning in a map definition
 * (tests/test_externs.c): one syscall program copies what it reads into
 * out[] (a .bss array). */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";


extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern unsigned int CONFIG_BPFRT_TEST_NUM __kconfig;          /* strong: from the open's kconfig */
extern bool CONFIG_BPFRT_TEST_BOOL __kconfig __weak;
extern enum libbpf_tristate CONFIG_BPFRT_TEST_TRI __kconfig __weak;
extern char CONFIG_BPFRT_TEST_STR[8] __kconfig __weak;
extern unsigned long long CONFIG_BPFRT_TEST_ABSENT __kconfig __weak;
extern const int bpf_prog_active __ksym __weak;               /* a kernel variable */
extern void bpfrt_no_such_kfunc(void) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, 1);       /* LIBBPF_PIN_BY_NAME */
	__uint(map_extra, 0);
} pinned SEC(".maps");

__u64 out[9];

SEC("syscall")
int read_externs(void *ctx)
{
	__u32 k = 0;
	__u64 *v;

	out[0] = LINUX_KERNEL_VERSION;
	out[1] = CONFIG_BPFRT_TEST_NUM;
	out[2] = CONFIG_BPFRT_TEST_BOOL;
	out[3] = CONFIG_BPFRT_TEST_TRI;
	out[4] = CONFIG_BPFRT_TEST_STR[0] | (CONFIG_BPFRT_TEST_STR[1] << 8);
	out[5] = CONFIG_BPFRT_TEST_ABSENT;
	out[6] = &bpf_prog_active != 0;
	out[7] = bpfrt_no_such_kfunc != 0;
	v = bpf_map_lookup_elem(&pinned, &k);
	out[8] = v ? 1 : 2;
	/* folded: .kconfig is frozen and read-only */
	if (CONFIG_BPFRT_TEST_NUM != 42)
		return 1;
	return 0;
}
