/* The checking interpreter (BPFRT_EXEC_CHECKED): unsafe programs loaded
 * trusted (unverified) are stopped at their first violation with a report
 * naming the program, the insn, the address, the size and the nearest
 * region, and the bad access never happens; safe programs run as in the
 * interpreter. (Accepted programs of the corpora run checked in
 * test_verifier, test_progs and test_conformance.) */
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/tracepoint.h"
#include "core/prog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Runs p checked and expects a violation whose report holds every one of
 * the NULL-terminated substrings. */
#define expect_violation(p, ctx, ctx_len, ...)                                     \
	expect_violation_at(__LINE__, p, ctx, ctx_len, (const char *[]){ __VA_ARGS__, NULL })
static void expect_violation_at(int line, struct bpfrt_prog *p, uint64_t ctx, uint64_t ctx_len,
				const char *const *want)
{
	uint64_t r0 = 0;
	int err = bpfrt_prog_run(p, BPFRT_EXEC_CHECKED, ctx, ctx_len, &r0);
	const char *msg = bpfrt_last_error();

	CHECK_AT(__FILE__, line, err == -EFAULT, "run returned %d (r0 %#" PRIx64 "): %s", err, r0,
		 msg);
	for (; *want; want++)
		CHECK_AT(__FILE__, line, strstr(msg, *want), "report lacks '%s': %s", *want, msg);
}

static uint64_t run_checked_at(int line, struct bpfrt_prog *p, uint64_t ctx, uint64_t ctx_len)
{
	uint64_t r0 = ~0ull;
	int err = bpfrt_prog_run(p, BPFRT_EXEC_CHECKED, ctx, ctx_len, &r0);

	CHECK_AT(__FILE__, line, err == 0, "checked run: %d %s", err, bpfrt_last_error());
	return r0;
}
#define run_checked(p, ctx, ctx_len) run_checked_at(__LINE__, p, ctx, ctx_len)

static struct bpfrt_prog *trusted_asm(const char *name, const char *text)
{
	return load_asm(name, text, false, 0);
}

/* ---- context ----------------------------------------------------------- */

TEST(ctx_read_past_the_given_size)
{
	uint64_t ctx[4] = { 1, 2, 3, 4 };
	struct bpfrt_prog *p = trusted_asm("ctx_past", "ldxdw %r0, [%r1+8]\nexit\n");
	char at[32];

	REQUIRE(p);
	CHECK(run_checked(p, (uintptr_t)ctx, 16) == 2);
	snprintf(at, sizeof(at), "at %#llx", (unsigned long long)(uintptr_t)&ctx[1]);
	expect_violation(p, (uintptr_t)ctx, 8, "ctx_past: insn 0 (ldxdw %r0, [%r1+8])",
			 "out-of-bounds read of 8 bytes", at, "nearest region: context",
			 "8 bytes past its end");
	expect_violation(p, (uintptr_t)ctx, 12, "ctx_past: insn 0", "4 bytes past its end");
	bpfrt_prog_free(p);
}

/* The smaller of what the verifier proved (the program reads 16 bytes)
 * and what the run gives (bpfrt_prog_run refuses less than the proven
 * reach for verified programs): a program reading past its proven reach,
 * as if the verifier had recorded too little, is caught although the
 * memory is there. */
TEST(ctx_bound_is_the_smaller_of_verified_and_given)
{
	static const char text[] = "ldxdw %r0, [%r1+8]\nexit\n";
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "ctx_verified",
		   .verify = true, .ctx_size = 32);
	uint64_t ctx[4] = { 1, 2, 3, 4 }, r0 = 0;
	struct bpf_insn *insns;
	struct bpfrt_prog *p;
	size_t n;

	REQUIRE(bpfrt_asm(text, &insns, &n) == 0);
	REQUIRE(bpfrt_prog_load(insns, n, &opts, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	CHECK(bpfrt_prog_ctx_access(p) == 16);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_CHECKED, (uintptr_t)ctx, 16, &r0) == 0 && r0 == 2,
	      "%s", bpfrt_last_error());
	CHECK(run_checked(p, (uintptr_t)ctx, 32) == 2);
	p->max_ctx_access = 8; /* an unsound verdict */
	expect_violation(p, (uintptr_t)ctx, 32, "ctx_verified: insn 0",
			 "out-of-bounds read of 8 bytes", "context", "8 bytes past its end");
	bpfrt_prog_free(p);
}

