/* On the host's request_done tracepoint: requests whose status is at or
 * above a knob go into a ring buffer, every one is counted in .bss. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "event.h"

char LICENSE[] SEC("license") = "GPL";

const volatile int min_status = 400;  /* knob, set before load */
__u64 seen;                          /* .bss: every request */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 4096);       /* bytes: a power of 2, whole pages */
} events SEC(".maps");

/* tp/ context: an 8-byte header, then the tracepoint's arguments as u64:
 * ctx[1] = status, ctx[2] = path */
SEC("tp/myapp/request_done")
int on_request(__u64 *ctx)
{
	int status = (int)ctx[1];
	const char *path = (const char *)ctx[2];
	struct event *e;

	__sync_fetch_and_add(&seen, 1);
	if (status < min_status)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->status = status;
	bpf_probe_read_user_str(e->path, sizeof(e->path), path);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
