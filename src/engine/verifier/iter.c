/* Open-coded iterators: the verifier's model of Linux's bpf_iter_num_* and
 * bpf_iter_bits_* kfuncs (helpers/iter.c), found by function.
 *
 * The object. An iterator lives in 8-byte stack slots of some frame (one
 * for num, two for bits) at the constant, 8-aligned offset its pointer
 * (r1 of every call) has. new turns slots that hold no iterator into one:
 * every byte becomes STACK_ITER and each slot's `spilled` describes it
 * (see it_* below): its type, its id (a reference acquired at new, so an
 * iterator still alive at the program's exit is an "Unreleased reference"
 * and a tail call with one alive is refused), which slot of the object
 * this is, its state and its depth. next and destroy need an object of
 * their type there; destroy releases the reference and leaves the slots
 * uninitialised. No load, store, atomic or helper memory argument may
 * touch an iterator's bytes (viter_check_stack_access), so the object the
 * kfuncs see is exactly what new made of it; a frame may not return while
 * it holds one.
 *
 * next. An ACTIVE iterator's next forks, as Linux's
 * process_iter_next_call: the current path goes on with the iterator
 * DRAINED and r0 = 0 (NULL: dereferencing it is refused as a scalar's),
 * and a path is pushed with it still ACTIVE, one deeper, and r0 a
 * non-NULL read-only pointer to the 4-byte element (PTR_TO_MEM,
 * MEM_RDONLY, its ref_obj_id the iterator's: after destroy it points at
 * no bytes). A
 * DRAINED iterator's next returns NULL again. Before the ACTIVE path is
 * pushed, its scalars that no later branch depends on (not in the static
 * precise masks of the next insn, facts.c) and that differ from those of
 * the previous iteration (the nearest ancestor checkpoint at the same
 * call with the same call sites) are forgotten: an accumulator would
 * otherwise give every iteration a new state (Linux's
 * widen_imprecise_scalars). Forgetting is always sound: a wider state
 * covers more.
 *
 * Convergence. Every next call is a prune point (facts.c). There, an
 * ancestor checkpoint (still being explored) whose state covers the
 * current one (vstates_equal, not exact) ends the path when the
 * iterator r1 points to is ACTIVE (viter_converged): the loop came round
 * to a state the walk already goes on from, so nothing new can happen.
 * Iterator slots compare equal only when they hold the same type, state
 * and id (ids are never renamed between states, unlike other ids), and
 * the depth only in the exact comparison of the infinite-loop check, so
 * two iterations are never taken for an infinite loop.
 *
 * Why the loops this accepts terminate. Without this rule every cycle the
 * walk leaves behind is ruled out: paths are walked as a tree, a path is
 * pruned only against a state whose walk had ended (so those edges go to
 * earlier-finished states and form no cycle), and repeating an ancestor
 * exactly is refused. A convergence edge from cur back to its ancestor
 * sl is the only new edge, so every cycle of the graph the verifier
 * proved uses one. Take an infinite run and, among the states it visits
 * infinitely often, the one created first, R. A subtree is walked
 * contiguously (the branch stack is LIFO), so every state the run visits
 * infinitely often is in R's subtree, and the edges it takes into R
 * infinitely often are convergence edges: R is an ACTIVE iterator's next
 * call with some id k in some slot. The new that made k is an ancestor of
 * R, outside that subtree, so from some point on the run never executes
 * it; every edge keeps an iterator slot's id as it is (no renaming, equal
 * both ways), only new makes an id, so from then on k stays in its slot
 * all along, at every visit of R, and no new runs on that slot and no
 * access writes it: it is one run-time object throughout. Leaving R the
 * run cannot take the DRAINED branch (it would stay DRAINED with id k
 * and never be ACTIVE at R again), so each visit of R is a next call on
 * that object returning an element, which helpers/iter.c bounds (at most
 * end - start <= 2^23 numbers, nr_words * 64 <= 32704 bits, then NULL for
 * good): a contradiction. So the verifier may accept a loop body that
 * looks unbounded exactly when its back edge runs through iter_next of an
 * active iterator it does not re-create; any other loop (one inside the
 * body, or around new) still needs the normal proof: its exit condition
 * walked, or an earlier finished state covering it. */
#include "verifier/vstate.h"
#include "helpers/iter.h"

#include <stdlib.h>
#include <string.h>

