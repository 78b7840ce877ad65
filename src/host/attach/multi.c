/* fentry.multi: one program on many host functions through one shared
 * ("global") trampoline, and the two ways that trampoline finds the
 * function's state (struct bpfrt_tramp_func: its programs and cookies):
 *
 *   padding: functions built with -fpatchable-function-entry=N,M (M >= 4)
 *     get an index, written once into the 4 bytes before the entry; the
 *     global trampoline reads it (ip - 4) and indexes a chunked array. An
 *     index that does not lead back to the same ip (padding never written,
 *     or overwritten) falls back to the hash.
 *   hash: for the others, an open-addressing table keyed by entry address
 *     (load <= 1/2, so a lookup is one or two probes at any size), grown by
 *     copy and published with RCU.
 *
 * Both structures only grow: function states are permanent (trampoline.h).
 * The global trampolines (one per variant and per 2 GiB of address space
 * the functions live in) are permanent too. Attaching many functions is one
 * text_poke batch (three syncs in all); detaching is another, then one
 * grace period. */
#define _GNU_SOURCE
#include "attach/text_poke.h"
#include "attach/trampoline.h"
#include "core/config.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

#define PAD_CHUNK_BITS 12
#define PAD_CHUNK (1u << PAD_CHUNK_BITS)
#define PAD_CHUNKS 4096u

bool bpfrt_multi_force_hash;

/* ---- the hash ----------------------------------------------------------- */

/* struct md_hash (trampoline.h: the global trampolines probe it inline). */
#define md_slot bpfrt_md_slot
#define md_hash bpfrt_md_hash

static struct md_hash *_Atomic md_table;

static inline uint32_t md_index(uintptr_t ip, uint32_t shift)
{
	return (uint32_t)(((uint64_t)ip * BPFRT_MD_HASH_MUL) >> shift);
}

static inline struct bpfrt_tramp_func *md_lookup(const struct md_hash *t, uintptr_t ip)
{
	uint32_t mask = (uint32_t)((1ull << (64 - t->shift)) - 1);

	for (uint32_t i = md_index(ip, t->shift);; i = (i + 1) & mask) {
		uintptr_t a = atomic_load_explicit(&t->slots[i].ip, memory_order_acquire);

		if (a == ip)
			return t->slots[i].tf;
		if (!a)
			return NULL;
	}
}

/* Callers are inside an RCU read section or hold bpfrt_tramp_lock. */
struct bpfrt_tramp_func *bpfrt_multi_lookup_hash(uintptr_t ip)
{
	const struct md_hash *t = atomic_load_explicit(&md_table, memory_order_acquire);

	return t ? md_lookup(t, ip) : NULL;
}

static void md_put(struct md_hash *t, struct bpfrt_tramp_func *tf)
{
	uint32_t mask = (uint32_t)((1ull << (64 - t->shift)) - 1);
	uint32_t i = md_index(tf->ip, t->shift);

	while (atomic_load_explicit(&t->slots[i].ip, memory_order_relaxed))
		i = (i + 1) & mask;
	t->slots[i].tf = tf;
	atomic_store_explicit(&t->slots[i].ip, tf->ip, memory_order_release);
	t->cnt++;
}

static int md_insert(struct bpfrt_tramp_func *tf)
{
	struct md_hash *t = atomic_load(&md_table);
	uint64_t size = t ? 1ull << (64 - t->shift) : 0;

	if (!t || (uint64_t)(t->cnt + 1) * 2 > size) {
		uint32_t bits = t ? 65 - t->shift : 10;
		struct md_hash *n = calloc(1, sizeof(*n) + (sizeof(struct md_slot) << bits));

		if (!n)
			return bpfrt_err(-ENOMEM, "fentry.multi: out of memory");
		n->shift = 64 - bits;
		n->mask = (uint32_t)((1ull << bits) - 1);
		for (uint64_t i = 0; t && i < size; i++)
			if (atomic_load_explicit(&t->slots[i].ip, memory_order_relaxed))
				md_put(n, t->slots[i].tf);
		atomic_store_explicit(&md_table, n, memory_order_release);
		if (t)
			bpfrt_rcu_call(t, free);
		t = n;
	}
	md_put(t, tf);
	return 0;
}

