/* An XDP packet filter: drops UDP to one port (a knob), passes the rest,
 * and counts both in an array map. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u16 blocked_port = 9;   /* knob, host byte order */

enum { STAT_PASS, STAT_DROP, STAT_NOT_IP, STAT_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static int count(__u32 what, int verdict)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &what);

	if (n)
		__sync_fetch_and_add(n, 1);
	return verdict;
}

SEC("xdp")
int filter(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return count(STAT_NOT_IP, XDP_PASS);
	if (ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		return count(STAT_PASS, XDP_PASS);
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		return count(STAT_PASS, XDP_PASS);
	if (udp->dest == bpf_htons(blocked_port))
		return count(STAT_DROP, XDP_DROP);
	return count(STAT_PASS, XDP_PASS);
}
