/* The verifier's log: the per-instruction lines (level 1: each insn
 * walked and where each path resumes; level 2: also the state after each
 * insn), kept in the caller's buffer as the kernel's rotating log keeps
 * them, and the rejection message. */
#include "verifier/vstate.h"

#include <stdio.h>
#include <string.h>

const char *const vreg_type_names[VREG_TYPE_CNT] = {
	[NOT_INIT] = "?", [SCALAR] = "scalar", [PTR_TO_CTX] = "ctx",
	[PTR_TO_STACK] = "fp", [CONST_PTR_TO_MAP] = "map_ptr",
	[PTR_TO_MAP_VALUE] = "map_value", [PTR_TO_MAP_KEY] = "map_key",
	[PTR_TO_MEM] = "mem", [PTR_TO_PACKET] = "pkt", [PTR_TO_PACKET_END] = "pkt_end",
	[PTR_TO_FUNC] = "func",
};

const char *vreg_type_str(const struct vreg *r)
{
	static __thread char buf[32];

	if (!(r->flags & PTR_MAYBE_NULL))
		return vreg_type_names[r->type];
	snprintf(buf, sizeof(buf), "%s_or_null", vreg_type_names[r->type]);
	return buf;
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
	n = (size_t)snprintf(buf, len, "%s(", vreg_type_str(r));
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

void vlog_state(struct venv *env, const struct vstate *st)
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

void vlog_insn(struct venv *env, uint32_t pc)
{
	char text[128];

	if (bpfrt_disasm_insn(env->insns + pc, env->n - pc, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad)");
	vlog(env, "%u: (%02x) %s\n", pc, env->insns[pc].code, text);
}
