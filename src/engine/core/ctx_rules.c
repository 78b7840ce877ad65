/* The kernel's context field rules, restated (ctx_rules.h). Each function
 * answers for one program type as Linux's is_valid_access callback of that
 * type does: a field is named by the range of offsets it covers (an access
 * is judged by the field its first byte falls in), "narrow" loads read a
 * power-of-two part of a field at an offset aligned to its size, and the
 * widths a store may have are each field's own. */
#include "core/ctx_rules.h"

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <stddef.h>

#define FSIZE(T, f) sizeof(((T *)0)->f)
/* the access starts inside field f of T */
#define IN(a, T, f) ((a)->off >= offsetof(T, f) && (a)->off < offsetof(T, f) + FSIZE(T, f))
/* ... or inside the fields from f to g */
#define IN_TILL(a, T, f, g) ((a)->off >= offsetof(T, f) && \
			     (a)->off < offsetof(T, g) + FSIZE(T, g))

#define KERNEL_PTR "the field is a kernel object pointer, which bpfrt's verifier does not type"
#define NO_FIELD "no field the program type may access is there"
#define RDONLY "the program type may not write this field"
#define WIDTH "the field is not accessible at this width"

/* A load of size bytes from a field of dflt bytes: whole, or a
 * power-of-two part of it (the caller checked the alignment). */
static bool narrow_ok(uint32_t size, uint32_t dflt)
{
	return size <= dflt && !(size & (size - 1));
}

/* ---- struct __sk_buff ---- */

/* What every __sk_buff program type shares (Linux's
 * bpf_skb_is_valid_access). */
static const char *skb_common(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (IN_TILL(a, S, cb[0], cb[4]))
		return a->off + a->size > offsetof(S, cb[4]) + 4 ? WIDTH : NULL;
	if (IN(a, S, data) || IN(a, S, data_meta) || IN(a, S, data_end))
		return a->sext ? "packet pointers are not sign-extended" :
		       a->size != 4 ? "packet pointers are loaded whole (4 bytes)" : NULL;
	if (IN_TILL(a, S, remote_ip6[0], remote_ip6[3]) ||
	    IN_TILL(a, S, local_ip6[0], local_ip6[3]) || IN(a, S, remote_ip4) ||
	    IN(a, S, local_ip4))
		return a->size != 4 ? WIDTH : NULL;
	if (IN(a, S, flow_keys))
		return "flow_keys is a flow dissector's field";
	if (IN(a, S, hwtstamp))
		return a->write ? RDONLY : a->size != 8 ? WIDTH : NULL;
	if (IN(a, S, tstamp))
		return a->size != 8 ? WIDTH : NULL;
	if (IN(a, S, sk)) /* a socket or NULL (verifier/sock.c) */
		return a->write ? RDONLY : a->size != 8 ? WIDTH : NULL;
	if (a->off == offsetof(S, tstamp_type))
		return "tstamp_type is a tc program's field";
	if (a->off > offsetof(S, tstamp_type) && a->off < offsetof(S, hwtstamp))
		return "padding";
	if (a->write)
		return a->size != 4 ? WIDTH : NULL;
	return narrow_ok(a->size, 4) ? NULL : WIDTH;
}

/* socket filters: no packet pointers, no addresses, writes to cb[] only */
const char *bpfrt_ctx_rule_sk_filter_skb(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (IN(a, S, tc_classid) || IN(a, S, data) || IN(a, S, data_meta) ||
	    IN(a, S, data_end) || IN_TILL(a, S, family, local_port) || IN(a, S, tstamp) ||
	    IN(a, S, wire_len) || IN(a, S, hwtstamp))
		return "a socket filter may not access this field";
	if (a->write && !IN_TILL(a, S, cb[0], cb[4]))
		return RDONLY;
	return skb_common(a);
}

const char *bpfrt_ctx_rule_tc_skb(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (a->write && !(IN(a, S, mark) || IN(a, S, tc_index) || IN(a, S, priority) ||
			  IN(a, S, tc_classid) || IN_TILL(a, S, cb[0], cb[4]) ||
			  IN(a, S, tstamp) || IN(a, S, queue_mapping)))
		return RDONLY;
	if (IN(a, S, data_meta))
		return "data_meta (a packet metadata pointer) is not typed by bpfrt's verifier";
	if (IN_TILL(a, S, family, local_port))
		return "socket fields are not a tc program's";
	if (a->off == offsetof(S, tstamp_type))
		return a->size != 1 ? WIDTH : NULL;
	return skb_common(a);
}

