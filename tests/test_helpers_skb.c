/* bpf_skb_load_bytes (26), bpf_skb_load_bytes_relative (68),
 * bpf_csum_diff (28), bpf_strtol (105) and bpf_strtoul (106), through
 * programs in the interpreter and the JIT. Checksums are checked against
 * a known IPv4 header's (RFC 1071 sums), strtol against Linux's rules. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT,
					      BPFRT_EXEC_CHECKED };
static const char *const mode_names[] = { "interp", "jit", "checked" };
#define FOR_EACH_MODE(m) for (size_t m = 0; m < ARRAY_LEN(modes); m++)

#define CALL(m, id, ...) call_helper(modes[m], id, __VA_ARGS__)
#define P(x) ((uint64_t)(uintptr_t)(x))

/* ---- csum_diff ---------------------------------------------------------- */

/* RFC 1071's kind of example: this header's checksum is 0xb861 */
static const uint8_t ip_header[20] = {
	0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
};

TEST(csum_diff_sums_as_the_packet_checksum_needs)
{
	FOR_EACH_MODE(m) {
		uint64_t sum = CALL(m, BPF_FUNC_csum_diff, 0, 0, P(ip_header), 20, 0);
		uint16_t folded = (uint16_t)~sum, want;
		uint8_t hdr[20];
		const uint8_t a[4] = { 0xc0, 0xa8, 0x00, 0x01 }, b[4] = { 0xc0, 0xa8, 0x00, 0x02 };

		/* the one's complement sum of the 16-bit words in memory
		 * order: 0x479e in network order, so 0x9e47 read little-endian */
		CHECK(sum == 0x9e47, "%s: %#llx", mode_names[m], (unsigned long long)sum);
		memcpy(&want, (const uint8_t[]){ 0xb8, 0x61 }, 2);
		CHECK(folded == want, "%s: checksum %#x", mode_names[m], folded);
		/* the same header with its checksum in place sums to 0xffff */
		memcpy(hdr, ip_header, 20);
		memcpy(hdr + 10, &folded, 2);
		CHECK(CALL(m, BPF_FUNC_csum_diff, 0, 0, P(hdr), 20, 0) == 0xffff, "%s", mode_names[m]);
		/* 192.168.0.1 -> 192.168.0.2: +1 in the last byte (0x0100 LE) */
		CHECK(CALL(m, BPF_FUNC_csum_diff, P(a), 4, P(b), 4, 0) == 0x0100, "%s",
		      mode_names[m]);
		/* the seed is added: the header's sum with its address changed */
		sum = CALL(m, BPF_FUNC_csum_diff, P(a), 4, P(b), 4, 0x9e47);
		CHECK(sum == 0x9f47, "%s: %#llx", mode_names[m], (unsigned long long)sum);
		/* nothing either side: the seed, folded */
		CHECK(CALL(m, BPF_FUNC_csum_diff, 0, 0, 0, 0, 0x12345) == 0x2346, "%s",
		      mode_names[m]);
		/* sizes not multiples of 4, or above the 512-byte scratch */
		CHECK((int64_t)CALL(m, BPF_FUNC_csum_diff, P(a), 3, P(b), 4, 0) == -EINVAL);
		CHECK((int64_t)CALL(m, BPF_FUNC_csum_diff, P(a), 4, P(b), 2, 0) == -EINVAL);
		CHECK((int64_t)CALL(m, BPF_FUNC_csum_diff, P(a), 256, P(b), 260, 0) == -EINVAL);
	}
}

/* ---- strtol, strtoul -------------------------------------------------- */

struct strto_case {
	const char *s;
	uint32_t len;   /* 0: strlen */
	uint64_t flags;
	int64_t ret;    /* strtol's */
	int64_t val;
	int64_t uret;   /* strtoul's */
	uint64_t uval;
};

