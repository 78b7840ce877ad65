/* Calls and returns: helper calls checked against their prototypes
 * (arguments, map kinds, results, ringbuf references), BPF-to-BPF calls
 * and their frames, bpf_loop callbacks, tail calls (from the main program
 * and from subprograms, and the stack below them), kfuncs (helper ids from
 * BPFRT_KFUNC_ID_BASE), and exits. */
#include "verifier/vstate.h"
#include "verifier/validate.h"
#include "helpers/callback.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CB_ENTRIES  64        /* callback re-entries per call site */

/* ---- helper calls ---- */

struct call_args {
	struct bpfrt_map *map;  /* from the CONST_MAP_PTR argument */
	int64_t alloc_size;     /* ringbuf_reserve's size, -1 if not constant */
	uint32_t release_ref;   /* reference a PTR_TO_RINGBUF_MEM argument releases */
	int func_regno;         /* register holding the callback */
	uint64_t msize_max;     /* the largest size a memory argument's size may be */
	struct vdynptr_arg dynptr; /* the dynptr arguments (dynptr.c) */
	struct vreg sock;       /* a socket result (sock.c) */
};

int vcheck_size_arg(struct venv *env, int regno, bool zero_ok, uint64_t *max)
{
	const struct vreg *r = reg_at(env, regno);

	if (r->type != SCALAR)
		return verr(env, "R%d type=%s expected=scalar (a size)", regno, vreg_type_str(r));
	if (r->smin < 0)
		return verr(env, "R%d min value is negative, either use unsigned or 'var &= const'",
			    regno);
	if (!zero_ok && r->umin == 0)
		return verr(env, "R%d invalid zero-sized read: u64=[%llu,%llu]", regno,
			    (unsigned long long)r->umin, (unsigned long long)r->umax);
	if (r->umax >= MAX_VAR_SIZE)
		return verr(env, "R%d unbounded memory access, use 'var &= const' or "
			    "'if (var < const)'", regno);
	*max = r->umax;
	return 0;
}

/* Which map kinds a helper accepts (map_compat.c), and no writing helper
 * on a map programs may not write. */
static int check_map_compat(struct venv *env, int32_t id, const struct bpfrt_map *map,
			    const struct bpfrt_helper *h)
{
	const char *refused = id < BPFRT_KFUNC_ID_BASE ? vmap_func_refused(env, map, id) : NULL;

	if (refused)
		return verr(env, "%s: %s#%d on map '%s' (map_type %u)", refused,
			    h->name ? h->name : "helper", id, map->name, map->type);
	if (!vmap_func_compatible(map, id))
		return verr(env, "cannot pass map_type %u into func %s#%d", map->type,
			    h->name ? h->name : "helper", id);
	if (map_prog_rdonly(map) && vmap_func_writes(id))
		return verr(env, "write into map forbidden: %s#%d on map '%s' "
			    "(BPF_F_RDONLY_PROG)", h->name ? h->name : "helper", id, map->name);
	return 0;
}

/* A pt_regs context pointer (constant or variable offset) as the address
 * bpf_probe_read_kernel/_user read from: usdt.bpf.h reads a register as
 * probe_read_kernel(&v, 8, ctx + reg_off). The pointer is not revealed:
 * the helper only reads through it (faults give -EFAULT and zeroes), and
 * what it may read there (the registers, the probe's stack) a pt_regs
 * program already reaches with ctx->sp, a plain number in the context.
 * Other contexts, other pointers and other helpers stay leaks. */
static bool ctx_as_probe_source(const struct venv *env, int32_t id, int arg,
				const struct vreg *r)
{
	return r->type == PTR_TO_CTX && arg == 2 && env->kind->ctx_class == BPFRT_CTX_CLASS_PT_REGS &&
	       (id == BPF_FUNC_probe_read_kernel || id == BPF_FUNC_probe_read_user);
}

/* Linux's pkt_access: the helpers a packet pointer may be handed to as
 * memory. The packet helpers that read the packet themselves (skb_load_bytes)
 * and the string helpers take none. */
static bool helper_takes_packet(int32_t id)
{
	return id != BPF_FUNC_skb_load_bytes && id != BPF_FUNC_skb_load_bytes_relative &&
	       id != BPF_FUNC_strtol && id != BPF_FUNC_strtoul;
}

static int check_arg(struct venv *env, const struct bpfrt_helper *h, int32_t id, int arg,
		     struct call_args *ca)
{
	enum bpfrt_arg_type t = h->args[arg];
	int regno = arg + 1;
	struct vreg *r = reg_at(env, regno);
	uint64_t max;
	int err;

