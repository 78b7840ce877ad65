/* Linux's generic open-coded iterator kfuncs, with its names, prototypes,
 * layouts and error codes (own code):
 *
 *   int  bpf_iter_num_new(struct bpf_iter_num *it, int start, int end);
 *   int *bpf_iter_num_next(struct bpf_iter_num *it);
 *   void bpf_iter_num_destroy(struct bpf_iter_num *it);
 *   int  bpf_iter_bits_new(struct bpf_iter_bits *it, const u64 *unsafe_ptr__ign,
 *                          u32 nr_words);
 *   int *bpf_iter_bits_next(struct bpf_iter_bits *it);
 *   void bpf_iter_bits_destroy(struct bpf_iter_bits *it);
 *
 * The contract the verifier's loop convergence rests on (verifier/iter.c):
 * after new, next returns non-NULL a bounded number of times (at most
 * end - start <= BPFRT_ITER_NUM_MAX numbers, at most nr_words * 64 bits),
 * then NULL on that and every later call until the object is initialised
 * again. A failed new leaves an iterator that gives nothing. The program
 * cannot touch the object's bytes (the verifier refuses every access to
 * an iterator's stack slots but these kfuncs'), so nothing else resets it.
 *
 * The bits iterator of one word keeps a copy of it, as Linux's does. Of
 * more words, Linux copies them into memory it allocates at new and frees
 * at destroy; a run here may be in a signal handler, where nothing may be
 * allocated, so the iterator keeps the address, checks at new that all of
 * it is readable, and reads each word (without faulting) when next gets to
 * it: a word the program changes during the loop is seen changed, and a
 * word that became unreadable ends the iteration. */
#include "helpers/iter.h"
#include "core/env.h"
#include "helpers/probe.h"

#include <errno.h>
#include <string.h>

#define PTR(x) ((void *)(uintptr_t)(x))

/* struct bpf_iter_num: the next call's element, end exclusive */
struct iter_num {
	int32_t cur;
	int32_t end;
};

/* struct bpf_iter_bits: nr_bits 0 gives nothing; bit is the element */
struct iter_bits {
	uint64_t word_or_addr;  /* the word itself (one word), else its address */
	int32_t nr_bits;
	int32_t bit;            /* the last bit given, -1 before the first */
};

_Static_assert(sizeof(struct iter_num) == 8, "struct bpf_iter_num is 8 bytes");
_Static_assert(sizeof(struct iter_bits) == 16, "struct bpf_iter_bits is 16 bytes");

/* ---- numbers ---- */

static uint64_t bpf_iter_num_new(uint64_t it, uint64_t start64, uint64_t end64, uint64_t r4,
				 uint64_t r5)
{
	struct iter_num *s = PTR(it);
	int32_t start = (int32_t)start64, end = (int32_t)end64;

	(void)r4;
	(void)r5;
	s->cur = s->end = 0;
	if (start > end)
		return (uint64_t)-EINVAL;
	if ((int64_t)end - start > BPFRT_ITER_NUM_MAX)
		return (uint64_t)-E2BIG;
	/* next adds one first (start - 1 may wrap: only cur + 1 is used) */
	s->cur = (int32_t)((uint32_t)start - 1);
	s->end = end;
	return 0;
}

static uint64_t bpf_iter_num_next(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5)
{
	struct iter_num *s = PTR(it);
	/* the next value wraps in 32 bits (start INT32_MIN begins at
	 * INT32_MAX + 1), the comparison is in 64 */
	int32_t next = (int32_t)((uint32_t)s->cur + 1);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if ((int64_t)next >= s->end) {
		s->cur = s->end = 0; /* sticky: every later call ends here too */
		return 0;
	}
	s->cur = next;
	return (uint64_t)(uintptr_t)&s->cur;
}

static uint64_t bpf_iter_num_destroy(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	struct iter_num *s = PTR(it);

	(void)r2, (void)r3, (void)r4, (void)r5;
	s->cur = s->end = 0;
	return 0;
}

/* ---- bits ---- */

static uint64_t bpf_iter_bits_new(uint64_t it, uint64_t addr, uint64_t nr_words64, uint64_t r4,
				  uint64_t r5)
{
	struct iter_bits *s = PTR(it);
	uint32_t nr_words = (uint32_t)nr_words64;
	uint64_t w;

	(void)r4, (void)r5;
	s->word_or_addr = 0;
	s->nr_bits = 0;
	s->bit = -1;
	if (!addr || !nr_words)
		return (uint64_t)-EINVAL;
	if (nr_words > BPFRT_ITER_BITS_MAX_WORDS)
		return (uint64_t)-E2BIG;
	if (nr_words == 1) {
		if (bpfrt_probe_read(&w, PTR(addr), sizeof(w)))
			return (uint64_t)-EFAULT;
		s->word_or_addr = w;
	} else {
		for (uint32_t i = 0; i < nr_words; i++)
			if (bpfrt_probe_read(&w, PTR(addr + 8ull * i), sizeof(w)))
				return (uint64_t)-EFAULT;
		s->word_or_addr = addr;
	}
	s->nr_bits = (int32_t)(nr_words * 64);
	return 0;
}

