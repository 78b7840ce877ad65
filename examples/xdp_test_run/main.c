/* A packet program run through the test-run API (Linux's
 * BPF_PROG_TEST_RUN): three packets built here, the verdicts, the counts. */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <stdio.h>
#include <string.h>

#include <bpfrt/bpfrt.h>
#include "filter.skel.h"

/* Ethernet + IPv4 + UDP to port, or an ARP frame when port is 0. */
static size_t build_packet(unsigned char *buf, size_t size, int port)
{
	struct ethhdr eth = { .h_proto = htons(port ? ETH_P_IP : ETH_P_ARP) };
	struct iphdr ip = { .version = 4, .ihl = 5, .ttl = 64, .protocol = IPPROTO_UDP,
			    .tot_len = htons(sizeof(ip) + sizeof(struct udphdr) + 4) };
	struct udphdr udp = { .source = htons(40000), .dest = htons((unsigned short)port),
			      .len = htons(sizeof(udp) + 4) };
	size_t len = sizeof(eth) + sizeof(ip) + sizeof(udp) + 4;

	memset(buf, 0, size);
	memcpy(buf, &eth, sizeof(eth));
	memcpy(buf + sizeof(eth), &ip, sizeof(ip));
	memcpy(buf + sizeof(eth) + sizeof(ip), &udp, sizeof(udp));
	memcpy(buf + len - 4, "ping", 4);
	return port ? len : 60;
}

static const char *verdict(unsigned long long r)
{
	return r == XDP_PASS ? "XDP_PASS" : r == XDP_DROP ? "XDP_DROP" : "other";
}

int main(void)
{
	static const int ports[] = { 53, 80, 0 };
	BPFRT_OPTS(bpfrt_object_load_opts, load_opts, .jit = true);
	struct filter *skel = filter__open();
	unsigned char pkt[128], out[128];
	int err = 0;

	if (!skel) {
		fprintf(stderr, "open: %s\n", bpfrt_last_error());
		return 1;
	}
	skel->rodata->blocked_port = 53;
	err = filter__load_opts(skel, &load_opts);
	if (err) {
		fprintf(stderr, "load: %s\n", bpfrt_last_error());
		filter__destroy(skel);
		return 1;
	}
	for (int i = 0; i < 3 && !err; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, run, .data_out = out, .data_size_out = sizeof(out));

		run.data_in = pkt;
		run.data_size_in = (uint32_t)build_packet(pkt, sizeof(pkt), ports[i]);
		err = bpfrt_prog_test_run_opts(skel->progs.filter, &run);
		if (err)
			fprintf(stderr, "test run: %s\n", bpfrt_last_error());
		else if (ports[i])
			printf("udp to port %d: %s\n", ports[i], verdict(run.retval));
		else
			printf("arp: %s\n", verdict(run.retval));
	}
	for (uint32_t k = 0; k < 3 && !err; k++) {
		static const char *names[] = { "passed", "dropped", "not ip" };
		unsigned long long n = 0;

		bpfrt_map_lookup_elem(skel->maps.stats, &k, &n);
		printf("%s: %llu\n", names[k], n);
	}
	filter__destroy(skel);
	return err ? 1 : 0;
}
