/* The Linux verifier's instruction syntax (bpf_insn printing in the kernel
 * and bpftool): C-like statements such as
 *
 *   r1 = *(u64 *)(r7 +0)        *(u32 *)(r10 -4) = r1     w0 += 1
 *   if r1 > 0x10 goto pc+3      call bpf_map_lookup_elem#1  r0 = atomic64_xchg(...)
 *
 * so that a verifier log reads as a kernel BPF user expects. bpfrt's own
 * assembly syntax (disasm.c) stays what the assembler reads back; this
 * printer is for logs only. Encodings the validator rejects are printed
 * in that syntax, as the kernel never prints them either. */
#include "isa/disasm.h"
#include "bpfrt/asm.h"
#include "isa/isa.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

struct out {
	char *buf;
	size_t len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->buf, o->len, fmt, ap);
	va_end(ap);
}

/* Compound assignment operators by BPF_OP >> 4 ("=" for mov). */
static const char *const alu_ops[16] = {
	"+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
	NULL, "%=", "^=", "=", "s>>=", NULL, NULL, NULL,
};

/* Comparison operators of conditional jumps by BPF_OP >> 4. */
static const char *const jmp_ops[16] = {
	NULL, "==", ">", ">=", "&", "!=", "s>", "s>=",
	NULL, NULL, "<", "<=", "s<", "s<=", NULL, NULL,
};

static const char *mem_type(const struct bpf_insn *insn, bool sign)
{
	static const char *const u[4] = { "u32", "u16", "u8", "u64" };
	static const char *const s[4] = { "s32", "s16", "s8", "s64" };

	return (sign ? s : u)[insn_size(insn) >> 3];
}

static bool print_alu(struct out *o, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	char r = is64 ? 'r' : 'w';
	uint8_t op = insn_op(insn);
	const char *name = alu_ops[op >> 4];

	if (op == BPF_END) {
		if (is64)
			put(o, "r%u = bswap%d r%u", insn->dst_reg, insn->imm, insn->dst_reg);
		else
			put(o, "r%u = %s%d r%u", insn->dst_reg,
			    insn_src(insn) == BPF_X ? "be" : "le", insn->imm, insn->dst_reg);
		return true;
	}
	if (op == BPF_NEG) {
		put(o, "%c%u = -%c%u", r, insn->dst_reg, r, insn->dst_reg);
		return true;
	}
	if (!name)
		return false;
	if ((op == BPF_DIV || op == BPF_MOD) && insn->off == 1)
		name = op == BPF_DIV ? "s/=" : "s%=";
	if (insn_src(insn) == BPF_X) {
		const char *cast = "";

		if (op == BPF_MOV && insn->off)
			cast = insn->off == 8 ? "(s8)" : insn->off == 16 ? "(s16)" : "(s32)";
		put(o, "%c%u %s %s%c%u", r, insn->dst_reg, name, cast, r, insn->src_reg);
	} else {
		put(o, "%c%u %s %d", r, insn->dst_reg, name, insn->imm);
	}
	return true;
}

static bool print_atomic(struct out *o, const struct bpf_insn *insn)
{
	static const char *const names[16] = {
		[BPF_ADD >> 4] = "add", [BPF_OR >> 4] = "or",
		[BPF_AND >> 4] = "and", [BPF_XOR >> 4] = "xor",
	};
	const char *w = insn_size(insn) == BPF_DW ? "64" : "";
	const char *t = mem_type(insn, false);
	int32_t imm = insn->imm;

	if (imm == BPF_XCHG) {
		put(o, "r%u = atomic%s_xchg((%s *)(r%u %+d), r%u)", insn->src_reg, w, t,
		    insn->dst_reg, insn->off, insn->src_reg);
	} else if (imm == BPF_CMPXCHG) {
		put(o, "r0 = atomic%s_cmpxchg((%s *)(r%u %+d), r0, r%u)", w, t, insn->dst_reg,
		    insn->off, insn->src_reg);
	} else if ((imm & ~(BPF_FETCH | 0xf0)) || !names[(imm & 0xf0) >> 4]) {
		return false;
	} else if (imm & BPF_FETCH) {
		put(o, "r%u = atomic%s_fetch_%s((%s *)(r%u %+d), r%u)", insn->src_reg, w,
		    names[(imm & 0xf0) >> 4], t, insn->dst_reg, insn->off, insn->src_reg);
	} else {
		put(o, "lock *(%s *)(r%u %+d) %s r%u", t, insn->dst_reg, insn->off,
		    alu_ops[(imm & 0xf0) >> 4], insn->src_reg);
	}
	return true;
}

