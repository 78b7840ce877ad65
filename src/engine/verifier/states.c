/* Verifier states: allocation, copies and frees of states and frames,
 * acquired references, and the comparisons pruning and joining rest on
 * (is an explored state's walk valid for the current one, how far apart
 * two states are, their join). */
#include "verifier/vstate.h"

#include <stdlib.h>
#include <string.h>

/* ---- allocation, copies, references ---- */

struct vframe *vframe_new(uint32_t nslots)
{
	struct vframe *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->nslots = nslots;
	f->slots_held = nslots;
	f->written = ~0ull; /* nothing before the frame is read through it */
	if (nslots && !(f->slots = calloc(nslots, sizeof(*f->slots)))) {
		free(f);
		return NULL;
	}
	return f;
}

void vframe_free(struct vframe *f)
{
	if (f) {
		free(f->slots);
		free(f);
	}
}

static void *memdup(const void *src, size_t len)
{
	void *p = malloc(len);

	return p ? memcpy(p, src, len) : NULL;
}

static struct vframe *frame_copy(const struct vframe *src)
{
	struct vframe *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	*f = *src;
	f->slots = NULL;
	f->slots_held = src->nslots; /* a copy is walked: every slot */
	if (src->nslots && !(f->slots = calloc(src->nslots, sizeof(*f->slots)))) {
		free(f);
		return NULL;
	}
	if (src->slots_held)
		memcpy(f->slots, src->slots, src->slots_held * sizeof(*f->slots));
	return f;
}

void vstate_free(struct vstate *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i <= st->curframe; i++)
		vframe_free(st->frames[i]);
	free(st->refs);
	free(st);
}

struct vstate *vstate_copy(const struct vstate *src)
{
	struct vstate *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->curframe = src->curframe;
	st->parent = src->parent;
	st->joined = src->joined;
	st->join_insn = src->join_insn;
	st->insn = src->insn;
	st->lock_map = src->lock_map;
	st->lock_id = src->lock_id;
	st->may_goto_depth = src->may_goto_depth;
	for (uint32_t i = 0; i <= src->curframe; i++) {
		st->frames[i] = frame_copy(src->frames[i]);
		if (!st->frames[i]) {
			st->curframe = i ? i - 1 : 0;
			if (!i)
				st->frames[0] = NULL;
			vstate_free(st);
			return NULL;
		}
	}
	if (src->nrefs) {
		st->refs = memdup(src->refs, src->nrefs * sizeof(*st->refs));
		if (!st->refs) {
			vstate_free(st);
			return NULL;
		}
		st->nrefs = src->nrefs;
	}
	return st;
}

/* A packed frame's registers and spills, and how many it has. */
static uint32_t packed_vreg_cnt(const struct vframe *f)
{
	uint32_t n = (uint32_t)__builtin_popcount(f->regs_held);

	for (uint32_t k = 0; k < f->slots_held; k++)
		if (f->packed_slots[k].spilled != PACKED_NO_SPILL)
			n++;
	return n;
}

static size_t frame_size(const struct vframe *f)
{
	if (f->packed)
		return offsetof(struct vframe, regs) + packed_vreg_cnt(f) * sizeof(struct vreg) +
		       f->slots_held * sizeof(struct vslot_packed);
	return sizeof(*f) + f->slots_held * sizeof(struct vslot);
}

size_t vstate_size(const struct vstate *st)
{
	size_t n = sizeof(*st) + st->nrefs * sizeof(*st->refs);

	for (uint32_t i = 0; i <= st->curframe; i++)
		n += frame_size(st->frames[i]);
	return n;
}

void vstate_kept(struct venv *env, const struct vstate *st)
{
	env->kept_states++;
	env->kept_bytes += vstate_size(st);
	if (env->kept_states > env->peak_states)
		env->peak_states = env->kept_states;
	if (env->kept_bytes > env->peak_bytes)
		env->peak_bytes = env->kept_bytes;
}

void vstate_unkept(struct venv *env, const struct vstate *st)
{
	env->kept_states--;
	env->kept_bytes -= vstate_size(st);
}