/* ---- the padding index -------------------------------------------------- */

static struct bpfrt_tramp_func **_Atomic pad_chunks[PAD_CHUNKS];
static uint32_t pad_next = 1;

static inline struct bpfrt_tramp_func *pad_lookup(uintptr_t ip)
{
	uint32_t idx;

	memcpy(&idx, (const void *)(ip - 4), 4);
	if ((idx >> PAD_CHUNK_BITS) >= PAD_CHUNKS)
		return NULL;
	struct bpfrt_tramp_func **chunk =
		atomic_load_explicit(&pad_chunks[idx >> PAD_CHUNK_BITS], memory_order_acquire);

	if (!chunk)
		return NULL;
	struct bpfrt_tramp_func *tf = chunk[idx & (PAD_CHUNK - 1)];

	return tf && tf->ip == ip ? tf : NULL;
}

static int pad_assign(struct bpfrt_tramp_func *tf)
{
	uint32_t idx = pad_next;
	struct bpfrt_tramp_func **chunk;

	if ((idx >> PAD_CHUNK_BITS) >= PAD_CHUNKS)
		return 0; /* out of indexes: the hash serves it */
	chunk = atomic_load(&pad_chunks[idx >> PAD_CHUNK_BITS]);
	if (!chunk) {
		chunk = calloc(PAD_CHUNK, sizeof(*chunk));
		if (!chunk)
			return bpfrt_err(-ENOMEM, "fentry.multi: out of memory");
		atomic_store_explicit(&pad_chunks[idx >> PAD_CHUNK_BITS], chunk,
				      memory_order_release);
	}
	chunk[idx & (PAD_CHUNK - 1)] = tf;
	tf->pad_idx = idx;
	pad_next++;
	return 0;
}

int bpfrt_multi_register_func(struct bpfrt_tramp_func *tf)
{
	int err = md_insert(tf);

	if (!err && tf->pf->pad >= 4)
		err = pad_assign(tf);
	return err;
}

/* ---- run time ------------------------------------------------------------- */

static inline uint64_t multi_run(struct bpfrt_tramp_frame *f, struct bpfrt_tramp_func *tf)
{
	const struct bpfrt_prog_array *arr;
	void *prev = bpfrt_run_state.tramp_frame;
	uint64_t r0;

	if (!tf)
		return BPFRT_TRAMP_BODY; /* detached and unpatched meanwhile */
	f->nr_args = tf->nr_args;
	f->md = NULL;
	bpfrt_run_state.tramp_frame = f;
	arr = bpfrt_prog_array_load(&tf->multi);
	if (arr)
		for (uint32_t i = 0; i < arr->cnt; i++)
			bpfrt_attach_run(arr->items[i].prog, f->args, arr->items[i].cookie, &r0);
	bpfrt_run_state.tramp_frame = prev;
	return BPFRT_TRAMP_BODY;
}

static uint64_t multi_enter_pad(struct bpfrt_tramp_frame *f, void *md)
{
	struct bpfrt_tramp_func *tf;
	uint64_t ret;

	bpfrt_attach_enter();
	tf = pad_lookup(f->ip);
	if (__builtin_expect(!tf, 0))
		tf = bpfrt_multi_lookup_hash(f->ip);
	ret = multi_run(f, tf);
	bpfrt_attach_exit();
	return ret;
}

static uint64_t multi_enter_hash(struct bpfrt_tramp_frame *f, void *md)
{
	uint64_t ret;

	bpfrt_attach_enter();
	ret = multi_run(f, bpfrt_multi_lookup_hash(f->ip));
	bpfrt_attach_exit();
	return ret;
}

/* ---- global trampolines ---------------------------------------------------- */

struct global_tramp {
	uintptr_t addr;
	bool pad;
	struct global_tramp *next;
};

static struct global_tramp *globals;

