/* Structural validator, run on every load before anything executes.
 * Checks encodings, register numbers, jump targets, reachability, helper
 * ids and call depth; computes subprogram boundaries and stack depths. */
#ifndef BPFRT_VALIDATE_H
#define BPFRT_VALIDATE_H

#include "core/prog.h"

/* Validates prog->insns/insn_cnt against prog->helpers and fills
 * prog->subprogs, subprog_cnt, insn_subprog and stack_depth.
 * Returns 0 or -EINVAL (or -E2BIG/-ENOMEM) with bpfrt_last_error() set to
 * "insn N: reason". */
int bpfrt_validate(struct bpfrt_prog *prog);

#endif
