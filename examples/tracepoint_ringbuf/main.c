/* A host tracepoint feeding a ring buffer: the program attached to
 * request_done reports failed requests; the host reads the records. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include <bpfrt/bpfrt.h>
#include <bpfrt/tracepoint.h>
#include "event.h"
#include "requests.skel.h"

/* The tracepoint: a 5-byte nop at each site until a program attaches. */
BPFRT_DECLARE_TRACEPOINT(request_done, int status, const char *path);
BPFRT_DEFINE_TRACEPOINT(request_done);

static void serve(const char *path, int status)
{
	/* ... the application's work ... */
	BPFRT_TRACEPOINT(request_done, status, path);
}

static int print_event(void *ctx, void *data, size_t len)
{
	const struct event *e = data;

	if (len < sizeof(*e))
		return 0;
	printf("%d %s%s\n", e->status, e->path, e->tid == (__u32)gettid() ? "" : " (other thread)");
	(*(int *)ctx)++;
	return 0;
}

int main(void)
{
	BPFRT_OPTS(bpfrt_object_load_opts, load_opts, .jit = true);
	struct requests *skel = requests__open();
	int reported = 0, err;

	if (!skel) {
		fprintf(stderr, "open: %s\n", bpfrt_last_error());
		return 1;
	}
	skel->rodata->min_status = 400;
	err = requests__load_opts(skel, &load_opts);
	if (!err)
		err = requests__attach(skel);
	if (err) {
		fprintf(stderr, "load/attach: %s\n", bpfrt_last_error());
		requests__destroy(skel);
		return 1;
	}
	serve("/index.html", 200);
	serve("/missing", 404);
	serve("/api/v1/items", 200);
	serve("/admin", 403);
	serve("/crash", 500);

	/* the records, in order (bpfrt_ringbuf_poll waits for them instead) */
	err = bpfrt_ringbuf_consume(skel->maps.events, print_event, &reported);
	if (err < 0)
		fprintf(stderr, "ringbuf: %s\n", bpfrt_last_error());
	printf("%d of %llu requests reported (status >= %d)\n", reported,
	       (unsigned long long)skel->bss->seen, skel->rodata->min_status);
	requests__destroy(skel);
	return err < 0;
}
