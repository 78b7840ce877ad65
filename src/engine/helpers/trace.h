/* bpf_trace_printk's formatter and the in-process trace buffer behind it
 * (the public reading side is in bpfrt/bpfrt.h). */
#ifndef BPFRT_HELPERS_TRACE_H
#define BPFRT_HELPERS_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Longest message kept per trace line (longer ones are cut). */
#define BPFRT_TRACE_MSG_MAX 512

/* Formats fmt (fmt_size bytes of program memory that must contain a NUL)
 * (or up to its NUL for BPFRT_TRACE_FMT_STRING)
 * with Linux's bpf_trace_printk/bpf_snprintf rules: %d %i %u %x %X with
 * l/ll, %c, %s, %p (%px %pK %ps %pS as hex, %pks %pus as strings, %pi4
 * %pI4 %pi6 %pI6), %%, flags "0+- " and a width; at most nr_args
 * conversions. Strings and addresses are read without faulting. Returns
 * the message length (out is always NUL-terminated, cut at out_size - 1)
 * or -EINVAL for a bad format, -EFAULT for an unreadable one. */
#define BPFRT_TRACE_FMT_STRING UINT32_MAX /* fmt_size: NUL-terminated, any length */
long bpfrt_trace_format(char *out, size_t out_size, const void *fmt, uint32_t fmt_size,
			const uint64_t *args, uint32_t nr_args);

/* Appends one message to the trace buffer with the caller's pid, tid,
 * comm, CPU and time. The oldest line is dropped when the buffer is full. */
void bpfrt_trace_emit(const char *msg, size_t len);

#endif
