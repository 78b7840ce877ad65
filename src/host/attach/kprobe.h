/* kprobes (kprobe.c): the attach entry point of the link dispatch table.
 * The public API is include/bpfrt/kprobe.h. */
#ifndef BPFRT_ATTACH_KPROBE_H
#define BPFRT_ATTACH_KPROBE_H

#include "bpfrt/kprobe.h"
#include "attach/link.h"

/* SEC("kprobe/FUNC[+OFF]"), SEC("kretprobe/FUNC"); target may be "0xADDR". */
int bpfrt_kprobe_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			     const char *target, uint64_t cookie, uint32_t nr_args,
			     struct bpfrt_link **link);

/* Tests (tools/jit_images): the jmp-mode trampoline of a probe at addr
 * whose displaced bytes are code[0..len) (whole instructions covering 5
 * bytes), as written at `at`, with the site argument site_arg and an FP
 * save by xsave of xsave_bytes (0: fxsave; a function entry saves xmm0-7
 * only). Returns its length in out, or -errno. */
int bpfrt_kprobe_tramp_code(uintptr_t addr, const uint8_t *code, size_t len, bool entry,
			    uint32_t xsave_bytes, uintptr_t site_arg, uintptr_t at,
			    uint8_t *out, size_t cap);

#endif
