/* The walk: one instruction at a time along the current path, branches
 * pushed on a stack and popped when a path ends, checkpoints at prune
 * points, the 1M processed-insn budget. */
#include "isa/liveness.h"
#include "verifier/vstate.h"
#include "verifier/validate.h"
#include "core/env.h"

#include <stdio.h>
#include <stdlib.h>

struct vstate *vpush_branch(struct venv *env, uint32_t insn)
{
	struct vstate *st;
	struct vstack_elem *e;

	if (env->stack_cnt == env->stack_cap) {
		uint32_t cap = env->stack_cap ? env->stack_cap * 2 : 64;
		struct vstack_elem *n = realloc(env->stack, cap * sizeof(*n));

		if (!n)
			return NULL;
		env->stack = n;
		env->stack_cap = cap;
	}
	st = vstate_copy(env->cur);
	if (!st)
		return NULL;
	if (st->parent)
		st->parent->branches++;
	e = &env->stack[env->stack_cnt++];
	e->st = st;
	e->insn = insn;
	e->prev_insn = env->insn;
	return st;
}

/* The address the loader wrote into the lddw that ref points at. */
static uint64_t map_ref_addr(const struct bpfrt_map_ref *ref)
{
	if (ref->kind == BPF_PSEUDO_MAP_VALUE)
		return (uint64_t)(uintptr_t)bpfrt_map_value_ptr(ref->map, 0) + ref->off;
	return (uint64_t)(uintptr_t)ref->map;
}

static int do_ld_imm64(struct venv *env, const struct bpf_insn *insn)
{
	struct vreg *dst = reg_at(env, insn->dst_reg);
	const struct bpfrt_map_ref *ref = env->aux[env->insn].map_ref;

	if (insn->src_reg == BPF_PSEUDO_FUNC) {
		int sp = bpfrt_insn_callee(env->prog, env->insn);

		if (sp < 0)
			return verr(env, "bad subprogram reference");
		mark_ptr(dst, PTR_TO_FUNC);
		dst->mem_size = (uint32_t)sp;
		return 0;
	}
	if (ref && ref->map) {
		/* The program runs the immediate, not the reference: typing
		 * it from the reference is only sound if the two agree. */
		if (insn->src_reg || insn_lddw_imm(insn) != map_ref_addr(ref))
			return verr(env, "lddw immediate %#llx does not match its map reference",
				    (unsigned long long)insn_lddw_imm(insn));
		if (vcheck_map_lock_kind(env, ref->map)) /* spin_lock.c */
			return -EACCES;
		if (ref->kind == BPF_PSEUDO_MAP_VALUE) {
			mark_ptr(dst, PTR_TO_MAP_VALUE);
			dst->off = (int32_t)ref->off;
		} else {
			mark_ptr(dst, CONST_PTR_TO_MAP);
		}
		dst->map = ref->map;
		return 0;
	}
	memset(dst, 0, sizeof(*dst));
	dst->type = SCALAR;
	vreg_mark_const(dst, insn_lddw_imm(insn));
	return 0;
}

/* Every register the instruction reads must hold a value on this path
 * (Linux's check_reg_arg for source operands). Checked here, on the paths
 * the walk takes, rather than by the structural validator, which could
 * only refuse a read that no CFG path initialises, even a dead one: this
 * refuses every reachable uninitialised read and nothing else. */
static int check_reads(struct venv *env, const struct bpf_insn *insn)
{
	const struct vframe *fr = env->cur->frames[env->cur->curframe];
	struct bpfrt_reg_use u;

	bpfrt_insn_reg_use(env->prog, insn, &u);
	/* a subprogram's exit hands r0 back as it is: vdo_exit decides */
	if (insn_is_exit(insn) && env->cur->curframe)
		u.use &= ~1u;
	for (int r = 0; r < BPF_NREGS; r++)
		if ((u.use & (1u << r)) && fr->regs[r].type == NOT_INIT)
			return verr(env, "R%d !read_ok (uninitialized register: no write on this path)",
				    r);
	return 0;
}

