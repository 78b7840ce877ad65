/* Assembler for the bpf_conformance text syntax.
 *
 * One instruction per line: "mnemonic op, op, ...", operands being
 * registers (%r0-%r10), numbers (decimal or 0x hex, optionally negative),
 * memory references ([%r1+off]) and jump targets (a label or a signed count
 * of instruction slots after the jump, "+3"/"-1"). "name:" defines a label,
 * "#" starts a comment. As in the suite's own assembler, "exit" names the
 * first exit instruction unless a label of that name exists.
 *
 * ".insn 0xWORD" emits one raw instruction slot (opcode in the low byte),
 * which lets the disassembler print invalid encodings reversibly. */
#include "bpfrt/bpfrt.h"
#include "core/error.h"
#include "isa/disasm.h"
#include "isa/isa.h"
#include "isa/lines.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 8

struct label {
	char *name;
	size_t pc;
	unsigned line;
};

/* A jump or local call whose target is a label, patched once all labels
 * are known. */
struct fixup {
	char *name;
	size_t pc;
	unsigned line;
	bool in_imm; /* target in imm (call local, ja32), else in off */
};

struct assembler {
	struct bpf_insn *insns;
	size_t cnt, cap;
	struct label *labels;
	size_t label_cnt, label_cap;
	struct fixup *fixups;
	size_t fixup_cnt, fixup_cap;
	unsigned line;
	bool seen_exit;
	size_t first_exit;
};

/* One parsed line: the mnemonic and its operands. */
struct stmt {
	const char *mn;
	char *ops[MAX_TOKENS];
	int nops;
};

