#include "core/prog.h"
#include "core/env.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/stack_abi.h"
#include "core/extable.h"
#include "helpers/helpers.h"
#include "jit/backend.h"
#include "jit/execmem.h"
#include "maps/map.h"
#include "verifier/validate.h"
#include "verifier/verifier.h"

#include <stdlib.h>
#include <string.h>

/* Tail calls pass the context on: each prog array the program references
 * must be for programs of its context (maps/prog_array.c). */
static int use_prog_arrays(struct bpfrt_prog *prog)
{
	for (uint32_t i = 0; i < prog->map_ref_cnt; i++) {
		struct bpfrt_map *map = prog->map_refs[i].map;
		int err;

		if (!map || map->type != BPF_MAP_TYPE_PROG_ARRAY)
			continue;
		err = bpfrt_prog_array_use(map, prog);
		if (err)
			return err;
	}
	return 0;
}

static int neutralize_core_poisons(struct bpfrt_prog *prog);

int bpfrt_prog_prepare_unpublished(struct bpfrt_prog *prog, const struct bpf_insn *insns,
				   size_t insn_cnt, const struct bpfrt_prepare *how)
{
	const struct bpfrt_prepare none = { 0 };
	const struct bpfrt_prog_kind_desc *kind = bpfrt_prog_kind_desc(prog->kind);
	int err;

	if (!how)
		how = &none;
	if (!insns || insn_cnt == 0)
		return bpfrt_err(-EINVAL, "%s: empty program", prog->name);
	if (kind && kind->load_refused)
		return bpfrt_err(-EOPNOTSUPP, "%s: kind %s cannot load here: %s", prog->name,
				 kind->short_name, kind->load_refused);
	prog->kernel_only = kind && !kind->info.runs;
	if (!prog->env)
		prog->env = bpfrt_env_hold(how->env);
	if (prog->env == bpfrt_env_default())
		bpfrt_helpers_init(); /* Linux's helpers, where ids are still free */
	if (insn_cnt > prog->env->limits.max_insns)
		return bpfrt_err(-E2BIG, "%s: %zu instructions, limit is %u",
				 prog->name, insn_cnt, prog->env->limits.max_insns);
	prog->insns = malloc(insn_cnt * sizeof(*insns));
	if (!prog->insns)
		return bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
	memcpy(prog->insns, insns, insn_cnt * sizeof(*insns));
	prog->insn_cnt = (uint32_t)insn_cnt;
	err = bpfrt_env_snapshot(prog->env, prog);
	if (!err)
		err = how->verify ? bpfrt_validate_for_verifier(prog) : bpfrt_validate(prog);
	prog->verified = false;
	prog->max_ctx_access = 0;
	prog->ctx_size = 0;
	if (!err && how->verify)
		err = bpfrt_verify(prog, how->verify, true);
	if (!err && prog->core_poison_cnt)
		err = neutralize_core_poisons(prog);
	if (!err)
		err = bpfrt_prog_rewrite_ld_abs(prog);
	/* the host decides the private stack (core/stack_abi.h); without
	 * one there are none */
	prog->privstack = false;
	if (!err && bpfrt_stack_host)
		err = bpfrt_stack_host->prog_init(prog);
	if (!err)
		err = use_prog_arrays(prog);
	if (!err && how->jit) {
		const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();

		err = be ? be->compile(prog)
			 : bpfrt_err(-ENOTSUP, "%s: no JIT backend for this machine", prog->name);
	}
	if (err)
		bpfrt_prog_unprepare(prog);
	return err;
}

void bpfrt_prog_set_loaded(struct bpfrt_prog *prog)
{
	__atomic_store_n(&prog->loaded, true, __ATOMIC_RELEASE);
}

int bpfrt_prog_prepare(struct bpfrt_prog *prog, const struct bpf_insn *insns,
		       size_t insn_cnt, const struct bpfrt_prepare *how)
{
	int err = bpfrt_prog_prepare_unpublished(prog, insns, insn_cnt, how);

	if (!err)
		bpfrt_prog_set_loaded(prog);
	return err;
}

