/* bpfrt_prog_test_run_opts (Linux's BPF_PROG_TEST_RUN) on every program
 * kind bpfrt loads (tests/progs/test_run.bpf.c): the context each kind
 * gets, the packet an XDP program sees and rewrites, data_out/ctx_out,
 * repeat/duration, and the refusals: a context shorter than the program
 * reads, and (in bpfrt_prog_run itself) a NULL or short context. */
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OBJ "test_run.bpf.o"

static struct bpfrt_object *load(bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, o, .jit = jit);

	return load_object(OBJ, &o);
}

static enum bpfrt_exec_mode mode_of(bool jit)
{
	return jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
}

static struct bpfrt_test_run_opts opts_for(bool jit)
{
	return (struct bpfrt_test_run_opts){ .sz = sizeof(struct bpfrt_test_run_opts),
					     .mode = mode_of(jit) };
}

/* A 60-byte Ethernet frame: dst 02:..:01, src 02:..:02, the EtherType,
 * then bytes 14..59 = their index. */
static void frame(uint8_t f[60], uint16_t ethertype)
{
	static const uint8_t dst[6] = { 2, 0, 0, 0, 0, 1 }, src[6] = { 2, 0, 0, 0, 0, 2 };

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ethertype >> 8;
	f[13] = ethertype & 0xff;
	for (int i = 14; i < 60; i++)
		f[i] = (uint8_t)i;
}

static struct bpfrt_prog *prog(struct bpfrt_object *obj, const char *name)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, name);

	if (!p)
		tl_fail(__FILE__, __LINE__, "no program %s", name);
	return p;
}

static bool has(const char *s)
{
	return strstr(bpfrt_last_error(), s) != NULL;
}

/* ---- XDP ------------------------------------------------------------------ */

BOTH_ENGINES(xdp_program_sees_and_rewrites_the_packet)
{
	struct bpfrt_object *obj = load(jit);
	uint8_t in[60], keep[60], out[64];
	struct bpfrt_test_run_opts o = opts_for(jit);
	uint32_t *ifindex;

	REQUIRE(obj);
	ifindex = object_global(obj, "seen_ifindex");
	frame(in, 0x0800);
	memcpy(keep, in, sizeof(in));
	memset(out, 0xee, sizeof(out));
	o.data_in = in;
	o.data_size_in = sizeof(in);
	o.data_out = out;
	o.data_size_out = sizeof(out);
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "xdp_rewrite"), &o) == 0, "%s",
	      bpfrt_last_error());
	CHECK(o.retval == XDP_TX, "retval %llu", (unsigned long long)o.retval);
	CHECK(o.data_size_out == 60, "data_size_out %u", o.data_size_out);
	/* addresses swapped, EtherType's low byte flipped, the rest as sent */
	CHECK(!memcmp(out, keep + 6, 6) && !memcmp(out + 6, keep, 6));
	CHECK(out[12] == 0x08 && out[13] == 0xff, "%02x %02x", out[12], out[13]);
	CHECK(!memcmp(out + 14, keep + 14, 46));
	CHECK(out[60] == 0xee, "wrote past the packet's length");
	CHECK(!memcmp(in, keep, sizeof(in)), "data_in was written: the program must get a copy");
	CHECK(ifindex && *ifindex == 1, "ingress_ifindex %u (loopback expected)",
	      ifindex ? *ifindex : 0);

	frame(in, 0x86dd);
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "xdp_rewrite"), &o) == 0);
	CHECK(o.retval == XDP_PASS && out[13] == (0xdd ^ 0xff));
	bpfrt_object_close(obj);
}

