/* Memory accesses: loads, stores and atomics through every pointer kind
 * (stack slots with their spills, context, map values and keys, ringbuf
 * memory, packet), the memory arguments of helpers, and the one rule
 * against pointer leaks. */
#include "verifier/vstate.h"

#include <stdio.h>
#include <string.h>

/* ---- pointer leaks ---- */

/* Pointer leaks: the one rule, checked wherever a value leaves the typed
 * world. A pointer's value (or any part of it) must never become data
 * that the program or anyone else can read as a number: stored into a map
 * value, ringbuf record, context or packet; passed to a helper as a plain
 * value or inside memory the helper reads; returned; exchanged by an
 * atomic; compared (a branch reveals its bits); subtracted from another
 * pointer; copied in part (mov32, movsx, a partial fill); or left in stack
 * bytes that become plain data (a partial overwrite of its spill, a
 * variable-offset write over it, the end of the frame it points into).
 * Maps are shared with other processes, so any of these would hand out
 * the host's address layout. This is Linux's rule without allow_ptr_leaks
 * (unprivileged); programs loaded with BPFRT_F_ALLOW_PTR_LEAKS are trusted
 * as privileged Linux trusts its programs and may leak. Returns 0 if val
 * is no pointer or leaks are allowed, else rejects with the message fmt
 * (which names the destination). */

int vcheck_ptr_leak(struct venv *env, const struct vreg *val, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	/* a typed argument is the number the host passed (btf_access.c) */
	if (!is_ptr(val) || val->type == PTR_TO_BTF_ID || ptr_leaks_allowed(env))
		return 0;
	va_start(ap, fmt);
	vsnprintf(env->msg, sizeof(env->msg), fmt, ap);
	va_end(ap);
	n = strlen(env->msg);
	snprintf(env->msg + n, sizeof(env->msg) - n,
		 " (the value is a %s pointer; only programs loaded with "
		 "BPFRT_F_ALLOW_PTR_LEAKS may leak pointers)", vreg_type_str(val));
	return -EACCES;
}

/* ---- stack, context, map and packet accesses ---- */

int vcheck_reg_init(struct venv *env, int regno)
{
	if (reg_at(env, regno)->type == NOT_INIT)
		return verr(env, "R%d !read_ok", regno);
	return 0;
}

/* Value read from memory into dst: an unknown number of `size` bytes. */
static void mark_loaded(struct vreg *dst, unsigned size, bool sext)
{
	memset(dst, 0, sizeof(*dst));
	dst->type = SCALAR;
	vreg_mark_load(dst, size, sext);
}

void vnote_stack_use(struct venv *env, uint32_t frameno, int32_t lowest)
{
	uint32_t sp = env->cur->frames[frameno]->subprog;
	uint32_t depth = (uint32_t)-lowest;

	if (lowest < 0 && depth > env->max_stack[sp])
		env->max_stack[sp] = depth;
}

/* [off, off+size) of the frame the pointer reg points into; variable
 * offsets are covered by [min, max]. Returns the frame or NULL. */
static struct vframe *stack_range(struct venv *env, int regno, const struct vreg *reg,
				  int32_t off, uint32_t size, int64_t *lo, int64_t *hi, int *err)
{
	struct vframe *fr = env->cur->frames[reg->frameno];
	int64_t base = (int64_t)reg->off + off;

	*err = 0;
	if (reg->smin < -MAX_VAR_OFF || reg->smax > MAX_VAR_OFF) {
		*err = verr(env, "R%d unbounded variable offset stack access", regno);
		return NULL;
	}
	*lo = base + reg->smin;
	*hi = base + reg->smax + size;
	if (*lo < -(int64_t)fr->nslots * 8 || *hi > 0 || size == 0) {
		if (tnum_is_const(reg->var_off))
			*err = verr(env, "invalid stack access R%d off=%lld size=%u (frame is %u bytes)",
				    regno, (long long)(base + reg->smin), size, fr->nslots * 8);
		else
			*err = verr(env, "invalid variable-offset stack access R%d "
				    "[%lld, %lld) (frame is %u bytes)", regno, (long long)*lo,
				    (long long)*hi, fr->nslots * 8);
		return NULL;
	}
	if ((*err = viter_check_stack_access(env, fr, *lo, *hi)))
		return NULL;
	vnote_stack_use(env, reg->frameno, (int32_t)*lo);
	return fr;
}

