/* Structural validator (RFC 9669, cpu v4). Runs in a few linear passes:
 *
 *   1. encoding: every instruction's opcode, reserved fields, register
 *      numbers, helper ids and r10-relative stack accesses;
 *   2. subprogram starts: local-call and BPF_PSEUDO_FUNC targets;
 *   3. per subprogram: jump targets, the last instruction, frame size;
 *   4. reachability over the CFG, subprograms pulled in by their callers;
 *   5. call graph: recursion, call depth, chained stack depth;
 *   6. registers read that no path has written (r0 at exit included), for
 *      programs that run unverified only: the verifier's walk refuses
 *      them on the paths a program can take (walk.c's check_reads), as
 *      Linux does, where this pass would refuse a read on a dead path too.
 *
 * Frame sizes are the deepest r10-relative access rounded up to 8 bytes
 * (not 16): backends that want more alignment round up themselves. Any use
 * of r10 as a value (rather than as a load/store base) lets the frame
 * address escape, so that subprogram gets the full 512-byte frame. */
#include "verifier/validate.h"
#include "core/error.h"
#include "isa/isa.h"
#include "isa/linux_names.h"
#include "helpers/kind_rules.h"
#include "helpers/unavailable.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_ALIGN 8

enum {
	F_LDDW_TAIL     = 1 << 0, /* second slot of an lddw */
	F_SUBPROG_START = 1 << 1,
	F_REACHED       = 1 << 2,
	F_FP_ESCAPES    = 1 << 3, /* reads r10 as a value */
	F_CALL_EDGE     = 1 << 4, /* local call or BPF_PSEUDO_FUNC lddw */
	F_QUEUED        = 1 << 5, /* on the pass-6 worklist */
};

struct vctx {
	struct bpfrt_prog *prog;
	const struct bpf_insn *insns;
	uint32_t n;
	uint8_t *flags;
	uint32_t edge_cnt;
};

static int reject(uint32_t pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reject(uint32_t pc, const char *fmt, ...)
{
	char reason[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return bpfrt_err(-EINVAL, "insn %u: %s", pc, reason);
}

static int unknown_opcode(uint32_t pc, const struct bpf_insn *insn)
{
	return reject(pc, "unknown opcode 0x%02x", insn->code);
}

static int reserved(uint32_t pc, const char *field, long val, const char *what)
{
	return reject(pc, "reserved field %s must be 0 for %s (is %ld)", field, what, val);
}

static int check_reg(uint32_t pc, uint8_t reg, const char *field)
{
	if (reg >= BPF_NREGS)
		return reject(pc, "invalid register r%u in %s", reg, field);
	return 0;
}

static int check_writable(uint32_t pc, uint8_t reg)
{
	if (reg == BPF_R10)
		return reject(pc, "r10 is the read-only frame pointer and cannot be written");
	return 0;
}

/* [r10+off, r10+off+size) must lie inside the frame [-512, 0). */
static int check_stack_access(uint32_t pc, int16_t off, unsigned size)
{
	int lo = off, hi = off + (int)size;

	if (lo < -BPFRT_STACK_PER_FRAME || hi > 0)
		return reject(pc, "invalid stack access off=%d size=%u (frame is [-%d, 0))",
			      off, size, BPFRT_STACK_PER_FRAME);
	return 0;
}

/* ---- pass 1: encodings ------------------------------------------------- */

static const char *alu_op_name(uint8_t op)
{
	static const char *const names[16] = {
		"add", "sub", "mul", "div", "or", "and", "lsh", "rsh",
		"neg", "mod", "xor", "mov", "arsh", "end/bswap", "?", "?",
	};
	return names[op >> 4];
}

static int check_alu_off(uint32_t pc, const struct bpf_insn *insn, bool is64, bool x)
{
	uint8_t op = insn_op(insn);

	if (op == BPF_DIV || op == BPF_MOD) {
		/* off 1 selects sdiv/smod */
		if (insn->off != 0 && insn->off != 1)
			return reject(pc, "invalid offset %d for %s (0 = unsigned, 1 = signed)",
				      insn->off, alu_op_name(op));
		return 0;
	}
	if (op == BPF_MOV && x) {
		/* off selects movsx: 8/16 (and 32 for the 64-bit form) */
		if (insn->off == 0 || insn->off == 8 || insn->off == 16 ||
		    (is64 && insn->off == 32))
			return 0;
		return reject(pc, "invalid sign-extension width %d for mov%s (reserved field off)",
			      insn->off, is64 ? "sx64" : "sx32");
	}
	if (insn->off != 0)
		return reserved(pc, "off", insn->off, alu_op_name(op));
	return 0;
}

static int check_alu(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	bool is64 = insn_class(insn) == BPF_ALU64;
	bool x = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	int err;

	if (op > BPF_END)
		return unknown_opcode(pc, insn);
	if ((err = check_reg(pc, insn->dst_reg, "dst_reg")))
		return err;

	if (op == BPF_END) {
		/* ALU64 has only the unconditional bswap (source bit clear) */
		if (is64 && x)
			return unknown_opcode(pc, insn);
		if (insn->src_reg)
			return reserved(pc, "src_reg", insn->src_reg, "byte swap");
		if (insn->off)
			return reserved(pc, "off", insn->off, "byte swap");
		if (insn->imm != 16 && insn->imm != 32 && insn->imm != 64)
			return reject(pc, "invalid byte swap width %d (must be 16, 32 or 64)",
				      insn->imm);
		return check_writable(pc, insn->dst_reg);
	}
	if (op == BPF_NEG) {
		if (x)
			return unknown_opcode(pc, insn);
		if (insn->src_reg)
			return reserved(pc, "src_reg", insn->src_reg, "neg");
		if (insn->off)
			return reserved(pc, "off", insn->off, "neg");
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, "neg");
		return check_writable(pc, insn->dst_reg);
	}

	if (x) {
		if ((err = check_reg(pc, insn->src_reg, "src_reg")))
			return err;
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, alu_op_name(op));
		if (insn->src_reg == BPF_R10)
			v->flags[pc] |= F_FP_ESCAPES;
	} else if (insn->src_reg) {
		return reserved(pc, "src_reg", insn->src_reg, alu_op_name(op));
	}
	if ((err = check_alu_off(pc, insn, is64, x)))
		return err;
	return check_writable(pc, insn->dst_reg);
}