/* data_end is exact: a 60-byte packet has byte 59, a 59-byte one not. */
BOTH_ENGINES(xdp_data_end_is_the_packet_length)
{
	struct bpfrt_object *obj = load(jit);
	struct bpfrt_test_run_opts o = opts_for(jit);
	uint8_t in[60];

	REQUIRE(obj);
	frame(in, 0x0800);
	in[59] = 0x5a;
	o.data_in = in;
	o.data_size_in = 60;
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "xdp_byte59"), &o) == 0, "%s",
	      bpfrt_last_error());
	CHECK(o.retval == 0x5a, "retval %llu", (unsigned long long)o.retval);
	o.data_size_in = 59;
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "xdp_byte59"), &o) == 0);
	CHECK(o.retval == 1000, "retval %llu", (unsigned long long)o.retval);
	bpfrt_object_close(obj);
}

/* The metadata, as Linux's test runs give it: none by default (data_meta
 * = data), else ctx_in's data bytes at data_in's start; the program reads
 * and writes it in every engine (the checking interpreter knows its
 * region), data_out holds it, ctx_out says its length. */
TEST(xdp_metadata_before_the_packet)
{
	static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_CHECKED,
						      BPFRT_EXEC_JIT };
	struct bpfrt_object *obj = load(true);
	struct xdp_md md = { .data = 4, .data_end = 64 }, out;
	uint8_t in[64], dout[64];
	struct bpfrt_prog *p;

	REQUIRE(obj);
	p = prog(obj, "xdp_meta");
	in[0] = 0x5a;
	in[1] = 0;
	frame(in + 4, 0x0800);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = in + 4, .data_size_in = 60,
			   .mode = modes[m]);

		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
		CHECK(o.retval == 1000, "mode %d: no metadata by default: %llu", modes[m],
		      (unsigned long long)o.retval);
		o.data_in = in;
		o.data_size_in = 64;
		o.data_out = dout;
		o.data_size_out = sizeof(dout);
		o.ctx_in = &md;
		o.ctx_size_in = sizeof(md);
		o.ctx_out = &out;
		o.ctx_size_out = sizeof(out);
		memset(dout, 0, sizeof(dout));
		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
		CHECK(o.retval == 0x5a, "mode %d: retval %llu", modes[m],
		      (unsigned long long)o.retval);
		CHECK(o.data_size_out == 64 && dout[0] == 0x5a && dout[1] == 0x77 &&
		      !memcmp(dout + 4, in + 4, 60), "data_out: the metadata, then the packet");
		CHECK(out.data == 4 && out.data_end == 64 && out.data_meta == 0,
		      "ctx_out %u %u %u", out.data, out.data_end, out.data_meta);
		CHECK(in[1] == 0, "data_in was written");
	}
	/* Linux's metadata: a multiple of 4, at most 32 bytes, inside data_in */
	{
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = in, .data_size_in = 64,
			   .ctx_in = &md, .ctx_size_in = sizeof(md));

		md.data = 6;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("metadata"), "%s",
		      bpfrt_last_error());
		md.data = 36;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("metadata"));
		md.data = 32;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0 && o.retval == 0x5a);
	}
	bpfrt_object_close(obj);
}

TEST(xdp_ctx_in_and_ctx_out_follow_linux)
{
	struct bpfrt_object *obj = load(false);
	struct bpfrt_test_run_opts o = opts_for(false);
	struct xdp_md md = { .data_end = 60, .ingress_ifindex = 7, .rx_queue_index = 2 }, out;
	struct bpfrt_prog *p;
	uint8_t in[60];

	REQUIRE(obj);
	p = prog(obj, "xdp_rewrite");
	frame(in, 0x0800);
	o.data_in = in;
	o.data_size_in = 60;
	o.ctx_in = &md;
	o.ctx_size_in = sizeof(md);
	o.ctx_out = &out;
	o.ctx_size_out = sizeof(out);
	memset(&out, 0xff, sizeof(out));
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	CHECK(*(uint32_t *)object_global(obj, "seen_ifindex") == 7);
	CHECK(*(uint32_t *)object_global(obj, "seen_rxq") == 2);
	/* offsets, not the addresses the program had */
	CHECK(out.data == 0 && out.data_end == 60 && out.data_meta == 0 &&
	      out.ingress_ifindex == 7 && out.rx_queue_index == 2,
	      "ctx_out %u %u %u %u %u", out.data, out.data_end, out.data_meta,
	      out.ingress_ifindex, out.rx_queue_index);
	CHECK(o.ctx_size_out == sizeof(md));

	/* what Linux refuses */
	md.data_end = 10;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("data_end"), "%s",
	      bpfrt_last_error());
	md.data_end = 60;
	md.data_meta = 4;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("data_meta"));
	md.data_meta = 0;
	md.egress_ifindex = 3;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("egress_ifindex"));
	md.egress_ifindex = 0;
	md.ingress_ifindex = 0;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("rx_queue_index"));
	bpfrt_object_close(obj);
}