/* Stack liveness (states.c): an access of [lo, hi) reads the slots it
 * touches, except that a write at a constant offset replaces the slots
 * it covers whole (what was there before no longer matters; a partly
 * written slot keeps the rest of its bytes, so it is read). */
static void note_stack_access(struct venv *env, uint32_t frameno, int64_t lo, int64_t hi,
			      bool fixed_write)
{
	uint64_t whole = fixed_write ? vstack_slots_whole(lo, hi) : 0;

	vstack_mark_read(env, frameno, vstack_slots_touched(lo, hi) & ~whole);
	vstack_mark_written(env, frameno, whole);
}

static uint8_t *slot_byte(struct vframe *fr, int64_t at)
{
	int64_t below = -at - 1;          /* 0 for the byte at -1 */
	uint32_t slot = (uint32_t)(below / 8);

	return &fr->slots[slot].type[7 - below % 8];
}

static struct vslot *slot_of(struct vframe *fr, int64_t at)
{
	return &fr->slots[(uint32_t)((-at - 1) / 8)];
}

/* The spilled pointer byte `at` of the frame is part of, or NULL. */
static const struct vreg *spilled_ptr_at(struct vframe *fr, int64_t at)
{
	struct vslot *s = slot_of(fr, at);

	if (!slot_has_spill(s) || !is_ptr(&s->spilled) || *slot_byte(fr, at) != STACK_SPILL)
		return NULL;
	return &s->spilled;
}

static void destroy_spill(struct vslot *s)
{
	for (int k = 0; k < 8; k++)
		if (s->type[k] == STACK_SPILL)
			s->type[k] = STACK_MISC;
	s->spill_size = 0;
	s->spill_off = 0;
}

/* Store of `size` bytes at [lo, lo+size) (constant offset) of value
 * (NULL: unknown data, e.g. a BPF_ST immediate made a scalar). */
static int stack_write_fixed(struct venv *env, struct vframe *fr, int64_t lo, uint32_t size,
			     const struct vreg *value)
{
	struct vslot *s = slot_of(fr, lo);
	uint32_t bo = (uint32_t)(lo - (-(int64_t)((-lo - 1) / 8 + 1) * 8)); /* byte in slot */
	int err;

	/* a local dynptr there is destroyed, a referenced one refuses */
	if ((err = vdynptr_stack_write(env, fr, lo, lo + size)))
		return err;
	/* only a write of its whole slot replaces a spilled pointer: a
	 * narrower one would leave its other bytes behind as data */
	for (int64_t a = lo; a < lo + size; a++) {
		const struct vreg *p = spilled_ptr_at(fr, a);
		int64_t slot_lo = a & ~7ll;

		if (p && (slot_lo < lo || slot_lo + 8 > lo + size) &&
		    (err = vcheck_ptr_leak(env, p, "attempt to corrupt spilled pointer on "
					       "stack: %u-byte write at off %lld", size,
					       (long long)lo)))
			return err;
	}
	if (value && is_ptr(value)) {
		if (size != 8)
			return verr(env, "invalid size of register spill");
		/* it would outlive the frame it points into (and then be a
		 * number: its address), as Linux */
		if (value->type == PTR_TO_STACK && fr != cur_frame(env))
			return verr(env, "cannot spill pointers to stack into stack frame of the "
				    "caller");
		/* the dynptr a helper hands a callback lives only for the
		 * call (Linux does not spill it at all) */
		if (value->type == CONST_PTR_TO_DYNPTR && fr != cur_frame(env))
			return verr(env, "cannot spill the callback's dynptr pointer into stack frame "
				    "of the caller (it lives only for the call)");
		if (lo % 8)
			return verr(env, "misaligned stack access off %lld for a pointer spill",
				    (long long)lo);
	}
	if (value && value->type != NOT_INIT && lo % size == 0 && bo + size <= 8 &&
	    (size == 8 || value->type == SCALAR)) {
		/* spill: a whole register, or a scalar into aligned bytes */
		destroy_spill(s);
		s->spilled = *value;
		s->spill_off = (uint8_t)bo;
		s->spill_size = (uint8_t)size;
		if (size < 8)
			vreg_coerce(&s->spilled, size);
		for (uint32_t k = bo; k < bo + size; k++)
			s->type[k] = STACK_SPILL;
		return 0;
	}
	for (int64_t a = lo; a < lo + size; a++) {
		struct vslot *sa = slot_of(fr, a);

		destroy_spill(sa);
		*slot_byte(fr, a) = value && vreg_is_zero(value) ? STACK_ZERO : STACK_MISC;
	}
	return 0;
}

