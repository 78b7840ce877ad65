/* Dynptrs: struct bpf_dynptr (16 bytes, two stack slots) as a stack
 * object with a life of its own, as Linux's verifier models it.
 *
 * States of the two slots: not a dynptr (any other slot contents), or an
 * initialised dynptr of a kind: LOCAL (dynptr_from_mem over a map value)
 * or RINGBUF (ringbuf_reserve_dynptr, which acquires a reference whether
 * or not the reservation succeeds: submit_dynptr or discard_dynptr must
 * release it on every path before exit). The helper that initialises one
 * takes any 16 aligned stack bytes that hold no referenced dynptr (a
 * local one there is destroyed first, as Linux). Then:
 *  - its bytes are never data: loads, helper reads and variable-offset
 *    reads of them are refused (they hold a host address);
 *  - a store into either slot destroys a local dynptr (both slots become
 *    uninitialised, its slices invalid) and is refused over a referenced
 *    one ("cannot overwrite referenced dynptr"); a helper writing memory
 *    over one is refused;
 *  - the helpers that read it (dynptr_read/write/data) need both slots
 *    of one dynptr, its first at the pointer (8-aligned, constant offset);
 *  - release helpers take a ringbuf dynptr on the stack: the reference
 *    goes, the slots become uninitialised, its slices invalid;
 *  - dynptr_data's slice is PTR_TO_MEM of the constant size, or NULL,
 *    carrying the dynptr's id (ref_obj_id, PTR_DYNPTR_SLICE): it dies
 *    with the dynptr, and is never taken for a ringbuf record.
 * A callback of user_ringbuf_drain gets CONST_PTR_TO_DYNPTR: a local
 * dynptr (read-only at run time) that is not on the stack, which only the
 * reading helpers take. The run-time layout is bpfrt/dynptr.h's; the
 * helpers check every offset and length against it (helpers/dynptr.c). */
#include "verifier/vstate.h"

#include <string.h>

#define DYNPTR_SLOTS 2

static const char *kind_name(uint8_t kind)
{
	return kind == VDYNPTR_LOCAL ? "local" : kind == VDYNPTR_RINGBUF ? "ringbuf" : "?";
}

static bool slot_is_dynptr(const struct vslot *s)
{
	return s->dynptr_kind != VDYNPTR_NONE;
}

/* Every register (and spilled register) that is a slice of dynptr id
 * becomes unusable: registers unreadable, spilled copies unreadable stack
 * bytes (never numbers: they were addresses). */
static void invalidate_slices(struct vstate *st, uint32_t id)
{
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct vframe *fr = st->frames[f];

		for (int i = 0; i < BPF_NREGS; i++)
			if ((fr->regs[i].flags & PTR_DYNPTR_SLICE) && fr->regs[i].ref_obj_id == id)
				mark_not_init(&fr->regs[i]);
		for (uint32_t k = 0; k < fr->nslots; k++) {
			struct vslot *sl = &fr->slots[k];

			if (!slot_has_spill(sl) || !(sl->spilled.flags & PTR_DYNPTR_SLICE) ||
			    sl->spilled.ref_obj_id != id)
				continue;
			for (int b = 0; b < 8; b++)
				if (sl->type[b] == STACK_SPILL)
					sl->type[b] = STACK_INVALID;
			sl->spill_size = 0;
			sl->spill_off = 0;
			mark_not_init(&sl->spilled);
		}
	}
}

/* Both slots of the dynptr whose first slot is `first` become plain
 * uninitialised stack. */
static void clear_dynptr(struct vframe *fr, uint32_t first)
{
	for (uint32_t k = first - 1; k <= first; k++) {
		memset(fr->slots[k].type, STACK_INVALID, 8);
		fr->slots[k].dynptr_kind = VDYNPTR_NONE;
		fr->slots[k].dynptr_first = 0;
		fr->slots[k].spill_off = 0;
		fr->slots[k].spill_size = 0;
		mark_not_init(&fr->slots[k].spilled);
	}
}

/* The first slot of the dynptr slot k belongs to. */
static uint32_t first_slot_of(const struct vframe *fr, uint32_t k)
{
	return fr->slots[k].dynptr_first ? k : k + 1;
}