TEST(xdp_without_a_packet_is_refused)
{
	struct bpfrt_object *obj = load(false);
	struct bpfrt_test_run_opts o = opts_for(false);
	struct bpfrt_prog *p;
	static uint8_t big[BPFRT_TEST_RUN_MAX_DATA + 1];

	REQUIRE(obj);
	p = prog(obj, "xdp_rewrite");
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("xdp_rewrite") &&
	      has("run on a packet"), "%s", bpfrt_last_error());
	o.data_in = big;
	o.data_size_in = 13;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("at least 14"));
	o.data_size_in = sizeof(big);
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("at most"));
	o.data_size_in = sizeof(big) - 1;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

TEST(data_out_too_small_gets_what_fits_and_enospc)
{
	struct bpfrt_object *obj = load(false);
	struct bpfrt_test_run_opts o = opts_for(false);
	uint8_t in[60], out[60];

	REQUIRE(obj);
	frame(in, 0x0800);
	memset(out, 0, sizeof(out));
	o.data_in = in;
	o.data_size_in = 60;
	o.data_out = out;
	o.data_size_out = 20;
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "xdp_rewrite"), &o) == -ENOSPC, "%s",
	      bpfrt_last_error());
	CHECK(o.retval == XDP_TX && o.data_size_out == 60);
	CHECK(!memcmp(out, in + 6, 6) && out[13] == 0xff && out[20] == 0);
	bpfrt_object_close(obj);
}

/* Repetitions run on the same packet: swapping twice undoes the swap. */
BOTH_ENGINES(repeat_runs_on_one_packet_and_reports_the_mean)
{
	struct bpfrt_object *obj = load(jit);
	struct bpfrt_test_run_opts o = opts_for(jit);
	uint8_t in[60], out[60];
	struct bpfrt_prog *p;

	REQUIRE(obj);
	p = prog(obj, "xdp_rewrite");
	frame(in, 0x0800);
	o.data_in = in;
	o.data_size_in = 60;
	o.data_out = out;
	o.repeat = 2;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	CHECK(!memcmp(out, in, 60), "two runs must restore the frame");
	CHECK(o.retval == XDP_PASS, "the second run saw the first one's EtherType");
	o.repeat = 0; /* = 1 */
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0);
	CHECK(!memcmp(out, in + 6, 6) && o.retval == XDP_TX);
	o.repeat = 20001;
	o.duration = 0;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0);
	CHECK(!memcmp(out, in + 6, 6), "an odd count leaves the frame swapped");
	/* a mean in ns: more than 0, well below a millisecond per run */
	CHECK(o.duration > 0 && o.duration < 1000000, "duration %u", o.duration);
	o.repeat = -1;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("repeat"));
	bpfrt_object_close(obj);
}

/* ---- socket filters --------------------------------------------------------- */

