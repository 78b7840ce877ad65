/* The control channel between `bpfrt trace` (the controller) and the
 * agent inside a traced process: one AF_UNIX SOCK_SEQPACKET connection,
 * so every message arrives whole or not at all, and descriptors travel
 * with SCM_RIGHTS (the object is handed over as an open file, never as a
 * path the target might see differently).
 *
 * A message is struct agent_msg followed by len payload bytes.
 *   controller -> agent
 *     LOAD    payload struct agent_load + the object's name; the object's
 *             fd attached. Reply: RESULT (err 0 or -errno; text: the
 *             messages and the verifier log, verbatim)
 *     GO      the target may run (the agent's constructor returns)
 *     DUMP    reply: MAP and ENTRY messages for every map of this
 *             controller's objects, then DONE
 *     DETACH  this controller's links destroyed (patched bytes restored);
 *             reply DONE
 *     MAPS    payload struct agent_maps_req. Reply: for each object (of
 *             this controller, or of all with AGENT_MAPS_ALL) an OBJECT
 *             message (its name; its ELF file attached, for the BTF),
 *             then one SHM message per map of it (struct agent_shm; the
 *             map's memfd attached when it is in shared memory), then
 *             DONE. With AGENT_MAPS_TAKE_RINGS the controller consumes
 *             its ring buffers from the shared mapping from then on (the
 *             agent no longer sends RINGBUF for them)
 *     DUMP_MAP payload: object name, NUL, map name, NUL. Reply: MAP and
 *             ENTRY messages of that map (any kind: hash maps are read
 *             this way), then DONE (err -ENOENT: no such map)
 *     UPDATE  payload struct agent_update, object and map name, key,
 *             value (value_buf_size bytes). Reply DONE, err 0 or -errno
 *             with the message as payload
 *     DETACH_ALL every controller's links destroyed; each other
 *             controller gets its final DUMP's messages and DETACHED, and
 *             its session ends. Reply DONE (payload: what was detached)
 *   agent -> controller, unasked
 *     PRINTK  trace_printk lines, as they come
 *     RINGBUF a ring buffer record: the map's name (64 bytes), the record
 *     NOTE    a line for the user's stderr (a program left unattached)
 *     EXIT    the target is exiting; a final DUMP's messages precede it
 *     DETACHED another controller detached everything (bpfrt trace
 *             --detach); the agent closes this session
 * Several controllers may hold sessions at once: the first is the one
 * that started the command (or injected the agent), later ones connect
 * to the agent's own abstract socket (AGENT_LISTEN_FMT). Each session's
 * objects and links are its own: its DETACH, or its end, removes only
 * them.
 * Either side closing the socket ends the session: the agent detaches
 * the session's links when its controller goes (nothing a dead side
 * leaves behind blocks the other: no lock is shared between the
 * processes; shared-memory maps are read and written lock-free). */
#ifndef BPFRT_AGENT_PROTO_H
#define BPFRT_AGENT_PROTO_H

#include "bpfrt/map.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum agent_msg_type {
	AGENT_LOAD = 1,
	AGENT_GO,
	AGENT_DUMP,
	AGENT_DETACH,
	AGENT_RESULT,
	AGENT_PRINTK,
	AGENT_NOTE,
	AGENT_MAP,
	AGENT_ENTRY,
	AGENT_DONE,
	AGENT_EXIT,
	AGENT_RINGBUF,
	AGENT_MAPS,
	AGENT_OBJECT,
	AGENT_SHM,
	AGENT_DUMP_MAP,
	AGENT_UPDATE,
	AGENT_DETACH_ALL,
	AGENT_DETACHED,
};

struct agent_msg {
	uint32_t type;
	int32_t err;
	uint32_t len;           /* payload bytes after the header */
	uint32_t pad;
};

