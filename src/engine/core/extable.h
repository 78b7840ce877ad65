/* Fault-safe loads (BPFRT_PROBE_MEM, isa.h): the exception tables, as
 * Linux's JITs make them for BPF_PROBE_MEM. Every native instruction that
 * may fault on purpose (a JIT image's probe loads, the interpreter's load
 * routines below, the probe_read copies of extable_copy.c) has an entry:
 * its address and the fixup to continue at, code that zeroes the
 * destination register and resumes after the load (the copies' fixups
 * return how far they got).
 * The host's SIGSEGV/SIGBUS handler (host/signal/probe_fault.c) asks
 * bpfrt_extable_fixup for the faulting pc and, on a hit, only sets the pc.
 *
 * The registry is lock-free for its readers (the handler) and never frees
 * its blocks; writers (JIT publish and unload) take one mutex. A table is
 * registered once its image is executable and unregistered before the
 * image is freed; a reader uses a table only when pc lies in its image,
 * which then cannot be freed under it (its thread is running there). */
#ifndef BPFRT_CORE_EXTABLE_H
#define BPFRT_CORE_EXTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One faulting instruction: offsets from the image's start. */
struct bpfrt_extable_entry {
	uint32_t insn_off;      /* the load */
	uint32_t fixup_off;     /* where a fault there continues */
};

/* The table of one image (entries sorted by insn_off), owned by its
 * program; slot is the registry's (-1 while unregistered). */
struct bpfrt_extable {
	uintptr_t start;
	size_t len;
	struct bpfrt_extable_entry *entries;
	uint32_t cnt;
	int32_t slot;
};

/* Publishes tab (its image is in place). 0 or -ENOMEM. */
int bpfrt_extable_register(struct bpfrt_extable *tab);
/* Withdraws tab before its image goes (no-op if unregistered). */
void bpfrt_extable_unregister(struct bpfrt_extable *tab);

/* Unregisters and frees a table allocated with its entries (NULL: no-op). */
void bpfrt_extable_free(struct bpfrt_extable *tab);

/* Async-signal-safe and lock-free: where execution continues after a
 * fault at pc, or 0 if pc is no registered fault-safe load. */
uintptr_t bpfrt_extable_fixup(uintptr_t pc);

/* The host installs the fault handler that calls bpfrt_extable_fixup
 * (registered once before main). install returns 0 once the handler is
 * in place. */
void bpfrt_extable_set_host(int (*install)(void));
/* True once the host's handler is installed (installing it on the first
 * call): fault-safe loads may then be plain loads with table entries.
 * False: no handler (an engine without the host, or its installation
 * failed), so engines fall back to probe reads through the kernel
 * (helpers/probe.c) and the JIT refuses. The answer is kept, except when
 * asked from a signal handler that interrupted this thread's own
 * installation (false this once). */
bool bpfrt_extable_ready(void);

/* Fault-safe copies (core/extable_copy.c), for the probe_read helpers
 * once bpfrt_extable_ready() (without the handler a fault there is a
 * crash). Async-signal-safe: plain loads and stores, no system call.
 * bpfrt_probe_copy: n bytes from src to dst; returns the bytes not
 * copied, 0 when all were (the first ones are in dst).
 * bpfrt_probe_copy_str: at most n bytes, stopping after the first NUL;
 * returns the bytes copied with that NUL, n when none came, or -1 when
 * the source faulted first. */
size_t bpfrt_probe_copy(void *dst, const void *src, size_t n);
long bpfrt_probe_copy_str(void *dst, const void *src, size_t n);
/* The fixup of a fault in one of those copies' loads, else 0. */
uintptr_t bpfrt_extable_copy_fixup(uintptr_t pc);

/* The interpreter's fault-safe load of size (1, 2, 4, 8) bytes at addr,
 * zero-extended; 0 where it faults. */
uint64_t bpfrt_probe_load(uintptr_t addr, unsigned size);

#endif
