/* STUB: replaced by the executable-memory module. */
#include "jit/execmem.h"
#include <errno.h>
struct bpfrt_execmem *bpfrt_execmem_alloc(size_t size) { errno = ENOTSUP; return NULL; }
void *bpfrt_execmem_addr(const struct bpfrt_execmem *mem) { return NULL; }
size_t bpfrt_execmem_size(const struct bpfrt_execmem *mem) { return 0; }
int bpfrt_execmem_copy(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len) { return -ENOTSUP; }
void bpfrt_execmem_free(struct bpfrt_execmem *mem) { }