int vacquire_ref(struct venv *env, uint32_t *id)
{
	struct vstate *st = env->cur;
	struct vref *n = realloc(st->refs, (st->nrefs + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	st->refs = n;
	*id = ++env->id_gen;
	st->refs[st->nrefs++] = (struct vref){ *id, env->insn };
	return 0;
}

bool vrelease_ref_state(struct vstate *st, uint32_t id)
{
	for (uint32_t i = 0; i < st->nrefs; i++)
		if (st->refs[i].id == id) {
			st->refs[i] = st->refs[--st->nrefs];
			return true;
		}
	return false;
}

/* The record is gone: every register that pointed into it is invalid. */
void vrelease_reference(struct vstate *st, uint32_t id)
{
	vrelease_ref_state(st, id);
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct vframe *fr = st->frames[f];

		for (int i = 0; i < BPF_NREGS; i++)
			if (fr->regs[i].ref_obj_id == id)
				mark_not_init(&fr->regs[i]);
		for (uint32_t k = 0; k < fr->nslots; k++)
			if (slot_has_spill(&fr->slots[k]) && fr->slots[k].spilled.ref_obj_id == id)
				vreg_mark_unknown(&fr->slots[k].spilled);
	}
}

/* ---- stack liveness ---- */

/* A read walks up the checkpoints of the current path, marking each one
 * the slots not written whole between it and the read. A checkpoint that
 * already has the mark has passed it on already. Frame frameno of a
 * checkpoint is the current path's frame frameno: a frame made since had
 * every slot marked written when it was made (vframe_new), which stops
 * the walk before any checkpoint older than it. */
void vstack_mark_read(struct venv *env, uint32_t frameno, uint64_t mask)
{
	struct vstate *st = env->cur;

	if (!st || frameno > st->curframe)
		return;
	mask &= ~st->frames[frameno]->written;
	for (st = st->parent; st && mask; st = st->parent) {
		struct vframe *f;

		if (frameno > st->curframe)
			break;
		f = st->frames[frameno];
		mask &= ~f->live_read;
		f->live_read |= mask;
		mask &= ~f->written;
	}
}

void vstack_mark_written(struct venv *env, uint32_t frameno, uint64_t mask)
{
	if (env->cur && frameno <= env->cur->curframe)
		env->cur->frames[frameno]->written |= mask;
}

void vstack_mark_all_read(struct venv *env)
{
	for (uint32_t f = 0; env->cur && f <= env->cur->curframe; f++)
		vstack_mark_read(env, f, ~0ull);
}

/* slot k holds bytes [-(k+1)*8, -k*8); slots from 64 on are not tracked
 * (always compared) */
uint64_t vstack_slots_touched(int64_t lo, int64_t hi)
{
	uint64_t m = 0;

	if (lo >= hi || hi > 0)
		return 0;
	/* from the slot of the last byte (hi - 1) to the slot of the first */
	for (int64_t k = -hi / 8; k <= (-lo - 1) / 8 && k < 64; k++)
		m |= 1ull << k;
	return m;
}

uint64_t vstack_slots_whole(int64_t lo, int64_t hi)
{
	uint64_t m = 0;

	for (int64_t k = 0; k < 64; k++)
		if (-(k + 1) * 8 >= lo && -k * 8 <= hi)
			m |= 1ull << k;
	return m;
}

/* ---- equivalence ---- */

#define IDMAP_SIZE 64

struct idmap {
	uint32_t old[IDMAP_SIZE], cur[IDMAP_SIZE];
	uint32_t cnt;
	uint32_t tmp;
};

/* ids must correspond one to one between the two states */
static bool check_ids(struct idmap *m, uint32_t old, uint32_t cur)
{
	if (!old && !cur)
		return true;
	if (!old || !cur)
		return false;
	for (uint32_t i = 0; i < m->cnt; i++) {
		if (m->old[i] == old)
			return m->cur[i] == cur;
		if (m->cur[i] == cur)
			return false;
	}
	if (m->cnt == IDMAP_SIZE)
		return false;
	m->old[m->cnt] = old;
	m->cur[m->cnt++] = cur;
	return true;
}

static bool range_within(const struct vreg *old, const struct vreg *cur)
{
	return old->smin <= cur->smin && old->smax >= cur->smax &&
	       old->umin <= cur->umin && old->umax >= cur->umax &&
	       old->s32min <= cur->s32min && old->s32max >= cur->s32max &&
	       old->u32min <= cur->u32min && old->u32max >= cur->u32max &&
	       tnum_in(old->var_off, cur->var_off);
}

static bool vreg_exact(const struct vreg *a, const struct vreg *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == NOT_INIT)
		return true;
	return a->flags == b->flags && a->frameno == b->frameno && a->off == b->off &&
	       a->var_off.value == b->var_off.value && a->var_off.mask == b->var_off.mask &&
	       a->smin == b->smin && a->smax == b->smax && a->umin == b->umin &&
	       a->umax == b->umax && a->s32min == b->s32min && a->s32max == b->s32max &&
	       a->u32min == b->u32min && a->u32max == b->u32max &&
	       a->ref_obj_id == b->ref_obj_id && a->mem_size == b->mem_size &&
	       a->range == b->range && a->map == b->map;
}

