/* Verifier C corpus: pointer leaks. A pointer's value must not become
 * data that the program or anyone else can read (maps are shared with
 * other processes): bpfrt applies unprivileged Linux's rule to every
 * program not loaded with BPFRT_F_ALLOW_PTR_LEAKS; the kernel check runs
 * privileged, where Linux lets pointers leak.
 * @leak_ctx_ptr_into_hash_value: reject "leaks addr into map" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @leak_value_ptr_into_global: reject "leaks addr into map" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @leak_ptr_in_ringbuf_output: reject "leaks addr into helper function" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @leak_ptr_in_map_update_value: reject "leaks addr into helper function" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @leak_ptr_printed: reject "leaks addr into helper function trace_printk" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @printk_string_arg: accept ; linux: same
 * @leak_ptr_compare: reject "pointer comparison prohibited" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @value_copy_no_leak: accept ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} h SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

__u64 first, second;
__u64 slot;

SEC("raw_tp/x")
int leak_ctx_ptr_into_hash_value(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&h, &k);

	if (v)
		*v = (__u64)ctx;
	return 0;
}

SEC("raw_tp/x")
int leak_value_ptr_into_global(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&h, &k);

	if (v)
		slot = (__u64)v;
	return 0;
}

struct rec {
	__u64 n;
	void *where;
};

SEC("raw_tp/x")
int leak_ptr_in_ringbuf_output(void *ctx)
{
	struct rec r = { .n = 1, .where = ctx };

	bpf_ringbuf_output(&rb, &r, sizeof(r), 0);
	return 0;
}

SEC("raw_tp/x")
int leak_ptr_in_map_update_value(void *ctx)
{
	__u32 k = 1;
	__u64 v = (__u64)ctx;

	bpf_map_update_elem(&h, &k, &v, 0);
	return 0;
}

SEC("raw_tp/x")
int leak_ptr_printed(void *ctx)
{
	bpf_printk("ctx at %lx", ctx);
	return 0;
}

SEC("raw_tp/x")
int printk_string_arg(void *ctx)
{
	char word[] = "world";

	bpf_printk("hello %s", word);
	return 0;
}

SEC("raw_tp/x")
int leak_ptr_compare(void *ctx)
{
	__u32 k = 0, j = 1;
	__u64 *a = bpf_map_lookup_elem(&h, &k);
	__u64 *b = bpf_map_lookup_elem(&h, &j);

	if (!a || !b)
		return 0;
	return a < b; /* tells which element lies lower in memory */
}

SEC("raw_tp/x")
int value_copy_no_leak(void *ctx)
{
	__u32 k = 0, j = 1;
	__u64 *a = bpf_map_lookup_elem(&h, &k);
	__u64 *b = bpf_map_lookup_elem(&h, &j);

	if (a && b)
		*b = *a;
	return 0;
}
