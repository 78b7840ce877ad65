/* Legacy packet loads (BPF_LD | BPF_ABS / BPF_IND) in socket filters: the
 * assembler and listing, the verifier's rules (r6 the context, the kinds,
 * reserved fields, the sizes, r1-r5 clobbered, the failing load's early
 * return 0 in a subprogram), and test runs in the interpreter, the
 * checking interpreter and the JIT: big-endian bytes from the packet
 * (a socket filter's offset 0 is the network header, as in Linux's test
 * runs; SKF_LL_OFF reaches the Ethernet header), out of bounds ending the
 * program with 0. */
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_CHECKED,
					      BPFRT_EXEC_JIT };

static int load(const char *text, enum bpfrt_prog_kind kind, bool jit, struct bpfrt_prog **p)
{
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .kind = kind, .verify = true, .jit = jit);
	int err = bpfrt_asm(text, &insns, &cnt);

	*p = NULL;
	if (err)
		return err;
	err = bpfrt_prog_load(insns, cnt, &o, p);
	free(insns);
	return err;
}

/* 60 bytes: an Ethernet header (dst 02:00:00:00:00:01, EtherType
 * 0x0800), then byte i = i. */
static void frame(uint8_t f[60])
{
	static const uint8_t dst[6] = { 2, 0, 0, 0, 0, 1 };

	for (int i = 0; i < 60; i++)
		f[i] = (uint8_t)i;
	memcpy(f, dst, 6);
	f[12] = 0x08;
	f[13] = 0x00;
}

/* r0 of a socket filter's test run with the frame in every engine (all
 * equal, else the test fails), or -1 if a run failed. */
static int64_t run_all(const char *text)
{
	int64_t got = -2;

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct bpfrt_prog *p;
		uint8_t pkt[60];
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
			   .mode = modes[m]);
		int err;

		frame(pkt);
		err = load(text, BPFRT_PROG_SOCKET, modes[m] == BPFRT_EXEC_JIT, &p);
		if (err) {
			printf("# load: %s\n", bpfrt_last_error());
			return -1;
		}
		err = bpfrt_prog_test_run_opts(p, &o);
		bpfrt_prog_free(p);
		if (err) {
			printf("# run (mode %d): %s\n", modes[m], bpfrt_last_error());
			return -1;
		}
		if (got != -2 && (int64_t)o.retval != got) {
			printf("# mode %d: r0 %#llx, other engines %#llx\n", modes[m],
			       (unsigned long long)o.retval, (unsigned long long)got);
			return -1;
		}
		got = (int64_t)o.retval;
	}
	return got;
}

TEST(abs_loads_are_big_endian_from_the_network_header)
{
	/* offset 0 is frame byte 14 */
	CHECK_EQ(run_all("mov %r6, %r1\nldabsb 0\nexit\n"), 14);
	CHECK_EQ(run_all("mov %r6, %r1\nldabsh 2\nexit\n"), 0x1011);
	CHECK_EQ(run_all("mov %r6, %r1\nldabsw 4\nexit\n"), 0x12131415);
	/* the last 4 bytes exactly, then one past */
	CHECK_EQ(run_all("mov %r6, %r1\nldabsw 42\nexit\n"), 0x38393a3b);
	CHECK_EQ(run_all("mov %r6, %r1\nldabsw 43\nmov %r0, 7\nexit\n"), 0);
	/* SKF_LL_OFF: the Ethernet header; SKF_NET_OFF: the network header */
	CHECK_EQ(run_all("mov %r6, %r1\nldabsh -0x1ffff4\nexit\n"), 0x0800);
	CHECK_EQ(run_all("mov %r6, %r1\nldabsb -0xfffff\nexit\n"), 15);
	CHECK_EQ(run_all("mov %r6, %r1\nldabsb -1\nmov %r0, 7\nexit\n"), 0);
}

TEST(ind_loads_add_the_register)
{
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r7, 3\nldindh %r7, 1\nexit\n"), 0x1213);
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r2, 8\nldindb %r2, 0\nexit\n"), 22);
	/* r1 as the offset register: read before r1 becomes the context */
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r1, 1\nldindb %r1, 1\nexit\n"), 16);
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r7, -100\nldindb %r7, 0\nmov %r0, 7\nexit\n"), 0);
	/* callee-saved registers survive, as Linux's calling convention */
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r7, 1\nldindw %r7, -0x200000\nmov %r0, %r7\nexit\n"), 1);
}

TEST(jumps_around_loads_and_subprograms_follow_the_rewrite)
{
	/* a branch over loads, a loop, a subprogram whose failing load
	 * returns 0 to its caller */
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r8, 0\nmov %r9, 0\n"
			 "loop:\nldindb %r9, 0\nadd %r8, %r0\nadd %r9, 1\njlt %r9, 4, loop\n"
			 "mov %r0, %r8\nexit\n"), 14 + 15 + 16 + 17);
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r1, %r6\ncall local sub\nmov %r7, %r0\n"
			 "ldabsb 1\nadd %r0, %r7\nexit\n"
			 "sub:\nmov %r6, %r1\nldabsb 100\nmov %r0, 1000\nexit\n"), 15);
	CHECK_EQ(run_all("mov %r6, %r1\nmov %r1, %r6\ncall local sub\nadd %r0, 1\nexit\n"
			 "sub:\nmov %r6, %r1\nldabsb 100\nmov %r0, 1000\nexit\n"), 1);
}

