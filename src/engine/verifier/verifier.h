/* Path-sensitive verifier: proves a structurally valid program safe for
 * its program kind before anything runs it (Linux's verifier, own code).
 * Runs after bpfrt_validate, which guarantees valid encodings, jump
 * targets, subprogram bounds and an acyclic call graph. */
#ifndef BPFRT_VERIFIER_H
#define BPFRT_VERIFIER_H

#include "core/prog.h"

/* Instructions one verification may process (Linux's BPF_COMPLEXITY_LIMIT_INSNS). */
#define BPFRT_VERIFY_MAX_PROCESSED 1000000u

/* Verifies prog (validated: subprogs filled) as prog->kind with the map
 * references prog->map_refs. On success it records what it learnt in the
 * program (tighter stack depths, context bytes read) and returns 0; on
 * failure (record: false leaves the program unchanged) -EACCES (unsafe), -EINVAL (malformed for the verifier) or -E2BIG
 * (too complex), with bpfrt_last_error() "insn N: reason". The log goes to
 * opts->log_buf when given. */
int bpfrt_verify(struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts, bool record);

/* The context r1 points to for prog's kind: its size (ctx_size for the
 * kinds whose context the caller describes: UNSPEC, SYSCALL) and whether
 * programs may only read it. */
uint32_t bpfrt_verify_ctx_size(const struct bpfrt_prog *prog, uint32_t ctx_size, bool *rdonly);

/* The host's target BTF for typed arguments (verifier/btf_access.c),
 * registered once before main (sym/target_btf.c): the BTF that describes
 * the traced function target (fentry's FUNC or LIB:FUNC; tracepoint: the
 * tp_btf name), kept for the life of the process, or NULL with why
 * written (a sentence naming what is missing). May lock and read files:
 * called at verification only. */
struct btf;
typedef const struct btf *(*bpfrt_target_btf_fn)(const char *target, bool tracepoint, char *why,
						  size_t why_len);
void bpfrt_verifier_set_target_btf(bpfrt_target_btf_fn fn);

#endif
