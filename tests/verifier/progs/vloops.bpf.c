/* Verifier C corpus: loops and callbacks.
 * @infinite_loop: reject "infinite loop" ; linux: same
 * @bounded_loop: accept ; linux: same
 * @loop_callback_ok: accept ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("raw_tp/x")
int infinite_loop(unsigned long long *ctx)
{
	unsigned long long v = ctx[0];

	for (;;)
		if (v == 5)
			break;
	return 0;
}

SEC("raw_tp/x")
int bounded_loop(unsigned long long *ctx)
{
	int s = 0;

	for (int i = 0; i < 100; i++)
		s += i ^ (int)ctx[0];
	return s;
}

static long add_cb(__u32 i, void *c)
{
	*(long *)c += i;
	return 0;
}

SEC("raw_tp/x")
int loop_callback_ok(void *ctx)
{
	long sum = 0;

	bpf_loop(10, add_cb, &sum, 0);
	return sum;
}