/* A call of an id the program's environment has nothing under: named as
 * Linux names it (its message first, then which helper is missing), so a
 * kernel BPF user sees what the program wanted. */
static int check_helper_call(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	const char *name = bpfrt_linux_helper_name(insn->imm);
	const struct bpfrt_helper *h;

	/* a poisoned CO-RE relocation: the verifier refuses it where a path
	 * reaches it (libbpf's rule: dead code may keep it) */
	if (insn->imm == BPFRT_CORE_POISON && bpfrt_prog_core_poison(v->prog, pc))
		return 0;
	if ((h = bpfrt_prog_helper(v->prog, (uint32_t)insn->imm))) {
		const char *which = name ? bpfrt_helper_kind_reason(insn->imm, h->fn,
								   v->prog->kind) : NULL;

		if (which)
			return reject(pc, "program of this type cannot use helper %s#%d: only %s "
				      "may", name, insn->imm, which);
		return 0;
	}
	if (insn->imm >= BPFRT_KFUNC_ID_BASE && insn->imm < BPFRT_MAX_HELPER_ID)
		return reject(pc, "call to kfunc id %d: no kfunc is registered under it",
			      insn->imm);
	if (name && bpfrt_helper_unavailable_reason(insn->imm))
		return reject(pc, "program of this type cannot use helper %s#%d: %s (%d) is not "
			      "available: %s", name, insn->imm, name, insn->imm,
			      bpfrt_helper_unavailable_reason(insn->imm));
	if (name)
		return reject(pc, "program of this type cannot use helper %s#%d: %s (%d) is not "
			      "available", name, insn->imm, name, insn->imm);
	return reject(pc, "invalid func unknown#%d: no helper has id %d", insn->imm, insn->imm);
}

static int check_call(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	int err;

	if (insn_src(insn) == BPF_X) {
		/* callx: helper id in the register named by dst_reg */
		if ((err = check_reg(pc, insn->dst_reg, "dst_reg")))
			return err;
		if (insn->src_reg)
			return reserved(pc, "src_reg", insn->src_reg, "callx");
		if (insn->off)
			return reserved(pc, "off", insn->off, "callx");
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, "callx");
		if (insn->dst_reg == BPF_R10)
			v->flags[pc] |= F_FP_ESCAPES;
		return 0;
	}
	if (insn->dst_reg)
		return reserved(pc, "dst_reg", insn->dst_reg, "call");
	if (insn->off)
		return reserved(pc, "off", insn->off, "call");
	switch (insn->src_reg) {
	case 0:
		return check_helper_call(v, pc, insn);
	case BPF_PSEUDO_CALL:
		v->flags[pc] |= F_CALL_EDGE;
		v->edge_cnt++;
		return 0;
	case BPF_PSEUDO_KFUNC_CALL:
		return reject(pc, "kfunc calls need the loader");
	default:
		return reject(pc, "invalid call kind src_reg=%u", insn->src_reg);
	}
}

