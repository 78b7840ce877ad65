/* Private stacks and nested execution: the policy, a nested scheduler's
 * cgroup tree run through the bpfrt_run_children kfunc in both engines,
 * 64 levels of nesting on a 64 KiB thread (native stack measured by
 * painting), the recursion guard, guard-page hits that the host survives,
 * signal chaining, and stacks freed at thread exit. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "stack/privstack.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct bpfrt_object *load_obj(const char *file, bool jit, uint32_t prog_flags)
{
	/* nested_tree.bpf.o passes its depth in r1 and does arithmetic on
	 * it, which no verifier accepts of a context pointer: load trusted */
	BPFRT_OPTS(bpfrt_object_load_opts, opts, .jit = jit,
		   .prog_flags = prog_flags,
		   .trusted = !strcmp(file, "nested_tree.bpf.o"));

	return load_object(file, &opts);
}

static bool privstack_on(const struct bpfrt_prog *prog)
{
	struct bpfrt_privstack_info info = { .sz = sizeof(info) };

	return !bpfrt_prog_privstack_info(prog, &info) && info.enabled;
}

/* ---- policy ---------------------------------------------------------- */

TEST(policy_follows_kind_depth_and_flags)
{
	struct bpfrt_object *obj = load_obj("privstack_policy.bpf.o", true, 0);
	struct bpfrt_prog *p;
	uint64_t r = 0;

	REQUIRE(obj);
	CHECK(privstack_on(bpfrt_object_find_prog(obj, "tp_big")), "tracepoint, 128 bytes");
	CHECK(!privstack_on(bpfrt_object_find_prog(obj, "tp_small")), "tracepoint, 32 bytes");
	CHECK(!privstack_on(bpfrt_object_find_prog(obj, "sock_big")), "socket, 128 bytes");
	for (p = bpfrt_object_next_prog(obj, NULL); p; p = bpfrt_object_next_prog(obj, p)) {
		CHECK(!run_zero_ctx(p, BPFRT_EXEC_JIT, &r), "%s", bpfrt_last_error());
		CHECK(!run_zero_ctx(p, BPFRT_EXEC_INTERP, &r), "%s", bpfrt_last_error());
	}
	p = bpfrt_object_find_prog(obj, "tp_big");
	CHECK(!run_zero_ctx(p, BPFRT_EXEC_JIT, &r) && r == 3 * 120, "r0 %llu",
	      (unsigned long long)r);
	CHECK(bpfrt_prog_set_flags(p, 0) == -EBUSY, "flags after load");
	bpfrt_object_close(obj);

	/* the object-wide flag turns it off; per program, set_flags forces it on */
	obj = load_obj("privstack_policy.bpf.o", true, BPFRT_F_DISABLE_PRIVATE_STACK);
	REQUIRE(obj);
	CHECK(!privstack_on(bpfrt_object_find_prog(obj, "tp_big")), "disabled by flag");
	bpfrt_object_close(obj);

	REQUIRE(!bpfrt_object_open(tl_prog_path("privstack_policy.bpf.o"), NULL, &obj));
	CHECK(bpfrt_prog_set_flags(bpfrt_object_find_prog(obj, "sock_big"),
				   BPFRT_F_PRIVATE_STACK | BPFRT_F_DISABLE_PRIVATE_STACK) == -EINVAL);
	CHECK(bpfrt_prog_set_flags(bpfrt_object_find_prog(obj, "sock_big"), 1u << 30) == -EINVAL);
	CHECK(!bpfrt_prog_set_flags(bpfrt_object_find_prog(obj, "sock_big"), BPFRT_F_PRIVATE_STACK));
	{
		BPFRT_OPTS(bpfrt_object_load_opts, o, .jit = true);

		REQUIRE(!bpfrt_object_load(obj, &o), "%s", bpfrt_last_error());
	}
	p = bpfrt_object_find_prog(obj, "sock_big");
	CHECK(privstack_on(p), "forced on");
	CHECK(!run_zero_ctx(p, BPFRT_EXEC_JIT, &r) && r == 3 * 120);
	CHECK(!run_zero_ctx(p, BPFRT_EXEC_INTERP, &r) && r == 3 * 120);
	bpfrt_object_close(obj);
}

static void *no_claim(struct bpfrt_prog *prog)
{
	return NULL;
}

/* The engine reaches the stacks only through the host registered before
 * main (core/stack_abi.h): it is there before any load, it is the one
 * JIT code calls, and no second one replaces it. */
TEST(stack_host_is_registered_once_before_main)
{
	const struct bpfrt_stack_host *host = bpfrt_stack_host;
	struct bpfrt_stack_host other;

	REQUIRE(host, "no stack host registered");
	other = *host;
	other.claim_slow = no_claim;
	CHECK(bpfrt_stack_host_register(&other) == -EBUSY);
	CHECK(strstr(bpfrt_last_error(), "another one"), "%s", bpfrt_last_error());
	CHECK(bpfrt_stack_host_register(host) == 0, "the same host again");
	other.prog_fini = NULL;
	CHECK(bpfrt_stack_host_register(&other) == -EINVAL);
	CHECK(bpfrt_stack_host == host);
}