/* Is every concrete value cur may hold one that old's (verified) walk
 * covered? exact: the same abstract value. imprecise: a scalar whose
 * value decides nothing from here on (facts.c's decides mask), which any
 * scalar stands for (Linux's rule for scalars not marked precise). */
static bool regsafe(const struct vreg *old, const struct vreg *cur, struct idmap *m, bool exact,
		    bool imprecise)
{
	if (exact)
		return vreg_exact(old, cur);
	if (old->type == NOT_INIT)
		return true;
	if (cur->type != old->type)
		return false;
	if (old->type == SCALAR && imprecise)
		return true;
	if (old->type == SCALAR) {
		if (!range_within(old, cur))
			return false;
		/* a link between old copies must exist between cur's too */
		if (old->id)
			return check_ids(m, old->id, cur->id ? cur->id : 0x80000000u + ++m->tmp);
		return true;
	}
	if (old->flags != cur->flags || old->off != cur->off || old->map != cur->map ||
	    old->mem_size != cur->mem_size || old->frameno != cur->frameno)
		return false;
	if (!range_within(old, cur))
		return false;
	if (is_pkt_pointer(old) && old->range > cur->range)
		return false;
	if (!check_ids(m, old->ref_obj_id, cur->ref_obj_id))
		return false;
	if ((old->flags & PTR_MAYBE_NULL) || is_pkt_pointer(old))
		return check_ids(m, old->id, cur->id);
	/* a value with a lock: which value it is decides which lock an
	 * unlock through it gives back (spin_lock.c) */
	if (old->type == PTR_TO_MAP_VALUE && old->map && old->map->spin_lock_off >= 0)
		return check_ids(m, old->id, cur->id);
	return true;
}

/* An 8-byte spill of a scalar that may be anything reads as what any
 * initialised data reads as (Linux treats it as STACK_MISC the same way):
 * a current slot of data or zeroes there is covered (the loop above
 * checked every byte is initialised). Its id still matters: old's walk
 * may have narrowed the spill through a linked copy, which cur's data is
 * not (the caller maps the id to a fresh one). */
static bool spill_is_any_data(const struct vslot *o)
{
	struct vreg any;

	if (o->spilled.type != SCALAR || o->spill_off != 0 || o->spill_size != 8)
		return false;
	memset(&any, 0, sizeof(any));
	any.type = SCALAR;
	vreg_mark_unknown(&any);
	return range_within(&o->spilled, &any);
}

static bool slot_is_data(const struct vslot *c)
{
	for (int k = 0; k < 8; k++)
		if (c->type[k] != STACK_MISC && c->type[k] != STACK_ZERO)
			return false;
	return true;
}

/* imprecise: a slot whose value decides nothing from here on (facts.c's
 * decides_slots): an 8-byte scalar spill there covers any initialised
 * bytes that hold no pointer, as Linux treats a spill not marked
 * precise. */
