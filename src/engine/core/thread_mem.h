/* Per-thread memory too large for the library's static TLS.
 *
 * libbpfrt keeps its initial-exec TLS to a few hundred bytes: that is all
 * glibc can place when the library is loaded into a process that is
 * already running (the tracing agent, injected with dlopen), beyond which
 * dlopen fails with "cannot allocate memory in static TLS block". Larger
 * per-thread buffers (error text, reports, return-probe stacks) live in a
 * mapping of their own, reached from an 8-byte TLS pointer, made on the
 * thread's first need and unmapped when the thread exits.
 *
 * bpfrt_thread_mem() may run in a signal handler that interrupted any code
 * (allocation is mmap; the handler that interrupts another allocation for
 * the same pointer keeps its own block and the interrupted call returns
 * it). The memory is zeroed when made. Owner-thread only: never hand the
 * pointer to another thread, it is unmapped at this thread's exit. */
#ifndef BPFRT_THREAD_MEM_H
#define BPFRT_THREAD_MEM_H

#include <stddef.h>

/* *slot if set, else a new zeroed block of `size` bytes stored there;
 * NULL if no memory could be mapped. slot must be a __thread variable of
 * the calling thread, cleared again when the thread exits. */
void *bpfrt_thread_mem(void **slot, size_t size);

#endif
