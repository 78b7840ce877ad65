/* Executable memory: the one module through which bpfrt creates, writes
 * and frees native code. A region is never writable and executable at the
 * same time: code is written with bpfrt_execmem_copy (the userspace
 * counterpart of text_poke / bpf_arch_text_copy), through a writable alias
 * or /proc/self/mem, never through the executable address. */
#ifndef BPFRT_EXECMEM_H
#define BPFRT_EXECMEM_H

#include <stddef.h>

/* Statistics and the packing switch are public: see the "executable
 * memory" section of bpfrt/bpfrt.h. */
#include "bpfrt/bpfrt.h"

struct bpfrt_execmem;

/* Allocates size bytes of executable memory, initially trap-filled.
 * Returns NULL with errno set on failure. */
struct bpfrt_execmem *bpfrt_execmem_alloc(size_t size);
/* Like bpfrt_execmem_alloc, in a mapping of its own placed within 1.5 GiB
 * of near, so host code there reaches it with a rel32 call or jmp
 * (trampolines). NULL with errno ERANGE if no such place is free. */
struct bpfrt_execmem *bpfrt_execmem_alloc_near(size_t size, const void *near);
/* The address code runs at. */
void *bpfrt_execmem_addr(const struct bpfrt_execmem *mem);
size_t bpfrt_execmem_size(const struct bpfrt_execmem *mem);
/* Copies len bytes of code to offset off and makes them visible to
 * instruction fetch. Returns 0 or -errno. */
int bpfrt_execmem_copy(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len);
/* Patches live code (call sites, trampolines): writes len bytes (1, 2, 4
 * or 8) at off with one atomic store through the writable alias, so a CPU
 * running the code sees the old bytes or the new ones, never a mix. The
 * executable address exec+off must be aligned to len, and the caller keeps
 * each patched instruction inside that aligned unit. Returns 0, -EINVAL
 * (bad length or alignment), -ERANGE, or -EOPNOTSUPP for an image in an
 * anonymous-THP pack (no alias to store through; code that is patched
 * comes from bpfrt_execmem_alloc_near, which never packs). */
int bpfrt_execmem_patch(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len);
/* Trap-fills and releases the region. NULL is a no-op. */
void bpfrt_execmem_free(struct bpfrt_execmem *mem);

#endif
