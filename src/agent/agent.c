/* libbpfrt-agent.so: bpfrt inside a process that was never built for it.
 *
 * `bpfrt trace OBJ -- CMD` starts CMD with this library in LD_PRELOAD and
 * BPFRT_AGENT_FD naming its end of a control socket (proto.h). The
 * constructor runs before the target's main: it serves LOAD requests
 * (open the object from the descriptor, load, verify, JIT, attach every
 * program that names its target; the result and the verifier log go
 * back verbatim) until GO, so no event before main is missed. A service
 * thread then streams trace_printk lines and ring buffer records,
 * answers DUMP, DETACH and the map requests, and detaches a controller's
 * links when it goes away. At exit the agent sends the final dump of
 * every map.
 *
 * Controllers: the first is the command's launcher (or the injector of
 * bpfrt trace -p); the service thread also listens on an abstract socket
 * named after the pid (proto.h) for more: a second bpfrt trace -p with
 * another object, bpfrt map dump -p, bpfrt trace --detach. Each session
 * owns its objects and links; its end removes only those.
 *
 * Maps of the objects are made in shared memory where their kind allows
 * (arrays, per-CPU arrays, ring buffers, hash maps: BPFRT_MAP_F_SHARED):
 * their memfds go to the controllers that ask, which read values in place
 * (and write arrays' in place) and consume ring buffers themselves; hash
 * updates and the other kinds go through the channel.
 *
 * The agent is the host layer plus this file: libbpfrt.a is linked in
 * with its symbols hidden, so a target that itself uses libbpfrt keeps
 * its own copy, and only the interposed dlopen is exported (uprobes on
 * libraries loaded later are placed as soon as dlopen returns).
 *
 * Fork: a child gets the parent's patched code; the atfork child handler
 * detaches every link there (the code is the original again) and drops
 * the sockets, so only the process the controller started reports. A
 * --follow-fork session's links stay in the child until its controller's
 * socket hangs up (child_watch). */
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
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#define AGENT_API __attribute__((visibility("default")))
#define MAX_SESSIONS 8
#define MAX_OBJECTS 16
#define MAX_LINKS 256
#define LOG_SIZE (AGENT_MAX_PAYLOAD - 1024)

/* One controller's session: its socket, the objects it loaded (with the
 * file each came from, handed to controllers that ask for the BTF) and
 * the links it made. sock < 0: a free slot. sock changes only under
 * state_lock and send_lock; only the service thread (and, before it
 * starts, the constructor) receives on it. */
struct session {
	int sock;
	bool rings_taken;       /* its controller consumes its ring buffers */
	bool follow_fork;       /* fork children keep its links (AGENT_LOAD_FOLLOW_FORK) */
	int obj_cnt;
	struct bpfrt_object *objs[MAX_OBJECTS];
	int obj_fds[MAX_OBJECTS];
	int link_cnt;
	struct bpfrt_link *links[MAX_LINKS];
};

static struct session sessions[MAX_SESSIONS];
static int listener = -1;              /* the abstract socket later controllers connect to */
static pid_t owner;                    /* the process it belongs to (not a fork child) */
static bool traced;                    /* a controller came once: the service runs */
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static char *log_buf;                  /* the verifier log of the load in progress */

static int send_msg(struct session *s, uint32_t type, int32_t err, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	int r = -ENOTCONN;

	if (getpid() != owner)
		return -ENOTCONN;
	pthread_mutex_lock(&send_lock);
	if (s->sock >= 0)
		r = agent_send(s->sock, type, err, a, alen, b, blen, -1);
	pthread_mutex_unlock(&send_lock);
	return r;
}

static int send_fd(struct session *s, uint32_t type, const void *a, size_t alen, int fd)
{
	int r = -ENOTCONN;

	pthread_mutex_lock(&send_lock);
	if (s->sock >= 0)
		r = agent_send(s->sock, type, 0, a, alen, NULL, 0, fd);
	pthread_mutex_unlock(&send_lock);
	return r;
}