TEST(dump_jited_shows_private_stack_code)
{
	struct bpfrt_object *obj = load_obj("privstack_policy.bpf.o", true, 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	REQUIRE(obj);
	f = open_memstream(&text, &len);
	REQUIRE(f);
	CHECK(!bpfrt_prog_dump_jited(bpfrt_object_find_prog(obj, "tp_big"), f));
	fclose(f);
	REQUIRE(text);
	/* the unwind point of a guard hit */
	CHECK(strstr(text, "epilogue (abort unwinding)"), "%s", text);
	/* the frame top from the thread's slot, the claim, the give-back,
	 * and BPF stack accesses through the private frame */
#if defined(__x86_64__)
	/* the slot array through its TLS pointer, at entry and at exit */
	CHECK(strstr(text, "mov      rax, qword ptr fs:["), "%s", text);
	CHECK(strstr(text, "mov      rbp, qword ptr [rax"), "%s", text);
	CHECK(strstr(text, "mov      qword ptr [rax") && strstr(text, "], 0"), "%s", text);
	CHECK(strstr(text, "mov      rdx, qword ptr fs:["), "%s", text);
	CHECK(strstr(text, "mov      qword ptr [rdx") && strstr(text, "], rbp"), "%s", text);
	CHECK(strstr(text, "qword ptr [rbp - 8]"), "%s", text);
#elif defined(__aarch64__)
	CHECK(strstr(text, "mrs      x9, tpidr_el0"), "%s", text);
	CHECK(strstr(text, "ldr      x9, [x9]"), "%s", text);  /* the slot array */
	CHECK(strstr(text, "ldr      x25, [x9]"), "%s", text);
	CHECK(strstr(text, "str      xzr, [x9]"), "%s", text);
	CHECK(strstr(text, "str      x25, [x9]"), "%s", text);
	CHECK(strstr(text, "[x25, #-8]"), "%s", text);
	/* the BPF stack is not carved from the native one */
	CHECK(!strstr(text, "sub      sp, sp"), "%s", text);
#else
	free(text);
	bpfrt_object_close(obj);
	SKIP("no disassembler for this architecture's listing (raw words)");
#endif
	free(text);
	bpfrt_object_close(obj);
}

/* ---- the cgroup tree ------------------------------------------------- */

static void set_list(uint32_t list, struct bpfrt_object *obj, const char *a, const char *b)
{
	struct bpfrt_prog *progs[2] = { bpfrt_object_find_prog(obj, a),
					bpfrt_object_find_prog(obj, b) };

	CHECK(progs[0] && progs[1]);
	CHECK(!bpfrt_nest_set_children(list, progs, 2), "%s", bpfrt_last_error());
}

BOTH_ENGINES(nested_cgroup_tree)
{
	static const char *const names[] = { "cg_root", "cg1", "cg2", "cg11", "cg12",
					     "cg21", "cg22" };
	struct bpfrt_object *obj;
	uint64_t *load, *summary, *depth, r0 = 0;
	size_t sz;

	REQUIRE(bpfrt_nest_kfunc_register() >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
	obj = load_obj("nested_tree.bpf.o", jit, 0);
	REQUIRE(obj);
	load = bpfrt_object_global(obj, "load", &sz);
	summary = bpfrt_object_global(obj, "summary", &sz);
	depth = bpfrt_object_global(obj, "depth_seen", &sz);
	REQUIRE(load && summary && depth);
	for (int i = 0; i < 7; i++) {
		load[i] = 1ull << i;
		CHECK(privstack_on(bpfrt_object_find_prog(obj, names[i])), "%s", names[i]);
	}
	set_list(0, obj, "cg1", "cg2");
	set_list(1, obj, "cg11", "cg12");
	set_list(2, obj, "cg21", "cg22");
	for (uint32_t l = 3; l < 7; l++)
		CHECK(!bpfrt_nest_set_children(l, NULL, 0));

	CHECK(!bpfrt_prog_run(bpfrt_object_find_prog(obj, "cg_root"),
			      jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, 0, 0, &r0),
	      "%s", bpfrt_last_error());
	CHECK(r0 == 0x7f, "root saw %#llx", (unsigned long long)r0);
	CHECK(summary[0] == 0x7f);
	CHECK(summary[1] == (2 | 8 | 16), "cg1 %llu", (unsigned long long)summary[1]);
	CHECK(summary[2] == (4 | 32 | 64), "cg2 %llu", (unsigned long long)summary[2]);
	for (int i = 3; i < 7; i++)
		CHECK(summary[i] == 1ull << i, "leaf %d", i);
	CHECK(depth[0] == 0 && depth[1] == 1 && depth[2] == 1 && depth[3] == 2 && depth[6] == 2);
	for (int i = 0; i < 7; i++)
		CHECK(bpfrt_prog_misses(bpfrt_object_find_prog(obj, names[i])) == 0);
	for (uint32_t l = 0; l < 3; l++)
		CHECK(!bpfrt_nest_set_children(l, NULL, 0));
	bpfrt_object_close(obj);
}

/* ---- recursion guard ------------------------------------------------- */

BOTH_ENGINES(recursion_guard_counts_misses)
{
	struct bpfrt_object *obj;
	struct bpfrt_prog *root, *cg1, *list[2];
	uint64_t *load, r0 = 0;
	size_t sz;

	REQUIRE(bpfrt_nest_kfunc_register() >= 0);
	obj = load_obj("nested_tree.bpf.o", jit, 0);
	REQUIRE(obj);
	root = bpfrt_object_find_prog(obj, "cg_root");
	cg1 = bpfrt_object_find_prog(obj, "cg1");
	load = bpfrt_object_global(obj, "load", &sz);
	REQUIRE(root && cg1 && load);
	load[0] = 1;
	load[1] = 10;
	/* root's children: cg1 and root itself; cg1's child: root again */
	list[0] = cg1;
	list[1] = root;
	CHECK(!bpfrt_nest_set_children(0, list, 2));
	CHECK(!bpfrt_nest_set_children(1, &root, 1));
	CHECK(!bpfrt_prog_run(root, BPFRT_EXEC_DEFAULT, 0, 0, &r0), "%s", bpfrt_last_error());
	CHECK(r0 == 11, "r0 %llu", (unsigned long long)r0);
	CHECK(bpfrt_prog_misses(root) == 2, "misses %llu",
	      (unsigned long long)bpfrt_prog_misses(root));
	CHECK(bpfrt_prog_misses(cg1) == 0);
	/* the guard is per activation: from cg1, root goes in once and
	 * refuses cg1 and itself */
	CHECK(!bpfrt_prog_run(cg1, BPFRT_EXEC_DEFAULT, 0, 0, &r0) && r0 == 10 + 1,
	      "r0 %llu", (unsigned long long)r0);
	CHECK(bpfrt_prog_misses(root) == 3);
	CHECK(bpfrt_prog_misses(cg1) == 1);
	CHECK(!bpfrt_nest_set_children(0, NULL, 0) && !bpfrt_nest_set_children(1, NULL, 0));
	bpfrt_object_close(obj);
}

/* ---- callbacks, local calls, callx aborts, tail calls ---------------- */

#define LDDW_FUNC(DST, REL) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, DST, BPF_PSEUDO_FUNC, 0, REL), INSN(0, 0, 0, 0, 0)

static struct bpfrt_prog *load_priv(const char *name, const struct bpf_insn *insns, size_t cnt,
				    bool jit)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = name, .jit = jit,
		   .flags = BPFRT_F_PRIVATE_STACK);
	struct bpfrt_prog *prog = NULL;
	int err = bpfrt_prog_load(insns, cnt, &opts, &prog);

	if (err)
		tl_fail(__FILE__, __LINE__, "load %s: %d %s", name, err, bpfrt_last_error());
	return prog;
}

