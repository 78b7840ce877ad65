/* Host tracepoints: registry, static-branch patching, firing, and the
 * tp/raw_tp attach kinds. See include/bpfrt/tracepoint.h. */
#define _GNU_SOURCE
#include "bpfrt/tracepoint.h"
#include "attach/link.h"
#include "attach/run.h"
#include "attach/text_poke.h"
#include "core/error.h"
#include "core/prog_kind.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* A module's site table, registered by its constructors. */
struct site_table {
	const struct bpfrt_tp_site *start, *stop;
	struct site_table *next;
};

/* Serialises registration, attach, detach and patching. Never taken by
 * the firing path. */
static pthread_mutex_t tp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bpfrt_tracepoint *tp_list;
static struct site_table *tables;
static uint32_t next_tp_id = 1;

struct tp_link {
	struct bpfrt_link link;
	struct bpfrt_tracepoint *tp;
	bool raw;
};

static struct bpfrt_prog_array *_Atomic *tp_slot(struct bpfrt_tracepoint *tp)
{
	return (struct bpfrt_prog_array *_Atomic *)&tp->progs;
}

/* ---- the firing path ------------------------------------------------------ */

static __thread int32_t cached_tid __attribute__((tls_model("initial-exec")));

static void reset_tid_after_fork(void)
{
	cached_tid = 0;
}

static inline int32_t current_tid(void)
{
	if (__builtin_expect(cached_tid == 0, 0))
		cached_tid = (int32_t)syscall(SYS_gettid);
	return cached_tid;
}

void bpfrt_tracepoint_fire(struct bpfrt_tracepoint *tp, uint64_t *ctx)
{
	const struct bpfrt_prog_array *arr;
	struct bpfrt_tp_entry hdr = {
		.id = (uint16_t)tp->id,
		.nargs = (uint8_t)tp->nargs,
		.tid = current_tid(),
	};

	memcpy(ctx, &hdr, sizeof(hdr));
	bpfrt_attach_enter();
	arr = bpfrt_prog_array_load(tp_slot(tp));
	if (arr)
		bpfrt_prog_array_run(arr, ctx);
	bpfrt_attach_exit();
}

/* The sites' entry points, one per argument count. */
#define U64 uint64_t
void bpfrt_tracepoint_fire0(struct bpfrt_tracepoint *tp)
{
	uint64_t ctx[1];

	bpfrt_tracepoint_fire(tp, ctx);
}

#define FIRE_N(n, params, ...)							\
void bpfrt_tracepoint_fire##n(struct bpfrt_tracepoint *tp, params)		\
{										\
	uint64_t ctx[1 + n] = { 0, __VA_ARGS__ };				\
										\
	bpfrt_tracepoint_fire(tp, ctx);						\
}
#define P(...) __VA_ARGS__
FIRE_N(1, P(U64 a), a)
FIRE_N(2, P(U64 a, U64 b), a, b)
FIRE_N(3, P(U64 a, U64 b, U64 c), a, b, c)
FIRE_N(4, P(U64 a, U64 b, U64 c, U64 d), a, b, c, d)
FIRE_N(5, P(U64 a, U64 b, U64 c, U64 d, U64 e), a, b, c, d, e)
FIRE_N(6, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f), a, b, c, d, e, f)
FIRE_N(7, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f, U64 g), a, b, c, d, e, f, g)
FIRE_N(8, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f, U64 g, U64 h), a, b, c, d, e, f, g, h)
FIRE_N(9, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f, U64 g, U64 h, U64 i),
       a, b, c, d, e, f, g, h, i)
FIRE_N(10, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f, U64 g, U64 h, U64 i, U64 j),
       a, b, c, d, e, f, g, h, i, j)
FIRE_N(11, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f, U64 g, U64 h, U64 i, U64 j, U64 k),
       a, b, c, d, e, f, g, h, i, j, k)
FIRE_N(12, P(U64 a, U64 b, U64 c, U64 d, U64 e, U64 f, U64 g, U64 h, U64 i, U64 j, U64 k,
	     U64 l), a, b, c, d, e, f, g, h, i, j, k, l)
#undef P
#undef FIRE_N
#undef U64