static void note(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct session *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	send_msg(s, AGENT_NOTE, 0, buf,
		 n < 0 ? 0 : (size_t)n >= sizeof(buf) ? sizeof(buf) - 1 : (size_t)n, NULL, 0);
}

static struct session *session_new(int sock)
{
	struct session *s = NULL;

	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < MAX_SESSIONS && !s; i++)
		if (sessions[i].sock < 0) {
			s = &sessions[i];
			memset(s, 0, sizeof(*s));
			pthread_mutex_lock(&send_lock);
			s->sock = sock;
			pthread_mutex_unlock(&send_lock);
		}
	pthread_mutex_unlock(&state_lock);
	return s;
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
static int attach_all(struct session *s, struct bpfrt_object *obj, char *msg, size_t cap)
{
	for (struct bpfrt_prog *p = bpfrt_object_next_prog(obj, NULL); p;
	     p = bpfrt_object_next_prog(obj, p)) {
		struct bpfrt_link *l;
		int err;

		if (!can_attach(p)) {
			note(s, "%s (%s): not attached (no attach target in its section)",
			     bpfrt_prog_name(p), bpfrt_prog_section(p));
			continue;
		}
		if (s->link_cnt == MAX_LINKS) {
			snprintf(msg, cap, "more than %d programs to attach", MAX_LINKS);
			return -E2BIG;
		}
		err = bpfrt_prog_attach(p, NULL, &l);
		if (err) {
			snprintf(msg, cap, "attach %s (%s): %s", bpfrt_prog_name(p),
				 bpfrt_prog_section(p), bpfrt_last_error());
			return err;
		}
		s->links[s->link_cnt++] = l;
		if (bpfrt_uprobe_pending(l))
			note(s, "%s: %s is not loaded yet; placed when it is", bpfrt_prog_name(p),
			     bpfrt_link_target(l));
	}
	return 0;
}

/* Destroys the session's links, newest first as they were stacked (the
 * kprobe engine puts every patched byte back). Under state_lock. The
 * number destroyed. */
static int detach_locked(struct session *s)
{
	int n = s->link_cnt;

	while (s->link_cnt > 0)
		bpfrt_link_destroy(s->links[--s->link_cnt]);
	return n;
}

static void do_load(struct session *s, const struct agent_load *req, const char *name, int fd)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .name = name);
	char path[64], msg[1024] = "";
	struct bpfrt_object *obj = NULL;
	int err;

	if (!log_buf && !(log_buf = malloc(LOG_SIZE))) {
		send_msg(s, AGENT_RESULT, -ENOMEM, "agent: out of memory", 20, NULL, 0);
		close(fd);
		return;
	}
	log_buf[0] = 0;
	/* arrays, global data and ring buffers in shared memory, which the
	 * controllers map (MAPS) */
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = !(req->flags & AGENT_LOAD_INTERP),
		   .log_buf = log_buf, .log_size = LOG_SIZE,
		   .log_level = req->log_level ? req->log_level : 1,
		   .map_bpfrt_flags = BPFRT_MAP_F_SHARED);
	pthread_mutex_lock(&state_lock);
	int first_link = s->link_cnt;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (s->obj_cnt == MAX_OBJECTS) {
		err = -E2BIG;
		snprintf(msg, sizeof(msg), "more than %d objects", MAX_OBJECTS);
	} else if ((err = bpfrt_object_open(path, &oo, &obj)) ||
		   (err = bpfrt_object_load(obj, &lo))) {
		snprintf(msg, sizeof(msg), "%s", bpfrt_last_error());
	} else {
		err = attach_all(s, obj, msg, sizeof(msg));
	}
	if (err) {
		/* all of this object or nothing */
		while (s->link_cnt > first_link)
			bpfrt_link_destroy(s->links[--s->link_cnt]);
		bpfrt_object_close(obj);
		close(fd);
	} else {
		s->obj_fds[s->obj_cnt] = fd;
		s->objs[s->obj_cnt++] = obj;
		if (req->flags & AGENT_LOAD_FOLLOW_FORK)
			s->follow_fork = true;
	}
	pthread_mutex_unlock(&state_lock);
	/* the message, then the log as the verifier wrote it (a failed load
	 * always, a good one at an asked-for level) */
	size_t ml = strlen(msg), ll = (err || req->log_level) ? strlen(log_buf) : 0;

	if (ml && ll)
		msg[ml++] = '\n';
	if (ml + ll > AGENT_MAX_PAYLOAD)
		ll = AGENT_MAX_PAYLOAD - ml;
	send_msg(s, AGENT_RESULT, err, msg, ml, log_buf, ll);
}

