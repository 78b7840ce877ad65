/* x86-64 instruction decoding and relocation for kprobes (Zydis).
 *
 * A kprobe displaces the instructions it overwrites (the first one for an
 * int3 probe, those covering 5 bytes for a jmp probe) and runs them out of
 * line, somewhere else in JIT memory. What depends on where an instruction
 * runs is rewritten so the copy behaves like the original:
 *   rip-relative memory operands   disp32 recomputed for the copy's address
 *                                  (-ERANGE if the target is beyond +-2 GiB:
 *                                  the copy must be placed near the original)
 *   jmp rel8/rel32                 jmp [rip+0]; .quad target
 *   jcc, loop*, jrcxz              same condition over 2 bytes, then the
 *                                  absolute jmp: "jcc +2; jmp +14; jmp [rip]"
 *   call rel32                     push the ORIGINAL return address (lea/mov,
 *                                  flags untouched), then an absolute jmp
 *   call r/m (not using rsp)       push the original return address, then the
 *                                  same operand as jmp r/m
 * everything else is copied byte for byte. Refused (-EOPNOTSUPP, message):
 * what does not decode, int3/int1/int n/into, far branches, other
 * rip-relative forms (xbegin), prefixed loop/jrcxz and indirect calls whose
 * operand uses rsp. */
#ifndef BPFRT_ATTACH_INSN_X86_H
#define BPFRT_ATTACH_INSN_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bpfrt_x86_kind {
	BPFRT_X86_PLAIN,        /* copied (disp fixed if rip_rel) */
	BPFRT_X86_JMP,          /* jmp rel */
	BPFRT_X86_JCC,          /* jcc rel, loop*, jrcxz */
	BPFRT_X86_CALL,         /* call rel32 */
	BPFRT_X86_CALL_IND,     /* call r/m64 */
	BPFRT_X86_JMP_IND,      /* jmp r/m64 */
	BPFRT_X86_RET,          /* ret, ret imm16 */
};

struct bpfrt_x86_insn {
	uint8_t len;
	uint8_t kind;           /* enum bpfrt_x86_kind */
	bool rip_rel;           /* has a rip-relative memory operand */
	uint8_t disp_off;       /* rip_rel: offset of its disp32 */
	uint8_t modrm_off;      /* CALL_IND: offset of the ModRM byte */
	uint8_t cond_op;        /* JCC: short-form opcode (70..7f, e0..e3) */
	uintptr_t target;       /* branch target or rip-relative address */
	const char *bad;        /* why it cannot run out of line (NULL: it can) */
};

/* Longest code bpfrt_x86_relocate writes for one instruction. */
#define BPFRT_X86_RELOC_MAX 48

/* Decodes the instruction at code (which lives at address addr; avail
 * bytes readable). Returns 0 (insn->bad says why if it cannot run out of
 * line), or -EINVAL with a message if nothing valid decodes there. */
int bpfrt_x86_decode(const uint8_t *code, size_t avail, uintptr_t addr,
		     struct bpfrt_x86_insn *insn);
/* Writes to out the code that does what insn (bytes code, originally at
 * from) does, for execution at address at. Returns the byte count, or
 * -ERANGE (rip-relative target out of reach from at). */
int bpfrt_x86_relocate(const struct bpfrt_x86_insn *insn, const uint8_t *code,
		       uintptr_t from, uintptr_t at, uint8_t *out);
/* True if execution never continues at the next instruction. */
static inline bool bpfrt_x86_ends_flow(const struct bpfrt_x86_insn *insn)
{
	return insn->kind == BPFRT_X86_JMP || insn->kind == BPFRT_X86_JMP_IND ||
	       insn->kind == BPFRT_X86_RET;
}

#endif
