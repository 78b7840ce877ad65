/* bpf_spin_lock around a read-modify-write of a map value: run from
 * several threads at once (tests/test_spin_lock.c), the counts come out
 * exact only if the lock excludes. The two counters are updated with
 * plain loads and stores, apart, so a lost update shows. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct counted {
	long before;
	struct bpf_spin_lock lock;
	long count;
	long twice;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct counted);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct counted);
} hcounters SEC(".maps");

static __always_inline int bump(void *map)
{
	int key = 0;
	struct counted *v = bpf_map_lookup_elem(map, &key);
	long c;

	if (!v)
		return 1;
	bpf_spin_lock(&v->lock);
	c = v->count;
	/* a window for another thread to interleave, were the lock absent */
	v->twice = v->twice + 2;
	v->count = c + 1;
	bpf_spin_unlock(&v->lock);
	return 0;
}

SEC("syscall")
int bump_array(void *ctx)
{
	return bump(&counters);
}

SEC("syscall")
int bump_hash(void *ctx)
{
	return bump(&hcounters);
}