/* main keeps slots across a bpf_loop whose callback and main itself call
 * sq(), which stores its argument in its own frame: a callee frame that
 * overlapped its caller's (r10 not moved around the call) or a callback
 * frame on the private stack (a helper calls it with its own r10)
 * overwrites main's slots. Returns sq(r1) * 10000 + (sum of i^2, i < 5)
 * * 100 + 7 + 7. */
static const struct bpf_insn calls_prog[] = {
	/* 0: main(r1) */
	MOV64_REG(BPF_R6, BPF_R1),
	ST(BPF_DW, BPF_R10, -8, 7),
	ST(BPF_DW, BPF_R10, -16, 0),
	MOV64_IMM(BPF_R1, 5),
	LDDW_FUNC(BPF_R2, 16),                  /* -> 21 */
	MOV64_REG(BPF_R3, BPF_R10),
	ALU64_IMM(BPF_ADD, BPF_R3, -16),
	MOV64_IMM(BPF_R4, 0),
	CALL_HELPER(BPF_FUNC_loop),
	LDX(BPF_DW, BPF_R7, BPF_R10, -16),
	ALU64_IMM(BPF_MUL, BPF_R7, 100),
	LDX(BPF_DW, BPF_R1, BPF_R10, -8),
	ALU64_REG(BPF_ADD, BPF_R7, BPF_R1),
	MOV64_REG(BPF_R1, BPF_R6),
	CALL_LOCAL(14),                         /* -> 30 */
	ALU64_IMM(BPF_MUL, BPF_R0, 10000),
	ALU64_REG(BPF_ADD, BPF_R0, BPF_R7),
	LDX(BPF_DW, BPF_R1, BPF_R10, -8),
	ALU64_REG(BPF_ADD, BPF_R0, BPF_R1),
	EXIT(),
	/* 21: cb(i, ctx): *ctx += sq(i) */
	STX(BPF_DW, BPF_R10, BPF_R1, -8),
	MOV64_REG(BPF_R6, BPF_R2),
	LDX(BPF_DW, BPF_R1, BPF_R10, -8),
	CALL_LOCAL(5),                          /* -> 30 */
	LDX(BPF_DW, BPF_R1, BPF_R6, 0),
	ALU64_REG(BPF_ADD, BPF_R1, BPF_R0),
	STX(BPF_DW, BPF_R6, BPF_R1, 0),
	MOV64_IMM(BPF_R0, 0),
	EXIT(),
	/* 30: sq(x) */
	STX(BPF_DW, BPF_R10, BPF_R1, -8),
	LDX(BPF_DW, BPF_R0, BPF_R10, -8),
	ALU64_REG(BPF_MUL, BPF_R0, BPF_R0),
	EXIT(),
};

BOTH_ENGINES(callbacks_and_local_calls_on_private_stack)
{
	struct bpfrt_prog *prog = load_priv("calls", calls_prog, ARRAY_LEN(calls_prog), jit);
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;

	REQUIRE(prog);
	CHECK(privstack_on(prog));
	for (uint64_t x = 3; x < 6; x++) {
		uint64_t r0 = 0;
		int err = bpfrt_prog_run(prog, mode, x, 0, &r0);

		CHECK(err == 0 && r0 == x * x * 10000 + 30 * 100 + 7 + 7, "x %llu: err %d r0 %llu %s",
		      (unsigned long long)x, err, (unsigned long long)r0, bpfrt_last_error());
	}
	CHECK(bpfrt_prog_misses(prog) == 0);
	bpfrt_prog_free(prog);
}

/* A callx to an unregistered helper inside a bpf_loop callback aborts the
 * run through the helper's C frame; the stack must be given back, or the
 * next run is refused as a second activation. */
static const struct bpf_insn callx_prog[] = {
	MOV64_REG(BPF_R6, BPF_R1),
	ST(BPF_DW, BPF_R10, -8, 5),
	MOV64_IMM(BPF_R1, 3),
	LDDW_FUNC(BPF_R2, 6),                   /* -> 10 */
	MOV64_REG(BPF_R3, BPF_R6),
	MOV64_IMM(BPF_R4, 0),
	CALL_HELPER(BPF_FUNC_loop),
	LDX(BPF_DW, BPF_R0, BPF_R10, -8),
	EXIT(),
	/* 10: cb(i, id): callx id */
	CALLX(BPF_R2),
	MOV64_IMM(BPF_R0, 0),
	EXIT(),
};

BOTH_ENGINES(callx_abort_gives_the_stack_back)
{
	struct bpfrt_prog *prog = load_priv("callx", callx_prog, ARRAY_LEN(callx_prog), jit);
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	uint64_t r0 = 0;

	REQUIRE(prog);
	bpfrt_helper_unregister(499);
	for (int i = 0; i < 3; i++) {
		int err = bpfrt_prog_run(prog, mode, 499, 0, &r0);

		CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "callx"), "run %d: err %d %s",
		      i, err, bpfrt_last_error());
	}
	CHECK(!bpfrt_prog_run(prog, mode, BPF_FUNC_get_smp_processor_id, 0, &r0) && r0 == 5,
	      "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(bpfrt_prog_misses(prog) == 0, "misses %llu",
	      (unsigned long long)bpfrt_prog_misses(prog));
	bpfrt_prog_free(prog);
}