TEST(ctx_write_past_the_given_size_does_not_happen)
{
	uint64_t ctx[2] = { 0, 0 };
	struct bpfrt_prog *p = trusted_asm("ctx_write", "stdw [%r1+8], 5\nmov %r0, 0\nexit\n");

	REQUIRE(p);
	expect_violation(p, (uintptr_t)ctx, 8, "ctx_write: insn 0 (stdw [%r1+8], 5)",
			 "out-of-bounds write of 8 bytes");
	CHECK(ctx[1] == 0, "the write happened");
	CHECK(run_checked(p, (uintptr_t)ctx, 16) == 0 && ctx[1] == 5);
	bpfrt_prog_free(p);
}

/* ---- stack -------------------------------------------------------------- */

TEST(stack_read_below_the_frame)
{
	/* r10 escapes: the frame is 512 bytes; 520 below r10 is outside */
	struct bpfrt_prog *p = trusted_asm("below",
					   "mov %r1, %r10\nsub %r1, 520\nldxdw %r0, [%r1]\nexit\n");

	REQUIRE(p);
	expect_violation(p, 0, 0, "below: insn 2 (ldxdw %r0, [%r1])",
			 "stack read of 8 bytes at", "below the live frames", "nearest region: stack",
			 "8 bytes before its start");
	bpfrt_prog_free(p);
}

/* A callee's frame dies when it returns: the pointer it hands back to
 * its caller is below the caller's live frames. */
TEST(stack_of_a_returned_callee_is_dead)
{
	struct bpfrt_prog *p = trusted_asm("dead_frame",
					   "call local f\n"
					   "ldxdw %r0, [%r0]\n"
					   "exit\n"
					   "f:\n"
					   "stdw [%r10-8], 5\n"
					   "mov %r0, %r10\n"
					   "sub %r0, 8\n"
					   "exit\n");

	REQUIRE(p);
	expect_violation(p, 0, 0, "dead_frame: insn 1", "stack read of 8 bytes",
			 "below the live frames");
	bpfrt_prog_free(p);
}

TEST(uninitialised_stack_reads)
{
	static const struct {
		const char *name, *text, *want;
	} bad[] = {
		{ "never_written", "ldxdw %r0, [%r10-8]\nexit\n", "insn 0" },
		{ "half_written", "stw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit\n", "insn 1" },
		{ "sign_extending", "ldxsh %r0, [%r10-2]\nexit\n", "insn 0" },
		{ "atomic_add", "mov %r1, 1\nlock add [%r10-8], %r1\nmov %r0, 0\nexit\n", "insn 1" },
		/* the second call's frame starts unwritten again */
		{ "callee_frame_reused",
		  "mov %r1, 1\ncall local f\nmov %r1, 0\ncall local f\nexit\n"
		  "f:\njeq %r1, 0, +2\nstdw [%r10-8], 7\nja +0\nldxdw %r0, [%r10-8]\nexit\n",
		  "insn 8" },
		/* helpers read their memory arguments */
		{ "helper_reads_it", "mov %r1, %r10\nsub %r1, 8\nmov %r2, 8\ncall 6\nexit\n",
		  "trace_printk argument 1: read of uninitialised stack" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bpfrt_prog *p = trusted_asm(bad[i].name, bad[i].text);

		if (!p)
			continue;
		expect_violation(p, 0, 0, bad[i].name, bad[i].want,
				 "read of uninitialised stack");
		bpfrt_prog_free(p);
	}
}

TEST(initialised_stack_reads_run)
{
	struct bpfrt_prog *p = trusted_asm("init_ok",
					   "stdw [%r10-8], 3\n"
					   "stw [%r10-12], 4\n"
					   "ldxdw %r0, [%r10-8]\n"
					   "ldxw %r1, [%r10-12]\n"
					   "add %r0, %r1\n"
					   /* a helper's output counts as written */
					   "mov %r1, %r10\nsub %r1, 32\nmov %r2, 16\n"
					   "mov %r6, %r0\ncall 16\n"
					   "ldxb %r1, [%r10-17]\n"
					   "mov %r0, %r6\n"
					   "exit\n");

	REQUIRE(p);
	CHECK(run_checked(p, 0, 0) == 7);
	bpfrt_prog_free(p);
}

TEST(helper_memory_argument_past_the_stack)
{
	/* get_current_comm(r10 - 8, 16): 8 bytes past the frame's top */
	struct bpfrt_prog *p = trusted_asm("comm_past",
					   "mov %r1, %r10\nsub %r1, 8\nmov %r2, 16\ncall 16\nexit\n");

	REQUIRE(p);
	expect_violation(p, 0, 0, "comm_past: insn 3 (call 16)",
			 "get_current_comm argument 1: stack write of 16 bytes",
			 "past the live frames");
	bpfrt_prog_free(p);
}

/* ---- maps, ringbuf records, tail calls, callbacks ----------------------- */

static struct bpfrt_object *load_unsafe(void)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .trusted = true);

	return load_object("unsafe_checked.bpf.o", &lo);
}

