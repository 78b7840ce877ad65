/* Signal handlers bpfrt installs in its host, and how they chain to the
 * host's. One policy for every signal bpfrt handles (SIGTRAP: breakpoints
 * of text patching and kprobes; SIGSEGV: guard pages of private stacks;
 * a real-time signal: kprobe quiesce):
 *
 * Installation. The first bpfrt_signal_handle() for a signal installs
 * bpfrt's dispatcher with sigaction, once for the life of the process,
 * and keeps the disposition it replaced (the host's handler, SIG_DFL or
 * SIG_IGN). Flags: SA_SIGINFO | SA_ONSTACK | SA_RESTART, and SA_NODEFER
 * when asked (SIGTRAP: a program run from the handler may hit another
 * breakpoint); sa_mask is empty. SA_ONSTACK: a handler for a stack
 * overflow must run on a sigaltstack (private-stack threads get one). Up
 * to BPFRT_SIGNAL_HANDLERS_MAX handlers share a signal and are asked in
 * the order they were added; they are never removed. Installing is
 * async-signal-safe (no locks, no allocation): a first private-stack id
 * can be taken in a signal handler.
 *
 * Dispatch. The dispatcher saves errno and asks bpfrt's handlers in turn;
 * the first that returns true owns the signal (it may have rewritten the
 * registers in uc: signal/ucontext.h). A handler that declines must leave
 * uc as it was. When all decline, the signal goes where it would have
 * gone without bpfrt, the previous disposition:
 *   - a handler (SA_SIGINFO or plain) is called with the same arguments,
 *     on the same stack, with bpfrt's signal mask (its own sa_mask and
 *     SA_NODEFER are not applied); SA_RESETHAND is honoured: it is called
 *     once, later signals get the default action;
 *   - SIG_DFL: the default action is restored and the signal raised
 *     again, so the host dies as it would have; the signal is blocked in
 *     its handler (unless SA_NODEFER), so it is delivered as the
 *     dispatcher returns, with the interrupted registers (a fault's core
 *     dump shows the faulting instruction);
 *   - SIG_IGN: a signal someone sent (kill, sigqueue) is dropped; a
 *     synchronous one (si_code > 0: a fault, an int3 or brk) takes the
 *     default action, as the kernel forces for an ignored fault.
 * Hence the signals must be ones whose default action ends the process
 * (terminate or core): bpfrt_signal_handle refuses the others.
 *
 * A host that installs its own handler for one of these signals after
 * bpfrt's must chain to the one it replaced (sigaction's old action),
 * as with any library that handles signals, or bpfrt's breakpoints and
 * guard pages become the host's signals. A host handler restored over
 * bpfrt's (sigaction with the disposition saved before bpfrt's) removes
 * bpfrt's: do not. A host that cannot be changed (bpfrt trace's agent in
 * a program never built for bpfrt) can route its sigaction calls through
 * bpfrt_signal_host_sigaction instead, which keeps bpfrt's dispatcher in
 * place and makes the program's handler the disposition chained to. */
#ifndef BPFRT_SIGNAL_CHAIN_H
#define BPFRT_SIGNAL_CHAIN_H

#include <signal.h>
#include <stdbool.h>
#include <ucontext.h>

#define BPFRT_SIGNAL_HANDLERS_MAX 4

/* Runs in signal context on the thread that got sig: async-signal-safe
 * code only. Returns true if the signal was bpfrt's (handled), false to
 * pass it on (uc unchanged). */
typedef bool (*bpfrt_signal_fn)(int sig, siginfo_t *info, ucontext_t *uc);

enum {
	BPFRT_SIGNAL_NODEFER = 1,       /* SA_NODEFER: the handler may nest */
};

/* Adds fn to sig's handlers, installing the dispatcher on the first call
 * for sig (flags: BPFRT_SIGNAL_*; every call for a signal must give the
 * same). Adding a handler again is a no-op. Returns 0 or -errno with a
 * message: -EINVAL for a signal whose default action does not end the
 * process or for different flags, -ENOSPC past BPFRT_SIGNAL_HANDLERS_MAX,
 * -EAGAIN when called in a signal handler that interrupted this thread's
 * own installation of sig, sigaction's errno. */
int bpfrt_signal_handle(int sig, bpfrt_signal_fn fn, unsigned flags);

/* Passes a signal none of bpfrt's handlers took to the previous
 * disposition (the rules above). For the dispatcher; exposed for handlers
 * that decide late and for tests. */
void bpfrt_signal_chain(int sig, siginfo_t *info, void *uc);

/* sigaction for a host that interposes it: for a signal bpfrt's
 * dispatcher holds, act (if not NULL) becomes the disposition chained to
 * and *old (if not NULL) gets the one chained to so far, as sigaction
 * would have answered without bpfrt; async-signal-safe. Returns 1 for a
 * signal bpfrt does not hold (the caller makes the real call), 0, or
 * -EAGAIN in a signal handler that interrupted this thread's own call. */
int bpfrt_signal_host_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* The sigaction bpfrt installs its dispatcher with (and restores the
 * default action with): NULL, libc's; a host interposing sigaction names
 * the real one here, before bpfrt handles a signal. */
typedef int (*bpfrt_sigaction_fn)(int sig, const struct sigaction *act, struct sigaction *old);
void bpfrt_signal_use_sigaction(bpfrt_sigaction_fn fn);

#endif
