/* libbpfrt-agent.so: bpfrt inside a process that was never built for it.
 *
 * `bpfrt trace OBJ -- CMD` starts CMD with this library in LD_PRELOAD and
 * BPFRT_AGENT_FD naming its end of a control socket (proto.h). The
 * constructor runs before the target's main: it serves LOAD requests
 * (open the object from the descriptor, load, verify, JIT, attach every
 * program that names its target; the result and the verifier log go
 * back verbatim) until GO, so no event before main is missed. A service
 * thread then streams trace_printk lines and ring buffer records,
 * answers DUMP and DETACH, and
 * detaches everything when the controller goes away. At exit the agent
 * sends the final dump of every map.
 *
 * The agent is the host layer plus this file: libbpfrt.a is linked in
 * with its symbols hidden, so a target that itself uses libbpfrt keeps
 * its own copy, and only the interposed dlopen is exported (uprobes on
 * libraries loaded later are placed as soon as dlopen returns).
 *
 * Fork: a child gets the parent's patched code; the atfork child handler
 * detaches every link there (the code is the original again) and drops
 * the socket, so only the process the controller started reports. */
#define _GNU_SOURCE
#include "proto.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/uprobe.h"
#include "core/config.h"
#include "attach/helpers_tracing.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define AGENT_API __attribute__((visibility("default")))
#define MAX_OBJECTS 16
#define MAX_LINKS 256
#define LOG_SIZE (AGENT_MAX_PAYLOAD - 1024)

static int ctl = -1;                   /* the control socket; -1: not traced */
static pid_t owner;                    /* the process it belongs to (not a fork child) */
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bpfrt_object *objs[MAX_OBJECTS];
static int obj_cnt;
static struct bpfrt_link *links[MAX_LINKS];
static int link_cnt;
static char *log_buf;                  /* the verifier log of the load in progress */

static int send_msg(uint32_t type, int32_t err, const void *a, size_t alen, const void *b,
		    size_t blen)
{
	int r;

	if (ctl < 0 || getpid() != owner)
		return -ENOTCONN;
	pthread_mutex_lock(&send_lock);
	r = agent_send(ctl, type, err, a, alen, b, blen, -1);
	pthread_mutex_unlock(&send_lock);
	return r;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	send_msg(AGENT_NOTE, 0, buf, n < 0 ? 0 : (size_t)n >= sizeof(buf) ? sizeof(buf) - 1 : (size_t)n,
		 NULL, 0);
}

/* ---- load and attach ------------------------------------------------------- */

static bool can_attach(const struct bpfrt_prog *p)
{
	const struct bpfrt_prog_kind_info *k = bpfrt_prog_kind_info(bpfrt_prog_kind(p));
	const char *t = bpfrt_prog_attach_target(p);

	return k && k->attachable && t && *t;
}

/* Attaches every program of obj that names its target. Under state_lock.
 * 0 or the first error (its message in *msg). */
static int attach_all(struct bpfrt_object *obj, char *msg, size_t cap)
{
	for (struct bpfrt_prog *p = bpfrt_object_next_prog(obj, NULL); p;
	     p = bpfrt_object_next_prog(obj, p)) {
		struct bpfrt_link *l;
		int err;

		if (!can_attach(p)) {
			note("%s (%s): not attached (no attach target in its section)",
			     bpfrt_prog_name(p), bpfrt_prog_section(p));
			continue;
		}
		if (link_cnt == MAX_LINKS) {
			snprintf(msg, cap, "more than %d programs to attach", MAX_LINKS);
			return -E2BIG;
		}
		err = bpfrt_prog_attach(p, NULL, &l);
		if (err) {
			snprintf(msg, cap, "attach %s (%s): %s", bpfrt_prog_name(p),
				 bpfrt_prog_section(p), bpfrt_last_error());
			return err;
		}
		links[link_cnt++] = l;
		if (bpfrt_uprobe_pending(l))
			note("%s: %s is not loaded yet; placed when it is", bpfrt_prog_name(p),
			     bpfrt_link_target(l));
	}
	return 0;
}

static void detach_all(void)
{
	pthread_mutex_lock(&state_lock);
	/* newest first, as they were stacked */
	while (link_cnt > 0)
		bpfrt_link_destroy(links[--link_cnt]);
	pthread_mutex_unlock(&state_lock);
}

