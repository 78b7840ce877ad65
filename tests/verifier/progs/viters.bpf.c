/* Verifier C corpus: Linux's open-coded iterators (bpf_iter_num_*,
 * bpf_iter_bits_*). Loops over an iterator converge at its next call
 * whatever the trip count; everything else about them is checked.
 * @for_unknown_count: accept ; linux: same
 * @repeat_million: accept ; linux: same
 * @for_each_bits_stack: accept ; linux: same
 * @nested_loops: accept ; linux: same
 * @element_indexes_array: accept ; linux: same
 * @iter_in_subprog: accept ; linux: same
 * @bounded_loop_in_body: accept ; linux: same
 * @leak_without_destroy: reject "Unreleased reference" ; linux: same
 * @leak_in_subprog: reject "Unreleased reference" ; linux: same
 * @next_after_destroy: reject "expected an initialized iter_num" ; linux: same
 * @destroy_twice: reject "expected an initialized iter_num" ; linux: same
 * @next_uninit: reject "expected an initialized iter_num" ; linux: same
 * @new_on_active: reject "expected uninitialized iter_num" ; linux: same
 * @wrong_type: reject "expected an initialized iter_bits" ; linux: same
 * @deref_without_null_check: reject "invalid mem access 'scalar'" ; linux: same
 * @write_element: reject "cannot write into rdonly_mem" ; linux: same
 * @overwrite_iterator: reject "part of an open-coded iterator" ; linux: same
 * @copy_iterator: reject "part of an open-coded iterator" ; linux: same
 * @element_after_destroy: reject "invalid access to memory" ; linux: same
 * @unbounded_loop_in_body: reject "infinite loop" ; linux: same
 * @recreated_in_loop: reject "infinite loop" ; linux: accept (Linux takes the re-created iterator for the one it replaced, its ids being renamed, and so proves a loop that never ends; bpfrt never renames an iterator's id)
 * @drained_forever: reject "infinite loop" ; linux: same
 * @index_widened: reject "invalid access to map value" ; linux: same
 */
#include <linux/bpf.h>
#include "../../progs/bpf_iters.h"

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32[8]);
} arr SEC(".maps");

/* ---- accepted ---- */

SEC("raw_tp/x")
int for_unknown_count(unsigned long long *ctx)
{
	int i, sum = 0;

	bpf_for(i, 0, (int)ctx[0])
		sum += i * 3;
	return sum;
}

SEC("raw_tp/x")
int repeat_million(void *ctx)
{
	unsigned long long acc = 1;

	bpf_repeat(1000000)
		acc = acc * 31 + 7;
	return (int)acc;
}

SEC("raw_tp/x")
int for_each_bits_stack(unsigned long long *ctx)
{
	__u64 words[2] = { ctx[0], ctx[1] };
	int *bit, sum = 0;

	bpf_for_each(bits, bit, words, 2)
		sum += *bit;
	return sum;
}

SEC("raw_tp/x")
int nested_loops(unsigned long long *ctx)
{
	int i, j, sum = 0;

	bpf_for(i, 0, (int)ctx[0])
		bpf_for(j, i, (int)ctx[1])
			sum += i ^ j;
	return sum;
}

/* the element, bounds-checked by bpf_for, indexes a map value */
SEC("raw_tp/x")
int element_indexes_array(unsigned long long *ctx)
{
	__u32 k = 0, *v = bpf_map_lookup_elem(&arr, &k);
	int i, sum = 0;

	if (!v)
		return 0;
	bpf_for(i, 0, 8)
		sum += v[i];
	return sum;
}

static __attribute__((noinline)) int count_to(int n)
{
	int cnt = 0;

	bpf_repeat(n)
		cnt++;
	return cnt;
}

SEC("raw_tp/x")
int iter_in_subprog(unsigned long long *ctx)
{
	return count_to((int)ctx[0]);
}

/* a loop in the body that proves its own bound */
SEC("raw_tp/x")
int bounded_loop_in_body(unsigned long long *ctx)
{
	int i, sum = 0;

	bpf_for(i, 0, (int)ctx[0])
		for (int k = 0; k < 4; k++)
			sum += k;
	return sum;
}

/* ---- rejected ---- */

SEC("raw_tp/x")
int leak_without_destroy(void *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 10);
	bpf_iter_num_next(&it);
	return 0;
}

static __attribute__((noinline)) int leaks(int n)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, n);
	return bpf_iter_num_next(&it) ? 1 : 0;
}