/* Load of `size` bytes at [lo, lo+size) of the frame into dst (NULL: only
 * check the bytes are initialised, as a helper reading memory does). */
static int stack_read_fixed(struct venv *env, struct vframe *fr, int64_t lo, uint32_t size,
			    struct vreg *dst, bool sext)
{
	struct vslot *s = slot_of(fr, lo);
	bool zero = true;

	if (dst) {
		uint32_t bo = (uint32_t)(lo - (-(int64_t)((-lo - 1) / 8 + 1) * 8));
		bool spilled = bo == s->spill_off && size <= s->spill_size && bo + size <= 8;

		for (uint32_t k = bo; spilled && k < bo + size; k++)
			spilled = s->type[k] == STACK_SPILL;
		if (spilled && size == 8) {
			*dst = s->spilled;
			return 0;
		}
		if (spilled && s->spilled.type == SCALAR) {
			*dst = s->spilled;
			vreg_coerce(dst, size);
			if (sext)
				vscalar_sext(dst, size * 8, true);
			if (size < s->spill_size)
				dst->id = 0;
			return 0;
		}
	}
	/* part of a spilled pointer or of a dynptr is never a number, trusted
	 * or not (as Linux, privileged or not) */
	if (vdynptr_in_range(fr, lo, lo + size))
		return verr(env, "invalid read from stack off %lld size %u: the bytes are part of "
			    "a dynptr", (long long)lo, size);
	for (int64_t a = lo; a < lo + size; a++)
		if (spilled_ptr_at(fr, a))
			return verr(env, "invalid size of register fill: %u-byte read at stack off "
				    "%lld of a spilled pointer", size, (long long)lo);
	for (int64_t a = lo; a < lo + size; a++) {
		uint8_t t = *slot_byte(fr, a);

		if (t == STACK_INVALID)
			return verr(env, "invalid read from stack off %lld+%lld size %u",
				    (long long)lo, (long long)(a - lo), size);
		zero &= t == STACK_ZERO;
	}
	if (!dst)
		return 0;
	if (zero) {
		memset(dst, 0, sizeof(*dst));
		dst->type = SCALAR;
		vreg_mark_const(dst, 0);
	} else {
		mark_loaded(dst, size, sext);
	}
	return 0;
}

/* Variable-offset stack access: reads need every byte of the range
 * initialised. A write may miss any byte of the range, so it initialises
 * none: uninitialised bytes stay so (a later read of them would read
 * stale host stack), initialised ones become plain data and spills in the
 * range are destroyed. */
static int stack_access_var(struct venv *env, struct vframe *fr, int64_t lo, int64_t hi,
			    bool write, struct vreg *dst, uint32_t size, bool sext)
{
	int err;

	if (write && (err = vdynptr_stack_write(env, fr, lo, hi)))
		return err;
	if (!write && vdynptr_in_range(fr, lo, hi))
		return verr(env, "invalid variable-offset read from stack [%lld, %lld): part of "
			    "it is a dynptr", (long long)lo, (long long)hi);
	for (int64_t a = lo; a < hi; a++) {
		uint8_t *t = slot_byte(fr, a);
		const struct vreg *p = spilled_ptr_at(fr, a);

		if (p && (err = vcheck_ptr_leak(env, p, write ?
			"spilled pointer at stack off %lld in range of variable-offset stack "
			"write (a partial overwrite leaves its other bytes as data)" :
			"variable-offset read from stack leaks the spilled pointer at off %lld",
			(long long)(a & ~7ll))))
			return err;
		if (write) {
			if (*t == STACK_SPILL)
				destroy_spill(slot_of(fr, a));
			if (*t != STACK_INVALID)
				*t = STACK_MISC;
		} else if (*t == STACK_INVALID) {
			return verr(env, "invalid variable-offset read from stack: byte %lld "
				    "is uninitialized", (long long)a);
		}
	}
	if (dst)
		mark_loaded(dst, size, sext);
	return 0;
}