BOTH_ENGINES(socket_filter_gets_an_sk_buff_of_the_packet)
{
	struct bpfrt_object *obj = load(jit);
	struct bpfrt_test_run_opts o = opts_for(jit);
	struct __sk_buff skb = { .mark = 5, .cb = { 9 } }, out;
	uint8_t in[60], dout[60];
	struct bpfrt_prog *p;

	REQUIRE(obj);
	p = prog(obj, "socket_fields");
	frame(in, 0x0806);
	memset(in, 0xff, 6); /* broadcast */
	o.data_in = in;
	o.data_size_in = 60;
	o.data_out = dout;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	CHECK(o.retval == 60);
	CHECK(*(uint32_t *)object_global(obj, "skb_len") == 60);
	/* network order, as the skb holds it */
	CHECK(*(uint32_t *)object_global(obj, "skb_proto") == (uint32_t)(in[12] | in[13] << 8));
	CHECK(*(uint32_t *)object_global(obj, "skb_pkt_type") == 1 /* PACKET_BROADCAST */);
	CHECK(*(uint32_t *)object_global(obj, "skb_ifindex") == 1);
	CHECK(o.data_size_out == 60 && !memcmp(dout, in, 60));

	o.ctx_in = &skb;
	o.ctx_size_in = sizeof(skb);
	o.ctx_out = &out;
	o.ctx_size_out = sizeof(out);
	memset(&out, 0xff, sizeof(out));
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	CHECK(*(uint32_t *)object_global(obj, "skb_mark") == 5);
	CHECK(*(uint32_t *)object_global(obj, "skb_cb0") == 9);
	CHECK(out.mark == 5 && out.cb[0] == 9 && out.len == 0 && out.protocol == 0,
	      "ctx_out: the fields a caller may set, the rest 0");
	CHECK(out.cb[1] == 10, "ctx_out: cb[] as the program wrote it");

	skb.len = 1; /* not for the caller to set */
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("offset 0"), "%s",
	      bpfrt_last_error());
	skb.len = 0;
	skb.wire_len = 30;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("wire_len"));
	o.data_in = NULL;
	o.data_size_in = 0;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("run on a packet"));
	bpfrt_object_close(obj);
}

/* ---- context kinds ------------------------------------------------------------ */

static const struct ctx_case {
	const char *prog;
	uint32_t idx;           /* u64 slot the program reads */
	uint64_t add;           /* what it adds to it */
	const char *global;     /* where it leaves the result (else r0) */
	uint32_t ctx_size;      /* the context of its kind */
} ctx_cases[] = {
	{ "raw_tp_arg2", 2, 1, NULL, 8 * 12 },
	{ "tp_arg0", 1, 2, NULL, 8 + 8 * 12 },
	{ "fentry_arg1", 1, 3, "fentry_seen", 48 },
	{ "fexit_ret", 6, 4, "fexit_seen", 56 },
	{ "fmod_ret_arg0", 0, 5, NULL, 56 },
	{ "fentry_multi_arg5", 5, 6, NULL, 48 },
	{ "kprobe_di", 14, 7, NULL, 168 },
	{ "kretprobe_ax", 10, 8, NULL, 168 },
	{ "uprobe_si", 13, 9, NULL, 168 },
};

static uint64_t result(struct bpfrt_object *obj, const struct ctx_case *c,
		       const struct bpfrt_test_run_opts *o)
{
	return c->global ? *(uint64_t *)object_global(obj, c->global) : o->retval;
}