SEC("raw_tp/x")
int leak_in_subprog(unsigned long long *ctx)
{
	return leaks((int)ctx[0]);
}

SEC("raw_tp/x")
int next_after_destroy(void *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 10);
	bpf_iter_num_destroy(&it);
	return bpf_iter_num_next(&it) ? 1 : 0;
}

SEC("raw_tp/x")
int destroy_twice(void *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 10);
	bpf_iter_num_destroy(&it);
	bpf_iter_num_destroy(&it);
	return 0;
}

SEC("raw_tp/x")
int next_uninit(void *ctx)
{
	struct bpf_iter_num it;

	return bpf_iter_num_next(&it) ? 1 : 0;
}

SEC("raw_tp/x")
int new_on_active(void *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 10);
	bpf_iter_num_new(&it, 0, 5);
	bpf_iter_num_destroy(&it);
	return 0;
}

SEC("raw_tp/x")
int wrong_type(void *ctx)
{
	struct bpf_iter_num it[2];

	bpf_iter_num_new(&it[0], 0, 10);
	bpf_iter_num_new(&it[1], 0, 10);
	bpf_iter_bits_next((struct bpf_iter_bits *)&it[0]);
	bpf_iter_num_destroy(&it[0]);
	bpf_iter_num_destroy(&it[1]);
	return 0;
}

SEC("raw_tp/x")
int deref_without_null_check(void *ctx)
{
	struct bpf_iter_num it;
	int v;

	bpf_iter_num_new(&it, 0, 10);
	v = *bpf_iter_num_next(&it);
	bpf_iter_num_destroy(&it);
	return v;
}

SEC("raw_tp/x")
int write_element(void *ctx)
{
	struct bpf_iter_num it;
	int *p;

	bpf_iter_num_new(&it, 0, 10);
	p = bpf_iter_num_next(&it);
	if (p)
		*p = 100;
	bpf_iter_num_destroy(&it);
	return 0;
}

SEC("raw_tp/x")
int overwrite_iterator(void *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 10);
	*(volatile __u64 *)&it = 0; /* would restart it */
	bpf_iter_num_destroy(&it);
	return 0;
}

SEC("raw_tp/x")
int copy_iterator(void *ctx)
{
	struct bpf_iter_num it, copy;

	bpf_iter_num_new(&it, 0, 10);
	__builtin_memcpy(&copy, &it, sizeof(it));
	bpf_iter_num_destroy(&it);
	return (int)copy.__opaque[0];
}

SEC("raw_tp/x")
int element_after_destroy(void *ctx)
{
	struct bpf_iter_num it;
	int *p, v = 0;

	bpf_iter_num_new(&it, 0, 10);
	p = bpf_iter_num_next(&it);
	bpf_iter_num_destroy(&it);
	if (p)
		v = *p;
	return v;
}

/* the back edge of the inner loop is not through next: it needs its own
 * proof, and there is none */
SEC("raw_tp/x")
int unbounded_loop_in_body(unsigned long long *ctx)
{
	unsigned long long v = ctx[0];
	int i, sum = 0;

	bpf_for(i, 0, 10) {
		for (;;)
			if (v == 5)
				break;
		sum += i;
	}
	return sum;
}

/* never ends: each round starts a fresh iterator in the same slot */
SEC("raw_tp/x")
int recreated_in_loop(void *ctx)
{
	struct bpf_iter_num it;

	bpf_iter_num_new(&it, 0, 10);
	while (bpf_iter_num_next(&it)) {
		bpf_iter_num_destroy(&it);
		bpf_iter_num_new(&it, 0, 10);
	}
	bpf_iter_num_destroy(&it);
	return 0;
}

/* never ends: a drained iterator's next is NULL for good */
SEC("raw_tp/x")
int drained_forever(void *ctx)
{
	struct bpf_iter_num it;
	int n = 0;

	bpf_iter_num_new(&it, 0, 10);
	for (;;) {
		if (bpf_iter_num_next(&it))
			n++;
		else
			asm volatile("" ::: "memory");
	}
	bpf_iter_num_destroy(&it);
	return n;
}

/* idx grows without a branch on it: the iterations widen it, so the
 * access cannot be proved (Linux: the same, by its precision marks) */
SEC("raw_tp/x")
int index_widened(void *ctx)
{
	__u32 k = 0, *v = bpf_map_lookup_elem(&arr, &k);
	unsigned int idx = 0;
	int sum = 0;

	if (!v)
		return 0;
	bpf_repeat(4) {
		sum += v[idx & 15];
		idx++;
	}
	return sum;
}
