/* Typed arguments: the pointer arguments of a traced host function (and
 * of a tp_btf tracepoint) typed from the target BTF as PTR_TO_BTF_ID, as
 * Linux types them from the kernel's BTF (btf_ctx_access,
 * btf_struct_access; own code).
 *
 * Target BTF, in order: the object's btf_custom_path (prog->attach_btf,
 * which the loader sets) if it describes the function, then the host's
 * lookup (bpfrt_verifier_set_target_btf: the .BTF of the module that
 * defines the function). A function neither describes keeps numbers as
 * arguments, and the reason is named where one is dereferenced.
 *
 * What a PTR_TO_BTF_ID allows:
 *  - loads inside the struct: a scalar member read whole or in part, any
 *    in-bounds read of padding, arrays and nested structs; a pointer
 *    member only whole (8 bytes at its offset), which gives another
 *    PTR_TO_BTF_ID if it points to a struct or union, else a number;
 *  - constant steps (ptr + k) within the struct;
 *  - nothing else typed: stores, atomics, variable offsets, helper memory
 *    and context arguments are refused. It stays a number the host
 *    passed: as a plain argument of a helper, stored, compared or
 *    returned it is what it was before it had a type (no pointer leak:
 *    the value came from the host's own arguments), and arithmetic other
 *    than a constant step makes it that number again.
 * The pointer may be NULL or stale (the host's data, not the program's),
 * so its loads are never assumed to succeed: each one is rewritten to a
 * fault-safe load (BPFRT_PROBE_MEM, as Linux's BPF_PROBE_MEM) that reads
 * 0 where the address faults, and a comparison with NULL decides
 * nothing. */
#include "verifier/vstate.h"
#include "core/prog_kind.h"

#include <bpf/btf.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BTF_CHAIN_MAX 32    /* modifiers and typedefs followed, as core_relo.c */
#define BTF_NEST_MAX 16     /* nested structs walked into */

static _Atomic(bpfrt_target_btf_fn) host_lookup;

void bpfrt_verifier_set_target_btf(bpfrt_target_btf_fn fn)
{
	atomic_store_explicit(&host_lookup, fn, memory_order_release);
}

uint32_t vbtf_peel(const struct btf *btf, uint32_t id)
{
	for (int d = 0; d < BTF_CHAIN_MAX; d++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (!t)
			return 0;
		if (!btf_is_mod(t) && !btf_is_typedef(t))
			return id;
		id = t->type;
	}
	return 0;
}

static const char *type_name(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const char *n = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	return n && *n ? n : "(anon)";
}

/* The struct or union a pointer of type id points to, or 0. */
static uint32_t pointee_struct(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(btf, vbtf_peel(btf, id));

	if (!t || !btf_is_ptr(t))
		return 0;
	id = vbtf_peel(btf, t->type);
	t = btf__type_by_id(btf, id);
	return t && (btf_is_struct(t) || btf_is_union(t)) && t->size ? id : 0;
}

/* Context slots an argument of type id takes (a 16-byte integer two). */
static uint32_t arg_slots(const struct btf *btf, uint32_t id)
{
	int64_t size = btf__resolve_size(btf, id);

	return size > 8 ? 2 : 1;
}

static bool section_is(const struct bpfrt_prog *prog, const char *prefix)
{
	size_t n = strlen(prefix);
	/* a leading '?' only keeps the program from autoloading */
	const char *sec = prog->sec_name && *prog->sec_name == '?' ? prog->sec_name + 1 :
			  prog->sec_name;

	return sec && !strncmp(sec, prefix, n) && (sec[n] == '/' || sec[n] == '.' || !sec[n]);
}

/* The function prototype's BTF id in btf for the program's target, and
 * how many leading parameters the context leaves out; 0 if none. */
