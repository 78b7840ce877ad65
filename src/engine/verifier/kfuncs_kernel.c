/* Calls of Linux's kernel-object kfuncs and context casts
 * (helpers/kernel_kfuncs.h), verified by Linux's rules (check_kfunc_call;
 * own code):
 *
 *  - a pointer argument is a PTR_TO_BTF_ID whose struct at its offset is
 *    the prototype's (walking into members from the offset, as
 *    btf_struct_ids_match does: &file->f_path is a struct path), never
 *    NULL or possibly NULL, at no variable offset;
 *  - KF_TRUSTED_ARGS, KF_RCU and release arguments must be trusted
 *    (PTR_TRUSTED: a typed context argument, the current task, a kfunc's
 *    result, a constant step into one) or referenced: a pointer loaded
 *    from a typed struct is untrusted (the object it names may be gone);
 *  - KF_RELEASE releases the reference its pointer holds (an unreferenced
 *    pointer is refused), at offset 0, and every copy of it is gone;
 *  - KF_ACQUIRE results hold a reference (tracked with the ring buffer's
 *    and the dynptrs', so leaks are refused at exit), KF_RET_NULL results
 *    must be checked, and the NULL branch holds no reference;
 *  - KF_SLEEPABLE kfuncs only in sleepable programs;
 *  - privileged loads only (CAP_BPF; here pointer leaks allowed:
 *    bpf_cast_to_kern_ctx gives an address), and the program kinds of
 *    the kfunc's set (Linux checks both where it adds the call, reached
 *    or not; bpfrt where a path reaches it, which keeps the structural
 *    validator to structure).
 *
 * Typed results are of the program's own BTF (the object's, which names
 * the kernel structs it uses) or of the target BTF the typed arguments
 * come from, whichever the walk already uses. */
#include "verifier/vstate.h"
#include "helpers/kernel_kfuncs.h"
#include "core/prog_kind.h"

#include <bpf/btf.h>
#include <string.h>

#define NEST_MAX 16

const struct bpfrt_kernel_kfunc *vkfunc_kernel_of(const struct venv *env, int32_t id)
{
	const struct bpfrt_helper *h = bpfrt_prog_helper(env->prog, (uint32_t)id);

	return h ? bpfrt_kernel_kfunc_of(h->fn) : NULL;
}

static const char *struct_name(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf ? btf__type_by_id(btf, id) : NULL;
	const char *n = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	return n && *n ? n : "(anon)";
}

/* The BTF typed results live in: the walk's (typed arguments), else the
 * object's own, which the walk then uses. NULL: none. */
static const struct btf *typing_btf(struct venv *env, const char *name, int32_t *id)
{
	if (env->btf) {
		*id = btf__find_by_name_kind(env->btf, name, BTF_KIND_STRUCT);
		if (*id > 0)
			return env->btf;
		/* the program's own BTF can name it when the target's cannot
		 * (its struct ids would mix with the target's): refused */
		return NULL;
	}
	if (!env->prog->obj_btf)
		return NULL;
	*id = btf__find_by_name_kind(env->prog->obj_btf, name, BTF_KIND_STRUCT);
	if (*id <= 0)
		return NULL;
	env->btf = env->prog->obj_btf;
	return env->btf;
}

/* Is the struct at off of struct id (or a struct nested at exactly that
 * place) the one named want? Its name at off in *have. */
static bool struct_at_is(const struct btf *btf, uint32_t id, int64_t off, const char *want,
			 const char **have)
{
	*have = struct_name(btf, id);
	for (int depth = 0; depth < NEST_MAX; depth++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_member *m;
		bool descended = false;

		if (!t)
			return false;
		if (off == 0 && !strcmp(struct_name(btf, id), want))
			return true;
		if (!btf_is_struct(t) && !btf_is_union(t))
			return false;
		m = btf_members(t);
		for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
			uint32_t mid = vbtf_peel(btf, m->type);
			const struct btf_type *mt = mid ? btf__type_by_id(btf, mid) : NULL;
			int64_t moff = btf_member_bit_offset(t, i) / 8;
			int64_t msize = mid ? btf__resolve_size(btf, mid) : 0;

			if (!mt || btf_member_bitfield_size(t, i) || off < moff || off >= moff + msize ||
			    (!btf_is_struct(mt) && !btf_is_union(mt)))
				continue;
			id = mid;
			off -= moff;
			descended = true;
			break;
		}
		if (!descended)
			return false;
	}
	return false;
}

