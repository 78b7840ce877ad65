/* bpfrt_prog_test_run_opts: Linux's BPF_PROG_TEST_RUN for bpfrt. The
 * context handed to the program is always one of its kind and of the size
 * it was verified for, built here: an xdp_md over a copy of the packet, a
 * __sk_buff describing it, a zeroed (or caller-filled) tracing context,
 * or a copy of the caller's memory for UNSPEC/SYSCALL. bpfrt_prog_run
 * then checks the length once more. */
#define _GNU_SOURCE
#include "core/prog.h"
#include "core/error.h"
#include "core/opts.h"
#include "helpers/skb_load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ETH_HLEN_MIN 14  /* Linux refuses skb and xdp test packets shorter than ETH_HLEN */
#define XDP_META_MAX 32  /* Linux's largest XDP metadata (xdp_metalen_invalid) */
/* Unverified (trusted) tracing programs: the context, zero beyond
 * ctx_in, is at least this large (every kind's context is smaller). */
#define TRUSTED_CTX_MIN 512
#define LOW_LIMIT (1ull << 32)

/* The kind's name as test runs print it ("raw_tracepoint", "xdp", ...). */
static const char *kind_str(int kind)
{
	const struct bpfrt_prog_kind_info *info = bpfrt_prog_kind_info((enum bpfrt_prog_kind)kind);

	return info ? info->name : "unknown";
}

/* ---- the packet, below 4 GiB ---------------------------------------------
 * xdp_md's data/data_end are 32-bit fields and bpfrt hands the program
 * the fields themselves (the verifier types a 4-byte load of them as a
 * packet pointer; there is no rewriting into 64-bit loads as in Linux),
 * so the packet must lie entirely below 4 GiB. x86-64 has MAP_32BIT;
 * elsewhere (arm64, riscv64) addresses below 4 GiB are asked for one by
 * one with MAP_FIXED_NOREPLACE (a plain hint where the kernel predates
 * it: the result is checked either way). The packet ends at a PROT_NONE
 * page, so a read past data_end faults instead of reading a neighbour. */
struct low_packet {
	uint8_t *map;
	size_t map_len;
	uint8_t *data;
};

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static bool below_4g(const void *p, size_t len)
{
	return (uintptr_t)p + len <= LOW_LIMIT;
}

static void *map_low(size_t len)
{
	void *p;

#ifdef MAP_32BIT
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
		 -1, 0);
	if (p != MAP_FAILED) {
		if (below_4g(p, len))
			return p;
		munmap(p, len);
	}
#endif
	/* 16 MiB, then every 256 MiB up to 4 GiB: clear of the usual
	 * non-PIE text at 4 MiB and of the zero page */
	for (uint64_t hint = 1ull << 24; hint + len <= LOW_LIMIT;
	     hint = hint < (1ull << 28) ? 1ull << 28 : hint + (1ull << 28)) {
		p = mmap((void *)(uintptr_t)hint, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if (below_4g(p, len))
			return p;
		munmap(p, len);
	}
	return NULL;
}

static int packet_alloc(const struct bpfrt_prog *prog, struct low_packet *pkt,
			const void *data, uint32_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (len + page - 1) / page * page;

	pkt->map_len = body + page;
	pkt->map = map_low(pkt->map_len);
	if (!pkt->map)
		return bpfrt_err(-ENOMEM, "test_run: %s: cannot map a packet below 4 GiB (xdp_md "
				 "holds 32-bit data/data_end): no free low address", prog->name);
	if (mprotect(pkt->map + body, page, PROT_NONE)) {
		int e = errno;

		munmap(pkt->map, pkt->map_len);
		pkt->map = NULL;
		return bpfrt_err(-e, "test_run: %s: packet guard page: %s", prog->name, strerror(e));
	}
	pkt->data = pkt->map + body - len;
	memcpy(pkt->data, data, len);
	return 0;
}

static void packet_free(struct low_packet *pkt)
{
	if (pkt->map)
		munmap(pkt->map, pkt->map_len);
}

/* ---- contexts ------------------------------------------------------------ */

/* ctx_in of a fixed-layout context (xdp_md, __sk_buff), as Linux's
 * bpf_ctx_init: shorter is zero-filled, bytes past the struct must be 0. */