enum iter_state {
	ITER_ACTIVE = 1,  /* next may give an element */
	ITER_DRAINED,     /* next gave NULL: it gives NULL for good */
};

/* What an iterator slot's `spilled` holds (its type stays NOT_INIT, so
 * nothing takes it for a register): */
#define it_type(s)  ((s)->spilled.mem_size)   /* enum bpfrt_iter_type */
#define it_id(s)    ((s)->spilled.id)         /* the reference new acquired */
#define it_state(s) ((s)->spilled.flags)      /* enum iter_state */
#define it_depth(s) ((s)->spilled.off)        /* ACTIVE branches taken */
#define it_part(s)  ((s)->spilled.range)      /* slot of the object, 0 lowest */

static bool slot_is_iter(const struct vslot *s)
{
	return s->type[0] == STACK_ITER;
}

static struct bpfrt_iter_kfunc kfunc_at(const struct venv *env, int32_t id)
{
	const struct bpfrt_helper *h = bpfrt_prog_helper(env->prog, (uint32_t)id);

	return bpfrt_iter_kfunc_of(h ? h->fn : NULL);
}

int viter_call_op(const struct venv *env, uint32_t pc)
{
	const struct bpf_insn *insn = &env->insns[pc];

	if (!insn_is_helper_call(insn) || insn->imm < BPFRT_KFUNC_ID_BASE)
		return BPFRT_ITER_OP_NONE;
	return kfunc_at(env, insn->imm).op;
}

/* ---- the object's slots ---- */

/* The slot holding byte `at` (< 0) of a frame. */
static struct vslot *slot_at(const struct vframe *fr, int64_t at)
{
	return &fr->slots[(uint32_t)((-at - 1) / 8)];
}

/* The frame and lowest slot of the iterator object r1 points to (nslots
 * of them from there up), or a rejection. */
static int iter_slots(struct venv *env, const char *fn, enum bpfrt_iter_type type,
		      struct vframe **frp, int64_t *lo)
{
	const struct vreg *r = reg_at(env, BPF_R1);
	uint32_t size = bpfrt_iter_size(type);
	struct vframe *fr;
	int64_t at;

	if (r->type != PTR_TO_STACK)
		return verr(env, "arg#0 expected pointer to an iterator on stack (%s: R1 is %s)", fn,
			    vreg_type_str(r));
	if (!tnum_is_const(r->var_off))
		return verr(env, "arg#0 expected pointer to an iterator on stack at a constant "
			    "offset (%s: variable-offset R1)", fn);
	fr = env->cur->frames[r->frameno];
	at = (int64_t)r->off + (int64_t)r->var_off.value;
	if (at % 8)
		return verr(env, "arg#0 misaligned iterator at stack off %lld (%s: struct "
			    "bpf_iter_%s is 8-aligned)", (long long)at, fn, bpfrt_iter_type_name(type));
	if (at < -(int64_t)fr->nslots * 8 || at + size > 0)
		return verr(env, "invalid stack access R1 off=%lld size=%u (%s: frame is %u bytes)",
			    (long long)at, size, fn, fr->nslots * 8);
	vnote_stack_use(env, r->frameno, (int32_t)at);
	*frp = fr;
	*lo = at;
	return 0;
}

/* The first slot of an initialised iterator of `type` at [lo, lo+size),
 * all of whose slots agree, or NULL. */
static struct vslot *iter_at(const struct vframe *fr, int64_t lo, enum bpfrt_iter_type type)
{
	uint32_t n = bpfrt_iter_size(type) / 8;
	struct vslot *first = slot_at(fr, lo);

	for (uint32_t i = 0; i < n; i++) {
		const struct vslot *s = slot_at(fr, lo + 8 * i);

		if (!slot_is_iter(s) || it_type(s) != type || it_part(s) != (int32_t)i ||
		    it_id(s) != it_id(first))
			return NULL;
	}
	/* a whole object (another one may start right above it) */
	return first;
}

/* Every slot of the object at lo gets the state and depth of its first. */
static void iter_sync(const struct vframe *fr, int64_t lo, enum bpfrt_iter_type type)
{
	const struct vslot *first = slot_at(fr, lo);

	for (uint32_t i = 1; i < bpfrt_iter_size(type) / 8; i++) {
		struct vslot *s = slot_at(fr, lo + 8 * i);

		it_state(s) = it_state(first);
		it_depth(s) = it_depth(first);
	}
}