/* Ends a session: its links, its objects, its socket. Under state_lock. */
static void session_end_locked(struct session *s)
{
	int sock = s->sock;

	detach_locked(s);
	for (int i = 0; i < s->obj_cnt; i++) {
		bpfrt_object_close(s->objs[i]);
		close(s->obj_fds[i]);
	}
	s->obj_cnt = 0;
	pthread_mutex_lock(&send_lock);
	s->sock = -1;
	pthread_mutex_unlock(&send_lock);
	if (sock >= 0)
		close(sock);
}

/* ---- dump ------------------------------------------------------------------ */

static void map_desc(struct bpfrt_map *m, struct agent_map *am)
{
	memset(am, 0, sizeof(*am));
	am->type = bpfrt_map_type(m);
	am->key_size = bpfrt_map_key_size(m);
	am->value_size = bpfrt_map_value_size(m);
	am->value_buf_size = (uint32_t)bpfrt_map_value_buf_size(m);
	am->max_entries = bpfrt_map_max_entries(m);
	snprintf(am->name, sizeof(am->name), "%s", bpfrt_map_name(m));
}

static void dump_map(struct session *s, struct bpfrt_map *m)
{
	struct agent_map am;
	size_t ks, vs;
	uint8_t *key, *next, *val;

	map_desc(m, &am);
	ks = am.key_size;
	vs = am.value_buf_size;
	if (am.type == BPF_MAP_TYPE_RINGBUF || am.type == BPF_MAP_TYPE_PROG_ARRAY || !ks) {
		send_msg(s, AGENT_MAP, 0, &am, sizeof(am), NULL, 0);
		return;
	}
	key = calloc(1, ks);
	next = calloc(1, ks);
	val = calloc(1, vs ? vs : 1);
	if (!key || !next || !val)
		goto out;
	if (ks + vs > AGENT_MAX_PAYLOAD)
		am.skipped = 1;
	send_msg(s, AGENT_MAP, 0, &am, sizeof(am), NULL, 0);
	if (am.skipped)
		goto out;
	for (int err = bpfrt_map_get_next_key(m, NULL, next); !err;
	     err = bpfrt_map_get_next_key(m, key, next)) {
		memcpy(key, next, ks);
		if (bpfrt_map_lookup_elem(m, key, val))
			continue;
		send_msg(s, AGENT_ENTRY, 0, key, ks, val, vs);
	}
out:
	free(key);
	free(next);
	free(val);
}

/* Under state_lock. */
static void dump_session_locked(struct session *s)
{
	for (int i = 0; i < s->obj_cnt; i++)
		for (struct bpfrt_map *m = bpfrt_object_next_map(s->objs[i], NULL); m;
		     m = bpfrt_object_next_map(s->objs[i], m))
			dump_map(s, m);
	send_msg(s, AGENT_DONE, 0, NULL, 0, NULL, 0);
}

/* The map NAME of object OBJ (any object if OBJ is empty), any session's.
 * Under state_lock. */
static struct bpfrt_map *find_map_locked(const char *obj, const char *name)
{
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct session *s = &sessions[i];