	if (t == BPFRT_ARG_NONE)
		return 0;
	if (r->type == NOT_INIT)
		return verr(env, "R%d !read_ok", regno);
	switch (t) {
	case BPFRT_ARG_ANYTHING:
		if (ctx_as_probe_source(env, id, arg, r))
			return 0;
		if ((err = vcheck_ptr_leak(env, r, "R%d leaks addr into helper function %s", regno,
					  h->name ? h->name : "")))
			return err;
		if (r->type == PTR_TO_STACK) {
			/* the helper may touch the frame anywhere: keep it whole */
			struct vframe *fr = env->cur->frames[r->frameno];

			vnote_stack_use(env, r->frameno, -(int32_t)fr->nslots * 8);
			vstack_mark_read(env, r->frameno, ~0ull);
		}
		return 0;
	case BPFRT_ARG_PTR_TO_CTX_OR_NULL:
		if (vreg_is_zero(r))
			return 0;
		/* fall through */
	case BPFRT_ARG_PTR_TO_CTX:
		if (r->type != PTR_TO_CTX)
			return verr(env, "R%d type=%s expected=ctx", regno, vreg_type_str(r));
		if (r->off || !tnum_equals_const(r->var_off, 0))
			return verr(env, "dereference of modified ctx ptr R%d off=%d disallowed",
				    regno, r->off);
		/* a host kfunc may read the whole context (bpfrt's own
		 * helpers taking it read none: they check it is the run's) */
		if (id >= BPFRT_KFUNC_ID_BASE && env->max_ctx_access < env->ctx_size)
			env->max_ctx_access = env->ctx_size;
		return 0;
	case BPFRT_ARG_CONST_MAP_PTR:
		if (r->type != CONST_PTR_TO_MAP || (r->flags & PTR_MAYBE_NULL))
			return verr(env, "R%d type=%s expected=map_ptr", regno, vreg_type_str(r));
		ca->map = r->map;
		return check_map_compat(env, id, r->map, h);
	case BPFRT_ARG_PTR_TO_MAP_KEY:
	case BPFRT_ARG_PTR_TO_MAP_VALUE:
	case BPFRT_ARG_PTR_TO_UNINIT_MAP_VALUE:
		if (!ca->map)
			return verr(env, "invalid map_ptr to access map->%s",
				    t == BPFRT_ARG_PTR_TO_MAP_KEY ? "key" : "value");
		/* a bloom filter's peek reads the value it tests (Linux
		 * declares it written: it would hash stale stack bytes) */
		return vcheck_helper_mem(env, regno, t == BPFRT_ARG_PTR_TO_MAP_KEY ?
					ca->map->key_size : ca->map->value_size,
					t == BPFRT_ARG_PTR_TO_UNINIT_MAP_VALUE &&
					ca->map->type != BPF_MAP_TYPE_BLOOM_FILTER, true);
	case BPFRT_ARG_PTR_TO_MEM:
	case BPFRT_ARG_PTR_TO_UNINIT_MEM: {
		enum bpfrt_arg_type next = arg < 4 ? h->args[arg + 1] : BPFRT_ARG_NONE;

		if (next != BPFRT_ARG_CONST_SIZE && next != BPFRT_ARG_CONST_SIZE_OR_ZERO)
			return verr(env, "helper %d: memory argument %d has no size argument", id,
				    regno);
		if ((err = vcheck_reg_init(env, regno + 1)))
			return err;
		err = vcheck_size_arg(env, regno + 1, next == BPFRT_ARG_CONST_SIZE_OR_ZERO, &max);
		if (err)
			return err;
		ca->msize_max = max;
		if (vreg_is_zero(r) && max == 0)
			return 0; /* (NULL, 0) */
		if (is_pkt_pointer(r) && !helper_takes_packet(id))
			return verr(env, "helper access to the packet is not allowed");
		return vcheck_helper_mem(env, regno, max, t == BPFRT_ARG_PTR_TO_UNINIT_MEM,
					vreg_is_const(reg_at(env, regno + 1)));
	}
	case BPFRT_ARG_CONST_SIZE:
	case BPFRT_ARG_CONST_SIZE_OR_ZERO: {
		enum bpfrt_arg_type prev = arg ? h->args[arg - 1] : BPFRT_ARG_NONE;

		if (prev == BPFRT_ARG_PTR_TO_MEM || prev == BPFRT_ARG_PTR_TO_UNINIT_MEM)
			return 0; /* checked with its buffer */
		err = vcheck_size_arg(env, regno, t == BPFRT_ARG_CONST_SIZE_OR_ZERO, &max);
		if (err)
			return err;
		if (id == BPF_FUNC_ringbuf_reserve ||
		    h->ret == BPFRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL) {
			if (!vreg_is_const(r))
				return verr(env, "R%d is not a known constant", regno);
			ca->alloc_size = (int64_t)r->var_off.value;
		}
		return 0;
	}
	case BPFRT_ARG_PTR_TO_FUNC:
		if (r->type != PTR_TO_FUNC)
			return verr(env, "R%d type=%s expected=func", regno, vreg_type_str(r));
		ca->func_regno = regno;
		return 0;
	case BPFRT_ARG_PTR_TO_STACK_OR_NULL:
		if (vreg_is_zero(r))
			return 0;
		if (r->type != PTR_TO_STACK)
			return verr(env, "R%d type=%s expected=fp", regno, vreg_type_str(r));
		{
			/* within the frame, its end included (r10 itself): the
			 * checking interpreter holds the run to the same bound */
			int64_t lo = (int64_t)r->off + r->smin, hi = (int64_t)r->off + r->smax;

			if (r->smin < -MAX_VAR_OFF || r->smax > MAX_VAR_OFF ||
			    lo < -BPFRT_STACK_PER_FRAME || hi > 0)
				return verr(env, "R%d stack pointer [%lld, %lld] is outside the "
					    "%d-byte stack frame", regno, (long long)lo, (long long)hi,
					    BPFRT_STACK_PER_FRAME);
		}
		if (ca->func_regno < 0) {
			/* no size, and no callback to hand it to (whose accesses
			 * the walk checks and counts): the helper itself may touch
			 * the frame anywhere, so keep it whole */
			struct vframe *fr = env->cur->frames[r->frameno];

			vnote_stack_use(env, r->frameno, -(int32_t)fr->nslots * 8);
			vstack_mark_read(env, r->frameno, ~0ull);
		}
		return 0;
	case BPFRT_ARG_PTR_TO_DYNPTR:
	case BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_LOCAL:
	case BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF:
	case BPFRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE:
		return vdynptr_check_arg(env, regno, t, &ca->dynptr);
	case BPFRT_ARG_PTR_TO_RINGBUF_MEM:
		if (r->type != PTR_TO_MEM || (r->flags & (PTR_MAYBE_NULL | PTR_DYNPTR_SLICE | MEM_RDONLY)) ||
		    !r->ref_obj_id)
			return verr(env, "R%d type=%s expected=ringbuf_mem (a non-NULL "
				    "ringbuf_reserve result)", regno, vreg_type_str(r));
		if (r->off || !tnum_equals_const(r->var_off, 0))
			return verr(env, "R%d must have zero offset when passed to release func",
				    regno);
		ca->release_ref = r->ref_obj_id;
		return 0;
	case BPFRT_ARG_PTR_TO_LONG:
		/* Linux's MEM_ALIGNED: the long is written whole, aligned */
		if (r->type == PTR_TO_STACK && (!tnum_is_const(r->var_off) ||
						((int64_t)r->off + (int64_t)r->var_off.value) % 8))
			return verr(env, "misaligned stack access off %d+%lld size 8", r->off,
				    (long long)r->var_off.value);
		return vcheck_helper_mem(env, regno, 8, true, true);
	case BPFRT_ARG_PTR_TO_SPIN_LOCK:
		return vcheck_spin_lock_arg(env, h, regno); /* spin_lock.c */
	case BPFRT_ARG_PTR_TO_SOCK_COMMON:
	case BPFRT_ARG_PTR_TO_SOCK_RELEASE:
		return vsock_check_arg(env, regno, t, &ca->release_ref); /* sock.c */
	case BPFRT_ARG_PTR_TO_CONST_STR: {
		const char *base;
		int64_t at;

		if (r->type != PTR_TO_MAP_VALUE || !map_is_const(r->map) ||
		    !tnum_is_const(r->var_off))
			return verr(env, "R%d does not point to a readonly map", regno);
		base = bpfrt_map_value_ptr(r->map, 0);
		at = (int64_t)r->off + (int64_t)r->var_off.value;
		if (!base || at < 0 || at >= r->map->value_size ||
		    !memchr(base + at, 0, r->map->value_size - (size_t)at))
			return verr(env, "R%d string is not zero-terminated", regno);
		return 0;
	}
	default:
		return verr(env, "helper %d: unknown argument type %d", id, t);
	}
}