/* Destroys the dynptr slot k is part of (none: nothing to do); refused
 * for a referenced one. */
static int destroy_at(struct venv *env, struct vframe *fr, uint32_t k)
{
	uint32_t first;

	if (k >= fr->nslots || !slot_is_dynptr(&fr->slots[k]))
		return 0;
	first = first_slot_of(fr, k);
	if (fr->slots[first].spilled.ref_obj_id)
		return verr(env, "cannot overwrite referenced dynptr (a ringbuf dynptr at fp%d "
			    "must be submitted or discarded first)", -(int)(first + 1) * 8);
	invalidate_slices(env->cur, fr->slots[first].spilled.id);
	clear_dynptr(fr, first);
	return 0;
}

static uint32_t slot_index(int64_t at)
{
	return (uint32_t)((-at - 1) / 8);
}

int vdynptr_stack_write(struct venv *env, struct vframe *fr, int64_t lo, int64_t hi)
{
	int err;

	for (int64_t a = lo & ~7ll; a < hi; a += 8)
		if ((err = destroy_at(env, fr, slot_index(a))))
			return err;
	return 0;
}

bool vdynptr_in_range(const struct vframe *fr, int64_t lo, int64_t hi)
{
	for (int64_t a = lo & ~7ll; a < hi; a += 8)
		if (slot_is_dynptr(&fr->slots[slot_index(a)]))
			return true;
	return false;
}

/* The frame and first slot of the dynptr regno points to on the stack. */
static int dynptr_location(struct venv *env, int regno, const struct vreg *r,
			   struct vframe **frp, uint32_t *first)
{
	struct vframe *fr = env->cur->frames[r->frameno];
	int64_t at;

	if (!tnum_is_const(r->var_off))
		return verr(env, "R%d dynptr has to be at a constant offset", regno);
	at = (int64_t)r->off + (int64_t)r->var_off.value;
	/* 8-aligned, with its second slot inside the frame */
	if (at % 8 || at > -16)
		return verr(env, "R%d cannot pass in dynptr at an offset=%lld", regno, (long long)at);
	if (at < -(int64_t)fr->nslots * 8)
		return verr(env, "R%d dynptr at fp%lld does not fit the %u-byte stack frame "
			    "(it takes 16 bytes)", regno, (long long)at, fr->nslots * 8);
	vnote_stack_use(env, r->frameno, (int32_t)at);
	*frp = fr;
	*first = slot_index(at);
	/* what the helper does depends on both slots (stack liveness: the
	 * pruning compares them); a dynptr made there replaces them whole */
	if (*first < 64)
		vstack_mark_read(env, r->frameno, 3ull << (*first - 1));
	return 0;
}

static bool is_uninit_type(enum bpfrt_arg_type t)
{
	return t == BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_LOCAL ||
	       t == BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF;
}

int vdynptr_check_arg(struct venv *env, int regno, enum bpfrt_arg_type t,
		      struct vdynptr_arg *da)
{
	const struct vreg *r = reg_at(env, regno);
	struct vframe *fr;
	uint32_t first;
	int err;

