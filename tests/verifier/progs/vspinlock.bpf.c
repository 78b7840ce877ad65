/* Verifier C corpus: bpf_spin_lock / bpf_spin_unlock on map values whose
 * BTF type holds a struct bpf_spin_lock (Linux compares with the same BTF).
 * One line per program: @NAME: accept | reject "reason" ; linux: same|accept|reject|skip (why)
 * @lock_increment_unlock: accept ; linux: same
 * @lock_hash_value: accept ; linux: same
 * @lock_exit_without_unlock: reject "bpf_spin_unlock is missing" ; linux: same
 * @lock_call_while_held: reject "function calls are not allowed while holding a lock" ; linux: same
 * @lock_read_lock_word: reject "bpf_spin_lock cannot be accessed directly by load/store" ; linux: same
 * @lock_unlock_other_value: reject "bpf_spin_unlock of different lock" ; linux: same
 * @lock_plain_map: reject "has no valid bpf_spin_lock" ; linux: same
 * @lock_unlock_on_one_branch: reject "bpf_spin_unlock is missing" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct locked {
	int a;
	struct bpf_spin_lock lock;
	long count;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct locked);
} la SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct locked);
} lh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, long);
} plain SEC(".maps");

static __always_inline struct locked *get(void *map, int k)
{
	return bpf_map_lookup_elem(map, &k);
}

SEC("xdp")
int lock_increment_unlock(struct xdp_md *ctx)
{
	struct locked *v = get(&la, 0);

	if (!v)
		return XDP_PASS;
	bpf_spin_lock(&v->lock);
	v->count++;
	bpf_spin_unlock(&v->lock);
	return XDP_PASS;
}

SEC("xdp")
int lock_hash_value(struct xdp_md *ctx)
{
	struct locked *v = get(&lh, 1);

	if (!v)
		return XDP_PASS;
	bpf_spin_lock(&v->lock);
	v->a = 3;
	bpf_spin_unlock(&v->lock);
	return XDP_PASS;
}

SEC("xdp")
int lock_exit_without_unlock(struct xdp_md *ctx)
{
	struct locked *v = get(&la, 0);

	if (!v)
		return XDP_PASS;
	bpf_spin_lock(&v->lock);
	v->count++;
	return XDP_PASS;
}

SEC("xdp")
int lock_call_while_held(struct xdp_md *ctx)
{
	struct locked *v = get(&la, 0);

	if (!v)
		return XDP_PASS;
	bpf_spin_lock(&v->lock);
	v->count = bpf_ktime_get_ns();
	bpf_spin_unlock(&v->lock);
	return XDP_PASS;
}

SEC("xdp")
int lock_read_lock_word(struct xdp_md *ctx)
{
	struct locked *v = get(&la, 0);

	if (!v)
		return XDP_PASS;
	return *(volatile int *)&v->lock;
}

SEC("xdp")
int lock_unlock_other_value(struct xdp_md *ctx)
{
	struct locked *v = get(&la, 0), *w = get(&la, 1);

	if (!v || !w)
		return XDP_PASS;
	bpf_spin_lock(&v->lock);
	bpf_spin_unlock(&w->lock);
	return XDP_PASS;
}

SEC("xdp")
int lock_plain_map(struct xdp_md *ctx)
{
	long *v = bpf_map_lookup_elem(&plain, &(int){ 0 });

	if (!v)
		return XDP_PASS;
	bpf_spin_lock((struct bpf_spin_lock *)v);
	bpf_spin_unlock((struct bpf_spin_lock *)v);
	return XDP_PASS;
}

SEC("xdp")
int lock_unlock_on_one_branch(struct xdp_md *ctx)
{
	struct locked *v = get(&la, 0);

	if (!v)
		return XDP_PASS;
	bpf_spin_lock(&v->lock);
	if (v->count > 5)
		bpf_spin_unlock(&v->lock);
	return XDP_PASS;
}