static int ctx_in_fixed(const struct bpfrt_prog *prog, const struct bpfrt_test_run_opts *o,
			void *ctx, size_t size, const char *what)
{
	const uint8_t *in = o->ctx_in;

	memset(ctx, 0, size);
	if (!in)
		return 0;
	for (size_t i = size; i < o->ctx_size_in; i++)
		if (in[i])
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in is %u bytes, a %s is %zu "
					 "(the bytes past it must be 0; byte %zu is not)", prog->name,
					 o->ctx_size_in, what, size, i);
	memcpy(ctx, in, o->ctx_size_in < size ? o->ctx_size_in : size);
	return 0;
}

static int packet_in(const struct bpfrt_prog *prog, const struct bpfrt_test_run_opts *o)
{
	if (!o->data_in || o->data_size_in < ETH_HLEN_MIN)
		return bpfrt_err(-EINVAL, "test_run: %s: %s programs run on a packet: data_in "
				 "of at least %u bytes (an Ethernet header) is needed, got %u",
				 prog->name, kind_str(prog->kind), ETH_HLEN_MIN,
				 o->data_in ? o->data_size_in : 0);
	if (o->data_size_in > BPFRT_TEST_RUN_MAX_DATA)
		return bpfrt_err(-EINVAL, "test_run: %s: data_in is %u bytes, at most %u are "
				 "supported", prog->name, o->data_size_in, BPFRT_TEST_RUN_MAX_DATA);
	return 0;
}

static int xdp_ctx(const struct bpfrt_prog *prog, const struct bpfrt_test_run_opts *o,
		   struct xdp_md *md)
{
	int err = ctx_in_fixed(prog, o, md, sizeof(*md), "struct xdp_md");

	if (err)
		return err;
	if (o->ctx_in) {
		/* as Linux: data_in starts with the metadata, data is its
		 * length (data_meta 0: nothing before it), data_end the
		 * length of the whole */
		if (md->data_meta)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in xdp_md: data_meta must be 0 "
					 "(data_in starts with the metadata), got %u", prog->name,
					 md->data_meta);
		if (md->data % 4 || md->data > XDP_META_MAX || md->data > md->data_end)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in xdp_md: data %u is the "
					 "metadata's length: a multiple of 4, at most %u and within "
					 "data_end", prog->name, md->data, XDP_META_MAX);
		if (md->data_end != o->data_size_in)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in xdp_md: data_end must be "
					 "data_size_in (%u), got %u", prog->name, o->data_size_in,
					 md->data_end);
		if (md->egress_ifindex)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in xdp_md: egress_ifindex must "
					 "be 0", prog->name);
		if (!md->ingress_ifindex && md->rx_queue_index)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in xdp_md: rx_queue_index %u "
					 "without an ingress_ifindex", prog->name, md->rx_queue_index);
	}
	if (!md->ingress_ifindex)
		md->ingress_ifindex = 1; /* Linux's test runs arrive on loopback */
	return 0;
}

