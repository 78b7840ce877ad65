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

#endif