const char *bpfrt_ctx_rule_cg_skb(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (IN(a, S, tc_classid) || IN(a, S, data_meta) || IN(a, S, wire_len))
		return "a cgroup skb program may not access this field";
	/* Linux asks CAP_BPF for data, data_end and tstamp writes: here
	 * the privileged rules (BPFRT_F_ALLOW_PTR_LEAKS) */
	if ((IN(a, S, data) || IN(a, S, data_end) || (a->write && IN(a, S, tstamp))) && !a->priv)
		return "unprivileged programs (Linux without CAP_BPF) may not access this field";
	if (a->write && !(IN(a, S, mark) || IN(a, S, priority) ||
			  IN_TILL(a, S, cb[0], cb[4]) || IN(a, S, tstamp)))
		return RDONLY;
	return skb_common(a);
}

const char *bpfrt_ctx_rule_sk_skb(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (IN(a, S, tc_classid) || IN(a, S, data_meta) || IN(a, S, tstamp) ||
	    IN(a, S, wire_len) || IN(a, S, hwtstamp))
		return "an sk_skb program may not access this field";
	if (a->write && !(IN(a, S, tc_index) || IN(a, S, priority)))
		return RDONLY;
	if (IN(a, S, mark))
		return "an sk_skb program may not access mark";
	return skb_common(a);
}

const char *bpfrt_ctx_rule_lwt_skb(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (IN(a, S, tc_classid) || IN_TILL(a, S, family, local_port) ||
	    IN(a, S, data_meta) || IN(a, S, tstamp) || IN(a, S, wire_len) ||
	    IN(a, S, hwtstamp))
		return "a lwt program may not access this field";
	if (a->write && !(IN(a, S, mark) || IN(a, S, priority) || IN_TILL(a, S, cb[0], cb[4])))
		return RDONLY;
	return skb_common(a);
}

const char *bpfrt_ctx_rule_flow_dissector(const struct bpfrt_ctx_access *a)
{
	typedef struct __sk_buff S;

	if (a->write)
		return "a flow dissector's context is read-only";
	if (IN(a, S, data) || IN(a, S, data_end))
		return a->sext ? "packet pointers are not sign-extended" :
		       a->size != 4 ? "packet pointers are loaded whole (4 bytes)" : NULL;
	if (IN(a, S, flow_keys))
		return KERNEL_PTR;
	return "a flow dissector reads only data, data_end and flow_keys";
}

/* ---- struct bpf_sock (cgroup/sock_create, post_bind4, ...) ---- */

static const char *bpf_sock_common(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sock S;

	if (a->off == offsetof(S, state) || a->off == offsetof(S, family) ||
	    a->off == offsetof(S, type) || a->off == offsetof(S, protocol) ||
	    a->off == offsetof(S, src_port) || a->off == offsetof(S, rx_queue_mapping) ||
	    IN(a, S, src_ip4) || IN_TILL(a, S, src_ip6[0], src_ip6[3]) || IN(a, S, dst_ip4) ||
	    IN_TILL(a, S, dst_ip6[0], dst_ip6[3]))
		return narrow_ok(a->size, 4) ? NULL : WIDTH;
	if (IN(a, S, dst_port))
		return narrow_ok(a->size, a->size == 4 ? 4 : 2) ? NULL : WIDTH;
	if (a->off >= offsetof(S, dst_port) + 2 && a->off < offsetof(S, dst_ip4))
		return "padding";
	return a->size == 4 ? NULL : WIDTH;
}

const char *bpfrt_ctx_rule_sock(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sock S;
	const char *why = bpf_sock_common(a);
	/* Linux loads a cgroup sock program without an attach type as
	 * sock_create (bpf_prog_load_fixup_attach_type) */
	uint8_t v = a->variant ? a->variant : BPFRT_VARIANT_SOCK_CREATE;

	if (why)
		return why;
	if (a->off == offsetof(S, bound_dev_if) || a->off == offsetof(S, mark) ||
	    a->off == offsetof(S, priority))
		return v == BPFRT_VARIANT_SOCK_CREATE || v == BPFRT_VARIANT_SOCK_RELEASE ? NULL :
		       "only sock_create and sock_release programs access this field";
	if (IN(a, S, src_ip4) && v != BPFRT_VARIANT_POST_BIND4)
		return "only post_bind4 programs read src_ip4";
	if (IN_TILL(a, S, src_ip6[0], src_ip6[3]) && v != BPFRT_VARIANT_POST_BIND6)
		return "only post_bind6 programs read src_ip6";
	if (IN(a, S, src_port) && v != BPFRT_VARIANT_POST_BIND4 && v != BPFRT_VARIANT_POST_BIND6)
		return "only post_bind programs read src_port";
	return a->write ? RDONLY : NULL;
}

/* ---- struct bpf_sock_addr ---- */