static const char *reject(const char *text, enum bpfrt_prog_kind kind)
{
	static char msg[512];
	struct bpfrt_prog *p;
	int err = load(text, kind, false, &p);

	if (!err) {
		bpfrt_prog_free(p);
		return "";
	}
	snprintf(msg, sizeof(msg), "%s", bpfrt_last_error());
	printf("# rejected: %s\n", msg);
	return msg;
}

TEST(verifier_rules)
{
	/* unwritten registers, as Linux names them */
	CHECK(strstr(reject("ldabsb 0\nexit\n", BPFRT_PROG_SOCKET), "R6 !read_ok"));
	CHECK(strstr(reject("mov %r6, 0\nldabsb 0\nexit\n", BPFRT_PROG_SOCKET),
		     "R6 != pointer to skb"));
	CHECK(strstr(reject("mov %r6, %r1\nadd %r6, 4\nldabsb 0\nexit\n", BPFRT_PROG_SOCKET),
		     "modified ctx ptr R6"));
	CHECK(strstr(reject("mov %r6, %r1\nldabsb 0\nexit\n", BPFRT_PROG_XDP),
		     "not allowed for this program type"));
	CHECK(strstr(reject("mov %r6, %r1\nldabsdw 0\nexit\n", BPFRT_PROG_SOCKET),
		     "reserved fields"));
	CHECK(strstr(reject("mov %r6, %r1\nmov %r7, %r10\nldindb %r7, 0\nexit\n",
			    BPFRT_PROG_SOCKET), "expected=scalar"));
	CHECK(strstr(reject("mov %r6, %r1\nldindb %r7, 0\nexit\n", BPFRT_PROG_SOCKET), "R7 !read_ok"));
	for (int r = 1; r <= 5; r++) {
		char text[128];

		snprintf(text, sizeof(text), "mov %%r6, %%r1\nmov %%r%d, 1\nldabsw 0\n"
			 "mov %%r0, %%r%d\nexit\n", r, r);
		CHECK(strstr(reject(text, BPFRT_PROG_SOCKET), "uninitialized register"));
	}
	/* the failing load's return 0 reaches the caller, which reads r9 on
	 * that path only; the walk (not just the static check) must see it */
	CHECK(strstr(reject("mov %r9, %r10\ncall local sub\njne %r0, 0, out\nmov %r0, %r9\n"
			    "exit\nout:\nmov %r0, 0\nexit\nsub:\nmov %r6, %r1\nldabsw 0\nmov %r0, 1\n"
			    "exit\n", BPFRT_PROG_SOCKET), "leaks addr"));
	CHECK(strstr(reject("call local sub\njne %r0, 0, out\nmov %r0, %r9\nout:\nmov %r0, 0\n"
			    "exit\nsub:\nmov %r6, %r1\nldabsw 0\nmov %r0, 1\nexit\n",
			    BPFRT_PROG_SOCKET), "R9 !read_ok"));
	/* tc kinds verify them too */
	CHECK_EQ(reject("mov %r6, %r1\nldabsb 0\nexit\n", BPFRT_PROG_SCHED_CLS)[0], 0);
}

TEST(reserved_fields_are_refused_by_the_validator)
{
	struct bpf_insn bad[][2] = {
		{ { .code = BPF_LD | BPF_ABS | BPF_W, .dst_reg = 1 }, { .code = BPF_JMP | BPF_EXIT } },
		{ { .code = BPF_LD | BPF_ABS | BPF_W, .off = 1 }, { .code = BPF_JMP | BPF_EXIT } },
		{ { .code = BPF_LD | BPF_ABS | BPF_W, .src_reg = 2 }, { .code = BPF_JMP | BPF_EXIT } },
		{ { .code = BPF_LD | BPF_IND | BPF_DW }, { .code = BPF_JMP | BPF_EXIT } },
		{ { .code = BPF_LD | BPF_IND | BPF_B, .src_reg = 11 }, { .code = BPF_JMP | BPF_EXIT } },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bpfrt_prog *p = NULL;

		CHECK_EQ(bpfrt_prog_load(bad[i], 2, NULL, &p), -EINVAL);
		CHECK(!p);
	}
}

TEST(asm_and_listing_round_trip)
{
	const char *text = "ldabsb 7\nldabsh -2097152\nldindw %r3, 12\nexit\n";
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;
	char buf[256] = "";
	FILE *f;

	CHECK_EQ(bpfrt_asm(text, &insns, &cnt), 0);
	CHECK_EQ(cnt, 4);
	CHECK_EQ(insns[0].code, BPF_LD | BPF_ABS | BPF_B);
	CHECK_EQ(insns[0].imm, 7);
	CHECK_EQ(insns[2].code, BPF_LD | BPF_IND | BPF_W);
	CHECK_EQ(insns[2].src_reg, 3);
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_EQ(bpfrt_disasm(insns, cnt, f), 0);
	fclose(f);
	CHECK(strstr(buf, "ldabsb 7"));
	CHECK(strstr(buf, "ldabsh -2097152"));
	CHECK(strstr(buf, "ldindw %r3, 12"));
	free(insns);
}

TEST(a_run_given_another_context_reads_nothing)
{
	struct bpfrt_prog *p;
	struct __sk_buff skb = { .len = 60 };
	uint64_t r0 = 7;

	CHECK_EQ(load("mov %r6, %r1\nldabsb 0\nmov %r0, 5\nexit\n", BPFRT_PROG_SOCKET, false, &p),
		 0);
	CHECK_EQ(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uint64_t)(uintptr_t)&skb, sizeof(skb), &r0),
		 0);
	CHECK_EQ(r0, 0);
	bpfrt_prog_free(p);
}