static int asm_error(const struct assembler *as, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int asm_error(const struct assembler *as, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bpfrt_err(-EINVAL, "asm: line %u: %s", as->line, msg);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return bpfrt_err(-ENOMEM, "asm: out of memory");
	*arr = n;
	*cap = ncap;
	return 0;
}

/* ---- operands ---------------------------------------------------------- */

struct number {
	uint64_t mag;
	bool neg;
	bool hex;
};

static int digit_value(char c, bool hex)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (hex && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (hex && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* [+-](0x<hex>|<decimal>), magnitude up to 2^64-1. */
static bool parse_number(const char *s, struct number *n)
{
	unsigned base;
	int d;

	memset(n, 0, sizeof(*n));
	if (*s == '+' || *s == '-')
		n->neg = *s++ == '-';
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		n->hex = true;
		s += 2;
	}
	base = n->hex ? 16 : 10;
	if (!*s)
		return false;
	for (; *s; s++) {
		d = digit_value(*s, n->hex);
		if (d < 0 || n->mag > (UINT64_MAX - d) / base)
			return false;
		n->mag = n->mag * base + d;
	}
	return true;
}

static bool is_number(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	return isdigit((unsigned char)*s);
}

/* Signed values within [-limit - 1, limit]; hex also up to unsigned_max so
 * "0xffffffff" means -1 as in the suite. */
static bool number_in_range(const struct number *n, uint64_t limit, uint64_t unsigned_max)
{
	if (n->neg)
		return n->mag <= limit + 1;
	return n->mag <= (n->hex ? unsigned_max : limit);
}

static int64_t number_value(const struct number *n)
{
	return n->neg ? (int64_t)(0 - n->mag) : (int64_t)n->mag;
}

static int parse_imm32(struct assembler *as, const char *tok, int32_t *imm)
{
	struct number n;

	if (!parse_number(tok, &n))
		return asm_error(as, "invalid immediate '%s'", tok);
	if (!number_in_range(&n, INT32_MAX, UINT32_MAX))
		return asm_error(as, "immediate %s out of 32-bit range", tok);
	*imm = (int32_t)(uint32_t)number_value(&n);
	return 0;
}

static int parse_imm64(struct assembler *as, const char *tok, uint64_t *imm)
{
	struct number n;

	if (!parse_number(tok, &n))
		return asm_error(as, "invalid immediate '%s'", tok);
	/* Any 64-bit pattern, written signed or unsigned. */
	if (n.neg && n.mag > (uint64_t)INT64_MAX + 1)
		return asm_error(as, "immediate %s out of 64-bit range", tok);
	*imm = n.neg ? 0 - n.mag : n.mag;
	return 0;
}

static int parse_off16(struct assembler *as, const char *tok, int16_t *off)
{
	struct number n;

	if (!parse_number(tok, &n))
		return asm_error(as, "invalid offset '%s'", tok);
	if (!number_in_range(&n, INT16_MAX, INT16_MAX))
		return asm_error(as, "offset %s out of 16-bit range", tok);
	*off = (int16_t)number_value(&n);
	return 0;
}

static int parse_reg_num(struct assembler *as, const char *tok, uint8_t *reg)
{
	const char *d = tok + 2;
	unsigned v = 0;

	if (tok[0] != '%' || tok[1] != 'r' || !isdigit((unsigned char)*d))
		return asm_error(as, "expected a register %%r0-%%r10, got '%s'", tok);
	for (; *d; d++) {
		if (!isdigit((unsigned char)*d) || v > BPF_R10)
			return asm_error(as, "invalid register '%s'", tok);
		v = v * 10 + (*d - '0');
	}
	if (v > BPF_R10)
		return asm_error(as, "invalid register '%s'", tok);
	*reg = (uint8_t)v;
	return 0;
}

/* "[%rN]", "[%rN+off]" or "[%rN-off]" (the tokenizer dropped any blanks). */
static int parse_mem_ref(struct assembler *as, const char *tok, uint8_t *reg, int16_t *off)
{
	size_t len = strlen(tok);
	char inner[64];
	char *sign;
	int err;

	if (len < 2 || tok[0] != '[' || tok[len - 1] != ']')
		return asm_error(as, "expected a memory operand [%%rN+offset], got '%s'", tok);
	if (len - 2 >= sizeof(inner))
		return asm_error(as, "memory operand '%s' too long", tok);
	memcpy(inner, tok + 1, len - 2);
	inner[len - 2] = '\0';

	*off = 0;
	sign = strpbrk(inner, "+-");
	if (sign) {
		err = parse_off16(as, sign, off);
		if (err)
			return err;
		*sign = '\0';
	}
	return parse_reg_num(as, inner, reg);
}

/* Register fields are bit-fields, so they are filled through these. */
static int parse_dst(struct assembler *as, const char *tok, struct bpf_insn *insn)
{
	uint8_t reg;
	int err = parse_reg_num(as, tok, &reg);

	if (!err)
		insn->dst_reg = reg;
	return err;
}

static int parse_src(struct assembler *as, const char *tok, struct bpf_insn *insn)
{
	uint8_t reg;
	int err = parse_reg_num(as, tok, &reg);

	if (!err)
		insn->src_reg = reg;
	return err;
}

/* Memory operand based on dst_reg (stores) or src_reg (loads). */
static int parse_mem(struct assembler *as, const char *tok, struct bpf_insn *insn, bool dst)
{
	uint8_t reg;
	int err = parse_mem_ref(as, tok, &reg, &insn->off);

	if (!err && dst)
		insn->dst_reg = reg;
	else if (!err)
		insn->src_reg = reg;
	return err;
}

static bool is_label_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_' && *s != '.')
		return false;
	for (s++; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
			return false;
	return true;
}

static int add_fixup(struct assembler *as, const char *name, bool in_imm)
{
	struct fixup *f;
	int err;

	err = grow((void **)&as->fixups, &as->fixup_cap, as->fixup_cnt + 1, sizeof(*f));
	if (err)
		return err;
	f = &as->fixups[as->fixup_cnt];
	f->name = strdup(name);
	if (!f->name)
		return bpfrt_err(-ENOMEM, "asm: out of memory");
	f->pc = as->cnt;
	f->line = as->line;
	f->in_imm = in_imm;
	as->fixup_cnt++;
	return 0;
}

/* A label (patched later) or a signed slot count; wide targets (ja32,
 * call local) live in the 32-bit imm, the others in the 16-bit off. */
static int parse_target(struct assembler *as, const char *tok, bool wide, int32_t *rel)
{
	struct number n;

	*rel = 0;
	if (is_number(tok)) {
		if (!parse_number(tok, &n))
			return asm_error(as, "invalid jump offset '%s'", tok);
		if (!number_in_range(&n, wide ? INT32_MAX : INT16_MAX,
				     wide ? INT32_MAX : INT16_MAX))
			return asm_error(as, "jump offset %s out of %d-bit range", tok,
					 wide ? 32 : 16);
		*rel = (int32_t)number_value(&n);
		return 0;
	}
	if (!is_label_name(tok))
		return asm_error(as, "invalid jump target '%s'", tok);
	return add_fixup(as, tok, wide);
}

/* ---- instruction forms ------------------------------------------------- */

static int want_ops(struct assembler *as, const struct stmt *st, int n)
{
	if (st->nops != n)
		return asm_error(as, "invalid number of operands for '%s': expected %d, got %d",
				 st->mn, n, st->nops);
	return 0;
}

static int emit(struct assembler *as, struct bpf_insn insn)
{
	int err = grow((void **)&as->insns, &as->cap, as->cnt + 1, sizeof(insn));

	if (err)
		return err;
	as->insns[as->cnt++] = insn;
	return 0;
}

/* Strips a "32" suffix; returns true if there was one. */
static bool strip32(const char *mn, char *base, size_t len)
{
	size_t n = strlen(mn);
	bool is32 = n > 2 && !strcmp(mn + n - 2, "32");

	if (is32)
		n -= 2;
	if (n >= len)
		n = len - 1;
	memcpy(base, mn, n);
	base[n] = '\0';
	return is32;
}

static int find_name(const char *const names[16], const char *name)
{
	for (int i = 0; i < 16; i++)
		if (names[i] && !strcmp(names[i], name))
			return i << 4;
	return -1;
}

/* "op dst, src|imm" with src filling src_reg (BPF_X) or imm (BPF_K). */
static int asm_reg_or_imm(struct assembler *as, const struct stmt *st, struct bpf_insn *insn)
{
	int err = want_ops(as, st, 2);

	if (!err)
		err = parse_dst(as, st->ops[0], insn);
	if (err)
		return err;
	if (st->ops[1][0] == '%') {
		insn->code |= BPF_X;
		return parse_src(as, st->ops[1], insn);
	}
	return parse_imm32(as, st->ops[1], &insn->imm);
}

/* add, sub, ..., sdiv, smod and neg, with "32" for the ALU class. */
static int asm_alu(struct assembler *as, const struct stmt *st, bool *matched)
{
	struct bpf_insn insn = { 0 };
	char base[16];
	bool is32 = strip32(st->mn, base, sizeof(base));
	const char *name = base;
	int op, err;

	if (!strcmp(base, "sdiv") || !strcmp(base, "smod")) {
		insn.off = 1;
		name++;
	}
	op = !strcmp(name, "neg") ? BPF_NEG : find_name(bpfrt_alu_op_names, name);
	if (op < 0 || (insn.off && op != BPF_DIV && op != BPF_MOD))
		return 0;
	*matched = true;
	insn.code = (is32 ? BPF_ALU : BPF_ALU64) | op;
	if (op == BPF_NEG) {
		err = want_ops(as, st, 1);
		if (!err)
			err = parse_dst(as, st->ops[0], &insn);
	} else {
		err = asm_reg_or_imm(as, st, &insn);
	}
	return err ? err : emit(as, insn);
}

/* movsx<from><class>: movsx832, movsx1632, movsx864, movsx1664, movsx3264. */
static int asm_movsx(struct assembler *as, const struct stmt *st, bool *matched)
{
	static const struct { const char *mn; uint8_t cls; int16_t bits; } forms[] = {
		{ "movsx832", BPF_ALU, 8 },     { "movsx1632", BPF_ALU, 16 },
		{ "movsx864", BPF_ALU64, 8 },   { "movsx1664", BPF_ALU64, 16 },
		{ "movsx3264", BPF_ALU64, 32 },
	};
	struct bpf_insn insn = { 0 };
	int err;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (strcmp(st->mn, forms[i].mn))
			continue;
		*matched = true;
		insn.code = forms[i].cls | BPF_MOV | BPF_X;
		insn.off = forms[i].bits;
		err = want_ops(as, st, 2);
		if (!err)
			err = parse_dst(as, st->ops[0], &insn);
		if (!err)
			err = parse_src(as, st->ops[1], &insn);
		return err ? err : emit(as, insn);
	}
	return 0;
}

/* be16/32/64, le16/32/64 (ALU class) and bswap16/32/64 = swap16/32/64
 * (ALU64, unconditional). */
static int asm_endian(struct assembler *as, const struct stmt *st, bool *matched)
{
	static const struct { const char *prefix; uint8_t code; } forms[] = {
		{ "be", BPF_ALU | BPF_END | BPF_TO_BE },
		{ "le", BPF_ALU | BPF_END | BPF_TO_LE },
		{ "bswap", BPF_ALU64 | BPF_END | BPF_TO_LE },
		{ "swap", BPF_ALU64 | BPF_END | BPF_TO_LE },
	};
	struct bpf_insn insn = { 0 };
	int err;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t plen = strlen(forms[i].prefix);
		const char *bits = st->mn + plen;

		if (strncmp(st->mn, forms[i].prefix, plen))
			continue;
		if (strcmp(bits, "16") && strcmp(bits, "32") && strcmp(bits, "64"))
			continue;
		*matched = true;
		insn.code = forms[i].code;
		insn.imm = atoi(bits);
		err = want_ops(as, st, 1);
		if (!err)
			err = parse_dst(as, st->ops[0], &insn);
		return err ? err : emit(as, insn);
	}
	return 0;
}