BOTH_ENGINES(tracing_kinds_get_a_context_of_their_verified_size)
{
	struct bpfrt_object *obj = load(jit);
	uint64_t ctx[24];

	REQUIRE(obj);
	for (uint32_t i = 0; i < 24; i++)
		ctx[i] = 1000 * (i + 1);
	for (size_t i = 0; i < sizeof(ctx_cases) / sizeof(ctx_cases[0]); i++) {
		const struct ctx_case *c = &ctx_cases[i];
		struct bpfrt_prog *p = prog(obj, c->prog);
		struct bpfrt_test_run_opts o = opts_for(jit);

		if (!p)
			continue;
		CHECK(bpfrt_prog_ctx_access(p) == 8 * (c->idx + 1), "%s reads %u", c->prog,
		      bpfrt_prog_ctx_access(p));
		CHECK(bpfrt_prog_ctx_size(p) == c->ctx_size, "%s: ctx %u", c->prog,
		      bpfrt_prog_ctx_size(p));
		/* no ctx_in: zeros of the verified size */
		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s: %s", c->prog, bpfrt_last_error());
		CHECK(result(obj, c, &o) == c->add, "%s: %llu", c->prog,
		      (unsigned long long)result(obj, c, &o));
		/* exactly the bytes it reads, and the whole context */
		o.ctx_in = ctx;
		o.ctx_size_in = bpfrt_prog_ctx_access(p);
		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s: %s", c->prog, bpfrt_last_error());
		CHECK(result(obj, c, &o) == ctx[c->idx] + c->add, "%s: %llu", c->prog,
		      (unsigned long long)result(obj, c, &o));
		o.ctx_size_in = c->ctx_size;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s: %s", c->prog, bpfrt_last_error());
		CHECK(result(obj, c, &o) == ctx[c->idx] + c->add);
	}
	bpfrt_object_close(obj);
}

TEST(tracing_kinds_refuse_a_short_context_by_name)
{
	struct bpfrt_object *obj = load(false);
	uint64_t ctx[24] = { 0 }, out[24];
	char want[128];

	REQUIRE(obj);
	for (size_t i = 0; i < sizeof(ctx_cases) / sizeof(ctx_cases[0]); i++) {
		const struct ctx_case *c = &ctx_cases[i];
		struct bpfrt_prog *p = prog(obj, c->prog);
		struct bpfrt_test_run_opts o = opts_for(false);
		uint32_t reads = 8 * (c->idx + 1);

		if (!p)
			continue;
		o.ctx_in = ctx;
		o.ctx_size_in = reads - 1;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL, "%s", c->prog);
		snprintf(want, sizeof(want), "%s: ctx_in of %u bytes is shorter than the %u bytes "
			 "of its %u-byte", c->prog, reads - 1, reads, c->ctx_size);
		CHECK(has(want), "%s", bpfrt_last_error());
		o.ctx_size_in = c->ctx_size + 8;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has(c->prog), "%s",
		      bpfrt_last_error());
		/* no packet, and no ctx_out: the context is read-only */
		o.ctx_size_in = reads;
		o.data_in = ctx;
		o.data_size_in = 64;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("take no packet"));
		o.data_in = NULL;
		o.data_size_in = 0;
		o.ctx_out = out;
		CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("read-only"));
	}
	bpfrt_object_close(obj);
}

/* A raw-instruction UNSPEC program verified for 16 bytes it reads and
 * writes: ctx_in is copied, ctx_out gets the copy after the run. */
