/* The trace buffer: where bpf_trace_printk lines go.
 *
 * Ownership: bpfrt owns the ring; reading copies lines out (into the
 * caller's buffer, to a callback, to a FILE) and consumes them.
 *
 * Thread safety: programs on any thread write lines while any thread reads
 * them; every call takes the ring's lock, so each line is read once. */
#ifndef BPFRT_PUBLIC_TRACE_H
#define BPFRT_PUBLIC_TRACE_H

#include "bpfrt/export.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* trace_printk lines go to a bounded in-process ring (the oldest line is
 * dropped when full) laid out like the kernel's trace_pipe:
 *   "  comm-tid  [cpu] ..... sec.usec: bpf_trace_printk: message\n"
 * Reading consumes lines. */

/* Copies as many whole pending lines as fit into buf, NUL-terminated.
 * Returns the bytes copied (0: nothing pending), or -ENOSPC if even the
 * next line does not fit. */
BPFRT_API int bpfrt_trace_read(char *buf, size_t len);
/* Calls fn for every pending line (len excludes the NUL); a negative
 * return stops and is returned. Returns the number of lines. */
typedef int (*bpfrt_trace_line_fn)(void *ctx, const char *line, size_t len);
BPFRT_API int bpfrt_trace_drain(bpfrt_trace_line_fn fn, void *ctx);
/* Writes every pending line to out (the CLI's trace-pipe). Returns the
 * number of lines or -errno. */
BPFRT_API int bpfrt_trace_pipe(FILE *out);
/* Lines lost to a full buffer since the last clear. */
BPFRT_API uint64_t bpfrt_trace_dropped(void);
/* Discards pending lines and the dropped count. */
BPFRT_API void bpfrt_trace_clear(void);

#ifdef __cplusplus
}
#endif
#endif
