/* Helper registry: helper id -> function and prototype. */
#ifndef BPFRT_HELPERS_H
#define BPFRT_HELPERS_H

#include "bpfrt/bpfrt.h"

/* The global registry, BPFRT_MAX_HELPER_ID entries indexed by id. */
const struct bpfrt_helper *bpfrt_helper_table(void);
/* get_func_ip/arg/ret/arg_cnt, get_attach_cookie (tracing.c), registered
 * with the Linux defaults. */
void bpfrt_tracing_helpers_register(void);

#endif
