/* The program kind table (prog_kind.h). Context sizes are Linux's x86-64
 * layouts, which bpfrt hands programs as they are (no context rewriting):
 * the verifier allows exactly [0, size), test runs build contexts of it,
 * attach points compare a program's reach with what they provide. */
#include "core/prog_kind.h"
#include "bpfrt/bpfrt.h"

#include "core/error.h"

#include <errno.h>
#include <linux/bpf_perf_event.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PT_REGS_SIZE 168               /* x86-64 struct pt_regs (struct bpfrt_pt_regs) */
#define TRAMP_ARGS_SIZE (6 * 8)        /* a trampoline's frame holds 6 arguments */
#define TRAMP_ARGS_RET_SIZE (7 * 8)    /* and the return value (so far); attach checks the
				        * slot against the target's argument count */

_Static_assert(sizeof(struct xdp_md) == 24, "xdp_md as Linux lays it out");
_Static_assert(sizeof(struct __sk_buff) == 192, "__sk_buff as Linux lays it out");

#define SECS(...) ((const struct bpfrt_sec_def[]){ __VA_ARGS__, { NULL, 0, 0, 0 } })
#define SLEEP BPFRT_SEC_SLEEPABLE
#define RET BPFRT_SEC_RETPROBE

#define TRACING(nm, shortnm, can_attach, ctxtype) \
	.info = { .name = nm, .tracing = true, .attachable = can_attach, .runs = true, \
		  .ctx_type = ctxtype }, .short_name = shortnm
/* a kind whose context only a kernel builds: loads and verifies only */
#define KERNEL(nm, shortnm, ctxtype) \
	.info = { .name = nm, .ctx_type = ctxtype }, .short_name = shortnm

static const struct bpfrt_ctx_layout pt_regs_ctx = {
	.sizing = BPFRT_CTX_FIXED, .size = PT_REGS_SIZE, .rdonly = true,
};

/* A kernel-built __sk_buff: the rules of the program type, the packet
 * between data and data_end (u32 fields, the packet below 4 GiB). */
#define SKB_CTX(rulefn, ro, pkt_ro) { \
	.sizing = BPFRT_CTX_FIXED, .size = sizeof(struct __sk_buff), .rule = rulefn, .rdonly = ro, \
	.packet_field_cnt = 2, .packet_rdonly = pkt_ro, .sk_field = true, \
	.packet_fields = { { offsetof(struct __sk_buff, data), 4, BPFRT_PKT_DATA }, \
			   { offsetof(struct __sk_buff, data_end), 4, BPFRT_PKT_END } } }
/* a context of 64-bit packet pointers at data_off and end_off */
#define PTR_PKT_CTX(T, rulefn, ro, data_f, end_f, pkt_ro) { \
	.sizing = BPFRT_CTX_FIXED, .size = sizeof(T), .rule = rulefn, .rdonly = ro, \
	.packet_field_cnt = 2, .packet_rdonly = pkt_ro, \
	.packet_fields = { { offsetof(T, data_f), 8, BPFRT_PKT_DATA }, \
			   { offsetof(T, end_f), 8, BPFRT_PKT_END } } }
#define RULE_CTX(T, rulefn, ro) { \
	.sizing = BPFRT_CTX_FIXED, .size = sizeof(T), .rule = rulefn, .rdonly = ro }
/* u64 arguments or kernel pointers, read whole */
#define U64_SLOTS_CTX(n) { \
	.sizing = BPFRT_CTX_FIXED, .size = (n) * 8, .rdonly = true, .u64_only = true, \
	.rule = bpfrt_ctx_rule_u64_slots }

/* struct bpf_nf_ctx { const struct nf_hook_state *state; struct sk_buff *skb; } */
#define NF_CTX_SIZE 16
#define LSM_ARGS 6         /* the most arguments an LSM hook takes */
#define STRUCT_OPS_ARGS 12 /* MAX_BPF_FUNC_ARGS */
#define ITER_SLOTS 2       /* meta and the object iterated */