void bpfrt_prog_unprepare(struct bpfrt_prog *prog)
{
	__atomic_store_n(&prog->loaded, false, __ATOMIC_RELEASE);
	if (bpfrt_stack_host)
		bpfrt_stack_host->prog_fini(prog);
	/* no fault may be looked up in the image once it is gone */
	bpfrt_extable_free(prog->jit_extable);
	prog->jit_extable = NULL;
	bpfrt_execmem_free(prog->jit_mem);
	free(prog->jit_insn_off);
	free(prog->insn_subprog);
	free(prog->subprogs);
	free(prog->insns);
	free(prog->helpers);
	prog->helpers = NULL;
	prog->helper_cnt = 0;
	prog->jit_mem = NULL;
	prog->jit_func = NULL;
	prog->jit_insn_off = NULL;
	prog->jit_len = 0;
	prog->insn_subprog = NULL;
	prog->subprogs = NULL;
	prog->subprog_cnt = 0;
	prog->insns = NULL;
	prog->insn_cnt = 0;
}

int bpfrt_prog_load(const struct bpf_insn *insns, size_t insn_cnt,
		    const struct bpfrt_prog_load_opts *opts,
		    struct bpfrt_prog **out)
{
	struct bpfrt_verify_opts vopts = {
		.sz = sizeof(vopts), .log_buf = OPTS_GET(opts, log_buf, NULL),
		.log_size = OPTS_GET(opts, log_size, 0),
		.log_level = OPTS_GET(opts, log_level, 0),
		.ctx_size = OPTS_GET(opts, ctx_size, 0),
	};
	const enum bpfrt_prog_kind kind = OPTS_GET(opts, kind, BPFRT_PROG_UNSPEC);
	const struct bpfrt_prepare how = {
		.jit = OPTS_GET(opts, jit, false),
		/* raw instructions are trusted unless asked (bpfrt/prog.h) */
		.verify = OPTS_GET(opts, verify, false) || kind != BPFRT_PROG_UNSPEC ? &vopts : NULL,
		.env = OPTS_GET(opts, env, NULL),
	};
	const char *name = OPTS_GET(opts, name, NULL);
	struct bpfrt_prog *prog;
	int err;

	bpfrt_err_clear();
	if (!out)
		return bpfrt_err(-EINVAL, "prog_load: no output pointer");
	*out = NULL;
	if (!OPTS_VALID(opts, bpfrt_prog_load_opts))
		return bpfrt_env_log_failure(how.env, -EINVAL);
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return bpfrt_env_log_failure(how.env, bpfrt_err(-ENOMEM, "prog_load: out of memory"));
	snprintf(prog->name, sizeof(prog->name), "%s", name ? name : "prog");
	prog->kind = kind;
	err = bpfrt_prog_set_flags(prog, OPTS_GET(opts, flags, 0));
	if (!err && !bpfrt_prog_kind_desc((int)kind))
		err = bpfrt_err(-EINVAL, "prog_load: %s: kind %d is no program kind", prog->name,
				(int)kind);
	if (!err)
		err = bpfrt_prog_prepare(prog, insns, insn_cnt, &how);
	if (err) {
		bpfrt_env_log_failure(prog->env ? prog->env : how.env, err);
		bpfrt_env_put(prog->env);
		free(prog);
		return err;
	}
	*out = prog;
	return 0;
}

static int add_insn_note(struct bpfrt_prog *prog, struct bpfrt_core_poison **list,
			 uint32_t *cnt, uint32_t insn, const char *msg)
{
	struct bpfrt_core_poison *n = realloc(*list, (*cnt + 1) * sizeof(*n));

	if (!n)
		return bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
	*list = n;
	n[*cnt].insn = insn;
	n[*cnt].msg = strdup(msg);
	if (!n[*cnt].msg)
		return bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
	(*cnt)++;
	return 0;
}

int bpfrt_prog_add_core_poison(struct bpfrt_prog *prog, uint32_t insn, const char *msg)
{
	return add_insn_note(prog, &prog->core_poisons, &prog->core_poison_cnt, insn, msg);
}

