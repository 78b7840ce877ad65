/* Reading and writing memory that may not be mapped without faulting: the
 * basis of the probe_read helpers, trace_printk's %s and probe_write_user. */
#ifndef BPFRT_HELPERS_PROBE_H
#define BPFRT_HELPERS_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* Copies n bytes from src; 0, or -EFAULT with all of dst zeroed when any
 * byte of the source is unreadable (as copy_from_kernel_nofault users in
 * Linux leave it). */
long bpfrt_probe_read(void *dst, const void *src, size_t n);

/* Copies the NUL-terminated string at src into dst (at most size bytes,
 * always NUL-terminated when size > 0). Returns the length copied
 * including the NUL (size when the string was cut), 0 for size 0, or
 * -EFAULT with dst zeroed when the string runs into unreadable memory
 * before its end or the size limit. */
long bpfrt_probe_read_str(void *dst, const void *src, size_t size);

/* Copies n bytes to dst, which may be unmapped or read-only: 0, or
 * -EFAULT (some bytes may have been written before the fault, as Linux's
 * copy_to_user_nofault). The basis of bpf_probe_write_user. */
long bpfrt_probe_write(void *dst, const void *src, size_t n);

#endif
