/* Which program kinds may call a Linux helper that only some of Linux's
 * program types offer (kind_rules.c). */
#ifndef BPFRT_HELPERS_KIND_RULES_H
#define BPFRT_HELPERS_KIND_RULES_H

#include "bpfrt/bpfrt.h"

#include <stdint.h>

/* NULL if a program of kind may call helper id (whose function is fn),
 * else which kinds may. Only bpfrt's own functions are restricted: an
 * embedder's helper under the same id is the embedder's to allow. */
const char *bpfrt_helper_kind_reason(int32_t id, bpfrt_helper_fn fn, enum bpfrt_prog_kind kind);

#endif