/* The hash in C, for a global trampoline without the inline probe. */
static void *lookup_hash(uintptr_t ip)
{
	return bpfrt_multi_lookup_hash(ip);
}

bool bpfrt_multi_uses_pad(const struct bpfrt_tramp_func *tf)
{
	return tf->pad_idx && !bpfrt_multi_force_hash;
}

uintptr_t bpfrt_multi_global_tramp(const struct bpfrt_tramp_func *tf)
{
	bool pad = bpfrt_multi_uses_pad(tf);
	uint8_t insn[5];
	struct global_tramp *g;

	for (g = globals; g; g = g->next)
		if (g->pad == pad && !bpfrt_encode_call(insn, tf->ip, g->addr))
			return g->addr;
	struct bpfrt_tramp_desc d = {
		.type = BPFRT_TRAMP_MULTI, .flags = BPFRT_TRAMP_F_FENTRY, .nr_args = 6,
		.pad = pad, .pad_chunks = pad_chunks,
		.pad_chunk_bits = PAD_CHUNK_BITS, .pad_chunk_cnt = PAD_CHUNKS,
		.lookup = lookup_hash, .run_item = bpfrt_tramp_run_item,
		.md_table = (const void *)&md_table, .layout = bpfrt_tramp_layout(),
	};

	/* BPFRT_TRAMP_NO_FAST=1: the run path in C (benchmarks compare). */
	if (bpfrt_config()->tramp_no_fast)
		d = (struct bpfrt_tramp_desc){
			.type = BPFRT_TRAMP_CLASSIC, .flags = BPFRT_TRAMP_F_FENTRY, .nr_args = 6,
			.enter = pad ? multi_enter_pad : multi_enter_hash,
		};

	g = calloc(1, sizeof(*g));
	if (!g)
		return 0;
	g->addr = bpfrt_tramp_build(&d, tf->ip);
	if (!g->addr) {
		free(g);
		return 0;
	}
	g->pad = pad;
	g->next = globals;
	globals = g;
	return g->addr;
}

/* ---- links -------------------------------------------------------------------- */

struct multi_link {
	struct bpfrt_link link;
	uint32_t cnt;
	struct bpfrt_tramp_func **tfs;
	char *glob;
};

struct multi_attach {
	struct multi_link *ml;
	const struct bpfrt_prog *prog;
	uint32_t nr_args;       /* bpfrt_attach_opts.nr_args: where no debug info tells */
	uint32_t cap;
	uint32_t skipped;
};

