/* Disassembler for the bpf_conformance text syntax.
 *
 * Every valid RFC 9669 encoding is printed with its mnemonic, jump and
 * local-call targets as signed instruction counts ("ja +3"); anything else
 * (unknown opcode, reserved field set, register above r10) is printed as
 * ".insn 0x<64-bit word>" so the listing still assembles back to the same
 * bytes. */
#include "isa/disasm.h"

#include "bpfrt/bpfrt.h"
#include "core/error.h"
#include "isa/isa.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

struct line {
	char text[BPFRT_DISASM_LINE_MAX];
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
}

static void put_raw(struct line *l, const struct bpf_insn *insn)
{
	put(l, ".insn 0x%016" PRIx64, bpfrt_insn_to_word(insn));
}

/* "[%r1+2]" / "[%r10-8]" / "[%r1]" */
static void format_mem(char *buf, size_t len, uint8_t reg, int16_t off)
{
	if (off)
		snprintf(buf, len, "[%%r%u%+d]", reg, off);
	else
		snprintf(buf, len, "[%%r%u]", reg);
}

static bool regs_valid(const struct bpf_insn *insn)
{
	return insn->dst_reg <= BPF_R10 && insn->src_reg <= BPF_R10;
}

static bool format_endian(struct line *l, const struct bpf_insn *insn, bool is64)
{
	bool to_be = insn_src(insn) == BPF_X; /* BPF_TO_BE shares the bit */

	if (insn->src_reg || insn->off)
		return false;
	if (insn->imm != 16 && insn->imm != 32 && insn->imm != 64)
		return false;
	if (is64) {
		/* ALU64 has only the unconditional swap. */
		if (to_be)
			return false;
		put(l, "bswap%d %%r%u", insn->imm, insn->dst_reg);
	} else {
		put(l, "%s%d %%r%u", to_be ? "be" : "le", insn->imm, insn->dst_reg);
	}
	return true;
}

static bool format_alu(struct line *l, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool reg_src = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	const char *sfx = is64 ? "" : "32";
	const char *name = bpfrt_alu_op_names[op >> 4];
	char mn[16];

	if (op == BPF_END)
		return format_endian(l, insn, is64);
	if (op == BPF_NEG) {
		if (reg_src || insn->src_reg || insn->off || insn->imm)
			return false;
		put(l, "neg%s %%r%u", sfx, insn->dst_reg);
		return true;
	}
	if (!name)
		return false;

	if ((op == BPF_DIV || op == BPF_MOD) && insn->off == 1) {
		snprintf(mn, sizeof(mn), "s%s%s", name, sfx);
	} else if (op == BPF_MOV && reg_src && insn->off) {
		/* movsx: the suite spells the source width then the class. */
		if (insn->off != 8 && insn->off != 16 && !(is64 && insn->off == 32))
			return false;
		snprintf(mn, sizeof(mn), "movsx%d%s", insn->off, is64 ? "64" : "32");
	} else if (insn->off) {
		return false;
	} else {
		snprintf(mn, sizeof(mn), "%s%s", name, sfx);
	}

	if (reg_src) {
		if (insn->imm)
			return false;
		put(l, "%s %%r%u, %%r%u", mn, insn->dst_reg, insn->src_reg);
	} else {
		if (insn->src_reg)
			return false;
		put(l, "%s %%r%u, %d", mn, insn->dst_reg, insn->imm);
	}
	return true;
}

/* Returns the slots used (2) or 0 if this is not a plain lddw. */
static int format_ld(struct line *l, const struct bpf_insn *insn, size_t remaining)
{
	const struct bpf_insn *hi = insn + 1;

	/* legacy packet loads, in ubpf's assembler syntax (asm.c reads it) */
	if ((insn_mode(insn) == BPF_ABS || insn_mode(insn) == BPF_IND) && !insn->dst_reg &&
	    !insn->off) {
		const char *sfx = bpfrt_size_suffix[insn_size(insn) >> 3];

		if (insn_mode(insn) == BPF_ABS && !insn->src_reg)
			put(l, "ldabs%s %d", sfx, insn->imm);
		else if (insn_mode(insn) == BPF_IND)
			put(l, "ldind%s %%r%u, %d", sfx, insn->src_reg, insn->imm);
		else
			return 0;
		return 1;
	}
	if (!insn_is_lddw(insn) || insn->src_reg || insn->off || remaining < 2)
		return 0;
	if (hi->code || hi->dst_reg || hi->src_reg || hi->off)
		return 0;
	put(l, "lddw %%r%u, 0x%" PRIx64, insn->dst_reg, insn_lddw_imm(insn));
	return 2;
}