/* jeq..jsle: "jXX dst, src|imm, target", "32" for the JMP32 class. */
static int asm_jcond(struct assembler *as, const struct stmt *st, bool *matched)
{
	struct bpf_insn insn = { 0 };
	char base[16];
	bool is32 = strip32(st->mn, base, sizeof(base));
	int op = find_name(bpfrt_jmp_op_names, base);
	struct stmt two = *st;
	int32_t rel;
	int err;

	if (op < 0)
		return 0;
	*matched = true;
	insn.code = (is32 ? BPF_JMP32 : BPF_JMP) | op;
	err = want_ops(as, st, 3);
	if (err)
		return err;
	/* Check the first two operands before registering a fixup. */
	two.nops = 2;
	err = asm_reg_or_imm(as, &two, &insn);
	if (!err)
		err = parse_target(as, st->ops[2], false, &rel);
	if (err)
		return err;
	insn.off = (int16_t)rel;
	return emit(as, insn);
}

/* "ja TARGET", "ja32/gotol TARGET", and "may_goto TARGET" (mg: BPF_JCOND
 * with src_reg BPF_MAY_GOTO, the 16-bit offset as ja's). */
static int asm_ja(struct assembler *as, const struct stmt *st, bool wide, bool mg)
{
	struct bpf_insn insn = { .code = wide ? (BPF_JMP32 | BPF_JA)
					      : mg ? (BPF_JMP | BPF_JCOND) : (BPF_JMP | BPF_JA),
				 .src_reg = BPF_MAY_GOTO };
	int32_t rel;
	int err = want_ops(as, st, 1);

	if (!err)
		err = parse_target(as, st->ops[0], wide, &rel);
	if (err)
		return err;
	if (wide)
		insn.imm = rel;
	else
		insn.off = (int16_t)rel;
	return emit(as, insn);
}

