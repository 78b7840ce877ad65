/* The hash map workload of the private-stack benchmark (Linux's private-stack selftest shape): `iters` iterations, each an
 * update (insert), a lookup (hit) and a delete of one 48-byte key with a
 * 48-byte value, in a BPF_MAP_TYPE_HASH that user space may have filled
 * with other keys beforehand. Run by `bpfrt-bench hashmap` in bpfrt and in
 * the kernel (XDP, BPF_PROG_TEST_RUN), and by `bpfrt prog run --repeat`.
 *
 * Returns a checksum of what the lookups saw, so every engine can be
 * checked against the others. Keys never collide with the fill keys
 * (word 5 differs), so the map holds fill + at most one key. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_ITERS 4096

struct key48 {
	__u64 w[6];
};

struct val48 {
	__u64 w[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct key48);
	__type(value, struct val48);
} hmap SEC(".maps");

/* The knob, set before load (skeleton style); the kernel's verifier sees
 * it as a constant because libbpf freezes .rodata. */
const volatile __u32 iters = 256;

SEC("xdp")
int hash_iters(struct xdp_md *ctx)
{
	struct key48 k = {};
	struct val48 v = {};
	__u64 sum = 0;

	for (__u32 i = 0; i < iters && i < MAX_ITERS; i++) {
		struct val48 *p;

		k.w[0] = i;
		k.w[1] = (__u64)i * 0x9e3779b97f4a7c15ULL;
		k.w[2] = ~(__u64)i;
		k.w[5] = 0xb0b0;
		v.w[0] = i + 1;
		v.w[5] = i ^ 0x55;
		bpf_map_update_elem(&hmap, &k, &v, BPF_ANY);
		p = bpf_map_lookup_elem(&hmap, &k);
		if (p)
			sum += p->w[0] + p->w[5];
		bpf_map_delete_elem(&hmap, &k);
	}
	return (__u32)(sum ^ (sum >> 32));
}

char LICENSE[] SEC("license") = "GPL";