int viter_check_stack_access(struct venv *env, const struct vframe *fr, int64_t lo, int64_t hi)
{
	for (int64_t a = lo & ~7ll; a < hi; a += 8)
		if (a < 0 && slot_is_iter(slot_at(fr, a)))
			return verr(env, "access to stack off %lld: it is part of an open-coded "
				    "iterator (struct bpf_iter_%s), which only its kfuncs may "
				    "touch", (long long)a,
				    bpfrt_iter_type_name(it_type(slot_at(fr, a))));
	return 0;
}

bool viter_slots_equal(const struct vslot *o, const struct vslot *c, bool exact)
{
	if (!slot_is_iter(o) || !slot_is_iter(c))
		return false; /* an iterator on one side only: a leak or a use apart */
	return it_type(o) == it_type(c) && it_id(o) == it_id(c) && it_part(o) == it_part(c) &&
	       it_state(o) == it_state(c) && (!exact || it_depth(o) == it_depth(c));
}

int viter_check_frame_exit(struct venv *env, const struct vframe *fr)
{
	for (uint32_t i = 0; i < fr->nslots; i++)
		if (slot_is_iter(&fr->slots[i]))
			return verr(env, "Unreleased reference id=%u: open-coded iterator "
				    "(struct bpf_iter_%s) at stack off %d not destroyed before "
				    "its frame returns", it_id(&fr->slots[i]),
				    bpfrt_iter_type_name(it_type(&fr->slots[i])),
				    -(int)(i + 1) * 8);
	return 0;
}

/* ---- the calls ---- */

static void clobber_args(struct venv *env)
{
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(reg_at(env, r));
}

/* An int argument: a scalar. */
static int check_scalar_arg(struct venv *env, int regno, const char *fn)
{
	const struct vreg *r = reg_at(env, regno);

	if (r->type == NOT_INIT)
		return verr(env, "R%d !read_ok", regno);
	if (r->type != SCALAR)
		return verr(env, "R%d type=%s expected=scalar (%s takes a number)", regno,
			    vreg_type_str(r), fn);
	return 0;
}

/* bpf_iter_bits_new's unsafe_ptr__ign: any address, read without faulting
 * (an unreadable one fails the call). A pointer the program holds is
 * memory the kfunc reads, nr_words * 8 bytes (none when nr_words is 0 or
 * over 511: the call fails first), so it must be initialised and hold no
 * pointer, as any helper's input. */
static int check_bits_source(struct venv *env, const char *fn)
{
	const struct vreg *src = reg_at(env, BPF_R2), *words = reg_at(env, BPF_R3);
	uint64_t max_words;
	int err;

	if ((err = check_scalar_arg(env, BPF_R3, fn)))
		return err;
	if (src->type == NOT_INIT)
		return verr(env, "R2 !read_ok");
	if (src->type == SCALAR || words->u32min > BPFRT_ITER_BITS_MAX_WORDS || !words->u32max)
		return 0;
	max_words = words->u32max < BPFRT_ITER_BITS_MAX_WORDS ? words->u32max
							       : BPFRT_ITER_BITS_MAX_WORDS;
	return vcheck_helper_mem(env, BPF_R2, max_words * 8, false,
				 vreg_is_const(words) && words->var_off.value == max_words);
}

static int mark_new(struct venv *env, struct vframe *fr, int64_t lo, enum bpfrt_iter_type type)
{
	uint32_t id;
	int err;

	if ((err = vacquire_ref(env, &id)))
		return err;
	for (uint32_t i = 0; i < bpfrt_iter_size(type) / 8; i++) {
		struct vslot *s = slot_at(fr, lo + 8 * i);

		memset(s, 0, sizeof(*s));
		memset(s->type, STACK_ITER, sizeof(s->type));
		it_type(s) = type;
		it_id(s) = id;
		it_part(s) = (int32_t)i;
		it_state(s) = ITER_ACTIVE;
	}
	return 0;
}

static bool same_callsites(const struct vstate *a, const struct vstate *b)
{
	if (a->curframe != b->curframe)
		return false;
	for (uint32_t f = 0; f <= a->curframe; f++)
		if (a->frames[f]->callsite != b->frames[f]->callsite)
			return false;
	return true;
}