static int check_btf_arg(struct venv *env, const struct bpfrt_kernel_kfunc *k, int a,
			 uint32_t *release_ref)
{
	int regno = a + 1;
	const struct vreg *r = reg_at(env, regno);
	bool strict = k->flags & (BPFRT_KF_TRUSTED_ARGS | BPFRT_KF_RCU | BPFRT_KF_RELEASE);
	const char *have;

	if (vreg_is_zero(r) || (r->type == PTR_TO_BTF_ID && (r->flags & PTR_MAYBE_NULL)))
		return verr(env, "Possibly NULL pointer passed to trusted arg%d (kernel function %s "
			    "takes a struct %s)", a, k->name, k->arg_type[a]);
	if (r->type != PTR_TO_BTF_ID)
		return verr(env, "arg#%d R%d type=%s expected=ptr_%s (kernel function %s takes a "
			    "pointer to struct %s)%s%s", a, regno, vreg_type_str(r), k->arg_type[a],
			    k->name, k->arg_type[a], r->type == SCALAR && vbtf_scalar_note(env) ?
			    "; the context's arguments are numbers: " : "",
			    r->type == SCALAR && vbtf_scalar_note(env) ? vbtf_scalar_note(env) : "");
	if (!tnum_equals_const(r->var_off, 0))
		return verr(env, "R%d is ptr_%s with a variable offset: kernel function %s takes "
			    "the struct itself", regno, struct_name(env->btf, r->mem_size), k->name);
	if ((k->flags & BPFRT_KF_RELEASE) && !*release_ref) {
		if (!r->ref_obj_id)
			return verr(env, "release kernel function %s expects refcounted PTR_TO_BTF_ID "
				    "(R%d holds no reference)", k->name, regno);
		if (r->off)
			return verr(env, "R%d must have zero offset when passed to release func %s",
				    regno, k->name);
		*release_ref = r->ref_obj_id;
	}
	if (!struct_at_is(env->btf, r->mem_size, r->off, k->arg_type[a], &have))
		return verr(env, "kernel function %s args#%d expected pointer to STRUCT %s but R%d "
			    "has a pointer to STRUCT %s", k->name, a, k->arg_type[a], regno, have);
	if (strict && !(r->flags & PTR_TRUSTED) && !r->ref_obj_id)
		return verr(env, "R%d must be referenced or trusted (kernel function %s; a pointer "
			    "loaded from a struct is neither)", regno, k->name);
	return 0;
}

static int check_args(struct venv *env, const struct bpfrt_kernel_kfunc *k, uint32_t *release_ref,
		      int64_t *cast_id)
{
	int err;

	for (int a = 0; a < 5 && k->args[a]; a++) {
		int regno = a + 1;
		const struct vreg *r = reg_at(env, regno);
		uint64_t max = 0;

		if ((err = vcheck_reg_init(env, regno)))
			return err;
		switch (k->args[a]) {
		case BPFRT_KARG_SCALAR:
		case BPFRT_KARG_MEM_SIZE:
			if (r->type != SCALAR)
				return verr(env, "arg#%d R%d type=%s expected=scalar (kernel function %s)",
					    a, regno, vreg_type_str(r), k->name);
			break;
		case BPFRT_KARG_BTF:
			if ((err = check_btf_arg(env, k, a, release_ref)))
				return err;
			break;
		case BPFRT_KARG_MEM:
			/* the kfunc writes up to size bytes there */
			if (a == 4 || k->args[a + 1] != BPFRT_KARG_MEM_SIZE)
				return verr(env, "kernel function %s: memory argument %d has no size", k->name,
					    a);
			if ((err = vcheck_reg_init(env, regno + 1)) ||
			    (err = vcheck_size_arg(env, regno + 1, true, &max)))
				return err;
			if ((err = vcheck_helper_mem(env, regno, max, true,
						    vreg_is_const(reg_at(env, regno + 1)))))
				return err;
			break;
		case BPFRT_KARG_CTX:
			if (r->type != PTR_TO_CTX)
				return verr(env, "arg#%d R%d type=%s expected=ctx (kernel function %s)", a,
					    regno, vreg_type_str(r), k->name);
			if (r->off || !tnum_equals_const(r->var_off, 0))
				return verr(env, "dereference of modified ctx ptr R%d off=%d disallowed",
					    regno, r->off);
			break;
		case BPFRT_KARG_ANY:
			break;
		case BPFRT_KARG_CONST_BTF_ID:
			if (r->type != SCALAR || !vreg_is_const(r))
				return verr(env, "arg#%d R%d is not a known constant: kernel function %s "
					    "takes a BTF type id", a, regno, k->name);
			*cast_id = (int64_t)r->var_off.value;
			break;
		default:
			return verr(env, "kernel function %s: unknown argument kind %d", k->name,
				    k->args[a]);
		}
	}
	return 0;
}

