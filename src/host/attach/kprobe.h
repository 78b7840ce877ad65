/* kprobes (kprobe.c): the attach entry point of the link dispatch table.
 * The public API is include/bpfrt/kprobe.h. */
#ifndef BPFRT_ATTACH_KPROBE_H
#define BPFRT_ATTACH_KPROBE_H

#include "bpfrt/kprobe.h"
#include "attach/link.h"

/* SEC("kprobe/FUNC[+OFF]"), SEC("kretprobe/FUNC"); target may be "0xADDR". */
int bpfrt_kprobe_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			     const char *target, uint64_t cookie, struct bpfrt_link **link);

#endif