static int check_jmp(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	bool is32 = insn_class(insn) == BPF_JMP32;
	bool x = insn_src(insn) == BPF_X;
	uint8_t op = insn_op(insn);
	int err;

	switch (op) {
	case BPF_CALL:
		if (is32)
			return unknown_opcode(pc, insn);
		return check_call(v, pc, insn);
	case BPF_EXIT:
		if (is32 || x)
			return unknown_opcode(pc, insn);
		if (insn->dst_reg)
			return reserved(pc, "dst_reg", insn->dst_reg, "exit");
		if (insn->src_reg)
			return reserved(pc, "src_reg", insn->src_reg, "exit");
		if (insn->off)
			return reserved(pc, "off", insn->off, "exit");
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, "exit");
		return 0;
	case BPF_JA:
		if (x)
			return unknown_opcode(pc, insn);
		if (insn->dst_reg)
			return reserved(pc, "dst_reg", insn->dst_reg, is32 ? "gotol" : "ja");
		if (insn->src_reg)
			return reserved(pc, "src_reg", insn->src_reg, is32 ? "gotol" : "ja");
		if (is32 && insn->off)
			return reserved(pc, "off", insn->off, "gotol");
		if (!is32 && insn->imm)
			return reserved(pc, "imm", insn->imm, "ja");
		return 0;
	case BPF_JEQ: case BPF_JGT: case BPF_JGE: case BPF_JSET:
	case BPF_JNE: case BPF_JSGT: case BPF_JSGE: case BPF_JLT:
	case BPF_JLE: case BPF_JSLT: case BPF_JSLE:
		break;
	case BPF_JCOND: /* may_goto (Linux's extension; not in RFC 9669) */
		if (is32 || x)
			return unknown_opcode(pc, insn);
		if (insn->src_reg != BPF_MAY_GOTO)
			return reject(pc, "unknown opcode 0x%02x with src_reg %u (may_goto is "
				      "src_reg 0, no other conditional pseudo-jump exists)",
				      insn->code, insn->src_reg);
		if (insn->dst_reg)
			return reserved(pc, "dst_reg", insn->dst_reg, "may_goto");
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, "may_goto");
		return 0;
	default: /* 0xf0 is no jump */
		return unknown_opcode(pc, insn);
	}

	if ((err = check_reg(pc, insn->dst_reg, "dst_reg")))
		return err;
	if (x) {
		if ((err = check_reg(pc, insn->src_reg, "src_reg")))
			return err;
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, "register-form jump");
	} else if (insn->src_reg) {
		return reserved(pc, "src_reg", insn->src_reg, "immediate-form jump");
	}
	/* Comparing the frame pointer does not leak it, but stay conservative. */
	if (insn->dst_reg == BPF_R10 || (x && insn->src_reg == BPF_R10))
		v->flags[pc] |= F_FP_ESCAPES;
	return 0;
}

static int check_lddw(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	const struct bpf_insn *hi = insn + 1;
	int err;

	if (pc + 1 >= v->n)
		return reject(pc, "lddw is missing its second slot (end of program)");
	if ((err = check_reg(pc, insn->dst_reg, "dst_reg")))
		return err;
	if (insn->off)
		return reserved(pc, "off", insn->off, "lddw");
	switch (insn->src_reg) {
	case 0:
		break;
	case BPF_PSEUDO_FUNC:
		if (hi->imm)
			return reject(pc + 1, "reserved field imm of the second lddw slot must be 0 "
				      "for a subprogram address (is %d)", hi->imm);
		v->flags[pc] |= F_CALL_EDGE;
		v->edge_cnt++;
		break;
	case BPF_PSEUDO_MAP_FD: case BPF_PSEUDO_MAP_VALUE:
	case BPF_PSEUDO_MAP_IDX: case BPF_PSEUDO_MAP_IDX_VALUE:
		return reject(pc, "map relocations need the loader (lddw src_reg=%u)",
			      insn->src_reg);
	case BPF_PSEUDO_BTF_ID:
		return reject(pc, "BTF id loads need the loader (lddw src_reg=%u)",
			      insn->src_reg);
	default:
		return reject(pc, "invalid lddw kind src_reg=%u", insn->src_reg);
	}
	if (hi->code)
		return reject(pc + 1, "second slot of lddw must have opcode 0 (is 0x%02x)",
			      hi->code);
	if (hi->dst_reg)
		return reserved(pc + 1, "dst_reg", hi->dst_reg, "the second lddw slot");
	if (hi->src_reg)
		return reserved(pc + 1, "src_reg", hi->src_reg, "the second lddw slot");
	if (hi->off)
		return reserved(pc + 1, "off", hi->off, "the second lddw slot");
	if ((err = check_writable(pc, insn->dst_reg)))
		return err;
	v->flags[pc + 1] |= F_LDDW_TAIL;
	return 0;
}

