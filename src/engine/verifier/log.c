/* The verifier's log, in the Linux verifier's notation so that a kernel
 * BPF user reads it at a glance:
 *
 *   0: R1=ctx() R10=fp0
 *   ; int v = *(int *)p; @ prog.c:12
 *   0: (61) r2 = *(u32 *)(r1 +0)          ; R1=ctx() R2_w=scalar(smin=0,smax=umax=0xffffffff,var_off=(0x0; 0xffffffff))
 *   1: (85) call bpf_map_lookup_elem#1    ; R0_w=map_value_or_null(id=1,map=counts,ks=4,vs=8)
 *
 * Each instruction in the kernel's C-like syntax (isa/disasm_kernel.c),
 * helpers, kfuncs and maps by name, the source line from the object's BTF
 * line info when it changes, and after the instruction the registers and
 * stack slots it touched ("_w": written since the last prune point, as
 * the kernel's liveness marks); "from X to Y:" with the whole state where
 * a path resumes (level 2 prints it, level 1 too, as bpfrt's level 1 keeps
 * every path). Kept in the caller's buffer as the kernel's rotating log
 * keeps it; the rejection message on its own line, then the totals. */
#include "verifier/vstate.h"
#include "core/env.h"
#include "isa/disasm.h"
#include "isa/linux_names.h"
#include "isa/liveness.h"

#include <stdio.h>
#include <string.h>

const char *const vreg_type_names[VREG_TYPE_CNT] = {
	[NOT_INIT] = "?", [SCALAR] = "scalar", [PTR_TO_CTX] = "ctx",
	[PTR_TO_STACK] = "fp", [CONST_PTR_TO_MAP] = "map_ptr",
	[PTR_TO_MAP_VALUE] = "map_value", [PTR_TO_MAP_KEY] = "map_key",
	[PTR_TO_MEM] = "mem", [PTR_TO_PACKET] = "pkt", [PTR_TO_PACKET_END] = "pkt_end",
	[PTR_TO_FUNC] = "func", [PTR_TO_BTF_ID] = "ptr_",
	[CONST_PTR_TO_DYNPTR] = "dynptr_ptr", [PTR_TO_PACKET_META] = "pkt_meta",
	[PTR_TO_SOCKET] = "sock",
	[PTR_TO_SOCK_COMMON] = "sock_common", [PTR_TO_TCP_SOCK] = "tcp_sock",
};

/* The maybe-NULL forms, spelled out (no per-thread buffer: the library
 * keeps its static TLS small); a type missing here prints as ptr_or_null. */
static const char *const vreg_type_null_names[VREG_TYPE_CNT] = {
	[PTR_TO_CTX] = "ctx_or_null", [PTR_TO_STACK] = "fp_or_null",
	[CONST_PTR_TO_MAP] = "map_ptr_or_null", [PTR_TO_MAP_VALUE] = "map_value_or_null",
	[PTR_TO_MAP_KEY] = "map_key_or_null", [PTR_TO_MEM] = "mem_or_null",
	[PTR_TO_PACKET] = "pkt_or_null", [PTR_TO_PACKET_END] = "pkt_end_or_null",
	[PTR_TO_FUNC] = "func_or_null", [PTR_TO_BTF_ID] = "ptr_or_null",
	[PTR_TO_PACKET_META] = "pkt_meta_or_null",
	[PTR_TO_SOCKET] = "sock_or_null", [PTR_TO_SOCK_COMMON] = "sock_common_or_null",
	[PTR_TO_TCP_SOCK] = "tcp_sock_or_null",
};

const char *vreg_type_str(const struct vreg *r)
{
	if (!(r->flags & PTR_MAYBE_NULL))
		return vreg_type_names[r->type];
	return vreg_type_null_names[r->type] ? vreg_type_null_names[r->type] : "ptr_or_null";
}