BOTH_ENGINES(unspec_and_syscall_contexts)
{
	struct bpf_insn *insns;
	size_t n;
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .jit = jit, .verify = true,
		   .ctx_size = 16);
	struct bpfrt_test_run_opts o = opts_for(jit);
	struct bpfrt_prog *p;
	struct bpfrt_object *obj;
	uint64_t ctx[2] = { 1, 41 }, out[2] = { 0, 0 };

	REQUIRE(bpfrt_asm("ldxdw %r0, [%r1+8]\nadd %r0, 1\nstxdw [%r1+0], %r0\nexit\n",
			  &insns, &n) == 0, "%s", bpfrt_last_error());
	REQUIRE(bpfrt_prog_load(insns, n, &lo, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	CHECK(bpfrt_prog_ctx_size(p) == 16 && bpfrt_prog_ctx_access(p) == 16);
	o.ctx_in = ctx;
	o.ctx_size_in = sizeof(ctx);
	o.ctx_out = out;
	o.ctx_size_out = sizeof(out);
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	CHECK(o.retval == 42 && out[0] == 42 && out[1] == 41 && o.ctx_size_out == 16);
	CHECK(ctx[0] == 1, "ctx_in was written: the program must get a copy");
	o.ctx_size_in = 8;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL &&
	      has("prog: ctx_in of 8 bytes is shorter than the 16 bytes"), "%s", bpfrt_last_error());
	o.ctx_in = NULL;
	o.ctx_size_in = 0;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("none given"), "%s",
	      bpfrt_last_error());
	bpfrt_prog_free(p);

	/* reading 8 bytes of 16: the context is still the 16 verified */
	REQUIRE(bpfrt_asm("ldxdw %r0, [%r1+0]\nexit\n", &insns, &n) == 0);
	REQUIRE(bpfrt_prog_load(insns, n, &lo, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	o.ctx_in = ctx;
	o.ctx_size_in = 8;
	o.ctx_out = NULL;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL &&
	      has("prog: the program was verified for a 16-byte context: ctx_in of 8 bytes"), "%s",
	      bpfrt_last_error());
	bpfrt_prog_free(p);

	obj = load(jit);
	REQUIRE(obj);
	o = opts_for(jit);
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "syscall_no_ctx"), &o) == 0 && o.retval == 11,
	      "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

/* ctx_size_out is the size of ctx_out, with no "0: large enough"
 * convention (that is data_size_out's alone, as in Linux's
 * bpf_ctx_finish/bpf_test_finish): a 16-byte context into an 8-byte
 * ctx_out gets 8 bytes and -ENOSPC, ctx_size_out 0 gets nothing; nothing
 * past the buffer is ever written (the guard bytes after it). */
BOTH_ENGINES(ctx_out_smaller_than_the_context_is_never_overrun)
{
	struct bpf_insn *insns;
	size_t n;
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .jit = jit, .verify = true,
		   .ctx_size = 16);
	struct bpfrt_test_run_opts o = opts_for(jit);
	struct bpfrt_prog *p;
	struct bpfrt_object *obj;
	uint64_t ctx[2] = { 1, 41 };
	uint8_t buf[24];
	struct xdp_md md;
	uint8_t in[60], dout[60];
	static const uint8_t guard[16] = { 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5,
					   0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5 };

	REQUIRE(bpfrt_asm("ldxdw %r0, [%r1+8]\nadd %r0, 1\nstxdw [%r1+0], %r0\nexit\n",
			  &insns, &n) == 0, "%s", bpfrt_last_error());
	REQUIRE(bpfrt_prog_load(insns, n, &lo, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	o.ctx_in = ctx;
	o.ctx_size_in = sizeof(ctx);

	memset(buf, 0xa5, sizeof(buf));
	o.ctx_out = buf;
	o.ctx_size_out = 0;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -ENOSPC && has("ctx_out too small"), "%s",
	      bpfrt_last_error());
	CHECK(o.retval == 42 && o.ctx_size_out == 16, "retval %llu ctx_size_out %u",
	      (unsigned long long)o.retval, o.ctx_size_out);
	CHECK(!memcmp(buf, guard, 16), "ctx_size_out 0: ctx_out was written");

	memset(buf, 0xa5, sizeof(buf));
	o.ctx_size_out = 8;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -ENOSPC, "%s", bpfrt_last_error());
	CHECK(o.ctx_size_out == 16);
	CHECK(*(uint64_t *)buf == 42, "the 8 bytes that fit");
	CHECK(!memcmp(buf + 8, guard, 16), "ctx_out of 8 bytes was written past its end");

	memset(buf, 0xa5, sizeof(buf));
	o.ctx_size_out = 16;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	CHECK(!memcmp(buf + 16, guard, 8) && ((uint64_t *)buf)[1] == 41);
	bpfrt_prog_free(p);

	/* XDP: the same for the xdp_md; data_size_out 0 still means large
	 * enough for the packet */
	obj = load(jit);
	REQUIRE(obj);
	o = opts_for(jit);
	frame(in, 0x0800);
	o.data_in = in;
	o.data_size_in = 60;
	o.data_out = dout;
	o.data_size_out = 0;
	memset(buf, 0xa5, sizeof(buf));
	o.ctx_out = buf;
	o.ctx_size_out = 0;
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "xdp_rewrite"), &o) == -ENOSPC, "%s",
	      bpfrt_last_error());
	CHECK(o.ctx_size_out == sizeof(md) && !memcmp(buf, guard, 16) &&
	      !memcmp(buf + 8, guard, 16), "xdp ctx_out of 0 bytes was written");
	CHECK(o.data_size_out == 60, "data_size_out %u", o.data_size_out);
	bpfrt_object_close(obj);
}