/* Bounds of [reg + off, +size) against a region of region_size bytes. */
static int check_region(struct venv *env, int regno, const struct vreg *reg, int32_t off,
			uint32_t size, uint64_t region_size, const char *what)
{
	int64_t lo, hi;

	if (reg->smin < -MAX_VAR_OFF || reg->umax > MAX_VAR_OFF)
		return verr(env, "R%d unbounded memory access, make sure to bounds check any "
			    "such access", regno);
	lo = (int64_t)reg->off + off + reg->smin;
	if (lo < 0)
		return verr(env, "R%d min value is negative, either use unsigned index or do a "
			    "if (index >=0) check (%s off=%lld)", regno, what, (long long)lo);
	hi = (int64_t)reg->off + off + (int64_t)reg->umax + size;
	if ((uint64_t)hi > region_size)
		return verr(env, "invalid access to %s, size=%llu off=%lld size=%u", what,
			    (unsigned long long)region_size,
			    (long long)((int64_t)reg->off + off + (int64_t)reg->umax), size);
	return 0;
}

/* The value a load of `size` bytes at ctx + off reads (sext: ldsx). */
static int ctx_field(struct venv *env, int32_t off, uint32_t size, struct vreg *dst, bool sext)
{
	const struct bpfrt_ctx_layout *ctx = &env->kind->ctx;

	if (kind_has_packet(env) && sext && off < ctx->addr_fields_end)
		/* a sign-extended address is no address (Linux refuses it
		 * the same way) */
		return verr(env, "invalid bpf_context access off=%d size=%u (sign extension of "
			    "packet pointers)", off, size);
	for (unsigned int i = 0; i < ctx->packet_field_cnt; i++) {
		const struct bpfrt_ctx_packet_field *f = &ctx->packet_fields[i];

		if (off >= f->off + f->width || off + (int32_t)size <= f->off)
			continue;
		/* part of data or data_end, or both at once, would be
		 * address bits as a number (Linux allows only the whole
		 * field) */
		if (off != f->off || size != f->width)
			return verr(env, "invalid bpf_context access off=%d size=%u (packet "
				    "pointers are loaded whole, %u bytes)", off, size, f->width);
		mark_ptr(dst, f->role == BPFRT_PKT_END ? PTR_TO_PACKET_END :
			      f->role == BPFRT_PKT_META ? PTR_TO_PACKET_META : PTR_TO_PACKET);
		return 0;
	}
	if (vbtf_ctx_arg(env, off, size, sext, dst))
		return 0;
	if (vsock_ctx_sk_field(env, off, size)) {
		vsock_mark_ctx_sk(env, dst);
		return 0;
	}
	mark_loaded(dst, size, sext);
	return 0;
}

