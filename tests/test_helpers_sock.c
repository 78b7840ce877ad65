/* The socket helpers at run time: bpfrt has no kernel sockets, so
 * bpf_sk_lookup_tcp (84), bpf_sk_lookup_udp (85) and bpf_skc_lookup_tcp
 * (99) find none (NULL) in the interpreter, the JIT and the checking
 * interpreter, and __sk_buff->sk reads NULL whatever the context holds
 * (its load is rewritten into r0 = 0 once verified); the cookies. The
 * verifier's rules
 * for them are the verifier corpus's (tests/verifier/corpus_sock.inc). */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT,
					      BPFRT_EXEC_CHECKED };
static const char *const mode_names[] = { "interp", "jit", "checked" };

/* sk = lookup(ctx, &zeroed tuple, 36, 0, 0); r0 = 2 if NULL, else 1 after
 * releasing it */
static int load_lookup(int32_t id, bool jit, struct bpfrt_prog **prog)
{
	const struct bpf_insn insns[] = {
		ST(BPF_DW, BPF_R10, -8, 0), ST(BPF_DW, BPF_R10, -16, 0),
		ST(BPF_DW, BPF_R10, -24, 0), ST(BPF_DW, BPF_R10, -32, 0),
		ST(BPF_DW, BPF_R10, -40, 0),
		MOV64_REG(BPF_R2, BPF_R10), ALU64_IMM(BPF_ADD, BPF_R2, -40),
		MOV64_IMM(BPF_R3, sizeof(struct bpf_sock_tuple)),
		MOV64_IMM(BPF_R4, 0), MOV64_IMM(BPF_R5, 0),
		CALL_HELPER(id),
		MOV64_REG(BPF_R6, BPF_R0),
		MOV64_IMM(BPF_R0, 2),
		JMP_IMM(BPF_JEQ, BPF_R6, 0, 3),
		MOV64_REG(BPF_R1, BPF_R6),
		CALL_HELPER(BPF_FUNC_sk_release),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "sk_lookup", .kind = BPFRT_PROG_XDP,
		   .jit = jit);

	return bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, prog);
}

TEST(socket_lookups_find_none_in_every_engine)
{
	static const int32_t ids[] = { BPF_FUNC_sk_lookup_tcp, BPF_FUNC_sk_lookup_udp,
				       BPF_FUNC_skc_lookup_tcp };
	static uint8_t pkt[64];

	for (size_t i = 0; i < ARRAY_LEN(ids); i++)
		for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
			struct bpfrt_prog *prog = NULL;
			BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt,
				   .data_size_in = sizeof(pkt), .mode = modes[m]);
			int err = load_lookup(ids[i], modes[m] == BPFRT_EXEC_JIT, &prog);

			if (!err)
				err = bpfrt_prog_test_run_opts(prog, &o);
			CHECK(!err, "helper %d, %s: %s", ids[i], mode_names[m], bpfrt_last_error());
			CHECK(o.retval == 2, "helper %d, %s: returned %llu (a socket?)", ids[i],
			      mode_names[m], (unsigned long long)o.retval);
			bpfrt_prog_free(prog);
		}
}

/* A lookup whose socket is never released is refused at load, naming the
 * reference. */
TEST(socket_reference_leak_is_refused)
{
	const struct bpf_insn insns[] = {
		ST(BPF_DW, BPF_R10, -8, 0), ST(BPF_DW, BPF_R10, -16, 0),
		MOV64_REG(BPF_R2, BPF_R10), ALU64_IMM(BPF_ADD, BPF_R2, -16),
		MOV64_IMM(BPF_R3, 12), MOV64_IMM(BPF_R4, 0), MOV64_IMM(BPF_R5, 0),
		CALL_HELPER(BPF_FUNC_sk_lookup_tcp),
		MOV64_IMM(BPF_R0, 0),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "sk_leak", .kind = BPFRT_PROG_XDP);
	struct bpfrt_prog *prog = NULL;

	CHECK(bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog) < 0);
	CHECK(strstr(bpfrt_last_error(), "Unreleased reference"), "%s", bpfrt_last_error());
	bpfrt_prog_free(prog);
}

