/* The tracing helpers (get_func_ip/arg/ret/arg_cnt, get_attach_cookie)
 * as defaults of the engine's helper registry. */
#ifndef BPFRT_HELPERS_TRACING_H
#define BPFRT_HELPERS_TRACING_H

#include <stdbool.h>
#include <stdint.h>

/* A constructor (before main): adds them with bpfrt_helpers_add_defaults.
 * attach/run.c refers to it, so whatever links the attached-run path
 * (every run path does: bpfrt_prog_run reads the attach depth) has them. */
void bpfrt_tracing_helpers_init(void);

/* The probe whose programs run now on this thread (kprobes, kretprobes,
 * uprobes): the pt_regs they were given and the address get_func_ip
 * answers for them (the probed instruction; a kretprobe's function
 * entry, as Linux). The probe run saves and restores it around its
 * programs, so nested probes answer for their own. */
struct bpfrt_probe_frame {
	const void *regs;
	uint64_t ip;
	bool at_entry;  /* the probe sits on a function's first instruction */
	/* bpf_override_return (override.c): allowed for this run (an entry
	 * kprobe in int3 mode), then asked for, with the value */
	bool may_override;
	bool override;
	uint64_t override_rc;
};

extern __thread struct bpfrt_probe_frame bpfrt_probe_frame
	__attribute__((tls_model("initial-exec")));

#endif
