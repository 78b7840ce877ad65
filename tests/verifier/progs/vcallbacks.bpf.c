/* Verifier C corpus: bpf_loop callbacks whose state converges (the shapes
 * of the kernel selftests' bpf_loop.c), and callbacks that only a later
 * iteration makes unsafe.
 * @cb_state_repeats: accept ; linux: same
 * @cb_early_stop_flags: accept ; linux: same
 * @cb_nested_loops: accept ; linux: same
 * @cb_counter_in_ctx: accept ; linux: same
 * @cb_index_grows_out_of_frame: reject "invalid" ; linux: same
 * @cb_second_iteration_reads_uninit: reject "invalid read from stack" ; linux: accept (root may read uninitialized stack; bpfrt never)
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

__u32 stop_index = -1;
__u32 nr_loops;
__u32 nested_nr_loops;
long nr_returned;
long g_output;

struct out_ctx {
	int output;
};

/* the state at the callback's exit repeats from the second iteration on:
 * converged, not an infinite loop */
static long add_index(__u32 index, void *data)
{
	struct out_ctx *ctx = data;

	if (index >= stop_index)
		return 1;
	ctx->output += index;
	return 0;
}

SEC("raw_tp/x")
int cb_state_repeats(void *c)
{
	struct out_ctx data = {};

	nr_returned = bpf_loop(nr_loops, add_index, &data, 0);
	if (nr_returned >= 0)
		g_output = data.output;
	return 0;
}

SEC("raw_tp/x")
int cb_early_stop_flags(void *c)
{
	struct out_ctx data = {};

	nr_returned = bpf_loop(nr_loops, add_index, &data, nr_loops & 1);
	g_output = data.output;
	return 0;
}

static long inner_loop(__u32 index, void *data)
{
	nr_returned += bpf_loop(nested_nr_loops, add_index, data, 0);
	return 0;
}

static long outer_loop(__u32 index, void *data)
{
	bpf_loop(nested_nr_loops, inner_loop, data, 0);
	return 0;
}

/* a callback calling bpf_loop with a callback that calls it again */
SEC("raw_tp/x")
int cb_nested_loops(void *c)
{
	struct out_ctx data = {};

	bpf_loop(1, outer_loop, &data, 0);
	g_output = data.output;
	return 0;
}

struct count_ctx {
	__u64 n;
	__u64 sum;
};

static long count(__u32 index, void *data)
{
	struct count_ctx *c = data;

	c->n++;
	c->sum += index;
	return c->sum > 1000;
}

SEC("raw_tp/x")
int cb_counter_in_ctx(void *c)
{
	struct count_ctx data = {};

	bpf_loop(100, count, &data, 0);
	return data.n;
}

struct grow_ctx {
	__u32 n;
	char buf[16];
};

/* n grows every iteration; from the 21st on buf[n] is past the caller's
 * frame (the struct is all of it) */
static long grow(__u32 index, void *data)
{
	struct grow_ctx *g = data;

	g->buf[g->n & 31] = 1;
	g->n++;
	return 0;
}

SEC("raw_tp/x")
int cb_index_grows_out_of_frame(void *c)
{
	struct grow_ctx data = {};

	bpf_loop(64, grow, &data, 0);
	return data.buf[0];
}

struct flag_ctx {
	__u64 flag;
	__u64 *p;
};

/* the first iteration is safe; the second reads what the first pointed
 * at, which nothing initialised */
static long second_reads(__u32 index, void *data)
{
	struct flag_ctx *f = data;

	if (f->flag)
		g_output += *f->p;
	f->flag = 1;
	return 0;
}

SEC("raw_tp/x")
int cb_second_iteration_reads_uninit(void *c)
{
	__u64 never_written[2];
	struct flag_ctx data = { .flag = 0, .p = &never_written[1] };

	bpf_loop(2, second_reads, &data, 0);
	return 0;
}
