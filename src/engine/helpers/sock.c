/* The socket helpers in a process without kernel sockets: a lookup finds
 * no socket (NULL, as Linux's lookup of a tuple nothing listens on), so
 * the casts and the release are never reached with one (the verifier
 * requires a non-NULL socket for them; they return NULL and 0 all the
 * same). The verifier keeps Linux's rules for programs written against
 * them (verifier/sock.c): references released on every path, the NULL
 * checks, which fields may be read. */
#include "helpers/sock.h"

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
