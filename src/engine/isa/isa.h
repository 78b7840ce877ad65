/* Instruction set definitions shared by every part of bpfrt: the UAPI
 * constants from <linux/bpf.h> plus the cpu v4 ones older headers lack,
 * and small accessors so no module decodes fields by hand. */
#ifndef BPFRT_ISA_H
#define BPFRT_ISA_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* sign-extending load (cpu v4) */
#endif
/* Fault-safe loads (Linux's internal BPF_PROBE_MEM / BPF_PROBE_MEMSX, the
 * LDX modes UAPI leaves unused): the verifier rewrites a load through a
 * PTR_TO_BTF_ID (host memory a typed argument points into, maybe NULL or
 * stale) to one of these; every engine then reads 0 where the address
 * faults. Never accepted from a program (the validator refuses them). */
#define BPFRT_PROBE_MEM   0x20
#define BPFRT_PROBE_MEMSX 0x40
#ifndef BPF_JCOND
#define BPF_JCOND 0xe0
#endif
/* BPF_JMP | BPF_JCOND with src_reg BPF_MAY_GOTO: "may_goto +off", a
 * bounded loop escape. Each execution takes the branch when the run's
 * budget (BPFRT_MAY_GOTO_BUDGET fall-throughs, core/run.h) is used up and
 * otherwise spends one of it and falls through. */
#ifndef BPF_MAY_GOTO
#define BPF_MAY_GOTO 0
#endif
#ifndef BPF_PSEUDO_FUNC
#define BPF_PSEUDO_FUNC 4
#endif

/* Register numbers. */
enum { BPF_R0, BPF_R1, BPF_R2, BPF_R3, BPF_R4, BPF_R5,
       BPF_R6, BPF_R7, BPF_R8, BPF_R9, BPF_R10 };
#define BPF_NREGS 11

static inline uint8_t insn_class(const struct bpf_insn *i) { return BPF_CLASS(i->code); }
static inline uint8_t insn_op(const struct bpf_insn *i) { return BPF_OP(i->code); }
static inline uint8_t insn_src(const struct bpf_insn *i) { return BPF_SRC(i->code); }
static inline uint8_t insn_mode(const struct bpf_insn *i) { return BPF_MODE(i->code); }
static inline uint8_t insn_size(const struct bpf_insn *i) { return BPF_SIZE(i->code); }

static inline bool insn_is_probe_load(const struct bpf_insn *i)
{
	return BPF_CLASS(i->code) == BPF_LDX &&
	       (BPF_MODE(i->code) == BPFRT_PROBE_MEM || BPF_MODE(i->code) == BPFRT_PROBE_MEMSX);
}

/* A sign-extending load, plain or fault-safe. */
static inline bool insn_is_ldx_sext(const struct bpf_insn *i)
{
	return BPF_CLASS(i->code) == BPF_LDX &&
	       (BPF_MODE(i->code) == BPF_MEMSX || BPF_MODE(i->code) == BPFRT_PROBE_MEMSX);
}

/* Bytes accessed by a load/store of the given BPF_SIZE. */
static inline unsigned bpf_size_bytes(uint8_t size)
{
	switch (size) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default:    return 8;
	}
}

static inline bool insn_is_lddw(const struct bpf_insn *i)
{
	return i->code == (BPF_LD | BPF_DW | BPF_IMM);
}
static inline bool insn_is_exit(const struct bpf_insn *i)
{
	return i->code == (BPF_JMP | BPF_EXIT);
}
static inline bool insn_is_call(const struct bpf_insn *i)
{
	return i->code == (BPF_JMP | BPF_CALL);
}
/* BPF-to-BPF call: imm is the pc-relative target. */
static inline bool insn_is_local_call(const struct bpf_insn *i)
{
	return insn_is_call(i) && i->src_reg == BPF_PSEUDO_CALL;
}
static inline bool insn_is_helper_call(const struct bpf_insn *i)
{
	return insn_is_call(i) && i->src_reg == 0;
}
/* callx: BPF_CALL|BPF_X, register in dst_reg as clang emits it. */
static inline bool insn_is_callx(const struct bpf_insn *i)
{
	return i->code == (BPF_JMP | BPF_CALL | BPF_X);
}
/* JMP32 class with BPF_JA: "gotol", offset in imm. */
static inline bool insn_is_gotol(const struct bpf_insn *i)
{
	return i->code == (BPF_JMP32 | BPF_JA);
}
static inline bool insn_is_may_goto(const struct bpf_insn *i)
{
	return i->code == (BPF_JMP | BPF_JCOND) && i->src_reg == BPF_MAY_GOTO;
}
static inline bool insn_is_jump_class(const struct bpf_insn *i)
{
	uint8_t c = insn_class(i);
	return c == BPF_JMP || c == BPF_JMP32;
}
/* True for conditional and unconditional jumps (not call/exit). */
static inline bool insn_is_branch(const struct bpf_insn *i)
{
	uint8_t op = insn_op(i);
	return insn_is_jump_class(i) && op != BPF_CALL && op != BPF_EXIT;
}
/* Target of a branch at index pc (gotol uses imm, all others off). */
static inline int64_t insn_branch_target(const struct bpf_insn *i, int64_t pc)
{
	return pc + 1 + (insn_is_gotol(i) ? (int64_t)i->imm : (int64_t)i->off);
}
static inline uint64_t insn_lddw_imm(const struct bpf_insn *i)
{
	return (uint64_t)(uint32_t)i[0].imm | ((uint64_t)(uint32_t)i[1].imm << 32);
}

#endif
