/* uprobes (uprobe.c): the attach entry point of the link dispatch table.
 * The public API is include/bpfrt/uprobe.h. */
#ifndef BPFRT_UPROBE_UPROBE_H
#define BPFRT_UPROBE_UPROBE_H

#include "bpfrt/uprobe.h"
#include "attach/link.h"

#include <stdbool.h>

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

/* A link of another attach module (usdt.c) that waits, as a pending
 * uprobe does, for its binary to be loaded. place() runs under the uprobe
 * lock, at uprobe_wait() and at every bpfrt_uprobe_refresh() until it
 * places: it returns 0 (placed), 1 (binary not loaded yet) or -errno (a
 * failure; at a refresh the waiter stays queued and last_err says why).
 * place() may attach and destroy uprobes: the thread holding the lock may
 * (bpfrt_uprobe_attach and uprobe detach do not take it again). */
struct uprobe_waiter {
	int (*place)(struct uprobe_waiter *w);
	struct uprobe_waiter *next;
	bool queued;
	int last_err;
};

/* Calls place() once under the lock and queues w if it returns 1.
 * Returns 0 (placed or queued) or place()'s -errno (not queued). */
int uprobe_wait(struct uprobe_waiter *w);

/* Takes w off the queue; once it returns, place() is not running and
 * never runs again for w. */
void uprobe_unwait(struct uprobe_waiter *w);

/* w is queued (its binary was not loaded yet at the last try). */
bool uprobe_waiting(const struct uprobe_waiter *w);

#endif
