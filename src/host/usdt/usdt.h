/* USDT probes (usdt.c): the attach entry point for SEC("usdt/...").
 * The public API is include/bpfrt/usdt.h. */
#ifndef BPFRT_USDT_USDT_H
#define BPFRT_USDT_USDT_H

#include "bpfrt/usdt.h"
#include "attach/link.h"

/* target is [BINARY:]PROVIDER:NAME; cookie becomes the usdt cookie
 * (bpf_usdt_cookie), as the attach cookie is the spec id. */
int bpfrt_usdt_attach_prog(struct bpfrt_prog *prog, const char *target, uint64_t cookie,
			   struct bpfrt_link **link);

struct uprobe_waiter;

/* The waiter of a usdt link (uprobe.h; bpfrt_uprobe_pending reads it), or
 * NULL for a link of another kind. */
const struct uprobe_waiter *usdt_link_waiter(const struct bpfrt_link *link);

#endif