static void log_append(struct venv *env, const char *s, size_t len)
{
	size_t cap;

	if (!env->log_buf || env->log_size < 2)
		return;
	env->log_total += len;
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

/* ---- register states in the kernel's notation ------------------------------ */

struct sbuf {
	char *p;
	size_t len, n;
};

static void sput(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sput(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->n >= b->len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(b->p + b->n, b->len - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n = b->n + (size_t)k < b->len ? b->n + (size_t)k : b->len - 1;
}

/* Small numbers in decimal, the rest in hex, as the kernel prints them. */
static void put_snum(struct sbuf *b, int64_t v)
{
	if (v >= -32768 && v <= 32767)
		sput(b, "%lld", (long long)v);
	else
		sput(b, "0x%llx", (unsigned long long)v);
}

static void put_unum(struct sbuf *b, uint64_t v)
{
	if (v <= 65535)
		sput(b, "%llu", (unsigned long long)v);
	else
		sput(b, "0x%llx", (unsigned long long)v);
}

/* smin=...,smax=...,umin=..., with equal bounds of one kind merged
 * ("smax=umax=255"), the unbounded ones left out. */
static void put_ranges(struct sbuf *b, const struct vreg *r, const char **sep)
{
	struct bound {
		const char *name;
		uint64_t val;
		bool is_signed, omit;
	} m[8] = {
		{ "smin", (uint64_t)r->smin, true, r->smin == INT64_MIN },
		{ "smax", (uint64_t)r->smax, true, r->smax == INT64_MAX },
		{ "umin", r->umin, false, r->umin == 0 },
		{ "umax", r->umax, false, r->umax == UINT64_MAX },
		/* 32-bit signed bounds in hex are not sign-extended */
		{ "smin32", r->s32min >= -32768 ? (uint64_t)(int64_t)r->s32min : (uint32_t)r->s32min,
		  true, r->s32min == INT32_MIN },
		{ "smax32", r->s32max <= 32767 ? (uint64_t)(int64_t)r->s32max : (uint32_t)r->s32max,
		  true, r->s32max == INT32_MAX },
		{ "umin32", r->u32min, false, r->u32min == 0 },
		{ "umax32", r->u32max, false, r->u32max == UINT32_MAX },
	};

	for (int i = 0; i < 8; i++) {
		bool neg = m[i].is_signed && (int64_t)m[i].val < 0;

		if (m[i].omit)
			continue;
		sput(b, "%s%s=", *sep, m[i].name);
		*sep = ",";
		/* the same kind of bound (min or max) further on */
		for (int j = i + 2; j < 8; j += 2) {
			bool neg2 = m[j].is_signed && (int64_t)m[j].val < 0;

			if (m[j].omit || m[j].val != m[i].val || neg2 != neg)
				continue;
			m[j].omit = true;
			sput(b, "%s=", m[j].name);
		}
		if (m[i].is_signed)
			put_snum(b, (int64_t)m[i].val);
		else
			put_unum(b, m[i].val);
	}
}

static void put_var_off(struct sbuf *b, struct tnum t, const char *sep)
{
	sput(b, "%svar_off=(0x%llx; 0x%llx)", sep, (unsigned long long)t.value,
	     (unsigned long long)t.mask);
}

static bool is_map_type(uint8_t t)
{
	return t == CONST_PTR_TO_MAP || t == PTR_TO_MAP_VALUE || t == PTR_TO_MAP_KEY;
}

static void put_reg(struct sbuf *b, const struct vreg *r, uint32_t curframe)
{
	const char *sep = "";

	if (r->type == SCALAR && tnum_is_const(r->var_off)) {
		put_snum(b, (int64_t)r->var_off.value);
		return;
	}
	if (r->type == SCALAR && r->id) {
		/* scalars copied from one another, refined together */
		sput(b, "scalar(id=%u", r->id);
		sep = ",";
		put_ranges(b, r, &sep);
		if (!tnum_is_unknown(r->var_off))
			put_var_off(b, r->var_off, sep);
		sput(b, ")");
		return;
	}
	if (r->type == PTR_TO_MEM && (r->flags & MEM_RDONLY))
		sput(b, "rdonly_");     /* an iterator's element */
	else if (r->type == PTR_TO_MEM && r->ref_obj_id)
		sput(b, "ringbuf_");    /* the other referenced memory: ringbuf records */
	sput(b, "%s", vreg_type_str(r));
	if (r->type == PTR_TO_STACK) {
		if (r->frameno != curframe)
			sput(b, "[%u]", r->frameno);
		if (tnum_is_const(r->var_off)) {
			put_snum(b, (int64_t)r->var_off.value + r->off);
			return;
		}
	}
	sput(b, "(");
	/* ids shown where the kernel shows them: a null check or a packet
	 * range still to come (a reference has its ref_obj_id) */
	if (r->id && ((r->flags & PTR_MAYBE_NULL) || is_pkt_pointer(r))) {
		sput(b, "%sid=%u", sep, r->id);
		sep = ",";
	}
	if (r->ref_obj_id) {
		sput(b, "%sref_obj_id=%u", sep, r->ref_obj_id);
		sep = ",";
	}
	if (is_map_type(r->type) && r->map) {
		if (r->map->name[0])
			sput(b, "%smap=%s", sep, r->map->name);
		sep = ",";
		sput(b, "%sks=%u,vs=%u", sep, r->map->key_size, r->map->value_size);
	}
	if (r->type != SCALAR && r->off) {
		sput(b, "%soff=", sep);
		put_snum(b, r->off);
		sep = ",";
	}
	if (is_pkt_pointer(r)) {
		sput(b, "%sr=", sep);
		put_unum(b, (uint64_t)(int64_t)r->range);
		sep = ",";
	}
	if (r->type == PTR_TO_MEM) {
		sput(b, "%ssz=", sep);
		put_unum(b, r->mem_size);
		sep = ",";
	}
	if (tnum_is_const(r->var_off)) {
		if (r->var_off.value) {
			sput(b, "%simm=", sep);
			put_snum(b, (int64_t)r->var_off.value);
		}
	} else {
		put_ranges(b, r, &sep);
		if (!tnum_is_unknown(r->var_off))
			put_var_off(b, r->var_off, sep);
	}
	sput(b, ")");
}

/* Slot bytes as the kernel prints them: the highest address first,
 * '?' never written, 'm' data, '0' zero, 'r' part of a spilled register,
 * 'd' part of a dynptr. */
static void slot_chars(const struct vslot *s, char t[9])
{
	for (int k = 0; k < 8; k++) {
		uint8_t ty = s->type[7 - k];

		t[k] = ty == STACK_SPILL ? 'r' : ty == STACK_MISC ? 'm' : ty == STACK_ZERO ? '0' :
		       ty == STACK_DYNPTR ? 'd' :
		       ty == STACK_ITER ? 'i' : '?';
	}
	t[8] = 0;
}

static void put_slot(struct sbuf *b, const struct vslot *s, uint32_t i, bool written,
		     uint32_t curframe)
{
	char t[9];

	slot_chars(s, t);
	sput(b, " fp%d%s=", -(int)(i + 1) * 8, written ? "_w" : "");
	if (s->type[0] == STACK_SPILL && slot_has_spill(s)) {
		/* the bytes above a narrower spill, then the register */
		char *r = strchr(t, 'r');

		if (r)
			*r = 0;
		sput(b, "%s", t);
		put_reg(b, &s->spilled, curframe);
	} else {
		sput(b, "%s", t);
	}
}

/* The current frame's registers and slots: all of them, or only those the
 * logged instruction touched. */
static void put_frame(struct venv *env, struct sbuf *b, const struct vstate *st, bool all)
{
	const struct vframe *fr = st->frames[st->curframe];

	if (st->curframe)
		sput(b, " frame%u:", st->curframe);
	for (int r = 0; r < BPF_NREGS; r++) {
		bool w = env->log_written & (1u << r);

		if (fr->regs[r].type == NOT_INIT)
			continue;
		if (!all && !(env->log_scratched & (1u << r)))
			continue;
		/* "_w" after an instruction only: log_written follows the walk,
		 * not the saved state a path resumes from */
		sput(b, " R%d%s=", r, w && !all && r != BPF_R10 ? "_w" : "");
		put_reg(b, &fr->regs[r], st->curframe);
	}
	for (uint32_t i = 0; i < fr->nslots; i++) {
		const struct vslot *s = &fr->slots[i];
		bool any = false;

		for (int k = 0; k < 8; k++)
			any |= s->type[k] != STACK_INVALID;
		if (!any || (!all && env->log_slot != (int32_t)i))
			continue;
		put_slot(b, s, i, !all && env->log_slot == (int32_t)i, st->curframe);
	}
	if (st->nrefs) {
		sput(b, " refs=");
		for (uint32_t i = 0; i < st->nrefs; i++)
			sput(b, "%s%u", i ? "," : "", st->refs[i].id);
	}
	if (fr->in_callback)
		sput(b, " cb");
}

void vlog_state(struct venv *env, const struct vstate *st)
{
	char line[4096];
	struct sbuf b = { line, sizeof(line), 0 };

	if (!env->log_buf)
		return;
	line[0] = 0;
	put_frame(env, &b, st, true);
	vlog(env, "%s\n", line);
	env->log_insn_end = 0;
}

/* The column of the ';' before the state after an instruction: past its
 * text, 38 at least, then in steps of 8 (the kernel's layout). */
static unsigned state_column(size_t text_len)
{
	size_t c = text_len + 5 > 40 ? text_len + 5 : 40;

	return (unsigned)((c + 7) / 8 * 8 - 2);
}

void vlog_insn_state(struct venv *env, const struct vstate *st)
{
	char line[4096];
	struct sbuf b = { line, sizeof(line), 0 };

	if (!env->log_buf || !st)
		return;
	line[0] = 0;
	put_frame(env, &b, st, false);
	if (!b.n)
		return;
	if (env->log_insn_end && env->log_insn_end == env->log_total && env->log_len &&
	    env->log_buf[env->log_len - 1] == '\n') {
		/* on the instruction's own line, after its text */
		size_t start = env->log_len - 1, text;

		while (start && env->log_buf[start - 1] != '\n')
			start--;
		text = env->log_len - 1 - start;
		env->log_len--;
		env->log_total--;
		env->log_buf[env->log_len] = 0;
		vlog(env, "%*c;%s\n", (int)(state_column(text) - text), ' ', line);
	} else {
		vlog(env, "%u:%s\n", env->insn, line);
	}
	env->log_insn_end = 0;
}

/* ---- instructions ------------------------------------------------------------ */

static const char *call_name(void *ctx, const struct bpf_insn *insn)
{
	const struct venv *env = ctx;
	const struct bpfrt_helper *h;
	const char *linux_name;

	if (insn->src_reg)
		return NULL;
	linux_name = insn->imm < BPFRT_KFUNC_ID_BASE ? bpfrt_linux_helper_name(insn->imm) : NULL;
	if (linux_name)
		return linux_name;
	h = bpfrt_prog_helper(env->prog, (uint32_t)insn->imm);
	return h && h->name ? h->name : NULL;
}

static const char *imm64_text(void *ctx, const struct bpf_insn *insn, uint32_t pc,
			      char *buf, size_t len)
{
	const struct venv *env = ctx;
	const struct bpfrt_map_ref *ref = pc < env->n ? env->aux[pc].map_ref : NULL;

	if (!ref || !ref->map)
		return NULL;
	if (ref->kind == BPF_PSEUDO_MAP_VALUE)
		snprintf(buf, len, "map[%s][0]+%u", ref->map->name, ref->off);
	else
		snprintf(buf, len, "map[%s]", ref->map->name);
	return buf;
}

/* The line info record covering pc (the last one at or before it). */
static const struct bpfrt_line_info *line_at(const struct bpfrt_prog *prog, uint32_t pc)
{
	uint32_t lo = 0, hi = prog->line_cnt;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (prog->lines[mid].insn <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &prog->lines[lo - 1] : NULL;
}

/* "; return p->v[idx]; @ file.c:11" when the source line changes. */
static void log_source_line(struct venv *env, uint32_t pc)
{
	const struct bpfrt_line_info *li = line_at(env->prog, pc);
	const struct bpfrt_line_info *prev = env->log_line;
	const char *src, *file;

	if (!li || li == prev)
		return;
	env->log_line = li;
	if (prev && prev->file == li->file && prev->line == li->line)
		return;         /* the same line, another column */
	src = li->src ? li->src : "";
	while (*src == ' ' || *src == '\t')
		src++;
	file = li->file ? strrchr(li->file, '/') : NULL;
	file = file ? file + 1 : li->file ? li->file : "?";
	vlog(env, "; %s @ %s:%u\n", src, file, li->line);
}

/* What the instruction at pc touches: its registers, and the stack slot of
 * a load or store through a known stack pointer. */
static void note_scratched(struct venv *env, uint32_t pc)
{
	const struct bpf_insn *insn = &env->insns[pc];
	struct bpfrt_reg_use u;
	uint8_t cls = insn_class(insn);

	if (env->aux[pc].prune_point)
		env->log_written = 0;   /* a checkpoint: marks start again */
	bpfrt_insn_reg_use(env->prog, insn, &u);
	env->log_scratched = u.use | u.def;
	env->log_written |= u.def & ~u.kill;
	env->log_written &= ~u.kill;
	env->log_slot = -1;
	if (env->cur && (cls == BPF_LDX || cls == BPF_STX || cls == BPF_ST)) {
		const struct vframe *fr = env->cur->frames[env->cur->curframe];
		uint8_t base = cls == BPF_LDX ? insn->src_reg : insn->dst_reg;
		const struct vreg *r = base < BPF_NREGS ? &fr->regs[base] : NULL;

		if (r && r->type == PTR_TO_STACK && r->frameno == env->cur->curframe &&
		    tnum_is_const(r->var_off)) {
			int64_t off = (int64_t)r->var_off.value + r->off + insn->off;

			if (off < 0 && off >= -(int64_t)fr->nslots * 8)
				env->log_slot = (int32_t)((-off - 1) / 8);
		}
	}
}

void vlog_insn(struct venv *env, uint32_t pc)
{
	const struct bpfrt_kdisasm_names names = { call_name, imm64_text, env };
	char text[160];

	if (!env->log_buf)
		return;
	if (!env->log_started && env->cur) {
		env->log_started = true;
		vlog(env, "%u:", pc);
		vlog_state(env, env->cur);
	}
	note_scratched(env, pc);
	log_source_line(env, pc);
	if (bpfrt_disasm_kernel(env->insns + pc, env->n - pc, pc, &names, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad)");
	vlog(env, "%u: (%02x) %s\n", pc, env->insns[pc].code, text);
	env->log_insn_end = env->log_total;
}

/* The last line, in the kernel's words ("processed 12 insns (limit
 * 1000000) total_states 4"), which tools such as veristat read. */
void vlog_totals(struct venv *env)
{
	const uint64_t limit = env->prog->env ? env->prog->env->limits.max_processed_insns
					      : BPFRT_VERIFY_MAX_PROCESSED;

	vlog(env, "processed %llu insns (limit %llu) total_states %llu\n",
	     (unsigned long long)env->processed, (unsigned long long)limit,
	     (unsigned long long)env->total_states);
}