static bool format_ldx(struct line *l, const struct bpf_insn *insn)
{
	uint8_t size = insn_size(insn);
	const char *sx;
	char mem[24];

	if (insn->imm)
		return false;
	if (insn_mode(insn) == BPF_MEM)
		sx = "";
	else if (insn_mode(insn) == BPF_MEMSX && size != BPF_DW)
		sx = "s";
	else
		return false;
	format_mem(mem, sizeof(mem), insn->src_reg, insn->off);
	put(l, "ldx%s%s %%r%u, %s", sx, bpfrt_size_suffix[size >> 3], insn->dst_reg, mem);
	return true;
}

static bool format_st(struct line *l, const struct bpf_insn *insn)
{
	char mem[24];

	if (insn_mode(insn) != BPF_MEM || insn->src_reg)
		return false;
	format_mem(mem, sizeof(mem), insn->dst_reg, insn->off);
	put(l, "st%s %s, %d", bpfrt_size_suffix[insn_size(insn) >> 3], mem, insn->imm);
	return true;
}

static const char *atomic_op_name(int32_t imm)
{
	switch (imm & ~BPF_FETCH) {
	case BPF_ADD: return "add";
	case BPF_OR:  return "or";
	case BPF_AND: return "and";
	case BPF_XOR: return "xor";
	default:      return NULL;
	}
}

static bool format_atomic(struct line *l, const struct bpf_insn *insn, const char *mem)
{
	const char *sfx;
	const char *name;

	if (insn_size(insn) == BPF_W)
		sfx = "32";
	else if (insn_size(insn) == BPF_DW)
		sfx = "";
	else
		return false;

	if (insn->imm == BPF_XCHG) {
		put(l, "lock xchg%s %s, %%r%u", sfx, mem, insn->src_reg);
		return true;
	}
	if (insn->imm == BPF_CMPXCHG) {
		put(l, "lock cmpxchg%s %s, %%r%u", sfx, mem, insn->src_reg);
		return true;
	}
	name = atomic_op_name(insn->imm);
	if (!name)
		return false;
	put(l, "lock %s%s%s %s, %%r%u", (insn->imm & BPF_FETCH) ? "fetch " : "",
	    name, sfx, mem, insn->src_reg);
	return true;
}

static bool format_stx(struct line *l, const struct bpf_insn *insn)
{
	char mem[24];

	format_mem(mem, sizeof(mem), insn->dst_reg, insn->off);
	if (insn_mode(insn) == BPF_ATOMIC)
		return format_atomic(l, insn, mem);
	if (insn_mode(insn) != BPF_MEM || insn->imm)
		return false;
	put(l, "stx%s %s, %%r%u", bpfrt_size_suffix[insn_size(insn) >> 3], mem, insn->src_reg);
	return true;
}

static bool format_call(struct line *l, const struct bpf_insn *insn)
{
	if (insn->off)
		return false;
	if (insn_is_callx(insn)) {
		if (insn->src_reg || insn->imm)
			return false;
		put(l, "callx %%r%u", insn->dst_reg);
		return true;
	}
	if (insn_src(insn) != BPF_K || insn->dst_reg)
		return false;
	switch (insn->src_reg) {
	case 0:
		put(l, "call %d", insn->imm);
		return true;
	case BPF_PSEUDO_CALL:
		put(l, "call local %+d", insn->imm);
		return true;
	case BPF_PSEUDO_KFUNC_CALL:
		put(l, "call runtime %d", insn->imm);
		return true;
	default:
		return false;
	}
}

