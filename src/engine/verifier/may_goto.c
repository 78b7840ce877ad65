/* may_goto: Linux's bounded loop escape (BPF_JMP | BPF_JCOND, src_reg
 * BPF_MAY_GOTO). At run time every may_goto of a run shares one budget
 * (core/run.h): an execution with budget left spends one and falls
 * through, one without takes the jump, and so does every later one. The
 * verifier cannot know which, so it walks both, as Linux's do_check: the
 * jump first (usually the loop's exit), the fall-through pushed with the
 * path's may_goto depth one higher. Before it is pushed, the fall-through
 * forgets the scalars no later branch depends on that changed since the
 * previous iteration (vwiden_imprecise, as an iterator's next), so an
 * accumulator does not make every iteration a new state.
 *
 * Convergence. Every may_goto is a prune point (facts.c). There, an
 * ancestor checkpoint at the same may_goto whose state covers the current
 * one (vstates_equal, not exact) ends the path if the path fell through a
 * may_goto since that checkpoint (a different depth): the walk already
 * goes on from a state covering this one. Two states whose depths differ
 * are never taken for an infinite loop (vmay_goto_same_depth).
 *
 * Why such a loop terminates. The convergence edge cur -> sl is the only
 * edge the walk adds against a state still being explored (as iter.c
 * argues for its own), and the path from sl to cur fell through a may_goto
 * at least once. A run that came round that loop forever would fall
 * through a may_goto on every round, but a run has at most
 * BPFRT_MAY_GOTO_BUDGET fall-throughs: after them every may_goto jumps,
 * and a run that only jumps follows edges of the proof whose loops the
 * walk had to prove by other means (their exits walked, an iterator's
 * convergence, or an exact repeat refused). Nested runs cannot refill the
 * budget of the run around them (core/exec.h puts the outer run's back).
 *
 * Reads. What sl's continuation reads is known only once it is explored,
 * but the checkpoints between sl and cur end with cur now. So a
 * convergence marks, on those checkpoints, every slot not written whole
 * between them and cur as read: they can never prune a state that differs
 * in a slot the loop may read later (pruning compares the slots read). */
#include "verifier/vstate.h"

int vdo_may_goto(struct venv *env, const struct bpf_insn *insn, uint32_t *next)
{
	const struct vstate *prev = vprevious_iteration(env, env->insn);
	struct vstate *fall = vpush_branch(env, env->insn + 1);

	if (!fall)
		return -ENOMEM;
	fall->may_goto_depth++;
	if (prev)
		vwiden_imprecise(env, prev, fall, env->insn + 1);
	*next = (uint32_t)insn_branch_target(insn, env->insn);
	return 0;
}

/* Every checkpoint from cur up to (not including) sl: the slots of each
 * frame that are not written whole between it and cur marked read (an
 * iterator's convergence needs the same, prune.c). */
void vmark_loop_reads(struct vstate *cur, const struct vstate *sl)
{
	for (uint32_t f = 0; f <= cur->curframe; f++) {
		uint64_t mask = ~cur->frames[f]->written;

		for (struct vstate *st = cur->parent; st && st != sl && mask; st = st->parent) {
			if (f > st->curframe)
				break;
			st->frames[f]->live_read |= mask;
			mask &= ~st->frames[f]->written;
		}
	}
}

bool vmay_goto_converged(struct venv *env, const struct vstate *sl, const struct vstate *cur,
			 uint32_t insn)
{
	if (!insn_is_may_goto(&env->insns[insn]) || sl->may_goto_depth == cur->may_goto_depth ||
	    !vstates_equal(env, sl, cur, insn, false) || !vis_ancestor(sl, cur))
		return false;
	return true;
}

bool vmay_goto_same_depth(const struct vstate *sl, const struct vstate *cur)
{
	return sl->may_goto_depth == cur->may_goto_depth;
}
