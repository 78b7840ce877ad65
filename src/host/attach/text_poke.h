/* text_poke: the one way bpfrt modifies host code (the process's own
 * executable and libraries) while other threads may be running it.
 *
 * Host text is never made writable: bytes are written through
 * /proc/self/mem (the kernel's FOLL_FORCE write path copies a private page
 * on write without touching the mapping's protection), one fd opened once
 * per process (reopened after fork, since the fd names the parent's mm).
 *
 * Cross-modification is breakpoint first, as Linux's text_poke_bp:
 *   1. int3 over the first byte of every site; sync
 *   2. the new bytes after the first one (and every data poke); sync
 *   3. the new first byte; sync
 * where "sync" makes every thread of the process serialise its instruction
 * stream (membarrier PRIVATE_EXPEDITED_SYNC_CORE, registered once; fallback
 * PRIVATE_EXPEDITED, then an mprotect TLB shootdown, whose IPIs return with
 * iret). A thread that reaches a site between 1 and 3 traps on the int3 and
 * the SIGTRAP handler (trap.c) emulates the new instruction. A batch does
 * every site at once, three syncs in all, and writes each page's edits in
 * one pwrite (unchanged bytes between edits are rewritten with their own
 * value), so 32,768 sites cost a few hundred system calls.
 *
 * The new bytes at an executed site must be one instruction the handler can
 * emulate: call rel32 (e8), jmp rel32 (e9), jmp rel8 (eb), a nop (90, 66 90,
 * 0f 1f /0 forms), or a single byte (written as is: no int3 needed). Calls
 * are emulated by pushing the return address below rsp, so call sites must
 * be where the red zone is free (function entries). A site whose address has
 * a trap handler (kprobe) may take other bytes: its handler is asked.
 * Sites must not overlap and must not span more than two pages. All pokes
 * are serialised by one mutex; never call from signal context. */
#ifndef BPFRT_ATTACH_TEXT_POKE_H
#define BPFRT_ATTACH_TEXT_POKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#define BPFRT_POKE_MAX_LEN 15

struct bpfrt_poke {
	uintptr_t addr;
	uint8_t len;                      /* 1 .. BPFRT_POKE_MAX_LEN */
	bool data;                        /* bytes are never executed (function
					   * padding): written in step 2, no int3 */
	uint8_t bytes[BPFRT_POKE_MAX_LEN];
};

/* Replaces len bytes of code at addr with bytes. Returns 0 or -errno. */
int bpfrt_text_poke(void *addr, const void *bytes, size_t len);
/* Applies every poke (sorted in place by address) with three syncs.
 * Returns 0 or -errno (nothing written if a poke is rejected up front). */
int bpfrt_text_poke_batch(struct bpfrt_poke *pokes, size_t cnt);
/* Writes bytes that no thread executes (padding before a function). */
int bpfrt_text_write(void *addr, const void *bytes, size_t len);
/* Makes every thread serialise its instruction stream. */
void bpfrt_text_sync_cores(void);
/* Syscalls and syncs made so far (for tests and the bench). */
void bpfrt_text_poke_stats(uint64_t *writes, uint64_t *syncs);

/* For trap.c: emulates the instruction being poked at addr if a poke is in
 * progress there. Signal context. */
bool bpfrt_text_poke_trap(ucontext_t *uc, uintptr_t addr);
/* For trap.c: changes whenever a poke starts or ends. Signal context. */
uint64_t bpfrt_text_poke_gen(void);

/* call/jmp rel32 encodings: -ERANGE if target is beyond +-2 GiB. */
int bpfrt_encode_call(uint8_t insn[5], uintptr_t from, uintptr_t target);
int bpfrt_encode_jmp(uint8_t insn[5], uintptr_t from, uintptr_t target);

#endif