static void clobber_caller_saved(struct venv *env)
{
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(reg_at(env, r));
}

/* Enters a new frame for subprogram `subprog` called from the current
 * insn; args are r1-r5 of the caller (local call) or set by the caller. */
static int push_frame(struct venv *env, uint32_t subprog, uint32_t callsite)
{
	struct vstate *st = env->cur;
	struct vframe *f;

	if (st->curframe + 1 >= BPFRT_MAX_CALL_FRAMES)
		return verr(env, "the call stack of %d frames is too deep", BPFRT_MAX_CALL_FRAMES);
	f = vframe_new(frame_slots_for(env, subprog));
	if (!f)
		return -ENOMEM;
	f->callsite = callsite;
	f->subprog = subprog;
	for (int r = 0; r < BPF_NREGS; r++)
		mark_not_init(&f->regs[r]);
	for (int r = BPF_R1; r <= BPF_R5; r++)
		f->regs[r] = st->frames[st->curframe]->regs[r];
	mark_ptr(&f->regs[BPF_R10], PTR_TO_STACK);
	f->regs[BPF_R10].frameno = (uint8_t)(st->curframe + 1);
	st->frames[++st->curframe] = f;
	return 0;
}

static struct cb_site *cb_site_get(struct venv *env, uint32_t insn)
{
	struct cb_site *n;

