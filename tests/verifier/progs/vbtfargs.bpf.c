/* Verifier C corpus: typed arguments. The fentry target btfargs_f
 * (tests/host/btfargs_host.c, linked into test_verifier with its pahole
 * .BTF) takes a struct btfargs_req *, which the verifier types from the
 * host's BTF as a pointer to that struct: loads of its fields (pointer
 * members give typed pointers again, NULL or not), the pointer still a
 * number the host passed; stores, reads past the struct, part of a
 * pointer member, variable offsets and typed helper arguments refused.
 * @read_fields: accept ; linux: skip (a host function's BTF, not the kernel's)
 * @null_check_then_read: accept ; linux: skip (a host function's BTF)
 * @pointer_as_map_key: accept ; linux: skip (a host function's BTF)
 * @probe_read_through_it: accept ; linux: skip (a host function's BTF)
 * @store_refused: reject "cannot write into ptr_btfargs_req" ; linux: skip (a host function's BTF)
 * @beyond_struct_refused: reject "access beyond struct btfargs_req" ; linux: skip (a host function's BTF)
 * @partial_pointer_member_refused: reject "cannot access ptr member next" ; linux: skip (a host function's BTF)
 * @variable_offset_refused: reject "invalid variable offset" ; linux: skip (a host function's BTF)
 * @helper_memory_argument_refused: reject "type=ptr_ expected=fp" ; linux: skip (a host function's BTF)
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u64);
} seen SEC(".maps");

long sink, idx;

SEC("fentry/btfargs_f")
int BPF_PROG(read_fields, struct btfargs_req *r)
{
	sink = r->len + r->next->len + r->next->next->inner.b + r->prio + r->name[3] +
	       r->inner.a;
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(null_check_then_read, struct btfargs_req *r)
{
	struct btfargs_req *n = r->next;

	/* a typed pointer may be NULL: both ways are walked */
	if (n)
		sink = n->len;
	else
		sink = -1;
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(pointer_as_map_key, struct btfargs_req *r)
{
	__u64 key = (__u64)r, one = 1;

	bpf_map_update_elem(&seen, &key, &one, BPF_ANY);
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(probe_read_through_it, struct btfargs_req *r)
{
	int v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &r->len);
	sink = v;
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(store_refused, struct btfargs_req *r)
{
	r->len = 1;
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(beyond_struct_refused, struct btfargs_req *r)
{
	sink = *(long *)((char *)r + 64);
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(partial_pointer_member_refused, struct btfargs_req *r)
{
	sink = *(int *)&r->next;
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(variable_offset_refused, struct btfargs_req *r)
{
	sink = r->name[idx & 7];
	return 0;
}

SEC("fentry/btfargs_f")
int BPF_PROG(helper_memory_argument_refused, struct btfargs_req *r)
{
	bpf_map_lookup_elem(&seen, r);
	return 0;
}
