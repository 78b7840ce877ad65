/* uprobes (uprobe.c): the attach entry point of the link dispatch table.
 * The public API is include/bpfrt/uprobe.h. */
#ifndef BPFRT_UPROBE_UPROBE_H
#define BPFRT_UPROBE_UPROBE_H

#include "bpfrt/uprobe.h"
#include "attach/link.h"

/* SEC("uprobe/TARGET"), SEC("uretprobe/TARGET"): TARGET as bpfrt/uprobe.h
 * lists; a uretprobe is told apart by the program's section name. */
int bpfrt_uprobe_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			     const char *target, uint64_t cookie, uint32_t nr_args,
			     struct bpfrt_link **link);

/* Splits a section target into binary (NULL if none), function (NULL for
 * an offset or address) and offset. Returns 0 or -EINVAL with a message
 * naming the target. Strings point into buf (cap bytes). */
int bpfrt_uprobe_parse_target(const char *target, char *buf, size_t cap, const char **binary,
			      const char **func, uint64_t *offset);

#endif
