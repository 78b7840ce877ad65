/* Programs that several threads run at once: counters in a hash, a
 * per-CPU hash and a per-CPU array bumped atomically (no update may be
 * lost), and a churn map whose keys user space deletes meanwhile. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define NR_KEYS 16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NR_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, NR_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_slots SEC(".maps");

struct churn_val {
	__u64 seq;
	__u64 check;   /* always ~seq: a torn value shows up */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct churn_val);
} churn SEC(".maps");

long failures;    /* lookups that failed right after an insert */
long torn;        /* churn values whose two words disagree (reported) */
__u64 churn_seen; /* churn values found (so the reads are not optimised away) */

static __always_inline int bump(void *map, __u32 key)
{
	__u64 zero = 0, *v = bpf_map_lookup_elem(map, &key);

	if (!v) {
		/* -EEXIST when another thread won the race: fine */
		bpf_map_update_elem(map, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, &key);
		if (!v)
			return -1;
	}
	__sync_fetch_and_add(v, 1);
	return 0;
}

/* ctx->args[0]: the run number; the key is derived from it. */
SEC("raw_tp/bpfrt_bump")
int bump_counters(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 key = ctx->args[0] % NR_KEYS;
	__u64 *slot;

	if (bump(&counts, key) || bump(&pcpu_counts, key)) {
		__sync_fetch_and_add(&failures, 1);
		return 1;
	}
	slot = bpf_map_lookup_elem(&pcpu_slots, &key);
	if (!slot) {
		__sync_fetch_and_add(&failures, 1);
		return 1;
	}
	__sync_fetch_and_add(slot, 1);
	return 0;
}

/* Writes a key of the churn map that user space deletes concurrently, and
 * checks a value it finds was not torn. */
SEC("raw_tp/bpfrt_churn")
int churn_write(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 key = ctx->args[0] % 48;
	struct churn_val nv = { .seq = ctx->args[0], .check = ~ctx->args[0] };
	struct churn_val *cur = bpf_map_lookup_elem(&churn, &key);

	/* Replaced elements wait for RCU readers before reuse unless the
	 * pool runs dry (then, as Linux's preallocated maps, they are reused
	 * at once): torn values are rare and only counted. */
	if (cur) {
		if (cur->seq != ~cur->check)
			__sync_fetch_and_add(&torn, 1);
		__sync_fetch_and_add(&churn_seen, 1);
	}
	bpf_map_update_elem(&churn, &key, &nv, BPF_ANY);
	if (ctx->args[0] % 5 == 0)
		bpf_map_delete_elem(&churn, &key);
	return 0;
}