static int check_ctx_access(struct venv *env, int regno, const struct vreg *reg, int32_t off,
			    uint32_t size, bool write, struct vreg *dst, bool sext)
{
	int64_t at;

	if (reg->off || !tnum_equals_const(reg->var_off, 0))
		return verr(env, "dereference of modified ctx ptr R%d off=%d disallowed", regno,
			    reg->off);
	at = off;
	if (at < 0 || at + size > env->ctx_size || at % size ||
	    (write && env->ctx_rdonly) || (env->ctx_u64_only && at % 8))
		return verr(env, "invalid bpf_context access off=%lld size=%u%s", (long long)at, size,
			    write && env->ctx_rdonly ? " (context is read-only)" : "");
	if (env->kind->ctx.rule) {
		/* the kernel's field rules of the kind (core/ctx_rules.h) */
		const struct bpfrt_ctx_access a = {
			.off = (uint32_t)at, .size = size, .write = write, .sext = sext,
			.variant = env->prog->kind_variant,
			.priv = env->prog->load_flags & BPFRT_F_ALLOW_PTR_LEAKS,
		};
		const char *why = env->kind->ctx.rule(&a);

		if (why)
			return verr(env, "invalid bpf_context access off=%lld size=%u (%s: %s)",
				    (long long)at, size, env->kind->info.ctx_type, why);
	}
	if ((uint32_t)at + size > env->max_ctx_access)
		env->max_ctx_access = (uint32_t)at + size;
	if (dst)
		return ctx_field(env, (int32_t)at, size, dst, sext);
	return 0;
}

static int check_packet_access(struct venv *env, int regno, const struct vreg *reg,
			       int32_t off, uint32_t size)
{
	int64_t lo = (int64_t)reg->off + off;

	if (reg->smin < 0 || reg->umax > MAX_PACKET_OFF)
		return verr(env, "R%d offset is outside of the packet (variable part %lld..%llu)",
			    regno, (long long)reg->smin, (unsigned long long)reg->umax);
	if (lo < 0 || lo + size > reg->range)
		return verr(env, "invalid access to packet, off=%lld size=%u, R%d(id=%u,off=%d,r=%d)",
			    (long long)lo, size, regno, reg->id, reg->off, reg->range);
	return 0;
}

/* A constant read from a frozen read-only map (.rodata), as Linux folds
 * them. */
static bool rodata_const(const struct vreg *reg, int32_t off, uint32_t size, struct vreg *dst,
			 bool sext)
{
	const uint8_t *base;
	uint64_t v = 0;
	int64_t at;

	if (!map_is_const(reg->map) || !tnum_is_const(reg->var_off))
		return false;
	base = bpfrt_map_value_ptr(reg->map, 0);
	at = (int64_t)reg->off + off + (int64_t)reg->var_off.value;
	if (!base || at < 0 || at + size > reg->map->value_size)
		return false;
	memcpy(&v, base + at, size);
	memset(dst, 0, sizeof(*dst));
	dst->type = SCALAR;
	vreg_mark_const(dst, v);
	if (sext && size < 8)
		vscalar_sext(dst, size * 8, true);
	return true;
}

/* The access [regno + off, +size): value is what a store writes (NULL:
 * unknown data), dst where a load goes. */