	for (uint32_t i = 0; i < env->cb_site_cnt; i++)
		if (env->cb_sites[i].insn == insn)
			return &env->cb_sites[i];
	n = realloc(env->cb_sites, (env->cb_site_cnt + 1) * sizeof(*n));
	if (!n)
		return NULL;
	env->cb_sites = n;
	n = &env->cb_sites[env->cb_site_cnt++];
	memset(n, 0, sizeof(*n));
	n->insn = insn;
	return n;
}

/* Enters the callback of the helper call at the current insn from the
 * current (caller) state. inv is the helper call the callback runs for (0:
 * a new call). Within one call, a state it already entered the callback
 * from covers this one: the helper bounds the iterations, so that fixed
 * point is enough. Entries of other calls never cover: a loop around the
 * helper call must prove its own termination. Returns 1 if entered, 0 if
 * covered. */
static int enter_callback(struct venv *env, const struct bpfrt_helper *h, int func_regno,
			  uint32_t inv)
{
	uint32_t call = env->insn, same = 0;
	struct cb_site *site = cb_site_get(env, call);
	struct vreg *regs = cur_regs(env);
	struct vreg fn = regs[func_regno], ctx = regs[BPF_R3], map = regs[BPF_R1];
	struct vstate *snap;
	struct vframe *f;
	int err;

	if (!site)
		return -ENOMEM;
	if (!inv)
		inv = ++env->inv_gen;
	for (uint32_t i = 0; i < site->cnt; i++) {
		if (site->inv[i] != inv)
			continue;
		same++;
		/* covered: the path goes on as the earlier entry's walk, whose
		 * reads (the callback's and after the helper) were marked on
		 * other checkpoints: count every slot as read */
		if (vstates_equal(env, site->entries[i], env->cur, call, false)) {
			vstack_mark_all_read(env);
			return 0;
		}
	}
	if (same >= 2 && !env->join_off && !env->aux[call].no_join) {
		/* values the callback keeps changing: widen them so the
		 * iterations converge */
		struct vstate *best = NULL;
		int best_d = 0;

		for (uint32_t i = 0; i < site->cnt; i++) {
			int d = site->inv[i] == inv ?
				vjoin_distance(env, site->entries[i], env->cur, call) : -1;

			if (d >= 0 && (!best || d < best_d))
				best = site->entries[i], best_d = d;
		}
		if (best) {
			vjoin_states(env, best, env->cur, UINT32_MAX, true);
			env->cur->joined = true;
			env->cur->join_insn = call;
			if (vstates_equal(env, best, env->cur, call, false)) {
				vstack_mark_all_read(env);
				return 0;
			}
		}
	}
	if (same >= MAX_CB_ENTRIES)
		return verr(env, "callback of %s does not converge after %u iterations",
			    h->name ? h->name : "helper", MAX_CB_ENTRIES);
	if (site->cnt == site->cap) {
		uint32_t cap = site->cap ? site->cap * 2 : 4;
		struct vstate **n = realloc(site->entries, cap * sizeof(*n));
		uint32_t *ni;

		if (!n)
			return -ENOMEM;
		site->entries = n;
		ni = realloc(site->inv, cap * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		site->inv = ni;
		site->cap = cap;
	}
	snap = vstate_save(env, env->cur, call);
	if (!snap)
		return -ENOMEM;
	snap->parent = NULL;
	vstate_kept(env, snap);
	site->inv[site->cnt] = inv;
	site->entries[site->cnt++] = snap;

	err = push_frame(env, fn.mem_size, call);
	if (err)
		return err;
	f = cur_frame(env);
	f->in_callback = true;
	f->cb_helper = (uint32_t)env->insns[call].imm;
	f->cb_inv = inv;
	f->cb_iter = same;
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(&f->regs[r]);
	if (f->cb_helper == BPF_FUNC_for_each_map_elem) {
		/* callback(map, const key *, value *, void *ctx), as Linux */
		mark_ptr(&f->regs[BPF_R1], CONST_PTR_TO_MAP);
		f->regs[BPF_R1].map = map.map;
		mark_ptr(&f->regs[BPF_R2], PTR_TO_MAP_KEY);
		f->regs[BPF_R2].map = map.map;
		mark_ptr(&f->regs[BPF_R3], PTR_TO_MAP_VALUE);
		f->regs[BPF_R3].map = map.map;
		f->regs[BPF_R4] = ctx;
	} else if (f->cb_helper == BPF_FUNC_user_ringbuf_drain) {
		/* callback(const struct bpf_dynptr *sample, void *ctx) */
		vdynptr_mark_callback_arg(env, &f->regs[BPF_R1]);
		f->regs[BPF_R2] = ctx;
	} else {
		/* bpf_loop: callback(u32 index, void *ctx) */
		vreg_mark_unknown(&f->regs[BPF_R1]);
		vreg_zext32(&f->regs[BPF_R1]);
		f->regs[BPF_R2] = ctx;
	}
	env->insn = env->prog->subprogs[fn.mem_size].start;
	return 1;
}

static void set_helper_result(struct venv *env, const struct bpfrt_helper *h,
			      const struct call_args *ca, uint32_t ref)
{
	struct vreg *r0 = reg_at(env, BPF_R0);

	switch (h->ret) {
	case BPFRT_RET_VOID:
		/* bpfrt defines a failed tail call's r0 (-ENOENT), Linux does not */
		if (h->fn == bpfrt_helper_tail_call)
			vreg_mark_unknown(r0);
		else
			mark_not_init(r0);
		break;
	case BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL:
		/* a map-in-map's value is an inner map, typed by the template
		 * (Linux: map_ptr = inner_map_meta after the NULL check) */
		if (bpfrt_map_is_map_in_map(ca->map)) {
			mark_ptr(r0, CONST_PTR_TO_MAP);
			r0->map = bpfrt_map_inner_meta(ca->map);
		} else {
			mark_ptr(r0, PTR_TO_MAP_VALUE);
			r0->map = ca->map;
		}
		r0->flags = PTR_MAYBE_NULL;
		r0->id = ++env->id_gen;
		break;
	case BPFRT_RET_PTR_TO_MAP_VALUE:
		mark_ptr(r0, PTR_TO_MAP_VALUE);
		r0->map = ca->map;
		break;
	case BPFRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL:
		vdynptr_mark_slice(env, r0, &ca->dynptr, (uint32_t)ca->alloc_size);
		break;
	case BPFRT_RET_PTR_TO_SOCKET_OR_NULL:
	case BPFRT_RET_PTR_TO_SOCK_COMMON_OR_NULL:
	case BPFRT_RET_PTR_TO_TCP_SOCK_OR_NULL:
		*r0 = ca->sock; /* made before the arguments went (sock.c) */
		break;
	case BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL:
		mark_ptr(r0, PTR_TO_MEM);
		r0->mem_size = (uint32_t)ca->alloc_size;
		r0->flags = PTR_MAYBE_NULL;
		r0->id = ref;
		r0->ref_obj_id = ref;
		break;
	default:
		vreg_mark_unknown(r0);
		break;
	}
}

/* Which of trace_printk's value arguments (r3-r5) its format reads
 * through rather than prints (%s, %pks, %pus, %pi4, %pI4, %pi6, %pI6):
 * a pointer there is no leak. None when the format is not in a constant
 * map. */
static void printk_derefs(struct venv *env, bool deref[3])
{
	const struct vreg *f = reg_at(env, BPF_R1), *len = reg_at(env, BPF_R2);
	const char *p, *end;
	int64_t at;
	int arg = 0;

	deref[0] = deref[1] = deref[2] = false;
	if (f->type != PTR_TO_MAP_VALUE || !map_is_const(f->map) || !tnum_is_const(f->var_off) ||
	    len->type != SCALAR || !vreg_is_const(len) || !bpfrt_map_value_ptr(f->map, 0))
		return;
	at = (int64_t)f->off + (int64_t)f->var_off.value;
	if (at < 0 || at >= f->map->value_size)
		return;
	p = (const char *)bpfrt_map_value_ptr(f->map, 0) + at;
	end = p + (len->var_off.value < f->map->value_size - (uint64_t)at ?
		   len->var_off.value : f->map->value_size - (uint64_t)at);
	while (p < end && *p && arg < 3) {
		if (*p++ != '%')
			continue;
		if (p < end && *p == '%') {
			p++;
			continue;
		}
		while (p < end && *p && strchr("-+ #0123456789.lhzjt", *p))
			p++;
		if (p >= end || !*p)
			break;
		if (*p == 's')
			deref[arg] = true;
		else if (*p == 'p' && p + 2 < end &&
			 (((p[1] == 'k' || p[1] == 'u') && p[2] == 's') ||
			  ((p[1] == 'i' || p[1] == 'I') && (p[2] == '4' || p[2] == '6'))))
			deref[arg] = true;
		arg++;
		p++;
	}
}

static int tail_call_success(struct venv *env);

/* A helper that returns the bytes it wrote into its buffer or -errno:
 * r0 in [-MAX_ERRNO, the size's largest value] (Linux's
 * do_refine_retval_range), so a program may use it as a length. */
static void bound_by_size(struct vreg *r0, uint64_t msize_max)
{
	const int64_t max_errno = 4095;

	r0->smin = -max_errno;
	r0->smax = (int64_t)msize_max;
	r0->s32min = -(int32_t)max_errno;
	r0->s32max = (int32_t)msize_max;
	vreg_bounds_sync(r0);
}

/* Returns 1 if the walk continues in a callback or, after a tail call, in
 * the caller (env->insn set), 2 if this path is done. */
static int do_helper_call(struct venv *env, int32_t id)
{
	const struct bpfrt_helper *h = &env->prog->helpers[id];
	struct call_args ca = { .alloc_size = -1, .func_regno = -1,
				.dynptr = { .uninit_regno = -1 } };
	uint32_t ref = 0;
	int err;

	/* Linux gives it to CAP_SYS_ADMIN only: here it may write any of the
	 * host's memory, so only a trusted program may call it */
	if (id == BPF_FUNC_probe_write_user && !(env->prog->load_flags & BPFRT_F_ALLOW_PTR_LEAKS))
		return verr(env, "bpf_probe_write_user (36) writes any of the host's memory: only a "
			    "trusted program (BPFRT_F_ALLOW_PTR_LEAKS) may call it");
	for (int a = 0; a < 5; a++)
		if ((err = check_arg(env, h, id, a, &ca)))
			return err;
	/* trace_printk's optional arguments (r3-r5) are undeclared, as in
	 * Linux, but printed: no pointer among them, unless the format reads
	 * through it */
	if (id == BPF_FUNC_trace_printk) {
		bool deref[3];

		printk_derefs(env, deref);
		for (int r = BPF_R3; r <= BPF_R5; r++)
			if (!deref[r - BPF_R3] &&
			    (err = vcheck_ptr_leak(env, reg_at(env, r), "R%d leaks addr into helper "
						  "function trace_printk (its format prints it)", r)))
				return err;
	}
	if ((h->ret == BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL || h->ret == BPFRT_RET_PTR_TO_MAP_VALUE) &&
	    !ca.map)
		return verr(env, "helper %d returns a map value but takes no map", id);
	/* Linux's rule for the flags, which no kernel ever gave a meaning */
	if (id == BPF_FUNC_get_local_storage && !vreg_is_zero(reg_at(env, BPF_R2)))
		return verr(env, "get_local_storage() doesn't support non-zero flags");
	if (h->ret == BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL && ca.alloc_size < 0)
		return verr(env, "helper %d returns ringbuf memory without a constant size", id);
	if (h->ret == BPFRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL && (ca.alloc_size < 0 ||
							      !ca.dynptr.dynptr_id))
		return verr(env, "helper %d returns dynptr memory without a dynptr and a constant "
			    "size", id);
	if ((err = vdynptr_after_args(env, id, &ca.dynptr)))
		return err;
	if (h->fn == bpfrt_helper_tail_call && env->cur->nrefs)
		return verr(env, "tail_call would lead to reference leak");
	if ((h->ret == BPFRT_RET_PTR_TO_SOCKET_OR_NULL || h->ret == BPFRT_RET_PTR_TO_SOCK_COMMON_OR_NULL ||
	     h->ret == BPFRT_RET_PTR_TO_TCP_SOCK_OR_NULL) &&
	    (err = vsock_prepare_result(env, id, h, &ca.sock)))
		return err;
	if (ca.release_ref) {
		if (!vrelease_ref_state(env->cur, ca.release_ref))
			return verr(env, "R1 is an unacquired reference");
		/* as Linux's mark_reg_invalid: a privileged program (pointer
		 * leaks allowed) keeps the copies as unknown numbers, the
		 * address they held; otherwise vrelease_reference below makes
		 * every copy unreadable */
		if (env->prog->load_flags & BPFRT_F_ALLOW_PTR_LEAKS)
			for (uint32_t f = 0; f <= env->cur->curframe; f++)
				for (int i = 0; i < BPF_NREGS; i++)
					if (env->cur->frames[f]->regs[i].ref_obj_id == ca.release_ref)
						vreg_mark_unknown(&env->cur->frames[f]->regs[i]);
		vrelease_reference(env->cur, ca.release_ref);
	}
	if (ca.func_regno >= 0) {
		/* 0 iterations: the helper returns without calling back */
		struct vstate *skip = vpush_branch(env, env->insn + 1);

		if (!skip)
			return -ENOMEM;
		env->cur->insn = env->insn;
		{
			struct vstate *save = env->cur;

			env->cur = skip;
			clobber_caller_saved(env);
			vreg_mark_unknown(reg_at(env, BPF_R0));
			env->cur = save;
		}
		err = enter_callback(env, h, ca.func_regno, 0);
		if (err < 0)
			return err;
		return 1; /* a new call always enters */
	}
	if (h->ret == BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL && ca.map &&
	    (uint64_t)ca.alloc_size > ca.map->max_entries) {
		/* bpfrt: a record larger than the ring is never granted, so
		 * the result is NULL (Linux tracks a reference regardless) */
		clobber_caller_saved(env);
		memset(reg_at(env, BPF_R0), 0, sizeof(struct vreg));
		reg_at(env, BPF_R0)->type = SCALAR;
		vreg_mark_const(reg_at(env, BPF_R0), 0);
		return 0;
	}
	if (h->ret == BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL && (err = vacquire_ref(env, &ref)))
		return err;
	clobber_caller_saved(env);
	set_helper_result(env, h, &ca, ref);
	if (id == BPF_FUNC_get_stack)
		bound_by_size(reg_at(env, BPF_R0), ca.msize_max);
	if (h->fn == bpfrt_helper_tail_call && env->cur->curframe)
		return tail_call_success(env);
	return 0;
}

int vdo_call(struct venv *env, const struct bpf_insn *insn)
{
	int lock_err = vcheck_call_while_locked(env, insn);

	if (lock_err)
		return lock_err;
	if (insn->src_reg == BPF_PSEUDO_CALL) {
		int sp = bpfrt_insn_callee(env->prog, env->insn);
		int err;

		if (sp < 0)
			return verr(env, "bad local call");
		if ((err = push_frame(env, (uint32_t)sp, env->insn)))
			return err;
		env->insn = env->prog->subprogs[sp].start;
		return 1;
	}
	if (insn->imm == BPFRT_CORE_POISON) {
		/* the loader's CO-RE poison (loader/core_relo.c), on a walked path */
		const char *why = bpfrt_prog_core_poison(env->prog, env->insn);

		if (why)
			return verr(env, "%s", why);
	}
	if (!bpfrt_prog_helper(env->prog, (uint32_t)insn->imm))
		return verr(env, "invalid func unknown#%d", insn->imm);
	if (viter_call_op(env, env->insn))
		return viter_call(env, insn->imm);
	if (vkfunc_kernel_of(env, insn->imm))
		return vkfunc_kernel_call(env, insn->imm);
	return do_helper_call(env, insn->imm);
}

/* ---- exit, tail calls ---- */

static int check_return_value(struct venv *env)
{
	const struct vreg *r0 = reg_at(env, BPF_R0);
	int64_t lo, hi;
	int err;

	if (r0->type == NOT_INIT)
		return verr(env, "R0 !read_ok (the program returns an uninitialized value)");
	if ((err = vcheck_ptr_leak(env, r0, "R0 leaks addr as return value")))
		return err;
	if (bpfrt_prog_kind_ret_range(env->kind, env->prog->kind_variant, env->prog->attach_target,
				      &lo, &hi) &&
	    (r0->type != SCALAR || r0->smin < lo || r0->smax > hi ||
	     (lo >= 0 && (r0->umin < (uint64_t)lo || r0->umax > (uint64_t)hi))))
		return verr(env, "At program exit the register R0 has value (%lld; %llu) "
			    "should have been in [%lld, %lld]", (long long)r0->smin,
			    (unsigned long long)r0->umax, (long long)lo, (long long)hi);
	return 0;
}

/* Pointers into a frame that is going away become plain numbers. No
 * outer frame holds a spill of one (stack_write_fixed: no stack pointer is
 * spilled into a caller's frame) and r0 may not be one (vdo_exit). */
static void forget_frame_pointers(struct vstate *st, uint32_t frameno)
{
	for_each_reg(st, r, {
		if (r->type == PTR_TO_STACK && r->frameno >= frameno)
			vreg_mark_unknown(r);
	});
}

/* Returns 0: continue at env->insn; 1: this path is done. */
int vdo_exit(struct venv *env)
{
	struct vstate *st = env->cur;
	struct vframe *callee;
	struct vreg r0;
	int err;

	if (st->curframe == 0) {
		if ((err = vcheck_exit_unlocked(env)))
			return err;
		if ((err = check_return_value(env)))
			return err;
		if (st->nrefs)
			return verr(env, "Unreleased reference id=%u alloc_insn=%u",
				    st->refs[0].id, st->refs[0].insn);
		return 1;
	}
	callee = st->frames[st->curframe];
	if ((err = viter_check_frame_exit(env, callee)))
		return err;
	r0 = callee->regs[BPF_R0];
	/* a subprogram may leave r0 unset on a path (Linux's rule for
	 * static subprograms): the caller gets it unreadable; a callback's
	 * is its helper's to read */
	if (r0.type == NOT_INIT && callee->in_callback)
		return verr(env, "R0 !read_ok (callback returns an uninitialized value)");
	if (r0.type == PTR_TO_STACK && r0.frameno == st->curframe)
		return verr(env, "cannot return stack pointer to the caller");
	if (callee->in_callback) {
		if (r0.type != SCALAR || r0.smin < 0 || r0.umax > 1)
			return verr(env, "At callback return the register R0 has value %s; "
				    "should have been in [0, 1]",
				    r0.type == SCALAR ? "out of range" : vreg_type_str(&r0));
	}
	st->frames[st->curframe] = NULL;
	st->curframe--;
	forget_frame_pointers(st, st->curframe + 1);
	env->insn = callee->callsite;
	if (callee->in_callback) {
		const struct bpfrt_helper *h = &env->prog->helpers[callee->cb_helper];
		struct vstate *after;
		int func_regno = BPF_R2;
		uint32_t inv = callee->cb_inv;

		vframe_free(callee);
		/* the helper may return now... */
		after = vpush_branch(env, env->insn + 1);
		if (!after)
			return -ENOMEM;
		{
			struct vstate *save = env->cur;

			env->cur = after;
			clobber_caller_saved(env);
			vreg_mark_unknown(reg_at(env, BPF_R0));
			env->cur = save;
		}
		/* ...or call back again with what this iteration left behind */
		err = enter_callback(env, h, func_regno, inv);
		if (err < 0)
			return err;
		return err == 1 ? 0 : 1;
	}
	vframe_free(callee);
	clobber_caller_saved(env);
	*reg_at(env, BPF_R0) = r0;
	env->insn++;
	return 0;
}

/* A helper that may run other code (a tail call's target) may move the
 * packet: no packet pointer survives it. Registers become unreadable,
 * spilled copies unreadable stack bytes (never numbers: they were
 * addresses). */
static void invalidate_packet_pointers(struct vstate *st)
{
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct vframe *fr = st->frames[f];

		for (int i = 0; i < BPF_NREGS; i++)
			if (is_pkt_family(&fr->regs[i]))
				mark_not_init(&fr->regs[i]);
		for (uint32_t k = 0; k < fr->nslots; k++) {
			struct vslot *sl = &fr->slots[k];

			if (!slot_has_spill(sl) || !is_pkt_family(&sl->spilled))
				continue;
			for (int b = 0; b < 8; b++)
				if (sl->type[b] == STACK_SPILL)
					sl->type[b] = STACK_INVALID;
			sl->spill_size = 0;
			sl->spill_off = 0;
			mark_not_init(&sl->spilled);
		}
	}
}

