/* Load-bound: the internet checksum (RFC 1071) over a whole 1,500-byte
 * packet, a byte at a time in network byte order, with the data/data_end
 * check the kernel verifier demands before every load. */
#include "../bench_xdp.h"

#define PKT_BYTES 1500

SEC("xdp")
int checksum(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *p = data;
	__u64 sum = 0;

	for (int i = 0; i < PKT_BYTES; i++) {
		if ((void *)(p + 1) > data_end)
			break;
		/* even bytes are the high halves of the 16-bit words */
		sum += (__u64)*p++ << (i & 1 ? 0 : 8);
	}
	/* 750 words of 16 bits fit in 26 bits: two folds are enough. */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

char LICENSE[] SEC("license") = "GPL";