int bpfrt_prog_add_core_guard(struct bpfrt_prog *prog, uint32_t insn, const char *msg)
{
	return add_insn_note(prog, &prog->core_guards, &prog->core_guard_cnt, insn, msg);
}

const char *bpfrt_prog_core_guard(const struct bpfrt_prog *prog, uint32_t insn)
{
	for (uint32_t i = 0; i < prog->core_guard_cnt; i++)
		if (prog->core_guards[i].insn == insn)
			return prog->core_guards[i].msg;
	return NULL;
}

void bpfrt_prog_clear_core_poisons(struct bpfrt_prog *prog)
{
	for (uint32_t i = 0; i < prog->core_poison_cnt; i++)
		free(prog->core_poisons[i].msg);
	free(prog->core_poisons);
	prog->core_poisons = NULL;
	prog->core_poison_cnt = 0;
	for (uint32_t i = 0; i < prog->core_guard_cnt; i++)
		free(prog->core_guards[i].msg);
	free(prog->core_guards);
	prog->core_guards = NULL;
	prog->core_guard_cnt = 0;
}

const char *bpfrt_prog_core_poison(const struct bpfrt_prog *prog, uint32_t insn)
{
	for (uint32_t i = 0; i < prog->core_poison_cnt; i++)
		if (prog->core_poisons[i].insn == insn)
			return prog->core_poisons[i].msg;
	return NULL;
}

/* A verified program's poisoned CO-RE instructions are dead code (the
 * verifier refuses any it reaches): no-ops from here on, so that the JIT
 * and the interpreter never see the poison. A trusted load has no such
 * proof: refused, naming the relocation. */
static int neutralize_core_poisons(struct bpfrt_prog *prog)
{
	for (uint32_t i = 0; i < prog->insn_cnt; i++) {
		struct bpf_insn *insn = &prog->insns[i];

		if (insn->code != (BPF_JMP | BPF_CALL) || insn->imm != BPFRT_CORE_POISON ||
		    insn->src_reg)
			continue;
		if (!prog->verified) {
			const char *why = bpfrt_prog_core_poison(prog, i);

			return bpfrt_err(-EINVAL, "%s: insn %u: %s; a trusted load is not verified, "
					 "so the instruction cannot be proven dead", prog->name, i,
					 why ? why : "poisoned CO-RE relocation");
		}
		*insn = (struct bpf_insn){ .code = BPF_JMP | BPF_JA };
	}
	return 0;
}

static void prog_destroy(struct bpfrt_prog *prog)
{
	struct bpfrt_object *obj = prog->obj;

	bpfrt_prog_unprepare(prog);
	free(prog->map_refs);
	free(prog->lines);
	free(prog->lines_pool);
	bpfrt_prog_clear_core_poisons(prog);
	free(prog->sec_name);
	free(prog->attach_target);
	bpfrt_env_put(prog->env);
	free(prog);
	/* the maps it used (its object's) may go now if nothing else uses them */
	if (obj)
		bpfrt_object_prog_gone(obj);
}

void bpfrt_prog_hold(struct bpfrt_prog *prog)
{
	__atomic_add_fetch(&prog->users, 2, __ATOMIC_ACQ_REL);
}

void bpfrt_prog_release(struct bpfrt_prog *prog)
{
	/* 1: no user left and bpfrt_prog_free was called */
	if (__atomic_sub_fetch(&prog->users, 2, __ATOMIC_ACQ_REL) == 1)
		prog_destroy(prog);
}

void bpfrt_prog_free(struct bpfrt_prog *prog)
{
	if (!prog)
		return;
	/* a program still in a prog array slot, attached or in a nest list
	 * is freed when its last user lets it go (as Linux's references) */
	if (__atomic_fetch_or(&prog->users, 1, __ATOMIC_ACQ_REL) == 0)
		prog_destroy(prog);
}

