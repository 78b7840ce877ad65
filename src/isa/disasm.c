/* STUB: replaced by the disassembler. */
#include "bpfrt/bpfrt.h"
#include "core/error.h"
int bpfrt_disasm_insn(const struct bpf_insn *insns, size_t remaining, char *buf, size_t buf_len)
{ return bpfrt_err(-ENOTSUP, "disasm: not built yet"); }
int bpfrt_disasm(const struct bpf_insn *insns, size_t insn_cnt, FILE *out)
{ return bpfrt_err(-ENOTSUP, "disasm: not built yet"); }
