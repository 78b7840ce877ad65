/* Programs for tests/test_iters.c: loops over Linux's open-coded iterators
 * (bpf_for, bpf_repeat, bpf_for_each over num and bits) whose trip counts
 * come from the test's input (a global), so the verifier cannot count them. */
#include <linux/bpf.h>
#include "bpf_iters.h"

char _license[] SEC("license") = "GPL";

struct iter_args {
	__s32 start, end;   /* a number range */
	__s32 n;            /* a count */
	__u32 nr_words;     /* words of bits[] */
	__u64 bits[4];
	__u64 addr;         /* an address, as a number */
};

/* the test's input, written before each run */
struct iter_args args;


/* start + (start + 1) + ... + (end - 1) */
SEC("syscall")
int sum_range(void *ctx)
{
	struct iter_args *a = &args;
	int i, sum = 0;

	bpf_for(i, a->start, a->end)
		sum += i;
	return sum;
}

/* how many times bpf_repeat(n) runs its body */
SEC("syscall")
int repeat_count(void *ctx)
{
	struct iter_args *a = &args;
	int cnt = 0;

	bpf_repeat(a->n)
		cnt++;
	return cnt;
}

/* twice the sum of each element of a number iterator */
SEC("syscall")
int for_each_num(void *ctx)
{
	struct iter_args *a = &args;
	int *v, sum = 0;

	bpf_for_each(num, v, a->start, a->end)
		sum += *v * 2;
	return sum;
}

/* the set bits of bits[0 .. nr_words - 1]: their count << 20 | their sum */
SEC("syscall")
int bits_sum(void *ctx)
{
	struct iter_args *a = &args;
	__u64 words[4];
	int *bit, cnt = 0, sum = 0;

	for (int k = 0; k < 4; k++)
		words[k] = a->bits[k];
	if (a->nr_words > 4)
		return -1;
	bpf_for_each(bits, bit, words, a->nr_words) {
		cnt++;
		sum += *bit;
	}
	return cnt << 20 | sum;
}

/* sum over i < n of (0 + 1 + ... + i - 1) */
SEC("syscall")
int nested(void *ctx)
{
	struct iter_args *a = &args;
	int i, j, sum = 0;

	bpf_for(i, 0, a->n)
		bpf_for(j, 0, i)
			sum += j;
	return sum;
}

/* 0 + 1 + ... up to, not including, n (leaves the loop early) */
SEC("syscall")
int early_break(void *ctx)
{
	struct iter_args *a = &args;
	int i, sum = 0;

	bpf_for(i, 0, 1000) {
		if (i == a->n)
			break;
		sum += i;
	}
	return sum;
}

/* squares into a stack array indexed by the element, then summed from
 * start to end */
SEC("syscall")
int array_index(void *ctx)
{
	struct iter_args *a = &args;
	int sq[16] = {}, i, sum = 0;

	bpf_for(i, 0, 16)
		sq[i] = i * i;
	bpf_for(i, a->start, a->end)
		if (i >= 0 && i < 16)
			sum += sq[i];
	return sum;
}

/* new's error and the empty iterator it leaves: -EINVAL (start > end),
 * -E2BIG (more than 2^23 numbers), each plus 1000 per element given */
SEC("syscall")
int num_errors(void *ctx)
{
	struct iter_args *a = &args;
	struct bpf_iter_num it;
	int ret, given = 0;

	ret = bpf_iter_num_new(&it, a->start, a->end);
	while (bpf_iter_num_next(&it))
		given++;
	/* and NULL for good */
	if (bpf_iter_num_next(&it))
		given += 100;
	bpf_iter_num_destroy(&it);
	return ret + 1000 * given;
}

/* The bits of nr_words words at an address the program holds as a number
 * (read without faulting): new's error (no words or a NULL address:
 * -EINVAL, over 511 words: -E2BIG, unreadable: -EFAULT) plus 1000 per bit
 * given, plus the last bit's index << 20. */
SEC("syscall")
int bits_at(void *ctx)
{
	struct iter_args *a = &args;
	struct bpf_iter_bits it;
	int ret, given = 0, last = 0, *bit;

	ret = bpf_iter_bits_new(&it, (const __u64 *)a->addr, a->nr_words);
	while ((bit = bpf_iter_bits_next(&it))) {
		given++;
		last = *bit;
	}
	bpf_iter_bits_destroy(&it);
	return ret + 1000 * given + (last << 20);
}
