/* Linux helpers that have no meaning in a user-space runtime, and why
 * (unavailable.c): the verifier says so when a program calls one. */
#ifndef BPFRT_HELPERS_UNAVAILABLE_H
#define BPFRT_HELPERS_UNAVAILABLE_H

#include <stdint.h>

/* Why Linux helper id cannot exist here ("there is no kernel task in user
 * space"), or NULL if it could (it is merely not implemented, or is not
 * a helper). */
const char *bpfrt_helper_unavailable_reason(int64_t id);

#endif
