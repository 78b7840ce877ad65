/* Linux's names (linux_names.h). The helper names come from the UAPI
 * header's own list (__BPF_FUNC_MAPPER), so their ids are the enum's. */
#include "isa/linux_names.h"

#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>

#define HELPER_NAME(x) [BPF_FUNC_##x] = "bpf_" #x
static const char *const helper_names[__BPF_FUNC_MAX_ID] = {
	__BPF_FUNC_MAPPER(HELPER_NAME)
};
#undef HELPER_NAME

const char *bpfrt_linux_helper_name(int64_t id)
{
	if (id <= 0 || id >= __BPF_FUNC_MAX_ID)
		return NULL;    /* 0 is bpf_unspec: no helper */
	return helper_names[id];
}

uint32_t bpfrt_linux_helper_max(void)
{
	return __BPF_FUNC_MAX_ID;
}

#define MAP_TYPE(x) [BPF_MAP_TYPE_##x] = "BPF_MAP_TYPE_" #x,
static const char *const map_type_names[] = {
	MAP_TYPE(HASH) MAP_TYPE(ARRAY) MAP_TYPE(PROG_ARRAY) MAP_TYPE(PERF_EVENT_ARRAY)
	MAP_TYPE(PERCPU_HASH) MAP_TYPE(PERCPU_ARRAY) MAP_TYPE(STACK_TRACE)
	MAP_TYPE(CGROUP_ARRAY) MAP_TYPE(LRU_HASH) MAP_TYPE(LRU_PERCPU_HASH)
	MAP_TYPE(LPM_TRIE) MAP_TYPE(ARRAY_OF_MAPS) MAP_TYPE(HASH_OF_MAPS) MAP_TYPE(DEVMAP)
	MAP_TYPE(SOCKMAP) MAP_TYPE(CPUMAP) MAP_TYPE(XSKMAP) MAP_TYPE(SOCKHASH)
	MAP_TYPE(CGROUP_STORAGE) MAP_TYPE(REUSEPORT_SOCKARRAY)
	MAP_TYPE(PERCPU_CGROUP_STORAGE) MAP_TYPE(QUEUE) MAP_TYPE(STACK)
	MAP_TYPE(SK_STORAGE) MAP_TYPE(DEVMAP_HASH) MAP_TYPE(STRUCT_OPS) MAP_TYPE(RINGBUF)
	MAP_TYPE(INODE_STORAGE) MAP_TYPE(TASK_STORAGE) MAP_TYPE(BLOOM_FILTER)
	MAP_TYPE(USER_RINGBUF)
	/* newer than the UAPI header of Debian 12: Linux 6.2 and 6.9 */
	[32] = "BPF_MAP_TYPE_CGRP_STORAGE", [33] = "BPF_MAP_TYPE_ARENA",
};
#undef MAP_TYPE

const char *bpfrt_linux_map_type_name(uint32_t type)
{
	return type < sizeof(map_type_names) / sizeof(map_type_names[0]) ?
	       map_type_names[type] : NULL;
}

/* libbpf's section names (its section_defs): a name matches a prefix
 * exactly or followed by '/' (or, for the cgroup ones, as written). */