/* How far up the path the ancestor searches look (a long walk has long
 * chains; missing an ancestor only forgoes a widening or a convergence). */
#define ANCESTOR_SEARCH 256

/* The checkpoint of the previous iteration: the nearest ancestor saved
 * at this call with the same call sites, past the one just saved for the
 * current state. */
const struct vstate *vprevious_iteration(const struct venv *env, uint32_t insn)
{
	const struct vstate *cur = env->cur, *st = cur->parent;
	int steps = ANCESTOR_SEARCH;

	if (st && st->insn == insn)
		st = st->parent;
	for (; st && steps--; st = st->parent)
		if (st->insn == insn && same_callsites(st, cur))
			return st;
	return NULL;
}

static bool scalar_exact(const struct vreg *a, const struct vreg *b)
{
	return a->var_off.value == b->var_off.value && a->var_off.mask == b->var_off.mask &&
	       a->smin == b->smin && a->smax == b->smax && a->umin == b->umin &&
	       a->umax == b->umax && a->s32min == b->s32min && a->s32max == b->s32max &&
	       a->u32min == b->u32min && a->u32max == b->u32max && a->id == b->id;
}

/* Forgets (makes unknown) the scalars of st that changed since prev and
 * that no branch after `insn` depends on. */
void vwiden_imprecise(struct venv *env, const struct vstate *prev, struct vstate *st,
		      uint32_t insn)
{
	for (uint32_t f = 0; f <= st->curframe; f++) {
		const struct vframe *o = prev->frames[f];
		struct vframe *c = st->frames[f];
		const struct insn_aux *at = f == st->curframe ? &env->aux[insn]
				: &env->aux[st->frames[f + 1]->callsite + 1];
		uint16_t keep = at->precise;
		uint64_t keep_slots = at->precise_slots;

		if (o->nslots != c->nslots)
			continue;
		/* prev, a checkpoint, is packed (vframe_reg, vframe_slot) */
		for (int r = 0; r < BPF_R10; r++)
			if (!(keep & REGMASK(r)) && vframe_reg(o, r)->type == SCALAR &&
			    c->regs[r].type == SCALAR && !scalar_exact(vframe_reg(o, r), &c->regs[r]))
				vreg_mark_unknown(&c->regs[r]);
		for (uint32_t k = 0; k < c->nslots && k < o->slots_held; k++) {
			struct vslot tmp;
			const struct vslot *os = vframe_slot(o, k, &tmp);
			struct vslot *cs = &c->slots[k];

			if ((k < 64 && (keep_slots & (1ull << k))) || !slot_has_spill(os) ||
			    !slot_has_spill(cs) || os->spill_off != cs->spill_off ||
			    os->spill_size != cs->spill_size || os->spilled.type != SCALAR ||
			    cs->spilled.type != SCALAR || scalar_exact(&os->spilled, &cs->spilled))
				continue;
			vreg_mark_unknown(&cs->spilled);
			if (cs->spill_size < 8)
				vreg_coerce(&cs->spilled, cs->spill_size);
		}
	}
}

static int iter_next(struct venv *env, struct vframe *fr, int64_t lo, enum bpfrt_iter_type type)
{
	struct vslot *it = slot_at(fr, lo);
	uint32_t frameno = reg_at(env, BPF_R1)->frameno;
	struct vstate *save = env->cur, *more;
	struct vreg *r0;

	clobber_args(env);
	if (it_state(it) == ITER_ACTIVE) {
		const struct vstate *prev = vprevious_iteration(env, env->insn);

		more = vpush_branch(env, env->insn + 1);
		if (!more)
			return -ENOMEM;
		env->cur = more;
		fr = more->frames[frameno];
		it = slot_at(fr, lo);
		it_depth(it)++;
		iter_sync(fr, lo, type);
		if (prev)
			vwiden_imprecise(env, prev, more, env->insn + 1);
		r0 = reg_at(env, BPF_R0);
		mark_ptr(r0, PTR_TO_MEM);
		r0->flags = MEM_RDONLY;
		r0->mem_size = 4; /* int */
		r0->ref_obj_id = it_id(it);
		env->cur = save;
		fr = save->frames[frameno];
		it = slot_at(fr, lo);
	}
	it_state(it) = ITER_DRAINED;
	iter_sync(fr, lo, type);
	r0 = reg_at(env, BPF_R0);
	memset(r0, 0, sizeof(*r0));
	r0->type = SCALAR;
	vreg_mark_const(r0, 0);
	return 0;
}