static const struct strto_case strto_cases[] = {
	{ "123", 0, 10, 3, 123, 3, 123 },
	{ " \t-123abc", 0, 0, 6, -123, -EINVAL, 0 },
	{ "0x1F", 0, 0, 4, 31, 4, 31 },
	{ "0x1F", 0, 16, 4, 31, 4, 31 },
	{ "1f", 0, 16, 2, 31, 2, 31 },
	{ "017", 0, 0, 3, 15, 3, 15 },
	{ "017", 0, 10, 3, 17, 3, 17 },
	{ "019", 0, 8, 2, 1, 2, 1 },
	{ "0x", 0, 0, 1, 0, 1, 0 },     /* no hex digit after 0x: octal 0 */
	{ "0x", 0, 16, -EINVAL, 0, -EINVAL, 0 },
	{ "abc", 0, 10, -EINVAL, 0, -EINVAL, 0 },
	{ "   ", 0, 10, -EINVAL, 0, -EINVAL, 0 },
	{ "-", 0, 10, -EINVAL, 0, -EINVAL, 0 },
	{ "12345", 3, 10, 3, 123, 3, 123 },
	{ "12\0" "34", 5, 10, 2, 12, 2, 12 },
	{ "9223372036854775807", 0, 10, 19, INT64_MAX, 19, INT64_MAX },
	{ "9223372036854775808", 0, 10, -ERANGE, 0, 19, 0x8000000000000000ull },
	{ "-9223372036854775808", 0, 10, 20, INT64_MIN, -EINVAL, 0 },
	{ "-9223372036854775809", 0, 10, -ERANGE, 0, -EINVAL, 0 },
	{ "18446744073709551615", 0, 10, -ERANGE, 0, 20, UINT64_MAX },
	{ "18446744073709551616", 0, 10, -ERANGE, 0, -ERANGE, 0 },
	{ "10", 0, 2, -EINVAL, 0, -EINVAL, 0 },       /* base 2: not Linux's */
	{ "10", 0, 0x20 | 10, -EINVAL, 0, -EINVAL, 0 }, /* a bit past the base */
};

TEST(strtol_and_strtoul_follow_linux)
{
	FOR_EACH_MODE(m) {
		for (size_t i = 0; i < ARRAY_LEN(strto_cases); i++) {
			const struct strto_case *c = &strto_cases[i];
			uint32_t len = c->len ? c->len : (uint32_t)strlen(c->s);
			int64_t v = -1;
			uint64_t u = 1;
			int64_t r = (int64_t)CALL(m, BPF_FUNC_strtol, P(c->s), len, c->flags, P(&v), 0);

			CHECK(r == c->ret && v == c->val, "%s: strtol(\"%s\", %u, %#llx) = %lld, %lld",
			      mode_names[m], c->s, len, (unsigned long long)c->flags, (long long)r,
			      (long long)v);
			r = (int64_t)CALL(m, BPF_FUNC_strtoul, P(c->s), len, c->flags, P(&u), 0);
			CHECK(r == c->uret && u == c->uval, "%s: strtoul(\"%s\", %u, %#llx) = %lld, %llu",
			      mode_names[m], c->s, len, (unsigned long long)c->flags, (long long)r,
			      (unsigned long long)u);
		}
	}
}

/* ---- skb_load_bytes, through a socket filter's test run -------------- */

/* load_bytes(ctx, off, fp-8, len) after filling fp-8 with 0xff; returns
 * r0 when it is not 0 and return_error, else the 8 bytes at fp-8 */
static int load_socket(int32_t id, int32_t off, int32_t len, int32_t hdr, bool return_error,
		       bool jit, struct bpfrt_prog **prog)
{
	const struct bpf_insn insns[] = {
		ST(BPF_DW, BPF_R10, -8, -1),
		MOV64_IMM(BPF_R2, off),
		MOV64_REG(BPF_R3, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R3, -8),
		MOV64_IMM(BPF_R4, len),
		MOV64_IMM(BPF_R5, hdr),
		CALL_HELPER(id),
		/* r0 is never 0x7fffffff: !return_error always reads the buffer */
		return_error ? JMP_IMM(BPF_JEQ, BPF_R0, 0, 1) : JMP_IMM(BPF_JNE, BPF_R0, 0x7fffffff, 1),
		EXIT(),
		LDX(BPF_DW, BPF_R0, BPF_R10, -8),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "load_bytes", .kind = BPFRT_PROG_SOCKET,
		   .jit = jit);

	return bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, prog);
}

static uint64_t run_socket(int32_t id, int32_t off, int32_t len, int32_t hdr, bool return_error,
			   size_t m, const uint8_t *pkt, uint32_t pkt_len)
{
	struct bpfrt_prog *prog = NULL;
	int err = load_socket(id, off, len, hdr, return_error, modes[m] == BPFRT_EXEC_JIT, &prog);
	BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = pkt_len,
		   .mode = modes[m]);

	if (!err)
		err = bpfrt_prog_test_run_opts(prog, &o);
	if (err)
		tl_fail(__FILE__, __LINE__, "%s: helper %d: %d %s", mode_names[m], id, err,
			bpfrt_last_error());
	bpfrt_prog_free(prog);
	return o.retval;
}