/* Every program of the object, each kind with its default input. */
BOTH_ENGINES(every_kind_runs_with_its_default_context)
{
	struct bpfrt_object *obj = load(jit);
	uint8_t pkt[60];
	int kinds = 0;

	REQUIRE(obj);
	frame(pkt, 0x0800);
	for (struct bpfrt_prog *p = bpfrt_object_next_prog(obj, NULL); p;
	     p = bpfrt_object_next_prog(obj, p)) {
		struct bpfrt_test_run_opts o = opts_for(jit);
		enum bpfrt_prog_kind k = bpfrt_prog_kind(p);

		if (k == BPFRT_PROG_XDP || k == BPFRT_PROG_SOCKET) {
			o.data_in = pkt;
			o.data_size_in = sizeof(pkt);
		}
		CHECK(bpfrt_prog_verified(p), "%s", bpfrt_prog_name(p));
		CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s: %s", bpfrt_prog_name(p),
		      bpfrt_last_error());
		kinds |= 1 << k;
	}
	/* every kind but UNSPEC (raw instructions, above) */
	CHECK(kinds == ((1 << (BPFRT_PROG_SYSCALL + 1)) - 2), "kinds %#x", kinds);
	bpfrt_object_close(obj);
}

/* Trusted (unverified) programs run on a zeroed context too. */
TEST(trusted_programs_get_a_zeroed_context)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .trusted = true);
	struct bpfrt_object *obj = load_object(OBJ, &lo);
	struct bpfrt_test_run_opts o = opts_for(false);
	uint64_t ctx[3] = { 0, 0, 99 };

	REQUIRE(obj);
	CHECK(!bpfrt_prog_verified(prog(obj, "kprobe_di")));
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "kprobe_di"), &o) == 0 && o.retval == 7, "%s",
	      bpfrt_last_error());
	o.ctx_in = ctx;
	o.ctx_size_in = sizeof(ctx);
	CHECK(bpfrt_prog_test_run_opts(prog(obj, "raw_tp_arg2"), &o) == 0 && o.retval == 100);
	bpfrt_object_close(obj);
}

TEST(opts_are_checked)
{
	struct bpfrt_object *obj = load(false);
	struct bpfrt_test_run_opts o = opts_for(false);
	struct bpfrt_prog *p;
	uint64_t ctx[3] = { 0 };

	REQUIRE(obj);
	p = prog(obj, "raw_tp_arg2");
	CHECK(bpfrt_prog_test_run_opts(NULL, &o) == -EINVAL);
	/* no options: every default (one run, a zeroed context) */
	CHECK(bpfrt_prog_test_run_opts(p, NULL) == 0, "%s", bpfrt_last_error());
	/* an older caller's struct without mode: the default engine, not the
	 * JIT its stale mode bytes would ask for */
	o.mode = BPFRT_EXEC_JIT;
	o.sz = offsetof(struct bpfrt_test_run_opts, mode);
	CHECK(bpfrt_prog_test_run_opts(p, &o) == 0, "%s", bpfrt_last_error());
	o.sz = sizeof(size_t) - 1;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("struct bpfrt_test_run_opts"));
	o = opts_for(false);
	o.flags = 1;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("flags"));
	o = opts_for(false);
	o.ctx_size_in = 24;
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -EINVAL && has("without its buffer"));
	o.ctx_in = ctx;
	o.mode = BPFRT_EXEC_JIT; /* loaded without the JIT */
	CHECK(bpfrt_prog_test_run_opts(p, &o) == -ENOTSUP && has("not JIT-compiled"));
	bpfrt_object_close(obj);
}