		if (s->sock < 0)
			continue;
		for (int j = 0; j < s->obj_cnt; j++) {
			if (*obj && strcmp(obj, bpfrt_object_name(s->objs[j])))
				continue;
			struct bpfrt_map *m = bpfrt_object_find_map(s->objs[j], name);

			if (m)
				return m;
		}
	}
	return NULL;
}

/* ---- maps for the controllers ---------------------------------------------- */

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;  /* one consumer at a time */

static void send_object_maps(struct session *to, struct bpfrt_object *obj, int obj_fd)
{
	char name[64];

	snprintf(name, sizeof(name), "%s", bpfrt_object_name(obj));
	send_fd(to, AGENT_OBJECT, name, strlen(name) + 1, obj_fd);
	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); m;
	     m = bpfrt_object_next_map(obj, m)) {
		BPFRT_OPTS(bpfrt_map_shm, info);
		struct agent_shm sh = { 0 };

		map_desc(m, &sh.map);
		if (!bpfrt_map_shm(m, &info))
			sh.shm = info;
		else
			info.fd = -1;
		send_fd(to, AGENT_SHM, &sh, sizeof(sh), info.fd);
	}
}

static void do_maps(struct session *s, const struct agent_maps_req *req)
{
	if (req->flags & AGENT_MAPS_TAKE_RINGS) {
		/* the agent's own consumer is not in the middle of one of
		 * them once it holds the lock, and never again after */
		pthread_mutex_lock(&ring_lock);
		s->rings_taken = true;
		pthread_mutex_unlock(&ring_lock);
	}
	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct session *o = &sessions[i];

		if (o->sock < 0 || (o != s && !(req->flags & AGENT_MAPS_ALL)))
			continue;
		for (int j = 0; j < o->obj_cnt; j++)
			send_object_maps(s, o->objs[j], o->obj_fds[j]);
	}
	pthread_mutex_unlock(&state_lock);
	send_msg(s, AGENT_DONE, 0, NULL, 0, NULL, 0);
}

/* "OBJ\0MAP\0" at p (len bytes): the names, or -EINVAL. */
static int two_names(const char *p, size_t len, const char **obj, const char **map, size_t *used)
{
	size_t a = strnlen(p, len);

	if (a == len)
		return -EINVAL;
	size_t b = strnlen(p + a + 1, len - a - 1);

	if (a + 1 + b == len)
		return -EINVAL;
	*obj = p;
	*map = p + a + 1;
	*used = a + b + 2;
	return 0;
}

static void do_dump_map(struct session *s, const char *p, size_t len)
{
	const char *obj, *name;
	struct bpfrt_map *m;
	size_t used;

	pthread_mutex_lock(&state_lock);
	m = two_names(p, len, &obj, &name, &used) ? NULL : find_map_locked(obj, name);
	if (m)
		dump_map(s, m);
	pthread_mutex_unlock(&state_lock);
	send_msg(s, AGENT_DONE, m ? 0 : -ENOENT, NULL, 0, NULL, 0);
}

static void do_update(struct session *s, const char *p, size_t len)
{
	struct agent_update u;
	const char *obj, *name;
	struct bpfrt_map *m = NULL;
	char msg[512] = "";
	size_t used;
	int err = -EINVAL;

	if (len < sizeof(u)) {
		send_msg(s, AGENT_DONE, -EINVAL, NULL, 0, NULL, 0);
		return;
	}
	memcpy(&u, p, sizeof(u));
	p += sizeof(u);
	len -= sizeof(u);
	pthread_mutex_lock(&state_lock);
	if (!two_names(p, len, &obj, &name, &used) && (m = find_map_locked(obj, name)) &&
	    len - used == (size_t)u.key_size + u.value_size &&
	    u.key_size == bpfrt_map_key_size(m) && u.value_size == bpfrt_map_value_buf_size(m)) {
		err = bpfrt_map_update_elem(m, p + used, p + used + u.key_size, u.flags);
		if (err)
			snprintf(msg, sizeof(msg), "%s", bpfrt_last_error());
	} else if (!m) {
		err = -ENOENT;
		snprintf(msg, sizeof(msg), "no such map in the target");
	} else {
		snprintf(msg, sizeof(msg), "map '%s': key of %u and value of %u bytes expected",
			 bpfrt_map_name(m), bpfrt_map_key_size(m),
			 (unsigned)bpfrt_map_value_buf_size(m));
	}
	pthread_mutex_unlock(&state_lock);
	send_msg(s, AGENT_DONE, err, msg, strlen(msg), NULL, 0);
}