static int check_ld(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	if (insn_is_lddw(insn))
		return check_lddw(v, pc, insn);
	if (insn_mode(insn) == BPF_ABS || insn_mode(insn) == BPF_IND) {
		/* legacy packet loads: r0 = packet bytes (ld_abs.c has their
		 * semantics); Linux's encoding rules */
		if (insn->dst_reg != BPF_R0 || insn->off || insn_size(insn) == BPF_DW ||
		    (insn_mode(insn) == BPF_ABS && insn->src_reg))
			return reject(pc, "BPF_LD_[ABS|IND] uses reserved fields (opcode 0x%02x: "
				      "dst_reg must be r0, off 0, the size b, h or w%s)", insn->code,
				      insn_mode(insn) == BPF_ABS ? ", src_reg 0" : "");
		if (insn_mode(insn) == BPF_IND && insn->src_reg == BPF_R10)
			v->flags[pc] |= F_FP_ESCAPES;
		return insn_mode(insn) == BPF_IND ? check_reg(pc, insn->src_reg, "src_reg") : 0;
	}
	return unknown_opcode(pc, insn);
}

static int check_ldx(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	uint8_t mode = insn_mode(insn);
	int err;

	if (mode != BPF_MEM && !(mode == BPF_MEMSX && insn_size(insn) != BPF_DW))
		return unknown_opcode(pc, insn);
	if ((err = check_reg(pc, insn->dst_reg, "dst_reg")) ||
	    (err = check_reg(pc, insn->src_reg, "src_reg")))
		return err;
	if (insn->imm)
		return reserved(pc, "imm", insn->imm, "ldx");
	if ((err = check_writable(pc, insn->dst_reg)))
		return err;
	if (insn->src_reg == BPF_R10)
		return check_stack_access(pc, insn->off, bpf_size_bytes(insn_size(insn)));
	return 0;
}

static int check_st(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	int err;

	if (insn_mode(insn) != BPF_MEM)
		return unknown_opcode(pc, insn);
	if ((err = check_reg(pc, insn->dst_reg, "dst_reg")))
		return err;
	if (insn->src_reg)
		return reserved(pc, "src_reg", insn->src_reg, "st");
	if (insn->dst_reg == BPF_R10)
		return check_stack_access(pc, insn->off, bpf_size_bytes(insn_size(insn)));
	return 0;
}

static bool atomic_op_valid(int32_t imm)
{
	switch (imm) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
	case BPF_ADD | BPF_FETCH: case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH: case BPF_XOR | BPF_FETCH:
	case BPF_XCHG: case BPF_CMPXCHG:
		return true;
	default:
		return false;
	}
}

static int check_stx(struct vctx *v, uint32_t pc, const struct bpf_insn *insn)
{
	uint8_t mode = insn_mode(insn);
	int err;

	if (mode != BPF_MEM && mode != BPF_ATOMIC)
		return unknown_opcode(pc, insn);
	if ((err = check_reg(pc, insn->dst_reg, "dst_reg")) ||
	    (err = check_reg(pc, insn->src_reg, "src_reg")))
		return err;
	if (mode == BPF_MEM) {
		if (insn->imm)
			return reserved(pc, "imm", insn->imm, "stx");
	} else {
		if (insn_size(insn) != BPF_W && insn_size(insn) != BPF_DW)
			return reject(pc, "atomic operations need size W or DW (opcode 0x%02x)",
				      insn->code);
		if (!atomic_op_valid(insn->imm))
			return reject(pc, "unknown atomic operation imm=0x%x", (uint32_t)insn->imm);
		/* fetch forms and xchg load the old value into src; cmpxchg
		 * writes r0 instead */
		if ((insn->imm & BPF_FETCH) && insn->imm != BPF_CMPXCHG &&
		    (err = check_writable(pc, insn->src_reg)))
			return err;
	}
	if (insn->src_reg == BPF_R10)
		v->flags[pc] |= F_FP_ESCAPES;
	if (insn->dst_reg == BPF_R10)
		return check_stack_access(pc, insn->off, bpf_size_bytes(insn_size(insn)));
	return 0;
}

