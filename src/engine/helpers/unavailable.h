/* Linux helpers that have no meaning in a user-space runtime, and why
 * (unavailable.c): the verifier says so when a program calls one. */
#ifndef BPFRT_HELPERS_UNAVAILABLE_H
#define BPFRT_HELPERS_UNAVAILABLE_H

#include <stdint.h>

/* Why Linux helper id cannot exist here ("there is no kernel task in user
 * space"), or NULL if it could (bpfrt may add it; or id is no helper). */
const char *bpfrt_helper_unavailable_reason(int64_t id);

#endif
