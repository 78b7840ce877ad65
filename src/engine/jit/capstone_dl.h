/* capstone, loaded when a JIT listing is first asked for. Running
 * programs needs no disassembler, so libbpfrt does not link capstone:
 * bpfrt_prog_dump_jited opens it with dlopen and falls back to objdump or
 * raw words (saying why) where it is missing. */
#ifndef BPFRT_JIT_CAPSTONE_DL_H
#define BPFRT_JIT_CAPSTONE_DL_H

#ifndef BPFRT_NO_CAPSTONE
#include <capstone/capstone.h>

/* The capstone functions the listing calls. */
struct bpfrt_capstone {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	size_t (*disasm)(csh handle, const uint8_t *code, size_t size, uint64_t address,
			 size_t count, cs_insn **insn);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
};

/* The library the table comes from (Debian's libcapstone4 SONAME). */
#define BPFRT_CAPSTONE_SONAME "libcapstone.so.4"

/* The table, loaded once (thread-safe); NULL if the library or one of its
 * functions is missing, with *why saying which (a static string, valid
 * for the process's life). */
const struct bpfrt_capstone *bpfrt_capstone_get(const char **why);
#endif

#endif