/* bpf_rdonly_cast's result: an untrusted pointer to the struct the id
 * names in the walk's BTF (the object's, without typed arguments) */
static int mark_cast(struct venv *env, const struct bpfrt_kernel_kfunc *k, int64_t id,
		     struct vreg *r0)
{
	const struct btf *btf = env->btf ? env->btf : env->prog->obj_btf;
	const struct btf_type *t = btf && id > 0 && id <= UINT32_MAX ?
				   btf__type_by_id(btf, (uint32_t)id) : NULL;

	if (!t || !btf_is_struct(t))
		return verr(env, "kfunc %s type ID argument must be of a struct (id %lld%s)", k->name,
			    (long long)id, btf ? "" : ": the program has no BTF");
	env->btf = btf;
	mark_ptr(r0, PTR_TO_BTF_ID);
	r0->mem_size = (uint32_t)id;
	return 0;
}

int vkfunc_kernel_call(struct venv *env, int32_t id)
{
	const struct bpfrt_kernel_kfunc *k = vkfunc_kernel_of(env, id);
	struct vreg *r0 = reg_at(env, BPF_R0);
	uint32_t release_ref = 0, ref = 0;
	int64_t cast_id = 0;
	int32_t type_id = 0;
	int err;

	const char *why;

	if (!(env->prog->load_flags & BPFRT_F_ALLOW_PTR_LEAKS))
		return verr(env, "calling kernel functions are not allowed in unprivileged mode "
			    "(%s: only loads with BPFRT_F_ALLOW_PTR_LEAKS, Linux's CAP_BPF and "
			    "CAP_PERFMON)", k->name);
	why = bpfrt_kernel_kfunc_kind_refusal(k, env->prog->kind, env->prog->sec_name);
	if (why)
		return verr(env, "calling kernel function %s is not allowed: %s", k->name, why);
	if ((k->flags & BPFRT_KF_SLEEPABLE) && !(env->prog->sec_flags & BPFRT_SEC_SLEEPABLE))
		return verr(env, "program must be sleepable to call sleepable kfunc %s", k->name);
	if ((err = check_args(env, k, &release_ref, &cast_id)))
		return err;
	if (k->ret == BPFRT_KRET_BTF && !typing_btf(env, k->ret_type, &type_id))
		return verr(env, "kernel function %s returns a struct %s, which %s", k->name,
			    k->ret_type, env->btf ? "the typed arguments' BTF does not describe" :
			    "the program's BTF does not describe");
	if (release_ref) {
		if (!vrelease_ref_state(env->cur, release_ref))
			return verr(env, "R1 is an unacquired reference");
		vrelease_reference(env->cur, release_ref);
	}
	if ((k->flags & BPFRT_KF_ACQUIRE) && (err = vacquire_ref(env, &ref)))
		return err;
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(reg_at(env, r));
	switch (k->ret) {
	case BPFRT_KRET_VOID:
		mark_not_init(r0);
		break;
	case BPFRT_KRET_INT:
		vreg_mark_unknown(r0);
		break;
	case BPFRT_KRET_CTX_ADDR:
		/* no kernel struct behind bpfrt's context: its address is a
		 * number (privileged loads only), reads through it refused */
		vreg_mark_unknown(r0);
		break;
	case BPFRT_KRET_CAST:
		return mark_cast(env, k, cast_id, r0);
	case BPFRT_KRET_BTF:
		mark_ptr(r0, PTR_TO_BTF_ID);
		r0->mem_size = (uint32_t)type_id;
		r0->flags = PTR_TRUSTED;
		if (k->flags & BPFRT_KF_RET_NULL) {
			r0->flags |= PTR_MAYBE_NULL;
			r0->id = ref ? ref : ++env->id_gen;
		}
		r0->ref_obj_id = ref;
		break;
	}
	return 0;
}