static int check_insn(struct vctx *v, uint32_t pc)
{
	const struct bpf_insn *insn = &v->insns[pc];

	switch (insn_class(insn)) {
	case BPF_ALU:
	case BPF_ALU64:
		return check_alu(v, pc, insn);
	case BPF_JMP:
	case BPF_JMP32:
		return check_jmp(v, pc, insn);
	case BPF_LD:
		return check_ld(v, pc, insn);
	case BPF_LDX:
		return check_ldx(v, pc, insn);
	case BPF_ST:
		return check_st(v, pc, insn);
	default: /* BPF_STX */
		return check_stx(v, pc, insn);
	}
}

static int check_encodings(struct vctx *v)
{
	for (uint32_t pc = 0; pc < v->n; pc++) {
		int err;

		if (v->flags[pc] & F_LDDW_TAIL)
			continue;
		err = check_insn(v, pc);
		if (err)
			return err;
	}
	return 0;
}

/* ---- pass 2: subprogram starts ----------------------------------------- */

static int64_t edge_target(const struct bpf_insn *insn, uint32_t pc)
{
	return (int64_t)pc + 1 + insn->imm;
}

static int mark_subprog_starts(struct vctx *v, uint32_t *cnt)
{
	uint32_t starts = 1;

	v->flags[0] |= F_SUBPROG_START;
	for (uint32_t pc = 0; pc < v->n; pc++) {
		const char *what;
		int64_t t;

		if (!(v->flags[pc] & F_CALL_EDGE))
			continue;
		what = insn_is_lddw(&v->insns[pc]) ? "subprogram address" : "local call";
		t = edge_target(&v->insns[pc], pc);
		if (t < 0 || t >= v->n)
			return reject(pc, "%s target %lld out of range (program has %u instructions)",
				      what, (long long)t, v->n);
		if (v->flags[t] & F_LDDW_TAIL)
			return reject(pc, "%s target %lld is the second half of lddw",
				      what, (long long)t);
		if (!(v->flags[t] & F_SUBPROG_START)) {
			v->flags[t] |= F_SUBPROG_START;
			starts++;
		}
	}
	*cnt = starts;
	return 0;
}

static int build_subprogs(struct vctx *v, uint32_t cnt)
{
	struct bpfrt_prog *prog = v->prog;
	uint32_t s = 0;

	prog->subprogs = calloc(cnt, sizeof(*prog->subprogs));
	prog->insn_subprog = malloc((size_t)v->n * sizeof(*prog->insn_subprog));
	if (!prog->subprogs || !prog->insn_subprog)
		return bpfrt_err(-ENOMEM, "validate: out of memory for %u subprograms", cnt);
	prog->subprog_cnt = cnt;
	for (uint32_t pc = 0; pc < v->n; pc++) {
		if (pc && (v->flags[pc] & F_SUBPROG_START)) {
			prog->subprogs[s].end = pc;
			prog->subprogs[++s].start = pc;
		}
		prog->insn_subprog[pc] = s;
	}
	prog->subprogs[s].end = v->n;
	return 0;
}

/* ---- pass 3: per-subprogram control flow and frame size ------------------ */

static int check_branch(struct vctx *v, uint32_t pc, const struct bpfrt_subprog *sp)
{
	int64_t t = insn_branch_target(&v->insns[pc], pc);

	if (t < 0 || t >= v->n)
		return reject(pc, "jump out of range to %lld (program has %u instructions)",
			      (long long)t, v->n);
	if (v->flags[t] & F_LDDW_TAIL)
		return reject(pc, "jump to %lld lands in the second half of lddw", (long long)t);
	if (t < sp->start || t >= sp->end)
		return reject(pc, "jump to %lld leaves its subprogram [%u, %u)",
			      (long long)t, sp->start, sp->end);
	return 0;
}

static bool insn_ends_flow(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_EXIT) || insn->code == (BPF_JMP | BPF_JA) ||
	       insn->code == (BPF_JMP32 | BPF_JA);
}

static int check_last_insn(struct vctx *v, uint32_t s)
{
	const struct bpfrt_subprog *sp = &v->prog->subprogs[s];
	uint32_t last = sp->end - 1;

	if (v->flags[last] & F_LDDW_TAIL)
		last--;
	if (insn_ends_flow(&v->insns[last]))
		return 0;
	if (s + 1 == v->prog->subprog_cnt)
		return reject(last, "falls through past the end of the program "
			      "(last instruction must be exit or ja)");
	return reject(last, "falls through past the end of the subprogram at insn %u "
		      "into the next one (last instruction must be exit or ja)", sp->start);
}