static struct bpfrt_prog *prog_of(struct bpfrt_object *obj, const char *name)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, name);

	if (!p)
		tl_fail(__FILE__, __LINE__, "no program %s", name);
	return p;
}

TEST(map_value_write_past_its_end)
{
	struct bpfrt_object *obj = load_unsafe();
	struct bpfrt_map *vals;
	uint64_t next = 0;
	uint32_t key = 1;

	REQUIRE(obj);
	vals = bpfrt_object_find_map(obj, "vals");
	REQUIRE(vals);
	CHECK(run_checked(prog_of(obj, "value_write_ok"), 0, 0) == 1);
	expect_violation(prog_of(obj, "value_write_past_end"), 0, 0, "value_write_past_end: insn",
			 "out-of-bounds write of 8 bytes",
			 "nearest region: map value of map 'vals'", "8 bytes past its end");
	CHECK(bpfrt_map_lookup_elem(vals, &key, &next) == 0 && next == 0,
	      "the write reached the next element: %" PRIu64, next);
	/* a global (.bss) reached through lddw */
	expect_violation(prog_of(obj, "global_write_past_end"), 0, 0,
			 "global_write_past_end: insn", "out-of-bounds write of 1 bytes",
			 "map value of map", "bss");
	bpfrt_object_close(obj);
}

TEST(read_of_a_write_only_map_value)
{
	struct bpfrt_object *obj = load_unsafe();

	REQUIRE(obj);
	CHECK(run_checked(prog_of(obj, "write_only_map_write_ok"), 0, 0) == 1);
	expect_violation(prog_of(obj, "write_only_map_read"), 0, 0, "write_only_map_read: insn",
			 "read of write-only map value of 8 bytes",
			 "nearest region: map value of map 'wronly'");
	bpfrt_object_close(obj);
}

TEST(helper_memory_argument_past_a_map_value)
{
	struct bpfrt_object *obj = load_unsafe();
	uint32_t *len;
	size_t sz;

	REQUIRE(obj);
	len = bpfrt_object_global(obj, "len", &sz);
	REQUIRE(len && sz == sizeof(*len));
	expect_violation(prog_of(obj, "helper_reads_past_value"), 0, 0,
			 "ringbuf_output argument 2: out-of-bounds read of 16 bytes",
			 "map value of map 'vals'");
	*len = 8;
	CHECK(run_checked(prog_of(obj, "helper_reads_past_value"), 0, 0) == 0);
	bpfrt_object_close(obj);
}

TEST(ringbuf_record_used_after_submit)
{
	struct bpfrt_object *obj = load_unsafe();

	REQUIRE(obj);
	CHECK(run_checked(prog_of(obj, "ringbuf_record_ok"), 0, 0) == 1);
	expect_violation(prog_of(obj, "write_after_submit"), 0, 0, "write_after_submit: insn",
			 "out-of-bounds write of 8 bytes",
			 "nearest region: released ringbuf record of map 'rb'");
	expect_violation(prog_of(obj, "discard_after_submit"), 0, 0,
			 "ringbuf_discard argument 1: not a live ringbuf record");
	bpfrt_object_close(obj);
}

/* A dynptr argument must be initialised stack naming memory of a live
 * region: a forged one (a trusted program writes the 16 bytes itself)
 * is stopped before the helper touches what it names. */