static uint32_t find_proto(const struct btf *btf, const char *name, bool tracepoint,
			   uint32_t *skip)
{
	const struct btf_type *t;
	char buf[256];
	uint32_t proto;
	int id;

	*skip = 0;
	if (!btf)
		return 0;
	if (tracepoint) {
		/* bpfrt's tracepoint declaration (bpfrt/tracepoint.h), else
		 * Linux's typedef, whose first parameter is the probe's data */
		snprintf(buf, sizeof(buf), "__bpfrt_tp_proto_%s", name);
		id = btf__find_by_name_kind(btf, buf, BTF_KIND_FUNC);
		if (id <= 0) {
			snprintf(buf, sizeof(buf), "btf_trace_%s", name);
			id = btf__find_by_name_kind(btf, buf, BTF_KIND_TYPEDEF);
			t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
			t = t ? btf__type_by_id(btf, t->type) : NULL;
			if (!t || !btf_is_ptr(t))
				return 0;
			*skip = 1;
			proto = t->type;
			t = btf__type_by_id(btf, proto);
			return t && btf_is_func_proto(t) ? proto : 0;
		}
	} else {
		id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	}
	t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	if (!t)
		return 0;
	proto = t->type;
	t = btf__type_by_id(btf, proto);
	return t && btf_is_func_proto(t) ? proto : 0;
}

/* The program's kind types its arguments from BTF: fentry, fexit,
 * fmod_ret, and tp_btf (the raw_tp kind's section whose arguments Linux
 * types; raw_tp's stay numbers, as Linux's). */
static bool kind_types_args(const struct bpfrt_prog *prog, bool *tracepoint)
{
	*tracepoint = false;
	switch (prog->kind) {
	case BPFRT_PROG_FENTRY:
	case BPFRT_PROG_FEXIT:
	case BPFRT_PROG_FMOD_RET:
		return true;
	case BPFRT_PROG_RAW_TRACEPOINT:
		*tracepoint = true;
		return section_is(prog, "tp_btf");
	default:
		return false;
	}
}

/* An LSM hook's arguments bpfrt knows the structs of
 * (bpfrt_lsm_hook_arg_struct), typed from the program's own BTF. */
static int lsm_args(struct venv *env)
{
	const struct bpfrt_prog *prog = env->prog;
	const char *hook = prog->attach_target;
	bool any = false;

	for (unsigned i = 0; i < 4 && prog->obj_btf; i++) {
		const char *s = bpfrt_lsm_hook_arg_struct(hook, i);
		int32_t id = s ? btf__find_by_name_kind(prog->obj_btf, s, BTF_KIND_STRUCT) : -1;

		if (id > 0) {
			env->arg_btf_id[i] = (uint32_t)id;
			any = true;
		}
	}
	if (any)
		env->btf = prog->obj_btf;
	return 0;
}

int vbtf_setup_args(struct venv *env)
{
	const struct bpfrt_prog *prog = env->prog;
	const char *target = prog->attach_target, *name, *sep;
	bpfrt_target_btf_fn lookup;
	const struct btf *btf = prog->attach_btf;
	const struct btf_type *proto_t;
	const struct btf_param *params;
	uint32_t proto, skip, slot = 0;
	bool tp;

	env->btf = NULL;
	env->btf_why[0] = 0;
	memset(env->arg_btf_id, 0, sizeof(env->arg_btf_id));
	if (prog->kind == BPFRT_PROG_LSM)
		return lsm_args(env);
	if (!kind_types_args(prog, &tp))
		return 0;
	if (!target || !*target) {
		snprintf(env->btf_why, sizeof(env->btf_why), "the section names no %s",
			 tp ? "tracepoint" : "function");
		return 0;
	}
	sep = strrchr(target, tp ? '/' : ':');
	name = sep ? sep + 1 : target;
	proto = find_proto(btf, name, tp, &skip);
	if (!proto) {
		char why[sizeof(env->btf_why)] = "";

		lookup = atomic_load_explicit(&host_lookup, memory_order_acquire);
		btf = lookup ? lookup(target, tp, why, sizeof(why)) : NULL;
		proto = find_proto(btf, name, tp, &skip);
		if (!proto) {
			snprintf(env->btf_why, sizeof(env->btf_why), "no BTF for the %s's arguments: %s%s",
				 tp ? "tracepoint" : "function", prog->attach_btf ?
				 "the btf_custom_path BTF does not describe it, " : "",
				 why[0] ? why : "no btf_custom_path given and no host BTF describes it");
			return 0;
		}
	}
	proto_t = btf__type_by_id(btf, proto);
	params = btf_params(proto_t);
	for (uint16_t i = 0; i < btf_vlen(proto_t); i++) {
		if (!params[i].type)
			break; /* variadic: the rest are no typed slots */
		if (i < skip)
			continue;
		if (slot < BPFRT_BTF_ARG_SLOTS)
			env->arg_btf_id[slot] = pointee_struct(btf, params[i].type);
		slot += arg_slots(btf, params[i].type);
	}
	/* fexit's ctx[nr_args] is the return value (fmod_ret's is the
	 * number it returns instead) */
	if (prog->kind == BPFRT_PROG_FEXIT && slot < BPFRT_BTF_ARG_SLOTS && proto_t->type)
		env->arg_btf_id[slot] = pointee_struct(btf, proto_t->type);
	env->btf = btf;
	return 0;
}