static const struct bpfrt_prog_kind_desc kinds[] = {
	[BPFRT_PROG_UNSPEC] = {
		/* raw loads only: no SEC() name */
		.info = { .name = "unspec", .ctx_writable = true, .runs = true,
			  .ctx_type = "caller's memory (ctx_size bytes)" },
		.short_name = "unspec",
		.ctx = { .sizing = BPFRT_CTX_CALLER },
	},
	[BPFRT_PROG_TRACEPOINT] = {
		TRACING("tracepoint", "tp", true, "struct bpfrt_tp_entry + u64 args"),
		.secs = SECS({ "tp", BPFRT_SEC_TARGET_OPT }, { "tracepoint", BPFRT_SEC_TARGET_OPT },
			     { "tp.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "tracepoint.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_TP_ARGS, .size = BPFRT_KIND_TP_HEADER,
			 .rdonly = true },
	},
	[BPFRT_PROG_RAW_TRACEPOINT] = {
		/* raw_tp.w: Linux's writable tracepoints hand a buffer the
		 * program may write; bpfrt's tracepoints pass numbers, so a
		 * store through one is refused like any scalar dereference */
		TRACING("raw_tracepoint", "raw_tp", true, "u64 args"),
		.secs = SECS({ "raw_tp", BPFRT_SEC_TARGET_OPT }, { "raw_tracepoint", BPFRT_SEC_TARGET_OPT },
			     { "raw_tp.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "raw_tracepoint.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "raw_tp.w", BPFRT_SEC_TARGET_OPT },
			     { "raw_tracepoint.w", BPFRT_SEC_TARGET_OPT },
			     { "tp_btf", BPFRT_SEC_TARGET_OPT }, { "tp_btf.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_TP_ARGS, .size = 0, .rdonly = true },
	},
	[BPFRT_PROG_FENTRY] = {
		TRACING("fentry", "fentry", true, "u64 args[6]"),
		.secs = SECS({ "fentry", BPFRT_SEC_TARGET_OPT }, { "fentry.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_SIZE, .rdonly = true,
			 .u64_only = true },
		.returns_zero = true,
	},
	[BPFRT_PROG_FEXIT] = {
		TRACING("fexit", "fexit", true, "u64 args[6], return value"),
		.secs = SECS({ "fexit", BPFRT_SEC_TARGET_OPT }, { "fexit.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_RET_SIZE, .rdonly = true,
			 .u64_only = true },
		.returns_zero = true,
	},
	[BPFRT_PROG_FMOD_RET] = {
		TRACING("fmod_ret", "fmod_ret", true, "u64 args[6], return value"),
		.secs = SECS({ "fmod_ret", BPFRT_SEC_TARGET_OPT },
			     { "fmod_ret.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_RET_SIZE, .rdonly = true,
			 .u64_only = true },
	},
	[BPFRT_PROG_FENTRY_MULTI] = {
		TRACING("fentry.multi", "fentry.multi", true, "u64 args[6]"),
		.secs = SECS({ "fentry.multi", BPFRT_SEC_TARGET_OPT },
			     { "fentry.multi.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_SIZE, .rdonly = true,
			 .u64_only = true },
	},
	[BPFRT_PROG_KPROBE] = {
		TRACING("kprobe", "kprobe", true, "struct pt_regs"),
		.secs = SECS({ "kprobe", BPFRT_SEC_TARGET_OPT }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_KRETPROBE] = {
		TRACING("kretprobe", "kretprobe", true, "struct pt_regs"),
		.secs = SECS({ "kretprobe", BPFRT_SEC_TARGET_OPT, RET }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_UPROBE] = {
		/* placed by the host's uprobe module as kprobes (the same
		 * pt_regs) in this process's executable and libraries */
		TRACING("uprobe", "uprobe", true, "struct pt_regs"),
		/* usdt: the probes of .note.stapsdt, placed as uprobes */
		.secs = SECS({ "uprobe", BPFRT_SEC_TARGET_OPT }, { "uretprobe", BPFRT_SEC_TARGET_OPT, RET },
			     { "uprobe.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "uretprobe.s", BPFRT_SEC_TARGET_OPT, SLEEP | RET },
			     { "usdt", BPFRT_SEC_TARGET_OPT }, { "usdt.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_SOCKET] = {
		.info = { .name = "socket", .packet = true, .runs = true,
			  .ctx_type = "struct __sk_buff" },
		.short_name = "socket",
		.secs = SECS({ "socket", BPFRT_SEC_TARGET_OPT }),
		/* the __sk_buff test runs build, with Linux's socket filter
		 * rules: no packet pointers (the packet is read through
		 * helpers and legacy loads), none of the fields Linux hides
		 * from socket filters, writes to cb[] only */
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = sizeof(struct __sk_buff),
			 .rule = bpfrt_ctx_rule_sk_filter_skb, .sk_field = true },
		.test_ctx = BPFRT_TEST_CTX_SK_BUFF,
	},
	[BPFRT_PROG_XDP] = {
		.info = { .name = "xdp", .packet = true, .runs = true, .ctx_type = "struct xdp_md" },
		.short_name = "xdp",
		/* devmap and cpumap programs see one more field (egress_ifindex),
		 * inside the xdp_md every xdp program may read here */
		.secs = SECS({ "xdp.frags/devmap", BPFRT_SEC_EXACT, BPFRT_SEC_XDP_FRAGS },
			     { "xdp.frags/cpumap", BPFRT_SEC_EXACT, BPFRT_SEC_XDP_FRAGS },
			     { "xdp.frags", BPFRT_SEC_EXACT, BPFRT_SEC_XDP_FRAGS },
			     { "xdp", BPFRT_SEC_TARGET_OPT }),
		/* u32 data, data_end and data_meta load as packet pointers
		 * (the packet and its metadata lie below 4 GiB) */
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = sizeof(struct xdp_md), .rdonly = true,
			 .packet_field_cnt = 3,
			 .packet_fields = {
				 { offsetof(struct xdp_md, data), 4, BPFRT_PKT_DATA },
				 { offsetof(struct xdp_md, data_end), 4, BPFRT_PKT_END },
				 { offsetof(struct xdp_md, data_meta), 4, BPFRT_PKT_META },
			 },
			 .addr_fields_end = offsetof(struct xdp_md, data_meta) + 4 },
		.test_ctx = BPFRT_TEST_CTX_XDP_MD,
	},
	[BPFRT_PROG_SYSCALL] = {
		.info = { .name = "syscall", .ctx_writable = true, .runs = true,
			  .ctx_type = "caller's memory (ctx_size bytes)" },
		.short_name = "syscall",
		.secs = SECS({ "syscall", BPFRT_SEC_EXACT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_CALLER },
	},
	/* ---- tracing kinds bpfrt runs (test runs) but does not attach ---- */
	[BPFRT_PROG_KPROBE_MULTI] = {
		TRACING("kprobe.multi", "kprobe.multi", false, "struct pt_regs"),
		.secs = SECS({ "kprobe.multi", BPFRT_SEC_TARGET_OPT },
			     { "kretprobe.multi", BPFRT_SEC_TARGET_OPT, RET },
			     { "kprobe.session", BPFRT_SEC_TARGET_OPT, BPFRT_SEC_SESSION }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_UPROBE_MULTI] = {
		TRACING("uprobe.multi", "uprobe.multi", false, "struct pt_regs"),
		.secs = SECS({ "uprobe.multi", BPFRT_SEC_TARGET_OPT },
			     { "uretprobe.multi", BPFRT_SEC_TARGET_OPT, RET },
			     { "uprobe.session", BPFRT_SEC_TARGET_OPT, BPFRT_SEC_SESSION },
			     { "uprobe.multi.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "uretprobe.multi.s", BPFRT_SEC_TARGET_OPT, SLEEP | RET },
			     { "uprobe.session.s", BPFRT_SEC_TARGET_OPT, SLEEP | BPFRT_SEC_SESSION }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_USDT] = {
		TRACING("usdt", "usdt", false, "struct pt_regs"),
		/* raw loads only: SEC("usdt") programs are the uprobe kind's */
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_KSYSCALL] = {
		TRACING("ksyscall", "ksyscall", false, "struct pt_regs"),
		.secs = SECS({ "ksyscall", BPFRT_SEC_TARGET_OPT },
			     { "kretsyscall", BPFRT_SEC_TARGET_OPT, RET }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_PERF_EVENT] = {
		TRACING("perf_event", "perf_event", false, "struct bpf_perf_event_data"),
		.secs = SECS({ "perf_event", BPFRT_SEC_EXACT }),
		.ctx = RULE_CTX(struct bpf_perf_event_data, bpfrt_ctx_rule_perf_event, true),
	},
	[BPFRT_PROG_FEXIT_MULTI] = {
		TRACING("fexit.multi", "fexit.multi", false, "u64 args[6], return value"),
		.secs = SECS({ "fexit.multi", BPFRT_SEC_TARGET_OPT },
			     { "fexit.multi.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "fsession.multi", BPFRT_SEC_TARGET_OPT, BPFRT_SEC_SESSION },
			     { "fsession.multi.s", BPFRT_SEC_TARGET_OPT, SLEEP | BPFRT_SEC_SESSION }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_RET_SIZE, .rdonly = true,
			 .u64_only = true },
	},
	[BPFRT_PROG_FSESSION] = {
		TRACING("fsession", "fsession", false, "u64 args[6], return value"),
		.secs = SECS({ "fsession", BPFRT_SEC_TARGET_OPT },
			     { "fsession.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_RET_SIZE, .rdonly = true,
			 .u64_only = true },
	},
	/* ---- kinds whose context only a kernel builds ---- */
	[BPFRT_PROG_SCHED_CLS] = {
		KERNEL("sched_cls", "tc", "struct __sk_buff"),
		.secs = SECS({ "tc", BPFRT_SEC_EXACT }, { "tc/ingress", BPFRT_SEC_EXACT },
			     { "tc/egress", BPFRT_SEC_EXACT }, { "tcx/ingress", BPFRT_SEC_EXACT },
			     { "tcx/egress", BPFRT_SEC_EXACT }, { "classifier", BPFRT_SEC_EXACT },
			     { "netkit/primary", BPFRT_SEC_EXACT }, { "netkit/peer", BPFRT_SEC_EXACT }),
		.ctx = SKB_CTX(bpfrt_ctx_rule_tc_skb, false, false),
	},
	[BPFRT_PROG_SCHED_ACT] = {
		KERNEL("sched_act", "action", "struct __sk_buff"),
		.secs = SECS({ "action", BPFRT_SEC_EXACT }),
		.ctx = SKB_CTX(bpfrt_ctx_rule_tc_skb, false, false),
	},
	[BPFRT_PROG_CGROUP_SKB] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("cgroup_skb", "cgroup_skb", "struct __sk_buff"),
		.secs = SECS({ "cgroup_skb/ingress", BPFRT_SEC_EXACT },
			     { "cgroup_skb/egress", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SKB_EGRESS }, { "cgroup/skb", BPFRT_SEC_EXACT }),
		.ctx = SKB_CTX(bpfrt_ctx_rule_cg_skb, false, true),
	},
	[BPFRT_PROG_CGROUP_SOCK] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("cgroup_sock", "cgroup_sock", "struct bpf_sock"),
		.secs = SECS({ "cgroup/sock_create", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SOCK_CREATE },
			     { "cgroup/sock_release", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SOCK_RELEASE },
			     { "cgroup/sock", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SOCK_CREATE },
			     { "cgroup/post_bind4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_POST_BIND4 },
			     { "cgroup/post_bind6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_POST_BIND6 }),
		.ctx = RULE_CTX(struct bpf_sock, bpfrt_ctx_rule_sock, false),
	},
	[BPFRT_PROG_CGROUP_SOCK_ADDR] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("cgroup_sock_addr", "cgroup_sock_addr", "struct bpf_sock_addr"),
		.secs = SECS({ "cgroup/bind4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_BIND4 },
			     { "cgroup/bind6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_BIND6 },
			     { "cgroup/connect4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR4 },
			     { "cgroup/connect6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR6 },
			     { "cgroup/connect_unix", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR_UNIX },
			     { "cgroup/sendmsg4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SENDMSG4 },
			     { "cgroup/sendmsg6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SENDMSG6 },
			     { "cgroup/sendmsg_unix", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR_UNIX },
			     { "cgroup/recvmsg4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR4_PEER },
			     { "cgroup/recvmsg6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR6_PEER },
			     { "cgroup/recvmsg_unix", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR_UNIX_PEER },
			     { "cgroup/getpeername4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR4_PEER },
			     { "cgroup/getpeername6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR6_PEER },
			     { "cgroup/getpeername_unix", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR_UNIX_PEER },
			     { "cgroup/getsockname4", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR4_PEER },
			     { "cgroup/getsockname6", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR6_PEER },
			     { "cgroup/getsockname_unix", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_ADDR_UNIX_PEER }),
		.ctx = RULE_CTX(struct bpf_sock_addr, bpfrt_ctx_rule_sock_addr, false),
	},
	[BPFRT_PROG_CGROUP_SYSCTL] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("cgroup_sysctl", "cgroup_sysctl", "struct bpf_sysctl"),
		.secs = SECS({ "cgroup/sysctl", BPFRT_SEC_EXACT }),
		.ctx = RULE_CTX(struct bpf_sysctl, bpfrt_ctx_rule_sysctl, false),
	},
	[BPFRT_PROG_CGROUP_SOCKOPT] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("cgroup_sockopt", "cgroup_sockopt", "struct bpf_sockopt"),
		.secs = SECS({ "cgroup/getsockopt", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_GETSOCKOPT },
			     { "cgroup/setsockopt", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_SETSOCKOPT }),
		/* optval..optval_end is the packet: read and written */
		.ctx = PTR_PKT_CTX(struct bpf_sockopt, bpfrt_ctx_rule_sockopt, false, optval,
				   optval_end, false),
	},
	[BPFRT_PROG_CGROUP_DEVICE] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("cgroup_device", "cgroup_dev", "struct bpf_cgroup_dev_ctx"),
		.secs = SECS({ "cgroup/dev", BPFRT_SEC_EXACT }),
		.ctx = RULE_CTX(struct bpf_cgroup_dev_ctx, bpfrt_ctx_rule_cgroup_dev, true),
	},
	[BPFRT_PROG_SOCK_OPS] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("sock_ops", "sockops", "struct bpf_sock_ops"),
		.secs = SECS({ "sockops", BPFRT_SEC_EXACT }),
		/* the segment between skb_data and skb_data_end: read only */
		.ctx = PTR_PKT_CTX(struct bpf_sock_ops, bpfrt_ctx_rule_sock_ops, false, skb_data,
				   skb_data_end, true),
	},
	[BPFRT_PROG_SK_SKB] = {
		KERNEL("sk_skb", "sk_skb", "struct __sk_buff"),
		.secs = SECS({ "sk_skb/stream_parser", BPFRT_SEC_EXACT },
			     { "sk_skb/stream_verdict", BPFRT_SEC_EXACT },
			     { "sk_skb/verdict", BPFRT_SEC_EXACT }, { "sk_skb", BPFRT_SEC_EXACT }),
		.ctx = SKB_CTX(bpfrt_ctx_rule_sk_skb, false, false),
	},
	[BPFRT_PROG_SK_MSG] = {
		KERNEL("sk_msg", "sk_msg", "struct sk_msg_md"),
		.secs = SECS({ "sk_msg", BPFRT_SEC_EXACT }),
		/* the message may be written through data (Linux's rule) */
		.ctx = PTR_PKT_CTX(struct sk_msg_md, bpfrt_ctx_rule_sk_msg, true, data, data_end,
				   false),
	},
	[BPFRT_PROG_SK_LOOKUP] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("sk_lookup", "sk_lookup", "struct bpf_sk_lookup"),
		.secs = SECS({ "sk_lookup", BPFRT_SEC_EXACT }),
		.ctx = RULE_CTX(struct bpf_sk_lookup, bpfrt_ctx_rule_sk_lookup, true),
	},
	[BPFRT_PROG_SK_REUSEPORT] = {
		KERNEL("sk_reuseport", "sk_reuseport", "struct sk_reuseport_md"),
		.secs = SECS({ "sk_reuseport/migrate", BPFRT_SEC_EXACT },
			     { "sk_reuseport", BPFRT_SEC_EXACT }),
		.ctx = PTR_PKT_CTX(struct sk_reuseport_md, bpfrt_ctx_rule_sk_reuseport, true, data,
				   data_end, true),
	},
	[BPFRT_PROG_FLOW_DISSECTOR] = {
		KERNEL("flow_dissector", "flow_dissector", "struct __sk_buff"),
		.secs = SECS({ "flow_dissector", BPFRT_SEC_EXACT }),
		.ctx = SKB_CTX(bpfrt_ctx_rule_flow_dissector, true, true),
	},
	[BPFRT_PROG_LWT] = {
		KERNEL("lwt", "lwt", "struct __sk_buff"),
		.secs = SECS({ "lwt_in", BPFRT_SEC_EXACT }, { "lwt_out", BPFRT_SEC_EXACT },
			     { "lwt_xmit", BPFRT_SEC_EXACT, 0, BPFRT_VARIANT_LWT_XMIT }, { "lwt_seg6local", BPFRT_SEC_EXACT }),
		/* only lwt_xmit writes its packet (bpfrt_prog_kind_packet_rdonly) */
		.ctx = SKB_CTX(bpfrt_ctx_rule_lwt_skb, false, true),
	},
	[BPFRT_PROG_LIRC_MODE2] = {
		KERNEL("lirc_mode2", "lirc_mode2", "u32 sample"),
		.secs = SECS({ "lirc_mode2", BPFRT_SEC_EXACT }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = 4, .rdonly = true,
			 .rule = bpfrt_ctx_rule_lirc },
	},
	[BPFRT_PROG_LSM] = {
		KERNEL("lsm", "lsm", "u64 args of the LSM hook"),
		.secs = SECS({ "lsm", BPFRT_SEC_TARGET_OPT }, { "lsm.s", BPFRT_SEC_TARGET_OPT, SLEEP },
			     { "lsm_cgroup", BPFRT_SEC_TARGET_OPT }),
		.ctx = U64_SLOTS_CTX(LSM_ARGS),
	},
	[BPFRT_PROG_ITER] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("iter", "iter", "struct bpf_iter__NAME (kernel pointers)"),
		.secs = SECS({ "iter", BPFRT_SEC_TARGET_OPT }, { "iter.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = U64_SLOTS_CTX(ITER_SLOTS),
	},
	[BPFRT_PROG_STRUCT_OPS] = {
		KERNEL("struct_ops", "struct_ops", "u64 args of the operation"),
		.secs = SECS({ "struct_ops", BPFRT_SEC_TARGET_OPT },
			     { "struct_ops.s", BPFRT_SEC_TARGET_OPT, SLEEP }),
		.ctx = U64_SLOTS_CTX(STRUCT_OPS_ARGS),
	},
	[BPFRT_PROG_NETFILTER] = {
		.ret_checked = true, .ret_max = 1,
		KERNEL("netfilter", "netfilter", "struct bpf_nf_ctx (kernel pointers)"),
		.secs = SECS({ "netfilter", BPFRT_SEC_EXACT }),
		.ctx = U64_SLOTS_CTX(NF_CTX_SIZE / 8),
	},
	[BPFRT_PROG_EXT] = {
		/* refused at load (bpfrt_prog_kind_load_refusal) */
		KERNEL("ext", "freplace", "the replaced BPF function's arguments"),
		.secs = SECS({ "freplace", BPFRT_SEC_TARGET_OPT }),
		.ctx = U64_SLOTS_CTX(1),
		.load_refused = "it replaces a function of a program loaded in the kernel, "
				"which this process does not have",
	},
};

#define KIND_COUNT ((int)(sizeof(kinds) / sizeof(kinds[0])))

_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == BPFRT_PROG_EXT + 1,
	       "every enum bpfrt_prog_kind value has a description");

const struct bpfrt_prog_kind_desc *bpfrt_prog_kind_desc(int kind)
{
	/* a hole in the designated initializers would have no name */
	return kind >= 0 && kind < KIND_COUNT && kinds[kind].info.name ? &kinds[kind] : NULL;
}

int bpfrt_prog_kind_count(void)
{
	return KIND_COUNT;
}

const struct bpfrt_prog_kind_info *bpfrt_prog_kind_info(enum bpfrt_prog_kind kind)
{
	const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc((int)kind);

	return d ? &d->info : NULL;
}

/* sec after a definition's name: NULL if it does not match, else where
 * the target starts. */
static const char *sec_match(const char *sec, const struct bpfrt_sec_def *def)
{
	size_t n = strlen(def->name);

	if (strncmp(sec, def->name, n))
		return NULL;
	switch (def->syntax) {
	case BPFRT_SEC_EXACT:
		return sec[n] ? NULL : sec + n;
	case BPFRT_SEC_TARGET:
		return sec[n] == '/' ? sec + n + 1 : NULL;
	case BPFRT_SEC_TARGET_OPT:
		return !sec[n] ? sec + n : sec[n] == '/' ? sec + n + 1 : NULL;
	}
	return NULL;
}

int bpfrt_prog_sec_parse(const char *sec, struct bpfrt_sec_parsed *out)
{
	bool autoload = true;

	if (!sec)
		return -ENOENT;
	/* libbpf: "?" before any name means "do not load unless asked" */
	if (sec[0] == '?') {
		autoload = false;
		sec++;
	}
	for (int k = 0; k < KIND_COUNT; k++)
		for (const struct bpfrt_sec_def *def = kinds[k].secs; def && def->name; def++) {
			const char *t = sec_match(sec, def);

			if (t) {
				*out = (struct bpfrt_sec_parsed){ .kind = (enum bpfrt_prog_kind)k,
								  .def = def, .target = t,
								  .autoload = autoload };
				return 0;
			}
		}
	return -ENOENT;
}

int bpfrt_prog_kind_from_sec(const char *sec, enum bpfrt_prog_kind *kind, const char **target)
{
	struct bpfrt_sec_parsed p;
	int err = bpfrt_prog_sec_parse(sec, &p);

	if (err)
		return err;
	*kind = p.kind;
	*target = p.target;
	return 0;
}

/* Splits "A:B" at the last ':' before any '+' (a path may hold ':' only
 * if it is the library form, which has none). */
int bpfrt_probe_target_parse(enum bpfrt_prog_kind kind, const char *target, char *buf,
			     size_t size, struct bpfrt_probe_target *out)
{
	const char *what = bpfrt_prog_kind_str(kind);
	size_t len = target ? strlen(target) : 0;
	char *colon, *plus, *second;

	memset(out, 0, sizeof(*out));
	if (kind != BPFRT_PROG_UPROBE && kind != BPFRT_PROG_UPROBE_MULTI && kind != BPFRT_PROG_USDT)
		return bpfrt_err(-EINVAL, "probe target: kind %s has no PATH:FUNC target", what);
	if (!len)
		return bpfrt_err(-EINVAL, "%s: no target (the program is attached by hand, "
				 "naming its binary and function)", what);
	if (len >= size)
		return bpfrt_err(-ENAMETOOLONG, "%s target '%s': longer than %zu bytes", what,
				 target, size - 1);
	memcpy(buf, target, len + 1);
	colon = strchr(buf, ':');
	if (!colon || colon == buf || !colon[1])
		return bpfrt_err(-EINVAL, "%s target '%s': want %s", what, target,
				 kind == BPFRT_PROG_USDT ? "PATH:PROVIDER:NAME" : "PATH:FUNC[+OFFSET]");
	*colon = '\0';
	out->path = buf;
	out->func = colon + 1;
	if (kind == BPFRT_PROG_USDT) {
		second = strchr(colon + 1, ':');
		if (!second || second == colon + 1 || !second[1])
			return bpfrt_err(-EINVAL, "usdt target '%s': want PATH:PROVIDER:NAME", target);
		*second = '\0';
		out->name = second + 1;
		return 0;
	}
	plus = strchr(colon + 1, '+');
	if (plus) {
		char *end;

		*plus = '\0';
		errno = 0;
		out->offset = strtoull(plus + 1, &end, 0);
		if (!plus[1] || *end || errno || plus == colon + 1)
			return bpfrt_err(-EINVAL, "%s target '%s': bad offset after '+'", what, target);
	}
	return 0;
}

bool bpfrt_prog_kind_ret_range(const struct bpfrt_prog_kind_desc *d, uint8_t variant,
				const char *target, int64_t *min, int64_t *max)
{
	if (d == &kinds[BPFRT_PROG_LSM])
		return bpfrt_lsm_hook_ret_range(target, min, max);
	if (d->returns_zero) {
		*min = *max = 0;
		return true;
	}
	if (!d->ret_checked)
		return false;
	*min = d->ret_min;
	*max = d->ret_max;
	/* Linux's check_return_code: egress skb programs may also ask for
	 * congestion notification (2, 3); the peer-address hooks may only
	 * allow (1) */
	if (variant == BPFRT_VARIANT_SKB_EGRESS || variant == BPFRT_VARIANT_BIND4 ||
	    variant == BPFRT_VARIANT_BIND6)
		*max = 3; /* bind: 2 and 3 also lift the CAP_NET_BIND_SERVICE check */
	if (variant == BPFRT_VARIANT_ADDR4_PEER || variant == BPFRT_VARIANT_ADDR6_PEER ||
	    variant == BPFRT_VARIANT_ADDR_UNIX_PEER)
		*min = 1;
	return true;
}

bool bpfrt_prog_kind_packet_rdonly(const struct bpfrt_prog_kind_desc *d, uint8_t variant)
{
	return d->ctx.packet_rdonly && variant != BPFRT_VARIANT_LWT_XMIT;
}

bool bpfrt_prog_kind_is_tracing(int kind)
{
	const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(kind);

	return d && d->info.tracing;
}

bool bpfrt_prog_kinds_share_ctx(int a, int b)
{
	const struct bpfrt_prog_kind_desc *da = bpfrt_prog_kind_desc(a);
	const struct bpfrt_prog_kind_desc *db = bpfrt_prog_kind_desc(b);

	if (a == b)
		return true;
	return da && db && da->ctx_class != BPFRT_CTX_CLASS_OWN && da->ctx_class == db->ctx_class;
}

const char *bpfrt_prog_kind_str(int kind)
{
	const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(kind);

	return d ? d->short_name : "unknown";
}

/* Written once by the host's constructor, read at loads: atomic, so a
 * load on another thread never sees a torn pointer. */
static _Atomic(bpfrt_tp_nargs_fn) tp_nargs_lookup;

void bpfrt_prog_kind_set_tp_nargs(bpfrt_tp_nargs_fn fn)
{
	atomic_store_explicit(&tp_nargs_lookup, fn, memory_order_release);
}

uint32_t bpfrt_prog_kind_tp_nargs(const char *target)
{
	bpfrt_tp_nargs_fn fn = atomic_load_explicit(&tp_nargs_lookup, memory_order_acquire);
	int n = fn && target && *target ? fn(target) : -ENOENT;

	return n >= 0 && n <= BPFRT_KIND_TP_MAX_ARGS ? (uint32_t)n : BPFRT_KIND_TP_MAX_ARGS;
}