/* bpf_tail_call from a subprogram (frame > 0). When it fails the
 * subprogram goes on after the call (r0 unknown: bpfrt's -ENOENT). When
 * it succeeds the target replaces the subprogram's frame, and the
 * target's exit returns to the subprogram's caller: the interpreter pops
 * the saved caller frame (r6-r9, fp), the JITs tear the frame down and
 * jump, so the target returns to the call's return address. The caller
 * then resumes with r0 = whatever the target returned, r1-r5 undefined,
 * r6-r9 and its stack as they were (the target gets only the context),
 * and no packet pointer (the target may have moved the packet). That is
 * an exit of this frame with r0 unknown (as Linux models it). A callback
 * cannot take it: its return value must be in [0, 1] and the target's is
 * any number (Linux rejects it the same way). References cannot be held
 * here (checked with the arguments), so none leaks on either path.
 * Returns as do_helper_call. */
static int tail_call_success(struct venv *env)
{
	int err;

	if (cur_frame(env)->in_callback)
		return verr(env, "tail_call in a callback: when it succeeds the callback returns "
			    "the target's r0, which need not be in [0, 1]");
	if (!vpush_branch(env, env->insn + 1)) /* the call failed */
		return -ENOMEM;
	if (env->log_level)
		vlog(env, "%u: tail call taken: frame %u returns to its caller\n", env->insn,
		     env->cur->curframe);
	invalidate_packet_pointers(env->cur);
	vreg_mark_unknown(reg_at(env, BPF_R0));
	err = vdo_exit(env);
	if (err < 0)
		return err;
	return err ? 2 : 1;
}

