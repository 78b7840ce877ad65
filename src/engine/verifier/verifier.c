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
 * ends its path (pruning). The walk stops at BPFRT_VERIFY_MAX_PROCESSED
 * instructions.
 *
 * Files: verifier.c (driver, states, memory, calls, pruning), scalar.c
 * (ALU bounds and branch refinement), tnum.c. */
#include "verifier/vstate.h"
#include "verifier/validate.h"
#include "core/env.h"
#include "core/error.h"
#include "helpers/callback.h"
#include "maps/map.h"
#include "bpfrt/tracepoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VAR_OFF     (1 << 29) /* BPF_MAX_VAR_OFF */
#define MAX_VAR_SIZE    (1 << 29) /* BPF_MAX_VAR_SIZ */
#define MAX_PACKET_OFF  0xffff
#define MAX_CB_ENTRIES  64        /* callback re-entries per call site */
#define MAX_STATES_PER_INSN 256

static const char *const type_names[VREG_TYPE_CNT] = {
	[NOT_INIT] = "?", [SCALAR] = "scalar", [PTR_TO_CTX] = "ctx",
	[PTR_TO_STACK] = "fp", [CONST_PTR_TO_MAP] = "map_ptr",
	[PTR_TO_MAP_VALUE] = "map_value", [PTR_TO_MAP_KEY] = "map_key",
	[PTR_TO_MEM] = "mem", [PTR_TO_PACKET] = "pkt", [PTR_TO_PACKET_END] = "pkt_end",
	[PTR_TO_FUNC] = "func",
};

static const char *reg_type_str(const struct vreg *r)
{
	static __thread char buf[32];

	if (!(r->flags & PTR_MAYBE_NULL))
		return type_names[r->type];
	snprintf(buf, sizeof(buf), "%s_or_null", type_names[r->type]);
	return buf;
}

/* ---- log ----------------------------------------------------------------- */

static void log_append(struct venv *env, const char *s, size_t len)
{
	size_t cap;

	if (!env->log_buf || env->log_size < 2)
		return;
	cap = env->log_size - 1;
	if (len > cap) {
		s += len - cap;
		len = cap;
	}
	if (env->log_len + len > cap) {
		/* keep the tail, as the kernel's rotating log does: the end of
		 * the failing path is what explains the rejection */
		size_t drop = env->log_len + len - cap;

		if (drop < cap / 4)
			drop = cap / 4;
		if (drop > env->log_len)
			drop = env->log_len;
		memmove(env->log_buf, env->log_buf + drop, env->log_len - drop);
		env->log_len -= drop;
		env->log_truncated = true;
	}
	memcpy(env->log_buf + env->log_len, s, len);
	env->log_len += len;
	env->log_buf[env->log_len] = 0;
}

