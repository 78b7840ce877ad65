// Programs for the private-stack policy: kind and stack depth decide.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

__u64 out;

static __always_inline int fill(volatile __u64 *buf, int n)
{
	__u64 s = 0;

	for (int i = 0; i < n; i++)
		buf[i] = i * 3;
	for (int i = 0; i < n; i++)
		s += buf[i];
	out = s;
	return (int)s;
}

/* 128 bytes of stack: private by default */
SEC("tp/syscalls/sys_enter_getpgid") int tp_big(void *ctx)
{
	volatile __u64 buf[16];

	return fill(buf, 16);
}

/* 32 bytes: at most 64, so the native stack */
SEC("tp/syscalls/sys_enter_getpgid") int tp_small(void *ctx)
{
	volatile __u64 buf[4];

	return fill(buf, 4);
}

/* not a tracing kind: the native stack whatever its depth */
SEC("socket") int sock_big(void *ctx)
{
	volatile __u64 buf[16];

	return fill(buf, 16);
}
