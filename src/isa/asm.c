/* STUB: replaced by the assembler. */
#include "bpfrt/bpfrt.h"
#include "core/error.h"
int bpfrt_asm(const char *text, struct bpf_insn **insns, size_t *insn_cnt)
{ return bpfrt_err(-ENOTSUP, "asm: not built yet"); }
