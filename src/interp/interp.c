/* STUB: replaced by the interpreter. */
#include "interp/interp.h"
uint64_t bpfrt_interp_run(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2)
{ return 0; }
uint64_t bpfrt_interp_run_counted(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2, uint64_t *executed)
{ *executed = 0; return 0; }
