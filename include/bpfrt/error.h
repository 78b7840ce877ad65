/* Errors: how every bpfrt call reports failure.
 *
 * Conventions (as libbpf): opaque objects; functions returning int give 0
 * (or a count) on success and a negative errno on failure, functions
 * returning a pointer give NULL. On failure bpfrt_last_error() gives a
 * one-line message naming the instruction, section, map or symbol at fault.
 *
 * Lifetime and thread safety: the message is per thread, in a buffer bpfrt
 * owns (do not free it); the pointer stays valid for the thread's life and
 * its text is replaced by the next failing call on that thread. A failure
 * on one thread never changes another thread's message. */
#ifndef BPFRT_PUBLIC_ERROR_H
#define BPFRT_PUBLIC_ERROR_H

#include "bpfrt/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Message for the last failing bpfrt call on this thread ("" if none). */
BPFRT_API const char *bpfrt_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