const char *bpfrt_ctx_rule_sock_addr(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sock_addr S;
	uint8_t v = a->variant;
	bool ip4 = v == BPFRT_VARIANT_ADDR4 || v == BPFRT_VARIANT_SENDMSG4 ||
		   v == BPFRT_VARIANT_ADDR4_PEER || v == BPFRT_VARIANT_BIND4;
	bool ip6 = v == BPFRT_VARIANT_ADDR6 || v == BPFRT_VARIANT_SENDMSG6 ||
		   v == BPFRT_VARIANT_ADDR6_PEER || v == BPFRT_VARIANT_BIND6;
	bool wide6;

	if (IN(a, S, user_ip4) && !ip4)
		return "user_ip4 is an IPv4 program's field";
	if (IN_TILL(a, S, user_ip6[0], user_ip6[3]) && !ip6)
		return "user_ip6 is an IPv6 program's field";
	if (IN(a, S, msg_src_ip4) && v != BPFRT_VARIANT_SENDMSG4)
		return "msg_src_ip4 is a sendmsg4 program's field";
	if (IN_TILL(a, S, msg_src_ip6[0], msg_src_ip6[3]) && v != BPFRT_VARIANT_SENDMSG6)
		return "msg_src_ip6 is a sendmsg6 program's field";
	if (IN(a, S, user_ip4) || IN_TILL(a, S, user_ip6[0], user_ip6[3]) ||
	    IN(a, S, msg_src_ip4) || IN_TILL(a, S, msg_src_ip6[0], msg_src_ip6[3]) ||
	    IN(a, S, user_port)) {
		/* an 8-byte access to an aligned pair of the 16-byte arrays */
		wide6 = a->size == 8 && (IN_TILL(a, S, user_ip6[0], user_ip6[3]) ||
					 IN_TILL(a, S, msg_src_ip6[0], msg_src_ip6[3]));
		if (wide6)
			return NULL;
		return (a->write ? a->size == 4 : narrow_ok(a->size, 4)) ? NULL : WIDTH;
	}
	if (IN(a, S, sk))
		return a->write ? RDONLY : KERNEL_PTR;
	if (IN(a, S, user_family) || IN(a, S, family) || IN(a, S, type) || IN(a, S, protocol))
		return a->write ? RDONLY : a->size != 4 ? WIDTH : NULL;
	return NO_FIELD;
}

/* ---- struct bpf_sock_ops ---- */

const char *bpfrt_ctx_rule_sock_ops(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sock_ops S;

	if (a->write)
		return a->off != offsetof(S, reply) && a->off != offsetof(S, sk_txhash) ? RDONLY :
		       a->size != 4 ? WIDTH : NULL;
	if (IN_TILL(a, S, bytes_received, bytes_acked))
		return a->size != 8 ? WIDTH : NULL;
	if (IN(a, S, sk))
		return KERNEL_PTR;
	if (IN(a, S, skb_data) || IN(a, S, skb_data_end))
		return a->sext ? "packet pointers are not sign-extended" :
		       a->size != 8 ? "packet pointers are loaded whole (8 bytes)" : NULL;
	if (a->off == offsetof(S, skb_tcp_flags))
		return narrow_ok(a->size, 4) ? NULL : WIDTH;
	if (a->off >= offsetof(S, skb_tcp_flags) + 4)
		return a->size != 8 ? WIDTH : NULL; /* skb_hwtstamp, newer than these headers */
	return a->size != 4 ? WIDTH : NULL;
}

/* ---- struct sk_msg_md ---- */

const char *bpfrt_ctx_rule_sk_msg(const struct bpfrt_ctx_access *a)
{
	typedef struct sk_msg_md S;

	if (a->write)
		return "an sk_msg program's context is read-only";
	if (IN(a, S, data) || IN(a, S, data_end))
		return a->sext ? "packet pointers are not sign-extended" :
		       a->size != 8 ? "packet pointers are loaded whole (8 bytes)" : NULL;
	if (IN(a, S, sk))
		return KERNEL_PTR;
	if (IN(a, S, family) || IN(a, S, remote_ip4) || IN(a, S, local_ip4) ||
	    IN_TILL(a, S, remote_ip6[0], remote_ip6[3]) ||
	    IN_TILL(a, S, local_ip6[0], local_ip6[3]) || IN(a, S, remote_port) ||
	    IN(a, S, local_port) || IN(a, S, size))
		return a->size != 4 ? WIDTH : NULL;
	return NO_FIELD;
}

/* ---- struct bpf_sk_lookup ---- */