/* Bytes below r10 touched by a load/store based on r10, else 0. */
static uint32_t insn_stack_use(const struct bpf_insn *insn)
{
	int base = bpfrt_insn_mem_base(insn);

	if (base != BPF_R10)
		return 0;
	return (uint32_t)-(int32_t)insn->off;
}

static int check_subprog(struct vctx *v, uint32_t s)
{
	struct bpfrt_subprog *sp = &v->prog->subprogs[s];
	uint32_t depth = 0;
	int err;

	for (uint32_t pc = sp->start; pc < sp->end; pc++) {
		const struct bpf_insn *insn = &v->insns[pc];
		uint32_t use;

		if (v->flags[pc] & F_LDDW_TAIL)
			continue;
		if (v->flags[pc] & F_FP_ESCAPES)
			depth = BPFRT_STACK_PER_FRAME;
		use = insn_stack_use(insn);
		if (use > depth)
			depth = use;
		if (insn_is_branch(insn) && (err = check_branch(v, pc, sp)))
			return err;
	}
	sp->stack_depth = (depth + STACK_ALIGN - 1) & ~(uint32_t)(STACK_ALIGN - 1);
	return check_last_insn(v, s);
}

/* ---- pass 4: reachability ------------------------------------------------ */

int bpfrt_insn_callee(const struct bpfrt_prog *prog, uint32_t pc)
{
	const struct bpf_insn *insn = &prog->insns[pc];
	int64_t t;

	if (!insn_is_local_call(insn) &&
	    !(insn_is_lddw(insn) && insn->src_reg == BPF_PSEUDO_FUNC))
		return -1;
	t = edge_target(insn, pc);
	if (t < 0 || t >= prog->insn_cnt)
		return -1;
	return (int)prog->insn_subprog[t];
}

static int check_reachable(struct vctx *v)
{
	struct bpfrt_prog *prog = v->prog;
	uint8_t *queued = calloc(prog->subprog_cnt, 1);
	uint32_t *work = malloc((size_t)v->n * sizeof(*work));
	uint32_t top = 0;
	int err = 0;

	if (!queued || !work) {
		err = bpfrt_err(-ENOMEM, "validate: out of memory");
		goto out;
	}
	queued[0] = 1;
	v->flags[0] |= F_REACHED;
	work[top++] = 0;
	while (top) {
		uint32_t pc = work[--top], succ[2];
		unsigned k = bpfrt_insn_successors(v->insns, pc, succ);

		for (unsigned i = 0; i < k; i++) {
			if (!(v->flags[succ[i]] & F_REACHED)) {
				v->flags[succ[i]] |= F_REACHED;
				work[top++] = succ[i];
			}
		}
		if (v->flags[pc] & F_CALL_EDGE) {
			uint32_t callee = (uint32_t)bpfrt_insn_callee(prog, pc);
			uint32_t start = prog->subprogs[callee].start;

			if (!queued[callee]) {
				queued[callee] = 1;
				if (!(v->flags[start] & F_REACHED)) {
					v->flags[start] |= F_REACHED;
					work[top++] = start;
				}
			}
		}
	}
	for (uint32_t pc = 0; pc < v->n; pc++) {
		if (v->flags[pc] & (F_REACHED | F_LDDW_TAIL))
			continue;
		if (v->flags[pc] & F_SUBPROG_START)
			err = reject(pc, "unreachable subprogram (no reachable instruction calls it)");
		else
			err = reject(pc, "unreachable instruction");
		break;
	}
out:
	free(queued);
	free(work);
	return err;
}

/* ---- pass 5: call graph ------------------------------------------------ */

struct call_graph {
	uint32_t *edge_insn;  /* call sites in instruction order */
	uint32_t *edge_first; /* subprog s owns edges [edge_first[s], edge_first[s+1]) */
	uint32_t *next_edge;  /* DFS cursor per subprogram */
	uint32_t *stack;      /* DFS stack of subprograms */
	uint8_t *color;       /* 0 unvisited, 1 on the DFS stack, 2 done */
};

static void call_graph_free(struct call_graph *g)
{
	free(g->edge_insn);
	free(g->edge_first);
	free(g->next_edge);
	free(g->stack);
	free(g->color);
}

