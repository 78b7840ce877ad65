/* Linux's generic open-coded iterators as BPF C programs see them: the
 * object types (as vmlinux.h has them), the kfunc declarations and loop
 * macros with the shape and names of libbpf's bpf_for_each(), bpf_for()
 * and bpf_repeat() (libbpf's own need a newer bpf_helpers.h than the one
 * installed). Each loop's iterator is destroyed by a cleanup attribute
 * wherever the loop is left. */
#ifndef BPFRT_TESTS_BPF_ITERS_H
#define BPFRT_TESTS_BPF_ITERS_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));

struct bpf_iter_bits {
	__u64 __opaque[2];
} __attribute__((aligned(8)));

extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;
extern int bpf_iter_bits_new(struct bpf_iter_bits *it, const __u64 *unsafe_ptr__ign,
			     __u32 nr_words) __ksym;
extern int *bpf_iter_bits_next(struct bpf_iter_bits *it) __ksym;
extern void bpf_iter_bits_destroy(struct bpf_iter_bits *it) __ksym;

/* cur = each element of a TYPE iterator made with args */
#define bpf_for_each(type, cur, args...)                                             \
	for (struct bpf_iter_##type ___it                                             \
		__attribute__((aligned(8), cleanup(bpf_iter_##type##_destroy))),       \
	     *___made __attribute__((unused)) =                                       \
		(bpf_iter_##type##_new(&___it, ##args), (void)bpf_iter_##type##_destroy, \
		 (void *)0);                                                           \
	     ((cur) = bpf_iter_##type##_next(&___it));)

/* i = start .. end - 1; the bounds check tells the verifier its range */
#define bpf_for(i, start, end)                                                       \
	for (struct bpf_iter_num ___it                                                \
		__attribute__((aligned(8), cleanup(bpf_iter_num_destroy))),            \
	     *___made __attribute__((unused)) =                                       \
		(bpf_iter_num_new(&___it, (start), (end)), (void)bpf_iter_num_destroy,  \
		 (void *)0);                                                           \
	     ({                                                                        \
		int *___e = bpf_iter_num_next(&___it);                                 \
		___e && ((i) = *___e, (i) >= (start) && (i) < (end));                  \
	     });)

/* the body n times */
#define bpf_repeat(n)                                                                \
	for (struct bpf_iter_num ___it                                                \
		__attribute__((aligned(8), cleanup(bpf_iter_num_destroy))),            \
	     *___made __attribute__((unused)) =                                       \
		(bpf_iter_num_new(&___it, 0, (n)), (void)bpf_iter_num_destroy, (void *)0); \
	     bpf_iter_num_next(&___it);)

#endif