static bool slot_safe(const struct vslot *o, const struct vslot *c, struct idmap *m, bool exact,
		      bool imprecise)
{
	bool o_spill = o->spill_size && o->type[o->spill_off] == STACK_SPILL;
	bool c_spill = c->spill_size && c->type[c->spill_off] == STACK_SPILL;

	if (o->type[0] == STACK_ITER || c->type[0] == STACK_ITER)
		return viter_slots_equal(o, c, exact); /* iter.c: same object, never renamed */
	/* a dynptr covers only the same dynptr (kind, half, reference) */
	if (o->dynptr_kind || c->dynptr_kind)
		return o->dynptr_kind == c->dynptr_kind && o->dynptr_first == c->dynptr_first &&
		       check_ids(m, o->spilled.id, c->spilled.id) &&
		       check_ids(m, o->spilled.ref_obj_id, c->spilled.ref_obj_id);
	if (exact)
		return !memcmp(o->type, c->type, 8) && o->spill_off == c->spill_off &&
		       (!o_spill || regsafe(&o->spilled, &c->spilled, m, true, false));
	if (imprecise && o_spill && o->spilled.type == SCALAR && o->spill_off == 0 &&
	    o->spill_size == 8) {
		for (int k = 0; k < 8; k++)
			if (c->type[k] == STACK_INVALID || c->type[k] > STACK_SPILL)
				return false;
		return !c_spill || c->spilled.type == SCALAR;
	}
	for (int k = 0; k < 8; k++) {
		uint8_t ot = o->type[k], ct = c->type[k];

		if (ot == STACK_INVALID)
			continue;
		if (ct == STACK_INVALID)
			return false;
		if (ot == STACK_MISC)
			continue; /* any initialised byte reads as data */
		if (ot == STACK_ZERO && ct != STACK_ZERO)
			return false;
	}
	if (o_spill) {
		if (!c_spill && spill_is_any_data(o) && slot_is_data(c))
			return o->spilled.id ? check_ids(m, o->spilled.id, 0x80000000u + ++m->tmp)
					     : true;
		if (!c_spill || memcmp(o->type, c->type, 8) || o->spill_off != c->spill_off ||
		    o->spill_size != c->spill_size)
			return false;
		return regsafe(&o->spilled, &c->spilled, m, false, false);
	}
	return true;
}

/* Bytes of the kinds this file knows (a kind added for some object kept
 * on the stack is compared whether read or not). */
static bool types_plain(const uint8_t *type)
{
	for (int k = 0; k < 8; k++)
		if (type[k] > STACK_SPILL)
			return false;
	return true;
}

static bool slot_plain(const struct vslot *s)
{
	return types_plain(s->type);
}

static bool slot_empty(const struct vslot *s)
{
	static const struct vslot invalid;

	return !memcmp(s->type, invalid.type, sizeof(s->type)) && !s->spill_size;
}

/* The registers a comparison at insn reads in frame f of st: the live
 * ones (the caller resumes after the call with r0 and r6-r9, or calls
 * the callback again with its r1-r5: the helper's arguments) and r10. */
static uint16_t frame_live(const struct venv *env, const struct vstate *st, uint32_t f,
			   uint32_t insn)
{
	uint16_t live;

	if (f == st->curframe) {
		live = env->aux[insn].live;
	} else {
		live = (uint16_t)(env->aux[st->frames[f + 1]->callsite + 1].live & ~ARG_REGS);
		if (st->frames[f + 1]->in_callback)
			live |= ARG_REGS;
	}
	return live | REGMASK(BPF_R10);
}

/* Does a comparison read slot k's spilled register (explored: only if
 * the walk read the slot, or it holds an object)? */
static bool slot_spill_kept(const struct vframe *fr, const struct vslot *sl, uint32_t k,
			    bool explored)
{
	if (!types_plain(sl->type))
		return true;
	if (!slot_has_spill(sl))
		return false;
	return !explored || k >= 64 || (fr->live_read & (1ull << k));
}

/* A packed copy of fr (packed or not) with the registers of regs;
 * explored: as vstate_pack says. */