static int asm_callx(struct assembler *as, const char *reg)
{
	struct bpf_insn insn = { .code = BPF_JMP | BPF_CALL | BPF_X };
	int err = parse_dst(as, reg, &insn);

	return err ? err : emit(as, insn);
}

/* call N | call %rN | call helper N | call local TARGET | call runtime N */
static int asm_call(struct assembler *as, const struct stmt *st)
{
	struct bpf_insn insn = { .code = BPF_JMP | BPF_CALL };
	const char *kind, *arg;
	int err;

	if (st->nops != 1 && st->nops != 2)
		return asm_error(as, "invalid number of operands for 'call': "
				 "expected 1 or 2, got %d", st->nops);
	kind = st->nops == 2 ? st->ops[0] : "helper";
	arg = st->ops[st->nops - 1];
	if (st->nops == 1 && arg[0] == '%')
		return asm_callx(as, arg);
	if (!strcmp(kind, "helper")) {
		err = parse_imm32(as, arg, &insn.imm);
	} else if (!strcmp(kind, "runtime")) {
		insn.src_reg = BPF_PSEUDO_KFUNC_CALL;
		err = parse_imm32(as, arg, &insn.imm);
	} else if (!strcmp(kind, "local")) {
		insn.src_reg = BPF_PSEUDO_CALL;
		err = parse_target(as, arg, true, &insn.imm);
	} else {
		err = asm_error(as, "invalid call kind '%s' (helper, local or runtime)", kind);
	}
	return err ? err : emit(as, insn);
}

