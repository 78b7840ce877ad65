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
 *     DUMP    reply: MAP and ENTRY messages for every map, then DONE
 *     DETACH  every link destroyed (patched bytes restored); reply DONE
 *   agent -> controller, unasked
 *     PRINTK  trace_printk lines, as they come
 *     RINGBUF a ring buffer record: the map's name (64 bytes), the record
 *     NOTE    a line for the user's stderr (a program left unattached)
 *     EXIT    the target is exiting; a final DUMP's messages precede it
 * Either side closing the socket ends the session: the agent detaches
 * everything when its controller goes (nothing a dead side leaves behind
 * blocks the other: no lock is shared between the processes). */
#ifndef BPFRT_AGENT_PROTO_H
#define BPFRT_AGENT_PROTO_H

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
};

struct agent_msg {
	uint32_t type;
	int32_t err;
	uint32_t len;           /* payload bytes after the header */
	uint32_t pad;
};

#define AGENT_LOAD_INTERP 1u    /* run the programs in the interpreter */

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
