/* Linux's generic open-coded iterators (iter.c): the kfuncs behind
 * libbpf's bpf_for(), bpf_repeat() and bpf_for_each(num|bits, ...), under
 * their Linux names, in every environment.
 *
 * An iterator is an opaque object in the program's stack (struct
 * bpf_iter_num: 8 bytes, struct bpf_iter_bits: 16, both 8-aligned) that
 * bpf_iter_TYPE_new initialises, bpf_iter_TYPE_next advances (a pointer to
 * the current int element inside the iterator, or NULL once it is
 * exhausted, and NULL again on every later call) and bpf_iter_TYPE_destroy
 * ends. The verifier types these calls itself (verifier/iter.c): it finds
 * them by function, as it finds bpf_tail_call, so an embedder's own
 * function registered under one of these names is an ordinary kfunc. */
#ifndef BPFRT_HELPERS_ITER_H
#define BPFRT_HELPERS_ITER_H

#include "bpfrt/helpers.h"

#include <stdbool.h>
#include <stdint.h>

/* Most elements a number iterator gives (Linux's BPF_MAX_LOOPS), and
 * most words a bits iterator covers (Linux's BITS_ITER_NR_WORDS_MAX). */
#define BPFRT_ITER_NUM_MAX       (1u << 23)
#define BPFRT_ITER_BITS_MAX_WORDS 511u

enum bpfrt_iter_type {
	BPFRT_ITER_NONE = 0,
	BPFRT_ITER_NUM,
	BPFRT_ITER_BITS,
};

enum bpfrt_iter_op {
	BPFRT_ITER_OP_NONE = 0,
	BPFRT_ITER_OP_NEW,
	BPFRT_ITER_OP_NEXT,
	BPFRT_ITER_OP_DESTROY,
};

/* What fn is: one of the iterator kfuncs (its type and operation) or
 * neither (BPFRT_ITER_NONE). */
struct bpfrt_iter_kfunc {
	enum bpfrt_iter_type type;
	enum bpfrt_iter_op op;
};
struct bpfrt_iter_kfunc bpfrt_iter_kfunc_of(bpfrt_helper_fn fn);

/* Bytes of the iterator object of a type (0 for BPFRT_ITER_NONE). */
uint32_t bpfrt_iter_size(enum bpfrt_iter_type type);
/* Linux's name of the type ("num", "bits"), as its messages use it. */
const char *bpfrt_iter_type_name(enum bpfrt_iter_type type);

struct bpfrt_env;
/* Registers the iterator kfuncs in env under their Linux names, each only
 * where the name is still free (an embedder's own wins). */
void bpfrt_env_add_iter_kfuncs(struct bpfrt_env *env);

#endif
