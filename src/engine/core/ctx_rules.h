/* Field rules of the contexts only a kernel builds (__sk_buff as tc,
 * cgroup_skb, sk_skb, lwt and flow dissector programs see it, bpf_sock,
 * bpf_sock_addr, bpf_sock_ops, sk_msg_md, bpf_sk_lookup, sk_reuseport_md,
 * bpf_sysctl, bpf_sockopt, bpf_cgroup_dev_ctx, bpf_perf_event_data): which
 * bytes of the context a program may read or write and at which widths.
 * They are the rules of Linux's per-program-type is_valid_access
 * callbacks, restated here; the verifier asks them for every context
 * access of a kind whose layout names one (prog_kind.h). Fields that load
 * a kernel object pointer (flow_keys, bpf_sock_ops.sk, ...) are refused:
 * stricter than Linux, never looser. __sk_buff->sk, an 8-byte load, is
 * allowed: the verifier types it a socket or NULL (verifier/sock.c). */
#ifndef BPFRT_CTX_RULES_H
#define BPFRT_CTX_RULES_H

#include <stdbool.h>
#include <stdint.h>

/* What a SEC() name says beyond the kind, where the context rules depend
 * on it (Linux's expected_attach_type). 0: none (a raw load): the fields
 * only one attach type may touch are refused, as Linux refuses them for a
 * program loaded without that attach type. */
enum bpfrt_kind_variant {
	BPFRT_VARIANT_NONE = 0,
	BPFRT_VARIANT_SOCK_CREATE,    /* cgroup/sock_create, cgroup/sock */
	BPFRT_VARIANT_SOCK_RELEASE,
	BPFRT_VARIANT_POST_BIND4,
	BPFRT_VARIANT_POST_BIND6,
	BPFRT_VARIANT_ADDR4,          /* bind4, connect4, getpeername4, getsockname4, recvmsg4 */
	BPFRT_VARIANT_ADDR6,
	BPFRT_VARIANT_SENDMSG4,
	BPFRT_VARIANT_SENDMSG6,
	BPFRT_VARIANT_ADDR_UNIX,      /* connect_unix, sendmsg_unix, ... */
	BPFRT_VARIANT_GETSOCKOPT,
	BPFRT_VARIANT_SETSOCKOPT,
	/* the same fields as ADDR4, ADDR6, ADDR_UNIX; must return 1 */
	BPFRT_VARIANT_ADDR4_PEER,     /* recvmsg4, getpeername4, getsockname4 */
	BPFRT_VARIANT_ADDR6_PEER,
	BPFRT_VARIANT_ADDR_UNIX_PEER,
	BPFRT_VARIANT_SKB_EGRESS,     /* cgroup_skb/egress: may return 0-3 */
	BPFRT_VARIANT_BIND4,          /* the same fields as ADDR4; may return 0-3 */
	BPFRT_VARIANT_BIND6,
	BPFRT_VARIANT_LWT_XMIT,       /* lwt_xmit: writes its packet */
	BPFRT_VARIANT_COUNT,
};

/* One context access: [off, off + size), a store if write, a
 * sign-extending load if sext. */
struct bpfrt_ctx_access {
	uint32_t off, size;
	bool write, sext;
	uint8_t variant;              /* enum bpfrt_kind_variant */
	bool priv;                    /* BPFRT_F_ALLOW_PTR_LEAKS: privileged Linux's rules */
};

/* NULL if the access is allowed, else why not (for the verifier's
 * message). The caller has already checked that the access lies inside
 * the context and is aligned to its size. */
typedef const char *(*bpfrt_ctx_rule_fn)(const struct bpfrt_ctx_access *a);

const char *bpfrt_ctx_rule_sk_filter_skb(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_tc_skb(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_cg_skb(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sk_skb(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_lwt_skb(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_flow_dissector(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sock(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sock_addr(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sock_ops(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sk_msg(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sk_lookup(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sk_reuseport(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sysctl(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_sockopt(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_cgroup_dev(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_perf_event(const struct bpfrt_ctx_access *a);
const char *bpfrt_ctx_rule_lirc(const struct bpfrt_ctx_access *a);
/* A frame of u64 arguments or kernel pointers (lsm, iter, struct_ops,
 * netfilter): whole, read-only 8-byte slots. */
const char *bpfrt_ctx_rule_u64_slots(const struct bpfrt_ctx_access *a);

#endif