TEST(forged_dynptr_is_not_followed)
{
	static const char *const forge =
		"mov %r1, 0x1000\nstxdw [%r10-16], %r1\n"
		"stw [%r10-8], 0x10000008\nstw [%r10-4], 0\n";
	static const char *const read =
		"mov %r1, %r10\nadd %r1, -24\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -16\n"
		"mov %r4, 0\nmov %r5, 0\ncall 201\nexit\n";
	char text[512];
	struct bpfrt_prog *p;

	snprintf(text, sizeof(text), "%s%s", forge, read);
	p = trusted_asm("forged_dynptr", text);
	REQUIRE(p);
	expect_violation(p, 0, 0, "forged_dynptr: insn", "dynptr_read argument 3",
			 "of 8 bytes at 0x1000");
	bpfrt_prog_free(p);
	p = trusted_asm("uninit_dynptr", read);
	REQUIRE(p);
	expect_violation(p, 0, 0, "dynptr_read argument 3", "read of uninitialised stack");
	bpfrt_prog_free(p);
	/* over the program's own stack it is memory the program may touch */
	snprintf(text, sizeof(text), "stdw [%%r10-32], 6\nmov %%r1, %%r10\nadd %%r1, -32\n"
		 "stxdw [%%r10-16], %%r1\nstw [%%r10-8], 0x10000008\nstw [%%r10-4], 0\n%s",
		 "mov %r1, %r10\nadd %r1, -24\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -16\n"
		 "mov %r4, 0\nmov %r5, 0\ncall 201\nldxdw %r0, [%r10-24]\nexit\n");
	p = trusted_asm("stack_dynptr", text);
	REQUIRE(p);
	CHECK_EQ(run_checked(p, 0, 0), 6);
	bpfrt_prog_free(p);
}

TEST(tail_call_target_runs_checked)
{
	struct bpfrt_object *obj = load_unsafe();
	uint64_t ctx[2] = { 0 };

	REQUIRE(obj);
	REQUIRE(bpfrt_map_update_prog(bpfrt_object_find_map(obj, "jmp"), 0,
				      prog_of(obj, "value_write_past_end")) == 0);
	expect_violation(prog_of(obj, "tail_call_ok"), (uintptr_t)ctx, sizeof(ctx),
			 "value_write_past_end: insn", "out-of-bounds write of 8 bytes");
	bpfrt_object_close(obj);
}

TEST(bpf_loop_callback_runs_checked)
{
	struct bpfrt_object *obj = load_unsafe();
	uint32_t *idx;
	size_t sz;

	REQUIRE(obj);
	idx = bpfrt_object_global(obj, "idx", &sz);
	REQUIRE(idx);
	*idx = 0; /* iteration 0 writes v[0], iteration 1 v[1]: past the value */
	expect_violation(prog_of(obj, "loop_callback_writes_past"), 0, 0,
			 "loop_callback_writes_past: insn", "out-of-bounds write of 8 bytes",
			 "map value of map 'vals'");
	bpfrt_object_close(obj);
}

/* A violation stops the whole run, the activations the callback is
 * nested in included, and the next run starts clean. */
TEST(a_run_after_a_violation_starts_clean)
{
	struct bpfrt_prog *bad = trusted_asm("bad", "ldxdw %r0, [%r10-8]\nexit\n");
	struct bpfrt_prog *good = trusted_asm("good", "mov %r0, 9\nexit\n");
	uint64_t r0 = 0;

	REQUIRE(bad && good);
	expect_violation(bad, 0, 0, "bad: insn 0");
	CHECK(bpfrt_prog_run(good, BPFRT_EXEC_CHECKED, 0, 0, &r0) == 0 && r0 == 9);
	CHECK(bpfrt_prog_run(good, BPFRT_EXEC_INTERP, 0, 0, &r0) == 0 && r0 == 9);
	bpfrt_prog_free(bad);
	bpfrt_prog_free(good);
}

/* ---- registers the verifier holds uninitialised --------------------------- */

