/* Path-sensitive verifier in the spirit of Linux's (own code).
 *
 * Every path through the program is walked with an abstract state: each
 * register is NOT_INIT, a scalar (tnum plus signed/unsigned 64- and 32-bit
 * bounds) or a typed pointer (context, stack of some frame, map, map
 * value, ringbuf memory, packet...) with a fixed and a variable offset;
 * each stack byte is uninitialised, data, zero or part of a spilled
 * register. Conditional jumps fork the state (refining both sides), so
 * loops are walked until their exit condition holds; states are saved at
 * jump targets and a later state that a fully explored saved one covers
 * ends its path (pruning). Covering ignores what cannot matter: scalars
 * whose value decides nothing from there on (facts.c's decides mask: no
 * branch, pointer arithmetic, call argument or checked return value they
 * flow into) and stack slots the saved state's walk never read before
 * writing them (read marks along the path's checkpoints, states.c). The
 * walk stops at BPFRT_VERIFY_MAX_PROCESSED instructions.
 *
 * Files (one concern each, shared declarations in vstate.h): verifier.c
 * (the entry point, program kinds and their contexts, the facts recorded
 * on success), walk.c (the main loop), log.c, states.c (state lifetime,
 * equivalence, joins), prune.c (checkpoints, loop detection), facts.c
 * (static facts: prune points, liveness, precision), mem.c (memory
 * accesses, pointer leaks), alu.c (ALU and conditional jumps), calls.c
 * (helpers, BPF calls, callbacks, tail calls, exit), scalar.c (scalar
 * bounds arithmetic and branch refinement), tnum.c. */
#include "verifier/vstate.h"
#include "verifier/validate.h"
#include "core/error.h"
#include "core/opts.h"
#include "helpers/callback.h"
#include "maps/map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- program kinds ---- */

/* The context of the program's kind, as the kind table describes it (a
 * value that is no kind, which only a harness setting prog->kind can
 * make, is verified as UNSPEC: caller-described memory). */
static void setup_ctx(struct venv *env, uint32_t ctx_size)
{
	const struct bpfrt_prog_kind_desc *kind = bpfrt_prog_kind_desc(env->prog->kind);

	env->kind = kind ? kind : bpfrt_prog_kind_desc(BPFRT_PROG_UNSPEC);
	env->ctx_rdonly = env->kind->ctx.rdonly;
	env->ctx_u64_only = env->kind->ctx.u64_only;
	switch (env->kind->ctx.sizing) {
	case BPFRT_CTX_FIXED:
		env->ctx_size = env->kind->ctx.size;
		break;
	case BPFRT_CTX_TP_ARGS:
		env->ctx_size = env->kind->ctx.size + 8 * bpfrt_prog_kind_tp_nargs(env->prog->attach_target);
		break;
	case BPFRT_CTX_CALLER:
		env->ctx_size = ctx_size;
		break;
	}
}

uint32_t bpfrt_verify_ctx_size(const struct bpfrt_prog *prog, uint32_t ctx_size, bool *rdonly)
{
	struct venv env = { .prog = (struct bpfrt_prog *)prog };

	setup_ctx(&env, ctx_size);
	if (rdonly)
		*rdonly = env.ctx_rdonly;
	return env.ctx_size;
}

static int init_state(struct venv *env)
{
	struct vstate *st = calloc(1, sizeof(*st));
	struct vreg *regs;

	if (!st)
		return -ENOMEM;
	st->frames[0] = vframe_new(frame_slots_for(env, 0));
	if (!st->frames[0]) {
		free(st);
		return -ENOMEM;
	}
	regs = st->frames[0]->regs;
	for (int i = 0; i < BPF_NREGS; i++)
		mark_not_init(&regs[i]);
	mark_ptr(&regs[BPF_R1], PTR_TO_CTX);
	vreg_mark_unknown(&regs[BPF_R2]); /* the run contract's second argument */
	mark_ptr(&regs[BPF_R10], PTR_TO_STACK);
	env->cur = st;
	return 0;
}

/* ---- entry ---- */

/* callx anywhere, reachable or not, as Linux refuses its opcode before
 * walking (step() refuses it on a walked path too). */
static int reject_callx(struct venv *env)
{
	for (uint32_t pc = 0; pc < env->n; pc++) {
		const struct bpf_insn *insn = &env->insns[pc];

		if (insn_is_callx(insn)) {
			env->insn = pc;
			return verr(env, "callx R%d: indirect calls are not supported by the verifier",
				    insn->dst_reg);
		}
		if (insn_is_lddw(insn))
			pc++;
	}
	return 0;
}

/* Frames no deeper than the walk showed they need; chain depths follow. */
static void record_stack_depths(struct venv *env)
{
	struct bpfrt_prog *prog = env->prog;
	bool changed = false;

	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		uint32_t d = (env->max_stack[s] + 7) & ~7u;

		if (d < prog->subprogs[s].stack_depth) {
			prog->subprogs[s].stack_depth = d;
			changed = true;
		}
	}
	if (!changed)
		return;
	/* callees come after... not necessarily: iterate to a fixed point
	 * (the call graph is acyclic and at most 8 deep) */
	for (int round = 0; round <= BPFRT_MAX_CALL_FRAMES; round++) {
		for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
			struct bpfrt_subprog *sp = &prog->subprogs[s];
			uint32_t chain = 0;

			for (uint32_t pc = sp->start; pc < sp->end; pc++) {
				int c = bpfrt_insn_callee(prog, pc);

				if (c >= 0 && prog->subprogs[c].chain_depth > chain)
					chain = prog->subprogs[c].chain_depth;
				if (insn_is_lddw(&prog->insns[pc]))
					pc++;
			}
			sp->chain_depth = sp->stack_depth + chain;
		}
	}
	prog->stack_depth = prog->subprogs[0].chain_depth;
}

