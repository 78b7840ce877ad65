/* Pruning and checkpoints: at each prune point the current state is
 * compared with the states saved there; a fully explored one that covers
 * it ends the path, an ancestor it repeats is an infinite loop (or a join
 * that made one), many states there get joined, and a new checkpoint is
 * saved (sparsely while a long loop runs). */
#include "verifier/vstate.h"

#include <stdlib.h>

#define MAX_STATES_PER_INSN 256

/* Frees the evicted states whose paths all ended (no path descends from
 * them any more, and nothing compares against them). */
static void sweep_graveyard(struct venv *env)
{
	for (struct vstate **link = &env->graveyard; *link;) {
		struct vstate *st = *link;

		if (st->branches) {
			link = &st->next;
			continue;
		}
		*link = st->next;
		vstate_unkept(env, st);
		vstate_free(st);
	}
	env->graveyard_done = 0;
}

void vupdate_branch_counts(struct venv *env, struct vstate *st)
{
	while (st) {
		if (--st->branches)
			break;
		if (st->evicted)
			env->graveyard_done++;
		else
			vstate_pack(env, st);
		st = st->parent;
	}
	if (env->graveyard_done >= 64)
		sweep_graveyard(env);
}

#define JOIN_THRESHOLD 8
/* While a loop runs, a checkpoint at most every this many jumps or insns
 * (each iteration's state differs, few of them help pruning) */
#define LOOP_CP_JMPS  20
#define LOOP_CP_INSNS 100

/* A joined state came round to an earlier state of its own path: the
 * join, not the program, made the loop repeat, so it proves nothing about
 * termination. Joins are switched off in that loop (and where the join
 * was) and verification starts over (-EAGAIN). */
static int join_made_loop(struct venv *env, uint32_t insn)
{
	uint32_t lo = insn < env->prev_insn ? insn : env->prev_insn;
	uint32_t hi = insn < env->prev_insn ? env->prev_insn : insn;

	for (uint32_t i = lo; i <= hi && i < env->n; i++)
		env->aux[i].no_join = true;
	env->aux[env->cur->join_insn].no_join = true;
	if (++env->restarts > 4)
		env->join_off = true;
	vlog(env, "%u: a joined state repeats (loop from %u, join at %u): verifying again "
	     "without joins %s\n", insn, env->prev_insn, env->cur->join_insn,
	     env->join_off ? "anywhere" : "there");
	return -EAGAIN;
}

/* A hash of what vstates_equal(exact) compares in the current frame's live
 * registers: equal states hash equal, so the loop check against a long
 * loop's earlier iterations mostly skips the full comparison. */
static uint64_t loop_hash(struct venv *env, const struct vstate *st, uint32_t insn)
{
	const struct vframe *f = st->frames[st->curframe];
	uint16_t live = env->aux[insn].live;
	uint64_t h = 0xcbf29ce484222325ull ^ st->curframe;

	for (int r = 0; r < BPF_NREGS; r++) {
		const struct vreg *v = vframe_reg(f, r); /* a checkpoint's: packed */
		uint64_t w[6];

		if (!(live & REGMASK(r)) || v->type == NOT_INIT)
			continue;
		w[0] = v->type | (uint64_t)v->flags << 8 | (uint64_t)v->frameno << 16 |
		       (uint64_t)(uint32_t)v->off << 32;
		w[1] = v->var_off.value ^ (v->var_off.mask * 31);
		w[2] = (uint64_t)v->smin ^ ((uint64_t)v->smax * 7);
		w[3] = v->umin ^ (v->umax * 13);
		w[4] = ((uint64_t)(uint32_t)v->s32min << 32 | (uint32_t)v->s32max) ^
		       ((uint64_t)v->u32min << 32 | v->u32max);
		w[5] = (uint64_t)(uintptr_t)v->map ^ v->mem_size ^ (uint64_t)v->range << 32;
		for (int k = 0; k < 6; k++)
			h = (h ^ w[k] ^ (uint64_t)r) * 0x100000001b3ull;
	}
	return h;
}

static void evict_state(struct venv *env, struct vstate *sl)
{
	if (sl->branches) {
		/* still the parent of a path being walked */
		sl->evicted = true;
		sl->next = env->graveyard;
		env->graveyard = sl;
	} else {
		vstate_unkept(env, sl);
		vstate_free(sl);
	}
}

/* The current path goes on as old's walk did: what that walk read, this
 * path reads (its checkpoints need the same slots). */