static bool format_jmp(struct line *l, const struct bpf_insn *insn)
{
	bool is32 = insn_class(insn) == BPF_JMP32;
	uint8_t op = insn_op(insn);
	const char *name = bpfrt_jmp_op_names[op >> 4];

	if (op == BPF_JA) {
		if (insn_src(insn) != BPF_K || insn->dst_reg || insn->src_reg)
			return false;
		if (is32) {
			if (insn->off)
				return false;
			put(l, "ja32 %+d", insn->imm);
		} else {
			if (insn->imm)
				return false;
			put(l, "ja %+d", insn->off);
		}
		return true;
	}
	if (!is32 && op == BPF_JCOND) {
		if (!insn_is_may_goto(insn) || insn->dst_reg || insn->imm)
			return false;
		put(l, "may_goto %+d", insn->off);
		return true;
	}
	if (!is32 && op == BPF_CALL)
		return format_call(l, insn);
	if (!is32 && op == BPF_EXIT) {
		if (insn_src(insn) != BPF_K || insn->dst_reg || insn->src_reg ||
		    insn->off || insn->imm)
			return false;
		put(l, "exit");
		return true;
	}
	if (!name)
		return false;
	if (insn_src(insn) == BPF_X) {
		if (insn->imm)
			return false;
		put(l, "%s%s %%r%u, %%r%u, %+d", name, is32 ? "32" : "",
		    insn->dst_reg, insn->src_reg, insn->off);
	} else {
		if (insn->src_reg)
			return false;
		put(l, "%s%s %%r%u, %d, %+d", name, is32 ? "32" : "",
		    insn->dst_reg, insn->imm, insn->off);
	}
	return true;
}

/* Formats the instruction at insns[0]; returns the slots it used. */
static int format_insn(struct line *l, const struct bpf_insn *insns, size_t remaining)
{
	const struct bpf_insn *insn = insns;
	bool ok = false;

	if (regs_valid(insn)) {
		switch (insn_class(insn)) {
		case BPF_ALU:
		case BPF_ALU64:
			ok = format_alu(l, insn);
			break;
		case BPF_LD: {
			int slots = format_ld(l, insn, remaining);

			if (slots)
				return slots;
			break;
		}
		case BPF_LDX:
			ok = format_ldx(l, insn);
			break;
		case BPF_ST:
			ok = format_st(l, insn);
			break;
		case BPF_STX:
			ok = format_stx(l, insn);
			break;
		case BPF_JMP:
		case BPF_JMP32:
			ok = format_jmp(l, insn);
			break;
		}
	}
	if (!ok)
		put_raw(l, insn);
	return 1;
}

int bpfrt_disasm_insn(const struct bpf_insn *insns, size_t remaining,
		      char *buf, size_t buf_len)
{
	struct line l;
	int slots;
	size_t len;

	if (!insns || !remaining)
		return bpfrt_err(-EINVAL, "disasm: no instruction to decode");
	slots = format_insn(&l, insns, remaining);
	len = strlen(l.text);
	if (!buf || buf_len <= len)
		return bpfrt_err(-EINVAL, "disasm: buffer of %zu bytes too small (need %zu)",
				 buf_len, len + 1);
	memcpy(buf, l.text, len + 1);
	return slots;
}

static bool has_branch_target(const struct bpf_insn *insn)
{
	return (insn_is_branch(insn) || insn_is_local_call(insn)) &&
	       regs_valid(insn);
}

int bpfrt_disasm_write(const struct bpf_insn *insns, size_t insn_cnt,
		       FILE *out, bool with_index)
{
	struct line l;

	if (!out || (!insns && insn_cnt))
		return bpfrt_err(-EINVAL, "disasm: NULL argument");
	for (size_t pc = 0; pc < insn_cnt;) {
		int slots = format_insn(&l, insns + pc, insn_cnt - pc);

		if (!with_index) {
			fprintf(out, "%s\n", l.text);
		} else if (has_branch_target(&insns[pc]) && strncmp(l.text, ".insn", 5)) {
			/* Local calls keep the target in imm like gotol does. */
			int64_t rel = insn_is_local_call(&insns[pc]) || insn_is_gotol(&insns[pc]) ?
				      insns[pc].imm : insns[pc].off;

			fprintf(out, "%5zu: %-40s # -> %" PRId64 "\n", pc, l.text,
				(int64_t)pc + 1 + rel);
		} else {
			fprintf(out, "%5zu: %s\n", pc, l.text);
		}
		pc += slots;
	}
	if (ferror(out))
		return bpfrt_err(-EIO, "disasm: write error");
	return 0;
}

int bpfrt_disasm(const struct bpf_insn *insns, size_t insn_cnt, FILE *out)
{
	return bpfrt_disasm_write(insns, insn_cnt, out, true);
}
