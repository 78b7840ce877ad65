/* Every map kind the loader creates from .maps, driven from BPF with the
 * Linux helpers: array, percpu_array, hash, percpu_hash and lru_hash,
 * with the error codes a program sees for each update flag. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct pair {
	__u64 a;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct pair);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} lru SEC(".maps");

/* Results of the scripted operations, in order (see map_errors). */
long rc[24];
__u32 cpu_seen;
__u64 user_value_seen;
__u32 lru_inserted;

/* Element writes, then every flag and error code a program can meet. */
SEC("tp/bpfrt/map_errors")
int map_errors(void *ctx)
{
	struct pair p = { .a = 1, .b = 2 }, *pv;
	__u32 k1 = 1, k2 = 2, k;
	__u64 v = 7, *av;
	int i = 0;

	rc[i++] = bpf_map_update_elem(&hash, &k1, &p, BPF_NOEXIST);  /* 0 */
	rc[i++] = bpf_map_update_elem(&hash, &k1, &p, BPF_NOEXIST);  /* -EEXIST */
	rc[i++] = bpf_map_update_elem(&hash, &k2, &p, BPF_EXIST);    /* -ENOENT */
	p.b = 22;
	rc[i++] = bpf_map_update_elem(&hash, &k1, &p, BPF_EXIST);    /* 0 */
	pv = bpf_map_lookup_elem(&hash, &k1);
	rc[i++] = pv ? (long)(pv->a * 100 + pv->b) : -1;           /* 122 */
	rc[i++] = bpf_map_delete_elem(&hash, &k1);                   /* 0 */
	rc[i++] = bpf_map_delete_elem(&hash, &k1);                   /* -ENOENT */
	rc[i++] = bpf_map_lookup_elem(&hash, &k1) ? 1 : 0;           /* 0 */
	for (k = 10; k < 14; k++)                                    /* fill: 4 entries */
		bpf_map_update_elem(&hash, &k, &p, BPF_ANY);
	k = 20;
	rc[i++] = bpf_map_update_elem(&hash, &k, &p, BPF_ANY);       /* -E2BIG */
	k = 10;
	rc[i++] = bpf_map_update_elem(&hash, &k, &p, BPF_ANY);       /* 0: replace when full */
	rc[i++] = bpf_map_update_elem(&hash, &k, &p, 8);             /* -EINVAL */

	k = 3;
	rc[i++] = bpf_map_update_elem(&arr, &k, &v, BPF_ANY);        /* 0 */
	rc[i++] = bpf_map_update_elem(&arr, &k, &v, BPF_NOEXIST);    /* -EEXIST */
	rc[i++] = bpf_map_update_elem(&arr, &k, &v, BPF_EXIST);      /* 0 */
	k = 8;
	rc[i++] = bpf_map_update_elem(&arr, &k, &v, BPF_ANY);        /* -E2BIG */
	rc[i++] = bpf_map_lookup_elem(&arr, &k) ? 1 : 0;             /* 0 */
	k = 3;
	rc[i++] = bpf_map_delete_elem(&arr, &k);                     /* -EINVAL */
	av = bpf_map_lookup_elem(&arr, &k);
	rc[i++] = av ? (long)*av : -1;                               /* 7 */
	k = 5;
	av = bpf_map_lookup_elem(&arr, &k);
	rc[i++] = av ? (long)*av : -1;                               /* 0: arrays are zeroed */
	return i;
}

/* Counts runs in both per-CPU maps, in the slot of the running CPU. */
SEC("tp/bpfrt/percpu_count")
int percpu_count(void *ctx)
{
	__u32 k = 0, hk = 42;
	__u64 zero = 0, *v;

	cpu_seen = bpf_get_smp_processor_id();
	v = bpf_map_lookup_elem(&pcpu_arr, &k);
	if (!v)
		return 1;
	__sync_fetch_and_add(v, 1);
	v = bpf_map_lookup_elem(&pcpu_hash, &hk);
	if (!v) {
		bpf_map_update_elem(&pcpu_hash, &hk, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&pcpu_hash, &hk);
		if (!v)
			return 2;
	}
	__sync_fetch_and_add(v, 1);
	return 0;
}

/* Reads what user space wrote into arr[1] and hash[7]. */
SEC("tp/bpfrt/read_user")
int read_user(void *ctx)
{
	__u32 k = 1, hk = 7;
	__u64 *v = bpf_map_lookup_elem(&arr, &k);
	struct pair *p = bpf_map_lookup_elem(&hash, &hk);

	if (!v || !p)
		return -1;
	user_value_seen = *v + p->a + p->b;
	/* and leave something for user space: hash[8] = {a + 1, b + 1} */
	struct pair q = { p->a + 1, p->b + 1 };
	hk = 8;
	return bpf_map_update_elem(&hash, &hk, &q, BPF_ANY);
}

/* LRU: 8 slots. Keys 0..7 go in, then 24 more while key 0 stays hot: the
 * map never fails an insert, stays at 8 entries and keeps the hot key. */
SEC("tp/bpfrt/lru_churn")
int lru_churn(void *ctx)
{
	__u32 hot = 0;
	__u64 v;

	for (__u32 k = 0; k < 32; k++) {
		v = k * 10;
		if (bpf_map_update_elem(&lru, &k, &v, BPF_NOEXIST))
			return -(int)k - 1;
		lru_inserted++;
		bpf_map_lookup_elem(&lru, &hot);
	}
	return 0;
}

/* For the CLI: one entry a run leaves in the hash map. */
SEC("tp/bpfrt/write_entry")
int write_entry(void *ctx)
{
	__u32 k = 0x2a;
	struct pair p = { .a = 0x1122, .b = 0x33 };

	return bpf_map_update_elem(&hash, &k, &p, BPF_ANY);
}