/* Fields of __sk_buff a caller may set, as Linux's test runs allow. */
static bool skb_settable(size_t off)
{
	static const struct { uint16_t off, len; } ok[] = {
		{ offsetof(struct __sk_buff, mark), 4 },
		{ offsetof(struct __sk_buff, priority), 4 },
		{ offsetof(struct __sk_buff, ingress_ifindex), 4 },
		{ offsetof(struct __sk_buff, ifindex), 4 },
		{ offsetof(struct __sk_buff, cb), sizeof(((struct __sk_buff *)0)->cb) },
		{ offsetof(struct __sk_buff, tstamp), 8 },
		{ offsetof(struct __sk_buff, wire_len), 4 },
		{ offsetof(struct __sk_buff, gso_segs), 4 },
		{ offsetof(struct __sk_buff, gso_size), 4 },
		{ offsetof(struct __sk_buff, hwtstamp), 8 },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (off >= ok[i].off && off < (size_t)ok[i].off + ok[i].len)
			return true;
	return false;
}

static int skb_ctx(const struct bpfrt_prog *prog, const struct bpfrt_test_run_opts *o,
		   struct __sk_buff *skb)
{
	const uint8_t *pkt = o->data_in, *raw = (const uint8_t *)skb;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t lo_addr[6];
	uint16_t proto;
	int err = ctx_in_fixed(prog, o, skb, sizeof(*skb), "struct __sk_buff");

	if (err)
		return err;
	for (size_t i = 0; i < sizeof(*skb); i++)
		if (raw[i] && !skb_settable(i))
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in __sk_buff: the field at offset "
					 "%zu cannot be set (mark, priority, ingress_ifindex, ifindex, "
					 "cb, tstamp, wire_len, gso_segs, gso_size, hwtstamp can)",
					 prog->name, i);
	if (skb->wire_len && skb->wire_len < o->data_size_in)
		return bpfrt_err(-EINVAL, "test_run: %s: ctx_in __sk_buff: wire_len %u is below the "
				 "packet's %u bytes", prog->name, skb->wire_len, o->data_size_in);
	skb->len = o->data_size_in;
	if (!skb->wire_len)
		skb->wire_len = o->data_size_in;
	if (!skb->ifindex)
		skb->ifindex = 1; /* loopback */
	/* the Ethernet type as the skb holds it (network order), and the
	 * packet type against loopback's all-zero address (eth_type_trans) */
	memcpy(&proto, pkt + 12, 2);
	skb->protocol = proto;
	if (pkt[0] & 1)
		skb->pkt_type = memcmp(pkt, bcast, 6) ? 2 /* PACKET_MULTICAST */
						      : 1 /* PACKET_BROADCAST */;
	else
		skb->pkt_type = memcmp(pkt, lo_addr, 6) ? 3 /* PACKET_OTHERHOST */ : 0;
	skb->gso_segs = skb->gso_segs ? skb->gso_segs : 1;
	return 0;
}

/* What Linux copies back into ctx_out for skb runs: the settable fields. */
static void skb_ctx_out(struct __sk_buff *out, const struct __sk_buff *run)
{
	const uint8_t *r = (const uint8_t *)run;
	uint8_t *w = (uint8_t *)out;

	for (size_t i = 0; i < sizeof(*out); i++)
		w[i] = skb_settable(i) ? r[i] : 0;
}

/* A caller-filled or zeroed context of the size the program was verified
 * for (never shorter than what it reads). */
static int sized_ctx(const struct bpfrt_prog *prog, const struct bpfrt_test_run_opts *o,
		     void **ctx, uint32_t *len)
{
	bool tracing = bpfrt_prog_kind_is_tracing(prog->kind);
	uint32_t size;

	if (o->ctx_in && o->ctx_size_in > BPFRT_TEST_RUN_MAX_CTX)
		return bpfrt_err(-EINVAL, "test_run: %s: ctx_in of %u bytes, at most %u", prog->name,
				 o->ctx_size_in, BPFRT_TEST_RUN_MAX_CTX);
	if (prog->verified) {
		uint32_t given = o->ctx_in ? o->ctx_size_in : 0;

		if (o->ctx_in && given < prog->max_ctx_access)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in of %u bytes is shorter than "
					 "the %u bytes of its %u-byte %s context the program was "
					 "verified to read", prog->name, given, prog->max_ctx_access,
					 prog->ctx_size, kind_str(prog->kind));
		if (!tracing && given < prog->ctx_size)
			return bpfrt_err(-EINVAL, "test_run: %s: the program was verified for a "
					 "%u-byte context: ctx_in of %u bytes%s", prog->name,
					 prog->ctx_size, given, o->ctx_in ? "" : " (none given)");
		if (tracing && given > prog->ctx_size)
			return bpfrt_err(-EINVAL, "test_run: %s: ctx_in of %u bytes, its %s context "
					 "is %u", prog->name, given, kind_str(prog->kind),
					 prog->ctx_size);
		size = tracing ? prog->ctx_size : given;
	} else {
		size = o->ctx_in ? o->ctx_size_in : 0;
		if (tracing && size < TRUSTED_CTX_MIN)
			size = TRUSTED_CTX_MIN;
	}
	/* never a NULL context, even for one of 0 bytes */
	*ctx = calloc(1, size ? size : 8);
	if (!*ctx)
		return bpfrt_err(-ENOMEM, "test_run: %s: out of memory", prog->name);
	if (o->ctx_in)
		memcpy(*ctx, o->ctx_in, o->ctx_size_in);
	*len = size;
	return 0;
}

