/* bpf_spin_lock / bpf_spin_unlock, as Linux's verifier checks them
 * (process_spin_lock and the rules around an active lock):
 *   - the argument points at the struct bpf_spin_lock of a map value:
 *     PTR_TO_MAP_VALUE, not NULL, a constant offset equal to the map's
 *     lock offset (a map whose value has one: maps/value_lock.c);
 *   - at most one lock is held on a path (vstate.lock_map/lock_id: the
 *     map and the id of the value pointer, the lookup it came from);
 *   - while it is held, no helper or kfunc other than bpf_spin_unlock and
 *     no BPF-to-BPF call; no legacy packet load (ld_abs.c);
 *   - bpf_spin_unlock gives back exactly the lock held;
 *   - the program exits unlocked (a subprogram or callback may return
 *     holding it, as Linux 6.12 allows: its caller must give it back, and
 *     a callback entered again that takes it is a call under the lock);
 *   - loads, stores and atomics never touch the lock's bytes, nor do
 *     helpers reading or writing memory;
 *   - socket filters and tracing kinds may not use a map with a lock at
 *     all (Linux: "cannot use bpf_spin_lock yet": they can run where the
 *     holder was interrupted).
 * The helpers are recognised by their functions (helpers/spin_lock.h). */
#include "verifier/vstate.h"
#include "helpers/spin_lock.h"

#define LOCK_SIZE 4

bool vlock_held(const struct venv *env)
{
	return env->cur->lock_map != NULL;
}

static bool is_unlock(const struct venv *env, const struct bpf_insn *insn)
{
	const struct bpfrt_helper *h = insn_is_helper_call(insn) ?
		bpfrt_prog_helper(env->prog, (uint32_t)insn->imm) : NULL;

	return h && h->fn == bpfrt_bpf_spin_unlock;
}

int vcheck_call_while_locked(struct venv *env, const struct bpf_insn *insn)
{
	if (vlock_held(env) && !is_unlock(env, insn))
		return verr(env, "function calls are not allowed while holding a lock");
	return 0;
}

int vcheck_exit_unlocked(struct venv *env)
{
	if (vlock_held(env))
		return verr(env, "bpf_spin_unlock is missing");
	return 0;
}

int vcheck_spin_lock_arg(struct venv *env, const struct bpfrt_helper *h, int regno)
{
	const struct vreg *r = reg_at(env, regno);
	struct vstate *st = env->cur;
	int64_t at;

	if (r->type != PTR_TO_MAP_VALUE || (r->flags & PTR_MAYBE_NULL))
		return verr(env, "R%d type=%s expected=map_value (the struct bpf_spin_lock of a "
			    "map value)", regno, vreg_type_str(r));
	if (!tnum_is_const(r->var_off))
		return verr(env, "R%d doesn't have constant offset. bpf_spin_lock has to be at the "
			    "constant offset", regno);
	if (r->map->spin_lock_off < 0)
		return verr(env, "map '%s' has no valid bpf_spin_lock", r->map->name);
	at = (int64_t)r->off + (int64_t)r->var_off.value;
	if (at != r->map->spin_lock_off)
		return verr(env, "off %lld doesn't point to 'struct bpf_spin_lock' that is at %d",
			    (long long)at, r->map->spin_lock_off);
	if (h->fn == bpfrt_bpf_spin_lock) {
		if (st->lock_map)
			return verr(env, "Locking two bpf_spin_locks are not allowed");
		st->lock_map = r->map;
		st->lock_id = r->id;
		return 0;
	}
	if (h->fn != bpfrt_bpf_spin_unlock)
		return verr(env, "helper %s: a struct bpf_spin_lock argument is for "
			    "bpf_spin_lock/bpf_spin_unlock only", h->name ? h->name : "");
	if (!st->lock_map)
		return verr(env, "bpf_spin_unlock without taking a lock");
	if (st->lock_map != r->map || st->lock_id != r->id)
		return verr(env, "bpf_spin_unlock of different lock");
	st->lock_map = NULL;
	st->lock_id = 0;
	return 0;
}

int vcheck_spin_lock_access(struct venv *env, const struct vreg *reg, int32_t off, uint32_t size,
			    bool helper)
{
	int64_t lo, hi, lock;

	if (reg->type != PTR_TO_MAP_VALUE || reg->map->spin_lock_off < 0 || !size)
		return 0;
	lock = reg->map->spin_lock_off;
	lo = (int64_t)reg->off + off + reg->smin;
	hi = (int64_t)reg->off + off + reg->smax + size;
	if (lo < lock + LOCK_SIZE && lock < hi)
		return verr(env, helper ? "bpf_spin_lock cannot be accessed indirectly by helper"
				       : "bpf_spin_lock cannot be accessed directly by load/store");
	return 0;
}

/* Linux's check_map_prog_compatibility for maps with a lock. */
int vcheck_map_lock_kind(struct venv *env, const struct bpfrt_map *map)
{
	if (!map || map->spin_lock_off < 0)
		return 0;
	if (env->prog->kind == BPFRT_PROG_SOCKET)
		return verr(env, "socket filter progs cannot use bpf_spin_lock yet (map '%s')",
			    map->name);
	if (env->kind->ctx_class == BPFRT_CTX_CLASS_PT_REGS ||
	    env->prog->kind == BPFRT_PROG_TRACEPOINT ||
	    env->prog->kind == BPFRT_PROG_RAW_TRACEPOINT ||
	    env->prog->kind == BPFRT_PROG_PERF_EVENT)
		return verr(env, "tracing progs cannot use bpf_spin_lock yet (map '%s')", map->name);
	return 0;
}