/* A tail call leaves the caller's frame (its stack given back) for the
 * target's, which claims its own. */
BOTH_ENGINES(tail_call_between_private_stacks)
{
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	struct bpfrt_map *map = NULL;
	struct bpfrt_prog *a, *b;
	uint64_t ctx = 40, r0 = 0;

	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 2, NULL, &map));
	{
		const struct bpf_insn ia[] = {
			/* the interpreter runs the target in this frame */
			ST(BPF_DW, BPF_R10, -16, 1),
			LDDW(BPF_R2, (uintptr_t)map),
			MOV64_IMM(BPF_R3, 0),
			CALL_HELPER(BPF_FUNC_tail_call),
			EXIT(),
		};
		const struct bpf_insn ib[] = {
			LDX(BPF_DW, BPF_R2, BPF_R1, 0),
			STX(BPF_DW, BPF_R10, BPF_R2, -16),
			LDX(BPF_DW, BPF_R0, BPF_R10, -16),
			ALU64_IMM(BPF_ADD, BPF_R0, 2),
			EXIT(),
		};

		a = load_priv("tail_a", ia, ARRAY_LEN(ia), jit);
		b = load_priv("tail_b", ib, ARRAY_LEN(ib), jit);
	}
	REQUIRE(a && b);
	REQUIRE(!bpfrt_map_update_prog(map, 0, b), "%s", bpfrt_last_error());
	for (int i = 0; i < 3; i++) {
		CHECK(!bpfrt_prog_run(a, mode, (uintptr_t)&ctx, 0, &r0) && r0 == 42, "r0 %llu %s",
		      (unsigned long long)r0, bpfrt_last_error());
		CHECK(!bpfrt_prog_run(b, mode, (uintptr_t)&ctx, 0, &r0) && r0 == 42);
	}
	CHECK(bpfrt_prog_misses(a) == 0 && bpfrt_prog_misses(b) == 0);
	bpfrt_map_free(map);
	bpfrt_prog_free(a);
	bpfrt_prog_free(b);
}

/* ---- 64 levels on a 64 KiB thread ------------------------------------ */

#define LEVELS 64
#define PAINT 0x5a

struct nest64 {
	bool jit;
	uint32_t flags;
	char *usable_lo;        /* lowest byte of the thread's stack not PROT_NONE */
	int err;
	uint64_t r0;
	size_t used;            /* native stack bytes touched below the paint start */
	char msg[256];
};

/* Level i stores 256 bytes of frame, asks list i (level i + 1) and adds
 * one to what it got back. */
static const char nest_text[] =
	"mov %r6, %r1\n"
	"stxdw [%r10-8], %r6\n"
	"stxdw [%r10-256], %r6\n"
	"mov %r1, LIST\n"
	"mov %r2, %r6\n"
	"add %r2, 1\n"
	"call KFUNC\n"
	"ldxdw %r1, [%r10-256]\n"
	"sub %r1, %r6\n"
	"add %r0, %r1\n"
	"add %r0, 1\n"
	"exit\n";

static struct bpfrt_prog *nest_prog(uint32_t level, int kfunc, bool jit, uint32_t flags)
{
	char text[sizeof(nest_text) + 64], *p, name[32];
	const char *s = nest_text;

	/* substitute LIST and KFUNC */
	p = text;
	while (*s) {
		if (!strncmp(s, "LIST", 4)) {
			p += sprintf(p, "%u", level);
			s += 4;
		} else if (!strncmp(s, "KFUNC", 5)) {
			p += sprintf(p, "%d", kfunc);
			s += 5;
		} else {
			*p++ = *s++;
		}
	}
	*p = '\0';
	snprintf(name, sizeof(name), "nest%u", level);
	return load_asm(name, text, jit, flags);
}

static __attribute__((noinline)) void paint_below(char *from, char *to)
{
	volatile char *p = to;

	while (p < (volatile char *)from)
		*p++ = PAINT;
}

static void *nest64_thread(void *arg)
{
	struct nest64 *n = arg;
	struct bpfrt_prog *progs[LEVELS] = { 0 };
	pthread_attr_t attr;
	void *stack_lo;
	size_t stack_sz;
	char *here = __builtin_frame_address(0), *start, *p;
	int kfunc = bpfrt_nest_kfunc_register();

	n->err = -EINVAL;
	if (kfunc < 0)
		return NULL;
	for (uint32_t i = 0; i < LEVELS; i++) {
		progs[i] = nest_prog(i, kfunc, n->jit, n->flags);
		if (!progs[i])
			goto out;
	}
	for (uint32_t i = 0; i + 1 < LEVELS; i++)
		bpfrt_nest_set_children(i, &progs[i + 1], 1);
	bpfrt_nest_set_children(LEVELS - 1, NULL, 0);

	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &stack_lo, &stack_sz);
	pthread_attr_destroy(&attr);
	if (n->usable_lo > (char *)stack_lo)
		stack_lo = n->usable_lo;
	/* paint from 1 KiB below this frame down to the bottom (+512) */
	start = here - 1024;
	paint_below(start, (char *)stack_lo + 512);
	n->err = bpfrt_prog_run(progs[0], n->jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP,
				0, 0, &n->r0);
	if (n->err)
		snprintf(n->msg, sizeof(n->msg), "%s", bpfrt_last_error());
	for (p = (char *)stack_lo + 512; p < start && *p == PAINT; p++)
		;
	n->used = (size_t)(start - p);
out:
	for (uint32_t i = 0; i < LEVELS; i++) {
		bpfrt_nest_set_children(i, NULL, 0);
		bpfrt_prog_free(progs[i]);
	}
	return NULL;
}