/* ---- patching ------------------------------------------------------------- */

/* Writes the sites of pokes[] (each a nop5 <-> jmp toggle) while other
 * threads may run them: breakpoint first, one batch for all sites. */
static int tracepoint_poke(struct bpfrt_poke *pokes, size_t cnt)
{
	return cnt ? bpfrt_text_poke_batch(pokes, cnt) : 0;
}

static bool site_is_valid(const struct bpfrt_tp_site *s)
{
	const uint8_t *code = (const uint8_t *)s->addr;
	uint8_t jmp[5];

	if (!memcmp(code, nop5, 5))
		return true;
	return !bpfrt_encode_jmp(jmp, s->addr, s->target) && !memcmp(code, jmp, 5);
}

/* Adds the poke that puts site s in state `on`, unless it is there. */
static int site_poke(const struct bpfrt_tp_site *s, bool on, struct bpfrt_poke *p)
{
	memset(p, 0, sizeof(*p));
	p->addr = s->addr;
	p->len = 5;
	if (on) {
		if (bpfrt_encode_jmp(p->bytes, s->addr, s->target))
			return bpfrt_err(-ERANGE, "tracepoint %s: site %#lx: target out of range",
					 s->tp->name, (unsigned long)s->addr);
	} else {
		memcpy(p->bytes, nop5, 5);
	}
	if (!site_is_valid(s))
		return bpfrt_err(-EINVAL, "tracepoint %s: site %#lx holds neither a nop5 nor "
				 "its jmp", s->tp->name, (unsigned long)s->addr);
	return memcmp((const void *)s->addr, p->bytes, 5) ? 1 : 0;
}

/* Puts every site of tp (or, with tp NULL, of every enabled tracepoint) in
 * table t (or all tables) into the wanted state. tp_lock held. */
static int patch_sites(struct bpfrt_tracepoint *tp, const struct site_table *only, bool on)
{
	struct bpfrt_poke *pokes = NULL;
	size_t cnt = 0, cap = 0;
	int err = 0;

	for (const struct site_table *t = tables; t; t = t->next) {
		if (only && t != only)
			continue;
		for (const struct bpfrt_tp_site *s = t->start; s < t->stop; s++) {
			bool want = tp ? on : s->tp->enabled;

			if ((tp && s->tp != tp) || (!tp && !want))
				continue;
			if (cnt == cap) {
				struct bpfrt_poke *np = realloc(pokes, (cap = cap ? 2 * cap : 16) *
								sizeof(*pokes));
				if (!np) {
					err = bpfrt_err(-ENOMEM, "tracepoint: out of memory");
					goto out;
				}
				pokes = np;
			}
			err = site_poke(s, want, &pokes[cnt]);
			if (err < 0)
				goto out;
			cnt += err;
			err = 0;
		}
	}
	err = tracepoint_poke(pokes, cnt);
out:
	free(pokes);
	return err;
}

/* ---- registry ------------------------------------------------------------- */

static void register_tp_locked(struct bpfrt_tracepoint *tp)
{
	if (tp->registered)
		return;
	tp->id = next_tp_id++;
	tp->registered = true;
	tp->next = tp_list;
	tp_list = tp;
}

static void register_table_locked(const struct bpfrt_tp_site *start,
				  const struct bpfrt_tp_site *stop)
{
	struct site_table *t;

	for (t = tables; t; t = t->next)
		if (t->start == start)
			return;
	t = calloc(1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "bpfrt: tracepoint: out of memory registering sites\n");
		return;
	}
	t->start = start;
	t->stop = stop;
	t->next = tables;
	tables = t;
	/* dlopen() after an attach: its sites of enabled tracepoints jump too. */
	if (patch_sites(NULL, t, true))
		fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
}

static void install_fork_handler(void)
{
	/* The child's forking thread has a new tid but our cached copy. */
	pthread_atfork(NULL, NULL, reset_tid_after_fork);
}