#define AGENT_LOAD_INTERP 1u    /* run the programs in the interpreter */
/* fork children keep this session's programs (bpfrt trace --follow-fork):
 * the child's copies of its links stay until this controller's socket
 * closes (the child watches it for the hang-up, never reads it) */
#define AGENT_LOAD_FOLLOW_FORK 2u

struct agent_load {
	uint32_t flags;
	uint32_t log_level;     /* the verifier log's level (0: on failure only, at 1) */
};

/* One map of the dump; ENTRY messages follow (key then value bytes) */
struct agent_map {
	uint32_t type;          /* enum bpf_map_type */
	uint32_t key_size;
	uint32_t value_size;    /* of one CPU's value */
	uint32_t value_buf_size;/* of what ENTRY carries (per-CPU maps: all CPUs) */
	uint32_t max_entries;
	uint32_t skipped;       /* entries too large to send */
	char name[64];
};

#define AGENT_MAPS_ALL        1u  /* every controller's objects, not only the asker's */
#define AGENT_MAPS_TAKE_RINGS 2u  /* the asker consumes its rings from shared memory */

struct agent_maps_req {
	uint32_t flags;
};

/* A map of an object: where it lies in its memfd (shm.layout 0: not in
 * shared memory, read with DUMP_MAP), as bpfrt_map_shm gave it (its fd
 * field means nothing here: the memfd travels with the message). */
struct agent_shm {
	struct agent_map map;
	struct bpfrt_map_shm shm;
};

/* UPDATE's fixed part; object name, NUL, map name, NUL, key, value follow */
struct agent_update {
	uint32_t key_size;
	uint32_t value_size;    /* bytes of value that follow (value_buf_size) */
	uint64_t flags;         /* BPF_ANY, BPF_NOEXIST, BPF_EXIST */
};

/* The agent listens on this abstract socket name (with its pid) for
 * controllers after the first: bpfrt trace -p, map dump -p, --detach. */
#define AGENT_LISTEN_FMT "bpfrt-agent.%d"

/* bpfrt trace -p: the controller listens on this abstract socket name
 * (with the target's pid) and the injected agent connects to it. */
#define AGENT_SOCKET_FMT "bpfrt-trace.%d"

/* Largest payload (the default socket buffer holds one such message). */
#define AGENT_MAX_PAYLOAD (128u * 1024)

/* Sends one message, with fd attached if fd >= 0. 0 or -errno. */
static inline int agent_send(int sock, uint32_t type, int32_t err, const void *a, size_t alen,
			     const void *b, size_t blen, int fd)
{
	struct agent_msg h = { .type = type, .err = err, .len = (uint32_t)(alen + blen) };
	struct iovec iov[3] = { { &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen } };
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } c;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };

	if (alen + blen > AGENT_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		m.msg_control = c.buf;
		m.msg_controllen = sizeof(c.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);

		if (n >= 0)
			return n == (ssize_t)(sizeof(h) + alen + blen) ? 0 : -EPROTO;
		if (errno != EINTR)
			return -errno;
	}
}

/* Receives one message into h and buf (cap bytes; a longer one is
 * -EMSGSIZE); *fd gets a descriptor that came with it, else -1 (fd may
 * be NULL: one that comes anyway is closed). 0, -ENOTCONN at end of
 * stream, or -errno. */
static inline int agent_recv(int sock, struct agent_msg *h, void *buf, size_t cap, int *fd)
{
	struct iovec iov[2] = { { h, sizeof(*h) }, { buf, cap } };
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } c;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf) };
	ssize_t n;

	if (fd)
		*fd = -1;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOTCONN;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int got;

			memcpy(&got, CMSG_DATA(cm), sizeof(int));
			if (fd)
				*fd = got;
			else
				close(got);
		}
	}
	if ((size_t)n < sizeof(*h) || (m.msg_flags & MSG_TRUNC) || h->len != (size_t)n - sizeof(*h))
		return -EMSGSIZE;
	return 0;
}

#endif