/* bpfrt trace --detach: every session's links; the others end, each with
 * its final dump first. */
static void do_detach_all(struct session *s)
{
	int links = 0, ctls = 0;
	char msg[128];

	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct session *o = &sessions[i];

		if (o->sock < 0 || o == s)
			continue;
		int n = detach_locked(o);

		if (!n && !o->obj_cnt)
			continue;       /* another viewer, not a tracer */
		links += n;
		ctls++;
		dump_session_locked(o);
		send_msg(o, AGENT_DETACHED, 0, NULL, 0, NULL, 0);
		session_end_locked(o);
	}
	links += detach_locked(s);
	pthread_mutex_unlock(&state_lock);
	snprintf(msg, sizeof(msg), "%d links of %d controllers", links, ctls);
	send_msg(s, AGENT_DONE, 0, msg, strlen(msg), NULL, 0);
}

/* ---- ring buffers: records go to the controller as they come ----------------- */

struct ring_ctx {
	struct session *s;
	struct bpfrt_map *m;
};

static int ring_record(void *ctx, void *data, size_t len)
{
	struct ring_ctx *rc = ctx;
	char name[64];

	snprintf(name, sizeof(name), "%s", bpfrt_map_name(rc->m));
	if (len > AGENT_MAX_PAYLOAD - sizeof(name))
		len = AGENT_MAX_PAYLOAD - sizeof(name);
	send_msg(rc->s, AGENT_RINGBUF, 0, name, sizeof(name), data, len);
	return 0;
}

static void drain_rings(void)
{
	pthread_mutex_lock(&ring_lock);
	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct session *s = &sessions[i];

		if (s->sock < 0 || s->rings_taken)
			continue;
		for (int j = 0; j < s->obj_cnt; j++)
			for (struct bpfrt_map *m = bpfrt_object_next_map(s->objs[j], NULL); m;
			     m = bpfrt_object_next_map(s->objs[j], m))
				if (bpfrt_map_type(m) == BPF_MAP_TYPE_RINGBUF) {
					struct ring_ctx rc = { s, m };

					bpfrt_ringbuf_consume(m, ring_record, &rc);
				}
	}
	pthread_mutex_unlock(&state_lock);
	pthread_mutex_unlock(&ring_lock);
}

/* trace_printk lines are the process's, not an object's: every session
 * that loaded something gets them. */
static int printk_line(void *ctx, const char *line, size_t len)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (sessions[i].sock >= 0 && sessions[i].obj_cnt)
			send_msg(&sessions[i], AGENT_PRINTK, 0, line, len, NULL, 0);
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
	pthread_mutex_lock(&state_lock);
	bpfrt_trace_drain(printk_line, NULL);
	pthread_mutex_unlock(&state_lock);
	pthread_mutex_unlock(&printk_lock);
}

/* ---- the session ----------------------------------------------------------- */

/* Serves one request of s. Returns 1 after GO, -1 when the controller is
 * gone, else 0. */