int viter_call(struct venv *env, int32_t id)
{
	const struct bpfrt_helper *h = bpfrt_prog_helper(env->prog, (uint32_t)id);
	struct bpfrt_iter_kfunc k = kfunc_at(env, id);
	const char *fn = h->name ? h->name : "iterator kfunc";
	const char *tname = bpfrt_iter_type_name(k.type);
	struct vframe *fr = NULL;
	struct vslot *it;
	int64_t lo = 0;
	int err;

	if ((err = iter_slots(env, fn, k.type, &fr, &lo)))
		return err;
	if (k.op == BPFRT_ITER_OP_NEW) {
		for (uint32_t i = 0; i < bpfrt_iter_size(k.type) / 8; i++)
			if (slot_is_iter(slot_at(fr, lo + 8 * i)))
				return verr(env, "expected uninitialized iter_%s as arg #0 (%s: stack "
					    "off %lld holds an iterator not destroyed)", tname, fn,
					    (long long)(lo + 8 * i));
		if (k.type == BPFRT_ITER_NUM) {
			if ((err = check_scalar_arg(env, BPF_R2, fn)) ||
			    (err = check_scalar_arg(env, BPF_R3, fn)))
				return err;
		} else if ((err = check_bits_source(env, fn))) {
			return err;
		}
		if ((err = mark_new(env, fr, lo, k.type)))
			return err;
		clobber_args(env);
		vreg_mark_unknown(reg_at(env, BPF_R0));
		return 0;
	}
	it = iter_at(fr, lo, k.type);
	if (!it)
		return verr(env, "expected an initialized iter_%s as arg #0 (%s: no live struct "
			    "bpf_iter_%s at stack off %lld)", tname, fn, tname, (long long)lo);
	if (k.op == BPFRT_ITER_OP_NEXT)
		return iter_next(env, fr, lo, k.type);
	/* destroy: its element pointers point at nothing from now on (still
	 * pointers, so a NULL test the compiler moved past the destroy
	 * works, as in Linux; no access through them is in bounds) */
	{
		uint32_t ref = it_id(it);

		if (!vrelease_ref_state(env->cur, ref))
			return verr(env, "iterator reference id=%u is not held", ref);
		for_each_reg(env->cur, r, {
			if (r->type == PTR_TO_MEM && (r->flags & MEM_RDONLY) &&
			    r->ref_obj_id == ref) {
				r->mem_size = 0;
				r->ref_obj_id = 0;
			}
		});
		for (uint32_t i = 0; i < bpfrt_iter_size(k.type) / 8; i++)
			memset(slot_at(fr, lo + 8 * i), 0, sizeof(struct vslot));
	}
	clobber_args(env);
	mark_not_init(reg_at(env, BPF_R0));
	return 0;
}

/* ---- convergence ---- */

bool vis_ancestor(const struct vstate *sl, const struct vstate *cur)
{
	int steps = 4 * ANCESTOR_SEARCH;

	for (const struct vstate *st = cur->parent; st && steps--; st = st->parent)
		if (st == sl)
			return true;
	return false;
}

bool viter_converged(struct venv *env, const struct vstate *sl, const struct vstate *cur,
		     uint32_t insn)
{
	const struct vframe *f = cur->frames[cur->curframe];
	const struct vreg *r1 = &f->regs[BPF_R1];
	const struct vframe *fr;
	const struct vslot *it;
	int64_t at;

	if (viter_call_op(env, insn) != BPFRT_ITER_OP_NEXT || r1->type != PTR_TO_STACK ||
	    !tnum_is_const(r1->var_off))
		return false;
	fr = cur->frames[r1->frameno];
	at = (int64_t)r1->off + (int64_t)r1->var_off.value;
	if (at >= 0 || at < -(int64_t)fr->nslots * 8 || at % 8)
		return false;
	it = slot_at(fr, at);
	if (!slot_is_iter(it) || it_state(it) != ITER_ACTIVE || it_part(it) != 0 ||
	    it_type(it) != kfunc_at(env, env->insns[insn].imm).type)
		return false;
	return vstates_equal(env, sl, cur, insn, false) && vis_ancestor(sl, cur);
}