/* A thread whose stack has stack_size usable bytes (thread descriptor
 * and static TLS included, as with pthread_attr_setstacksize) above a
 * PROT_NONE guard: PTHREAD_STACK_MIN is 128 KiB on aarch64, so the
 * mapping may be bigger than the stack it gives. */
static void run_nest64(struct nest64 *n, size_t stack_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t min = (size_t)PTHREAD_STACK_MIN;
	size_t map_len = stack_size < min ? min : stack_size;
	size_t guard;
	pthread_attr_t attr;
	pthread_t t;
	char *map;

	map_len = (map_len + page - 1) & ~(page - 1);
	if (map_len == stack_size)
		map_len += page;
	guard = map_len - stack_size;
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	REQUIRE(map != MAP_FAILED);
	CHECK(!mprotect(map, guard, PROT_NONE));
	n->usable_lo = map + guard;
	pthread_attr_init(&attr);
	CHECK(!pthread_attr_setstack(&attr, map, map_len));
	REQUIRE(!pthread_create(&t, &attr, nest64_thread, n));
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	munmap(map, map_len);
}

BOTH_ENGINES(nest_64_levels_on_64k_thread)
{
	/* ASan's redzones and fake frames make every C frame bigger. The
	 * interpreter's C frames per level (bpfrt_prog_run, the kfunc, the
	 * interpreter's entry and loop: ~850 bytes on aarch64, ~780 on
	 * x86-64) add up to 54 KiB there, which with the thread's TLS and
	 * descriptor (~11 KiB) is more than 64 KiB: 72 KiB for it outside
	 * x86-64; the bound on what it uses below is the same. */
#if defined(__x86_64__)
	size_t interp_stack = 64u << 10;
#else
	size_t interp_stack = 72u << 10;
#endif
	size_t stack = TL_ASAN ? 1u << 20 : jit ? 64u << 10 : interp_stack;
	struct nest64 priv = { .jit = jit, .flags = jit ? BPFRT_F_PRIVATE_STACK : 0 };
	struct nest64 native = { .jit = jit, .flags = BPFRT_F_DISABLE_PRIVATE_STACK };

	run_nest64(&priv, stack);
	CHECK(priv.err == 0, "%d %s", priv.err, priv.msg);
	CHECK(priv.r0 == LEVELS, "r0 %llu", (unsigned long long)priv.r0);
	printf("# %s: 64 levels used %zu bytes of native stack with private stacks\n",
	       jit ? "jit" : "interp", priv.used);
	CHECK(priv.used > 0);
	if (!TL_ASAN)
		CHECK(priv.used < (jit ? 32u : 56u) << 10, "%zu bytes of native stack", priv.used);
	if (jit) {
		/* the same chain without private stacks: every nested run goes
		 * to a nest stack of its level (test_nest_stack.c has the
		 * details), so only level 0 touches the native stack */
		run_nest64(&native, 1u << 20);
		CHECK(native.err == 0 && native.r0 == LEVELS, "%d %s", native.err, native.msg);
		printf("# jit: %zu bytes without private stacks (nest stacks)\n", native.used);
		CHECK(native.used < priv.used, "%zu vs %zu", native.used, priv.used);
	}
}

/* ---- guard pages ----------------------------------------------------- */

/* 8 frames of 512 bytes (the deepest legal chain), each touching the
 * bottom of its frame; returns 7. */
static char deep_text[2048];

static const char *deep_prog_text(void)
{
	char *p = deep_text;

	if (deep_text[0])
		return deep_text;
	p += sprintf(p, "stxdw [%%r10-512], %%r1\ncall local f1\nexit\n");
	for (int k = 1; k < 7; k++)
		p += sprintf(p, "f%d:\nstxdw [%%r10-512], %%r1\nstxdw [%%r10-8], %%r1\n"
			     "call local f%d\nadd %%r0, 1\nexit\n", k, k + 1);
	sprintf(p, "f7:\nstxdw [%%r10-512], %%r1\nmov %%r0, 1\nexit\n");
	return deep_text;
}

static void guard_hit(bool jit, bool interp_run)
{
	struct bpfrt_privstack_info info = { .sz = sizeof(info) };
	struct bpfrt_prog *prog;
	uint64_t r0 = 0;
	int err;

	prog = load_asm("deep_prog", deep_prog_text(), jit, BPFRT_F_PRIVATE_STACK);
	REQUIRE(prog);
	CHECK(bpfrt_prog_stack_depth(prog) == 8 * 512, "%u", bpfrt_prog_stack_depth(prog));
	/* test hook: this thread's stack sized for 1 KiB, not the chain */
	bpfrt_privstack_test_set_size(1024);
	err = bpfrt_prog_run(prog, interp_run ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT, 0, 0, &r0);
	bpfrt_privstack_test_set_size(0);
	CHECK(err == -EFAULT, "err %d", err);
	CHECK(strstr(bpfrt_last_error(), "deep_prog") &&
	      strstr(bpfrt_last_error(), "private stack overflow"), "%s", bpfrt_last_error());
	CHECK(!bpfrt_prog_privstack_info(prog, &info));
	CHECK(info.faulted && info.faults == 1, "faults %llu", (unsigned long long)info.faults);
	CHECK(info.stack_size == bpfrt_prog_stack_depth(prog), "%u", info.stack_size);
	/* the host carries on, and so does the program on a stack of its size */
	bpfrt_prog_free(prog);
	prog = load_asm("deep_prog", deep_prog_text(), jit, BPFRT_F_PRIVATE_STACK);
	REQUIRE(prog);
	err = bpfrt_prog_run(prog, interp_run ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT, 0, 0, &r0);
	CHECK(err == 0 && r0 == 7, "err %d r0 %llu %s", err, (unsigned long long)r0,
	      bpfrt_last_error());
	/* a second run on the same stack after the abort gave it back */
	err = bpfrt_prog_run(prog, interp_run ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT, 0, 0, &r0);
	CHECK(err == 0 && r0 == 7);
	bpfrt_prog_free(prog);
}