/* skb->sk, a sock_common or NULL to the verifier, is the constant 0 once
 * loaded: no context a caller builds could hand the program a socket (tc
 * programs do not run here yet; the rewritten load is what would). */
TEST(skb_sk_load_becomes_null)
{
	const struct bpf_insn insns[] = {
		LDX(BPF_DW, BPF_R2, BPF_R1, offsetof(struct __sk_buff, sk)),
		MOV64_IMM(BPF_R0, 0),
		JMP_IMM(BPF_JEQ, BPF_R2, 0, 2),
		LDX(BPF_W, BPF_R0, BPF_R2, offsetof(struct bpf_sock, family)),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "skb_sk", .kind = BPFRT_PROG_SCHED_CLS);
	struct bpfrt_prog *prog = NULL;
	const struct bpf_insn *got;
	size_t cnt = 0;

	REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog) == 0, "%s",
		bpfrt_last_error());
	got = bpfrt_prog_insns(prog, &cnt);
	REQUIRE(got && cnt == ARRAY_LEN(insns));
	CHECK(got[0].code == (BPF_ALU64 | BPF_MOV | BPF_K) && got[0].dst_reg == BPF_R2 &&
	      got[0].imm == 0, "insn 0: code %#x imm %d", got[0].code, got[0].imm);
	CHECK(!memcmp(&got[1], &insns[1], sizeof(insns) - sizeof(insns[0])), "the rest as loaded");
	bpfrt_prog_free(prog);
	/* a 4-byte load of it stays refused */
	{
		struct bpf_insn narrow[ARRAY_LEN(insns)];

		memcpy(narrow, insns, sizeof(narrow));
		narrow[0] = LDX(BPF_W, BPF_R2, BPF_R1, offsetof(struct __sk_buff, sk));
		CHECK(bpfrt_prog_load(narrow, ARRAY_LEN(narrow), &opts, &prog) < 0);
		CHECK(strstr(bpfrt_last_error(), "invalid bpf_context access"), "%s",
		      bpfrt_last_error());
	}
}

/* bpf_get_netns_cookie (122) is the kernel's cookie of the process's
 * network namespace, for a NULL context as for the context; a socket
 * filter's bpf_get_socket_cookie (46) is 0: no socket. */
TEST(cookies_in_every_engine)
{
	uint64_t want = 0;
	socklen_t len = sizeof(want);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	const struct bpf_insn netns[] = {
		MOV64_IMM(BPF_R1, 0), CALL_HELPER(BPF_FUNC_get_netns_cookie), EXIT(),
	};
	const struct bpf_insn sock[] = { CALL_HELPER(BPF_FUNC_get_socket_cookie), EXIT() };
	static uint8_t pkt[64];

	REQUIRE(fd >= 0);
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &want, &len))
		want = 0; /* a kernel before 5.14: bpfrt answers 0 too */
	close(fd);
	for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
		BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "netns",
			   .jit = modes[m] == BPFRT_EXEC_JIT);
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
			   .mode = modes[m]);
		struct bpfrt_prog *prog = NULL;
		uint64_t ctx[8] = { 0 }, r0 = 1;

		REQUIRE(bpfrt_prog_load(netns, ARRAY_LEN(netns), &opts, &prog) == 0, "%s",
			bpfrt_last_error());
		CHECK(bpfrt_prog_run(prog, modes[m], (uintptr_t)ctx, sizeof(ctx), &r0) == 0, "%s",
		      bpfrt_last_error());
		CHECK(r0 == want, "%s: netns cookie %llu, want %llu", mode_names[m],
		      (unsigned long long)r0, (unsigned long long)want);
		bpfrt_prog_free(prog);
		opts.kind = BPFRT_PROG_SOCKET;
		REQUIRE(bpfrt_prog_load(sock, ARRAY_LEN(sock), &opts, &prog) == 0, "%s",
			bpfrt_last_error());
		o.retval = 1;
		CHECK(bpfrt_prog_test_run_opts(prog, &o) == 0, "%s", bpfrt_last_error());
		CHECK(o.retval == 0, "%s: socket cookie %llu", mode_names[m],
		      (unsigned long long)o.retval);
		bpfrt_prog_free(prog);
	}
}
