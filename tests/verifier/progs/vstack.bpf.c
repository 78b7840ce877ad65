/* Verifier C corpus: the stack.
 * @stack_var_index_unbounded: reject "fp pointer and register with unbounded min value" ; linux: same
 * @stack_var_index_masked: accept ; linux: same
 * @stack_uninit_read: reject "invalid read from stack" ; linux: accept (root may read uninitialized stack; bpfrt never)
 * @stack_init_read: accept ; linux: same
 * @stack_ptr_leak_to_map: reject "leaks addr into map" ; linux: accept (privileged Linux lets pointers leak (allow_ptr_leaks); bpfrt treats them like unprivileged Linux)
 * @stack_write_var_unbounded: reject "fp pointer and register with unbounded min value" ; linux: same
 * @stack_var_write_then_fixed_read: reject "invalid read from stack" ; linux: accept (root may read uninitialized stack; bpfrt never)
 * @stack_var_write_over_zeroed: accept ; linux: same
 * @stack_helper_var_size_uninit: reject "invalid indirect write to stack" ; linux: accept (root may read uninitialized stack; bpfrt never)
 * @stack_helper_var_size_zeroed: accept ; linux: same
 * @stack_helper_const_size: accept ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

long sink;

SEC("raw_tp/x")
int stack_var_index_unbounded(unsigned long long *ctx)
{
	volatile char buf[16] = {};

	return buf[ctx[0]];
}

SEC("raw_tp/x")
int stack_var_index_masked(unsigned long long *ctx)
{
	volatile char buf[16] = {};

	return buf[ctx[0] & 15];
}

SEC("raw_tp/x")
int stack_uninit_read(void *ctx)
{
	volatile long x;

	return x;
}

SEC("raw_tp/x")
int stack_init_read(void *ctx)
{
	volatile long x = 4;

	return x;
}

SEC("raw_tp/x")
int stack_ptr_leak_to_map(void *ctx)
{
	volatile long x = 1;

	sink = (long)&x; /* the stack's address into a global (a map value) */
	return x;
}

SEC("raw_tp/x")
int stack_write_var_unbounded(unsigned long long *ctx)
{
	volatile char buf[16] = {};

	buf[ctx[0]] = 1;
	return buf[0];
}

/* A variable-offset write initialises no byte it may miss. */
SEC("raw_tp/x")
int stack_var_write_then_fixed_read(unsigned long long *ctx)
{
	volatile char buf[16];

	buf[ctx[0] & 15] = 1;
	return buf[3];
}

SEC("raw_tp/x")
int stack_var_write_over_zeroed(unsigned long long *ctx)
{
	volatile char buf[16] = {};

	buf[ctx[0] & 15] = 1;
	return buf[3];
}

/* A helper writing up to a variable size writes no byte it may miss: the
 * buffer must be initialised first (as Linux: check_mem_size_reg). */
SEC("raw_tp/x")
int stack_helper_var_size_uninit(unsigned long long *ctx)
{
	char buf[16];

	bpf_probe_read_kernel(buf, (ctx[0] & 15) + 1, (void *)ctx[1]);
	return buf[15];
}

SEC("raw_tp/x")
int stack_helper_var_size_zeroed(unsigned long long *ctx)
{
	char buf[16] = {};

	bpf_probe_read_kernel(buf, (ctx[0] & 15) + 1, (void *)ctx[1]);
	return buf[15];
}

SEC("raw_tp/x")
int stack_helper_const_size(unsigned long long *ctx)
{
	char buf[16];

	bpf_probe_read_kernel(buf, sizeof(buf), (void *)ctx[1]);
	return buf[15];
}