TEST(guard_page_hit_jit) { guard_hit(true, false); }
TEST(guard_page_hit_interp) { guard_hit(false, true); }

TEST(guard_page_hit_nested)
{
	/* the faulting program runs two levels down: only it is unwound */
	int kfunc = bpfrt_nest_kfunc_register();
	struct bpfrt_prog *outer, *deep;
	uint64_t r0 = 0;

	REQUIRE(kfunc >= 0);
	outer = nest_prog(0, kfunc, true, BPFRT_F_PRIVATE_STACK);
	deep = load_asm("deep_prog", deep_prog_text(), true, BPFRT_F_PRIVATE_STACK);
	REQUIRE(outer && deep);
	CHECK(!bpfrt_nest_set_children(0, &deep, 1));
	bpfrt_privstack_test_set_size(1024);
	CHECK(!bpfrt_prog_run(outer, BPFRT_EXEC_JIT, 0, 0, &r0), "%s", bpfrt_last_error());
	bpfrt_privstack_test_set_size(0);
	CHECK(r0 == 1, "outer adds 1 to nothing: %llu", (unsigned long long)r0);
	CHECK(!bpfrt_nest_set_children(0, NULL, 0));
	bpfrt_prog_free(deep);
	bpfrt_prog_free(outer);
}

/* ---- chaining -------------------------------------------------------- */

static sigjmp_buf chain_env;
static volatile int host_handler_calls;

static void host_segv(int sig, siginfo_t *info, void *uc)
{
	host_handler_calls++;
	siglongjmp(chain_env, 1);
}

/* Runs in a fresh process (exec'd by the test below) so that the host's
 * handler is installed before bpfrt's, as in a host that sets up its own
 * SIGSEGV handling at start. */
TEST(chain_child)
{
	struct sigaction sa = { .sa_sigaction = host_segv, .sa_flags = SA_SIGINFO };
	char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct bpfrt_prog *prog;
	uint64_t r0 = 0;

	if (!getenv("PRIVSTACK_CHAIN_CHILD"))
		SKIP("runs in the child of foreign_faults_reach_the_host_handler");
	sigemptyset(&sa.sa_mask);
	REQUIRE(!sigaction(SIGSEGV, &sa, NULL));
	prog = load_asm("deep_prog", deep_prog_text(), true, BPFRT_F_PRIVATE_STACK);
	REQUIRE(prog);
	CHECK(!bpfrt_prog_run(prog, BPFRT_EXEC_JIT, 0, 0, &r0) && r0 == 7);
	/* a fault that is not ours: chained to the host's handler */
	if (!sigsetjmp(chain_env, 1))
		*(volatile char *)page = 1;
	CHECK(host_handler_calls == 1, "host handler calls %d", host_handler_calls);
	/* a guard hit: ours, the host's handler never sees it */
	bpfrt_prog_free(prog);
	bpfrt_privstack_test_set_size(1024);
	prog = load_asm("deep_prog", deep_prog_text(), true, BPFRT_F_PRIVATE_STACK);
	REQUIRE(prog);
	CHECK(bpfrt_prog_run(prog, BPFRT_EXEC_JIT, 0, 0, &r0) == -EFAULT);
	bpfrt_privstack_test_set_size(0);
	CHECK(host_handler_calls == 1, "host handler calls %d", host_handler_calls);
	bpfrt_prog_free(prog);
}

TEST(foreign_faults_reach_the_host_handler)
{
	char out[4096];
	int status = tl_run_self_with_env("PRIVSTACK_CHAIN_CHILD", "1", "chain_child", out,
					  sizeof(out));

	CHECK(tl_child_passed(status, out, "chain_child"), "status %#x: %s", status, out);
}

TEST(foreign_fault_default_action_kills)
{
	pid_t pid = fork();
	int status = 0;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct bpfrt_prog *prog;
		uint64_t r0;

		signal(SIGSEGV, SIG_DFL);
		prog = load_asm("deep_prog", deep_prog_text(), true, BPFRT_F_PRIVATE_STACK);
		if (!prog || bpfrt_prog_run(prog, BPFRT_EXEC_JIT, 0, 0, &r0))
			_exit(10);
		*(volatile char *)page = 1;
		_exit(11);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	if (TL_ASAN)
		CHECK(!WIFEXITED(status) || WEXITSTATUS(status) != 11, "status %#x", status);
	else
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x", status);
}

/* ---- thread exit ----------------------------------------------------- */

static void *short_thread(void *arg)
{
	struct bpfrt_prog *prog = arg;
	uint64_t r0 = 0;

	if (bpfrt_prog_run(prog, BPFRT_EXEC_DEFAULT, 0, 0, &r0) || r0 != 7)
		return (void *)1;
	return NULL;
}

TEST(stacks_freed_at_thread_exit)
{
	const int threads = TL_ASAN ? 2000 : 10000;
	struct bpfrt_privstack_stats before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	struct bpfrt_prog *prog = load_asm("deep_prog", deep_prog_text(), true, BPFRT_F_PRIVATE_STACK);
	int maps_before, maps_after, bad = 0;

	REQUIRE(prog);
	short_thread(prog); /* this thread's stack and the handler exist before */
	bpfrt_privstack_stats(&before);
	maps_before = tl_count_mappings();
	bad = tl_threads_one_by_one(threads, short_thread, prog);
	REQUIRE(bad >= 0, "pthread_create failed");
	bpfrt_privstack_stats(&after);
	maps_after = tl_count_mappings();
	CHECK(bad == 0, "%d runs failed", bad);
	CHECK(after.allocs - before.allocs == (uint64_t)threads, "%llu allocs",
	      (unsigned long long)(after.allocs - before.allocs));
	CHECK(after.live == before.live, "live %llu -> %llu", (unsigned long long)before.live,
	      (unsigned long long)after.live);
	CHECK(after.threads == before.threads);
	CHECK(maps_after <= maps_before + 8, "mappings %d -> %d", maps_before, maps_after);
	printf("# %d threads: stacks live %llu -> %llu, mappings %d -> %d\n", threads,
	       (unsigned long long)before.live, (unsigned long long)after.live, maps_before,
	       maps_after);
	bpfrt_prog_free(prog);
	bpfrt_privstack_stats(&after);
	CHECK(after.live == before.live - 1, "unload frees this thread's stack");
}

