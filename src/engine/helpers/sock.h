/* Linux's socket helpers (sock.c): the lookups bpf_sk_lookup_tcp (84),
 * bpf_sk_lookup_udp (85) and bpf_skc_lookup_tcp (99), bpf_sk_release
 * (86), the casts bpf_sk_fullsock (95), bpf_tcp_sock (96),
 * bpf_get_listener_sock (98) and bpf_skc_to_tcp_sock (137), and the
 * cookies. */
#ifndef BPFRT_HELPERS_SOCK_H
#define BPFRT_HELPERS_SOCK_H

#include <stdint.h>

uint64_t bpfrt_bpf_sk_lookup(uint64_t ctx, uint64_t tuple, uint64_t tuple_size, uint64_t netns,
			     uint64_t flags);
uint64_t bpfrt_bpf_sk_release(uint64_t sk, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);
uint64_t bpfrt_bpf_sk_cast(uint64_t sk, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);
/* bpf_get_socket_cookie (46): the context's socket's cookie, 0 without
 * one (always, here); bpf_get_netns_cookie (122): the network namespace's
 * cookie (SO_NETNS_COOKIE) */
uint64_t bpfrt_bpf_get_socket_cookie(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5);
uint64_t bpfrt_bpf_get_netns_cookie(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5);

#endif