bool vbtf_ctx_arg(struct venv *env, int32_t off, uint32_t size, bool sext, struct vreg *dst)
{
	uint32_t id;

	if (!env->btf || off < 0 || off % 8 || size != 8 || sext ||
	    (uint32_t)off / 8 >= BPFRT_BTF_ARG_SLOTS)
		return false;
	id = env->arg_btf_id[off / 8];
	if (!id)
		return false;
	mark_ptr(dst, PTR_TO_BTF_ID);
	dst->mem_size = id;
	dst->flags = PTR_TRUSTED; /* as Linux's tracing arguments */
	return true;
}

const char *vbtf_scalar_note(const struct venv *env)
{
	return env->btf_why[0] ? env->btf_why : NULL;
}

/* What a load of size bytes at off into struct id reads (Linux's
 * btf_struct_walk): *ptr_id the struct a whole pointer member points to
 * (0: a number). Returns 0 or rejects naming struct and member. */
static int struct_walk(struct venv *env, int regno, uint32_t id, int64_t off, uint32_t size,
		       bool sext, uint32_t *ptr_id)
{
	const struct btf *btf = env->btf;
	const char *outer = type_name(btf, id);

	*ptr_id = 0;
	for (int depth = 0; depth < BTF_NEST_MAX; depth++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_member *m;
		bool descended = false;

		if (off < 0 || off + size > t->size)
			return verr(env, "R%d access beyond struct %s at off %lld size %u (the struct "
				    "is %u bytes)", regno, type_name(btf, id), (long long)off, size,
				    t->size);
		m = btf_members(t);
		for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
			uint32_t bit = btf_member_bit_offset(t, i);
			uint32_t bits = btf_member_bitfield_size(t, i);
			uint32_t mid = vbtf_peel(btf, m->type);
			const struct btf_type *mt = mid ? btf__type_by_id(btf, mid) : NULL;
			int64_t moff = bit / 8, msize;

			if (!mt)
				continue;
			if (bits) {
				/* the bytes holding a bitfield read as a number */
				msize = (bit + bits + 7) / 8 - moff;
				if (off >= moff && off < moff + msize)
					return 0;
				continue;
			}
			msize = btf__resolve_size(btf, mid);
			if (msize <= 0 || off < moff || off >= moff + msize)
				continue;
			if (btf_is_struct(mt) || btf_is_union(mt)) {
				id = mid;
				off -= moff;
				descended = true;
				break;
			}
			if (btf_is_array(mt)) {
				uint32_t eid = vbtf_peel(btf, btf_array(mt)->type);
				const struct btf_type *et = eid ? btf__type_by_id(btf, eid) : NULL;
				int64_t esize = eid ? btf__resolve_size(btf, eid) : 0;

				if (et && esize > 0 && (btf_is_struct(et) || btf_is_union(et)) &&
				    (off - moff) % esize + size <= esize) {
					id = eid;
					off = (off - moff) % esize;
					descended = true;
					break;
				}
				if (et && btf_is_ptr(et) && esize == 8) {
					moff += (off - moff) / 8 * 8;
					msize = 8;
					mt = et;
				} else {
					return 0; /* in an array of numbers */
				}
			}
			if (btf_is_ptr(mt)) {
				if (off != moff || size != 8 || sext)
					return verr(env, "R%d cannot access ptr member %s with moff %lld "
						    "in struct %s with off %lld size %u%s", regno,
						    btf__name_by_offset(btf, m->name_off), (long long)moff,
						    type_name(btf, id), (long long)off, size,
						    sext ? " (sign-extended)" : "");
				*ptr_id = pointee_struct(btf, mid);
				return 0;
			}
			return 0; /* a number (int, enum, float) read whole or in part */
		}
		if (!descended)
			return 0; /* padding, or the tail of a union: a number */
	}
	return verr(env, "R%d struct %s nests deeper than %d levels at off %lld", regno, outer,
		    BTF_NEST_MAX, (long long)off);
}

