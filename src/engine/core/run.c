#include "core/run.h"

__thread struct bpfrt_run_state bpfrt_run_state __attribute__((tls_model("initial-exec")));

intptr_t bpfrt_run_state_tp_offset(void)
{
	return (intptr_t)((char *)&bpfrt_run_state - (char *)__builtin_thread_pointer());
}
