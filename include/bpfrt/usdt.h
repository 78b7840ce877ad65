/* USDT probes: the static probes of <sys/sdt.h> (systemtap's .note.stapsdt)
 * in this process's executable and libraries, read by programs with
 * libbpf's usdt.bpf.h (BPF_USDT, bpf_usdt_arg, bpf_usdt_arg_cnt,
 * bpf_usdt_cookie) unmodified. Each site gets a uprobe (bpfrt/uprobe.h)
 * whose BPF cookie is the site's slot in the object's __bpf_usdt_specs
 * map; the site's semaphore, if it has one, is raised while attached.
 *
 * Ownership and thread safety: as every link (bpfrt/attach.h).
 *
 * Section names (bpfrt_prog_attach with the program's own target, or
 * SEC("usdt") and bpfrt_attach_opts.target):
 *   SEC("usdt/BINARY:PROVIDER:NAME")  BINARY as for uprobes: a path, a
 *                                     file name or its stem ("libc")
 *   SEC("usdt/PROVIDER:NAME")         the first loaded module that has it,
 *                                     the executable first
 * The attach cookie (bpfrt_attach_opts.cookie) is the usdt cookie. A
 * BINARY not loaded yet is waited for as a uprobe's (bpfrt/uprobe.h): the
 * link is pending (bpfrt_uprobe_pending) until bpfrt_uprobe_refresh(),
 * which the agent calls after each dlopen, finds the library; then its
 * sites are probed and its semaphores raised. A BINARY given as a path
 * is read at once: a file without the probe is refused then. */
#ifndef BPFRT_PUBLIC_USDT_H
#define BPFRT_PUBLIC_USDT_H

#include "bpfrt/export.h"

#include <stddef.h>
#include <stdint.h>

#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;
struct bpfrt_link;

struct bpfrt_usdt_opts {
	size_t sz;              /* sizeof(struct bpfrt_usdt_opts) */
	uint64_t usdt_cookie;   /* bpf_usdt_cookie() */
};
#define bpfrt_usdt_opts__last_field usdt_cookie

/* libbpf's bpf_program__attach_usdt for this process: binary is a path, a
 * file name or NULL (the first loaded module with the probe). Returns 0
 * and *link (pending if binary is not loaded yet), or -errno with
 * bpfrt_last_error() naming the probe: -ENOENT (a path naming no file, no
 * such probe in a loaded binary or in a path's file), -EINVAL (no
 * usdt.bpf.h maps in the object, a malformed note or an argument spec
 * bpfrt cannot read), -E2BIG (no free spec slot), or the uprobe's errors.
 * For a pending link, these come from bpfrt_uprobe_refresh() instead. */
BPFRT_API int bpfrt_usdt_attach(struct bpfrt_prog *prog, const char *binary,
				const char *provider, const char *name,
				const struct bpfrt_usdt_opts *opts, struct bpfrt_link **link);

#ifdef __cplusplus
}
#endif
#endif
