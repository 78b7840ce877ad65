/* Instruction-building macros for tests (the usual BPF_* builder shapes). */
#ifndef BPFRT_TEST_INSNS_H
#define BPFRT_TEST_INSNS_H

#include "isa/isa.h"

#define INSN(CODE, DST, SRC, OFF, IMM) \
	((struct bpf_insn){ .code = (CODE), .dst_reg = (DST), .src_reg = (SRC), .off = (OFF), .imm = (IMM) })

#define ALU64_IMM(OP, DST, IMM)  INSN(BPF_ALU64 | BPF_OP(OP) | BPF_K, DST, 0, 0, IMM)
#define ALU64_REG(OP, DST, SRC)  INSN(BPF_ALU64 | BPF_OP(OP) | BPF_X, DST, SRC, 0, 0)
#define ALU32_IMM(OP, DST, IMM)  INSN(BPF_ALU | BPF_OP(OP) | BPF_K, DST, 0, 0, IMM)
#define ALU32_REG(OP, DST, SRC)  INSN(BPF_ALU | BPF_OP(OP) | BPF_X, DST, SRC, 0, 0)
#define MOV64_IMM(DST, IMM)      ALU64_IMM(BPF_MOV, DST, IMM)
#define MOV64_REG(DST, SRC)      ALU64_REG(BPF_MOV, DST, SRC)
#define MOV32_IMM(DST, IMM)      ALU32_IMM(BPF_MOV, DST, IMM)
#define MOV32_REG(DST, SRC)      ALU32_REG(BPF_MOV, DST, SRC)
/* movsx: off = 8/16/32 */
#define MOVSX64_REG(DST, SRC, BITS) INSN(BPF_ALU64 | BPF_MOV | BPF_X, DST, SRC, BITS, 0)
#define MOVSX32_REG(DST, SRC, BITS) INSN(BPF_ALU | BPF_MOV | BPF_X, DST, SRC, BITS, 0)
/* signed div/mod: off = 1 */
#define SDIV64_IMM(DST, IMM)     INSN(BPF_ALU64 | BPF_DIV | BPF_K, DST, 0, 1, IMM)
#define SMOD64_IMM(DST, IMM)     INSN(BPF_ALU64 | BPF_MOD | BPF_K, DST, 0, 1, IMM)
#define LDDW(DST, IMM64) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, DST, 0, 0, (int32_t)(uint32_t)(uint64_t)(IMM64)), \
	INSN(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(IMM64) >> 32))
#define LDX(SIZE, DST, SRC, OFF) INSN(BPF_LDX | BPF_SIZE(SIZE) | BPF_MEM, DST, SRC, OFF, 0)
#define LDXSX(SIZE, DST, SRC, OFF) INSN(BPF_LDX | BPF_SIZE(SIZE) | BPF_MEMSX, DST, SRC, OFF, 0)
#define STX(SIZE, DST, SRC, OFF) INSN(BPF_STX | BPF_SIZE(SIZE) | BPF_MEM, DST, SRC, OFF, 0)
#define ST(SIZE, DST, OFF, IMM)  INSN(BPF_ST | BPF_SIZE(SIZE) | BPF_MEM, DST, 0, OFF, IMM)
#define ATOMIC(SIZE, OP, DST, SRC, OFF) INSN(BPF_STX | BPF_SIZE(SIZE) | BPF_ATOMIC, DST, SRC, OFF, OP)
#define JMP_IMM(OP, DST, IMM, OFF) INSN(BPF_JMP | BPF_OP(OP) | BPF_K, DST, 0, OFF, IMM)
#define JMP_REG(OP, DST, SRC, OFF) INSN(BPF_JMP | BPF_OP(OP) | BPF_X, DST, SRC, OFF, 0)
#define JMP32_IMM(OP, DST, IMM, OFF) INSN(BPF_JMP32 | BPF_OP(OP) | BPF_K, DST, 0, OFF, IMM)
#define JMP32_REG(OP, DST, SRC, OFF) INSN(BPF_JMP32 | BPF_OP(OP) | BPF_X, DST, SRC, OFF, 0)
#define JA(OFF)                  INSN(BPF_JMP | BPF_JA, 0, 0, OFF, 0)
#define GOTOL(IMM)               INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, IMM)
#define CALL_HELPER(ID)          INSN(BPF_JMP | BPF_CALL, 0, 0, 0, ID)
#define CALL_LOCAL(REL)          INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, REL)
#define CALLX(REG)               INSN(BPF_JMP | BPF_CALL | BPF_X, REG, 0, 0, 0)
#define EXIT()                   INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define ENDIAN(TOLE_OR_BE, DST, BITS) INSN(BPF_ALU | BPF_END | (TOLE_OR_BE), DST, 0, 0, BITS)
#define BSWAP(DST, BITS)         INSN(BPF_ALU64 | BPF_END, DST, 0, 0, BITS)

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
