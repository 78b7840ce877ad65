/* The socket helpers in a process without kernel sockets: a lookup finds
 * no socket (NULL, as Linux's lookup of a tuple nothing listens on), so
 * the casts and the release are never reached with one (the verifier
 * requires a non-NULL socket for them; they return NULL and 0 all the
 * same). The verifier keeps Linux's rules for programs written against
 * them (verifier/sock.c): references released on every path, the NULL
 * checks, which fields may be read. */
#include "helpers/sock.h"

#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t bpfrt_bpf_sk_lookup(uint64_t ctx, uint64_t tuple, uint64_t tuple_size, uint64_t netns,
			     uint64_t flags)
{
	return 0;
}

uint64_t bpfrt_bpf_sk_release(uint64_t sk, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return 0;
}

uint64_t bpfrt_bpf_sk_cast(uint64_t sk, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return 0;
}

/* Linux's answer for a context without a socket. */
uint64_t bpfrt_bpf_get_socket_cookie(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	return 0;
}

static uint64_t netns_cookie;
static pthread_once_t netns_once = PTHREAD_ONCE_INIT;

/* The kernel's cookie of the process's network namespace, as any socket
 * of it reports (Linux 5.14 and later); 0 where none can be had. */
static void read_netns_cookie(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(netns_cookie);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &netns_cookie, &len) || len != 8)
		netns_cookie = 0;
	close(fd);
}

/* Linux: the namespace of ctx's socket, or with a NULL ctx the initial
 * one. A process has one namespace at a time here: both answer it (a
 * process outside the initial namespace gets its own for NULL too). */
uint64_t bpfrt_bpf_get_netns_cookie(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	pthread_once(&netns_once, read_netns_cookie);
	return netns_cookie;
}