void bpfrt_tracepoint_register(struct bpfrt_tracepoint *tp,
			       const struct bpfrt_tp_site *start,
			       const struct bpfrt_tp_site *stop)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

	pthread_once(&fork_once, install_fork_handler);
	pthread_mutex_lock(&tp_lock);
	if (tp)
		register_tp_locked(tp);
	if (start && stop && start < stop)
		register_table_locked(start, stop);
	pthread_mutex_unlock(&tp_lock);
}

void bpfrt_tracepoint_unregister(struct bpfrt_tracepoint *tp,
				 const struct bpfrt_tp_site *start)
{
	pthread_mutex_lock(&tp_lock);
	if (tp && tp->registered) {
		struct bpfrt_tracepoint **pp = &tp_list;

		while (*pp && *pp != tp)
			pp = &(*pp)->next;
		if (*pp)
			*pp = tp->next;
		tp->registered = false;
	}
	if (start) {
		struct site_table **pp = &tables;

		while (*pp && (*pp)->start != start)
			pp = &(*pp)->next;
		if (*pp) {
			struct site_table *t = *pp;

			*pp = t->next;
			free(t);
		}
	}
	pthread_mutex_unlock(&tp_lock);
}

static bool name_matches(const struct bpfrt_tracepoint *tp, const char *name)
{
	const char *slash;

	if (!strcmp(tp->name, name))
		return true;
	slash = strrchr(name, '/');
	return slash && !strcmp(tp->name, slash + 1);
}

static struct bpfrt_tracepoint *find_locked(const char *name)
{
	for (struct bpfrt_tracepoint *tp = tp_list; tp; tp = tp->next)
		if (name_matches(tp, name))
			return tp;
	return NULL;
}

struct bpfrt_tracepoint *bpfrt_tracepoint_find(const char *name)
{
	struct bpfrt_tracepoint *tp;

	if (!name)
		return NULL;
	pthread_mutex_lock(&tp_lock);
	tp = find_locked(name);
	pthread_mutex_unlock(&tp_lock);
	return tp;
}

/* The verifier sizes a tracepoint program's context by this (the engine
 * asks through the kind table's lookup; it does not call the host). */
_Static_assert(BPFRT_KIND_TP_MAX_ARGS == BPFRT_TP_MAX_ARGS, "one tracepoint argument limit");
_Static_assert(BPFRT_KIND_TP_HEADER == sizeof(struct bpfrt_tp_entry), "one tp context header");

static int tracepoint_nargs(const char *target)
{
	const struct bpfrt_tracepoint *tp = bpfrt_tracepoint_find(target);
	const char *slash = strrchr(target, '/');

	if (!tp && slash)
		tp = bpfrt_tracepoint_find(slash + 1);
	return tp ? (int)tp->nargs : -ENOENT;
}

static void __attribute__((constructor)) tracepoint_nargs_register(void)
{
	bpfrt_prog_kind_set_tp_nargs(tracepoint_nargs);
}

bool bpfrt_tracepoint_enabled(const struct bpfrt_tracepoint *tp)
{
	return tp && __atomic_load_n(&tp->enabled, __ATOMIC_RELAXED);
}

size_t bpfrt_tracepoint_sites(const struct bpfrt_tracepoint *tp, struct bpfrt_tp_site *sites,
			      size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&tp_lock);
	for (const struct site_table *t = tables; t; t = t->next)
		for (const struct bpfrt_tp_site *s = t->start; s < t->stop; s++)
			if (s->tp == tp) {
				if (n < max)
					sites[n] = *s;
				n++;
			}
	pthread_mutex_unlock(&tp_lock);
	return n;
}

int bpfrt_tracepoint_list(FILE *out)
{
	int n = 0;

	pthread_mutex_lock(&tp_lock);
	for (struct bpfrt_tracepoint *tp = tp_list; tp; tp = tp->next, n++) {
		size_t sites = 0;

		for (const struct site_table *t = tables; t; t = t->next)
			for (const struct bpfrt_tp_site *s = t->start; s < t->stop; s++)
				sites += s->tp == tp;
		fprintf(out, "%u: %s(%s)  sites %zu  programs %u%s\n", tp->id, tp->name,
			tp->proto, sites, tp->prog_cnt, tp->enabled ? "  enabled" : "");
	}
	pthread_mutex_unlock(&tp_lock);
	return n;
}