TEST(unload_frees_every_threads_stack)
{
	struct bpfrt_privstack_stats before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	struct bpfrt_privstack_info info = { .sz = sizeof(info) };
	struct bpfrt_prog *prog = load_asm("deep_prog", deep_prog_text(), true, BPFRT_F_PRIVATE_STACK);
	pthread_barrier_t *bar = NULL;

	(void)bar;
	REQUIRE(prog);
	bpfrt_privstack_stats(&before);
	short_thread(prog);
	CHECK(!bpfrt_prog_privstack_info(prog, &info) && info.thread_cnt == 1);
	bpfrt_prog_free(prog);
	bpfrt_privstack_stats(&after);
	CHECK(after.live == before.live, "%llu -> %llu", (unsigned long long)before.live,
	      (unsigned long long)after.live);
	/* the id is reused by the next program and starts empty */
	prog = load_asm("deep_prog", deep_prog_text(), false, BPFRT_F_PRIVATE_STACK);
	REQUIRE(prog);
	CHECK(!bpfrt_prog_privstack_info(prog, &info) && info.thread_cnt == 0);
	CHECK(short_thread(prog) == NULL);
	bpfrt_prog_free(prog);
}

/* ---- the verifier's stack bound on private stacks -------------------- */

/* Every route by which a verified program reaches its stack stays inside
 * the size its private stack was allocated for. A stack is sized so that
 * the deepest byte of the verified chain lies on the low guard page's
 * edge: a bound one byte too small faults at once (the run fails with
 * EFAULT, "private stack overflow"). Each program touches the deepest
 * byte a route lets it reach without touching it directly, so that only
 * the route's own accounting can cover it; each is verified (its frames
 * tightened to what the walk saw) and run three times in each engine. */

static uint64_t bound_ctx[64]; /* pt_regs-sized context; [0] is an offset */

static struct bpfrt_prog *load_verified_insns(const char *name, const struct bpf_insn *insns,
					      size_t cnt, bool jit, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = name, .jit = jit,
		   .verify = true, .kind = BPFRT_PROG_KPROBE,
		   .flags = flags | BPFRT_F_PRIVATE_STACK);
	struct bpfrt_prog *prog = NULL;
	int err = bpfrt_prog_load(insns, cnt, &opts, &prog);

	if (err)
		tl_fail(__FILE__, __LINE__, "load %s: %d %s", name, err, bpfrt_last_error());
	return prog;
}

static struct bpfrt_prog *load_verified(const char *name, const char *text, bool jit,
					uint32_t flags)
{
	struct bpf_insn *insns = NULL;
	struct bpfrt_prog *prog;
	size_t cnt = 0;

	if (bpfrt_asm(text, &insns, &cnt)) {
		tl_fail(__FILE__, __LINE__, "asm %s: %s", name, bpfrt_last_error());
		return NULL;
	}
	prog = load_verified_insns(name, insns, cnt, jit, flags);
	free(insns);
	return prog;
}

static void run_in_bounds(struct bpfrt_prog *prog, bool jit, uint64_t want, uint32_t min_depth)
{
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	struct bpfrt_privstack_info info = { .sz = sizeof(info) };

	if (!prog)
		return;
	CHECK(bpfrt_prog_stack_depth(prog) >= min_depth, "%s: verified depth %u < %u",
	      bpfrt_prog_name(prog), bpfrt_prog_stack_depth(prog), min_depth);
	for (int i = 0; i < 3; i++) {
		uint64_t r0 = 0;
		int err = bpfrt_prog_run(prog, mode, (uintptr_t)bound_ctx, sizeof(bound_ctx), &r0);

		CHECK(err == 0 && r0 == want, "%s run %d: err %d r0 %llu %s", bpfrt_prog_name(prog),
		      i, err, (unsigned long long)r0, bpfrt_last_error());
	}
	CHECK(!bpfrt_prog_privstack_info(prog, &info) && info.enabled && !info.faults,
	      "%s: faults %llu", bpfrt_prog_name(prog), (unsigned long long)info.faults);
	bpfrt_prog_free(prog);
}

/* A helper writing the stack (probe_read_kernel of 256 bytes from NULL
 * zeroes them): its range counts, not only the program's own accesses. */
BOTH_ENGINES(stack_bound_covers_helper_memory_arguments)
{
	run_in_bounds(load_verified("helper_mem",
		"mov %r1, %r10\nadd %r1, -256\nmov %r2, 256\nmov %r3, 0\ncall 113\n"
		"ldxdw %r0, [%r10-8]\nexit\n", jit, 0), jit, 0, 256);
}

/* A variable-offset store counts its lowest possible byte: ctx[0] = 0
 * makes it the deepest. */
BOTH_ENGINES(stack_bound_covers_variable_offsets)
{
	bound_ctx[0] = 0;
	run_in_bounds(load_verified("var_off",
		"ldxdw %r2, [%r1+0]\nand %r2, 248\nmov %r3, %r10\nadd %r3, -256\nadd %r3, %r2\n"
		"stdw [%r3], 7\nmov %r0, 7\nexit\n", jit, 0), jit, 7, 256);
}

/* A callee writing its caller's frame through a pointer counts for the
 * caller's frame (main touches its own stack only through f); the
 * callee's own frame lies below it. */
BOTH_ENGINES(stack_bound_covers_callee_access_to_caller_frames)
{
	run_in_bounds(load_verified("callee",
		"mov %r1, %r10\nadd %r1, -128\ncall local f\nexit\n"
		"f:\nstdw [%r1], 5\nstdw [%r10-64], 1\nldxdw %r0, [%r1]\nexit\n", jit, 0),
		jit, 5, 128 + 64);
}