int bpfrt_prog_set_flags(struct bpfrt_prog *prog, uint32_t flags)
{
	const uint32_t both = BPFRT_F_DISABLE_PRIVATE_STACK | BPFRT_F_PRIVATE_STACK;
	const uint32_t known = both | BPFRT_F_ALLOW_PTR_LEAKS;

	if (!prog)
		return bpfrt_err(-EINVAL, "prog_set_flags: NULL program");
	if (prog->insns)
		return bpfrt_err(-EBUSY, "%s: flags are set before load", prog->name);
	if (flags & ~known)
		return bpfrt_err(-EINVAL, "%s: unknown load flags 0x%x", prog->name, flags & ~known);
	if ((flags & both) == both)
		return bpfrt_err(-EINVAL, "%s: private stack both forced on and disabled", prog->name);
	prog->load_flags = flags;
	return 0;
}

uint32_t bpfrt_prog_flags(const struct bpfrt_prog *prog)
{
	return prog ? prog->load_flags : 0;
}

int bpfrt_prog_subprog_at(const struct bpfrt_prog *prog, uint32_t start)
{
	for (uint32_t i = 0; i < prog->subprog_cnt; i++)
		if (prog->subprogs[i].start == start)
			return (int)i;
	return -1;
}

const char *bpfrt_prog_name(const struct bpfrt_prog *prog)
{
	return prog->name;
}

const struct bpf_insn *bpfrt_prog_insns(const struct bpfrt_prog *prog, size_t *cnt)
{
	if (cnt)
		*cnt = prog->insn_cnt;
	return prog->insns;
}

const void *bpfrt_prog_jited(const struct bpfrt_prog *prog, size_t *len)
{
	if (len)
		*len = prog->jit_func ? prog->jit_len : 0;
	return prog->jit_func ? (const void *)prog->jit_func : NULL;
}

uint32_t bpfrt_prog_stack_depth(const struct bpfrt_prog *prog)
{
	return prog->stack_depth;
}

uint32_t bpfrt_prog_subprog_cnt(const struct bpfrt_prog *prog)
{
	return prog->subprog_cnt;
}

int bpfrt_prog_subprog_info(const struct bpfrt_prog *prog, uint32_t idx,
			    uint32_t *start_insn, uint32_t *stack_depth)
{
	if (idx >= prog->subprog_cnt)
		return bpfrt_err(-ENOENT, "%s: no subprogram %u", prog->name, idx);
	if (start_insn)
		*start_insn = prog->subprogs[idx].start;
	if (stack_depth)
		*stack_depth = prog->subprogs[idx].stack_depth;
	return 0;
}

int bpfrt_prog_dump_xlated(const struct bpfrt_prog *prog, FILE *out)
{
	return bpfrt_disasm(prog->insns, prog->insn_cnt, out);
}

int bpfrt_prog_verify(struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts)
{
	bpfrt_err_clear();
	if (!prog || !prog->insns)
		return bpfrt_err(-EINVAL, "prog_verify: no loaded program");
	if (!OPTS_VALID(opts, bpfrt_verify_opts))
		return -EINVAL;
	return bpfrt_verify(prog, opts, false);
}

int bpfrt_prog_check_ctx(const struct bpfrt_prog *prog, uint32_t ctx_size, const char *target)
{
	if (!prog->verified || prog->max_ctx_access <= ctx_size)
		return 0;
	return bpfrt_err(-EINVAL, "attach %s: the program reads %u bytes of context, %s provides %u",
			 prog->name, prog->max_ctx_access, target, ctx_size);
}

int bpfrt_prog_check_kind(const struct bpfrt_prog *prog, int kind, const char *target)
{
	if (!prog->verified || bpfrt_prog_kinds_share_ctx(prog->kind, kind))
		return 0;
	return bpfrt_err(-EINVAL, "attach %s: verified as %s, %s %s gives another context",
			 prog->name, bpfrt_prog_kind_str(prog->kind), bpfrt_prog_kind_str(kind),
			 target);
}

uint32_t bpfrt_prog_ctx_access(const struct bpfrt_prog *prog)
{
	return prog->max_ctx_access;
}

uint32_t bpfrt_prog_ctx_size(const struct bpfrt_prog *prog)
{
	return prog->verified ? prog->ctx_size : 0;
}

bool bpfrt_prog_verified(const struct bpfrt_prog *prog)
{
	return prog->verified;
}