int vbtf_check_access(struct venv *env, int regno, const struct vreg *reg, int32_t off,
		      uint32_t size, bool write, struct vreg *dst, bool sext)
{
	const char *sname = type_name(env->btf, reg->mem_size);
	uint32_t ptr_id;
	int err;

	if (write)
		return verr(env, "R%d cannot write into ptr_%s: host memory a typed argument points "
			    "to is read-only (only read is supported)", regno, sname);
	if (!tnum_equals_const(reg->var_off, 0))
		return verr(env, "R%d is ptr_%s invalid variable offset: off=%d, var_off=(%#llx; "
			    "%#llx)", regno, sname, reg->off, (unsigned long long)reg->var_off.value,
			    (unsigned long long)reg->var_off.mask);
	err = struct_walk(env, regno, reg->mem_size, (int64_t)reg->off + off, size, sext, &ptr_id);
	if (err)
		return err;
	if (!env->probe_loads) {
		env->probe_loads = calloc(env->n, 1);
		if (!env->probe_loads)
			return -ENOMEM;
	}
	env->probe_loads[env->insn] = 1;
	if (!dst)
		return 0;
	if (ptr_id) {
		mark_ptr(dst, PTR_TO_BTF_ID);
		dst->mem_size = ptr_id;
		return 0;
	}
	memset(dst, 0, sizeof(*dst));
	dst->type = SCALAR;
	vreg_mark_load(dst, size, sext);
	return 0;
}

bool vbtf_alu_demote(const struct bpf_insn *insn, struct vreg *dst, struct vreg *src, bool is64)
{
	uint8_t op = insn_op(insn);
	bool d = dst->type == PTR_TO_BTF_ID, s = src->type == PTR_TO_BTF_ID;

	if (!d && !s)
		return false;
	/* a constant or variable step of one typed pointer stays typed */
	if (is64 && d != s && (op == BPF_ADD || (op == BPF_SUB && d)) &&
	    (d ? src->type : dst->type) == SCALAR)
		return false;
	if (d)
		vreg_mark_unknown(dst);
	if (s)
		vreg_mark_unknown(src);
	return dst->type == SCALAR && src->type == SCALAR;
}

int vbtf_check_core_guard(struct venv *env, const struct bpf_insn *insn)
{
	const char *why = bpfrt_prog_core_guard(env->prog, env->insn);
	const struct vreg *r = NULL;

	if (!why)
		return 0;
	/* the offset as a constant (`r2 = off; r1 += r2`, as clang emits
	 * &file->f_path): a number, verified wherever it is used */
	if (insn->code == (BPF_ALU64 | BPF_MOV | BPF_K) || insn->code == (BPF_ALU | BPF_MOV | BPF_K))
		return 0;
	if (insn_class(insn) == BPF_LDX)
		r = reg_at(env, insn->src_reg);
	else if (insn->code == (BPF_ALU64 | BPF_ADD | BPF_K))
		r = reg_at(env, insn->dst_reg);
	if (r && r->type == PTR_TO_BTF_ID && env->btf && env->btf == env->prog->obj_btf)
		return 0;
	return verr(env, "%s", why);
}

void vbtf_rewrite_probe_loads(struct venv *env)
{
	for (uint32_t pc = 0; env->probe_loads && pc < env->n; pc++) {
		struct bpf_insn *insn = &env->prog->insns[pc];

		if (!env->probe_loads[pc] || insn_class(insn) != BPF_LDX)
			continue;
		insn->code = (uint8_t)(BPF_LDX | insn_size(insn) |
				       (insn_is_ldx_sext(insn) ? BPFRT_PROBE_MEMSX : BPFRT_PROBE_MEM));
	}
}