static void do_load(const struct agent_load *req, const char *name, int fd)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .name = name);
	char path[64], msg[1024] = "";
	struct bpfrt_object *obj = NULL;
	int err;

	if (!log_buf && !(log_buf = malloc(LOG_SIZE))) {
		send_msg(AGENT_RESULT, -ENOMEM, "agent: out of memory", 20, NULL, 0);
		return;
	}
	log_buf[0] = 0;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = !(req->flags & AGENT_LOAD_INTERP),
		   .log_buf = log_buf, .log_size = LOG_SIZE,
		   .log_level = req->log_level ? req->log_level : 1);
	pthread_mutex_lock(&state_lock);
	int first_link = link_cnt;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (obj_cnt == MAX_OBJECTS) {
		err = -E2BIG;
		snprintf(msg, sizeof(msg), "more than %d objects", MAX_OBJECTS);
	} else if ((err = bpfrt_object_open(path, &oo, &obj)) ||
		   (err = bpfrt_object_load(obj, &lo))) {
		snprintf(msg, sizeof(msg), "%s", bpfrt_last_error());
	} else {
		err = attach_all(obj, msg, sizeof(msg));
	}
	if (err) {
		/* all of this object or nothing */
		while (link_cnt > first_link)
			bpfrt_link_destroy(links[--link_cnt]);
		bpfrt_object_close(obj);
	} else {
		objs[obj_cnt++] = obj;
	}
	pthread_mutex_unlock(&state_lock);
	/* the message, then the log as the verifier wrote it (a failed load
	 * always, a good one at an asked-for level) */
	size_t ml = strlen(msg), ll = (err || req->log_level) ? strlen(log_buf) : 0;

	if (ml && ll)
		msg[ml++] = '\n';
	if (ml + ll > AGENT_MAX_PAYLOAD)
		ll = AGENT_MAX_PAYLOAD - ml;
	send_msg(AGENT_RESULT, err, msg, ml, log_buf, ll);
	close(fd);
}

/* ---- dump ------------------------------------------------------------------ */

static void dump_map(struct bpfrt_map *m)
{
	struct agent_map am = {
		.type = bpfrt_map_type(m), .key_size = bpfrt_map_key_size(m),
		.value_size = bpfrt_map_value_size(m),
		.value_buf_size = (uint32_t)bpfrt_map_value_buf_size(m),
		.max_entries = bpfrt_map_max_entries(m),
	};
	size_t ks = am.key_size, vs = am.value_buf_size;
	uint8_t *key, *next, *val;

	snprintf(am.name, sizeof(am.name), "%s", bpfrt_map_name(m));
	if (am.type == BPF_MAP_TYPE_RINGBUF || am.type == BPF_MAP_TYPE_PROG_ARRAY || !ks) {
		send_msg(AGENT_MAP, 0, &am, sizeof(am), NULL, 0);
		return;
	}
	key = calloc(1, ks);
	next = calloc(1, ks);
	val = calloc(1, vs ? vs : 1);
	if (!key || !next || !val)
		goto out;
	if (ks + vs > AGENT_MAX_PAYLOAD)
		am.skipped = 1;
	send_msg(AGENT_MAP, 0, &am, sizeof(am), NULL, 0);
	if (am.skipped)
		goto out;
	for (int err = bpfrt_map_get_next_key(m, NULL, next); !err;
	     err = bpfrt_map_get_next_key(m, key, next)) {
		memcpy(key, next, ks);
		if (bpfrt_map_lookup_elem(m, key, val))
			continue;
		send_msg(AGENT_ENTRY, 0, key, ks, val, vs);
	}
out:
	free(key);
	free(next);
	free(val);
}

static void dump_all(void)
{
	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < obj_cnt; i++)
		for (struct bpfrt_map *m = bpfrt_object_next_map(objs[i], NULL); m;
		     m = bpfrt_object_next_map(objs[i], m))
			dump_map(m);
	pthread_mutex_unlock(&state_lock);
	send_msg(AGENT_DONE, 0, NULL, 0, NULL, 0);
}

/* ---- ring buffers: records go to the controller as they come ----------------- */

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;  /* one consumer at a time */

static int ring_record(void *ctx, void *data, size_t len)
{
	char name[64];

	snprintf(name, sizeof(name), "%s", bpfrt_map_name(ctx));
	if (len > AGENT_MAX_PAYLOAD - sizeof(name))
		len = AGENT_MAX_PAYLOAD - sizeof(name);
	send_msg(AGENT_RINGBUF, 0, name, sizeof(name), data, len);
	return 0;
}

static void drain_rings(void)
{
	pthread_mutex_lock(&ring_lock);
	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < obj_cnt; i++)
		for (struct bpfrt_map *m = bpfrt_object_next_map(objs[i], NULL); m;
		     m = bpfrt_object_next_map(objs[i], m))
			if (bpfrt_map_type(m) == BPF_MAP_TYPE_RINGBUF)
				bpfrt_ringbuf_consume(m, ring_record, m);
	pthread_mutex_unlock(&state_lock);
	pthread_mutex_unlock(&ring_lock);
}

static int printk_line(void *ctx, const char *line, size_t len)
{
	send_msg(AGENT_PRINTK, 0, line, len, NULL, 0);
	return 0;
}

/* One drainer at a time: a line is taken off the trace ring before it is
 * sent, so without this the exit path could send EXIT while the service
 * thread still holds a line it took, and the controller, which stops
 * reading at EXIT, would never see it. */
