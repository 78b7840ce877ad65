/* STUB: replaced by the JIT driver. */
#include "jit/backend.h"
#include "core/error.h"
const struct bpfrt_jit_backend *bpfrt_jit_native_backend(void) { return NULL; }
int bpfrt_prog_dump_jited(const struct bpfrt_prog *prog, FILE *out)
{ return bpfrt_err(-ENOTSUP, "dump --jited: not built yet"); }