void vlog(struct venv *env, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (!env->log_buf)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	log_append(env, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Records the rejection of the current instruction; returns -EACCES. */
int verr(struct venv *env, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(env->msg, sizeof(env->msg), fmt, ap);
	va_end(ap);
	return -EACCES;
}

static void sprint_scalar(char *buf, size_t len, const struct vreg *r)
{
	char t[64];
	size_t n;

	if (tnum_is_const(r->var_off)) {
		snprintf(buf, len, "%lld", (long long)r->var_off.value);
		return;
	}
	n = (size_t)snprintf(buf, len, "(");
	if (r->smin != INT64_MIN && n < len)
		n += (size_t)snprintf(buf + n, len - n, "smin=%lld,", (long long)r->smin);
	if (r->smax != INT64_MAX && n < len)
		n += (size_t)snprintf(buf + n, len - n, "smax=%lld,", (long long)r->smax);
	if (r->umin && n < len)
		n += (size_t)snprintf(buf + n, len - n, "umin=%llu,", (unsigned long long)r->umin);
	if (r->umax != UINT64_MAX && n < len)
		n += (size_t)snprintf(buf + n, len - n, "umax=%llu,", (unsigned long long)r->umax);
	if (!tnum_is_unknown(r->var_off) && n < len) {
		tnum_sprint(t, sizeof(t), r->var_off);
		n += (size_t)snprintf(buf + n, len - n, "var_off=%s,", t);
	}
	if (n > 1 && n < len && buf[n - 1] == ',')
		n--;
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

static void sprint_reg(char *buf, size_t len, const struct vreg *r)
{
	char v[200];
	size_t n;

	if (r->type == SCALAR) {
		sprint_scalar(v, sizeof(v), r);
		snprintf(buf, len, "%s%s", tnum_is_const(r->var_off) ? "" : "scalar", v);
		return;
	}
	n = (size_t)snprintf(buf, len, "%s(", reg_type_str(r));
	if (r->id && n < len)
		n += (size_t)snprintf(buf + n, len - n, "id=%u,", r->id);
	if (r->ref_obj_id && n < len)
		n += (size_t)snprintf(buf + n, len - n, "ref_obj_id=%u,", r->ref_obj_id);
	if (r->type == PTR_TO_STACK && n < len)
		n += (size_t)snprintf(buf + n, len - n, "frame=%u,", r->frameno);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "off=%d", r->off);
	if (r->map && n < len)
		n += (size_t)snprintf(buf + n, len - n, ",ks=%u,vs=%u", r->map->key_size,
				      r->map->value_size);
	if (r->type == PTR_TO_MEM && n < len)
		n += (size_t)snprintf(buf + n, len - n, ",size=%u", r->mem_size);
	if (r->type == PTR_TO_PACKET && n < len)
		n += (size_t)snprintf(buf + n, len - n, ",r=%d", r->range);
	if (!tnum_equals_const(r->var_off, 0) && n < len) {
		sprint_scalar(v, sizeof(v), r);
		n += (size_t)snprintf(buf + n, len - n, ",var=%s", v);
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

static void log_state(struct venv *env, const struct vstate *st)
{
	for (uint32_t f = 0; f <= st->curframe; f++) {
		const struct vframe *fr = st->frames[f];
		char b[400];

		if (st->curframe)
			vlog(env, " frame%u:", f);
		for (int r = 0; r < BPF_NREGS; r++) {
			if (fr->regs[r].type == NOT_INIT)
				continue;
			if (r == BPF_R10 && fr->regs[r].off == 0)
				vlog(env, " R10=fp0");
			else {
				sprint_reg(b, sizeof(b), &fr->regs[r]);
				vlog(env, " R%d=%s", r, b);
			}
		}
		for (uint32_t i = 0; i < fr->nslots; i++) {
			const struct vslot *s = &fr->slots[i];
			char t[9];
			bool any = false;

			for (int k = 0; k < 8; k++) {
				t[k] = "?mz r"[s->type[k] == STACK_SPILL ? 4 : s->type[k]];
				any |= s->type[k] != STACK_INVALID;
			}
			t[8] = 0;
			if (!any)
				continue;
			if (slot_has_spill(s) && s->spill_size == 8) {
				sprint_reg(b, sizeof(b), &s->spilled);
				vlog(env, " fp%d=%s", -(int)(i + 1) * 8, b);
			} else {
				vlog(env, " fp%d=%s", -(int)(i + 1) * 8, t);
			}
		}
	}
	if (st->nrefs) {
		vlog(env, " refs=");
		for (uint32_t i = 0; i < st->nrefs; i++)
			vlog(env, "%s%u", i ? "," : "", st->refs[i].id);
	}
	vlog(env, "\n");
}

static void log_insn(struct venv *env, uint32_t pc)
{
	char text[128];

	if (bpfrt_disasm_insn(env->insns + pc, env->n - pc, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad)");
	vlog(env, "%u: (%02x) %s\n", pc, env->insns[pc].code, text);
}

/* ---- states ---------------------------------------------------------------- */

static struct vframe *frame_new(uint32_t nslots)
{
	struct vframe *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->nslots = nslots;
	if (nslots && !(f->slots = calloc(nslots, sizeof(*f->slots)))) {
		free(f);
		return NULL;
	}
	return f;
}

static void frame_free(struct vframe *f)
{
	if (f) {
		free(f->slots);
		free(f);
	}
}

static void *memdup(const void *src, size_t len)
{
	void *p = malloc(len);

	return p ? memcpy(p, src, len) : NULL;
}

static struct vframe *frame_copy(const struct vframe *src)
{
	struct vframe *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	*f = *src;
	f->slots = NULL;
	if (src->nslots && !(f->slots = memdup(src->slots, src->nslots * sizeof(*f->slots)))) {
		free(f);
		return NULL;
	}
	return f;
}

static void state_free(struct vstate *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i <= st->curframe; i++)
		frame_free(st->frames[i]);
	free(st->refs);
	free(st);
}

static struct vstate *state_copy(const struct vstate *src)
{
	struct vstate *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->curframe = src->curframe;
	st->parent = src->parent;
	st->joined = src->joined;
	st->join_insn = src->join_insn;
	st->insn = src->insn;
	for (uint32_t i = 0; i <= src->curframe; i++) {
		st->frames[i] = frame_copy(src->frames[i]);
		if (!st->frames[i]) {
			st->curframe = i ? i - 1 : 0;
			if (!i)
				st->frames[0] = NULL;
			state_free(st);
			return NULL;
		}
	}
	if (src->nrefs) {
		st->refs = memdup(src->refs, src->nrefs * sizeof(*st->refs));
		if (!st->refs) {
			state_free(st);
			return NULL;
		}
		st->nrefs = src->nrefs;
	}
	return st;
}

static struct vframe *cur_frame(struct venv *env)
{
	return env->cur->frames[env->cur->curframe];
}

static struct vreg *cur_regs(struct venv *env)
{
	return cur_frame(env)->regs;
}

static void mark_not_init(struct vreg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = NOT_INIT;
}

static void mark_ptr(struct vreg *r, enum vreg_type t)
{
	memset(r, 0, sizeof(*r));
	r->type = (uint8_t)t;
	vreg_mark_const(r, 0); /* variable offset 0 */
	r->type = (uint8_t)t;
}

static bool is_ptr(const struct vreg *r)
{
	return r->type != NOT_INIT && r->type != SCALAR;
}

/* Pointer leaks: the one rule, checked wherever a value leaves the typed
 * world. A pointer's value (or any part of it) must never become data
 * that the program or anyone else can read as a number: stored into a map
 * value, ringbuf record, context or packet; passed to a helper as a plain
 * value or inside memory the helper reads; returned; exchanged by an
 * atomic; compared (a branch reveals its bits); subtracted from another
 * pointer; copied in part (mov32, movsx, a partial fill); or left in stack
 * bytes that become plain data (a partial overwrite of its spill, a
 * variable-offset write over it, the end of the frame it points into).
 * Maps are shared with other processes, so any of these would hand out
 * the host's address layout. This is Linux's rule without allow_ptr_leaks
 * (unprivileged); programs loaded with BPFRT_F_ALLOW_PTR_LEAKS are trusted
 * as privileged Linux trusts its programs and may leak. Returns 0 if val
 * is no pointer or leaks are allowed, else rejects with the message fmt
 * (which names the destination). */
static bool ptr_leaks_allowed(const struct venv *env)
{
	return env->prog->load_flags & BPFRT_F_ALLOW_PTR_LEAKS;
}

static int check_ptr_leak(struct venv *env, const struct vreg *val, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int check_ptr_leak(struct venv *env, const struct vreg *val, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!is_ptr(val) || ptr_leaks_allowed(env))
		return 0;
	va_start(ap, fmt);
	vsnprintf(env->msg, sizeof(env->msg), fmt, ap);
	va_end(ap);
	n = strlen(env->msg);
	snprintf(env->msg + n, sizeof(env->msg) - n,
		 " (the value is a %s pointer; only programs loaded with "
		 "BPFRT_F_ALLOW_PTR_LEAKS may leak pointers)", reg_type_str(val));
	return -EACCES;
}

static uint32_t frame_slots_for(struct venv *env, uint32_t subprog)
{
	return (env->prog->subprogs[subprog].stack_depth + 7) / 8;
}

/* Every register and spilled register of every frame (callback for
 * id-wide updates). */
#define for_each_reg(st, r, body)                                                   \
	do {                                                                        \
		for (uint32_t __f = 0; __f <= (st)->curframe; __f++) {               \
			struct vframe *__fr = (st)->frames[__f];                     \
			for (int __i = 0; __i < BPF_NREGS; __i++) {                  \
				struct vreg *r = &__fr->regs[__i];                   \
				body;                                                \
			}                                                            \
			for (uint32_t __s = 0; __s < __fr->nslots; __s++) {          \
				struct vreg *r = &__fr->slots[__s].spilled;          \
				if (!slot_has_spill(&__fr->slots[__s]))              \
					continue;                                    \
				body;                                                \
			}                                                            \
		}                                                                   \
	} while (0)

static int acquire_ref(struct venv *env, uint32_t *id)
{
	struct vstate *st = env->cur;
	struct vref *n = realloc(st->refs, (st->nrefs + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	st->refs = n;
	*id = ++env->id_gen;
	st->refs[st->nrefs++] = (struct vref){ *id, env->insn };
	return 0;
}

static bool release_ref_state(struct vstate *st, uint32_t id)
{
	for (uint32_t i = 0; i < st->nrefs; i++)
		if (st->refs[i].id == id) {
			st->refs[i] = st->refs[--st->nrefs];
			return true;
		}
	return false;
}

/* The record is gone: every register that pointed into it is invalid. */
static void release_reference(struct vstate *st, uint32_t id)
{
	release_ref_state(st, id);
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct vframe *fr = st->frames[f];

		for (int i = 0; i < BPF_NREGS; i++)
			if (fr->regs[i].ref_obj_id == id)
				mark_not_init(&fr->regs[i]);
		for (uint32_t k = 0; k < fr->nslots; k++)
			if (slot_has_spill(&fr->slots[k]) && fr->slots[k].spilled.ref_obj_id == id)
				vreg_mark_unknown(&fr->slots[k].spilled);
	}
}

/* ---- program kinds ----------------------------------------------------------- */

#define PT_REGS_SIZE     168  /* x86-64 struct pt_regs */
#define SK_BUFF_SIZE     192  /* struct __sk_buff */
#define XDP_MD_SIZE      24   /* struct xdp_md */

/* Arguments of the tracepoint the program names, or the most any has
 * (the attach point then checks max_ctx_access against its own). */
static uint32_t tracepoint_nargs(const struct bpfrt_prog *prog)
{
	const char *t = prog->attach_target ? prog->attach_target : "";
	const struct bpfrt_tracepoint *tp = *t ? bpfrt_tracepoint_find(t) : NULL;
	const char *slash = strrchr(t, '/');

	if (!tp && slash)
		tp = bpfrt_tracepoint_find(slash + 1);
	return tp ? tp->nargs : BPFRT_TP_MAX_ARGS;
}

static void setup_ctx(struct venv *env, uint32_t ctx_size)
{
	env->ctx_rdonly = true;
	switch (env->prog->kind) {
	case BPFRT_PROG_TRACEPOINT:
		env->ctx_size = 8 + 8 * tracepoint_nargs(env->prog);
		break;
	case BPFRT_PROG_RAW_TRACEPOINT:
		env->ctx_size = 8 * tracepoint_nargs(env->prog);
		break;
	case BPFRT_PROG_FENTRY:
	case BPFRT_PROG_FENTRY_MULTI:
		env->ctx_size = 6 * 8; /* the trampoline frame holds 6 arguments */
		env->ctx_u64_only = true;
		break;
	case BPFRT_PROG_FEXIT:
	case BPFRT_PROG_FMOD_RET:
		/* and the return value (so far); attach checks the slot
		 * against the target's argument count */
		env->ctx_size = 7 * 8;
		env->ctx_u64_only = true;
		break;
	case BPFRT_PROG_KPROBE:
	case BPFRT_PROG_KRETPROBE:
	case BPFRT_PROG_UPROBE:
		env->ctx_size = PT_REGS_SIZE;
		break;
	case BPFRT_PROG_SOCKET:
		env->ctx_size = SK_BUFF_SIZE;
		break;
	case BPFRT_PROG_XDP:
		env->ctx_size = XDP_MD_SIZE;
		break;
	default: /* UNSPEC, SYSCALL: caller-described memory */
		env->ctx_size = ctx_size;
		env->ctx_rdonly = false;
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

static bool kind_has_packet(const struct venv *env)
{
	return env->prog->kind == BPFRT_PROG_XDP;
}

static int init_state(struct venv *env)
{
	struct vstate *st = calloc(1, sizeof(*st));
	struct vreg *regs;

	if (!st)
		return -ENOMEM;
	st->frames[0] = frame_new(frame_slots_for(env, 0));
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

/* ---- static facts: prune points, liveness -------------------------------------- */

#define REGMASK(r) ((uint16_t)(1u << (r)))
#define ARG_REGS (REGMASK(1) | REGMASK(2) | REGMASK(3) | REGMASK(4) | REGMASK(5))

static void mark_prune_points(struct venv *env)
{
	for (uint32_t pc = 0; pc < env->n; pc++) {
		const struct bpf_insn *insn = &env->insns[pc];

		if (insn_is_lddw(insn)) {
			pc++;
			continue;
		}
		if (insn_is_branch(insn)) {
			env->prune_point[insn_branch_target(insn, pc)] = 1;
			if (insn_op(insn) != BPF_JA)
				env->prune_point[pc + 1] = 1;
		} else if (insn_is_call(insn) && pc + 1 < env->n) {
			env->prune_point[pc + 1] = 1;
		}
	}
	for (uint32_t s = 0; s < env->prog->subprog_cnt; s++)
		env->prune_point[env->prog->subprogs[s].start] = 1;
}

/* 1 at the second half of every lddw (not an instruction of its own), or
 * NULL without memory. */
static uint8_t *lddw_tails(const struct venv *env)
{
	uint8_t *tail = calloc(env->n, 1);

	if (tail)
		for (uint32_t pc = 0; pc + 1 < env->n; pc++)
			if (insn_is_lddw(&env->insns[pc]))
				tail[++pc] = 1;
	return tail;
}

/* Registers possibly read before being written from each insn on (within
 * its subprogram; a local call reads its argument registers). Pruning
 * compares only these. */
static int compute_liveness(struct venv *env, uint16_t **out)
{
	uint16_t *live = calloc(env->n, sizeof(*live));
	uint8_t *tail = lddw_tails(env);
	bool changed = true;

	if (!live || !tail) {
		free(live);
		free(tail);
		return -ENOMEM;
	}
	while (changed) {
		changed = false;
		for (uint32_t i = env->n; i-- > 0;) {
			const struct bpf_insn *insn = &env->insns[i];
			struct bpfrt_reg_use u;
			uint32_t succ[2];
			uint16_t lo = 0, in;
			unsigned k;

			if (tail[i])
				continue;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n)
					lo |= live[succ[j]];
			bpfrt_insn_reg_use(env->prog, insn, &u);
			if (insn_is_local_call(insn) || insn_is_callx(insn))
				u.use |= ARG_REGS;
			in = (uint16_t)(u.use | (lo & ~(u.def | u.kill)));
			if (in != live[i]) {
				live[i] = in;
				changed = true;
			}
		}
	}
	free(tail);
	*out = live;
	return 0;
}

/* Which registers and stack slots (r10 + constant) may decide a later
 * branch, before each insn: values flowing into a conditional jump's
 * operands through moves, ALU operations and fills. Joins leave these
 * alone, so loop counters are walked iteration by iteration (what Linux's
 * precision tracking gives it, computed here statically and roughly: it
 * only steers joins, soundness never depends on it). */
static int compute_precise(struct venv *env)
{
	uint8_t *tail = lddw_tails(env);
	bool changed = true;

	env->precise = calloc(env->n, sizeof(*env->precise));
	env->precise_slots = calloc(env->n, sizeof(*env->precise_slots));
	if (!tail || !env->precise || !env->precise_slots) {
		free(tail);
		return -ENOMEM;
	}
	while (changed) {
		changed = false;
		for (uint32_t i = env->n; i-- > 0;) {
			const struct bpf_insn *insn = &env->insns[i];
			uint16_t out = 0, in, dst = REGMASK(insn->dst_reg & 15);
			uint16_t src = REGMASK(insn->src_reg & 15);
			uint64_t sout = 0, sin;
			uint32_t succ[2];
			int32_t slot = -1;
			unsigned k;

			if (tail[i])
				continue;
			k = bpfrt_insn_successors(env->insns, i, succ);
			for (unsigned j = 0; j < k; j++)
				if (succ[j] < env->n) {
					out |= env->precise[succ[j]];
					sout |= env->precise_slots[succ[j]];
				}
			if (bpfrt_insn_mem_base(insn) == BPF_R10 && insn->off < 0 && insn->off >= -512)
				slot = (-insn->off - 1) / 8;
			in = out;
			sin = sout;
			switch (insn_class(insn)) {
			case BPF_ALU:
			case BPF_ALU64:
				if (insn_op(insn) == BPF_MOV) {
					in = out & ~dst;
					if ((out & dst) && insn_src(insn) == BPF_X)
						in |= src;
				} else if ((out & dst) && insn_src(insn) == BPF_X) {
					in |= src;
				}
				break;
			case BPF_LDX:
				in = out & ~dst;
				if ((out & dst) && slot >= 0)
					sin |= 1ull << slot;
				break;
			case BPF_ST:
			case BPF_STX:
				if (slot < 0 || insn_mode(insn) == BPF_ATOMIC)
					break;
				if (insn_class(insn) == BPF_STX && (sout & (1ull << slot)))
					in |= src;
				if (insn_size(insn) == BPF_DW && insn->off % 8 == 0)
					sin &= ~(1ull << slot);
				break;
			case BPF_LD:
				in = out & ~dst;
				break;
			default:
				if (insn_is_exit(insn))
					in = REGMASK(BPF_R0);
				else if (insn_is_call(insn) || insn_is_callx(insn))
					in = (uint16_t)((out & ~(ARG_REGS | REGMASK(0))) | ARG_REGS);
				else if (insn_op(insn) != BPF_JA)
					in = out | dst | (insn_src(insn) == BPF_X ? src : 0);
				break;
			}
			if (in != env->precise[i] || sin != env->precise_slots[i]) {
				env->precise[i] = in;
				env->precise_slots[i] = sin;
				changed = true;
			}
		}
	}
	free(tail);
	return 0;
}

/* ---- memory accesses ----------------------------------------------------------- */

static struct vreg *reg_at(struct venv *env, int regno)
{
	return &cur_regs(env)[regno];
}

static int check_reg_init(struct venv *env, int regno)
{
	if (reg_at(env, regno)->type == NOT_INIT)
		return verr(env, "R%d !read_ok", regno);
	return 0;
}

/* Value read from memory into dst: an unknown number of `size` bytes. */
static void mark_loaded(struct vreg *dst, unsigned size, bool sext)
{
	memset(dst, 0, sizeof(*dst));
	dst->type = SCALAR;
	vreg_mark_load(dst, size, sext);
}

static void note_stack_use(struct venv *env, uint32_t frameno, int32_t lowest)
{
	uint32_t sp = env->cur->frames[frameno]->subprog;
	uint32_t depth = (uint32_t)-lowest;

	if (lowest < 0 && depth > env->max_stack[sp])
		env->max_stack[sp] = depth;
}

/* [off, off+size) of the frame the pointer reg points into; variable
 * offsets are covered by [min, max]. Returns the frame or NULL. */
static struct vframe *stack_range(struct venv *env, int regno, const struct vreg *reg,
				  int32_t off, uint32_t size, int64_t *lo, int64_t *hi, int *err)
{
	struct vframe *fr = env->cur->frames[reg->frameno];
	int64_t base = (int64_t)reg->off + off;

	*err = 0;
	if (reg->smin < -MAX_VAR_OFF || reg->smax > MAX_VAR_OFF) {
		*err = verr(env, "R%d unbounded variable offset stack access", regno);
		return NULL;
	}
	*lo = base + reg->smin;
	*hi = base + reg->smax + size;
	if (*lo < -(int64_t)fr->nslots * 8 || *hi > 0 || size == 0) {
		if (tnum_is_const(reg->var_off))
			*err = verr(env, "invalid stack access R%d off=%lld size=%u (frame is %u bytes)",
				    regno, (long long)(base + reg->smin), size, fr->nslots * 8);
		else
			*err = verr(env, "invalid variable-offset stack access R%d "
				    "[%lld, %lld) (frame is %u bytes)", regno, (long long)*lo,
				    (long long)*hi, fr->nslots * 8);
		return NULL;
	}
	note_stack_use(env, reg->frameno, (int32_t)*lo);
	return fr;
}

static uint8_t *slot_byte(struct vframe *fr, int64_t at)
{
	int64_t below = -at - 1;          /* 0 for the byte at -1 */
	uint32_t slot = (uint32_t)(below / 8);

	return &fr->slots[slot].type[7 - below % 8];
}

static struct vslot *slot_of(struct vframe *fr, int64_t at)
{
	return &fr->slots[(uint32_t)((-at - 1) / 8)];
}

/* The spilled pointer byte `at` of the frame is part of, or NULL. */
static const struct vreg *spilled_ptr_at(struct vframe *fr, int64_t at)
{
	struct vslot *s = slot_of(fr, at);

	if (!slot_has_spill(s) || !is_ptr(&s->spilled) || *slot_byte(fr, at) != STACK_SPILL)
		return NULL;
	return &s->spilled;
}

static void destroy_spill(struct vslot *s)
{
	for (int k = 0; k < 8; k++)
		if (s->type[k] == STACK_SPILL)
			s->type[k] = STACK_MISC;
	s->spill_size = 0;
	s->spill_off = 0;
}

static bool vreg_is_zero(const struct vreg *r)
{
	return r->type == SCALAR && tnum_equals_const(r->var_off, 0);
}

/* Store of `size` bytes at [lo, lo+size) (constant offset) of value
 * (NULL: unknown data, e.g. a BPF_ST immediate made a scalar). */
static int stack_write_fixed(struct venv *env, struct vframe *fr, int64_t lo, uint32_t size,
			     const struct vreg *value)
{
	struct vslot *s = slot_of(fr, lo);
	uint32_t bo = (uint32_t)(lo - (-(int64_t)((-lo - 1) / 8 + 1) * 8)); /* byte in slot */
	int err;

	/* only a write of its whole slot replaces a spilled pointer: a
	 * narrower one would leave its other bytes behind as data */
	for (int64_t a = lo; a < lo + size; a++) {
		const struct vreg *p = spilled_ptr_at(fr, a);
		int64_t slot_lo = a & ~7ll;

		if (p && (slot_lo < lo || slot_lo + 8 > lo + size) &&
		    (err = check_ptr_leak(env, p, "attempt to corrupt spilled pointer on "
					       "stack: %u-byte write at off %lld", size,
					       (long long)lo)))
			return err;
	}
	if (value && is_ptr(value)) {
		if (size != 8)
			return verr(env, "invalid size of register spill");
		/* it would outlive the frame it points into (and then be a
		 * number: its address), as Linux */
		if (value->type == PTR_TO_STACK && fr != cur_frame(env))
			return verr(env, "cannot spill pointers to stack into stack frame of the "
				    "caller");
		if (lo % 8)
			return verr(env, "misaligned stack access off %lld for a pointer spill",
				    (long long)lo);
	}
	if (value && value->type != NOT_INIT && lo % size == 0 && bo + size <= 8 &&
	    (size == 8 || value->type == SCALAR)) {
		/* spill: a whole register, or a scalar into aligned bytes */
		destroy_spill(s);
		s->spilled = *value;
		s->spill_off = (uint8_t)bo;
		s->spill_size = (uint8_t)size;
		if (size < 8)
			vreg_coerce(&s->spilled, size);
		for (uint32_t k = bo; k < bo + size; k++)
			s->type[k] = STACK_SPILL;
		return 0;
	}
	for (int64_t a = lo; a < lo + size; a++) {
		struct vslot *sa = slot_of(fr, a);

		destroy_spill(sa);
		*slot_byte(fr, a) = value && vreg_is_zero(value) ? STACK_ZERO : STACK_MISC;
	}
	return 0;
}

/* Load of `size` bytes at [lo, lo+size) of the frame into dst (NULL: only
 * check the bytes are initialised, as a helper reading memory does). */
static int stack_read_fixed(struct venv *env, struct vframe *fr, int64_t lo, uint32_t size,
			    struct vreg *dst, bool sext)
{
	struct vslot *s = slot_of(fr, lo);
	bool zero = true;

	if (dst) {
		uint32_t bo = (uint32_t)(lo - (-(int64_t)((-lo - 1) / 8 + 1) * 8));
		bool spilled = bo == s->spill_off && size <= s->spill_size && bo + size <= 8;

		for (uint32_t k = bo; spilled && k < bo + size; k++)
			spilled = s->type[k] == STACK_SPILL;
		if (spilled && size == 8) {
			*dst = s->spilled;
			return 0;
		}
		if (spilled && s->spilled.type == SCALAR) {
			*dst = s->spilled;
			vreg_coerce(dst, size);
			if (sext)
				vscalar_sext(dst, size * 8, true);
			if (size < s->spill_size)
				dst->id = 0;
			return 0;
		}
	}
	/* part of a spilled pointer is never a number, trusted or not (as
	 * Linux, privileged or not) */
	for (int64_t a = lo; a < lo + size; a++)
		if (spilled_ptr_at(fr, a))
			return verr(env, "invalid size of register fill: %u-byte read at stack off "
				    "%lld of a spilled pointer", size, (long long)lo);
	for (int64_t a = lo; a < lo + size; a++) {
		uint8_t t = *slot_byte(fr, a);

		if (t == STACK_INVALID)
			return verr(env, "invalid read from stack off %lld+%lld size %u",
				    (long long)lo, (long long)(a - lo), size);
		zero &= t == STACK_ZERO;
	}
	if (!dst)
		return 0;
	if (zero) {
		memset(dst, 0, sizeof(*dst));
		dst->type = SCALAR;
		vreg_mark_const(dst, 0);
	} else {
		mark_loaded(dst, size, sext);
	}
	return 0;
}

/* Variable-offset stack access: reads need every byte of the range
 * initialised. A write may miss any byte of the range, so it initialises
 * none: uninitialised bytes stay so (a later read of them would read
 * stale host stack), initialised ones become plain data and spills in the
 * range are destroyed. */
static int stack_access_var(struct venv *env, struct vframe *fr, int64_t lo, int64_t hi,
			    bool write, struct vreg *dst, uint32_t size, bool sext)
{
	for (int64_t a = lo; a < hi; a++) {
		uint8_t *t = slot_byte(fr, a);
		const struct vreg *p = spilled_ptr_at(fr, a);
		int err;

		if (p && (err = check_ptr_leak(env, p, write ?
			"spilled pointer at stack off %lld in range of variable-offset stack "
			"write (a partial overwrite leaves its other bytes as data)" :
			"variable-offset read from stack leaks the spilled pointer at off %lld",
			(long long)(a & ~7ll))))
			return err;
		if (write) {
			if (*t == STACK_SPILL)
				destroy_spill(slot_of(fr, a));
			if (*t != STACK_INVALID)
				*t = STACK_MISC;
		} else if (*t == STACK_INVALID) {
			return verr(env, "invalid variable-offset read from stack: byte %lld "
				    "is uninitialized", (long long)a);
		}
	}
	if (dst)
		mark_loaded(dst, size, sext);
	return 0;
}

/* BPF_F_RDONLY_PROG: programs may read the map, never write it. */
static bool map_prog_rdonly(const struct bpfrt_map *map)
{
	return map && (map->map_flags & BPF_F_RDONLY_PROG);
}

/* BPF_F_WRONLY_PROG: programs may write the map, never read it. */
static bool map_prog_wronly(const struct bpfrt_map *map)
{
	return map && (map->map_flags & BPF_F_WRONLY_PROG);
}

/* A map whose value is constant and directly addressable: a one-entry
 * array, frozen and read-only for programs (Linux's bpf_map_is_rdonly
 * with map_direct_value_addr). Loads from it fold; strings in it are
 * BPFRT_ARG_PTR_TO_CONST_STR. */
static bool map_is_const(const struct bpfrt_map *map)
{
	return map && map->type == BPF_MAP_TYPE_ARRAY && map->max_entries == 1 &&
	       bpfrt_map_is_rdonly(map);
}

/* Bounds of [reg + off, +size) against a region of region_size bytes. */
static int check_region(struct venv *env, int regno, const struct vreg *reg, int32_t off,
			uint32_t size, uint64_t region_size, const char *what)
{
	int64_t lo, hi;

	if (reg->smin < -MAX_VAR_OFF || reg->umax > MAX_VAR_OFF)
		return verr(env, "R%d unbounded memory access, make sure to bounds check any "
			    "such access", regno);
	lo = (int64_t)reg->off + off + reg->smin;
	if (lo < 0)
		return verr(env, "R%d min value is negative, either use unsigned index or do a "
			    "if (index >=0) check (%s off=%lld)", regno, what, (long long)lo);
	hi = (int64_t)reg->off + off + (int64_t)reg->umax + size;
	if ((uint64_t)hi > region_size)
		return verr(env, "invalid access to %s, size=%llu off=%lld size=%u", what,
			    (unsigned long long)region_size,
			    (long long)((int64_t)reg->off + off + (int64_t)reg->umax), size);
	return 0;
}

/* xdp_md's data, data_end and data_meta: [0, 12). */
#define XDP_MD_PTR_FIELDS_END 12

/* The value a load of `size` bytes at ctx + off reads (sext: ldsx). */
static int ctx_field(struct venv *env, int32_t off, uint32_t size, struct vreg *dst, bool sext)
{
	if (kind_has_packet(env) && sext && off < XDP_MD_PTR_FIELDS_END)
		/* a sign-extended address is no address (Linux refuses it
		 * the same way) */
		return verr(env, "invalid bpf_context access off=%d size=%u (sign extension of "
			    "packet pointers)", off, size);
	if (kind_has_packet(env) && off < 8 && size != 4)
		/* part of data or data_end, or both at once, would be address
		 * bits as a number (Linux allows only the whole 4 bytes) */
		return verr(env, "invalid bpf_context access off=%d size=%u (packet pointers "
			    "are loaded whole, 4 bytes)", off, size);
	if (kind_has_packet(env) && size == 4 && (off == 0 || off == 4)) {
		mark_ptr(dst, off == 0 ? PTR_TO_PACKET : PTR_TO_PACKET_END);
		return 0;
	}
	mark_loaded(dst, size, sext);
	return 0;
}

static int check_ctx_access(struct venv *env, int regno, const struct vreg *reg, int32_t off,
			    uint32_t size, bool write, struct vreg *dst, bool sext)
{
	int64_t at;

	if (reg->off || !tnum_equals_const(reg->var_off, 0))
		return verr(env, "dereference of modified ctx ptr R%d off=%d disallowed", regno,
			    reg->off);
	at = off;
	if (at < 0 || at + size > env->ctx_size || at % size ||
	    (write && env->ctx_rdonly) || (env->ctx_u64_only && at % 8))
		return verr(env, "invalid bpf_context access off=%lld size=%u%s", (long long)at, size,
			    write && env->ctx_rdonly ? " (context is read-only)" : "");
	if ((uint32_t)at + size > env->max_ctx_access)
		env->max_ctx_access = (uint32_t)at + size;
	if (dst)
		return ctx_field(env, (int32_t)at, size, dst, sext);
	return 0;
}

static int check_packet_access(struct venv *env, int regno, const struct vreg *reg,
			       int32_t off, uint32_t size)
{
	int64_t lo = (int64_t)reg->off + off;

	if (reg->smin < 0 || reg->umax > MAX_PACKET_OFF)
		return verr(env, "R%d offset is outside of the packet (variable part %lld..%llu)",
			    regno, (long long)reg->smin, (unsigned long long)reg->umax);
	if (lo < 0 || lo + size > reg->range)
		return verr(env, "invalid access to packet, off=%lld size=%u, R%d(id=%u,off=%d,r=%d)",
			    (long long)lo, size, regno, reg->id, reg->off, reg->range);
	return 0;
}

/* A constant read from a frozen read-only map (.rodata), as Linux folds
 * them. */
static bool rodata_const(const struct vreg *reg, int32_t off, uint32_t size, struct vreg *dst,
			 bool sext)
{
	const uint8_t *base;
	uint64_t v = 0;
	int64_t at;

	if (!map_is_const(reg->map) || !tnum_is_const(reg->var_off))
		return false;
	base = bpfrt_map_value_ptr(reg->map, 0);
	at = (int64_t)reg->off + off + (int64_t)reg->var_off.value;
	if (!base || at < 0 || at + size > reg->map->value_size)
		return false;
	memcpy(&v, base + at, size);
	memset(dst, 0, sizeof(*dst));
	dst->type = SCALAR;
	vreg_mark_const(dst, v);
	if (sext && size < 8)
		vscalar_sext(dst, size * 8, true);
	return true;
}

/* The access [regno + off, +size): value is what a store writes (NULL:
 * unknown data), dst where a load goes. */
static int check_mem_access(struct venv *env, int regno, int32_t off, uint32_t size,
			    bool write, const struct vreg *value, struct vreg *dst, bool sext)
{
	struct vreg reg = *reg_at(env, regno);
	int err = 0;

	if (reg.type == NOT_INIT)
		return verr(env, "R%d !read_ok", regno);
	if (reg.flags & PTR_MAYBE_NULL)
		return verr(env, "R%d invalid mem access '%s'", regno, reg_type_str(&reg));
	switch (reg.type) {
	case PTR_TO_STACK: {
		int64_t lo, hi;
		struct vframe *fr = stack_range(env, regno, &reg, off, size, &lo, &hi, &err);

		if (!fr)
			return err;
		if (!tnum_is_const(reg.var_off)) {
			/* a variable-offset store is plain data, never a spill */
			if (write && value && (err = check_ptr_leak(env, value, "variable-offset "
					"store through R%d leaks addr into stack (it is kept as data)",
					regno)))
				return err;
			return stack_access_var(env, fr, lo, hi, write, dst, size, sext);
		}
		if (write)
			return stack_write_fixed(env, fr, lo, size, value);
		return stack_read_fixed(env, fr, lo, size, dst, sext);
	}
	case PTR_TO_MAP_VALUE:
		err = check_region(env, regno, &reg, off, size, reg.map->value_size, "map value");
		if (err)
			return err;
		if (write && map_prog_rdonly(reg.map))
			return verr(env, "write into map forbidden, value_size=%u off=%d size=%u",
				    reg.map->value_size, reg.off + off, size);
		if (!write && map_prog_wronly(reg.map))
			return verr(env, "read from map forbidden, value_size=%u off=%d size=%u",
				    reg.map->value_size, reg.off + off, size);
		if (dst && !rodata_const(&reg, off, size, dst, sext))
			mark_loaded(dst, size, sext);
		return 0;
	case PTR_TO_MAP_KEY:
		if (write)
			return verr(env, "R%d cannot write into map_key", regno);
		err = check_region(env, regno, &reg, off, size, reg.map->key_size, "map key");
		break;
	case PTR_TO_MEM:
		err = check_region(env, regno, &reg, off, size, reg.mem_size, "memory");
		break;
	case PTR_TO_CTX:
		return check_ctx_access(env, regno, &reg, off, size, write, dst, sext);
	case PTR_TO_PACKET:
		err = check_packet_access(env, regno, &reg, off, size);
		break;
	case SCALAR:
		return verr(env, "R%d invalid mem access 'scalar'", regno);
	default:
		return verr(env, "R%d invalid mem access '%s'", regno, reg_type_str(&reg));
	}
	if (!err && dst)
		mark_loaded(dst, size, sext);
	return err;
}

/* ---- instructions: loads, stores, atomics ---------------------------------------- */

static int do_ldx(struct venv *env, const struct bpf_insn *insn)
{
	struct vreg val;
	int err;

	if ((err = check_reg_init(env, insn->src_reg)))
		return err;
	err = check_mem_access(env, insn->src_reg, insn->off, bpf_size_bytes(insn_size(insn)),
			       false, NULL, &val, insn_mode(insn) == BPF_MEMSX);
	if (err)
		return err;
	*reg_at(env, insn->dst_reg) = val;
	return 0;
}

static int do_store(struct venv *env, const struct bpf_insn *insn)
{
	uint32_t size = bpf_size_bytes(insn_size(insn));
	struct vreg imm;
	const struct vreg *value;
	const char *dest = NULL;
	int err;

	if ((err = check_reg_init(env, insn->dst_reg)))
		return err;
	if (insn_class(insn) == BPF_ST) {
		memset(&imm, 0, sizeof(imm));
		imm.type = SCALAR;
		vreg_mark_const(&imm, (uint64_t)(int64_t)insn->imm);
		vreg_coerce(&imm, size);
		value = &imm;
	} else {
		if ((err = check_reg_init(env, insn->src_reg)))
			return err;
		imm = *reg_at(env, insn->src_reg);
		if (imm.type == SCALAR && size < 8)
			vreg_coerce(&imm, size);
		value = &imm;
	}
	switch (reg_at(env, insn->dst_reg)->type) {
	case PTR_TO_STACK: /* a spill: the pointer stays typed */
		break;
	case PTR_TO_MAP_VALUE:
		dest = "map";
		break;
	case PTR_TO_CTX:
		dest = "ctx";
		break;
	case PTR_TO_PACKET:
		dest = "packet";
		break;
	default:
		dest = "mem";
		break;
	}
	if (dest && (err = check_ptr_leak(env, value, "R%d leaks addr into %s", insn->src_reg,
					  dest)))
		return err;
	return check_mem_access(env, insn->dst_reg, insn->off, size, true, value, NULL, false);
}

static int do_atomic(struct venv *env, const struct bpf_insn *insn)
{
	uint32_t size = bpf_size_bytes(insn_size(insn));
	const struct vreg *base;
	struct vreg old;
	int err;

	if ((err = check_reg_init(env, insn->dst_reg)) || (err = check_reg_init(env, insn->src_reg)))
		return err;
	if (insn->imm == BPF_CMPXCHG && (err = check_reg_init(env, BPF_R0)))
		return err;
	base = reg_at(env, insn->dst_reg);
	if (base->type != PTR_TO_STACK && base->type != PTR_TO_MAP_VALUE &&
	    base->type != PTR_TO_MEM)
		return verr(env, "BPF_ATOMIC stores into R%d %s is not allowed", insn->dst_reg,
			    reg_type_str(base));
	/* Natural alignment, as Linux requires of atomics everywhere: a
	 * misaligned lock-prefixed op is a split (bus) lock on x86-64 and
	 * faults on arm64 and riscv64. Stack, map values and ringbuf records
	 * start 8-aligned, so the offset decides. */
	{
		struct tnum at = tnum_add(base->var_off,
					  tnum_const((uint64_t)((int64_t)base->off + insn->off)));

		if ((at.value | at.mask) & (size - 1))
			return verr(env, "misaligned %saccess off %d+%d size %u",
				    base->type == PTR_TO_STACK ? "stack " :
				    base->type == PTR_TO_MAP_VALUE ? "value " : "", base->off,
				    insn->off, size);
	}
	if ((err = check_ptr_leak(env, reg_at(env, insn->src_reg), "R%d leaks addr into mem",
				  insn->src_reg)))
		return err;
	if (insn->imm == BPF_CMPXCHG &&
	    (err = check_ptr_leak(env, reg_at(env, BPF_R0), "R0 leaks addr into mem")))
		return err;
	/* the old value is read (must be initialised), then data is written */
	err = check_mem_access(env, insn->dst_reg, insn->off, size, false, NULL, &old, false);
	if (!err)
		err = check_ptr_leak(env, &old, "leaking pointer from stack: BPF_ATOMIC on the "
				     "spilled pointer at R%d off=%d", insn->dst_reg, insn->off);
	if (!err)
		err = check_mem_access(env, insn->dst_reg, insn->off, size, true, NULL, NULL, false);
	if (err)
		return err;
	if (insn->imm == BPF_CMPXCHG)
		mark_loaded(reg_at(env, BPF_R0), size, false);
	else if (insn->imm & BPF_FETCH)
		mark_loaded(reg_at(env, insn->src_reg), size, false);
	return 0;
}

/* ---- instructions: ALU ---------------------------------------------------------- */

static const char *alu_name(uint8_t op)
{
	static const char *const names[16] = {
		"+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
		"neg", "%=", "^=", "=", "s>>=", "bswap", "?", "?",
	};
	return names[op >> 4];
}

/* ptr +/- scalar (or scalar + ptr): the pointer keeps its kind, constant
 * steps move off, variable ones its var part. */
static int ptr_arith(struct venv *env, const struct bpf_insn *insn, struct vreg *dst,
		     const struct vreg *ptr, const struct vreg *scalar)
{
	uint8_t op = insn_op(insn);
	struct vreg res = *ptr;

	if (ptr->flags & PTR_MAYBE_NULL)
		return verr(env, "R%d pointer arithmetic on %s prohibited, null-check it first",
			    insn->dst_reg, reg_type_str(ptr));
	switch (ptr->type) {
	case CONST_PTR_TO_MAP:
	case PTR_TO_PACKET_END:
	case PTR_TO_FUNC:
		return verr(env, "R%d pointer arithmetic on %s prohibited", insn->dst_reg,
			    reg_type_str(ptr));
	case PTR_TO_PACKET:
		if (!kind_has_packet(env))
			return verr(env, "R%d pointer arithmetic on pkt prohibited", insn->dst_reg);
		break;
	default:
		break;
	}
	if (scalar->smin < -MAX_VAR_OFF || scalar->smax > MAX_VAR_OFF)
		return verr(env, "R%d math between %s pointer and register with unbounded "
			    "min value is not allowed", insn->dst_reg, type_names[ptr->type]);
	if (vreg_is_const(scalar)) {
		int64_t c = (int64_t)scalar->var_off.value;
		int64_t off = op == BPF_ADD ? (int64_t)ptr->off + c : (int64_t)ptr->off - c;

		if (off < -MAX_VAR_OFF || off > MAX_VAR_OFF)
			return verr(env, "R%d pointer offset %lld is not allowed", insn->dst_reg,
				    (long long)off);
		res.off = (int32_t)off;
	} else {
		struct vreg var = *ptr, s = *scalar;
		struct bpf_insn alu = *insn;

		/* the variable parts combine like two scalars */
		var.type = SCALAR;
		s.type = SCALAR;
		alu.code = BPF_ALU64 | BPF_X | op;
		vscalar_alu(env, &alu, &var, &s, true);
		if (var.smin < -MAX_VAR_OFF || var.smax > MAX_VAR_OFF || var.umax > (1ull << 62))
			return verr(env, "R%d variable offset of %s pointer out of bounds",
				    insn->dst_reg, type_names[ptr->type]);
		res.var_off = var.var_off;
		res.smin = var.smin, res.smax = var.smax;
		res.umin = var.umin, res.umax = var.umax;
		res.s32min = var.s32min, res.s32max = var.s32max;
		res.u32min = var.u32min, res.u32max = var.u32max;
		if (ptr->type == PTR_TO_PACKET) {
			/* a new family: nothing is known about its range yet */
			res.id = ++env->id_gen;
			res.range = 0;
		}
	}
	*dst = res;
	return 0;
}

static int do_alu(struct venv *env, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool x = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	struct vreg *dst = reg_at(env, insn->dst_reg);
	struct vreg src;
	int err;

	if (op == BPF_MOV) {
		if (!x) {
			memset(dst, 0, sizeof(*dst));
			dst->type = SCALAR;
			if (is64)
				vreg_mark_const(dst, (uint64_t)(int64_t)insn->imm);
			else
				vreg_mark_const(dst, (uint32_t)insn->imm);
			return 0;
		}
		if ((err = check_reg_init(env, insn->src_reg)))
			return err;
		src = *reg_at(env, insn->src_reg);
		if (insn->off) { /* movsx */
			if (src.type != SCALAR) {
				if ((err = check_ptr_leak(env, &src, "R%d sign-extension part of "
							  "pointer", insn->src_reg)))
					return err;
				vreg_mark_unknown(dst);
				if (!is64)
					vreg_zext32(dst);
				return 0;
			}
			*dst = src;
			dst->id = 0;
			vscalar_sext(dst, (unsigned)insn->off, is64);
			return 0;
		}
		if (!is64) {
			if (src.type != SCALAR) {
				if ((err = check_ptr_leak(env, &src, "R%d partial copy of pointer",
							  insn->src_reg)))
					return err;
				vreg_mark_unknown(dst); /* a pointer's low half is a number */
			} else {
				*dst = src;
				dst->id = 0;
			}
			vreg_zext32(dst);
			return 0;
		}
		if (src.type == SCALAR && !vreg_is_const(&src) && !src.id) {
			/* copies share an id so a bound learnt on one holds for both */
			src.id = ++env->id_gen;
			reg_at(env, insn->src_reg)->id = src.id;
		}
		*dst = src;
		return 0;
	}
	if ((err = check_reg_init(env, insn->dst_reg)))
		return err;
	if (op == BPF_NEG || op == BPF_END) {
		if (dst->type != SCALAR) {
			if ((err = check_ptr_leak(env, dst, "R%d pointer arithmetic with %s prohibited",
						  insn->dst_reg, op == BPF_NEG ? "neg" : "bswap")))
				return err;
			vreg_mark_unknown(dst); /* a number made of a pointer */
		}
		return vscalar_alu(env, insn, dst, NULL, is64);
	}
	if (x) {
		if ((err = check_reg_init(env, insn->src_reg)))
			return err;
		src = *reg_at(env, insn->src_reg);
	} else {
		memset(&src, 0, sizeof(src));
		src.type = SCALAR;
		vreg_mark_const(&src, is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
	}
	if ((op == BPF_DIV || op == BPF_MOD) && !x && insn->imm == 0)
		return verr(env, "div by zero");
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && !x &&
	    (uint32_t)insn->imm >= (is64 ? 64u : 32u))
		return verr(env, "invalid shift %d", insn->imm);
	if (dst->type == SCALAR && src.type == SCALAR)
		return vscalar_alu(env, insn, dst, &src, is64);

	/* at least one pointer */
	if (!is64)
		return verr(env, "R%d 32-bit pointer arithmetic prohibited", insn->dst_reg);
	if (op == BPF_ADD) {
		if (is_ptr(dst) && is_ptr(&src))
			return verr(env, "R%d pointer += pointer prohibited", insn->dst_reg);
		return is_ptr(dst) ? ptr_arith(env, insn, dst, dst, &src)
				   : ptr_arith(env, insn, dst, &src, dst);
	}
	if (op == BPF_SUB) {
		if (is_ptr(dst) && is_ptr(&src)) {
			if (dst->type != src.type ||
			    (dst->type == PTR_TO_STACK && dst->frameno != src.frameno) ||
			    dst->type == PTR_TO_PACKET_END || src.type == PTR_TO_PACKET_END)
				return verr(env, "R%d pointer -= pointer of another kind prohibited",
					    insn->dst_reg);
			/* two packet pointers differ by an offset into one packet,
			 * which says nothing of the address layout; any other
			 * difference does (two map values, two elements) */
			if (dst->type != PTR_TO_PACKET &&
			    (err = check_ptr_leak(env, dst, "R%d pointer -= pointer prohibited",
						  insn->dst_reg)))
				return err;
			vreg_mark_unknown(dst);
			return 0;
		}
		if (!is_ptr(dst))
			return verr(env, "R%d tried to subtract pointer from scalar", insn->dst_reg);
		return ptr_arith(env, insn, dst, dst, &src);
	}
	return verr(env, "R%d pointer arithmetic with %s operator prohibited", insn->dst_reg,
		    alu_name(op));
}

/* ---- instructions: conditional jumps ----------------------------------------------- */

static struct vstate *push_branch(struct venv *env, uint32_t insn)
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
	st = state_copy(env->cur);
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

/* Null check outcome for every register sharing the pointer's id. */
static void mark_null_outcome(struct vstate *st, uint32_t id, bool is_null)
{
	uint32_t ref = 0;

	for_each_reg(st, r, {
		if (r->id != id || !(r->flags & PTR_MAYBE_NULL))
			continue;
		if (is_null) {
			if (r->ref_obj_id)
				ref = r->ref_obj_id;
			memset(r, 0, sizeof(*r));
			r->type = SCALAR;
			vreg_mark_const(r, 0);
		} else {
			r->flags &= (uint8_t)~PTR_MAYBE_NULL;
		}
	});
	if (ref) /* NULL was never acquired */
		release_ref_state(st, ref);
}

static void set_packet_range(struct vstate *st, const struct vreg *pkt, bool right_open)
{
	int64_t range = (int64_t)pkt->off + (right_open ? 1 : 0);

	if (pkt->off < 0 || range > MAX_PACKET_OFF)
		return;
	for_each_reg(st, r, {
		if (r->type == PTR_TO_PACKET && r->id == pkt->id && r->range < range)
			r->range = (int32_t)range;
	});
}

/* pkt <op> pkt_end (or swapped): which side proves how many bytes. */
static void packet_compare(struct venv *env, struct vstate *taken, struct vstate *fall,
			   const struct vreg *dst, const struct vreg *src, uint8_t op)
{
	const struct vreg *pkt = dst->type == PTR_TO_PACKET ? dst : src;
	bool swapped = dst->type != PTR_TO_PACKET;

	if (swapped) { /* end OP pkt  ==  pkt OP' end */
		switch (op) {
		case BPF_JGT: op = BPF_JLT; break;
		case BPF_JGE: op = BPF_JLE; break;
		case BPF_JLT: op = BPF_JGT; break;
		case BPF_JLE: op = BPF_JGE; break;
		}
	}
	switch (op) {
	case BPF_JGT: /* fall through: pkt <= end */
		set_packet_range(fall, pkt, false);
		break;
	case BPF_JGE: /* fall through: pkt < end */
		set_packet_range(fall, pkt, true);
		break;
	case BPF_JLT:
		set_packet_range(taken, pkt, true);
		break;
	case BPF_JLE:
		set_packet_range(taken, pkt, false);
		break;
	}
}

/* Bounds learnt on a scalar hold for its copies (same id). */
static void sync_scalar_copies(struct vstate *st, const struct vreg *known)
{
	if (!known->id || known->type != SCALAR)
		return;
	for_each_reg(st, r, {
		if (r->type == SCALAR && r->id == known->id)
			*r = *known;
	});
}

static struct vreg *state_reg(struct vstate *st, int regno)
{
	return &st->frames[st->curframe]->regs[regno];
}

static void apply_refined(struct vstate *st, const struct bpf_insn *insn, bool x,
			  const struct vreg *d, const struct vreg *s)
{
	*state_reg(st, insn->dst_reg) = *d;
	sync_scalar_copies(st, d);
	if (x) {
		*state_reg(st, insn->src_reg) = *s;
		sync_scalar_copies(st, s);
	}
}

static int do_cond_jmp(struct venv *env, const struct bpf_insn *insn, uint32_t *next)
{
	bool is32 = insn_class(insn) == BPF_JMP32;
	bool x = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	uint32_t target = (uint32_t)insn_branch_target(insn, env->insn);
	struct vreg *dst = reg_at(env, insn->dst_reg), src;
	struct vstate *other;
	int taken = -1, err;

	if ((err = check_reg_init(env, insn->dst_reg)))
		return err;
	if (x) {
		if ((err = check_reg_init(env, insn->src_reg)))
			return err;
		src = *reg_at(env, insn->src_reg);
	} else {
		memset(&src, 0, sizeof(src));
		src.type = SCALAR;
		vreg_mark_const(&src, is32 ? (uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
	}

	if (dst->type == SCALAR && src.type == SCALAR)
		taken = vscalar_branch_taken(dst, &src, op, is32);
	else if (!is32 && (op == BPF_JEQ || op == BPF_JNE) &&
		 ((is_ptr(dst) && !(dst->flags & PTR_MAYBE_NULL) && vreg_is_zero(&src)) ||
		  (is_ptr(&src) && !(src.flags & PTR_MAYBE_NULL) && vreg_is_zero(dst))))
		taken = op == BPF_JNE; /* a valid pointer is never NULL */

	if (taken == 1) {
		*next = target;
		return 0;
	}
	if (taken == 0) {
		*next = env->insn + 1;
		return 0;
	}
	*next = env->insn + 1;

	if (dst->type == SCALAR && src.type == SCALAR) {
		struct vreg td = *dst, ts = src, fd = *dst, fs = src;
		bool t_ok = vscalar_refine(&td, &ts, op, is32, true);
		bool f_ok = vscalar_refine(&fd, &fs, op, is32, false);

		if (t_ok && f_ok) {
			other = push_branch(env, target);
			if (!other)
				return -ENOMEM;
			apply_refined(other, insn, x, &td, &ts);
		} else if (t_ok) {
			*next = target;
			apply_refined(env->cur, insn, x, &td, &ts);
			return 0;
		} else if (!f_ok) {
			return verr(env, "both branches of the jump are impossible (bounds bug)");
		}
		apply_refined(env->cur, insn, x, &fd, &fs);
		return 0;
	}
	/* a pointer may only be null-checked or compared with a packet
	 * pointer: any other comparison reveals bits of its address */
	if (!(!is32 && (op == BPF_JEQ || op == BPF_JNE) &&
	      (((dst->flags & PTR_MAYBE_NULL) && vreg_is_zero(&src)) ||
	       (x && (src.flags & PTR_MAYBE_NULL) && vreg_is_zero(dst)))) &&
	    !(!is32 && x && (dst->type == PTR_TO_PACKET || dst->type == PTR_TO_PACKET_END) &&
	      (src.type == PTR_TO_PACKET || src.type == PTR_TO_PACKET_END))) {
		bool d = is_ptr(dst);

		if ((err = check_ptr_leak(env, d ? dst : &src, "R%d pointer comparison prohibited",
					  d ? insn->dst_reg : insn->src_reg)))
			return err;
	}
	other = push_branch(env, target);
	if (!other)
		return -ENOMEM;
	if (!is32 && (op == BPF_JEQ || op == BPF_JNE)) {
		const struct vreg *p = NULL;

		if ((dst->flags & PTR_MAYBE_NULL) && vreg_is_zero(&src))
			p = dst;
		else if (x && (src.flags & PTR_MAYBE_NULL) && vreg_is_zero(dst))
			p = &src;
		if (p) {
			uint32_t id = p->id;

			mark_null_outcome(other, id, op == BPF_JEQ);
			mark_null_outcome(env->cur, id, op != BPF_JEQ);
			return 0;
		}
	}
	if (!is32 && x && op != BPF_JEQ && op != BPF_JNE && op != BPF_JSET &&
	    ((dst->type == PTR_TO_PACKET && src.type == PTR_TO_PACKET_END) ||
	     (dst->type == PTR_TO_PACKET_END && src.type == PTR_TO_PACKET)))
		packet_compare(env, other, env->cur, dst, &src, op);
	return 0;
}

/* ---- instructions: helper calls ------------------------------------------------------ */

struct call_args {
	struct bpfrt_map *map;  /* from the CONST_MAP_PTR argument */
	int64_t alloc_size;     /* ringbuf_reserve's size, -1 if not constant */
	uint32_t release_ref;   /* reference a PTR_TO_RINGBUF_MEM argument releases */
	int func_regno;         /* register holding the callback */
};

/* A helper reads (or, uninit, writes) [reg, reg + size) with size up to
 * max_size (exactly max_size if exact). A helper writing the stack
 * initialises only what it surely writes: a constant size at a constant
 * offset writes exactly that range; otherwise (variable size or offset)
 * it may write less, so the range must be initialised beforehand, as
 * Linux requires (check_mem_size_reg drops raw mode for variable sizes). */
static int check_helper_mem(struct venv *env, int regno, uint64_t max_size, bool uninit,
			    bool exact)
{
	struct vreg reg = *reg_at(env, regno);
	uint32_t size = (uint32_t)max_size;
	int err;

	if (reg.flags & PTR_MAYBE_NULL)
		return verr(env, "R%d type=%s expected=fp, pkt, map_value, mem (null-check it first)",
			    regno, reg_type_str(&reg));
	if (!size)
		return 0;
	switch (reg.type) {
	case PTR_TO_STACK: {
		int64_t lo, hi;
		struct vframe *fr = stack_range(env, regno, &reg, 0, size, &lo, &hi, &err);

		if (!fr)
			return err;
		if (uninit && exact && tnum_is_const(reg.var_off))
			return stack_write_fixed(env, fr, lo, size, NULL);
		for (int64_t a = lo; a < hi; a++) {
			const struct vreg *p = spilled_ptr_at(fr, a);

			if (!uninit && p &&
			    (err = check_ptr_leak(env, p, "R%d leaks addr into helper function: "
						  "it reads the spilled pointer at stack off %lld",
						  regno, (long long)(a & ~7ll))))
				return err;
		}
		for (int64_t a = lo; a < hi; a++)
			if (*slot_byte(fr, a) == STACK_INVALID)
				return verr(env, uninit ? "invalid indirect write to stack R%d off "
					    "%lld+%lld size %u: the helper may write fewer bytes "
					    "(variable size or offset), so the range must be "
					    "initialized first" : "invalid indirect read from stack "
					    "R%d off %lld+%lld size %u", regno, (long long)lo,
					    (long long)(a - lo), size);
		if (uninit)
			return stack_access_var(env, fr, lo, hi, true, NULL, 0, false);
		return 0;
	}
	case PTR_TO_MAP_VALUE:
		if (uninit && map_prog_rdonly(reg.map))
			return verr(env, "R%d write into map forbidden", regno);
		if (!uninit && map_prog_wronly(reg.map))
			return verr(env, "R%d read from map forbidden", regno);
		return check_region(env, regno, &reg, 0, size, reg.map->value_size, "map value");
	case PTR_TO_MAP_KEY:
		if (uninit)
			return verr(env, "R%d cannot write into map_key", regno);
		return check_region(env, regno, &reg, 0, size, reg.map->key_size, "map key");
	case PTR_TO_MEM:
		return check_region(env, regno, &reg, 0, size, reg.mem_size, "memory");
	case PTR_TO_PACKET:
		return check_packet_access(env, regno, &reg, 0, size);
	default:
		return verr(env, "R%d type=%s expected=fp, pkt, map_value, mem", regno,
			    reg_type_str(&reg));
	}
}

static int check_size_arg(struct venv *env, int regno, bool zero_ok, uint64_t *max)
{
	const struct vreg *r = reg_at(env, regno);

	if (r->type != SCALAR)
		return verr(env, "R%d type=%s expected=scalar (a size)", regno, reg_type_str(r));
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

/* Which map kinds a helper accepts, as Linux's check_map_func_compatibility. */
static int check_map_compat(struct venv *env, int32_t id, const struct bpfrt_map *map,
			    const struct bpfrt_helper *h)
{
	bool ringbuf_fn = id == BPF_FUNC_ringbuf_output || id == BPF_FUNC_ringbuf_reserve ||
			  id == BPF_FUNC_ringbuf_query;
	bool elem_fn = id == BPF_FUNC_map_lookup_elem || id == BPF_FUNC_map_update_elem ||
		       id == BPF_FUNC_map_delete_elem;
	bool ok = true;

	if (map->type == BPF_MAP_TYPE_RINGBUF)
		ok = ringbuf_fn || id >= BPFRT_KFUNC_ID_BASE;
	else if (map->type == BPF_MAP_TYPE_PROG_ARRAY)
		ok = id == BPF_FUNC_tail_call || id >= BPFRT_KFUNC_ID_BASE;
	else if (ringbuf_fn || id == BPF_FUNC_tail_call)
		ok = false;
	(void)elem_fn;
	if (!ok)
		return verr(env, "cannot pass map_type %u into func %s#%d", map->type,
			    h->name ? h->name : "helper", id);
	/* Linux's record_func_map: the element writers on a read-only map */
	if (map_prog_rdonly(map) &&
	    (id == BPF_FUNC_map_update_elem || id == BPF_FUNC_map_delete_elem))
		return verr(env, "write into map forbidden: %s#%d on map '%s' "
			    "(BPF_F_RDONLY_PROG)", h->name ? h->name : "helper", id, map->name);
	return 0;
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
		if ((err = check_ptr_leak(env, r, "R%d leaks addr into helper function %s", regno,
					  h->name ? h->name : "")))
			return err;
		if (r->type == PTR_TO_STACK) {
			/* the helper may touch the frame anywhere: keep it whole */
			struct vframe *fr = env->cur->frames[r->frameno];

			note_stack_use(env, r->frameno, -(int32_t)fr->nslots * 8);
		}
		return 0;
	case BPFRT_ARG_PTR_TO_CTX:
		if (r->type != PTR_TO_CTX)
			return verr(env, "R%d type=%s expected=ctx", regno, reg_type_str(r));
		if (r->off || !tnum_equals_const(r->var_off, 0))
			return verr(env, "dereference of modified ctx ptr R%d off=%d disallowed",
				    regno, r->off);
		/* a host kfunc may read the whole context (bpfrt's own
		 * helpers taking it read none: they check it is the run's) */
		if (id >= BPFRT_KFUNC_ID_BASE && env->max_ctx_access < env->ctx_size)
			env->max_ctx_access = env->ctx_size;
		return 0;
	case BPFRT_ARG_CONST_MAP_PTR:
		if (r->type != CONST_PTR_TO_MAP)
			return verr(env, "R%d type=%s expected=map_ptr", regno, reg_type_str(r));
		ca->map = r->map;
		return check_map_compat(env, id, r->map, h);
	case BPFRT_ARG_PTR_TO_MAP_KEY:
	case BPFRT_ARG_PTR_TO_MAP_VALUE:
		if (!ca->map)
			return verr(env, "invalid map_ptr to access map->%s",
				    t == BPFRT_ARG_PTR_TO_MAP_KEY ? "key" : "value");
		return check_helper_mem(env, regno, t == BPFRT_ARG_PTR_TO_MAP_KEY ?
					ca->map->key_size : ca->map->value_size, false, true);
	case BPFRT_ARG_PTR_TO_MEM:
	case BPFRT_ARG_PTR_TO_UNINIT_MEM: {
		enum bpfrt_arg_type next = arg < 4 ? h->args[arg + 1] : BPFRT_ARG_NONE;

		if (next != BPFRT_ARG_CONST_SIZE && next != BPFRT_ARG_CONST_SIZE_OR_ZERO)
			return verr(env, "helper %d: memory argument %d has no size argument", id,
				    regno);
		if ((err = check_reg_init(env, regno + 1)))
			return err;
		err = check_size_arg(env, regno + 1, next == BPFRT_ARG_CONST_SIZE_OR_ZERO, &max);
		if (err)
			return err;
		if (vreg_is_zero(r) && max == 0)
			return 0; /* (NULL, 0) */
		return check_helper_mem(env, regno, max, t == BPFRT_ARG_PTR_TO_UNINIT_MEM,
					vreg_is_const(reg_at(env, regno + 1)));
	}
	case BPFRT_ARG_CONST_SIZE:
	case BPFRT_ARG_CONST_SIZE_OR_ZERO: {
		enum bpfrt_arg_type prev = arg ? h->args[arg - 1] : BPFRT_ARG_NONE;

		if (prev == BPFRT_ARG_PTR_TO_MEM || prev == BPFRT_ARG_PTR_TO_UNINIT_MEM)
			return 0; /* checked with its buffer */
		err = check_size_arg(env, regno, t == BPFRT_ARG_CONST_SIZE_OR_ZERO, &max);
		if (err)
			return err;
		if (id == BPF_FUNC_ringbuf_reserve) {
			if (!vreg_is_const(r))
				return verr(env, "R%d is not a known constant", regno);
			ca->alloc_size = (int64_t)r->var_off.value;
		}
		return 0;
	}
	case BPFRT_ARG_PTR_TO_FUNC:
		if (r->type != PTR_TO_FUNC)
			return verr(env, "R%d type=%s expected=func", regno, reg_type_str(r));
		ca->func_regno = regno;
		return 0;
	case BPFRT_ARG_PTR_TO_STACK_OR_NULL:
		if (vreg_is_zero(r))
			return 0;
		if (r->type != PTR_TO_STACK)
			return verr(env, "R%d type=%s expected=fp", regno, reg_type_str(r));
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

			note_stack_use(env, r->frameno, -(int32_t)fr->nslots * 8);
		}
		return 0;
	case BPFRT_ARG_PTR_TO_RINGBUF_MEM:
		if (r->type != PTR_TO_MEM || (r->flags & PTR_MAYBE_NULL) || !r->ref_obj_id)
			return verr(env, "R%d type=%s expected=ringbuf_mem (a non-NULL "
				    "ringbuf_reserve result)", regno, reg_type_str(r));
		if (r->off || !tnum_equals_const(r->var_off, 0))
			return verr(env, "R%d must have zero offset when passed to release func",
				    regno);
		ca->release_ref = r->ref_obj_id;
		return 0;
	case BPFRT_ARG_PTR_TO_LONG:
		return check_helper_mem(env, regno, 8, true, true);
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
	f = frame_new(frame_slots_for(env, subprog));
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

static bool states_equal(struct venv *env, const struct vstate *old, const struct vstate *cur,
			 uint32_t insn, bool exact);
static int join_distance(struct venv *env, const struct vstate *old, const struct vstate *cur,
			 uint32_t insn);
static void join_states(struct venv *env, const struct vstate *old, struct vstate *cur,
			uint32_t insn, bool widen);

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
	struct vreg fn = regs[func_regno], ctx = regs[BPF_R3];
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
		if (states_equal(env, site->entries[i], env->cur, call, false))
			return 0;
	}
	if (same >= 2 && !env->join_off && !env->no_join[call]) {
		/* values the callback keeps changing: widen them so the
		 * iterations converge */
		struct vstate *best = NULL;
		int best_d = 0;

		for (uint32_t i = 0; i < site->cnt; i++) {
			int d = site->inv[i] == inv ?
				join_distance(env, site->entries[i], env->cur, call) : -1;

			if (d >= 0 && (!best || d < best_d))
				best = site->entries[i], best_d = d;
		}
		if (best) {
			join_states(env, best, env->cur, UINT32_MAX, true);
			env->cur->joined = true;
			env->cur->join_insn = call;
			if (states_equal(env, best, env->cur, call, false))
				return 0;
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
	snap = state_copy(env->cur);
	if (!snap)
		return -ENOMEM;
	snap->parent = NULL;
	site->inv[site->cnt] = inv;
	site->entries[site->cnt++] = snap;

	err = push_frame(env, fn.mem_size, call);
	if (err)
		return err;
	f = cur_frame(env);
	f->in_callback = true;
	f->cb_helper = (uint32_t)env->insns[call].imm;
	f->cb_inv = inv;
	/* bpf_loop: callback(u32 index, void *ctx) */
	for (int r = BPF_R1; r <= BPF_R5; r++)
		mark_not_init(&f->regs[r]);
	vreg_mark_unknown(&f->regs[BPF_R1]);
	vreg_zext32(&f->regs[BPF_R1]);
	f->regs[BPF_R2] = ctx;
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
		mark_ptr(r0, PTR_TO_MAP_VALUE);
		r0->map = ca->map;
		r0->flags = PTR_MAYBE_NULL;
		r0->id = ++env->id_gen;
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

/* Returns 1 if the walk continues in a callback or, after a tail call, in
 * the caller (env->insn set), 2 if this path is done. */
static int do_helper_call(struct venv *env, int32_t id)
{
	const struct bpfrt_helper *h = &env->prog->helpers[id];
	struct call_args ca = { .alloc_size = -1, .func_regno = -1 };
	uint32_t ref = 0;
	int err;

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
			    (err = check_ptr_leak(env, reg_at(env, r), "R%d leaks addr into helper "
						  "function trace_printk (its format prints it)", r)))
				return err;
	}
	if (h->ret == BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL && !ca.map)
		return verr(env, "helper %d returns a map value but takes no map", id);
	if (h->ret == BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL && ca.alloc_size < 0)
		return verr(env, "helper %d returns ringbuf memory without a constant size", id);
	if (h->fn == bpfrt_helper_tail_call && env->cur->nrefs)
		return verr(env, "tail_call would lead to reference leak");
	if (ca.release_ref) {
		if (!release_ref_state(env->cur, ca.release_ref))
			return verr(env, "R1 is an unacquired reference");
		/* release_reference below also invalidates every copy */
		release_reference(env->cur, ca.release_ref);
	}
	if (ca.func_regno >= 0) {
		/* 0 iterations: the helper returns without calling back */
		struct vstate *skip = push_branch(env, env->insn + 1);

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
	if (h->ret == BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL && (err = acquire_ref(env, &ref)))
		return err;
	clobber_caller_saved(env);
	set_helper_result(env, h, &ca, ref);
	if (h->fn == bpfrt_helper_tail_call && env->cur->curframe)
		return tail_call_success(env);
	return 0;
}

static int do_call(struct venv *env, const struct bpf_insn *insn)
{
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
	return do_helper_call(env, insn->imm);
}

/* ---- exit ------------------------------------------------------------------------------ */

static int check_return_value(struct venv *env)
{
	const struct vreg *r0 = reg_at(env, BPF_R0);
	int err;

	if (r0->type == NOT_INIT)
		return verr(env, "R0 !read_ok (the program returns an uninitialized value)");
	if ((err = check_ptr_leak(env, r0, "R0 leaks addr as return value")))
		return err;
	if ((env->prog->kind == BPFRT_PROG_FENTRY || env->prog->kind == BPFRT_PROG_FEXIT) &&
	    (r0->type != SCALAR || r0->umin != 0 || r0->umax != 0))
		return verr(env, "At program exit the register R0 has value (%lld; %llu) "
			    "should have been in [0, 0]", (long long)r0->smin,
			    (unsigned long long)r0->umax);
	return 0;
}

/* Pointers into a frame that is going away become plain numbers. No
 * outer frame holds a spill of one (stack_write_fixed: no stack pointer is
 * spilled into a caller's frame) and r0 may not be one (do_exit). */
static void forget_frame_pointers(struct vstate *st, uint32_t frameno)
{
	for_each_reg(st, r, {
		if (r->type == PTR_TO_STACK && r->frameno >= frameno)
			vreg_mark_unknown(r);
	});
}

/* Returns 0: continue at env->insn; 1: this path is done. */
static int do_exit(struct venv *env)
{
	struct vstate *st = env->cur;
	struct vframe *callee;
	struct vreg r0;
	int err;

	if (st->curframe == 0) {
		if ((err = check_return_value(env)))
			return err;
		if (st->nrefs)
			return verr(env, "Unreleased reference id=%u alloc_insn=%u",
				    st->refs[0].id, st->refs[0].insn);
		return 1;
	}
	callee = st->frames[st->curframe];
	r0 = callee->regs[BPF_R0];
	if (r0.type == NOT_INIT)
		return verr(env, "R0 !read_ok (subprogram returns an uninitialized value)");
	if (r0.type == PTR_TO_STACK && r0.frameno == st->curframe)
		return verr(env, "cannot return stack pointer to the caller");
	if (callee->in_callback) {
		if (r0.type != SCALAR || r0.smin < 0 || r0.umax > 1)
			return verr(env, "At callback return the register R0 has value %s; "
				    "should have been in [0, 1]",
				    r0.type == SCALAR ? "out of range" : reg_type_str(&r0));
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

		frame_free(callee);
		/* the helper may return now... */
		after = push_branch(env, env->insn + 1);
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
	frame_free(callee);
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
			if (fr->regs[i].type == PTR_TO_PACKET || fr->regs[i].type == PTR_TO_PACKET_END)
				mark_not_init(&fr->regs[i]);
		for (uint32_t k = 0; k < fr->nslots; k++) {
			struct vslot *sl = &fr->slots[k];

			if (!slot_has_spill(sl) || (sl->spilled.type != PTR_TO_PACKET &&
						    sl->spilled.type != PTR_TO_PACKET_END))
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
	if (!push_branch(env, env->insn + 1)) /* the call failed */
		return -ENOMEM;
	if (env->log_level)
		vlog(env, "%u: tail call taken: frame %u returns to its caller\n", env->insn,
		     env->cur->curframe);
	invalidate_packet_pointers(env->cur);
	vreg_mark_unknown(reg_at(env, BPF_R0));
	err = do_exit(env);
	if (err < 0)
		return err;
	return err ? 2 : 1;
}

/* ---- pruning ---------------------------------------------------------------------------- */

#define IDMAP_SIZE 64

struct idmap {
	uint32_t old[IDMAP_SIZE], cur[IDMAP_SIZE];
	uint32_t cnt;
	uint32_t tmp;
};

/* ids must correspond one to one between the two states */
static bool check_ids(struct idmap *m, uint32_t old, uint32_t cur)
{
	if (!old && !cur)
		return true;
	if (!old || !cur)
		return false;
	for (uint32_t i = 0; i < m->cnt; i++) {
		if (m->old[i] == old)
			return m->cur[i] == cur;
		if (m->cur[i] == cur)
			return false;
	}
	if (m->cnt == IDMAP_SIZE)
		return false;
	m->old[m->cnt] = old;
	m->cur[m->cnt++] = cur;
	return true;
}

static bool range_within(const struct vreg *old, const struct vreg *cur)
{
	return old->smin <= cur->smin && old->smax >= cur->smax &&
	       old->umin <= cur->umin && old->umax >= cur->umax &&
	       old->s32min <= cur->s32min && old->s32max >= cur->s32max &&
	       old->u32min <= cur->u32min && old->u32max >= cur->u32max &&
	       tnum_in(old->var_off, cur->var_off);
}

static bool vreg_exact(const struct vreg *a, const struct vreg *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == NOT_INIT)
		return true;
	return a->flags == b->flags && a->frameno == b->frameno && a->off == b->off &&
	       a->var_off.value == b->var_off.value && a->var_off.mask == b->var_off.mask &&
	       a->smin == b->smin && a->smax == b->smax && a->umin == b->umin &&
	       a->umax == b->umax && a->s32min == b->s32min && a->s32max == b->s32max &&
	       a->u32min == b->u32min && a->u32max == b->u32max &&
	       a->ref_obj_id == b->ref_obj_id && a->mem_size == b->mem_size &&
	       a->range == b->range && a->map == b->map;
}

/* Is every concrete value cur may hold one that old's (verified) walk
 * covered? exact: the same abstract value. */
static bool regsafe(const struct vreg *old, const struct vreg *cur, struct idmap *m, bool exact)
{
	if (exact)
		return vreg_exact(old, cur);
	if (old->type == NOT_INIT)
		return true;
	if (cur->type != old->type)
		return false;
	if (old->type == SCALAR) {
		if (!range_within(old, cur))
			return false;
		/* a link between old copies must exist between cur's too */
		if (old->id)
			return check_ids(m, old->id, cur->id ? cur->id : 0x80000000u + ++m->tmp);
		return true;
	}
	if (old->flags != cur->flags || old->off != cur->off || old->map != cur->map ||
	    old->mem_size != cur->mem_size || old->frameno != cur->frameno)
		return false;
	if (!range_within(old, cur))
		return false;
	if (old->type == PTR_TO_PACKET && old->range > cur->range)
		return false;
	if (!check_ids(m, old->ref_obj_id, cur->ref_obj_id))
		return false;
	if ((old->flags & PTR_MAYBE_NULL) || old->type == PTR_TO_PACKET)
		return check_ids(m, old->id, cur->id);
	return true;
}

static bool slot_safe(const struct vslot *o, const struct vslot *c, struct idmap *m, bool exact)
{
	bool o_spill = o->spill_size && o->type[o->spill_off] == STACK_SPILL;
	bool c_spill = c->spill_size && c->type[c->spill_off] == STACK_SPILL;

	if (exact)
		return !memcmp(o->type, c->type, 8) && o->spill_off == c->spill_off &&
		       (!o_spill || regsafe(&o->spilled, &c->spilled, m, true));
	for (int k = 0; k < 8; k++) {
		uint8_t ot = o->type[k], ct = c->type[k];

		if (ot == STACK_INVALID)
			continue;
		if (ct == STACK_INVALID)
			return false;
		if (ot == STACK_MISC)
			continue; /* any initialised byte reads as data */
		if (ot == STACK_ZERO && ct != STACK_ZERO)
			return false;
	}
	if (o_spill) {
		if (!c_spill || memcmp(o->type, c->type, 8) || o->spill_off != c->spill_off ||
		    o->spill_size != c->spill_size)
			return false;
		return regsafe(&o->spilled, &c->spilled, m, false);
	}
	return true;
}

static bool frame_safe(const struct vframe *o, const struct vframe *c, uint16_t live,
		       struct idmap *m, bool exact)
{
	if (o->callsite != c->callsite || o->subprog != c->subprog || o->nslots != c->nslots ||
	    o->in_callback != c->in_callback)
		return false;
	for (int r = 0; r < BPF_NREGS; r++)
		if ((live & REGMASK(r)) && !regsafe(&o->regs[r], &c->regs[r], m, exact))
			return false;
	for (uint32_t s = 0; s < o->nslots; s++)
		if (!slot_safe(&o->slots[s], &c->slots[s], m, exact))
			return false;
	return true;
}

static bool states_equal(struct venv *env, const struct vstate *old, const struct vstate *cur,
			 uint32_t insn, bool exact)
{
	struct idmap m;

	if (old->curframe != cur->curframe || old->nrefs != cur->nrefs)
		return false;
	m.cnt = 0;
	m.tmp = 0;
	for (uint32_t f = 0; f <= old->curframe; f++) {
		uint16_t live;

		if (f == old->curframe)
			live = env->live[insn];
		else /* the caller resumes after the call with r0 and r6-r9 */
			live = (uint16_t)(env->live[old->frames[f + 1]->callsite + 1] & ~ARG_REGS);
		live |= REGMASK(BPF_R10);
		if (!frame_safe(old->frames[f], cur->frames[f], live, &m, exact))
			return false;
	}
	for (uint32_t i = 0; i < old->nrefs; i++)
		if (!check_ids(&m, old->refs[i].id, cur->refs[i].id))
			return false;
	return true;
}

/* Joining: when many states reach one insn, a new state that no explored
 * one covers is widened to the hull of itself and its closest explored
 * state (scalars only). Walking a wider state is always sound; it trades
 * precision for not walking every combination of values that do not
 * matter (Linux gets the same effect from precision tracking). With
 * `widen`, bounds that grew jump to their extremes so repeated joins
 * converge (callback iterations). */
static void join_scalar(const struct vreg *o, struct vreg *c, bool widen)
{
	if (o->type != SCALAR || c->type != SCALAR || range_within(o, c))
		return;
	c->var_off = tnum_union(o->var_off, c->var_off);
	if (widen) {
		if (c->smin < o->smin) c->smin = INT64_MIN;
		if (c->smax > o->smax) c->smax = INT64_MAX;
		if (c->umin < o->umin) c->umin = 0;
		if (c->umax > o->umax) c->umax = UINT64_MAX;
		if (c->s32min < o->s32min) c->s32min = INT32_MIN;
		if (c->s32max > o->s32max) c->s32max = INT32_MAX;
		if (c->u32min < o->u32min) c->u32min = 0;
		if (c->u32max > o->u32max) c->u32max = UINT32_MAX;
		if (!vreg_is_const(c) && c->umax == UINT64_MAX)
			c->var_off = TNUM_UNKNOWN;
	}
	c->smin = c->smin < o->smin ? c->smin : o->smin;
	c->smax = c->smax > o->smax ? c->smax : o->smax;
	c->umin = c->umin < o->umin ? c->umin : o->umin;
	c->umax = c->umax > o->umax ? c->umax : o->umax;
	c->s32min = c->s32min < o->s32min ? c->s32min : o->s32min;
	c->s32max = c->s32max > o->s32max ? c->s32max : o->s32max;
	c->u32min = c->u32min < o->u32min ? c->u32min : o->u32min;
	c->u32max = c->u32max > o->u32max ? c->u32max : o->u32max;
	vreg_bounds_sync(c);
}

/* How many scalars of cur old does not cover (-1: not joinable). */
static int join_distance(struct venv *env, const struct vstate *old, const struct vstate *cur,
			 uint32_t insn)
{
	int d = 0;

	if (old->curframe != cur->curframe || old->nrefs != cur->nrefs)
		return -1;
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct vframe *o = old->frames[f], *c = cur->frames[f];

		if (o->callsite != c->callsite || o->subprog != c->subprog)
			return -1;
		for (int r = 0; r < BPF_NREGS; r++) {
			const struct vreg *or = &o->regs[r], *cr = &c->regs[r];

			if (or->type == SCALAR && cr->type == SCALAR)
				d += !range_within(or, cr);
			else if (or->type != cr->type)
				d += 4;
		}
		for (uint32_t k = 0; k < o->nslots; k++)
			if (slot_has_spill(&o->slots[k]) && slot_has_spill(&c->slots[k]) &&
			    o->slots[k].spilled.type == SCALAR && c->slots[k].spilled.type == SCALAR)
				d += !range_within(&o->slots[k].spilled, &c->slots[k].spilled);
	}
	(void)env;
	(void)insn;
	return d;
}

static void join_states(struct venv *env, const struct vstate *old, struct vstate *cur,
			uint32_t insn, bool widen)
{
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct vframe *o = old->frames[f];
		struct vframe *c = cur->frames[f];
		uint16_t keep = 0;
		uint64_t keep_slots = 0;

		/* values that decide branches of this frame are not widened
		 * (callback iterations: everything, the helper bounds them) */
		if (insn == UINT32_MAX) {
			keep = 0;
		} else if (f == old->curframe) {
			keep = env->precise[insn];
			keep_slots = env->precise_slots[insn];
		} else {
			keep = env->precise[old->frames[f + 1]->callsite + 1];
			keep_slots = env->precise_slots[old->frames[f + 1]->callsite + 1];
		}
		for (int r = 0; r < BPF_NREGS; r++)
			if (!(keep & REGMASK(r)))
				join_scalar(&o->regs[r], &c->regs[r], widen);
		for (uint32_t k = 0; k < o->nslots; k++) {
			const struct vslot *os = &o->slots[k];
			struct vslot *cs = &c->slots[k];

			if (k < 64 && (keep_slots & (1ull << k)))
				continue;
			if (slot_has_spill(os) && slot_has_spill(cs) &&
			    os->spill_off == cs->spill_off && os->spill_size == cs->spill_size)
				join_scalar(&os->spilled, &cs->spilled, widen);
		}
	}
}

static void update_branch_counts(struct vstate *st)
{
	while (st) {
		if (--st->branches)
			break;
		st = st->parent;
	}
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
		env->no_join[i] = 1;
	env->no_join[env->cur->join_insn] = 1;
	if (++env->restarts > 4)
		env->join_off = true;
	vlog(env, "%u: a joined state repeats (loop from %u, join at %u): verifying again "
	     "without joins %s\n", insn, env->prev_insn, env->cur->join_insn,
	     env->join_off ? "anywhere" : "there");
	return -EAGAIN;
}

/* A hash of what states_equal(exact) compares in the current frame's live
 * registers: equal states hash equal, so the loop check against a long
 * loop's earlier iterations mostly skips the full comparison. */
static uint64_t loop_hash(struct venv *env, const struct vstate *st, uint32_t insn)
{
	const struct vframe *f = st->frames[st->curframe];
	uint16_t live = env->live[insn];
	uint64_t h = 0xcbf29ce484222325ull ^ st->curframe;

	for (int r = 0; r < BPF_NREGS; r++) {
		const struct vreg *v = &f->regs[r];
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
		sl->next = env->graveyard;
		env->graveyard = sl;
	} else {
		state_free(sl);
	}
}

/* 1: a fully explored state covers the current one (prune), 0: go on. */
static int is_state_visited(struct venv *env, uint32_t insn)
{
	struct vstate *cp, *cur = env->cur, *best = NULL, **link, **oldest = NULL;
	uint32_t cnt = 0, done = 0, anc = 0;
	uint64_t hash = 0;
	int best_d = 0;

	for (link = &env->explored[insn]; *link;) {
		struct vstate *sl = *link;

		if (sl->branches) {
			/* an ancestor: the path went round a loop */
			/* hashes are computed when first needed (most
			 * checkpoints never see their loop come round) */
			if (!anc)
				hash = loop_hash(env, cur, insn) | 1;
			if (!sl->hash)
				sl->hash = loop_hash(env, sl, insn) | 1;
			if (sl->hash == hash && states_equal(env, sl, cur, insn, true)) {
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
		if (states_equal(env, sl, cur, insn, false)) {
			sl->hits++;
			return 1;
		}
		sl->misses++;
		if (sl->misses > sl->hits * 3 + 3 + JOIN_THRESHOLD) {
			/* rarely useful: stop comparing against it */
			*link = sl->next;
			evict_state(env, sl);
			continue;
		}
		{
			int d = join_distance(env, sl, cur, insn);

			if (d >= 0 && (!best || d < best_d)) {
				best = sl;
				best_d = d;
			}
		}
		link = &sl->next;
		cnt++;
		done++;
	}
	if (best && cnt >= JOIN_THRESHOLD && !env->join_off && !env->no_join[insn]) {
		join_states(env, best, cur, insn, cnt >= 4 * JOIN_THRESHOLD);
		cur->joined = true;
		cur->join_insn = insn;
		if (states_equal(env, best, cur, insn, false)) {
			best->hits++;
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
	cp = state_copy(cur);
	if (!cp)
		return -ENOMEM;
	cp->insn = insn;
	cp->hash = hash;         /* 0 if not computed yet */
	cp->branches = 1;
	cp->parent = cur->parent;
	cur->parent = cp;
	cp->next = env->explored[insn];
	env->explored[insn] = cp;
	env->total_states++;
	env->prev_jmps = env->jmps;
	env->prev_processed = env->processed;
	return 0;
}

/* ---- the walk ------------------------------------------------------------------------------ */

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
	const struct bpfrt_map_ref *ref = env->ref_at ? env->ref_at[env->insn] : NULL;

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

/* One instruction of the current state. Returns <0 error, 0 go on at
 * env->insn (already advanced), 1 path done. */
static int step(struct venv *env)
{
	const struct bpf_insn *insn = &env->insns[env->insn];
	uint32_t next = env->insn + 1;
	int err = 0;

	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		err = do_alu(env, insn);
		break;
	case BPF_LDX:
		err = do_ldx(env, insn);
		break;
	case BPF_ST:
		err = do_store(env, insn);
		break;
	case BPF_STX:
		err = insn_mode(insn) == BPF_ATOMIC ? do_atomic(env, insn) : do_store(env, insn);
		break;
	case BPF_LD:
		err = do_ld_imm64(env, insn);
		next = env->insn + 2;
		break;
	default: /* JMP, JMP32 */
		env->jmps++;
		if (insn_is_exit(insn))
			return do_exit(env);
		/* callx (BPF_CALL|BPF_X) is no jump: its target is a run-time
		 * value, and what it calls could not be checked (Linux
		 * rejects it too). Trusted loads, which skip the verifier,
		 * still run it. */
		if (insn_is_callx(insn))
			return verr(env, "callx R%d: indirect calls are not supported by the verifier",
				    insn->dst_reg);
		if (insn_is_call(insn)) {
			err = do_call(env, insn);
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
		err = do_cond_jmp(env, insn, &next);
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
		vlog(env, "from %u to %u:", e->prev_insn, e->insn);
	if (env->log_level)
		log_state(env, env->cur);
	return true;
}

static void end_path(struct venv *env)
{
	update_branch_counts(env->cur->parent);
	state_free(env->cur);
	env->cur = NULL;
}

static int do_check(struct venv *env)
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
		if (env->prune_point[env->insn]) {
			err = is_state_visited(env, env->insn);
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
			log_insn(env, env->insn);
		env->prev_insn = env->insn;
		err = step(env);
		if (err < 0)
			return err;
		if (env->log_level >= 2 && env->cur && err == 0)
			log_state(env, env->cur);
		if (err == 1) {
			end_path(env);
			if (!pop_state(env))
				return 0;
		}
	}
}

/* ---- entry ------------------------------------------------------------------------------------ */

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

/* Bytes of the frames below a subprogram that tail-calls: at most this
 * many. A successful tail call frees only the frame of the subprogram
 * making it, its callers' frames stay (on the native stack, for the JITs),
 * so with up to BPFRT_MAX_TAIL_CALLS calls in a chain they add up; Linux
 * caps them at 256 bytes the same way (frames rounded up to 16 bytes, as
 * its JIT does). The interpreter also refuses at run time a tail call
 * whose target does not fit the frame's remaining stack. */
#define TAIL_CALL_CALLER_STACK_MAX 256

static int check_tail_call_stack(struct venv *env)
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

static void env_free(struct venv *env)
{
	for (uint32_t i = 0; env->explored && i < env->n; i++) {
		struct vstate *st = env->explored[i];

		while (st) {
			struct vstate *next = st->next;

			state_free(st);
			st = next;
		}
	}
	while (env->stack_cnt)
		state_free(env->stack[--env->stack_cnt].st);
	while (env->graveyard) {
		struct vstate *next = env->graveyard->next;

		state_free(env->graveyard);
		env->graveyard = next;
	}
	for (uint32_t i = 0; i < env->cb_site_cnt; i++) {
		for (uint32_t k = 0; k < env->cb_sites[i].cnt; k++)
			state_free(env->cb_sites[i].entries[k]);
		free(env->cb_sites[i].entries);
		free(env->cb_sites[i].inv);
	}
	state_free(env->cur);
	free(env->cb_sites);
	free(env->stack);
	free(env->explored);
	free(env->prune_point);
	free(env->live);
	free(env->ref_at);
	free(env->max_stack);
	free(env->no_join);
	free(env->precise);
	free(env->precise_slots);
}

static int env_init(struct venv *env, struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts)
{
	env->prog = prog;
	env->insns = prog->insns;
	env->n = prog->insn_cnt;
	if (opts && opts->log_buf && opts->log_size) {
		env->log_buf = opts->log_buf;
		env->log_size = opts->log_size;
		env->log_level = opts->log_level;
		if (!env->restarts)
			env->log_buf[0] = 0;
		else
			env->log_len = strlen(env->log_buf);
	}
	if (!env->no_join)
		env->no_join = calloc(env->n, 1);
	if (!env->no_join)
		return -ENOMEM;
	env->prune_point = calloc(env->n, 1);
	env->explored = calloc(env->n, sizeof(*env->explored));
	env->max_stack = calloc(prog->subprog_cnt, sizeof(*env->max_stack));
	if (!env->prune_point || !env->explored || !env->max_stack)
		return -ENOMEM;
	if (prog->map_ref_cnt) {
		env->ref_at = calloc(env->n, sizeof(*env->ref_at));
		if (!env->ref_at)
			return -ENOMEM;
		for (uint32_t i = 0; i < prog->map_ref_cnt; i++)
			if (prog->map_refs[i].insn < env->n)
				env->ref_at[prog->map_refs[i].insn] = &prog->map_refs[i];
	}
	if (compute_liveness(env, &env->live) || compute_precise(env))
		return -ENOMEM;
	mark_prune_points(env);
	setup_ctx(env, opts ? opts->ctx_size : 0);
	return init_state(env);
}

int bpfrt_verify(struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts, bool record)
{
	struct venv env = { 0 };
	uint64_t processed = 0;
	int err;

	if (!prog->subprogs || !prog->insn_cnt)
		return bpfrt_err(-EINVAL, "%s: verify: program is not validated", prog->name);
	for (;;) {
		/* one budget of BPFRT_VERIFY_MAX_PROCESSED, restarts included */
		env.processed = processed;
		err = env_init(&env, prog, opts);
		if (!err)
			err = reject_callx(&env);
		if (!err)
			err = do_check(&env);
		if (!err)
			err = check_tail_call_stack(&env);
		processed = env.processed;
		if (err != -EAGAIN)
			break;
		/* again, with fewer joins (join_made_loop) */
		{
			struct venv next = { 0 };

			next.no_join = env.no_join;
			next.join_off = env.join_off;
			next.restarts = env.restarts;
			env.no_join = NULL;
			env_free(&env);
			env = next;
		}
	}
	if (err == -ENOMEM) {
		err = bpfrt_err(-ENOMEM, "%s: verifier out of memory", prog->name);
	} else if (err) {
		if (env.log_level && env.cur)
			log_state(&env, env.cur);
		vlog(&env, "insn %u: %s\n", env.insn, env.msg);
		vlog(&env, "processed %llu insns, %llu states\n",
		     (unsigned long long)env.processed, (unsigned long long)env.total_states);
		err = bpfrt_err(err, "insn %u: %s", env.insn, env.msg);
	} else {
		vlog(&env, "processed %llu insns, %llu states\n",
		     (unsigned long long)env.processed, (unsigned long long)env.total_states);
		if (record) {
			record_stack_depths(&env);
			prog->max_ctx_access = env.max_ctx_access;
			prog->ctx_size = env.ctx_size;
			prog->verified = true;
		}
	}
	if (opts) {
		opts->insn_processed = processed;
		opts->states = (uint32_t)env.total_states;
	}
	env_free(&env);
	return err;
}
