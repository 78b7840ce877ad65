/* Maps the loader fills or leaves out (test_progs.c): a prog array whose
 * slots the object names (.values = { [i] = &prog }, as libbpf fills
 * them at load), and a map of a type bpfrt does not implement, which only
 * the program using it needs. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

int target(void *ctx);

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__array(values, int (void *));
} jmp_init SEC(".maps") = {
	.values = { [1] = (void *)&target },
};

/* a Linux map type bpfrt has no implementation of */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, long);
} sk_store SEC(".maps");

SEC("raw_tp/bpfrt_values")
int entry(void *ctx)
{
	bpf_tail_call(ctx, &jmp_init, 1);
	return 1000;	/* only if slot 1 is empty */
}

SEC("raw_tp/bpfrt_values")
int target(void *ctx)
{
	return 42;
}

SEC("raw_tp/bpfrt_values")
int uses_sk_store(void *ctx)
{
	int key = 0;

	return bpf_map_lookup_elem(&sk_store, &key) != 0;
}