TEST(skb_load_bytes_copies_the_packet_or_faults_zeroed)
{
	uint8_t pkt[64];
	uint64_t want;

	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i + 1);
	FOR_EACH_MODE(m) {
		/* 4 bytes copied over the 0xff filling; a socket filter's
		 * offset 0 is the network header, past the 14-byte Ethernet one */
		want = ~0ull;
		memcpy(&want, pkt + 14 + 14, 4);
		uint64_t got = run_socket(BPF_FUNC_skb_load_bytes, 14, 4, 0, true, m, pkt, 64);

		CHECK(got == want, "%s: %#llx", mode_names[m], (unsigned long long)got);
		memcpy(&want, pkt + 56, 8);
		CHECK(run_socket(BPF_FUNC_skb_load_bytes, 42, 8, 0, true, m, pkt, 64) ==
		      want, "%s: the last 8 bytes", mode_names[m]);
		CHECK((int32_t)run_socket(BPF_FUNC_skb_load_bytes, 46, 8, 0, true, m, pkt, 64) ==
		      -EFAULT, "%s: past the end", mode_names[m]);
		/* the buffer is zeroed on the fault, never left 0xff */
		CHECK(run_socket(BPF_FUNC_skb_load_bytes, 46, 8, 0, false, m, pkt, 64) == 0,
		      "%s", mode_names[m]);
		CHECK((int32_t)run_socket(BPF_FUNC_skb_load_bytes, -1, 4, 0, true, m, pkt, 64) ==
		      -EFAULT, "%s: negative offset", mode_names[m]);
		/* relative: the network header follows the 14-byte Ethernet one */
		want = ~0ull;
		memcpy(&want, pkt + 14 + 2, 4);
		CHECK(run_socket(BPF_FUNC_skb_load_bytes_relative, 2, 4, BPF_HDR_START_NET, true, m,
				 pkt, 64) == want, "%s: net", mode_names[m]);
		want = ~0ull;
		memcpy(&want, pkt + 2, 4);
		CHECK(run_socket(BPF_FUNC_skb_load_bytes_relative, 2, 4, BPF_HDR_START_MAC, true, m,
				 pkt, 64) == want, "%s: mac", mode_names[m]);
		CHECK((int32_t)run_socket(BPF_FUNC_skb_load_bytes_relative, 2, 4, 7, true, m, pkt,
					  64) == -EINVAL, "%s: bad header", mode_names[m]);
		CHECK((int32_t)run_socket(BPF_FUNC_skb_load_bytes_relative, 48, 4,
					  BPF_HDR_START_NET, true, m, pkt, 64) == -EFAULT,
		      "%s: net past the end", mode_names[m]);
	}
}

/* The packet is the run's only: a raw run of the same program (a context
 * no test run built) finds none. */
TEST(skb_load_bytes_without_a_test_run_faults)
{
	struct bpfrt_prog *prog;
	uint8_t ctx[192] = { 0 };
	uint64_t r0 = 0;

	REQUIRE(load_socket(BPF_FUNC_skb_load_bytes, 0, 4, 0, true, false, &prog) == 0, "%s",
		bpfrt_last_error());
	CHECK(bpfrt_prog_run(prog, BPFRT_EXEC_INTERP, P(ctx), sizeof(ctx), &r0) == 0, "%s",
	      bpfrt_last_error());
	CHECK((int64_t)r0 == -EFAULT, "%lld", (long long)r0);
	bpfrt_prog_free(prog);
}

/* Only the kinds Linux gives them: a kprobe has no packet. */
TEST(packet_helpers_are_refused_outside_their_kinds)
{
	const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R1, 0), MOV64_IMM(BPF_R2, 0), MOV64_IMM(BPF_R3, 0),
		MOV64_IMM(BPF_R4, 0), MOV64_IMM(BPF_R5, 0),
		CALL_HELPER(BPF_FUNC_csum_diff), EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "csum", .kind = BPFRT_PROG_KPROBE);
	struct bpfrt_prog *prog = NULL;

	CHECK(bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog) < 0);
	CHECK(strstr(bpfrt_last_error(), "cannot use helper bpf_csum_diff#28"), "%s",
	      bpfrt_last_error());
	opts.kind = BPFRT_PROG_XDP;
	CHECK(bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog) == 0, "%s",
	      bpfrt_last_error());
	bpfrt_prog_free(prog);
}