static int collect(void *ctx, const struct bpfrt_patchable_func *pf)
{
	struct multi_attach *ma = ctx;
	struct bpfrt_tramp_func *tf;
	uint32_t nr_args;
	int err;

	if (pf->nops1) {
		ma->skipped++;
		return 0;
	}
	/* a glob matches functions of different arities: each one's debug
	 * info counts; the user's nr_args (else 6) is for those without */
	nr_args = 0;
	if (!bpfrt_multi_lookup_hash(pf->entry)) {
		/* only a function seen for the first time needs its count */
		err = bpfrt_tramp_nr_args("fentry.multi", pf, 0, false, &nr_args);
		if (err)
			return err;
	}
	if (!nr_args)
		nr_args = ma->nr_args ? ma->nr_args : 6;
	tf = bpfrt_tramp_func_get(pf, nr_args);
	if (!tf)
		return -ENOMEM;
	/* every target must supply the context the program reads (a target
	 * attached before keeps the argument count it was attached with) */
	err = bpfrt_prog_check_ctx(ma->prog, 8 * tf->nr_args, pf->name);
	if (err)
		return err;
	if (ma->ml->cnt == ma->cap) {
		uint32_t cap = ma->cap ? 2 * ma->cap : 64;
		struct bpfrt_tramp_func **grown = realloc(ma->ml->tfs, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		ma->ml->tfs = grown;
		ma->cap = cap;
	}
	ma->ml->tfs[ma->ml->cnt++] = tf;
	return 0;
}

/* Pokes every function of ml whose entry must change. */
static int retarget_all(struct multi_link *ml)
{
	struct bpfrt_poke *pokes = calloc((size_t)ml->cnt * 2, sizeof(*pokes));
	size_t n = 0;
	int err = 0;

	if (!pokes)
		return bpfrt_err(-ENOMEM, "fentry.multi: out of memory");
	for (uint32_t i = 0; i < ml->cnt; i++) {
		err = bpfrt_tramp_func_pokes(ml->tfs[i], &pokes[n]);
		if (err < 0)
			break;
		n += (size_t)err;
		err = 0;
	}
	if (!err)
		err = bpfrt_text_poke_batch(pokes, n);
	free(pokes);
	return err;
}

static int multi_detach(struct bpfrt_link *link)
{
	struct multi_link *ml = (struct multi_link *)link;
	int err;

	pthread_mutex_lock(&bpfrt_tramp_lock);
	for (uint32_t i = 0; i < ml->cnt; i++)
		if (!bpfrt_prog_array_remove(&ml->tfs[i]->multi, link, false))
			ml->tfs[i]->prog_cnt--;
	err = retarget_all(ml);
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	bpfrt_rcu_synchronize();
	return err;
}

static void multi_dealloc(struct bpfrt_link *link)
{
	struct multi_link *ml = (struct multi_link *)link;

	free(ml->tfs);
	bpfrt_link_release(link);
	free(ml);
}

static void multi_show(const struct bpfrt_link *link, FILE *out)
{
	const struct multi_link *ml = (const struct multi_link *)link;

	fprintf(out, "  functions %u", ml->cnt);
}

static const struct bpfrt_link_ops multi_ops = {
	.kind = "fentry.multi", .detach = multi_detach, .dealloc = multi_dealloc, .show = multi_show,
};

int bpfrt_multi_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			    const char *target, uint64_t cookie, uint32_t nr_args,
			    struct bpfrt_link **out)
{
	struct multi_link *ml = calloc(1, sizeof(*ml));
	struct multi_attach ma = { .ml = ml, .prog = prog, .nr_args = nr_args };
	uint32_t added = 0;
	int err;

	if (!ml)
		return bpfrt_err(-ENOMEM, "fentry.multi: out of memory");
	/* every target gives the context of fentry.multi, whatever the
	 * program was verified as */
	err = bpfrt_prog_check_kind(prog, BPFRT_PROG_FENTRY_MULTI, target);
	if (err) {
		free(ml);
		return err;
	}
	err = bpfrt_link_init(&ml->link, &multi_ops, prog, target, cookie);
	if (err) {
		free(ml);
		return bpfrt_err(err, "fentry.multi: out of memory");
	}
	pthread_mutex_lock(&bpfrt_tramp_lock);
	err = bpfrt_patchable_foreach(target, collect, &ma);
	if (err < 0)
		goto fail;
	if (!ml->cnt) {
		err = bpfrt_err(-ENOENT, "fentry.multi: no patchable function matches %s%s",
				target, ma.skipped ? " (some start with 1-byte nops: see mk/bpfrt-host.mk)" : "");
		goto fail;
	}
	struct bpfrt_prog_array_item item = {
		.prog = prog, .cookie = cookie, .link = &ml->link,
		.flags = bpfrt_tramp_prog_inlinable(prog) ? BPFRT_TRAMP_ITEM_INLINE : 0,
	};

	for (; added < ml->cnt; added++) {
		err = bpfrt_prog_array_add(&ml->tfs[added]->multi, &item);
		if (err) {
			err = bpfrt_err(err, "fentry.multi: out of memory");
			goto fail_remove;
		}
		ml->tfs[added]->prog_cnt++;
	}
	err = retarget_all(ml);
	if (err)
		goto fail_remove;
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	bpfrt_link_publish(&ml->link);
	*out = &ml->link;
	return 0;
fail_remove:
	for (uint32_t i = 0; i < added; i++) {
		bpfrt_prog_array_remove(&ml->tfs[i]->multi, &ml->link, false);
		ml->tfs[i]->prog_cnt--;
	}
fail:
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	free(ml->tfs);
	bpfrt_link_release(&ml->link);
	free(ml);
	return err;
}
