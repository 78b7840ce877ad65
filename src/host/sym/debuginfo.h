/* A host function's calling shape from its debug info: how many integer
 * argument registers its arguments take and how wide its return value is,
 * so that fentry/fexit/fmod_ret need no nr_args from the user (Linux reads
 * the same from the kernel's BTF).
 *
 * Sources, in order: the module's DWARF (libdw: the file itself, else its
 * separate debug file under /usr/lib/debug/.build-id), then a .BTF section
 * in the file (pahole -J). A module's debug info is opened once and kept
 * for the life of the process, as the symbol table keeps its modules.
 * Attach paths only: locks, malloc, file reads. */
#ifndef BPFRT_SYM_DEBUGINFO_H
#define BPFRT_SYM_DEBUGINFO_H

#include <stdbool.h>
#include <stdint.h>

struct bpfrt_func_proto {
	uint32_t nr_args;       /* x86-64 integer argument registers used (<= 6) */
	uint32_t ret_size;      /* bytes of the return value (0: void) */
	bool ret_float;         /* returned in xmm0, not rax */
	const char *source;     /* "DWARF" or "BTF" */
};

struct bpfrt_sym_module;

/* The shape of the function starting at addr (named name, for BTF and the
 * messages) in module m (NULL: the symbol table finds it). Returns
 *   0            *proto filled;
 *   -ENODATA     no debug info describes it (message: build it with -g or
 *                give nr_args);
 *   -EOPNOTSUPP  described, but its register use cannot be told from its
 *                types (variadic, a struct by value, a large struct return,
 *                a calling convention the compiler changed, more than six
 *                register arguments): the message says which;
 *   or another -errno; every message names the function. */
int bpfrt_func_proto_get(const struct bpfrt_sym_module *m, uintptr_t addr, const char *name,
			 struct bpfrt_func_proto *proto);

/* Module m's .BTF (pahole -J), parsed once and kept for the life of the
 * process, or NULL if it has none. */
struct btf;
const struct btf *bpfrt_module_btf(const struct bpfrt_sym_module *m);

#endif
