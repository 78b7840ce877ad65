// A nested (hierarchical cgroup) scheduler as BPF C: one program per cgroup of
//   root (0): cg1 (1): cg11 (3), cg12 (4)
//             cg2 (2): cg21 (5), cg22 (6)
// Each program asks the programs of its children (the host gave node i's
// children as child list i of the bpfrt_run_children kfunc) and
// summarises the level below: its own load plus what they returned.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

extern __u64 bpfrt_run_children(__u64 list, __u64 arg) __ksym;

__u64 load[8];          /* set by the host */
__u64 summary[8];       /* what each node reported */
__u64 depth_seen[8];    /* the nesting depth it ran at */

static __always_inline int summarise(__u32 self, void *ctx)
{
	/* a frame of more than 64 bytes: tracing programs get a private
	 * stack by default */
	volatile __u64 scratch[16];
	__u64 depth = (__u64)ctx, below;

	for (int i = 0; i < 16; i++)
		scratch[i] = depth + i;
	below = bpfrt_run_children(self, depth + 1);
	summary[self] = below + load[self] + (scratch[15] - depth - 15) + (scratch[0] - depth);
	depth_seen[self] = depth;
	return (int)summary[self];
}

SEC("raw_tp/cg_root") int cg_root(void *ctx) { return summarise(0, ctx); }
SEC("raw_tp/cg1") int cg1(void *ctx) { return summarise(1, ctx); }
SEC("raw_tp/cg2") int cg2(void *ctx) { return summarise(2, ctx); }
SEC("raw_tp/cg11") int cg11(void *ctx) { return summarise(3, ctx); }
SEC("raw_tp/cg12") int cg12(void *ctx) { return summarise(4, ctx); }
SEC("raw_tp/cg21") int cg21(void *ctx) { return summarise(5, ctx); }
SEC("raw_tp/cg22") int cg22(void *ctx) { return summarise(6, ctx); }