static int serve_one(struct session *s)
{
	static char buf[AGENT_MAX_PAYLOAD + 1];
	struct agent_msg h;
	int fd, err = agent_recv(s->sock, &h, buf, sizeof(buf) - 1, &fd);

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
			send_msg(s, AGENT_RESULT, -EINVAL, "agent: LOAD without an object", 29,
				 NULL, 0);
			break;
		}
		do_load(s, (const struct agent_load *)buf, buf + sizeof(struct agent_load), fd);
		fd = -1;
		break;
	case AGENT_GO:
		return 1;
	case AGENT_DUMP:
		drain_printk();
		drain_rings();
		pthread_mutex_lock(&state_lock);
		dump_session_locked(s);
		pthread_mutex_unlock(&state_lock);
		break;
	case AGENT_DETACH:
		pthread_mutex_lock(&state_lock);
		detach_locked(s);
		pthread_mutex_unlock(&state_lock);
		send_msg(s, AGENT_DONE, 0, NULL, 0, NULL, 0);
		break;
	case AGENT_MAPS:
		if (h.len >= sizeof(struct agent_maps_req))
			do_maps(s, (const struct agent_maps_req *)buf);
		else
			send_msg(s, AGENT_DONE, -EINVAL, NULL, 0, NULL, 0);
		break;
	case AGENT_DUMP_MAP:
		do_dump_map(s, buf, h.len);
		break;
	case AGENT_UPDATE:
		do_update(s, buf, h.len);
		break;
	case AGENT_DETACH_ALL:
		do_detach_all(s);
		break;
	default:
		break;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* A controller connecting to the listener: root's or this user's, else
 * refused. */
static void accept_one(void)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != 0 && cred.uid != getuid()) || !session_new(fd))
		close(fd);
}

static void *service(void *arg)
{
	for (;;) {
		struct pollfd p[MAX_SESSIONS + 1];
		struct session *who[MAX_SESSIONS + 1];
		int n = 0;

		pthread_mutex_lock(&state_lock);
		for (int i = 0; i < MAX_SESSIONS; i++)
			if (sessions[i].sock >= 0) {
				p[n] = (struct pollfd){ .fd = sessions[i].sock, .events = POLLIN };
				who[n++] = &sessions[i];
			}
		pthread_mutex_unlock(&state_lock);
		if (listener >= 0) {
			p[n] = (struct pollfd){ .fd = listener, .events = POLLIN };
			who[n++] = NULL;
		}
		int r = poll(p, (nfds_t)n, 50);

		drain_printk();
		drain_rings();
		for (int i = 0; r > 0 && i < n; i++) {
			if (!p[i].revents)
				continue;
			if (!who[i]) {
				accept_one();
			} else if (who[i]->sock == p[i].fd && serve_one(who[i]) < 0) {
				/* the controller is gone: its links and objects go,
				 * the target is as it was for it */
				pthread_mutex_lock(&state_lock);
				session_end_locked(who[i]);
				pthread_mutex_unlock(&state_lock);
			}
		}
	}
	return NULL;
}

static void at_exit(void)
{
	if (!traced || getpid() != owner)
		return;
	drain_printk();
	drain_rings();
	pthread_mutex_lock(&state_lock);
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct session *s = &sessions[i];

		if (s->sock < 0)
			continue;
		if (s->obj_cnt)
			dump_session_locked(s);
		send_msg(s, AGENT_EXIT, 0, NULL, 0, NULL, 0);
	}
	pthread_mutex_unlock(&state_lock);
}

/* A fork child's watcher (--follow-fork): the sessions whose programs the
 * child kept, until their controller's socket hangs up (its controller
 * closed it or died; the parent's agent closing its own copy is not a
 * hang-up). The child never reads the socket: what comes on it is the
 * parent's. Then the child's copies of the links go, as the parent's. */
