/* The engine's half of the private-stack contract (stack_abi.h): the
 * per-thread slots JIT code and the interpreter claim stacks from, the
 * interpreter's run records, and the host's hook. */
#include "core/stack_abi.h"
#include "core/error.h"

#include <errno.h>

void *const bpfrt_privstack_no_slots[BPFRT_PRIVSTACK_MAX_IDS];

__thread void **bpfrt_privstack_slots __attribute__((tls_model("initial-exec"))) =
	(void **)bpfrt_privstack_no_slots;

__thread struct bpfrt_privstack_interp_run *bpfrt_privstack_interp_top
	__attribute__((tls_model("initial-exec")));

/* The one mutable global of the contract: written once by the host's
 * registration (before main), read by loads, JIT compiles and the
 * interpreter's private-stack runs. */
const struct bpfrt_stack_host *bpfrt_stack_host;

intptr_t bpfrt_privstack_slots_tp_offset(void)
{
	return (intptr_t)((char *)&bpfrt_privstack_slots - (char *)__builtin_thread_pointer());
}

int bpfrt_stack_host_register(const struct bpfrt_stack_host *host)
{
	const struct bpfrt_stack_host *none = NULL;

	if (!host || !host->prog_init || !host->prog_fini || !host->claim_slow ||
	    !host->release_aborted)
		return bpfrt_err(-EINVAL, "stack host: a function is missing");
	if (__atomic_compare_exchange_n(&bpfrt_stack_host, &none, host, false,
					__ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0;
	if (none == host)
		return 0;
	return bpfrt_err(-EBUSY, "stack host: another one is registered");
}