static int check_mem_access(struct venv *env, int regno, int32_t off, uint32_t size,
			    bool write, const struct vreg *value, struct vreg *dst, bool sext)
{
	struct vreg reg = *reg_at(env, regno);
	int err = 0;

	if (reg.type == NOT_INIT)
		return verr(env, "R%d !read_ok", regno);
	if (reg.flags & PTR_MAYBE_NULL)
		return verr(env, "R%d invalid mem access '%s'", regno, vreg_type_str(&reg));
	switch (reg.type) {
	case PTR_TO_STACK: {
		int64_t lo, hi;
		struct vframe *fr = stack_range(env, regno, &reg, off, size, &lo, &hi, &err);

		if (!fr)
			return err;
		note_stack_access(env, reg.frameno, lo, hi, write && tnum_is_const(reg.var_off));
		if (!tnum_is_const(reg.var_off)) {
			/* a variable-offset store is plain data, never a spill */
			if (write && value && (err = vcheck_ptr_leak(env, value, "variable-offset "
					"store through R%d leaks addr into stack (it is kept as data)",
					regno)))
				return err;
			return stack_access_var(env, fr, lo, hi, write, dst, size, sext);
		}
		if (write)
			return stack_write_fixed(env, fr, lo, size, value);
		return stack_read_fixed(env, fr, lo, size, dst, sext);
	}
	case PTR_TO_MAP_VALUE:
		err = check_region(env, regno, &reg, off, size, reg.map->value_size, "map value");
		if (!err)
			err = vcheck_spin_lock_access(env, &reg, off, size, false);
		if (err)
			return err;
		if (write && map_prog_rdonly(reg.map))
			return verr(env, "write into map forbidden, value_size=%u off=%d size=%u",
				    reg.map->value_size, reg.off + off, size);
		if (!write && map_prog_wronly(reg.map))
			return verr(env, "read from map forbidden, value_size=%u off=%d size=%u",
				    reg.map->value_size, reg.off + off, size);
		if (dst && !rodata_const(&reg, off, size, dst, sext))
			mark_loaded(dst, size, sext);
		return 0;
	case PTR_TO_MAP_KEY:
		if (write)
			return verr(env, "R%d cannot write into map_key", regno);
		err = check_region(env, regno, &reg, off, size, reg.map->key_size, "map key");
		break;
	case PTR_TO_MEM:
		if (write && (reg.flags & MEM_RDONLY))
			return verr(env, "R%d cannot write into rdonly_mem", regno);
		err = check_region(env, regno, &reg, off, size, reg.mem_size, "memory");
		break;
	case PTR_TO_CTX:
		return check_ctx_access(env, regno, &reg, off, size, write, dst, sext);
	case PTR_TO_BTF_ID:
		return vbtf_check_access(env, regno, &reg, off, size, write, dst, sext);
	case PTR_TO_SOCKET:
	case PTR_TO_SOCK_COMMON:
	case PTR_TO_TCP_SOCK:
		return vsock_check_access(env, regno, &reg, off, size, write, dst);
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		/* Linux's per-kind direct packet access (may_access_direct_pkt_data) */
		if (write && bpfrt_prog_kind_packet_rdonly(env->kind, env->prog->kind_variant))
			return verr(env, "cannot write into packet (%s programs read it only)",
				    env->kind->short_name);
		err = check_packet_access(env, regno, &reg, off, size);
		break;
	case SCALAR:
		if (vbtf_scalar_note(env))
			return verr(env, "R%d invalid mem access 'scalar' (%s arguments are numbers: "
				    "%s)", regno, env->kind->short_name, vbtf_scalar_note(env));
		return verr(env, "R%d invalid mem access 'scalar'", regno);
	default:
		return verr(env, "R%d invalid mem access '%s'", regno, vreg_type_str(&reg));
	}
	if (!err && dst)
		mark_loaded(dst, size, sext);
	return err;
}

/* ---- loads, stores, atomics ---- */

int vdo_ldx(struct venv *env, const struct bpf_insn *insn)
{
	struct vreg val;
	int err;

	if ((err = vcheck_reg_init(env, insn->src_reg)))
		return err;
	err = check_mem_access(env, insn->src_reg, insn->off, bpf_size_bytes(insn_size(insn)),
			       false, NULL, &val, insn_is_ldx_sext(insn));
	if (err)
		return err;
	*reg_at(env, insn->dst_reg) = val;
	return 0;
}

int vdo_store(struct venv *env, const struct bpf_insn *insn)
{
	uint32_t size = bpf_size_bytes(insn_size(insn));
	struct vreg imm;
	const struct vreg *value;
	const char *dest = NULL;
	int err;

	if ((err = vcheck_reg_init(env, insn->dst_reg)))
		return err;
	if (insn_class(insn) == BPF_ST) {
		memset(&imm, 0, sizeof(imm));
		imm.type = SCALAR;
		vreg_mark_const(&imm, (uint64_t)(int64_t)insn->imm);
		vreg_coerce(&imm, size);
		value = &imm;
	} else {
		if ((err = vcheck_reg_init(env, insn->src_reg)))
			return err;
		imm = *reg_at(env, insn->src_reg);
		if (imm.type == SCALAR && size < 8)
			vreg_coerce(&imm, size);
		value = &imm;
	}
	/* Linux refuses immediate stores into kernel-built contexts (their
	 * stores are rewritten from the source register) */
	if (insn_class(insn) == BPF_ST && reg_at(env, insn->dst_reg)->type == PTR_TO_CTX &&
	    env->kind->ctx.rule && !env->kind->ctx.rdonly)
		return verr(env, "BPF_ST stores into R%d ctx is not allowed", insn->dst_reg);
	switch (reg_at(env, insn->dst_reg)->type) {
	case PTR_TO_STACK: /* a spill: the pointer stays typed */
		break;
	case PTR_TO_MAP_VALUE:
		dest = "map";
		break;
	case PTR_TO_CTX:
		dest = "ctx";
		break;
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		dest = "packet";
		break;
	default:
		dest = "mem";
		break;
	}
	if (dest && (err = vcheck_ptr_leak(env, value, "R%d leaks addr into %s", insn->src_reg,
					  dest)))
		return err;
	return check_mem_access(env, insn->dst_reg, insn->off, size, true, value, NULL, false);
}

