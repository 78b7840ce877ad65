/* Programs for tests/test_tracepoint.c and test_links.c: host tracepoints
 * seen through tp/ (header + u64 args) and raw_tp/ (u64 args) contexts. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

/* struct bpfrt_tp_entry, then the arguments. */
struct tp_ctx {
	__u16 id;
	__u8 nargs;
	__u8 flags;
	__s32 tid;
	__u64 args[3];
};

long tp_hits, raw_hits, second_hits;
__u64 tp_args[3], raw_args[3];
__u32 tp_id, tp_nargs;
__s32 tp_tid;

long recurse_hits, other_hits;
long stress_hits;

extern int tp_test_refire(__u64 depth) __ksym;

SEC("tp/bpfrt_test/tp_args3")
int on_tp_args(struct tp_ctx *ctx)
{
	tp_id = ctx->id;
	tp_nargs = ctx->nargs;
	tp_tid = ctx->tid;
	tp_args[0] = ctx->args[0];
	tp_args[1] = ctx->args[1];
	tp_args[2] = ctx->args[2];
	__sync_fetch_and_add(&tp_hits, 1);
	return 0;
}

SEC("raw_tp/tp_args3")
int on_raw_args(__u64 *ctx)
{
	raw_args[0] = ctx[0];
	raw_args[1] = ctx[1];
	/* a pointer argument: read the string it points to (first byte);
	 * raw_tp arguments are numbers to the verifier, so through probe_read */
	char first = 0;

	bpf_probe_read_kernel(&first, 1, (const void *)ctx[2]);
	raw_args[2] = first;
	__sync_fetch_and_add(&raw_hits, 1);
	return 0;
}

SEC("raw_tp/tp_args3")
int on_args_second(void *ctx)
{
	__sync_fetch_and_add(&second_hits, 1);
	return 0;
}

/* Fires its own tracepoint again through a kfunc: the nested run of this
 * program is skipped (a miss), other programs still run. */
SEC("raw_tp/tp_recurse")
int on_recurse(__u64 *ctx)
{
	__sync_fetch_and_add(&recurse_hits, 1);
	if (ctx[0] > 0)
		tp_test_refire(ctx[0] - 1);
	return 0;
}

SEC("raw_tp/tp_recurse")
int on_recurse_other(__u64 *ctx)
{
	__sync_fetch_and_add(&other_hits, 1);
	return 0;
}

/* Per firing thread (ctx[0] = its index, one writer each): the thread
 * reads its slot around each fire and knows whether this program ran. */
__u64 thread_hits[2];

SEC("raw_tp/tp_stress")
int on_stress(__u64 *ctx)
{
	__u64 i = ctx[0];

	if (i < 2)
		thread_hits[i]++;
	__sync_fetch_and_add(&stress_hits, 1);
	return 0;
}

long zero_hits;

SEC("raw_tp/tp_zero")
int on_zero(void *ctx)
{
	__sync_fetch_and_add(&zero_hits, 1);
	return 0;
}

/* Reads the third raw argument: attachable to tp_args3, refused by tp_zero. */
SEC("raw_tp/tp_args3")
int reads_third_arg(__u64 *ctx)
{
	return (int)ctx[2];
}