static void *child_watch(void *arg)
{
	for (;;) {
		struct pollfd p[MAX_SESSIONS];
		struct session *who[MAX_SESSIONS];
		int n = 0;

		pthread_mutex_lock(&state_lock);
		for (int i = 0; i < MAX_SESSIONS; i++)
			if (sessions[i].sock >= 0) {
				p[n] = (struct pollfd){ .fd = sessions[i].sock, .events = 0 };
				who[n++] = &sessions[i];
			}
		pthread_mutex_unlock(&state_lock);
		if (!n)
			return NULL;
		if (poll(p, (nfds_t)n, -1) < 0)
			continue;
		pthread_mutex_lock(&state_lock);
		for (int i = 0; i < n; i++)
			if (p[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				session_end_locked(who[i]);
		pthread_mutex_unlock(&state_lock);
	}
}

static void in_child(void)
{
	/* the child runs the original code and says nothing to the
	 * controllers; the fork copied the links and the descriptors. A
	 * --follow-fork session's links stay (its programs run in the child
	 * too, its shared maps are the parent's: counts add up), watched
	 * until its controller goes. */
	bool watch = false;

	if (!traced)
		return;
	/* the child's only thread is this one: a lock another thread of the
	 * parent held at fork would never be released here (taking them
	 * across fork instead would order them against the engine's own
	 * fork handlers) */
	pthread_mutex_init(&state_lock, NULL);
	pthread_mutex_init(&send_lock, NULL);
	pthread_mutex_init(&ring_lock, NULL);
	pthread_mutex_init(&printk_lock, NULL);
	for (int i = 0; i < MAX_SESSIONS; i++) {
		struct session *s = &sessions[i];

		if (s->sock < 0)
			continue;
		if (s->follow_fork && s->link_cnt) {
			watch = true;
			continue;
		}
		while (s->link_cnt > 0)
			bpfrt_link_destroy(s->links[--s->link_cnt]);
		close(s->sock);
		s->sock = -1;
	}
	if (listener >= 0)
		close(listener);
	listener = -1;
	traced = watch;
	if (watch) {
		pthread_t t;

		if (pthread_create(&t, NULL, child_watch, NULL) == 0)
			pthread_detach(t);
	}
}

/* The abstract socket later controllers connect to (bound once; a
 * failure leaves the first controller the only one). */
static void listen_for_controllers(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, n;

	if (listener >= 0)
		return;
	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, AGENT_LISTEN_FMT, (int)getpid());
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (bind(fd, (struct sockaddr *)&a,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    listen(fd, 8) < 0) {
		close(fd);
		return;
	}
	listener = fd;
}

static void start_service(void)
{
	static bool once;
	pthread_t t;

	traced = true;
	listen_for_controllers();
	if (once)
		return;
	once = true;
	pthread_atfork(NULL, NULL, in_child);
	atexit(at_exit);
	if (pthread_create(&t, NULL, service, NULL) == 0)
		pthread_detach(t);
}

__attribute__((constructor)) static void agent_start(void)
{
	const struct bpfrt_config_text *fdv = &bpfrt_config()->agent_fd;
	struct session *s;
	char *end;
	long fd;
	int r;

	for (int i = 0; i < MAX_SESSIONS; i++)
		sessions[i].sock = -1;
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
	owner = getpid();
	s = session_new((int)fd);
	if (!s)
		return;
	while ((r = serve_one(s)) == 0)
		;
	if (r < 0) {
		pthread_mutex_lock(&state_lock);
		session_end_locked(s);
		pthread_mutex_unlock(&state_lock);
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
	owner = getpid();
	if (!session_new(fd)) {
		close(fd);
		return -EBUSY;
	}
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
	if (h && traced && bpfrt_uprobe_refresh() < 0) {
		pthread_mutex_lock(&state_lock);
		for (int i = 0; i < MAX_SESSIONS; i++)
			if (sessions[i].sock >= 0 && sessions[i].obj_cnt)
				note(&sessions[i], "dlopen %s: %s", file ? file : "(main)",
				     bpfrt_last_error());
		pthread_mutex_unlock(&state_lock);
	}
	return h;
}