/* ---- links ---------------------------------------------------------------- */

static int tp_link_detach(struct bpfrt_link *link)
{
	struct tp_link *tl = (struct tp_link *)link;
	struct bpfrt_tracepoint *tp = tl->tp;
	int err;

	pthread_mutex_lock(&tp_lock);
	if (tp->prog_cnt == 1) {
		/* Sites first: the last program's array goes after. */
		err = patch_sites(tp, NULL, false);
		if (err) {
			pthread_mutex_unlock(&tp_lock);
			return err;
		}
		__atomic_store_n(&tp->enabled, false, __ATOMIC_RELAXED);
	}
	/* Returns after a grace period: no thread runs the program from here. */
	err = bpfrt_prog_array_remove(tp_slot(tp), link, true);
	if (!err)
		tp->prog_cnt--;
	pthread_mutex_unlock(&tp_lock);
	return err;
}

static void tp_link_dealloc(struct bpfrt_link *link)
{
	bpfrt_link_release(link);
	free(link);
}

static void tp_link_show(const struct bpfrt_link *link, FILE *out)
{
	const struct tp_link *tl = (const struct tp_link *)link;

	fprintf(out, "  tracepoint %s id %u", tl->tp->name, tl->tp->id);
}

static const struct bpfrt_link_ops tp_link_ops = {
	.kind = "tracepoint",
	.detach = tp_link_detach,
	.dealloc = tp_link_dealloc,
	.show = tp_link_show,
};

static const struct bpfrt_link_ops raw_tp_link_ops = {
	.kind = "raw_tracepoint",
	.detach = tp_link_detach,
	.dealloc = tp_link_dealloc,
	.show = tp_link_show,
};

int bpfrt_tracepoint_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
				 const char *target, uint64_t cookie, uint32_t nr_args,
				 struct bpfrt_link **out)
{
	bool raw = kind == BPFRT_PROG_RAW_TRACEPOINT;
	struct bpfrt_prog_array_item item;
	struct bpfrt_tracepoint *tp;
	struct tp_link *tl;
	int err;

	tl = calloc(1, sizeof(*tl));
	if (!tl)
		return bpfrt_err(-ENOMEM, "attach %s: out of memory", prog->name);
	err = bpfrt_link_init(&tl->link, raw ? &raw_tp_link_ops : &tp_link_ops, prog,
			      target, cookie);
	if (err) {
		free(tl);
		return err;
	}
	tl->raw = raw;

	pthread_mutex_lock(&tp_lock);
	tp = find_locked(target);
	if (!tp) {
		err = bpfrt_err(-ENOENT, "attach %s: no tracepoint '%s' in this process",
				prog->name, target);
		goto fail;
	}
	/* a program verified as the other tracepoint kind (or any other
	 * kind) would get a context it was not verified for */
	err = bpfrt_prog_check_kind(prog, kind, target);
	if (!err)
		err = bpfrt_prog_check_ctx(prog, (uint32_t)((raw ? 0 : sizeof(struct bpfrt_tp_entry)) +
							    8 * tp->nargs), target);
	if (err)
		goto fail;
	tl->tp = tp;
	item = (struct bpfrt_prog_array_item){
		.prog = prog,
		.cookie = cookie,
		.ctx_off = raw ? sizeof(struct bpfrt_tp_entry) : 0,
		.link = &tl->link,
	};
	/* Programs first, then the sites: a thread that takes the jump finds
	 * the program. */
	err = bpfrt_prog_array_add(tp_slot(tp), &item);
	if (err)
		goto fail;
	if (tp->prog_cnt == 0) {
		err = patch_sites(tp, NULL, true);
		if (err) {
			bpfrt_prog_array_remove(tp_slot(tp), &tl->link, true);
			goto fail;
		}
		__atomic_store_n(&tp->enabled, true, __ATOMIC_RELAXED);
	}
	tp->prog_cnt++;
	pthread_mutex_unlock(&tp_lock);
	bpfrt_link_publish(&tl->link);
	*out = &tl->link;
	return 0;
fail:
	pthread_mutex_unlock(&tp_lock);
	bpfrt_link_release(&tl->link);
	free(tl);
	return err;
}