/* One instruction of the current state. Returns <0 error, 0 go on at
 * env->insn (already advanced), 1 path done. */
static int step(struct venv *env)
{
	const struct bpf_insn *insn = &env->insns[env->insn];
	uint32_t next = env->insn + 1;
	int err = check_reads(env, insn);

	if (!err && env->prog->core_guard_cnt)
		err = vbtf_check_core_guard(env, insn);
	if (err)
		return err;
	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		err = vdo_alu(env, insn);
		break;
	case BPF_LDX:
		err = vdo_ldx(env, insn);
		break;
	case BPF_ST:
		err = vdo_store(env, insn);
		break;
	case BPF_STX:
		err = insn_mode(insn) == BPF_ATOMIC ? vdo_atomic(env, insn) : vdo_store(env, insn);
		break;
	case BPF_LD:
		if (insn_mode(insn) == BPF_ABS || insn_mode(insn) == BPF_IND)
			return vdo_ld_abs(env, insn); /* ld_abs.c */
		err = do_ld_imm64(env, insn);
		next = env->insn + 2;
		break;
	default: /* JMP, JMP32 */
		env->jmps++;
		if (insn_is_exit(insn))
			return vdo_exit(env);
		/* callx (BPF_CALL|BPF_X) is no jump: its target is a run-time
		 * value, and what it calls could not be checked (Linux
		 * rejects it too). Trusted loads, which skip the verifier,
		 * still run it. */
		if (insn_is_callx(insn))
			return verr(env, "callx R%d: indirect calls are not supported by the verifier",
				    insn->dst_reg);
		if (insn_is_call(insn)) {
			err = vdo_call(env, insn);
			if (err == 1)
				return 0; /* entered a subprogram or callback */
			if (err == 2)
				return 1;
			break;
		}
		if (insn_op(insn) == BPF_JA) {
			next = (uint32_t)insn_branch_target(insn, env->insn);
			break;
		}
		if (insn_is_may_goto(insn)) {
			err = vdo_may_goto(env, insn, &next); /* may_goto.c */
			break;
		}
		err = vdo_cond_jmp(env, insn, &next);
		break;
	}
	if (err)
		return err;
	env->insn = next;
	return 0;
}

static bool pop_state(struct venv *env)
{
	struct vstack_elem *e;

	if (!env->stack_cnt)
		return false;
	e = &env->stack[--env->stack_cnt];
	env->cur = e->st;
	env->insn = e->insn;
	env->prev_insn = e->prev_insn;
	if (env->log_level)
		vlog(env, "\nfrom %u to %u:", e->prev_insn, e->insn);
	if (env->log_level)
		vlog_state(env, env->cur);
	return true;
}

static void end_path(struct venv *env)
{
	vupdate_branch_counts(env, env->cur->parent);
	vstate_free(env->cur);
	env->cur = NULL;
}

int vdo_check(struct venv *env)
{
	int err;

	/* the budget of the environment the program is loaded in */
	const uint64_t max_processed = env->prog->env ? env->prog->env->limits.max_processed_insns
						      : BPFRT_VERIFY_MAX_PROCESSED;

	env->insn = 0;
	for (;;) {
		if (++env->processed > max_processed) {
			snprintf(env->msg, sizeof(env->msg),
				 "BPF program is too large. Processed %llu insn",
				 (unsigned long long)max_processed);
			return -E2BIG;
		}
		if (env->aux[env->insn].prune_point) {
			err = vstate_is_visited(env, env->insn);
			if (err < 0)
				return err;
			if (err == 1) {
				if (env->log_level)
					vlog(env, "%u: safe\n", env->insn);
				end_path(env);
				if (!pop_state(env))
					return 0;
				continue;
			}
		}
		if (env->log_level)
			vlog_insn(env, env->insn);
		env->prev_insn = env->insn;
		err = step(env);
		if (err < 0)
			return err;
		if (env->log_level && env->cur && err == 0)
			vlog_insn_state(env, env->cur);
		if (err == 1) {
			end_path(env);
			if (!pop_state(env))
				return 0;
		}
	}
}
