/* Loader test: global data, const volatile knobs, .text subprograms
 * (static and global), a host kfunc, several programs and sections. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

const volatile int batch_iters = 1;
long hits = 0;
int counter;
int seeded = 7;
const char greeting[] = "hello";

extern int host_add(int a, int b) __ksym;

static __noinline int triple(int x)
{
	return x * 3;
}

__noinline int add_one(int x)
{
	return (unsigned int)triple(x) / 3 + 1;
}

SEC("tp/bpfrt/test_event")
int count_hits(void *ctx)
{
	for (int i = 0; i < batch_iters; i++)
		__sync_fetch_and_add(&hits, 1);
	counter = add_one(counter);
	return host_add(counter, seeded);
}

SEC("raw_tp/bpfrt_raw")
int read_greeting(void *ctx)
{
	return greeting[1] + triple(2);
}

SEC("fentry/host_function")
int on_entry(void *ctx)
{
	return 0;
}