static int asm_lddw(struct assembler *as, const struct stmt *st)
{
	struct bpf_insn insn = { .code = BPF_LD | BPF_DW | BPF_IMM };
	struct bpf_insn hi = { 0 };
	uint64_t imm;
	int err = want_ops(as, st, 2);

	if (!err)
		err = parse_dst(as, st->ops[0], &insn);
	if (!err)
		err = parse_imm64(as, st->ops[1], &imm);
	if (err)
		return err;
	insn.imm = (int32_t)(uint32_t)imm;
	hi.imm = (int32_t)(uint32_t)(imm >> 32);
	err = emit(as, insn);
	return err ? err : emit(as, hi);
}

static int size_from_suffix(const char *sfx)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(bpfrt_size_suffix[i], sfx))
			return i << 3;
	return -1;
}

/* Legacy packet loads, as ubpf's assembler writes them: ldabs{b,h,w} IMM
 * and ldind{b,h,w} %rS, IMM (r0 = the packet's bytes at IMM, or at
 * rS + IMM, big-endian). The dw size assembles too: the validator refuses
 * it with Linux's message. */
static int asm_ld_packet(struct assembler *as, const struct stmt *st, bool *matched)
{
	struct bpf_insn insn = { 0 };
	bool ind = !strncmp(st->mn, "ldind", 5);
	int size, err;

	if ((!ind && strncmp(st->mn, "ldabs", 5)) || (size = size_from_suffix(st->mn + 5)) < 0)
		return 0;
	*matched = true;
	insn.code = (uint8_t)(BPF_LD | (ind ? BPF_IND : BPF_ABS) | size);
	err = want_ops(as, st, ind ? 2 : 1);
	if (!err && ind)
		err = parse_src(as, st->ops[0], &insn);
	if (!err)
		err = parse_imm32(as, st->ops[ind ? 1 : 0], &insn.imm);
	return err ? err : emit(as, insn);
}

/* ldx{b,h,w,dw}, ldxs{b,h,w}, st{b,h,w,dw}, stx{b,h,w,dw}. */
static int asm_mem(struct assembler *as, const struct stmt *st, bool *matched)
{
	struct bpf_insn insn = { 0 };
	const char *mn = st->mn;
	int size, err;

	if (!strncmp(mn, "ldxs", 4) && (size = size_from_suffix(mn + 4)) >= 0 &&
	    size != BPF_DW) {
		insn.code = BPF_LDX | BPF_MEMSX | size;
	} else if (!strncmp(mn, "ldx", 3) && (size = size_from_suffix(mn + 3)) >= 0) {
		insn.code = BPF_LDX | BPF_MEM | size;
	} else if (!strncmp(mn, "stx", 3) && (size = size_from_suffix(mn + 3)) >= 0) {
		insn.code = BPF_STX | BPF_MEM | size;
	} else if (!strncmp(mn, "st", 2) && (size = size_from_suffix(mn + 2)) >= 0) {
		insn.code = BPF_ST | BPF_MEM | size;
	} else {
		return 0;
	}
	*matched = true;
	err = want_ops(as, st, 2);
	if (err)
		return err;
	switch (BPF_CLASS(insn.code)) {
	case BPF_LDX:
		err = parse_dst(as, st->ops[0], &insn);
		if (!err)
			err = parse_mem(as, st->ops[1], &insn, false);
		break;
	case BPF_STX:
		err = parse_mem(as, st->ops[0], &insn, true);
		if (!err)
			err = parse_src(as, st->ops[1], &insn);
		break;
	default:
		err = parse_mem(as, st->ops[0], &insn, true);
		if (!err)
			err = parse_imm32(as, st->ops[1], &insn.imm);
		break;
	}
	return err ? err : emit(as, insn);
}