static int call_graph_build(struct vctx *v, struct call_graph *g)
{
	uint32_t cnt = v->prog->subprog_cnt, e = 0;

	g->edge_insn = malloc(((size_t)v->edge_cnt + 1) * sizeof(uint32_t));
	g->edge_first = malloc(((size_t)cnt + 1) * sizeof(uint32_t));
	g->next_edge = malloc((size_t)cnt * sizeof(uint32_t));
	g->stack = malloc((size_t)cnt * sizeof(uint32_t));
	g->color = calloc(cnt, 1);
	if (!g->edge_insn || !g->edge_first || !g->next_edge || !g->stack || !g->color)
		return bpfrt_err(-ENOMEM, "validate: out of memory");
	for (uint32_t s = 0; s < cnt; s++) {
		const struct bpfrt_subprog *sp = &v->prog->subprogs[s];

		g->edge_first[s] = g->next_edge[s] = e;
		for (uint32_t pc = sp->start; pc < sp->end; pc++)
			if (v->flags[pc] & F_CALL_EDGE)
				g->edge_insn[e++] = pc;
	}
	g->edge_first[cnt] = e;
	return 0;
}

static void finish_subprog(struct vctx *v, struct call_graph *g, uint32_t s)
{
	struct bpfrt_subprog *sp = &v->prog->subprogs[s];
	uint32_t chain = 0, calls = 0;

	for (uint32_t e = g->edge_first[s]; e < g->edge_first[s + 1]; e++) {
		const struct bpfrt_subprog *callee =
			&v->prog->subprogs[bpfrt_insn_callee(v->prog, g->edge_insn[e])];

		if (callee->chain_depth > chain)
			chain = callee->chain_depth;
		if (callee->call_depth > calls)
			calls = callee->call_depth;
	}
	sp->chain_depth = sp->stack_depth + chain;
	sp->call_depth = 1 + calls;
}

/* Iterative DFS from the main program (every subprogram is reachable from
 * it after pass 4); a back edge is recursion. */
static int walk_call_graph(struct vctx *v, struct call_graph *g)
{
	uint32_t top = 0;

	g->stack[top++] = 0;
	g->color[0] = 1;
	while (top) {
		uint32_t s = g->stack[top - 1];

		if (g->next_edge[s] < g->edge_first[s + 1]) {
			uint32_t pc = g->edge_insn[g->next_edge[s]++];
			uint32_t c = (uint32_t)bpfrt_insn_callee(v->prog, pc);

			if (g->color[c] == 1)
				return reject(pc, "recursive call: subprogram at insn %u is "
					      "already on the call chain",
					      v->prog->subprogs[c].start);
			if (g->color[c] == 0) {
				g->color[c] = 1;
				g->stack[top++] = c;
			}
			continue;
		}
		finish_subprog(v, g, s);
		g->color[s] = 2;
		top--;
	}
	return 0;
}

/* Follows the deepest chain from main to the call that needs frame 9. */
static int report_call_depth(struct vctx *v, struct call_graph *g)
{
	const struct bpfrt_subprog *subprogs = v->prog->subprogs;
	uint32_t s = 0, frame = 1;

	for (;;) {
		uint32_t e, pc = 0, c = 0;

		for (e = g->edge_first[s]; e < g->edge_first[s + 1]; e++) {
			pc = g->edge_insn[e];
			c = (uint32_t)bpfrt_insn_callee(v->prog, pc);
			if (subprogs[c].call_depth + 1 == subprogs[s].call_depth)
				break;
		}
		if (e == g->edge_first[s + 1]) /* cannot happen: depths are consistent */
			return reject(subprogs[s].start, "call depth exceeds %u frames",
				      BPFRT_MAX_CALL_FRAMES);
		if (frame == BPFRT_MAX_CALL_FRAMES)
			return reject(pc, "call depth exceeds %u frames (deepest chain "
				      "from main needs %u)", BPFRT_MAX_CALL_FRAMES,
				      subprogs[0].call_depth);
		s = c;
		frame++;
	}
}

static int check_call_graph(struct vctx *v)
{
	struct call_graph g = { 0 };
	int err;

	err = call_graph_build(v, &g);
	if (!err)
		err = walk_call_graph(v, &g);
	if (!err && v->prog->subprogs[0].call_depth > BPFRT_MAX_CALL_FRAMES)
		err = report_call_depth(v, &g);
	call_graph_free(&g);
	return err;
}

/* ---- pass 6: registers read before any write ---------------------------- */

#define REG(r) ((uint16_t)(1u << (r)))
#define CALLER_SAVED (REG(1) | REG(2) | REG(3) | REG(4) | REG(5))
#define MAIN_ENTRY_REGS (REG(1) | REG(2) | REG(BPF_R10))
#define SUBPROG_ENTRY_REGS (CALLER_SAVED | REG(BPF_R10))

/* May-analysis: a register is possibly set at pc if some CFG path from the
 * subprogram entry writes it. Reading one that no path writes is always an
 * uninitialized read, even on a path execution cannot take: for programs
 * that run unverified (trusted) this is the only check. A program the
 * verifier walks skips it: the walk refuses every read on a path it takes
 * (walk.c's check_reads) and none on a dead one, as Linux. Masks only grow
 * (11 bits), so each instruction is revisited at most 11 times. */