const char *bpfrt_ctx_rule_sk_lookup(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sk_lookup S;

	if (a->write)
		return "an sk_lookup program's context is read-only";
	if (IN(a, S, sk))
		return KERNEL_PTR;
	if (IN(a, S, family) || IN(a, S, protocol) || IN(a, S, remote_ip4) ||
	    IN(a, S, local_ip4) || IN_TILL(a, S, remote_ip6[0], remote_ip6[3]) ||
	    IN_TILL(a, S, local_ip6[0], local_ip6[3]) || IN(a, S, local_port) ||
	    IN(a, S, ingress_ifindex))
		return narrow_ok(a->size, 4) ? NULL : WIDTH;
	if (IN(a, S, remote_port))
		/* 4 bytes (the port and the zero padding after it), for old programs */
		return a->size == 4 || narrow_ok(a->size, 2) ? NULL : WIDTH;
	if (a->off >= offsetof(S, remote_port) + 2 && a->off < offsetof(S, local_ip4))
		return narrow_ok(a->size, 2) ? NULL : WIDTH;
	return NO_FIELD;
}

/* ---- struct sk_reuseport_md ---- */

const char *bpfrt_ctx_rule_sk_reuseport(const struct bpfrt_ctx_access *a)
{
	typedef struct sk_reuseport_md S;

	if (a->write)
		return "an sk_reuseport program's context is read-only";
	if (a->off == offsetof(S, data) || a->off == offsetof(S, data_end))
		return a->size != 8 ? "packet pointers are loaded whole (8 bytes)" : NULL;
	if (a->off == offsetof(S, hash))
		return a->size != 4 ? WIDTH : NULL;
	if (a->off == offsetof(S, sk) || a->off == offsetof(S, migrating_sk))
		return KERNEL_PTR;
	if (IN(a, S, eth_protocol))
		/* the skb's protocol is 2 bytes: no narrower load */
		return a->size < 2 || !narrow_ok(a->size, 4) ? WIDTH : NULL;
	if (IN(a, S, ip_protocol) || IN(a, S, bind_inany) || IN(a, S, len))
		return narrow_ok(a->size, 4) ? NULL : WIDTH;
	return NO_FIELD;
}

/* ---- cgroup contexts ---- */

const char *bpfrt_ctx_rule_sysctl(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sysctl S;

	if (IN(a, S, write))
		return a->write ? RDONLY : narrow_ok(a->size, 4) ? NULL : WIDTH;
	if (IN(a, S, file_pos))
		return a->write ? (a->size == 4 ? NULL : WIDTH) : narrow_ok(a->size, 4) ? NULL : WIDTH;
	return NO_FIELD;
}

const char *bpfrt_ctx_rule_sockopt(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_sockopt S;
	bool get = a->variant == BPFRT_VARIANT_GETSOCKOPT;
	bool set = a->variant == BPFRT_VARIANT_SETSOCKOPT;

	if (a->write) {
		if (a->off == offsetof(S, retval))
			return a->size != 4 ? WIDTH : get ? NULL : "only getsockopt programs write retval";
		if (a->off == offsetof(S, optname) || a->off == offsetof(S, level))
			return a->size != 4 ? WIDTH : set ? NULL :
			       "only setsockopt programs write level and optname";
		if (a->off == offsetof(S, optlen))
			return a->size != 4 ? WIDTH : NULL;
		return RDONLY;
	}
	if (IN(a, S, sk))
		return KERNEL_PTR;
	if (IN(a, S, optval) || IN(a, S, optval_end))
		return a->sext ? "packet pointers are not sign-extended" :
		       a->size != 8 ? "optval pointers are loaded whole (8 bytes)" : NULL;
	if (IN(a, S, retval))
		return a->size != 4 ? WIDTH : get ? NULL : "only getsockopt programs read retval";
	return a->size != 4 ? WIDTH : NULL;
}

const char *bpfrt_ctx_rule_cgroup_dev(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_cgroup_dev_ctx S;

	if (a->write)
		return "a device program's context is read-only";
	if (IN(a, S, access_type))
		return narrow_ok(a->size, 4) ? NULL : WIDTH;
	return a->size != 4 ? WIDTH : NULL;
}

/* ---- tracing contexts that are not pt_regs alone ---- */

const char *bpfrt_ctx_rule_perf_event(const struct bpfrt_ctx_access *a)
{
	typedef struct bpf_perf_event_data S;

	if (a->write)
		return "a perf_event program's context is read-only";
	if (IN(a, S, sample_period) || IN(a, S, addr))
		return narrow_ok(a->size, 8) ? NULL : WIDTH;
	return a->size != sizeof(long) ? "registers are read whole (8 bytes)" : NULL;
}

const char *bpfrt_ctx_rule_lirc(const struct bpfrt_ctx_access *a)
{
	/* one u32 sample, read whole */
	return a->write ? "a lirc_mode2 program's context is read-only" :
	       a->size != 4 ? WIDTH : NULL;
}

const char *bpfrt_ctx_rule_u64_slots(const struct bpfrt_ctx_access *a)
{
	return a->write ? "the context is read-only" :
	       a->size != 8 ? "arguments are read whole (8-byte slots)" : NULL;
}