static struct vframe *frame_pack(const struct vframe *fr, uint16_t regs, bool explored)
{
	uint32_t held = fr->slots_held, nv = 0;
	struct vslot tmp;
	struct vframe *p;
	struct vreg *v;
	size_t size;

	while (explored && held) {
		const struct vslot *sl = vframe_slot(fr, held - 1, &tmp);

		if (!slot_empty(sl) && (held > 64 || (fr->live_read & (1ull << (held - 1))) ||
					!slot_plain(sl)))
			break;
		held--;
	}
	for (int r = 0; r < BPF_NREGS; r++)
		if ((regs & REGMASK(r)) && vframe_reg(fr, r)->type == NOT_INIT)
			regs &= (uint16_t)~REGMASK(r);
	nv = (uint32_t)__builtin_popcount(regs);
	for (uint32_t k = 0; k < held; k++)
		nv += slot_spill_kept(fr, vframe_slot(fr, k, &tmp), k, explored);
	size = offsetof(struct vframe, regs) + nv * sizeof(struct vreg) +
	       held * sizeof(struct vslot_packed);
	if (!(p = malloc(size)))
		return NULL;
	memcpy(p, fr, offsetof(struct vframe, regs));
	p->packed = true;
	p->regs_held = regs;
	p->slots = NULL;
	p->slots_held = held;
	p->packed_vregs = v = (struct vreg *)((char *)p + offsetof(struct vframe, regs));
	p->packed_slots = (struct vslot_packed *)(v + nv);
	for (int r = 0; r < BPF_NREGS; r++)
		if (regs & REGMASK(r))
			*v++ = *vframe_reg(fr, r);
	for (uint32_t k = 0; k < held; k++) {
		const struct vslot *sl = vframe_slot(fr, k, &tmp);
		struct vslot_packed *ps = &p->packed_slots[k];

		memcpy(ps->type, sl->type, sizeof(ps->type));
		ps->spill_off = sl->spill_off;
		ps->spill_size = sl->spill_size;
		ps->dynptr_kind = sl->dynptr_kind;
		ps->dynptr_first = sl->dynptr_first;
		ps->spilled = PACKED_NO_SPILL;
		if (slot_spill_kept(fr, sl, k, explored)) {
			ps->spilled = (uint8_t)(v - p->packed_vregs);
			*v++ = sl->spilled;
		}
	}
	return p;
}

struct vstate *vstate_save(struct venv *env, const struct vstate *cur, uint32_t insn)
{
	struct vstate *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->curframe = cur->curframe;
	st->parent = cur->parent;
	st->joined = cur->joined;
	st->join_insn = cur->join_insn;
	st->insn = insn;
	st->lock_map = cur->lock_map;
	st->lock_id = cur->lock_id;
	st->may_goto_depth = cur->may_goto_depth;
	for (uint32_t f = 0; f <= cur->curframe; f++) {
		st->frames[f] = frame_pack(cur->frames[f], frame_live(env, cur, f, insn), false);
		if (!st->frames[f]) {
			st->curframe = f ? f - 1 : 0;
			vstate_free(st);
			return NULL;
		}
	}
	if (cur->nrefs) {
		st->refs = memdup(cur->refs, cur->nrefs * sizeof(*st->refs));
		if (!st->refs) {
			vstate_free(st);
			return NULL;
		}
		st->nrefs = cur->nrefs;
	}
	return st;
}

void vstate_pack(struct venv *env, struct vstate *st)
{
	size_t before = vstate_size(st);

	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct vframe *fr = st->frames[f];
		struct vframe *p = frame_pack(fr, fr->packed ? fr->regs_held : 0xffff, true);

		if (p) { /* else the frame stays as it is */
			st->frames[f] = p;
			vframe_free(fr);
		}
	}
	env->kept_bytes -= before - vstate_size(st);
}

static bool frame_safe(const struct vframe *o, const struct vframe *c, uint16_t live,
		       uint16_t decides, uint64_t live_slots, uint64_t precise_slots,
		       struct idmap *m, bool exact)
{
	struct vslot tmp;