static int check_uninit_regs(struct vctx *v)
{
	struct bpfrt_prog *prog = v->prog;
	uint16_t *in = calloc(v->n, sizeof(*in));
	uint32_t *work = malloc((size_t)v->n * sizeof(*work));
	uint32_t top = 0;
	int err = 0;

	if (!in || !work) {
		err = bpfrt_err(-ENOMEM, "validate: out of memory");
		goto out;
	}
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		uint32_t start = prog->subprogs[s].start;

		in[start] = s ? SUBPROG_ENTRY_REGS : MAIN_ENTRY_REGS;
		work[top++] = start;
		v->flags[start] |= F_QUEUED;
	}
	while (top) {
		uint32_t pc = work[--top], succ[2];
		struct bpfrt_reg_use u;
		uint16_t out;
		unsigned k;

		v->flags[pc] &= (uint8_t)~F_QUEUED;
		bpfrt_insn_reg_use(prog, &v->insns[pc], &u);
		out = (uint16_t)((in[pc] & ~u.kill) | u.def);
		/* past a poisoned CO-RE relocation nothing runs (the verifier
		 * refuses a path that reaches it): no register is missing there */
		if (v->insns[pc].code == (BPF_JMP | BPF_CALL) && v->insns[pc].imm == BPFRT_CORE_POISON &&
		    bpfrt_prog_core_poison(prog, pc))
			out = 0xffff;
		k = bpfrt_insn_successors(v->insns, pc, succ);
		for (unsigned i = 0; i < k; i++) {
			uint32_t t = succ[i];

			if ((in[t] | out) == in[t])
				continue;
			in[t] |= out;
			if (!(v->flags[t] & F_QUEUED)) {
				v->flags[t] |= F_QUEUED;
				work[top++] = t;
			}
		}
	}
	for (uint32_t pc = 0; pc < v->n; pc++) {
		struct bpfrt_reg_use u;
		uint16_t missing;

		if (v->flags[pc] & F_LDDW_TAIL)
			continue;
		bpfrt_insn_reg_use(prog, &v->insns[pc], &u);
		missing = u.use & ~in[pc];
		if (missing) {
			err = reject(pc, "r%d is read but no path writes it first "
				     "(uninitialized register)", __builtin_ctz(missing));
			break;
		}
	}
out:
	free(in);
	free(work);
	return err;
}

/* ---- entry --------------------------------------------------------------- */

static int validate(struct vctx *v, bool uninit_regs)
{
	uint32_t cnt = 0;
	int err;

	if ((err = check_encodings(v)) || (err = mark_subprog_starts(v, &cnt)) ||
	    (err = build_subprogs(v, cnt)))
		return err;
	for (uint32_t s = 0; s < cnt; s++)
		if ((err = check_subprog(v, s)))
			return err;
	if ((err = check_reachable(v)) || (err = check_call_graph(v)) ||
	    (uninit_regs && (err = check_uninit_regs(v))))
		return err;
	v->prog->stack_depth = v->prog->subprogs[0].chain_depth;
	return 0;
}

static int validate_prog(struct bpfrt_prog *prog, bool uninit_regs)
{
	struct vctx v = { .prog = prog, .insns = prog->insns, .n = prog->insn_cnt };
	int err;

	prog->subprogs = NULL;
	prog->insn_subprog = NULL;
	prog->subprog_cnt = 0;
	prog->stack_depth = 0;
	if (!prog->insns || prog->insn_cnt == 0)
		return bpfrt_err(-EINVAL, "insn 0: empty program");
	if (prog->insn_cnt > BPFRT_MAX_INSNS)
		return bpfrt_err(-E2BIG, "insn %u: program too long (limit is %u instructions)",
				 BPFRT_MAX_INSNS, BPFRT_MAX_INSNS);
	v.flags = calloc(v.n, 1);
	if (!v.flags)
		return bpfrt_err(-ENOMEM, "validate: out of memory");
	err = validate(&v, uninit_regs);
	free(v.flags);
	if (err) {
		free(prog->subprogs);
		free(prog->insn_subprog);
		prog->subprogs = NULL;
		prog->insn_subprog = NULL;
		prog->subprog_cnt = 0;
	}
	return err;
}

int bpfrt_validate(struct bpfrt_prog *prog)
{
	return validate_prog(prog, true);
}

int bpfrt_validate_for_verifier(struct bpfrt_prog *prog)
{
	return validate_prog(prog, false);
}