/* ---- bpfrt_prog_run: never a NULL or short context ----------------------------- */

BOTH_ENGINES(prog_run_refuses_null_and_short_contexts_by_name)
{
	struct bpfrt_object *obj = load(jit);
	uint64_t ctx[12] = { 0, 0, 5 }, r0 = 0;
	struct bpfrt_prog *p, *none;

	REQUIRE(obj);
	p = prog(obj, "raw_tp_arg2");
	none = prog(obj, "raw_tp_no_ctx");
	REQUIRE(p && none);
	CHECK(bpfrt_prog_run(p, mode_of(jit), 0, sizeof(ctx), &r0) == -EINVAL &&
	      has("raw_tp_arg2: NULL context"), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_run(p, mode_of(jit), (uintptr_t)ctx, 16, &r0) == -EINVAL &&
	      has("raw_tp_arg2: context of 16 bytes, the program reads 24"), "%s",
	      bpfrt_last_error());
	CHECK(bpfrt_prog_run(p, mode_of(jit), (uintptr_t)ctx, 24, &r0) == 0 && r0 == 6);
	/* even a program that reads none of it: the verifier took r1 as valid */
	CHECK(bpfrt_prog_run(none, mode_of(jit), 0, 0, &r0) == -EINVAL &&
	      has("raw_tp_no_ctx: NULL context"));
	CHECK(bpfrt_prog_run(none, mode_of(jit), (uintptr_t)ctx, 0, &r0) == 0 && r0 == 10);
	bpfrt_object_close(obj);
}

/* The verifier prunes `if (ctx == 0)` as never taken (a context pointer is
 * never NULL), so the code under it is never checked: a NULL context
 * would run it. Here that code loads through r1. */
BOTH_ENGINES(null_context_would_run_unchecked_code)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .jit = jit,
		   .kind = BPFRT_PROG_RAW_TRACEPOINT);
	struct bpf_insn *insns;
	struct bpfrt_prog *p;
	uint64_t ctx[12] = { 0 }, r0 = 0;
	size_t n;

	REQUIRE(bpfrt_asm("jeq %r1, 0, unchecked\nmov %r0, 1\nexit\n"
			  "unchecked:\nldxdw %r0, [%r1+0]\nexit\n", &insns, &n) == 0,
		"%s", bpfrt_last_error());
	REQUIRE(bpfrt_prog_load(insns, n, &lo, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	CHECK(bpfrt_prog_ctx_access(p) == 0, "the load under the branch was never walked");
	CHECK(bpfrt_prog_run(p, mode_of(jit), 0, 0, &r0) == -EINVAL && has("NULL context"),
	      "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_run(p, mode_of(jit), (uintptr_t)ctx, sizeof(ctx), &r0) == 0 && r0 == 1);
	bpfrt_prog_free(p);
}

/* Unverified (trusted) raw instructions keep the conformance contract:
 * r1 and r2 are whatever the caller passes. */
TEST(prog_run_leaves_trusted_programs_to_their_caller)
{
	struct bpf_insn *insns;
	struct bpfrt_prog *p;
	uint64_t r0 = 0;
	size_t n;

	REQUIRE(bpfrt_asm("mov %r0, %r2\nexit\n", &insns, &n) == 0);
	REQUIRE(bpfrt_prog_load(insns, n, NULL, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 9, &r0) == 0 && r0 == 9);
	bpfrt_prog_free(p);
}