/* After a call r1-r5 are clobbered, and a callee's r6-r9 are its own
 * (unwritten at entry). The validator refuses reads no path initialises;
 * where only some path skips the write, the verifier refuses: in a
 * verified program (here a trusted load marked verified, as an unsound
 * verdict would leave it) the checking interpreter gives such registers a
 * poison value the plain interpreter does not, so a use computes with
 * garbage and a dereference is caught. */
TEST(uninitialised_registers_are_poisoned_in_verified_programs)
{
	/* r6 is 0: the jump skips the write of r1 */
	struct bpfrt_prog *use = trusted_asm("use_r1",
					     "mov %r6, 0\nmov %r1, 5\ncall 7\njeq %r6, 0, +1\n"
					     "mov %r1, 9\nmov %r0, %r1\nexit\n");
	struct bpfrt_prog *deref = trusted_asm("deref_r1",
					       "mov %r6, 0\nmov %r1, %r10\ncall 7\njeq %r6, 0, +1\n"
					       "mov %r1, %r10\nldxdw %r0, [%r1-8]\nexit\n");
	struct bpfrt_prog *callee = trusted_asm("callee_r6",
						"mov %r6, 3\nmov %r1, 0\ncall local f\nexit\n"
						"f:\njeq %r1, 0, +1\nmov %r6, 1\nmov %r0, %r6\nexit\n");
	uint64_t r0 = 0, ctx[1] = { 0 };
	const uint64_t c = (uintptr_t)ctx; /* verified programs get a context */

	REQUIRE(use && deref && callee);
	use->verified = deref->verified = callee->verified = true;
	CHECK(bpfrt_prog_run(use, BPFRT_EXEC_INTERP, c, 8, &r0) == 0 && r0 == 5);
	CHECK(run_checked(use, c, 8) == 0xbadc0ffee0ddf00dull);
	expect_violation(deref, c, 8, "deref_r1: insn 5 (ldxdw %r0, [%r1-8])",
			 "out-of-bounds read of 8 bytes at 0xbadc0ffee0ddf005");
	CHECK(bpfrt_prog_run(callee, BPFRT_EXEC_INTERP, c, 8, &r0) == 0 && r0 == 3);
	CHECK(run_checked(callee, c, 8) == 0xbadc0ffee0ddf00dull);
	/* unverified (trusted) programs keep the plain interpreter's registers */
	use->verified = false;
	CHECK(run_checked(use, c, 8) == 5);
	bpfrt_prog_free(use);
	bpfrt_prog_free(deref);
	bpfrt_prog_free(callee);
}

/* bpf_loop(1, <not a subprogram handle>, 0, 0): in the interpreter a
 * callback is always a tagged insn index; an untagged one would be called
 * as native code (here: address 0x1000). */
TEST(forged_callback_is_not_called)
{
	struct bpfrt_prog *p = trusted_asm("forged_cb",
					   "mov %r1, 1\nlddw %r2, 0x1000\nmov %r3, 0\nmov %r4, 0\n"
					   "call 181\nexit\n");

	REQUIRE(p);
	expect_violation(p, 0, 0, "forged_cb: insn 5 (call 181)",
			 "loop argument 2: not a subprogram of the program (0x1000)");
	bpfrt_prog_free(p);
}

TEST(stack_write_above_the_frame)
{
	struct bpfrt_prog *p = trusted_asm("above", "mov %r1, %r10\nstdw [%r1+0], 1\nmov %r0, 0\nexit\n");

	REQUIRE(p);
	expect_violation(p, 0, 0, "above: insn 1");
	bpfrt_prog_free(p);
}

/* The XDP packet is [data, data_end): before data is still the packet's
 * page, past data_end the guard page. */
TEST(packet_reads_outside_data_and_data_end)
{
	struct bpfrt_object *obj = load_unsafe();
	unsigned char pkt[16] = { 0 };
	const char *names[] = { "xdp_read_before_data", "xdp_read_past_end" };

	REQUIRE(obj);
	for (int i = 0; i < 2; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt,
			   .data_size_in = sizeof(pkt),
			   .mode = BPFRT_EXEC_CHECKED);
		int err = bpfrt_prog_test_run_opts(prog_of(obj, names[i]), &o);

		CHECK(err == -EFAULT && strstr(bpfrt_last_error(), "packet"), "%s: %d %s",
		      names[i], err, bpfrt_last_error());
	}
	bpfrt_object_close(obj);
}

