/* Links: what every attach kind returns (see include/bpfrt/attach.h).
 *
 * An attach kind embeds struct bpfrt_link in its own link struct, fills it
 * with bpfrt_link_init() and, once the program is live, makes it visible
 * with bpfrt_link_publish(). bpfrt_link_destroy() then calls ops->detach
 * (once) and ops->dealloc. */
#ifndef BPFRT_ATTACH_LINK_H
#define BPFRT_ATTACH_LINK_H

#include "bpfrt/attach.h"
#include "core/prog.h"

#include <stdio.h>

/* memfd holding the process's link listing (see link.c); `bpfrt links`
 * finds it as /proc/PID/fd/N -> "/memfd:bpfrt-links (deleted)". */
#define BPFRT_LINKS_MEMFD "bpfrt-links"

struct bpfrt_link_ops {
	const char *kind;       /* "tracepoint", "fentry", ... */
	/* Unhooks the program; when it returns no thread may still run it
	 * from this attach point (wait a grace period). Returns 0 or -errno. */
	int (*detach)(struct bpfrt_link *link);
	/* Frees the containing struct. */
	void (*dealloc)(struct bpfrt_link *link);
	/* Optional: extra details after the target in listings. */
	void (*show)(const struct bpfrt_link *link, FILE *out);
};

struct bpfrt_link {
	const struct bpfrt_link_ops *ops;
	struct bpfrt_prog *prog;
	char *target;
	uint64_t cookie;
	uint32_t id;
	bool detached;
	bool published;
	bool holds_prog;                 /* a use of prog, dropped by bpfrt_link_release */
	struct bpfrt_link *next, *prev;  /* live links, under the list lock */
};

/* target is copied. Returns 0 or -ENOMEM. */
int bpfrt_link_init(struct bpfrt_link *link, const struct bpfrt_link_ops *ops,
		    struct bpfrt_prog *prog, const char *target, uint64_t cookie);
/* Assigns the id and adds the link to the process-wide list. */
void bpfrt_link_publish(struct bpfrt_link *link);
/* Frees what bpfrt_link_init allocated (the target); for dealloc and for
 * failed attaches before publish. */
void bpfrt_link_release(struct bpfrt_link *link);

/* Attach entry points per kind (the dispatch table in link.c). Each gets
 * the resolved target, cookie and nr_args (bpfrt_attach_opts: the host
 * function's argument count for trampoline kinds, 0 = 6; others ignore it). */
typedef int (*bpfrt_attach_fn)(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			       const char *target, uint64_t cookie, uint32_t nr_args,
			       struct bpfrt_link **link);

int bpfrt_tracepoint_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
				 const char *target, uint64_t cookie, uint32_t nr_args,
				 struct bpfrt_link **link);

#endif
