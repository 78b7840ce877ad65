/* Helpers Linux gives only some program types (each type's func_proto
 * callback in net/core/filter.c lists them): a packet helper needs a
 * packet behind its context. bpfrt's UNSPEC (a caller's raw memory) may
 * call all of them, as before: it is every kind's test bench. Helpers
 * not listed here are allowed in every kind, as Linux's base set is. */
#include "helpers/kind_rules.h"
#include "helpers/local_storage.h"
#include "helpers/skb.h"
#include "helpers/sock.h"

#include <linux/bpf.h>
#include <stddef.h>

#define K(k) (1ull << (k))
#define SKB_KINDS (K(BPFRT_PROG_SOCKET) | K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT) | \
		   K(BPFRT_PROG_CGROUP_SKB) | K(BPFRT_PROG_SK_SKB) | K(BPFRT_PROG_LWT) | \
		   K(BPFRT_PROG_FLOW_DISSECTOR))

#define SOCK_LOOKUP_KINDS (K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT) | \
			   K(BPFRT_PROG_XDP) | K(BPFRT_PROG_SK_SKB) | K(BPFRT_PROG_CGROUP_SKB) | \
			   K(BPFRT_PROG_CGROUP_SOCK_ADDR))
#define SOCK_LOOKUP_WHICH "tc, xdp, sk_skb, cgroup_skb and cgroup sock_addr programs"
#define SOCK_CAST_KINDS (K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT) | \
			 K(BPFRT_PROG_CGROUP_SKB))
#define SOCK_CAST_WHICH "tc and cgroup_skb programs"

static const struct {
	int32_t id;
	bpfrt_helper_fn fn;
	uint64_t kinds;  /* besides UNSPEC */
	const char *which;
} rules[] = {
	{ BPF_FUNC_skb_load_bytes, bpfrt_bpf_skb_load_bytes, SKB_KINDS,
	  "__sk_buff programs (socket, tc, cgroup_skb, sk_skb, lwt, flow_dissector)" },
	{ BPF_FUNC_skb_load_bytes_relative, bpfrt_bpf_skb_load_bytes_relative,
	  K(BPFRT_PROG_SOCKET) | K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT) |
	  K(BPFRT_PROG_CGROUP_SKB), "socket, tc and cgroup_skb programs" },
	{ BPF_FUNC_csum_diff, bpfrt_bpf_csum_diff,
	  K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT) | K(BPFRT_PROG_XDP) |
	  K(BPFRT_PROG_LWT), "tc, xdp and lwt programs" },
	/* the socket lookups and their release (Linux's tc, xdp, sk_skb,
	 * cgroup_skb and cgroup sock_addr func_protos) */
	{ BPF_FUNC_sk_lookup_tcp, bpfrt_bpf_sk_lookup, SOCK_LOOKUP_KINDS, SOCK_LOOKUP_WHICH },
	{ BPF_FUNC_sk_lookup_udp, bpfrt_bpf_sk_lookup, SOCK_LOOKUP_KINDS, SOCK_LOOKUP_WHICH },
	{ BPF_FUNC_skc_lookup_tcp, bpfrt_bpf_sk_lookup, SOCK_LOOKUP_KINDS, SOCK_LOOKUP_WHICH },
	{ BPF_FUNC_sk_release, bpfrt_bpf_sk_release, SOCK_LOOKUP_KINDS | K(BPFRT_PROG_SK_LOOKUP),
	  SOCK_LOOKUP_WHICH " and sk_lookup programs" },
	/* the casts of an skb's socket (tc and cgroup_skb) */
	{ BPF_FUNC_sk_fullsock, bpfrt_bpf_sk_cast, SOCK_CAST_KINDS, SOCK_CAST_WHICH },
	{ BPF_FUNC_tcp_sock, bpfrt_bpf_sk_cast, SOCK_CAST_KINDS, SOCK_CAST_WHICH },
	{ BPF_FUNC_get_listener_sock, bpfrt_bpf_sk_cast, SOCK_CAST_KINDS, SOCK_CAST_WHICH },
	{ BPF_FUNC_get_socket_cookie, bpfrt_bpf_get_socket_cookie,
	  K(BPFRT_PROG_SOCKET) | K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT) |
	  K(BPFRT_PROG_SK_SKB) | K(BPFRT_PROG_SK_REUSEPORT) | K(BPFRT_PROG_CGROUP_SOCK) |
	  K(BPFRT_PROG_CGROUP_SOCK_ADDR) | K(BPFRT_PROG_SOCK_OPS),
	  "socket, tc, sk_skb, sk_reuseport, cgroup sock and sock_addr, and sockops programs" },
	/* socket filters: Linux's since 6.12 (its later kernels' rule) */
	{ BPF_FUNC_get_netns_cookie, bpfrt_bpf_get_netns_cookie,
	  K(BPFRT_PROG_SOCKET) | K(BPFRT_PROG_CGROUP_SOCK) | K(BPFRT_PROG_CGROUP_SOCK_ADDR) |
	  K(BPFRT_PROG_SOCK_OPS) | K(BPFRT_PROG_SK_MSG),
	  "socket, cgroup sock and sock_addr, sockops and sk_msg programs" },
	{ BPF_FUNC_csum_update, bpfrt_bpf_csum_update,
	  K(BPFRT_PROG_SCHED_CLS) | K(BPFRT_PROG_SCHED_ACT), "tc programs" },
	/* Linux's cgroup_common_func_proto */
	{ BPF_FUNC_get_local_storage, bpfrt_bpf_get_local_storage,
	  K(BPFRT_PROG_CGROUP_SKB) | K(BPFRT_PROG_CGROUP_SOCK) | K(BPFRT_PROG_CGROUP_SOCK_ADDR) |
	  K(BPFRT_PROG_CGROUP_SYSCTL) | K(BPFRT_PROG_CGROUP_SOCKOPT) |
	  K(BPFRT_PROG_CGROUP_DEVICE) | K(BPFRT_PROG_SOCK_OPS),
	  "cgroup programs (cgroup_skb, cgroup_sock, cgroup_sock_addr, cgroup_sysctl, "
	  "cgroup_sockopt, cgroup_device, sock_ops)" },
};

_Static_assert(BPFRT_PROG_EXT < 64, "kinds fit the 64-bit masks");

const char *bpfrt_helper_kind_reason(int32_t id, bpfrt_helper_fn fn, enum bpfrt_prog_kind kind)
{
	if (kind == BPFRT_PROG_UNSPEC)
		return NULL;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].id == id && rules[i].fn == fn)
			return (unsigned)kind < 64 && (rules[i].kinds & K(kind)) ? NULL : rules[i].which;
	return NULL;
}
