#include "core/prog.h"
#include "attach/run.h"
#include "core/env.h"
#include "core/error.h"
#include "stack/privstack.h"
#include "core/rcu.h"
#include "core/run.h"
#include "helpers/helpers.h"
#include "interp/interp.h"
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

int bpfrt_prog_prepare_unpublished(struct bpfrt_prog *prog, const struct bpf_insn *insns,
				   size_t insn_cnt, bool jit)
{
	int err;

	if (!insns || insn_cnt == 0)
		return bpfrt_err(-EINVAL, "%s: empty program", prog->name);
	if (!prog->env)
		prog->env = bpfrt_env_hold(NULL);
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
		err = bpfrt_validate(prog);
	prog->verified = false;
	prog->max_ctx_access = 0;
	prog->ctx_size = 0;
	if (!err && prog->verify_opts)
		err = bpfrt_verify(prog, prog->verify_opts, true);
	if (!err)
		err = bpfrt_privstack_prog_init(prog);
	if (!err)
		err = use_prog_arrays(prog);
	if (!err && jit) {
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
		       size_t insn_cnt, bool jit)
{
	int err = bpfrt_prog_prepare_unpublished(prog, insns, insn_cnt, jit);

	if (!err)
		bpfrt_prog_set_loaded(prog);
	return err;
}

void bpfrt_prog_unprepare(struct bpfrt_prog *prog)
{
	__atomic_store_n(&prog->loaded, false, __ATOMIC_RELEASE);
	bpfrt_privstack_prog_fini(prog);
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
	struct bpfrt_verify_opts vopts;
	struct bpfrt_prog *prog;
	int err;

	bpfrt_err_clear();
	if (!out)
		return bpfrt_err(-EINVAL, "prog_load: no output pointer");
	*out = NULL;
	if (opts && opts->sz < sizeof(size_t))
		return bpfrt_err(-EINVAL, "prog_load: opts->sz not set");
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return bpfrt_err(-ENOMEM, "prog_load: out of memory");
	snprintf(prog->name, sizeof(prog->name), "%s",
		 opts && opts->name ? opts->name : "prog");
	if (opts && opts->sz >= offsetof(struct bpfrt_prog_load_opts, flags) + sizeof(opts->flags))
		err = bpfrt_prog_set_flags(prog, opts->flags);
	else
		err = 0;
	if (err) {
		free(prog);
		return err;
	}
	if (opts && opts->sz >= offsetof(struct bpfrt_prog_load_opts, log_level) +
				sizeof(opts->log_level)) {
		if (!bpfrt_prog_kind_desc((int)opts->kind)) {
			err = bpfrt_err(-EINVAL, "prog_load: %s: kind %d is no program kind",
					prog->name, (int)opts->kind);
			free(prog);
			return err;
		}
		prog->kind = opts->kind;
		if (opts->verify || opts->kind != BPFRT_PROG_UNSPEC) {
			vopts = (struct bpfrt_verify_opts){
				.sz = sizeof(vopts), .log_buf = opts->log_buf,
				.log_size = opts->log_size, .log_level = opts->log_level,
				.ctx_size = opts->ctx_size,
			};
			prog->verify_opts = &vopts;
		}
	}
	err = bpfrt_prog_prepare(prog, insns, insn_cnt, opts && opts->jit);
	prog->verify_opts = NULL;
	if (err) {
		bpfrt_env_put(prog->env);
		free(prog);
		return err;
	}
	*out = prog;
	return 0;
}

static void prog_destroy(struct bpfrt_prog *prog)
{
	struct bpfrt_object *obj = prog->obj;

	bpfrt_prog_unprepare(prog);
	free(prog->map_refs);
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

/* Direct runs in progress on this thread, innermost first (frames live on
 * the callers' stacks): the recursion guard and the "nested" test. */
struct run_frame {
	const struct bpfrt_prog *prog;
	struct run_frame *outer;
};

static __thread struct run_frame *run_top __attribute__((tls_model("initial-exec")));

static bool prog_running_here(const struct bpfrt_prog *prog)
{
	for (const struct run_frame *f = run_top; f; f = f->outer)
		if (f->prog == prog)
			return true;
	for (uint32_t i = 0; i < bpfrt_attach_tls.depth && i < BPFRT_ATTACH_MAX_NEST; i++)
		if (bpfrt_attach_tls.active[i] == prog)
			return true;
	return false;
}

static int run_refused(const struct bpfrt_prog *prog)
{
	atomic_fetch_add_explicit(&((struct bpfrt_prog *)prog)->attach_misses, 1,
				  memory_order_relaxed);
	return bpfrt_err(-EBUSY, "%s: already running on this thread: run skipped (recursion)",
			 prog->name);
}

/* Reports the aborted run and puts the outer run's state back. */
static __attribute__((noinline, cold)) int
report_abort(const struct bpfrt_prog *prog, const struct bpfrt_run_state *outer)
{
	const struct bpfrt_run_state copy = bpfrt_run_state, *inner = &copy;

	bpfrt_run_state = *outer;
	if (inner->abort_msg) /* the engine wrote the report */
		return bpfrt_err(-inner->abort_err, "%s", inner->abort_msg);
	if (inner->abort_err == ENOENT)
		return bpfrt_err(-EINVAL, "%s: insn %u: callx to unregistered helper %llu",
				 prog->name, inner->abort_pc, (unsigned long long)inner->abort_arg);
	if (inner->abort_err == EFAULT)
		return bpfrt_err(-EFAULT, "%s: private stack overflow (stack %u bytes, "
				 "fault at %#llx): run aborted", prog->name, prog->privstack_size,
				 (unsigned long long)inner->abort_arg);
	if (inner->abort_err == ENOMEM)
		return bpfrt_err(-ENOMEM, "%s: cannot allocate a %s stack: run skipped",
				 prog->name, prog->privstack || !prog->jit_func ? "private" : "nest");
	if (inner->abort_err == ELOOP)
		return bpfrt_err(-ELOOP, "%s: nested more than %u levels deep without a "
				 "private stack: run skipped", prog->name, BPFRT_NEST_STACK_LEVELS);
	return bpfrt_err(-inner->abort_err, "%s: insn %u: run aborted", prog->name,
			 inner->abort_pc);
}

/* A verified program runs only with a context it was verified for: r1 is
 * a valid pointer to the verifier (it prunes `if (ctx == 0)` branches
 * unchecked), and arg2, the context length, covers every byte it reaches. */
static __attribute__((noinline, cold)) int
ctx_refused(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2)
{
	if (!arg1)
		return bpfrt_err(-EINVAL, "prog_run: %s: NULL context (the program was verified "
				 "for a %u-byte context)", prog->name, prog->ctx_size);
	return bpfrt_err(-EINVAL, "prog_run: %s: context of %llu bytes, the program reads %u",
			 prog->name, (unsigned long long)arg2, prog->max_ctx_access);
}

int bpfrt_prog_run(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
		   uint64_t arg1, uint64_t arg2, uint64_t *retval)
{
	/* Runs nest (a helper or kfunc may run another program): the outer
	 * run's state comes back intact whatever the inner one did, including
	 * a JIT abort that unwound past other bookkeeping. */
	const struct bpfrt_run_state outer = bpfrt_run_state;
	struct run_frame frame;
	int abort_err;
	bool nested;

	if (!prog || !retval)
		return bpfrt_err(-EINVAL, "prog_run: NULL argument");
	if (__builtin_expect(!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE), 0))
		return bpfrt_err(-EINVAL, "prog_run: %s is not loaded", prog->name);
	if (mode == BPFRT_EXEC_DEFAULT)
		mode = prog->jit_func ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	if (mode == BPFRT_EXEC_JIT && !prog->jit_func)
		return bpfrt_err(-ENOTSUP, "prog_run: %s was not JIT-compiled", prog->name);
	if (mode != BPFRT_EXEC_INTERP && mode != BPFRT_EXEC_JIT && mode != BPFRT_EXEC_CHECKED)
		return bpfrt_err(-EINVAL, "prog_run: %s: unknown execution mode %d", prog->name,
				 (int)mode);
	if (prog->verified && __builtin_expect(!arg1 || arg2 < prog->max_ctx_access, 0))
		return ctx_refused(prog, arg1, arg2);
	nested = run_top || bpfrt_attach_tls.depth;
	if (__builtin_expect(nested, 0) && prog_running_here(prog))
		return run_refused(prog);
	frame.prog = prog;
	frame.outer = run_top;
	run_top = &frame;
	bpfrt_run_state.abort_err = 0;
	bpfrt_run_state.abort_msg = NULL;
	bpfrt_run_state.tail_call_cnt = 0;
	/* a run nested in a checked one is not checked (unless asked):
	 * its callbacks must not look for the outer run's regions */
	bpfrt_run_state.check = NULL;
	/* Map values and tail-call targets the program reaches stay alive
	 * until the run ends (RCU read section). */
	bpfrt_rcu_read_lock();
	if (mode == BPFRT_EXEC_JIT) {
		/* nested without a private stack: the run goes to this
		 * level's nest stack (privstack.h) */
		if (__builtin_expect(nested, 0) && !prog->privstack)
			*retval = bpfrt_nest_stack_run(prog, arg1, arg2);
		else
			*retval = prog->jit_func(arg1, arg2);
	} else if (mode == BPFRT_EXEC_CHECKED)
		*retval = bpfrt_interp_run_checked(prog, arg1, arg2);
	else
		*retval = bpfrt_interp_run_nested(prog, arg1, arg2, nested);
	bpfrt_rcu_read_unlock();
	run_top = frame.outer;
	abort_err = bpfrt_run_state.abort_err;
	if (__builtin_expect(abort_err != 0, 0))
		return report_abort(prog, &outer);
	bpfrt_run_state = outer;
	return 0;
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
	if (opts && opts->sz < offsetof(struct bpfrt_verify_opts, states) + sizeof(opts->states))
		return bpfrt_err(-EINVAL, "prog_verify: opts->sz too small");
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
