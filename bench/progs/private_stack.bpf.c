/* The private-stack workload, the kernel selftest's tp program doing hash
 * map ops in a batch (bench/bench_private_stack.c): on every event,
 * batch_iters rounds of lookup / update if missing / delete on a hash map
 * with 48-byte keys and values built on the stack (96 bytes of frame: a
 * private stack by default). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct data_t {
	unsigned int d[12];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10);
	__type(key, struct data_t);
	__type(value, struct data_t);
} htab SEC(".maps");

long hits = 0;
const volatile int batch_iters = 0;

/* stack0 and stack1 are the same program: bench/bench_private_stack.c's
 * paired mode (private-stack-ab) loads stack1 without a private stack and
 * attaches the two in turn, so both use one map and one process layout. */
#define STACK_PROG(name)						\
SEC("tp/bpfrt/bench_trigger")						\
int name(void *ctx)							\
{									\
	struct data_t key = {}, value = {};				\
	struct data_t *pvalue;						\
	int i;								\
									\
	hits++;								\
	key.d[10] = 5;							\
	value.d[8] = 10;						\
									\
	for (i = 0; i < batch_iters; i++) {				\
		pvalue = bpf_map_lookup_elem(&htab, &key);		\
		if (!pvalue)						\
			bpf_map_update_elem(&htab, &key, &value, 0);	\
		bpf_map_delete_elem(&htab, &key);			\
	}								\
	return 0;							\
}

STACK_PROG(stack0)
STACK_PROG(stack1)