int vdo_atomic(struct venv *env, const struct bpf_insn *insn)
{
	uint32_t size = bpf_size_bytes(insn_size(insn));
	const struct vreg *base;
	struct vreg old;
	int err;

	if ((err = vcheck_reg_init(env, insn->dst_reg)) || (err = vcheck_reg_init(env, insn->src_reg)))
		return err;
	if (insn->imm == BPF_CMPXCHG && (err = vcheck_reg_init(env, BPF_R0)))
		return err;
	base = reg_at(env, insn->dst_reg);
	if (base->type != PTR_TO_STACK && base->type != PTR_TO_MAP_VALUE &&
	    base->type != PTR_TO_MEM)
		return verr(env, "BPF_ATOMIC stores into R%d %s is not allowed", insn->dst_reg,
			    vreg_type_str(base));
	/* Natural alignment, as Linux requires of atomics everywhere: a
	 * misaligned lock-prefixed op is a split (bus) lock on x86-64 and
	 * faults on arm64 and riscv64. Stack, map values and ringbuf records
	 * start 8-aligned, so the offset decides. */
	{
		struct tnum at = tnum_add(base->var_off,
					  tnum_const((uint64_t)((int64_t)base->off + insn->off)));

		if ((at.value | at.mask) & (size - 1))
			return verr(env, "misaligned %saccess off %d+%d size %u",
				    base->type == PTR_TO_STACK ? "stack " :
				    base->type == PTR_TO_MAP_VALUE ? "value " : "", base->off,
				    insn->off, size);
	}
	if ((err = vcheck_ptr_leak(env, reg_at(env, insn->src_reg), "R%d leaks addr into mem",
				  insn->src_reg)))
		return err;
	if (insn->imm == BPF_CMPXCHG &&
	    (err = vcheck_ptr_leak(env, reg_at(env, BPF_R0), "R0 leaks addr into mem")))
		return err;
	/* the old value is read (must be initialised), then data is written */
	err = check_mem_access(env, insn->dst_reg, insn->off, size, false, NULL, &old, false);
	if (!err)
		err = vcheck_ptr_leak(env, &old, "leaking pointer from stack: BPF_ATOMIC on the "
				     "spilled pointer at R%d off=%d", insn->dst_reg, insn->off);
	if (!err)
		err = check_mem_access(env, insn->dst_reg, insn->off, size, true, NULL, NULL, false);
	if (err)
		return err;
	if (insn->imm == BPF_CMPXCHG)
		mark_loaded(reg_at(env, BPF_R0), size, false);
	else if (insn->imm & BPF_FETCH)
		mark_loaded(reg_at(env, insn->src_reg), size, false);
	return 0;
}

/* ---- helper memory arguments ---- */

/* A helper reads (or, uninit, writes) [reg, reg + size) with size up to
 * max_size (exactly max_size if exact). A helper writing the stack
 * initialises only what it surely writes: a constant size at a constant
 * offset writes exactly that range; otherwise (variable size or offset)
 * it may write less, so the range must be initialised beforehand, as
 * Linux requires (check_mem_size_reg drops raw mode for variable sizes). */
