/* The tracing helpers (get_func_ip/arg/ret/arg_cnt, get_attach_cookie)
 * as defaults of the engine's helper registry. */
#ifndef BPFRT_HELPERS_TRACING_H
#define BPFRT_HELPERS_TRACING_H

/* A constructor (before main): adds them with bpfrt_helpers_add_defaults.
 * attach/run.c refers to it, so whatever links the attached-run path
 * (every run path does: bpfrt_prog_run reads the attach depth) has them. */
void bpfrt_tracing_helpers_init(void);

#endif
