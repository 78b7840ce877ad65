/* Typed arguments (tests/test_btf_args.c): the host's struct btfargs_req
 * (tests/host/btfargs_host.c) read through the pointer fentry and fexit
 * receive, typed from the host's BTF: direct loads, a pointer member
 * followed, a NULL or dangling one read as 0 (fault-safe loads). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct btfargs_req {
	int len;
	unsigned short flags;
	unsigned char prio : 3, busy : 1;
	struct btfargs_req *next;
	struct btfargs_inner {
		long a, b;
	} inner;
	char name[8];
	void *opaque;
};

long out_len, out_next_len, out_next_next_len, out_inner_b, out_flags, out_name0;
long out_probe_read, out_ret_len, out_calls;

SEC("fentry/btfargs_f")
int BPF_PROG(read_req, struct btfargs_req *r)
{
	int v = -1;

	out_calls++;
	out_len = r->len;
	out_next_len = r->next->len;
	out_next_next_len = r->next->next->len;
	out_inner_b = r->inner.b;
	out_flags = r->flags;
	out_name0 = r->name[0];
	/* a typed pointer is still the number the host passed */
	bpf_probe_read_kernel(&v, sizeof(v), &r->len);
	out_probe_read = v;
	return 0;
}

SEC("fexit/btfargs_next")
int BPF_PROG(read_ret, struct btfargs_req *r, long n, struct btfargs_req *ret)
{
	out_ret_len = ret->len;
	return 0;
}

long out_sum;

/* sixteen loads down a chain (bench: a fault-safe load costs what a plain
 * one does where it does not fault) */
SEC("fentry/btfargs_f")
int BPF_PROG(walk_chain, struct btfargs_req *r)
{
	long s = 0;

#pragma unroll
	for (int i = 0; i < 8; i++) {
		s += r->len;
		r = r->next;
	}
	out_sum = s;
	return 0;
}