/* lock [fetch] add|or|and|xor[32] [%rD+off], %rS; lock xchg|cmpxchg[32] ... */
static int asm_lock(struct assembler *as, const struct stmt *st)
{
	struct bpf_insn insn = { 0 };
	int first = st->nops > 0 && !strcmp(st->ops[0], "fetch");
	bool fetch = first;
	char base[16];
	bool is32;
	int err;

	if (st->nops - first != 3)
		return asm_error(as, "invalid number of operands for lock: expected "
				 "[fetch] OP [%%rN+off], %%rM");
	is32 = strip32(st->ops[first], base, sizeof(base));
	if (!strcmp(base, "xchg")) {
		insn.imm = BPF_XCHG;
	} else if (!strcmp(base, "cmpxchg")) {
		insn.imm = BPF_CMPXCHG;
	} else if (!strcmp(base, "add") || !strcmp(base, "or") ||
		   !strcmp(base, "and") || !strcmp(base, "xor")) {
		insn.imm = find_name(bpfrt_alu_op_names, base) | (fetch ? BPF_FETCH : 0);
	} else {
		return asm_error(as, "invalid atomic operation '%s'", st->ops[first]);
	}
	insn.code = BPF_STX | BPF_ATOMIC | (is32 ? BPF_W : BPF_DW);
	err = parse_mem(as, st->ops[first + 1], &insn, true);
	if (!err)
		err = parse_src(as, st->ops[first + 2], &insn);
	return err ? err : emit(as, insn);
}

static int asm_raw(struct assembler *as, const struct stmt *st)
{
	uint64_t word;
	int err = want_ops(as, st, 1);

	if (!err)
		err = parse_imm64(as, st->ops[0], &word);
	return err ? err : emit(as, bpfrt_word_to_insn(word));
}

static int asm_exit(struct assembler *as, const struct stmt *st)
{
	int err = want_ops(as, st, 0);

	if (err)
		return err;
	if (!as->seen_exit) {
		as->seen_exit = true;
		as->first_exit = as->cnt;
	}
	return emit(as, (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT });
}

static int assemble_stmt(struct assembler *as, const struct stmt *st)
{
	static int (*const families[])(struct assembler *, const struct stmt *, bool *) = {
		asm_movsx, asm_endian, asm_alu, asm_jcond, asm_mem,
	};
	const char *mn = st->mn;
	bool matched = false;
	int err;

	if (!strcmp(mn, "exit"))
		return asm_exit(as, st);
	if (!strcmp(mn, "lddw"))
		return asm_lddw(as, st);
	{
		bool matched = false;
		int err = asm_ld_packet(as, st, &matched);

		if (matched)
			return err;
	}
	if (!strcmp(mn, "ja"))
		return asm_ja(as, st, false, false);
	if (!strcmp(mn, "ja32") || !strcmp(mn, "gotol"))
		return asm_ja(as, st, true, false);
	if (!strcmp(mn, "may_goto"))
		return asm_ja(as, st, false, true);
	if (!strcmp(mn, "call"))
		return asm_call(as, st);
	if (!strcmp(mn, "callx"))
		return want_ops(as, st, 1) ?: asm_callx(as, st->ops[0]);
	if (!strcmp(mn, "lock"))
		return asm_lock(as, st);
	if (!strcmp(mn, ".insn"))
		return asm_raw(as, st);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		err = families[i](as, st, &matched);
		if (matched)
			return err;
	}
	return asm_error(as, "invalid mnemonic '%s'", mn);
}

/* ---- lines and labels -------------------------------------------------- */

/* Splits a line (modified in place) into tokens separated by blanks or
 * commas; "[...]" is one token with its blanks removed. */
