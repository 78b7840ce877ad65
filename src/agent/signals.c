/* sigaction and signal as the traced program calls them. bpfrt's handlers
 * (SIGSEGV and SIGBUS: fault-safe probe reads and guard pages; SIGTRAP:
 * int3 probes) must stay installed for the target's life, and a program
 * never built for bpfrt installs its own with no thought of chaining: a
 * runtime's SIGSEGV handler set in main would otherwise take over, and a
 * probe read of a bad pointer would become the program's crash. So, for a
 * signal bpfrt's dispatcher holds, the program's sigaction changes only
 * what bpfrt chains to (signal/chain.h: the program's handler still gets
 * every signal that is not bpfrt's, and its old action reads as if bpfrt
 * were not there); other signals go to libc as they are.
 *
 * Only where the agent is preloaded (bpfrt trace -- CMD) do the program's
 * calls reach these; dlopen'ed into a running process (-p) the agent is
 * not in the program's symbol scope, and handlers installed before the
 * attach are chained to as in any host. */
#define _GNU_SOURCE
#include "signal/chain.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>

#define AGENT_API __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static sigaction_fn real_sigaction;

/* Before any of bpfrt's handlers is installed (the agent's own start is a
 * later constructor): bpfrt's installs must reach libc, not this file. */
__attribute__((constructor(101))) static void find_real_sigaction(void)
{
	real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	bpfrt_signal_use_sigaction(real_sigaction);
}

AGENT_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r = bpfrt_signal_host_sigaction(sig, act, old);

	if (r == 1) {
		if (!real_sigaction) {
			errno = ENOSYS;
			return -1;
		}
		return real_sigaction(sig, act, old);
	}
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* glibc's signal(): BSD semantics (the handler stays, the signal is
 * blocked while it runs, interrupted calls restart), through sigaction
 * above, since libc's own calls its internal sigaction, not this one. */
AGENT_API sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa = { 0 }, old;

	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
