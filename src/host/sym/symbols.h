/* The host's function symbols: one table for the process, shared by every
 * attach path that names host code (kprobes, fentry's patchable entries).
 *
 * Contents. For every loaded object dl_iterate_phdr reports (the
 * executable, read through /proc/self/exe, and each library, in the
 * dynamic loader's order) the STT_FUNC symbols of .symtab and .dynsym
 * (both: .symtab has the static functions, .dynsym may be all a stripped
 * library has; a symbol listed in both counts once), at their run-time
 * addresses. Objects whose file cannot be read (the vdso) have none.
 *
 * Freshness. Every lookup first compares dl_iterate_phdr's counts of
 * loads and unloads with the ones of the last scan: a library loaded
 * since is read before the lookup answers, a library unloaded since stops
 * answering. Only new objects are read; a module's records, once read,
 * are never freed or moved, so the pointers lookups return stay valid for
 * the life of the process (an unloaded library's symbols are stale
 * addresses, not dangling memory).
 *
 * Threads. Lookups take a read lock, scans the write lock; lookups run on
 * attach paths only: they are not async-signal-safe (locks, malloc, file
 * reads), so no signal handler may call them. */
#ifndef BPFRT_SYM_SYMBOLS_H
#define BPFRT_SYM_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpfrt_sym_module;

struct bpfrt_sym {
	uintptr_t addr;
	size_t size;                    /* 0: unknown (assembly without .size) */
	const char *name;
	const struct bpfrt_sym_module *module;
	bool global;                    /* STB_GLOBAL or STB_WEAK, else local */
	struct bpfrt_sym *same_name;    /* symbols.c's name index: do not use */
};

struct bpfrt_sym_module {
	const char *path;               /* the file (the executable's real path) */
	const char *name;               /* its base name */
	uintptr_t base;                 /* load bias (dlpi_addr) */
	uintptr_t lo, hi;               /* [lo, hi): its PT_LOAD segments */
	bool executable;                /* the program, not a library */
	uint32_t id;                    /* 0, 1, ... in the order modules were read */
	const struct bpfrt_sym *syms;   /* its functions by address */
	size_t sym_cnt;
};

/* Reads the objects loaded since the last scan. 0 or -errno (message). */
int bpfrt_sym_refresh(void);

/* The function called name, or, for "LIB:NAME", the one in the module LIB
 * (its path, its base name, or the base name up to a '.': "libc" is
 * libc.so.6). Of several functions of one name, the first in module order
 * (the executable first), a global one before a local one within a
 * module, then the lowest address. Returns 0, -ENOENT with a message
 * naming the function (and LIB), -EINVAL for an empty name, or a scan's
 * error. */
int bpfrt_sym_lookup(const char *name, const struct bpfrt_sym **sym);

/* The same, restricted to module m (a function's NAME.cold part, say). */
int bpfrt_sym_lookup_in(const struct bpfrt_sym_module *m, const char *name,
			const struct bpfrt_sym **sym);

/* The function whose [addr, addr + size) contains addr (sized symbols
 * only; of aliases, the global one). Returns 0 or -ENOENT with a message
 * naming the address, or a scan's error. */
int bpfrt_sym_at(uintptr_t addr, const struct bpfrt_sym **sym);

/* Calls fn for each loaded module in id order, under the read lock (fn
 * must not call bpfrt_sym_*); a non-zero return stops and is returned. */
int bpfrt_sym_foreach_module(int (*fn)(void *ctx, const struct bpfrt_sym_module *m),
			     void *ctx);

#endif
