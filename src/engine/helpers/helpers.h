/* Helper registry: helper id -> function and prototype, per environment
 * (core/env.h has the tables and the snapshot programs call through). */
#ifndef BPFRT_HELPERS_H
#define BPFRT_HELPERS_H

#include "bpfrt/bpfrt.h"

/* get_func_ip/arg/ret/arg_cnt, get_attach_cookie (attach/helpers_tracing.c),
 * registered with the default environment's Linux defaults. */
void bpfrt_tracing_helpers_register(void);

#endif
