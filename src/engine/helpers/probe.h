/* Reading and writing memory that may not be mapped without faulting: the
 * basis of the probe_read helpers, trace_printk's %s and probe_write_user. */
#ifndef BPFRT_HELPERS_PROBE_H
#define BPFRT_HELPERS_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* Both reads are plain copies with fault-safe loads (core/extable_copy.c)
 * once the host's fault handler is installed, else system calls.
 *
 * Copies n bytes from src; 0, or -EFAULT with all of dst zeroed when any
 * byte of the source is unreadable (as copy_from_kernel_nofault users in
 * Linux leave it). */
long bpfrt_probe_read(void *dst, const void *src, size_t n);

/* Copies the NUL-terminated string at src into dst (at most size bytes,
 * always NUL-terminated when size > 0, the rest of dst zeroed). Returns
 * the length copied including the NUL (size when the string was cut), 0
 * for size 0, or -EFAULT with dst zeroed when one of the bytes it reads is
 * unreadable: those up to the NUL, at most size of them (as Linux, the
 * size-th byte of a cut string is read before the NUL replaces it). */
long bpfrt_probe_read_str(void *dst, const void *src, size_t size);

/* The same two through the kernel (process_vm_readv, else a pipe): what
 * the two above do where the host's fault handler is not installed
 * (core/extable.h); exposed for the tests of that path. */
long bpfrt_probe_read_syscall(void *dst, const void *src, size_t n);
long bpfrt_probe_read_str_syscall(void *dst, const void *src, size_t size);

/* Copies n bytes to dst, which may be unmapped or read-only: 0, or
 * -EFAULT (some bytes may have been written before the fault, as Linux's
 * copy_to_user_nofault). The basis of bpf_probe_write_user. */
long bpfrt_probe_write(void *dst, const void *src, size_t n);

#endif