static void propagate_reads(struct venv *env, const struct vstate *old)
{
	for (uint32_t f = 0; f <= old->curframe; f++)
		vstack_mark_read(env, f, old->frames[f]->live_read);
}

/* 1: a fully explored state covers the current one (prune), 0: go on. */
int vstate_is_visited(struct venv *env, uint32_t insn)
{
	struct vstate *cp, *cur = env->cur, *best = NULL, **link, **oldest = NULL;
	uint32_t cnt = 0, done = 0, anc = 0;
	uint64_t hash = 0;
	int best_d = 0;

	for (link = &env->aux[insn].explored; *link;) {
		struct vstate *sl = *link;

		if (sl->branches) {
			/* an ancestor: the path went round a loop; through an
			 * active iterator's next, to a state covering this
			 * one, it converged (iter.c says why it terminates) */
			if (viter_converged(env, sl, cur, insn) ||
			    vmay_goto_converged(env, sl, cur, insn)) {
				vmark_loop_reads(cur, sl);
				sl->hits++;
				return 1;
			}
			/* hashes are computed when first needed (most
			 * checkpoints never see their loop come round) */
			if (!anc)
				hash = loop_hash(env, cur, insn) | 1;
			if (!sl->hash)
				sl->hash = loop_hash(env, sl, insn) | 1;
			if (sl->hash == hash && vmay_goto_same_depth(sl, cur) &&
			    vstates_equal(env, sl, cur, insn, true)) {
				if (cur->joined && !env->join_off)
					return join_made_loop(env, insn);
				return verr(env, "infinite loop detected at insn %u", insn);
			}
			anc++;
			oldest = link;
			link = &sl->next;
			cnt++;
			continue;
		}
		if (vstate_covers(env, sl, cur, insn)) {
			sl->hits++;
			propagate_reads(env, sl);
			return 1;
		}
		sl->misses++;
		if (sl->misses > sl->hits * 3 + 3 + JOIN_THRESHOLD) {
			/* rarely useful: stop comparing against it */
			*link = sl->next;
			evict_state(env, sl);
			continue;
		}
		link = &sl->next;
		cnt++;
		done++;
	}
	/* the closest fully explored state, only where a join is made (the
	 * distances were most of the time of a long walk) */
	if (cnt >= JOIN_THRESHOLD && !env->join_off && !env->aux[insn].no_join)
		for (struct vstate *sl = env->aux[insn].explored; sl; sl = sl->next) {
			int d = sl->branches ? -1 : vjoin_distance(env, sl, cur, insn);

			if (d >= 0 && (!best || d < best_d)) {
				best = sl;
				best_d = d;
			}
		}
	if (best) {
		vjoin_states(env, best, cur, insn, cnt >= 4 * JOIN_THRESHOLD);
		cur->joined = true;
		cur->join_insn = insn;
		if (vstate_covers(env, best, cur, insn)) {
			best->hits++;
			propagate_reads(env, best);
			return 1;
		}
	}
	/* The cap counts fully explored states: without checkpoints, a loop
	 * running past it would walk every later iteration again for each
	 * path that rejoins it. A long loop's own iterations (ancestors) get
	 * a checkpoint only every so many jumps or insns, replacing the
	 * oldest, so they stay few. */
	if (done >= MAX_STATES_PER_INSN)
		return 0; /* keep walking without a new checkpoint */
	if (anc >= MAX_STATES_PER_INSN) {
		struct vstate *old;

		if (env->jmps - env->prev_jmps < LOOP_CP_JMPS &&
		    env->processed - env->prev_processed < LOOP_CP_INSNS)
			return 0;
		old = *oldest;
		*oldest = old->next;
		evict_state(env, old);
	}
	cp = vstate_save(env, cur, insn);
	if (!cp)
		return -ENOMEM;
	cp->hash = hash;         /* 0 if not computed yet */
	for (uint32_t f = 0; f <= cur->curframe; f++) {
		cp->frames[f]->live_read = 0;
		cur->frames[f]->written = 0; /* from here on: since cp */
	}
	cp->branches = 1;
	cp->parent = cur->parent;
	cur->parent = cp;
	cp->next = env->aux[insn].explored;
	env->aux[insn].explored = cp;
	env->total_states++;
	vstate_kept(env, cp);
	env->prev_jmps = env->jmps;
	env->prev_processed = env->processed;
	return 0;
}