	if (r->type == CONST_PTR_TO_DYNPTR) {
		if (is_uninit_type(t))
			return verr(env, "R%d cannot pass pointer to const bpf_dynptr, the helper "
				    "mutates it", regno);
		if (t == BPFRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE)
			return verr(env, "R%d Expected a dynptr of type ringbuf as arg #%d (the "
				    "callback's dynptr is local and read-only)", regno, regno - 1);
		da->dynptr_id = r->id;
		da->kind = VDYNPTR_LOCAL;
		return 0;
	}
	if (r->type != PTR_TO_STACK)
		return verr(env, "R%d type=%s arg#%d expected pointer to stack or const struct "
			    "bpf_dynptr", regno, vreg_type_str(r), regno - 1);
	if ((err = dynptr_location(env, regno, r, &fr, &first)))
		return err;
	if (is_uninit_type(t)) {
		/* the slots are taken over: a local dynptr there is destroyed
		 * (its slices with it), a referenced one refuses */
		if ((err = destroy_at(env, fr, first)) || (err = destroy_at(env, fr, first - 1)))
			return err;
		da->uninit_regno = regno;
		da->uninit_type = t;
		return 0;
	}
	if (!slot_is_dynptr(&fr->slots[first]) || !fr->slots[first].dynptr_first ||
	    !slot_is_dynptr(&fr->slots[first - 1]) || fr->slots[first - 1].dynptr_first ||
	    fr->slots[first - 1].spilled.id != fr->slots[first].spilled.id)
		return verr(env, "R%d Expected an initialized dynptr as arg #%d (fp%d)", regno,
			    regno - 1, -(int)(first + 1) * 8);
	da->kind = fr->slots[first].dynptr_kind;
	da->dynptr_id = fr->slots[first].spilled.id;
	if (t == BPFRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE) {
		if (da->kind != VDYNPTR_RINGBUF)
			return verr(env, "R%d Expected a dynptr of type ringbuf as arg #%d (it is "
				    "%s)", regno, regno - 1, kind_name(da->kind));
		if (!vrelease_ref_state(env->cur, fr->slots[first].spilled.ref_obj_id))
			return verr(env, "R%d arg %d is an unacquired reference", regno, regno);
		/* the slices go with it; the reference was dropped above */
		invalidate_slices(env->cur, da->dynptr_id);
		vrelease_reference(env->cur, fr->slots[first].spilled.ref_obj_id);
		clear_dynptr(fr, first);
	}
	return 0;
}

int vdynptr_after_args(struct venv *env, int32_t id, struct vdynptr_arg *da)
{
	const struct vreg *r;
	struct vframe *fr;
	uint32_t first, ref = 0;
	uint8_t kind;
	int err;

	if (id == BPF_FUNC_dynptr_from_mem && reg_at(env, BPF_R1)->type != PTR_TO_MAP_VALUE)
		/* Linux's rule: other memory (the stack) could outlive it */
		return verr(env, "Unsupported reg type %s for bpf_dynptr_from_mem data",
			    vreg_type_str(reg_at(env, BPF_R1)));
	/* reads through the dynptr would read it (Linux lets them) */
	if (id == BPF_FUNC_dynptr_from_mem && map_prog_wronly(reg_at(env, BPF_R1)->map))
		return verr(env, "bpf_dynptr_from_mem over map '%s', which programs may not read "
			    "(BPF_F_WRONLY_PROG)", reg_at(env, BPF_R1)->map->name);
	if (da->uninit_regno < 0)
		return 0;
	r = reg_at(env, da->uninit_regno);
	if ((err = dynptr_location(env, da->uninit_regno, r, &fr, &first)))
		return err;
	kind = da->uninit_type == BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF ? VDYNPTR_RINGBUF
									 : VDYNPTR_LOCAL;
	if (kind == VDYNPTR_RINGBUF && (err = vacquire_ref(env, &ref)))
		return err;
	if (first < 64)
		vstack_mark_written(env, r->frameno, 3ull << (first - 1));
	for (uint32_t k = first - 1; k <= first; k++) {
		struct vslot *s = &fr->slots[k];

		memset(s->type, STACK_DYNPTR, 8);
		s->spill_off = 0;
		s->spill_size = 0;
		mark_not_init(&s->spilled);
		s->dynptr_kind = kind;
		s->dynptr_first = k == first;
		/* a ringbuf dynptr's id is its reference: its slices die with it */
		s->spilled.id = ref ? ref : env->id_gen + 1;
		s->spilled.ref_obj_id = ref;
	}
	if (!ref)
		env->id_gen++;
	return 0;
}

void vdynptr_mark_slice(struct venv *env, struct vreg *r0, const struct vdynptr_arg *da,
			uint32_t size)
{
	mark_ptr(r0, PTR_TO_MEM);
	r0->mem_size = size;
	r0->flags = PTR_MAYBE_NULL | PTR_DYNPTR_SLICE;
	r0->id = ++env->id_gen;
	r0->ref_obj_id = da->dynptr_id;
}

void vdynptr_mark_callback_arg(struct venv *env, struct vreg *r)
{
	mark_ptr(r, CONST_PTR_TO_DYNPTR);
	r->id = ++env->id_gen;
}
