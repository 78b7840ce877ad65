/* Attaching programs to the host process: links.
 *
 * Ownership: every attach returns a link the caller owns;
 * bpfrt_link_destroy() detaches the program (once it returns, no thread
 * runs the program from that attach point any more) and frees the link.
 * A link holds a use of its program (bpfrt/prog.h): a program freed, or
 * its object closed, while attached keeps running until the link goes.
 * Strings the link accessors return belong to the link.
 *
 * Thread safety: attach, detach and destroy may be called from any thread
 * while the host runs the attach points on others; the link list is kept
 * under one lock. Destroying one link twice, or from two threads, is not
 * allowed.
 *
 * What a program attaches to comes from its SEC() name (the loader sets
 * the kind and target: tp/NAME, raw_tp/NAME, fentry/FUNC, ...) or from
 * bpfrt_attach_opts for programs loaded from bytes.
 *
 * Contexts (r1 of the program):
 *   raw_tp/NAME   u64 args[N]: each argument cast to u64 (pointers and
 *                 integers; signed ones sign-extended)
 *   tp/NAME       struct bpfrt_tp_entry (8 bytes, like Linux's
 *                 trace_entry) followed by the same u64 args[N]:
 *                 ctx + 8 + 8 * i is argument i
 *   fentry, fexit, fmod_ret   u64 args[] (fexit: return value after them)
 *
 * Attached programs run inside an RCU read section with a per-thread
 * recursion guard: a program that would run again while it already runs
 * on this thread is skipped and counted in bpfrt_prog_misses(). */
#ifndef BPFRT_PUBLIC_ATTACH_H
#define BPFRT_PUBLIC_ATTACH_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfrt/opts.h"
#include <stdio.h>

#include "bpfrt/prog.h"
#include "bpfrt/kprobe.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;
struct bpfrt_link;

struct bpfrt_attach_opts {
	size_t sz;                  /* sizeof(struct bpfrt_attach_opts) */
	enum bpfrt_prog_kind kind;  /* 0: the program's own (from its SEC name) */
	/* fentry, fexit, fmod_ret: how many integer argument registers the
	 * host function takes, 1..6; 0 = what its debug info says (DWARF, or
	 * a .BTF section). Where it has debug info a different count is
	 * refused (-EINVAL); where it has none, 0 is refused (-ENODATA): a
	 * wrong count would make fexit read an argument as the return value,
	 * which programs find at ctx[nr_args]. fentry.multi: each function's
	 * debug info, this count (0 = 6) for those without. */
	uint32_t nr_args;
	const char *target;         /* NULL: the program's own attach target */
	uint64_t cookie;            /* bpf_get_attach_cookie() */
};
#define bpfrt_attach_opts__last_field cookie

/* Attaches prog where its kind and target (or opts') say. Returns 0 and
 * *link, or -errno with bpfrt_last_error() set (-ENOENT: no such
 * tracepoint or function; -EOPNOTSUPP: kind not attachable here). */
BPFRT_API int bpfrt_prog_attach(struct bpfrt_prog *prog, const struct bpfrt_attach_opts *opts,
				struct bpfrt_link **link);

/* Detaches (if still attached) and frees. NULL is fine. */
BPFRT_API void bpfrt_link_destroy(struct bpfrt_link *link);
/* Detaches but keeps the link object (listing shows it as detached). */
BPFRT_API int bpfrt_link_detach(struct bpfrt_link *link);

BPFRT_API struct bpfrt_prog *bpfrt_link_prog(const struct bpfrt_link *link);
/* Process-unique id, counting from 1. */
BPFRT_API uint32_t bpfrt_link_id(const struct bpfrt_link *link);
/* "tracepoint", "raw_tracepoint", "fentry", ... */
BPFRT_API const char *bpfrt_link_kind(const struct bpfrt_link *link);
/* What it is attached to: tracepoint name, function name... */
BPFRT_API const char *bpfrt_link_target(const struct bpfrt_link *link);

/* Writes one line per live link of this process:
 *   ID  KIND  PROG  TARGET  [details]
 * Returns the number of links or -errno. */
BPFRT_API int bpfrt_link_list(FILE *out);
/* Number of live links. */
BPFRT_API uint32_t bpfrt_link_count(void);

/* Runs of prog skipped by the recursion guard (Linux's prog->misses). */
BPFRT_API uint64_t bpfrt_prog_misses(const struct bpfrt_prog *prog);
/* Attached runs of prog that aborted (bad callx, ...). */
BPFRT_API uint64_t bpfrt_prog_aborts(const struct bpfrt_prog *prog);

#ifdef __cplusplus
}
#endif
#endif
