/* SIGTRAP dispatch: bpfrt owns one SIGTRAP handler for the process and
 * routes each int3 to whoever put it there.
 *
 * Order, for a trap whose int3 sits at addr = rip - 1:
 *   1. a text poke in progress at addr (text_poke.c) emulates the new
 *      instruction;
 *   2. a handler registered for addr with bpfrt_trap_register() (kprobes)
 *      runs; it returns true once it has set the registers to resume with;
 *   3. if the byte at addr is no longer an int3, the trap raced with its
 *      removal: the thread resumes at addr and runs what is there now;
 *   4. otherwise the trap is not ours and goes to the host's previous
 *      disposition by the rules of signal/chain.h (its handler gets the
 *      same info and context; SIG_DFL and SIG_IGN end the process with
 *      SIGTRAP, as an unhandled int3 does). SIGTRAPs that are not int3
 *      traps (si_code other than SI_KERNEL: single-step, kill(), raise())
 *      go there too.
 *
 * The handler is installed through signal/chain.h on the first
 * registration or text poke, with SA_NODEFER (a program run from the
 * handler may hit another int3), and stays. A host that installs its own
 * SIGTRAP handler afterwards must chain to the one it replaced
 * (sigaction's old action) or bpfrt's int3s kill the process.
 * Under a debugger, tell it to pass SIGTRAP (gdb: handle SIGTRAP nostop
 * noprint pass) or it stops at every bpfrt breakpoint. */
#ifndef BPFRT_ATTACH_TRAP_H
#define BPFRT_ATTACH_TRAP_H

#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

/* Runs in signal context on the trapping thread: async-signal-safe code
 * only (no malloc, no locks a trapped thread may hold). uc's registers are
 * the thread's at the trap (rip = addr + 1); change them (rip, rsp, stack)
 * to say where it resumes. Return false to pass the trap on (step 3/4). */
typedef bool (*bpfrt_trap_fn)(void *ctx, ucontext_t *uc, uintptr_t addr);

/* Routes int3 traps at addr to fn(ctx, ...). -EEXIST if addr already has a
 * handler, -ENOSPC when the table (4096 addresses) is full. Register before
 * writing the int3 (bpfrt_text_poke(addr, "\xcc", 1)). */
int bpfrt_trap_register(uintptr_t addr, bpfrt_trap_fn fn, void *ctx);
/* Removes addr's handler and waits until no thread runs it any more, so
 * ctx may be freed on return. Restore the original byte with
 * bpfrt_text_poke() first: a thread that trapped before the restore and
 * reaches the handler after it resumes at addr (step 3). -ENOENT if none. */
int bpfrt_trap_unregister(uintptr_t addr);
/* Installs the SIGTRAP handler now (idempotent). Returns 0 or -errno. */
int bpfrt_trap_init(void);

/* Traps bpfrt handled (any step but 4), for tests and statistics. */
uint64_t bpfrt_trap_hits(void);

#endif