	if (o->callsite != c->callsite || o->subprog != c->subprog || o->nslots != c->nslots ||
	    o->in_callback != c->in_callback)
		return false;
	if (exact && o->cb_iter != c->cb_iter)
		return false; /* another iteration of a callback: no loop (cb_iter) */
	for (int r = 0; r < BPF_NREGS; r++)
		if ((live & REGMASK(r)) &&
		    !regsafe(vframe_reg(o, r), &c->regs[r], m, exact, !(decides & REGMASK(r))))
			return false;
	for (uint32_t s = 0; s < o->nslots; s++) {
		if (s >= o->slots_held) {
			/* dropped (vstate_pack): never read by old's walk */
			if (!slot_plain(&c->slots[s]))
				return false;
			continue;
		}
		if (s < 64 && !(live_slots & (1ull << s)) && types_plain(vframe_slot_types(o, s)) &&
		    slot_plain(&c->slots[s]))
			continue; /* never read again before written whole */
		if (!slot_safe(vframe_slot(o, s, &tmp), &c->slots[s], m, exact,
			       s < 64 && !(precise_slots & (1ull << s))))
			return false;
	}
	return true;
}

/* exact, or covers; prune: old is fully explored and its walk goes on
 * from insn, so imprecise scalars match any (the decides masks) and
 * slots its walk never read are not compared (its read marks). */
static bool states_compare(struct venv *env, const struct vstate *old, const struct vstate *cur,
			   uint32_t insn, bool exact, bool prune)
{
	struct idmap m;

	if (old->curframe != cur->curframe || old->nrefs != cur->nrefs)
		return false;
	m.cnt = 0;
	m.tmp = 0;
	for (uint32_t f = 0; f <= old->curframe; f++) {
		uint16_t live = frame_live(env, old, f, insn), decides;
		/* a caller's slots: all precise (its callee may read them
		 * through a pointer) */
		uint64_t precise_slots = ~0ull;

		if (f == old->curframe) {
			decides = env->aux[insn].decides;
			if (prune)
				precise_slots = env->aux[insn].decides_slots;
		} else {
			decides = env->aux[old->frames[f + 1]->callsite + 1].decides;
			/* a callback's r1-r5: the helper's arguments (count,
			 * callback, context) when it is called again */
			if (old->frames[f + 1]->in_callback)
				decides |= ARG_REGS;
		}
		if (!frame_safe(old->frames[f], cur->frames[f], live, prune ? decides : 0xffff,
				prune ? old->frames[f]->live_read : ~0ull, precise_slots, &m, exact))
			return false;
	}
	for (uint32_t i = 0; i < old->nrefs; i++)
		if (!check_ids(&m, old->refs[i].id, cur->refs[i].id))
			return false;
	/* the same lock held, or none (spin_lock.c) */
	if (old->lock_map != cur->lock_map || !check_ids(&m, old->lock_id, cur->lock_id))
		return false;
	return true;
}

bool vstates_equal(struct venv *env, const struct vstate *old, const struct vstate *cur,
		   uint32_t insn, bool exact)
{
	return states_compare(env, old, cur, insn, exact, false);
}

bool vstate_covers(struct venv *env, const struct vstate *old, const struct vstate *cur,
		   uint32_t insn)
{
	return states_compare(env, old, cur, insn, false, true);
}

/* ---- joins ---- */

/* Joining: when many states reach one insn, a new state that no explored
 * one covers is widened to the hull of itself and its closest explored
 * state (scalars only). Walking a wider state is always sound; it trades
 * precision for not walking every combination of values that do not
 * matter (Linux gets the same effect from precision tracking). With
 * `widen`, bounds that grew jump to their extremes so repeated joins
 * converge (callback iterations). */