/* A bpf_loop callback writing its caller's frame through its context
 * counts for the caller's frame. */
BOTH_ENGINES(stack_bound_covers_callback_access_to_caller_frames)
{
	static const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R1, 4),
		LDDW_FUNC(BPF_R2, 6),                   /* -> 8 */
		MOV64_REG(BPF_R3, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R3, -256),
		MOV64_IMM(BPF_R4, 0),
		CALL_HELPER(BPF_FUNC_loop),
		EXIT(),
		/* 8: cb(i, ctx) */
		ST(BPF_DW, BPF_R2, 0, 9),
		ST(BPF_DW, BPF_R10, -64, 1),
		MOV64_IMM(BPF_R0, 0),
		EXIT(),
	};

	run_in_bounds(load_verified_insns("callback", insns, ARRAY_LEN(insns), jit, 0), jit, 4,
		      256);
}

/* Host helpers that get a stack pointer without a size: one writing 256
 * bytes below it. */
#define HELPER_ANY_PTR    497
#define HELPER_STACK_PTR  496

static uint64_t write_below(uint64_t p, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	memset((char *)(uintptr_t)p - 256, 0x5a, 256);
	return 1;
}

/* BPFRT_ARG_ANYTHING takes a stack pointer only from a trusted program
 * (BPFRT_F_ALLOW_PTR_LEAKS), and then the helper may touch the whole
 * frame: the frame is kept whole. */
BOTH_ENGINES(stack_bound_keeps_frame_of_pointer_passed_as_value)
{
	static const struct bpfrt_helper h = {
		.name = "write_below_any", .fn = write_below, .ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_ANYTHING },
	};
	static const char text[] = "mov %r1, %r10\nadd %r1, -8\ncall 497\nexit\n";
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .verify = true,
		   .kind = BPFRT_PROG_KPROBE);
	struct bpf_insn *insns = NULL;
	struct bpfrt_prog *p = NULL;
	size_t cnt = 0;

	REQUIRE(!bpfrt_helper_register(HELPER_ANY_PTR, &h), "%s", bpfrt_last_error());
	REQUIRE(!bpfrt_asm(text, &insns, &cnt));
	CHECK(bpfrt_prog_load(insns, cnt, &opts, &p) == -EACCES &&
	      strstr(bpfrt_last_error(), "leaks addr into helper function"), "%s",
	      bpfrt_last_error());
	free(insns);
	run_in_bounds(load_verified("any_ptr", text, jit, BPFRT_F_ALLOW_PTR_LEAKS), jit, 1, 256 + 8);
	bpfrt_helper_unregister(HELPER_ANY_PTR);
}

/* BPFRT_ARG_PTR_TO_STACK_OR_NULL for a helper with no callback to hand
 * it to: the helper may touch the whole frame (the walk, which only saw
 * the pointer made, tightened the frame to nothing: the helper's write
 * then landed in the guard page). */
BOTH_ENGINES(stack_bound_keeps_frame_of_stack_pointer_argument)
{
	static const struct bpfrt_helper h = {
		.name = "write_below_stack", .fn = write_below, .ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_PTR_TO_STACK_OR_NULL },
	};

	REQUIRE(!bpfrt_helper_register(HELPER_STACK_PTR, &h), "%s", bpfrt_last_error());
	run_in_bounds(load_verified("stack_ptr", "mov %r1, %r10\nadd %r1, -8\ncall 496\nexit\n",
				    jit, 0), jit, 1, 256 + 8);
	bpfrt_helper_unregister(HELPER_STACK_PTR);
}

/* A tail call to a deeper program: the JIT target claims a private stack
 * of its own depth; the interpreter, which runs the target in the
 * caller's frame, refuses a target that does not fit (the call falls
 * through). Either way no byte past the caller's stack is touched. */
BOTH_ENGINES(tail_call_to_deeper_private_stack_program)
{
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	struct bpfrt_privstack_info ia_info = { .sz = sizeof(ia_info) }, ib_info = { .sz = sizeof(ib_info) };
	struct bpfrt_map *map = NULL;
	struct bpfrt_prog *a, *b;
	uint64_t ctx = 0, r0 = 0;

	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp_deep", 4, 4, 1, NULL, &map));
	{
		const struct bpf_insn ia[] = {
			ST(BPF_DW, BPF_R10, -16, 1),
			LDDW(BPF_R2, (uintptr_t)map),
			MOV64_IMM(BPF_R3, 0),
			CALL_HELPER(BPF_FUNC_tail_call),
			MOV64_IMM(BPF_R0, 1),
			EXIT(),
		};
		const struct bpf_insn ib[] = {
			ST(BPF_DW, BPF_R10, -512, 2),
			LDX(BPF_DW, BPF_R0, BPF_R10, -512),
			EXIT(),
		};

		a = load_priv("tail_shallow", ia, ARRAY_LEN(ia), jit);
		b = load_priv("tail_deep", ib, ARRAY_LEN(ib), jit);
	}
	REQUIRE(a && b);
	CHECK(bpfrt_prog_stack_depth(a) == 16 && bpfrt_prog_stack_depth(b) == 512, "%u %u",
	      bpfrt_prog_stack_depth(a), bpfrt_prog_stack_depth(b));
	REQUIRE(!bpfrt_map_update_prog(map, 0, b), "%s", bpfrt_last_error());
	for (int i = 0; i < 3; i++)
		CHECK(!bpfrt_prog_run(a, mode, (uintptr_t)&ctx, 0, &r0) && r0 == (jit ? 2u : 1u),
		      "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(!bpfrt_prog_privstack_info(a, &ia_info) && !ia_info.faults);
	CHECK(!bpfrt_prog_privstack_info(b, &ib_info) && !ib_info.faults);
	CHECK(bpfrt_prog_misses(a) == 0 && bpfrt_prog_misses(b) == 0);
	bpfrt_map_free(map);
	bpfrt_prog_free(a);
	bpfrt_prog_free(b);
}
