/* uprobes and uretprobes: programs at functions of the process's own
 * executable and libraries, named the way libbpf names them, run by the
 * kprobe engine (bpfrt/kprobe.h: jmp mode where the displaced
 * instructions relocate, int3 otherwise).
 *
 * Ownership and thread safety: as every link (bpfrt/attach.h).
 *
 * Section names (bpfrt_prog_attach with the program's own target):
 *   SEC("uprobe/FUNC")              FUNC in the executable, else in the
 *                                   first loaded library that has it
 *   SEC("uprobe/FUNC+OFF")          OFF bytes in (an instruction boundary)
 *   SEC("uprobe/BINARY:FUNC[+OFF]") FUNC of BINARY: an absolute path (the
 *                                   executable's or a library's, symlinks
 *                                   resolved), a file name ("libc.so.6") or
 *                                   its stem ("libc")
 *   SEC("uprobe/BINARY:0xOFF")      file offset OFF in BINARY, as libbpf
 *   SEC("uprobe/0xADDR")            an address of this process
 *   SEC("uretprobe/...")            the same at a function's entry; the
 *                                   program runs when it returns
 * A BINARY not loaded yet is waited for: the link is pending until the
 * library appears (bpfrt_uprobe_refresh(), which the agent calls after
 * each dlopen) and the probe is placed then (bpfrt_uprobe_pending() says
 * which it is). A binary that is loaded and lacks the function is
 * refused at once.
 *
 * Context: struct bpfrt_pt_regs (bpfrt/kprobe.h), Linux's x86-64 struct
 * pt_regs, so bpf_tracing.h's BPF_UPROBE, BPF_URETPROBE, PT_REGS_PARM1..6
 * and PT_REGS_RC work unmodified with -D__TARGET_ARCH_x86. */
#ifndef BPFRT_PUBLIC_UPROBE_H
#define BPFRT_PUBLIC_UPROBE_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfrt/kprobe.h"
#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;
struct bpfrt_link;

struct bpfrt_uprobe_opts {
	size_t sz;              /* sizeof(struct bpfrt_uprobe_opts) */
	uint64_t cookie;        /* bpf_get_attach_cookie() */
	bool retprobe;          /* uretprobe (at a function's entry) */
	/* the function in binary; func_offset is then added to it, else
	 * func_offset is a file offset in binary (binary NULL: an address) */
	const char *func_name;
	enum bpfrt_kprobe_mode mode;
};
#define bpfrt_uprobe_opts__last_field mode

/* libbpf's bpf_program__attach_uprobe_opts for this process: binary is a
 * path, a file name or NULL (any loaded object, or an address when no
 * func_name). Returns 0 and *link (possibly pending, see above), or
 * -errno with bpfrt_last_error(): -EINVAL (bad arguments, not code, not
 * an instruction boundary), -ENOENT (no such file, or a loaded binary
 * without the function), -EOPNOTSUPP and -EBUSY as bpfrt_kprobe_attach. */
BPFRT_API int bpfrt_uprobe_attach(struct bpfrt_prog *prog, const char *binary,
				  size_t func_offset, const struct bpfrt_uprobe_opts *opts,
				  struct bpfrt_link **link);

/* Places the pending uprobes and USDT links (bpfrt/usdt.h) whose binary
 * is loaded now. Returns how many links were placed, or -errno of the first failure (the rest are still tried;
 * a failed probe stays pending). */
BPFRT_API int bpfrt_uprobe_refresh(void);

/* True while link is a uprobe or USDT link still waiting for its binary. */
BPFRT_API bool bpfrt_uprobe_pending(const struct bpfrt_link *link);

#ifdef __cplusplus
}
#endif
#endif