/* Bytes of the frames below a subprogram that tail-calls: at most this
 * many. A successful tail call frees only the frame of the subprogram
 * making it, its callers' frames stay (on the native stack, for the JITs),
 * so with up to BPFRT_MAX_TAIL_CALLS calls in a chain they add up; Linux
 * caps them at 256 bytes the same way (frames rounded up to 16 bytes, as
 * its JIT does). The interpreter also refuses at run time a tail call
 * whose target does not fit the frame's remaining stack. */
#define TAIL_CALL_CALLER_STACK_MAX 256

int vcheck_tail_call_stack(struct venv *env)
{
	const struct bpfrt_prog *prog = env->prog;
	uint32_t *below = calloc(prog->subprog_cnt, sizeof(*below));
	int err = 0;

	if (!below)
		return -ENOMEM;
	/* below[s]: the deepest stack of the frames under s on any call chain
	 * (local calls and callbacks; the call graph is acyclic and at most
	 * BPFRT_MAX_CALL_FRAMES deep, so that many rounds reach the fixed
	 * point) */
	for (int round = 0; round <= BPFRT_MAX_CALL_FRAMES; round++)
		for (uint32_t sp = 0; sp < prog->subprog_cnt; sp++) {
			uint32_t mine = below[sp] + ((env->max_stack[sp] + 15) & ~15u);

			for (uint32_t pc = prog->subprogs[sp].start; pc < prog->subprogs[sp].end; pc++) {
				int c = bpfrt_insn_callee(prog, pc);

				if (c > 0 && below[c] < mine)
					below[c] = mine;
				if (insn_is_lddw(&prog->insns[pc]))
					pc++;
			}
		}
	for (uint32_t sp = 1; sp < prog->subprog_cnt && !err; sp++)
		for (uint32_t pc = prog->subprogs[sp].start; pc < prog->subprogs[sp].end; pc++) {
			const struct bpf_insn *insn = &prog->insns[pc];

			if (insn_is_helper_call(insn) &&
			    bpfrt_prog_helper(prog, (uint32_t)insn->imm) &&
			    prog->helpers[insn->imm].fn == bpfrt_helper_tail_call &&
			    below[sp] >= TAIL_CALL_CALLER_STACK_MAX) {
				env->insn = pc;
				err = verr(env, "tail_calls are not allowed when call stack of previous "
					   "frames is %u bytes. Too large", below[sp]);
				break;
			}
			if (insn_is_lddw(insn))
				pc++;
		}
	free(below);
	return err;
}