/* The metadata [data_meta, data) is a region of its own: a read before
 * it, and one running from it into the packet, are caught. */
TEST(metadata_reads_outside_data_meta_and_data)
{
	struct bpfrt_object *obj = load_unsafe();
	unsigned char pkt[20] = { 0 };
	struct xdp_md md = { .data = 4, .data_end = sizeof(pkt) };
	const char *names[] = { "xdp_meta_read_before", "xdp_meta_read_into_data" };

	REQUIRE(obj);
	for (int i = 0; i < 2; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt,
			   .data_size_in = sizeof(pkt), .ctx_in = &md, .ctx_size_in = sizeof(md),
			   .mode = BPFRT_EXEC_CHECKED);
		int err = bpfrt_prog_test_run_opts(prog_of(obj, names[i]), &o);

		CHECK(err == -EFAULT && strstr(bpfrt_last_error(), "nearest region: packet"),
		      "%s: %d %s", names[i], err, bpfrt_last_error());
	}
	bpfrt_object_close(obj);
}

/* A host kfunc handed the context may read all of it (the verifier counts
 * it as reading the kind's whole context): a trusted raw_tp program
 * passing a context shorter than that is caught at the call. */
static uint64_t ctx_reader(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	const uint64_t *args = (const uint64_t *)(uintptr_t)ctx;

	return args[BPFRT_TP_MAX_ARGS - 1];
}

TEST(kfunc_given_a_short_context)
{
	static const struct bpfrt_helper reader = {
		.name = "ci_ctx_reader", .fn = ctx_reader, .args = { BPFRT_ARG_PTR_TO_CTX },
	};
	int kid = bpfrt_kfunc_id(reader.name) >= 0 ? bpfrt_kfunc_id(reader.name)
						    : bpfrt_kfunc_register(reader.name, &reader);
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "to_kfunc",
		   .kind = BPFRT_PROG_RAW_TRACEPOINT);
	uint64_t ctx[BPFRT_TP_MAX_ARGS] = { 0 }, r0 = 0;
	struct bpfrt_prog *p = NULL;
	struct bpf_insn *insns;
	char text[64];
	size_t n;

	REQUIRE(kid >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
	ctx[BPFRT_TP_MAX_ARGS - 1] = 42;
	snprintf(text, sizeof(text), "call %d\nexit\n", kid);
	REQUIRE(bpfrt_asm(text, &insns, &n) == 0);
	REQUIRE(bpfrt_prog_load(insns, n, &o, &p) == 0, "%s", bpfrt_last_error());
	free(insns);
	/* verified: the run must give the whole context */
	CHECK(bpfrt_prog_ctx_access(p) == sizeof(ctx));
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_CHECKED, (uintptr_t)ctx, 8, &r0) == -EINVAL);
	CHECK(run_checked(p, (uintptr_t)ctx, sizeof(ctx)) == 42);
	p->verified = false; /* as a trusted load: the checking interpreter's to catch */
	expect_violation(p, (uintptr_t)ctx, 8, "to_kfunc: insn 0",
			 "ci_ctx_reader argument 1: out-of-bounds read", "nearest region: context");
	CHECK(run_checked(p, (uintptr_t)ctx, sizeof(ctx)) == 42);
	bpfrt_prog_free(p);
}

/* No run holds a socket (lookups find none, skb->sk reads 0): a trusted
 * program handing a socket helper any pointer of its own is stopped
 * before the helper runs. */
TEST(forged_socket_is_not_passed)
{
	struct bpfrt_prog *p = trusted_asm("forged_sock", "mov %r1, %r10\nadd %r1, -8\n"
					   "stdw [%r10-8], 0\ncall 86\nexit\n");

	REQUIRE(p);
	expect_violation(p, 0, 0, "forged_sock: insn", "sk_release argument 1",
			 "no socket exists in bpfrt");
	bpfrt_prog_free(p);
	p = trusted_asm("forged_fullsock", "mov %r1, %r10\nadd %r1, -8\nstdw [%r10-8], 0\n"
			"call 95\nexit\n");
	REQUIRE(p);
	expect_violation(p, 0, 0, "sk_fullsock argument 1", "no socket exists in bpfrt");
	bpfrt_prog_free(p);
}