/* Copies len bytes to a caller buffer of *cap bytes, as Linux's
 * bpf_test_finish (packet) and bpf_ctx_finish (context): what fits,
 * -ENOSPC if not all, *cap = len. Only the packet buffer keeps the old
 * "0: large enough" convention (zero_unbounded); a context buffer of 0
 * bytes gets nothing, so a small ctx_out is never written past its end. */
static int copy_out(void *dst, uint32_t *cap, const void *src, uint32_t len,
		    bool zero_unbounded)
{
	uint32_t n = len;
	int err = 0;

	if (dst) {
		if ((*cap || !zero_unbounded) && *cap < len) {
			n = *cap;
			err = -ENOSPC;
		}
		if (n)
			memcpy(dst, src, n);
	}
	*cap = len;
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bpfrt_prog_test_run_opts(struct bpfrt_prog *prog, struct bpfrt_test_run_opts *user)
{
	/* The caller's fields, defaults past its sz; outputs go back with
	 * OPTS_SET (an older caller's struct may lack some). */
	struct bpfrt_test_run_opts local = {
		.sz = sizeof(local),
		.data_in = OPTS_GET(user, data_in, NULL),
		.data_out = OPTS_GET(user, data_out, NULL),
		.data_size_in = OPTS_GET(user, data_size_in, 0),
		.data_size_out = OPTS_GET(user, data_size_out, 0),
		.ctx_in = OPTS_GET(user, ctx_in, NULL),
		.ctx_out = OPTS_GET(user, ctx_out, NULL),
		.ctx_size_in = OPTS_GET(user, ctx_size_in, 0),
		.ctx_size_out = OPTS_GET(user, ctx_size_out, 0),
		.repeat = OPTS_GET(user, repeat, 0),
		.flags = OPTS_GET(user, flags, 0),
		.mode = OPTS_GET(user, mode, BPFRT_EXEC_DEFAULT),
	}, *o = &local;
	const struct bpfrt_prog_kind_desc *desc;
	bool packet, xdp;
	struct low_packet pkt = { 0 };
	struct xdp_md md;
	struct __sk_buff skb;
	struct bpfrt_skb_packet skb_pkt;
	const struct bpfrt_skb_packet *prev_pkt = NULL;
	void *ctx = NULL, *heap_ctx = NULL;
	uint32_t ctx_len = 0, repeat, meta_len = 0;
	uint64_t r0 = 0, t0, t1;
	int err = 0, out_err = 0;

	bpfrt_err_clear();
	if (!prog || !prog->insns)
		return bpfrt_err(-EINVAL, "test_run: no loaded program");
	desc = bpfrt_prog_kind_desc(prog->kind);
	if (!desc)
		return bpfrt_err(-EINVAL, "test_run: %s: kind %d is no program kind", prog->name,
				 prog->kind);
	if (!desc->info.runs)
		return bpfrt_err(-EOPNOTSUPP, "test_run: %s: kind %s cannot run here: its context "
				 "(%s) is built only by a kernel", prog->name, desc->short_name,
				 desc->info.ctx_type);
	packet = desc->info.packet;
	xdp = desc->test_ctx == BPFRT_TEST_CTX_XDP_MD;
	if (!OPTS_VALID(user, bpfrt_test_run_opts))
		return -EINVAL;
	if (o->flags)
		return bpfrt_err(-EINVAL, "test_run: %s: unknown flags %#x", prog->name, o->flags);
	if (o->repeat < 0)
		return bpfrt_err(-EINVAL, "test_run: %s: repeat %d", prog->name, o->repeat);
	if ((o->data_size_in && !o->data_in) || (o->ctx_size_in && !o->ctx_in))
		return bpfrt_err(-EINVAL, "test_run: %s: a size without its buffer (data_in or "
				 "ctx_in NULL)", prog->name);
	if (!packet && (o->data_in || o->data_out))
		return bpfrt_err(-EINVAL, "test_run: %s: %s programs take no packet (data_in, "
				 "data_out): their context is ctx_in", prog->name, kind_str(prog->kind));
	if (o->ctx_out && desc->info.tracing)
		return bpfrt_err(-EINVAL, "test_run: %s: the context of %s programs is read-only: "
				 "no ctx_out", prog->name, kind_str(prog->kind));
	repeat = o->repeat ? (uint32_t)o->repeat : 1;

	if (packet) {
		err = packet_in(prog, o);
		if (!err && xdp)
			err = xdp_ctx(prog, o, &md);
		else if (!err)
			err = skb_ctx(prog, o, &skb);
		/* the socket filter's packet is read through no pointer and
		 * never written: only XDP needs the low copy */
		if (!err && xdp)
			err = packet_alloc(prog, &pkt, o->data_in, o->data_size_in);
		if (err)
			return err;
		if (xdp) {
			/* the metadata (md.data bytes, none by default) is
			 * data_in's start, the packet the rest */
			meta_len = md.data;
			md.data_meta = (uint32_t)(uintptr_t)pkt.data;
			md.data = md.data_meta + meta_len;
			md.data_end = (uint32_t)((uintptr_t)pkt.data + o->data_size_in);
			ctx = &md;
			ctx_len = sizeof(md);
		} else {
			ctx = &skb;
			ctx_len = sizeof(skb);
		}
	} else {
		err = sized_ctx(prog, o, &heap_ctx, &ctx_len);
		if (err)
			return err;
		ctx = heap_ctx;
	}

	if (packet && !xdp) {
		/* the packet the legacy packet loads read: as Linux's test
		 * runs, a socket filter's skb data starts at the network
		 * header (the Ethernet header pulled), a tc program's at the
		 * frame */
		skb_pkt.ctx = &skb;
		skb_pkt.frame = o->data_in;
		skb_pkt.len = o->data_size_in;
		skb_pkt.net_off = ETH_HLEN_MIN;
		skb_pkt.data_off = prog->kind == BPFRT_PROG_SOCKET ? ETH_HLEN_MIN : 0;
		prev_pkt = bpfrt_skb_packet_swap(&skb_pkt);
	}
	t0 = now_ns();
	for (uint32_t i = 0; i < repeat && !err; i++)
		err = bpfrt_prog_run(prog, o->mode, (uint64_t)(uintptr_t)ctx, ctx_len, &r0);
	t1 = now_ns();
	if (packet && !xdp)
		bpfrt_skb_packet_swap(prev_pkt);
	if (err)
		goto out;
	o->retval = r0;
	o->duration = (t1 - t0) / repeat > UINT32_MAX ? UINT32_MAX
						       : (uint32_t)((t1 - t0) / repeat);
	if (packet) {
		out_err = copy_out(o->data_out, &o->data_size_out,
				   pkt.data ? pkt.data : o->data_in, o->data_size_in, true);
		if (xdp) {
			/* offsets from data_meta, as Linux reports an xdp_md back */
			md.data = meta_len;
			md.data_end = o->data_size_in;
			md.data_meta = 0;
			err = copy_out(o->ctx_out, &o->ctx_size_out, &md, sizeof(md), false);
		} else {
			struct __sk_buff out;

			skb_ctx_out(&out, &skb);
			err = copy_out(o->ctx_out, &o->ctx_size_out, &out, sizeof(out), false);
		}
	} else if (!desc->info.tracing) {
		err = copy_out(o->ctx_out, &o->ctx_size_out, ctx, ctx_len, false);
	}
	if (out_err)
		err = out_err;
	if (err == -ENOSPC)
		bpfrt_err(err, "test_run: %s: data_out or ctx_out too small (packet %u bytes, "
			  "context %u)", prog->name, o->data_size_out, o->ctx_size_out);
	OPTS_SET(user, retval, o->retval);
	OPTS_SET(user, duration, o->duration);
	OPTS_SET(user, data_size_out, o->data_size_out);
	OPTS_SET(user, ctx_size_out, o->ctx_size_out);
out:
	packet_free(&pkt);
	free(heap_ctx);
	return err;
}