static int tokenize(struct assembler *as, char *s, char **tok, int *ntok)
{
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	*ntok = 0;
	for (;;) {
		while (isspace((unsigned char)*s) || *s == ',')
			s++;
		if (!*s)
			return 0;
		if (*ntok == MAX_TOKENS)
			return asm_error(as, "too many operands");
		tok[(*ntok)++] = s;
		if (*s == '[') {
			char *w = s;

			while (*s && *s != ']') {
				if (!isspace((unsigned char)*s))
					*w++ = *s;
				s++;
			}
			if (!*s)
				return asm_error(as, "missing ']' in memory operand");
			*w++ = *s++;
			if (*s && !isspace((unsigned char)*s) && *s != ',')
				return asm_error(as, "unexpected '%c' after ']'", *s);
			/* w <= s - 1, so this never overwrites the next token. */
			if (*s)
				s++;
			*w = '\0';
			continue;
		}
		while (*s && !isspace((unsigned char)*s) && *s != ',')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static int define_label(struct assembler *as, char *tok)
{
	size_t len = strlen(tok);
	struct label *l;
	int err;

	tok[len - 1] = '\0';
	if (!is_label_name(tok))
		return asm_error(as, "invalid label name '%s'", tok);
	err = grow((void **)&as->labels, &as->label_cap, as->label_cnt + 1, sizeof(*l));
	if (err)
		return err;
	l = &as->labels[as->label_cnt];
	l->name = strdup(tok);
	if (!l->name)
		return bpfrt_err(-ENOMEM, "asm: out of memory");
	l->pc = as->cnt;
	l->line = as->line;
	as->label_cnt++;
	return 0;
}

static int assemble_line(struct assembler *as, char *line)
{
	char *tok[MAX_TOKENS + 1];
	struct stmt st;
	int ntok, first = 0, err;

	err = tokenize(as, line, tok, &ntok);
	if (err || !ntok)
		return err;
	/* "name:" alone or in front of an instruction. */
	if (tok[0][strlen(tok[0]) - 1] == ':') {
		err = define_label(as, tok[0]);
		if (err || ntok == 1)
			return err;
		first = 1;
	}
	st.mn = tok[first];
	st.nops = ntok - first - 1;
	for (int i = 0; i < st.nops; i++)
		st.ops[i] = tok[first + 1 + i];
	return assemble_stmt(as, &st);
}

static int compare_labels(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int compare_label_names(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

static int resolve_fixups(struct assembler *as)
{
	if (as->label_cnt)
		qsort(as->labels, as->label_cnt, sizeof(*as->labels), compare_labels);
	for (size_t i = 1; i < as->label_cnt; i++) {
		if (strcmp(as->labels[i - 1].name, as->labels[i].name))
			continue;
		as->line = as->labels[i].line;
		return asm_error(as, "duplicate label '%s' (first defined at line %u)",
				 as->labels[i].name, as->labels[i - 1].line);
	}
	for (size_t i = 0; i < as->fixup_cnt; i++) {
		struct fixup *f = &as->fixups[i];
		struct label key = { .name = f->name }, *l;
		int64_t target, rel;
		int64_t limit = f->in_imm ? INT32_MAX : INT16_MAX;

		as->line = f->line;
		l = NULL;
		if (as->label_cnt)
			l = bsearch(&key, as->labels, as->label_cnt, sizeof(*l),
				    compare_label_names);
		if (l)
			target = l->pc;
		else if (!strcmp(f->name, "exit") && as->seen_exit)
			target = as->first_exit;
		else
			return asm_error(as, "unknown label '%s'", f->name);
		rel = target - (int64_t)f->pc - 1;
		if (rel > limit || rel < -limit - 1)
			return asm_error(as, "label '%s' is %lld instructions away, out of range",
					 f->name, (long long)rel);
		if (f->in_imm)
			as->insns[f->pc].imm = (int32_t)rel;
		else
			as->insns[f->pc].off = (int16_t)rel;
	}
	return 0;
}

static void assembler_free(struct assembler *as)
{
	for (size_t i = 0; i < as->label_cnt; i++)
		free(as->labels[i].name);
	for (size_t i = 0; i < as->fixup_cnt; i++)
		free(as->fixups[i].name);
	free(as->labels);
	free(as->fixups);
	free(as->insns);
}

static int assemble_one_line(void *as, char *line)
{
	return assemble_line(as, line);
}

int bpfrt_asm(const char *text, struct bpf_insn **insns, size_t *insn_cnt)
{
	struct assembler as = { 0 };
	int err;

	if (!text || !insns || !insn_cnt)
		return bpfrt_err(-EINVAL, "asm: NULL argument");
	*insns = NULL;
	*insn_cnt = 0;
	err = bpfrt_for_each_line(text, &as.line, assemble_one_line, &as, "asm");
	if (!err && !as.cnt)
		err = bpfrt_err(-EINVAL, "asm: line %u: no instructions", as.line);
	if (!err)
		err = resolve_fixups(&as);
	if (!err) {
		*insns = as.insns;
		*insn_cnt = as.cnt;
		as.insns = NULL;
	}
	assembler_free(&as);
	return err;
}
