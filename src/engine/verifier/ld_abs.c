/* Legacy packet loads (BPF_LD | BPF_ABS / BPF_IND, sizes b, h, w), as
 * Linux's check_ld_abs models them: an implicit context in r6 (the
 * context pointer itself, no offset), r0 = the packet's bytes at imm (ABS)
 * or at src + imm (IND), big-endian, zero-extended, r1-r5 clobbered. A
 * load past the packet ends the current function at once with r0 = 0
 * (the hidden exit of Linux's rewrite, which a subprogram's caller sees
 * as a return of 0), so the walk goes on along two paths: that exit, and
 * the load's success. After verification core/ld_abs_rewrite.c turns each
 * into a call of an internal helper, so no engine sees the opcode. */
#include "verifier/vstate.h"

/* Linux's may_access_skb: the kinds whose context is an skb. */
static bool kind_loads_packet_abs(int kind)
{
	return kind == BPFRT_PROG_SOCKET || kind == BPFRT_PROG_SCHED_CLS ||
	       kind == BPFRT_PROG_SCHED_ACT;
}

int vdo_ld_abs(struct venv *env, const struct bpf_insn *insn)
{
	struct vreg *r6 = reg_at(env, BPF_R6);
	struct vstate *ok;
	int err;

	if (!kind_loads_packet_abs(env->prog->kind))
		return verr(env, "BPF_LD_[ABS|IND] instructions not allowed for this program type "
			    "(socket and tc programs only)");
	if ((err = vcheck_reg_init(env, BPF_R6)))
		return err;
	if (env->cur->nrefs)
		return verr(env, "BPF_LD_[ABS|IND] cannot be mixed with socket references");
	if (vlock_held(env))
		return verr(env, "BPF_LD_[ABS|IND] cannot be used inside bpf_spin_lock-ed region");
	if (insn_mode(insn) == BPF_IND) {
		const struct vreg *src = reg_at(env, insn->src_reg);

		if ((err = vcheck_reg_init(env, insn->src_reg)))
			return err;
		if (src->type != SCALAR)
			return verr(env, "R%d type=%s expected=scalar (the packet offset of "
				    "BPF_LD_IND)", insn->src_reg, vreg_type_str(src));
	}
	if (r6->type != PTR_TO_CTX)
		return verr(env, "at the time of BPF_LD_ABS|IND R6 != pointer to skb");
	if (r6->off || !tnum_equals_const(r6->var_off, 0))
		return verr(env, "dereference of modified ctx ptr R6 off=%d disallowed", r6->off);

	/* the load succeeds: r0 unknown (Linux does not bound it by the
	 * size), walked later */
	ok = vpush_branch(env, env->insn + 1);
	if (!ok)
		return -ENOMEM;
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(&ok->frames[ok->curframe]->regs[r]);
	vreg_mark_unknown(&ok->frames[ok->curframe]->regs[BPF_R0]);

	/* ...or it fails: this function returns 0 now */
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(reg_at(env, r));
	memset(reg_at(env, BPF_R0), 0, sizeof(struct vreg));
	reg_at(env, BPF_R0)->type = SCALAR;
	vreg_mark_const(reg_at(env, BPF_R0), 0);
	if (env->log_level)
		vlog(env, "%u: BPF_LD_[ABS|IND] out of the packet: the function returns 0\n",
		     env->insn);
	return vdo_exit(env);
}