static const struct {
	const char *prefix;
	const char *type;
} section_types[] = {
	{ "socket", "SOCKET_FILTER" }, { "sk_reuseport", "SK_REUSEPORT" },
	{ "sk_reuseport/migrate", "SK_REUSEPORT" },
	{ "kprobe", "KPROBE" }, { "kretprobe", "KPROBE" }, { "uprobe", "KPROBE" },
	{ "uretprobe", "KPROBE" }, { "uprobe.s", "KPROBE" }, { "uretprobe.s", "KPROBE" },
	{ "kprobe.multi", "KPROBE" }, { "kretprobe.multi", "KPROBE" },
	{ "uprobe.multi", "KPROBE" }, { "uretprobe.multi", "KPROBE" },
	{ "ksyscall", "KPROBE" }, { "kretsyscall", "KPROBE" }, { "usdt", "KPROBE" },
	{ "tc", "SCHED_CLS" }, { "tcx/ingress", "SCHED_CLS" }, { "tcx/egress", "SCHED_CLS" },
	{ "netkit/primary", "SCHED_CLS" }, { "netkit/peer", "SCHED_CLS" },
	{ "classifier", "SCHED_CLS" }, { "action", "SCHED_ACT" },
	{ "tracepoint", "TRACEPOINT" }, { "tp", "TRACEPOINT" },
	{ "raw_tracepoint", "RAW_TRACEPOINT" }, { "raw_tp", "RAW_TRACEPOINT" },
	{ "raw_tracepoint.w", "RAW_TRACEPOINT_WRITABLE" }, { "raw_tp.w", "RAW_TRACEPOINT_WRITABLE" },
	{ "tp_btf", "TRACING" }, { "fentry", "TRACING" }, { "fmod_ret", "TRACING" },
	{ "fexit", "TRACING" }, { "fentry.s", "TRACING" }, { "fmod_ret.s", "TRACING" },
	{ "fexit.s", "TRACING" }, { "iter", "TRACING" }, { "iter.s", "TRACING" },
	{ "freplace", "EXT" }, { "lsm", "LSM" }, { "lsm.s", "LSM" }, { "lsm_cgroup", "LSM" },
	{ "xdp", "XDP" }, { "xdp.frags", "XDP" }, { "xdp/devmap", "XDP" },
	{ "xdp.frags/devmap", "XDP" }, { "xdp/cpumap", "XDP" }, { "xdp.frags/cpumap", "XDP" },
	{ "perf_event", "PERF_EVENT" }, { "lwt_in", "LWT_IN" }, { "lwt_out", "LWT_OUT" },
	{ "lwt_xmit", "LWT_XMIT" }, { "lwt_seg6local", "LWT_SEG6LOCAL" },
	{ "sockops", "SOCK_OPS" }, { "sk_skb", "SK_SKB" }, { "sk_skb/stream_parser", "SK_SKB" },
	{ "sk_skb/stream_verdict", "SK_SKB" }, { "sk_skb/verdict", "SK_SKB" },
	{ "sk_msg", "SK_MSG" }, { "lirc_mode2", "LIRC_MODE2" },
	{ "flow_dissector", "FLOW_DISSECTOR" }, { "cgroup_skb/ingress", "CGROUP_SKB" },
	{ "cgroup_skb/egress", "CGROUP_SKB" }, { "cgroup/skb", "CGROUP_SKB" },
	{ "cgroup/sock_create", "CGROUP_SOCK" }, { "cgroup/sock_release", "CGROUP_SOCK" },
	{ "cgroup/sock", "CGROUP_SOCK" }, { "cgroup/post_bind4", "CGROUP_SOCK" },
	{ "cgroup/post_bind6", "CGROUP_SOCK" }, { "cgroup/bind4", "CGROUP_SOCK_ADDR" },
	{ "cgroup/bind6", "CGROUP_SOCK_ADDR" }, { "cgroup/connect4", "CGROUP_SOCK_ADDR" },
	{ "cgroup/connect6", "CGROUP_SOCK_ADDR" }, { "cgroup/connect_unix", "CGROUP_SOCK_ADDR" },
	{ "cgroup/sendmsg4", "CGROUP_SOCK_ADDR" }, { "cgroup/sendmsg6", "CGROUP_SOCK_ADDR" },
	{ "cgroup/sendmsg_unix", "CGROUP_SOCK_ADDR" }, { "cgroup/recvmsg4", "CGROUP_SOCK_ADDR" },
	{ "cgroup/recvmsg6", "CGROUP_SOCK_ADDR" }, { "cgroup/recvmsg_unix", "CGROUP_SOCK_ADDR" },
	{ "cgroup/getpeername4", "CGROUP_SOCK_ADDR" }, { "cgroup/getpeername6", "CGROUP_SOCK_ADDR" },
	{ "cgroup/getsockname4", "CGROUP_SOCK_ADDR" }, { "cgroup/getsockname6", "CGROUP_SOCK_ADDR" },
	{ "cgroup/sysctl", "CGROUP_SYSCTL" }, { "cgroup/getsockopt", "CGROUP_SOCKOPT" },
	{ "cgroup/setsockopt", "CGROUP_SOCKOPT" }, { "cgroup/dev", "CGROUP_DEVICE" },
	{ "struct_ops", "STRUCT_OPS" }, { "struct_ops.s", "STRUCT_OPS" },
	{ "sk_lookup", "SK_LOOKUP" }, { "netfilter", "NETFILTER" }, { "syscall", "SYSCALL" },
};

const char *bpfrt_linux_prog_type_of_section(const char *sec)
{
	const char *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < sizeof(section_types) / sizeof(section_types[0]); i++) {
		size_t n = strlen(section_types[i].prefix);

		if (strncmp(sec, section_types[i].prefix, n) || (sec[n] && sec[n] != '/'))
			continue;
		if (n > best_len) {
			best = section_types[i].type;
			best_len = n;
		}
	}
	return best;
}