static int print_ld(struct out *o, const struct bpf_insn *insns, size_t remaining, uint32_t pc,
		    const struct bpfrt_kdisasm_names *names)
{
	const struct bpf_insn *insn = insns;
	char tmp[96];
	const char *text = NULL;

	if (insn_mode(insn) == BPF_ABS) {
		put(o, "r0 = *(%s *)skb[%d]", mem_type(insn, false), insn->imm);
		return 1;
	}
	if (insn_mode(insn) == BPF_IND) {
		put(o, "r0 = *(%s *)skb[r%u + %d]", mem_type(insn, false), insn->src_reg, insn->imm);
		return 1;
	}
	if (!insn_is_lddw(insn) || remaining < 2)
		return 0;
	if (names && names->imm64)
		text = names->imm64(names->ctx, insn, pc, tmp, sizeof(tmp));
	if (text)
		put(o, "r%u = %s", insn->dst_reg, text);
	else
		put(o, "r%u = 0x%" PRIx64, insn->dst_reg, insn_lddw_imm(insn));
	return 2;
}

static bool print_jmp(struct out *o, const struct bpf_insn *insn,
		      const struct bpfrt_kdisasm_names *names)
{
	bool is32 = insn_class(insn) == BPF_JMP32;
	char r = is32 ? 'w' : 'r';
	uint8_t op = insn_op(insn);

	if (op == BPF_CALL && !is32) {
		const char *name = names && names->call ? names->call(names->ctx, insn) : NULL;

		if (insn_src(insn) == BPF_X)
			put(o, "callx r%u", insn->dst_reg);
		else if (insn->src_reg == BPF_PSEUDO_CALL)
			put(o, "call pc%+d", insn->imm);
		else
			put(o, "call %s#%d", name ? name : "unknown", insn->imm);
		return true;
	}
	if (op == BPF_JA) {
		if (is32)
			put(o, "gotol pc%+d", insn->imm);
		else
			put(o, "goto pc%+d", insn->off);
		return true;
	}
	if (op == BPF_JCOND && !is32 && insn->src_reg == BPF_MAY_GOTO) {
		put(o, "may_goto pc%+d", insn->off);
		return true;
	}
	if (op == BPF_EXIT && !is32) {
		put(o, "exit");
		return true;
	}
	if (!jmp_ops[op >> 4])
		return false;
	if (insn_src(insn) == BPF_X)
		put(o, "if %c%u %s %c%u goto pc%+d", r, insn->dst_reg, jmp_ops[op >> 4], r,
		    insn->src_reg, insn->off);
	else
		put(o, "if %c%u %s 0x%x goto pc%+d", r, insn->dst_reg, jmp_ops[op >> 4],
		    (uint32_t)insn->imm, insn->off);
	return true;
}

int bpfrt_disasm_kernel(const struct bpf_insn *insns, size_t remaining, uint32_t pc,
			const struct bpfrt_kdisasm_names *names, char *buf, size_t buf_len)
{
	const struct bpf_insn *insn = insns;
	struct out o = { buf, buf_len };
	bool ok = false;
	int slots = 1;

	if (!insns || !remaining || !buf || !buf_len)
		return -EINVAL;
	buf[0] = 0;
	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		ok = print_alu(&o, insn);
		break;
	case BPF_LDX:
		/* fault-safe loads print as the loads they were */
		ok = insn_mode(insn) == BPF_MEM || insn_mode(insn) == BPF_MEMSX ||
		     insn_is_probe_load(insn);
		if (ok)
			put(&o, "r%u = *(%s *)(r%u %+d)", insn->dst_reg,
			    mem_type(insn, insn_is_ldx_sext(insn)), insn->src_reg, insn->off);
		break;
	case BPF_ST:
		ok = insn_mode(insn) == BPF_MEM;
		if (ok)
			put(&o, "*(%s *)(r%u %+d) = %d", mem_type(insn, false), insn->dst_reg,
			    insn->off, insn->imm);
		break;
	case BPF_STX:
		if (insn_mode(insn) == BPF_MEM) {
			put(&o, "*(%s *)(r%u %+d) = r%u", mem_type(insn, false), insn->dst_reg,
			    insn->off, insn->src_reg);
			ok = true;
		} else if (insn_mode(insn) == BPF_ATOMIC) {
			ok = print_atomic(&o, insn);
		}
		break;
	case BPF_LD:
		slots = print_ld(&o, insns, remaining, pc, names);
		ok = slots > 0;
		if (!ok)
			slots = 1;
		break;
	case BPF_JMP:
	case BPF_JMP32:
		ok = print_jmp(&o, insn, names);
		break;
	}
	if (!ok)
		return bpfrt_disasm_insn(insns, remaining, buf, buf_len);
	return slots;
}
