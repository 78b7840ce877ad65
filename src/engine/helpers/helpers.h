/* Helper registry: helper id -> function and prototype, per environment
 * (core/env.h has the tables and the snapshot programs call through). */
#ifndef BPFRT_HELPERS_H
#define BPFRT_HELPERS_H

#include "bpfrt/bpfrt.h"

/* A default helper: registered under id where the id is still free. */
struct bpfrt_helper_default {
	uint32_t id;
	struct bpfrt_helper h;
};

/* The host's defaults (its tracing helpers), registered once, before
 * main: bpfrt_helpers_init fills them into the default environment after
 * Linux's, under the same rule; added after it ran, they are filled in at
 * once. A second, different set is -EBUSY. */
int bpfrt_helpers_add_defaults(const struct bpfrt_helper_default *set, size_t cnt);

#endif