static uint64_t bpf_iter_bits_next(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5)
{
	struct iter_bits *s = PTR(it);
	int32_t from = s->bit + 1;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (s->nr_bits <= 0 || s->bit >= s->nr_bits)
		return 0;
	while (from < s->nr_bits) {
		uint32_t wi = (uint32_t)from / 64;
		uint64_t w = s->word_or_addr;

		if (s->nr_bits > 64 && bpfrt_probe_read(&w, PTR(s->word_or_addr + 8ull * wi),
							sizeof(w)))
			break; /* no longer readable: the end */
		w &= ~0ull << (from % 64);
		if (w) {
			s->bit = (int32_t)(wi * 64 + (uint32_t)__builtin_ctzll(w));
			return (uint64_t)(uintptr_t)&s->bit;
		}
		from = (int32_t)((wi + 1) * 64);
	}
	s->bit = s->nr_bits; /* sticky */
	return 0;
}

static uint64_t bpf_iter_bits_destroy(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5)
{
	struct iter_bits *s = PTR(it);

	(void)r2, (void)r3, (void)r4, (void)r5;
	s->nr_bits = 0; /* holds nothing to free */
	return 0;
}

/* ---- the table ---- */

#define A(t) BPFRT_ARG_##t

static const struct iter_def {
	struct bpfrt_iter_kfunc what;
	struct bpfrt_helper h;
} iter_kfuncs[] = {
	/* the verifier checks the iterator arguments itself (verifier/iter.c);
	 * the prototypes say what the other arguments are */
	{ { BPFRT_ITER_NUM, BPFRT_ITER_OP_NEW },
	  { "bpf_iter_num_new", bpf_iter_num_new, BPFRT_RET_INTEGER,
	    { A(ANYTHING), A(ANYTHING), A(ANYTHING) } } },
	{ { BPFRT_ITER_NUM, BPFRT_ITER_OP_NEXT },
	  { "bpf_iter_num_next", bpf_iter_num_next, BPFRT_RET_INTEGER, { A(ANYTHING) } } },
	{ { BPFRT_ITER_NUM, BPFRT_ITER_OP_DESTROY },
	  { "bpf_iter_num_destroy", bpf_iter_num_destroy, BPFRT_RET_VOID, { A(ANYTHING) } } },
	{ { BPFRT_ITER_BITS, BPFRT_ITER_OP_NEW },
	  { "bpf_iter_bits_new", bpf_iter_bits_new, BPFRT_RET_INTEGER,
	    { A(ANYTHING), A(ANYTHING), A(ANYTHING) } } },
	{ { BPFRT_ITER_BITS, BPFRT_ITER_OP_NEXT },
	  { "bpf_iter_bits_next", bpf_iter_bits_next, BPFRT_RET_INTEGER, { A(ANYTHING) } } },
	{ { BPFRT_ITER_BITS, BPFRT_ITER_OP_DESTROY },
	  { "bpf_iter_bits_destroy", bpf_iter_bits_destroy, BPFRT_RET_VOID, { A(ANYTHING) } } },
};

#define ITER_KFUNC_CNT (sizeof(iter_kfuncs) / sizeof(iter_kfuncs[0]))

struct bpfrt_iter_kfunc bpfrt_iter_kfunc_of(bpfrt_helper_fn fn)
{
	for (size_t i = 0; fn && i < ITER_KFUNC_CNT; i++)
		if (iter_kfuncs[i].h.fn == fn)
			return iter_kfuncs[i].what;
	return (struct bpfrt_iter_kfunc){ BPFRT_ITER_NONE, BPFRT_ITER_OP_NONE };
}

uint32_t bpfrt_iter_size(enum bpfrt_iter_type type)
{
	return type == BPFRT_ITER_NUM ? sizeof(struct iter_num) :
	       type == BPFRT_ITER_BITS ? sizeof(struct iter_bits) : 0;
}

const char *bpfrt_iter_type_name(enum bpfrt_iter_type type)
{
	return type == BPFRT_ITER_NUM ? "num" : type == BPFRT_ITER_BITS ? "bits" : "?";
}

void bpfrt_env_add_iter_kfuncs(struct bpfrt_env *env)
{
	for (size_t i = 0; i < ITER_KFUNC_CNT; i++)
		if (bpfrt_env_kfunc_id(env, iter_kfuncs[i].h.name) < 0)
			bpfrt_env_kfunc_register(env, iter_kfuncs[i].h.name, &iter_kfuncs[i].h);
}
