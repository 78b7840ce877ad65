/* Internal interface of the text assembler and disassembler: the names both
 * sides share, so that disassembled text always assembles back to the same
 * bytes, and a listing mode without instruction indices. */
#ifndef BPFRT_ISA_DISASM_H
#define BPFRT_ISA_DISASM_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longest line bpfrt_disasm_insn() produces, with the terminating NUL. */
#define BPFRT_DISASM_LINE_MAX 64

/* ALU mnemonics by BPF_OP(code) >> 4; NULL where the op has no plain
 * "op dst, src" form (neg and the byte swaps are spelled separately). */
static const char *const bpfrt_alu_op_names[16] = {
	"add", "sub", "mul", "div", "or", "and", "lsh", "rsh",
	NULL, "mod", "xor", "mov", "arsh", NULL, NULL, NULL,
};

/* Conditional jump mnemonics by BPF_OP(code) >> 4 (ja, call and exit are
 * spelled separately). */
static const char *const bpfrt_jmp_op_names[16] = {
	NULL, "jeq", "jgt", "jge", "jset", "jne", "jsgt", "jsge",
	NULL, NULL, "jlt", "jle", "jslt", "jsle", NULL, NULL,
};

/* Load/store size suffixes by BPF_SIZE(code) >> 3. */
static const char *const bpfrt_size_suffix[4] = { "w", "h", "b", "dw" };

/* One instruction slot as the 64-bit little-endian word of the "-- raw"
 * sections and of the ".insn" directive: opcode in the low byte. */
static inline uint64_t bpfrt_insn_to_word(const struct bpf_insn *insn)
{
	return (uint64_t)insn->code |
	       (uint64_t)insn->dst_reg << 8 |
	       (uint64_t)insn->src_reg << 12 |
	       (uint64_t)(uint16_t)insn->off << 16 |
	       (uint64_t)(uint32_t)insn->imm << 32;
}

static inline struct bpf_insn bpfrt_word_to_insn(uint64_t word)
{
	struct bpf_insn insn = {
		.code = (uint8_t)word,
		.dst_reg = (word >> 8) & 0xf,
		.src_reg = (word >> 12) & 0xf,
		.off = (int16_t)(uint16_t)(word >> 16),
		.imm = (int32_t)(uint32_t)(word >> 32),
	};
	return insn;
}

/* Writes one line per instruction; with_index prefixes each line with its
 * index and annotates branch targets (a listing), without it the output is
 * plain assembly that bpfrt_asm() turns back into the same bytes. */
int bpfrt_disasm_write(const struct bpf_insn *insns, size_t insn_cnt,
		       FILE *out, bool with_index);

/* ---- the kernel's syntax, for verifier logs (disasm_kernel.c) ---------- */
/* What the kernel-syntax printer asks its caller to name; any may be NULL. */
struct bpfrt_kdisasm_names {
	/* the helper or kfunc insn calls ("bpf_map_lookup_elem"), NULL: unknown */
	const char *(*call)(void *ctx, const struct bpf_insn *insn);
	/* the value the lddw at pc loads, in words ("map[counts]"), or NULL
	 * for its number; buf (len bytes) may hold the text */
	const char *(*imm64)(void *ctx, const struct bpf_insn *insn, uint32_t pc,
			     char *buf, size_t len);
	void *ctx;
};

/* Formats the instruction at insns[0] (index pc) as the Linux verifier
 * prints it, without the "(code)" prefix: "r1 = *(u64 *)(r7 +0)". Returns
 * the slots used (1 or 2) or -EINVAL. */
int bpfrt_disasm_kernel(const struct bpf_insn *insns, size_t remaining, uint32_t pc,
			const struct bpfrt_kdisasm_names *names, char *buf, size_t buf_len);

#endif
