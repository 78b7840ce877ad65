/* `bpfrt trace` tests (tests/test_trace.sh): peek() of tests/trace/own_segv.c
 * gets a bad pointer, which the program reads through: -EFAULT, in a target
 * that installed its own SIGSEGV handler. */
#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

long read_rc = 1, first_rc = 1, first_value, peeks;

SEC("uprobe/peek")
int BPF_KPROBE(on_peek, const long *p)
{
	long v = 0, rc = bpf_probe_read_user(&v, sizeof(v), p);

	if (peeks++) {
		read_rc = rc;
	} else {
		first_rc = rc;
		first_value = v;
	}
	return 0;
}
