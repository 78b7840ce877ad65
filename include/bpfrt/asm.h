/* Text assembly: the bpf_conformance syntax, both ways.
 *
 * Ownership: bpfrt_asm returns an array the caller frees with free();
 * the disassemblers write into the caller's buffer or FILE.
 *
 * Thread safety: no shared state; every call may run on any thread
 * (messages go to the calling thread's bpfrt_last_error()). */
#ifndef BPFRT_PUBLIC_ASM_H
#define BPFRT_PUBLIC_ASM_H

#include "bpfrt/export.h"

#include <linux/bpf.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Assembles the bpf_conformance syntax ("mov %r0, 1", labels, "call local
 * f", "lock xchg [%r10-8], %r1"...). Returns 0 with a malloc'd array in
 * *insns (caller frees), or -EINVAL with a message naming the line. */
BPFRT_API int bpfrt_asm(const char *text, struct bpf_insn **insns, size_t *insn_cnt);
/* Disassembles one instruction (two for lddw) into buf. Returns the number
 * of instruction slots consumed (1 or 2), or -EINVAL. Jumps and local calls
 * are printed with numeric offsets ("ja +3", "call local +4" as "call -1"
 * is never ambiguous). */
BPFRT_API int bpfrt_disasm_insn(const struct bpf_insn *insns, size_t remaining,
				char *buf, size_t buf_len);
/* Disassembles a whole program, one instruction per line. */
BPFRT_API int bpfrt_disasm(const struct bpf_insn *insns, size_t insn_cnt, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