static pthread_mutex_t printk_lock = PTHREAD_MUTEX_INITIALIZER;

static void drain_printk(void)
{
	pthread_mutex_lock(&printk_lock);
	bpfrt_trace_drain(printk_line, NULL);
	pthread_mutex_unlock(&printk_lock);
}

/* ---- the session ----------------------------------------------------------- */

/* Serves one request. Returns 1 after GO, -1 when the controller is
 * gone, else 0. */
static int serve_one(void)
{
	static char buf[4096];
	struct agent_msg h;
	int fd, err = agent_recv(ctl, &h, buf, sizeof(buf) - 1, &fd);

	if (err == -EMSGSIZE || err == -EAGAIN) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (err)
		return -1;
	buf[h.len] = 0;
	switch (h.type) {
	case AGENT_LOAD:
		if (h.len < sizeof(struct agent_load) || fd < 0) {
			send_msg(AGENT_RESULT, -EINVAL, "agent: LOAD without an object", 29, NULL, 0);
			break;
		}
		do_load((const struct agent_load *)buf, buf + sizeof(struct agent_load), fd);
		fd = -1;
		break;
	case AGENT_GO:
		return 1;
	case AGENT_DUMP:
		drain_printk();
		drain_rings();
		dump_all();
		break;
	case AGENT_DETACH:
		detach_all();
		send_msg(AGENT_DONE, 0, NULL, 0, NULL, 0);
		break;
	default:
		break;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

static void *service(void *arg)
{
	int sock = ctl;

	for (;;) {
		struct pollfd p = { .fd = ctl, .events = POLLIN };
		int n = poll(&p, 1, 50);

		drain_printk();
		drain_rings();
		if (n > 0 && serve_one() < 0)
			break;
	}
	/* the controller is gone: leave the target as it was, ready for the
	 * next one (bpfrt trace -p calls bpfrt_agent_connect again) */
	detach_all();
	pthread_mutex_lock(&send_lock);
	ctl = -1;
	pthread_mutex_unlock(&send_lock);
	close(sock);
	return NULL;
}

static void at_exit(void)
{
	if (ctl < 0 || getpid() != owner)
		return;
	drain_printk();
	drain_rings();
	dump_all();
	send_msg(AGENT_EXIT, 0, NULL, 0, NULL, 0);
}

static void in_child(void)
{
	/* the child runs the original code and says nothing to the
	 * controller (send_msg checks owner); the fork copied the links */
	if (ctl < 0)
		return;
	while (link_cnt > 0)
		bpfrt_link_destroy(links[--link_cnt]);
	close(ctl);
	ctl = -1;
}

static void start_service(void)
{
	static bool once;
	pthread_t t;

	if (!once) {
		once = true;
		pthread_atfork(NULL, NULL, in_child);
		atexit(at_exit);
	}
	if (pthread_create(&t, NULL, service, NULL) == 0)
		pthread_detach(t);
}

__attribute__((constructor)) static void agent_start(void)
{
	const struct bpfrt_config_text *fdv = &bpfrt_config()->agent_fd;
	char *end;
	long fd;
	int r;

	if (!fdv->set || !*fdv->value)
		return;
	/* the service thread may load an object before this library's
	 * other constructors ran: the tracing helpers go in first */
	bpfrt_tracing_helpers_init();
	fd = strtol(fdv->value, &end, 10);
	/* the command's own children are not traced by this socket */
	unsetenv("BPFRT_AGENT_FD");
	if (*end || fd < 0 || fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
		return;
	ctl = (int)fd;
	owner = getpid();
	while ((r = serve_one()) == 0)
		;
	if (r < 0) {
		detach_all();
		close(ctl);
		ctl = -1;
		return;
	}
	start_service();
}

/* A running process (bpfrt trace -p): the controller called dlopen on the
 * agent, then this, through ptrace, with every thread stopped. It
 * connects to the controller's socket (abstract, named by this pid),
 * which must be root's or this user's, and returns: LOAD comes over the
 * service thread. 0 or -errno. */
AGENT_API int bpfrt_agent_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd, n;

	if (ctl >= 0)
		return -EBUSY;
	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, AGENT_SOCKET_FMT, (int)getpid());
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
							    1 + (size_t)n)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	if (cred.uid != 0 && cred.uid != getuid()) {
		close(fd);
		return -EPERM;
	}
	ctl = fd;
	owner = getpid();
	start_service();
	return 0;
}

/* dlopen as the program calls it, then the uprobes waiting for the
 * library placed before it runs any of its code. (The loader takes the
 * caller's RUNPATH from the return address: a bare name dlopen'ed by an
 * object that relies on its own RUNPATH is looked up with the agent's,
 * which has none; LD_LIBRARY_PATH and absolute names are unaffected.) */
AGENT_API void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && ctl >= 0 && bpfrt_uprobe_refresh() < 0)
		note("dlopen %s: %s", file ? file : "(main)", bpfrt_last_error());
	return h;
}
