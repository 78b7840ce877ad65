/* Links: the process-wide list, detach/destroy and the attach dispatch. */
#define _GNU_SOURCE
#include "attach/link.h"
#include "attach/attach_kind.h"
#include "attach/trampoline.h" /* bpfrt_attach_nr_args */
#include "core/config.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/prog.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bpfrt_link *links_head;
static uint32_t links_cnt;
static uint32_t next_link_id = 1;

static void snapshot_locked(void);

int bpfrt_link_init(struct bpfrt_link *link, const struct bpfrt_link_ops *ops,
		    struct bpfrt_prog *prog, const char *target, uint64_t cookie)
{
	memset(link, 0, sizeof(*link));
	link->ops = ops;
	link->prog = prog;
	link->cookie = cookie;
	link->target = strdup(target ? target : "");
	if (!link->target)
		return bpfrt_err(-ENOMEM, "attach: out of memory");
	/* the link keeps its program alive until it is released */
	bpfrt_prog_hold(prog);
	link->holds_prog = true;
	return 0;
}

void bpfrt_link_release(struct bpfrt_link *link)
{
	free(link->target);
	link->target = NULL;
	if (link->holds_prog) {
		link->holds_prog = false;
		bpfrt_prog_release(link->prog);
	}
}

void bpfrt_link_publish(struct bpfrt_link *link)
{
	pthread_mutex_lock(&links_lock);
	link->id = next_link_id++;
	link->prev = NULL;
	link->next = links_head;
	if (links_head)
		links_head->prev = link;
	links_head = link;
	links_cnt++;
	link->published = true;
	snapshot_locked();
	pthread_mutex_unlock(&links_lock);
}

static void link_unpublish(struct bpfrt_link *link)
{
	pthread_mutex_lock(&links_lock);
	if (link->published) {
		if (link->prev)
			link->prev->next = link->next;
		else
			links_head = link->next;
		if (link->next)
			link->next->prev = link->prev;
		links_cnt--;
		link->published = false;
		snapshot_locked();
	}
	pthread_mutex_unlock(&links_lock);
}

int bpfrt_link_detach(struct bpfrt_link *link)
{
	int err;

	if (!link)
		return bpfrt_err(-EINVAL, "link_detach: NULL link");
	if (link->detached)
		return 0;
	err = link->ops->detach(link);
	if (err)
		return err;
	pthread_mutex_lock(&links_lock);
	link->detached = true;
	if (link->published)
		snapshot_locked();
	pthread_mutex_unlock(&links_lock);
	return 0;
}

void bpfrt_link_destroy(struct bpfrt_link *link)
{
	if (!link)
		return;
	bpfrt_link_detach(link);
	link_unpublish(link);
	link->ops->dealloc(link);
}

struct bpfrt_prog *bpfrt_link_prog(const struct bpfrt_link *link)
{
	return link ? link->prog : NULL;
}

uint32_t bpfrt_link_id(const struct bpfrt_link *link)
{
	return link ? link->id : 0;
}

const char *bpfrt_link_kind(const struct bpfrt_link *link)
{
	return link ? link->ops->kind : "";
}

const char *bpfrt_link_target(const struct bpfrt_link *link)
{
	return link && link->target ? link->target : "";
}

uint32_t bpfrt_link_count(void)
{
	uint32_t n;

	pthread_mutex_lock(&links_lock);
	n = links_cnt;
	pthread_mutex_unlock(&links_lock);
	return n;
}

static int list_locked(FILE *out)
{
	struct bpfrt_link *last = links_head;
	int n = 0;

	/* Oldest first: the list is pushed at the head. */
	while (last && last->next)
		last = last->next;
	for (struct bpfrt_link *l = last; l; l = l->prev, n++) {
		fprintf(out, "%u: %s  prog %s  target %s", l->id, l->ops->kind,
			bpfrt_prog_name(l->prog), l->target);
		if (l->cookie)
			fprintf(out, "  cookie 0x%llx", (unsigned long long)l->cookie);
		fprintf(out, "  misses %llu", (unsigned long long)bpfrt_prog_misses(l->prog));
		if (l->detached)
			fprintf(out, "  (detached)");
		if (l->ops->show)
			l->ops->show(l, out);
		fputc('\n', out);
	}
	return n;
}

int bpfrt_link_list(FILE *out)
{
	int n;

	if (!out)
		return bpfrt_err(-EINVAL, "link_list: NULL stream");
	pthread_mutex_lock(&links_lock);
	n = list_locked(out);
	pthread_mutex_unlock(&links_lock);
	return n;
}

/* The listing of this process's links, kept in a memfd named
 * BPFRT_LINKS_MEMFD so that `bpfrt links` can read it from outside through
 * /proc/PID/fd (same user or root; nothing on disk, gone with the
 * process). First line "pid N". Rewritten on every attach and detach;
 * BPFRT_NO_LINK_SNAPSHOT=1 turns it off. */
static void snapshot_locked(void)
{
	static int fd = -1, disabled = -1;
	static pid_t owner;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (disabled < 0)
		disabled = bpfrt_config()->no_link_snapshot;
	if (disabled)
		return;
	if (fd < 0 || owner != getpid()) {
		/* after fork the inherited fd is the parent's listing */
		fd = memfd_create(BPFRT_LINKS_MEMFD, MFD_CLOEXEC);
		owner = getpid();
		if (fd < 0) {
			disabled = 1;
			return;
		}
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	fprintf(f, "pid %d\n", (int)owner);
	list_locked(f);
	if (fclose(f) == 0 && pwrite(fd, buf, len, 0) == (ssize_t)len)
		(void)!ftruncate(fd, (off_t)len);
	free(buf);
}

/* ---- dispatch ------------------------------------------------------------ */

int bpfrt_prog_attach(struct bpfrt_prog *prog, const struct bpfrt_attach_opts *opts,
		      struct bpfrt_link **link)
{
	const struct bpfrt_prog_kind_desc *desc;
	bpfrt_attach_fn attach;
	const char *target;
	int kind;

	bpfrt_err_clear();
	if (!prog || !link)
		return bpfrt_err(-EINVAL, "prog_attach: NULL argument");
	*link = NULL;
	if (!OPTS_VALID(opts, bpfrt_attach_opts))
		return -EINVAL;
	/* not before its load is complete: verified and the context reach
	 * are only final then */
	if (!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE))
		return bpfrt_err(-EINVAL, "prog_attach: %s is not loaded", prog->name);
	kind = OPTS_GET(opts, kind, 0) ? (int)opts->kind : prog->kind;
	target = OPTS_GET(opts, target, NULL) ? opts->target : prog->attach_target;
	desc = bpfrt_prog_kind_desc(kind);
	if (!desc)
		return bpfrt_err(-EINVAL, "prog_attach: %s: kind %d is no program kind", prog->name,
				 kind);
	attach = bpfrt_attach_kind_fn(kind);
	if (!desc->info.attachable || !attach)
		return bpfrt_err(-EOPNOTSUPP, "prog_attach: %s: kind %s cannot attach in this process",
				 prog->name, desc->short_name);
	if (!target || !*target)
		return bpfrt_err(-EINVAL, "prog_attach: %s: no attach target (SEC name or opts->target)",
				 prog->name);
	return attach(prog, (enum bpfrt_prog_kind)kind, target, OPTS_GET(opts, cookie, 0),
		      OPTS_GET(opts, nr_args, 0), link);
}