int vcheck_helper_mem(struct venv *env, int regno, uint64_t max_size, bool uninit,
			    bool exact)
{
	struct vreg reg = *reg_at(env, regno);
	uint32_t size = (uint32_t)max_size;
	int err;

	if (reg.flags & PTR_MAYBE_NULL)
		return verr(env, "R%d type=%s expected=fp, pkt, map_value, mem (null-check it first)",
			    regno, vreg_type_str(&reg));
	/* zero bytes: NULL or a pointer, as Linux (a non-zero scalar is
	 * refused there whatever the size) */
	if (!size && reg.type == SCALAR && !vreg_is_zero(&reg))
		return verr(env, "R%d type=scalar expected=fp, pkt, map_value, mem (a zero-sized "
			    "buffer is NULL or a pointer)", regno);
	/* a zero-sized stack buffer still lies inside its frame, whatever
	 * its variable part (as Linux) */
	if (!size && reg.type == PTR_TO_STACK) {
		const struct vframe *fr = env->cur->frames[reg.frameno];

		if ((int64_t)reg.off + reg.smin < -(int64_t)fr->nslots * 8 ||
		    (int64_t)reg.off + reg.smax > 0)
			return verr(env, "invalid variable-offset indirect access to stack R%d "
				    "[%lld, %lld] of a %u-byte frame (zero-sized)", regno,
				    (long long)((int64_t)reg.off + reg.smin),
				    (long long)((int64_t)reg.off + reg.smax), fr->nslots * 8);
	}
	if (!size)
		return 0;
	switch (reg.type) {
	case PTR_TO_STACK: {
		int64_t lo, hi;
		struct vframe *fr = stack_range(env, regno, &reg, 0, size, &lo, &hi, &err);

		if (!fr)
			return err;
		/* as Linux: a helper never writes a dynptr's bytes (it could
		 * alias one it takes too) nor reads them (a host address) */
		if (vdynptr_in_range(fr, lo, hi))
			return verr(env, uninit ? "R%d potential write to dynptr at off=%lld "
				    "disallowed" : "R%d invalid indirect read from stack off %lld: "
				    "part of a dynptr", regno, (long long)lo);
		note_stack_access(env, reg.frameno, lo, hi,
				  uninit && exact && tnum_is_const(reg.var_off));
		if (uninit && exact && tnum_is_const(reg.var_off))
			return stack_write_fixed(env, fr, lo, size, NULL);
		for (int64_t a = lo; a < hi; a++) {
			const struct vreg *p = spilled_ptr_at(fr, a);

			if (!uninit && p &&
			    (err = vcheck_ptr_leak(env, p, "R%d leaks addr into helper function: "
						  "it reads the spilled pointer at stack off %lld",
						  regno, (long long)(a & ~7ll))))
				return err;
		}
		for (int64_t a = lo; a < hi; a++)
			if (*slot_byte(fr, a) == STACK_INVALID)
				return verr(env, uninit ? "invalid indirect write to stack R%d off "
					    "%lld+%lld size %u: the helper may write fewer bytes "
					    "(variable size or offset), so the range must be "
					    "initialized first" : "invalid indirect read from stack "
					    "R%d off %lld+%lld size %u", regno, (long long)lo,
					    (long long)(a - lo), size);
		if (uninit)
			return stack_access_var(env, fr, lo, hi, true, NULL, 0, false);
		return 0;
	}
	case PTR_TO_MAP_VALUE:
		if (uninit && map_prog_rdonly(reg.map))
			return verr(env, "R%d write into map forbidden", regno);
		if (!uninit && map_prog_wronly(reg.map))
			return verr(env, "R%d read from map forbidden", regno);
		err = check_region(env, regno, &reg, 0, size, reg.map->value_size, "map value");
		return err ? err : vcheck_spin_lock_access(env, &reg, 0, size, true);
	case PTR_TO_MAP_KEY:
		if (uninit)
			return verr(env, "R%d cannot write into map_key", regno);
		return check_region(env, regno, &reg, 0, size, reg.map->key_size, "map key");
	case PTR_TO_MEM:
		if (uninit && (reg.flags & MEM_RDONLY))
			return verr(env, "R%d cannot write into rdonly_mem", regno);
		return check_region(env, regno, &reg, 0, size, reg.mem_size, "memory");
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		return check_packet_access(env, regno, &reg, 0, size);
	default:
		return verr(env, "R%d type=%s expected=fp, pkt, map_value, mem", regno,
			    vreg_type_str(&reg));
	}
}