/* The states saved at each insn (what a restart starts again without). */
static void free_explored(struct venv *env)
{
	for (uint32_t i = 0; env->aux && i < env->n; i++) {
		struct vstate *st = env->aux[i].explored;

		while (st) {
			struct vstate *next = st->next;

			vstate_free(st);
			st = next;
		}
		env->aux[i].explored = NULL;
	}
}

static void env_free(struct venv *env)
{
	free_explored(env);
	while (env->stack_cnt)
		vstate_free(env->stack[--env->stack_cnt].st);
	while (env->graveyard) {
		struct vstate *next = env->graveyard->next;

		vstate_free(env->graveyard);
		env->graveyard = next;
	}
	for (uint32_t i = 0; i < env->cb_site_cnt; i++) {
		for (uint32_t k = 0; k < env->cb_sites[i].cnt; k++)
			vstate_free(env->cb_sites[i].entries[k]);
		free(env->cb_sites[i].entries);
		free(env->cb_sites[i].inv);
	}
	vstate_free(env->cur);
	free(env->cb_sites);
	free(env->stack);
	free(env->aux);
	free(env->max_stack);
	free(env->probe_loads);
}

static int env_init(struct venv *env, struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts)
{
	env->prog = prog;
	env->insns = prog->insns;
	env->n = prog->insn_cnt;
	if (OPTS_GET(opts, log_buf, NULL) && OPTS_GET(opts, log_size, 0)) {
		env->log_buf = opts->log_buf;
		env->log_size = opts->log_size;
		env->log_level = OPTS_GET(opts, log_level, 0);
		if (!env->restarts)
			env->log_buf[0] = 0;
		else
			env->log_len = strlen(env->log_buf);
	}
	/* the kind first: the facts depend on it (what the exit's r0 must be) */
	setup_ctx(env, OPTS_GET(opts, ctx_size, 0));
	if (vbtf_setup_args(env))
		return -ENOMEM;
	if (!env->aux) { /* a restart keeps the facts (and no_join) */
		env->aux = calloc(env->n, sizeof(*env->aux));
		if (!env->aux || vcompute_insn_facts(env))
			return -ENOMEM;
	}
	env->max_stack = calloc(prog->subprog_cnt, sizeof(*env->max_stack));
	if (!env->max_stack)
		return -ENOMEM;
	return init_state(env);
}

int bpfrt_verify(struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts, bool record)
{
	struct venv env = { 0 };
	uint64_t processed = 0;
	int err;

	if (!prog->subprogs || !prog->insn_cnt)
		return bpfrt_err(-EINVAL, "%s: verify: program is not validated", prog->name);
	if (prog->kind == BPFRT_PROG_LSM && bpfrt_lsm_hook_disabled(prog->attach_target))
		return bpfrt_err(-EACCES, "%s: lsm/%s points to disabled hook %s (Linux keeps BPF "
				 "programs away from it)", prog->name, prog->attach_target,
				 prog->attach_target);
	for (;;) {
		/* one budget of BPFRT_VERIFY_MAX_PROCESSED, restarts included */
		env.processed = processed;
		err = env_init(&env, prog, opts);
		if (!err)
			err = reject_callx(&env);
		if (!err)
			err = vmap_check_prog_maps(&env);
		if (!err)
			err = vdo_check(&env);
		if (!err)
			err = vcheck_tail_call_stack(&env);
		processed = env.processed;
		if (err != -EAGAIN)
			break;
		/* again, with fewer joins (join_made_loop) */
		{
			struct venv next = { 0 };

			free_explored(&env);
			next.aux = env.aux;
			next.join_off = env.join_off;
			next.restarts = env.restarts;
			next.peak_states = env.peak_states;
			next.peak_bytes = env.peak_bytes;
			env.aux = NULL;
			env_free(&env);
			env = next;
		}
	}
	if (err == -ENOMEM) {
		err = bpfrt_err(-ENOMEM, "%s: verifier out of memory", prog->name);
	} else if (err) {
		/* as the kernel's: the message under the failing insn */
		vlog(&env, "%s\n", env.msg);
		vlog_totals(&env);
		err = bpfrt_err(err, "insn %u: %s", env.insn, env.msg);
	} else {
		vlog_totals(&env);
		if (record) {
			record_stack_depths(&env);
			prog->max_ctx_access = env.max_ctx_access;
			prog->ctx_size = env.ctx_size;
			prog->verified = true;
			vbtf_rewrite_probe_loads(&env);
			vsock_rewrite_ctx_loads(&env);
		}
	}
	if (opts) {
		OPTS_SET(opts, insn_processed, processed);
		OPTS_SET(opts, states, (uint32_t)env.total_states);
		OPTS_SET(opts, peak_states, (uint32_t)env.peak_states);
		OPTS_SET(opts, peak_state_bytes, env.peak_bytes);
		if (env.log_buf)
			OPTS_SET(opts, log_true_size, env.log_total + 1 > UINT32_MAX
				 ? UINT32_MAX : (uint32_t)env.log_total + 1);
	}
	env_free(&env);
	return err;
}