static void join_scalar(const struct vreg *o, struct vreg *c, bool widen)
{
	if (o->type != SCALAR || c->type != SCALAR || range_within(o, c))
		return;
	c->var_off = tnum_union(o->var_off, c->var_off);
	if (widen) {
		if (c->smin < o->smin) c->smin = INT64_MIN;
		if (c->smax > o->smax) c->smax = INT64_MAX;
		if (c->umin < o->umin) c->umin = 0;
		if (c->umax > o->umax) c->umax = UINT64_MAX;
		if (c->s32min < o->s32min) c->s32min = INT32_MIN;
		if (c->s32max > o->s32max) c->s32max = INT32_MAX;
		if (c->u32min < o->u32min) c->u32min = 0;
		if (c->u32max > o->u32max) c->u32max = UINT32_MAX;
		if (!vreg_is_const(c) && c->umax == UINT64_MAX)
			c->var_off = TNUM_UNKNOWN;
	}
	c->smin = c->smin < o->smin ? c->smin : o->smin;
	c->smax = c->smax > o->smax ? c->smax : o->smax;
	c->umin = c->umin < o->umin ? c->umin : o->umin;
	c->umax = c->umax > o->umax ? c->umax : o->umax;
	c->s32min = c->s32min < o->s32min ? c->s32min : o->s32min;
	c->s32max = c->s32max > o->s32max ? c->s32max : o->s32max;
	c->u32min = c->u32min < o->u32min ? c->u32min : o->u32min;
	c->u32max = c->u32max > o->u32max ? c->u32max : o->u32max;
	vreg_bounds_sync(c);
}

/* How many scalars of cur old does not cover (-1: not joinable). */
int vjoin_distance(struct venv *env, const struct vstate *old, const struct vstate *cur,
			 uint32_t insn)
{
	int d = 0;

	if (old->curframe != cur->curframe || old->nrefs != cur->nrefs ||
	    old->lock_map != cur->lock_map || old->lock_id != cur->lock_id)
		return -1;
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct vframe *o = old->frames[f], *c = cur->frames[f];

		if (o->callsite != c->callsite || o->subprog != c->subprog)
			return -1;
		for (int r = 0; r < BPF_NREGS; r++) {
			const struct vreg *or = vframe_reg(o, r), *cr = &c->regs[r];

			if (or->type == SCALAR && cr->type == SCALAR)
				d += !range_within(or, cr);
			else if (or->type != cr->type)
				d += 4;
		}
		for (uint32_t k = 0; k < o->slots_held; k++) {
			struct vslot tmp;
			const struct vslot *os = vframe_slot(o, k, &tmp);

			if (slot_has_spill(os) && slot_has_spill(&c->slots[k]) &&
			    os->spilled.type == SCALAR && c->slots[k].spilled.type == SCALAR)
				d += !range_within(&os->spilled, &c->slots[k].spilled);
		}
	}
	(void)env;
	(void)insn;
	return d;
}

void vjoin_states(struct venv *env, const struct vstate *old, struct vstate *cur,
			uint32_t insn, bool widen)
{
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct vframe *o = old->frames[f];
		struct vframe *c = cur->frames[f];
		uint16_t keep = 0;
		uint64_t keep_slots = 0;

		/* values that may decide anything from here on are not
		 * widened (a widened pointer offset or checked return value
		 * would refuse what the program does; callback iterations:
		 * everything, the helper bounds them) */
		if (insn == UINT32_MAX) {
			keep = 0;
		} else if (f == old->curframe) {
			keep = env->aux[insn].decides;
			keep_slots = env->aux[insn].decides_slots;
		} else {
			const struct insn_aux *ret = &env->aux[old->frames[f + 1]->callsite + 1];

			keep = ret->decides;
			keep_slots = ~0ull; /* a callee may read them (states_compare) */
		}
		for (int r = 0; r < BPF_NREGS; r++)
			if (!(keep & REGMASK(r)))
				join_scalar(vframe_reg(o, r), &c->regs[r], widen);
		for (uint32_t k = 0; k < o->slots_held; k++) {
			struct vslot tmp;
			const struct vslot *os = vframe_slot(o, k, &tmp);
			struct vslot *cs = &c->slots[k];

			if (k < 64 && (keep_slots & (1ull << k)))
				continue;
			if (slot_has_spill(os) && slot_has_spill(cs) &&
			    os->spill_off == cs->spill_off && os->spill_size == cs->spill_size)
				join_scalar(&os->spilled, &cs->spilled, widen);
		}
	}
}
