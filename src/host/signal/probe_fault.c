/* The fault handler of fault-safe loads (core/extable.h): a SIGSEGV or
 * SIGBUS at a registered load continues at its fixup, which reads the
 * load as 0, as Linux's exception tables make a BPF_PROBE_MEM load of a
 * bad address read 0. Any other fault is declined and goes on to the
 * other handlers (private-stack guard pages) and the host's.
 *
 * Installed on the first fault-safe load's program or probe read
 * (bpfrt_extable_ready), through signal/chain.c: the handler is lock-free
 * and async-signal-safe (the lookup reads the registry's atomics only). */
#define _GNU_SOURCE
#include "signal/chain.h"
#include "signal/ucontext.h"
#include "core/extable.h"

#include <signal.h>

static bool probe_fault(int sig, siginfo_t *info, ucontext_t *uc)
{
	uintptr_t fix = 0;

	(void)sig;
	(void)info;
#if BPFRT_UC_SUPPORTED
	fix = bpfrt_extable_fixup(bpfrt_uc_pc(uc));
#endif
	if (!fix)
		return false;
#if BPFRT_UC_SUPPORTED
	bpfrt_uc_set_pc(uc, fix);
#endif
	return true;
}

static int probe_fault_install(void)
{
	int err = bpfrt_signal_handle(SIGSEGV, probe_fault, 0);

	return err ? err : bpfrt_signal_handle(SIGBUS, probe_fault, 0);
}

__attribute__((constructor)) void bpfrt_probe_fault_init(void)
{
	bpfrt_extable_set_host(probe_fault_install);
}
