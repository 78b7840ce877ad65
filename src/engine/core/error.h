/* Per-thread last-error message behind bpfrt_last_error(). */
#ifndef BPFRT_ERROR_H
#define BPFRT_ERROR_H

#include <errno.h>

/* Formats the message and returns err (a negative errno) so callers can
 * write `return bpfrt_err(-EINVAL, "insn %u: ...", pc);`. */
int bpfrt_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bpfrt_err_clear(void);

#endif
