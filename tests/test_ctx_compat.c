/* A program reached from another program runs with the context its
 * caller gives, so it must have been verified for that context. Tail
 * calls: a prog array takes only programs of its owner's kind whose reach
 * fits the owner's context, a program referencing an array loads only if
 * it can give that context, and then needs it at attach
 * (maps/prog_array.c). The nest kfunc bpfrt_run_children gives children a
 * number, no context: a verified child must read none. Objects:
 * tests/progs/ctx_compat*.bpf.c, raw_tp programs of the host tracepoints
 * below. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "prog_support.h"
#include "bpfrt/attach.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/map.h"
#include "bpfrt/tracepoint.h"
#include "maps/map.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

BPFRT_DECLARE_TRACEPOINT(cc_one, long a);
BPFRT_DEFINE_TRACEPOINT(cc_one);
BPFRT_DECLARE_TRACEPOINT(cc_two, long a, long b);
BPFRT_DEFINE_TRACEPOINT(cc_two);
BPFRT_DECLARE_TRACEPOINT(cc_six, long a, long b, long c, long d, long e, long f);
BPFRT_DEFINE_TRACEPOINT(cc_six);

__attribute__((noinline)) long cc_probed(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static bool names(const char *a, const char *b, const char *c)
{
	const char *e = bpfrt_last_error();

	return strstr(e, a) && strstr(e, b) && strstr(e, c);
}

static struct bpfrt_object *load_compat(bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, o, .jit = jit);

	return load_object("ctx_compat.bpf.o", &o);
}

static struct bpfrt_prog *prog_of(struct bpfrt_object *obj, const char *name)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, name);

	CHECK(p, "no program %s", name);
	return p;
}

/* dispatch (raw_tp of cc_two, 16 bytes) owns jmp. read_arg5, verified for
 * cc_six, reads 48: in the slot it would read past the 2 arguments
 * dispatch's callers give it. */
BOTH_ENGINES(slot_refuses_a_target_reading_past_the_owners_context)
{
	struct bpfrt_object *obj = load_compat(jit);
	struct bpfrt_map *jmp;
	struct bpfrt_prog *dispatch, *arg1, *arg5;
	uint64_t args[2] = { 7, 35 }, r0 = 0;
	int err;

	if (!obj)
		return;
	jmp = bpfrt_object_find_map(obj, "jmp");
	dispatch = prog_of(obj, "dispatch");
	arg1 = prog_of(obj, "read_arg1");
	arg5 = prog_of(obj, "read_arg5");
	REQUIRE(jmp && dispatch && arg1 && arg5);
	CHECK(bpfrt_prog_ctx_access(arg5) == 48, "%u", bpfrt_prog_ctx_access(arg5));
	err = bpfrt_map_update_prog(jmp, 0, arg5);
	CHECK(err == -EINVAL, "raw_tp reading args[5] into a cc_two array: %d", err);
	CHECK(names("read_arg5", "'jmp'", "dispatch") && strstr(bpfrt_last_error(), "48") &&
	      strstr(bpfrt_last_error(), "16"), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_array_get(jmp, 0) == NULL, "the refused program is not in the slot");
	/* the slot was not taken: dispatch falls through */
	CHECK(!bpfrt_prog_run(dispatch, BPFRT_EXEC_DEFAULT, (uintptr_t)args, sizeof(args), &r0) && r0 == 1000,
	      "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	/* args[1] of cc_two fits */
	CHECK(!bpfrt_map_update_prog(jmp, 0, arg1), "%s", bpfrt_last_error());
	CHECK(!bpfrt_prog_run(dispatch, BPFRT_EXEC_DEFAULT, (uintptr_t)args, sizeof(args), &r0) && r0 == 35,
	      "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(bpfrt_map_update_prog(jmp, 1, arg5) == -EINVAL, "nor in another slot");
	bpfrt_object_close(obj);
}

TEST(slot_refuses_programs_of_another_context)
{
	struct bpfrt_object *obj = load_compat(false);
	struct bpfrt_map *jmp;
	struct bpfrt_prog *tp, *kp;
	int err;

	if (!obj)
		return;
	jmp = bpfrt_object_find_map(obj, "jmp");
	tp = prog_of(obj, "tp_read_arg0");
	kp = prog_of(obj, "kprobe_read_ax");
	REQUIRE(jmp && tp && kp);
	/* a tp context starts with the trace entry; a pt_regs is no args[] */
	err = bpfrt_map_update_prog(jmp, 0, tp);
	CHECK(err == -EINVAL, "tp program in a raw_tp array: %d", err);
	CHECK(names("tp_read_arg0", "'jmp'", "dispatch") && strstr(bpfrt_last_error(), "raw_tp") &&
	      strstr(bpfrt_last_error(), "is tp"), "%s", bpfrt_last_error());
	err = bpfrt_map_update_prog(jmp, 0, kp);
	CHECK(err == -EINVAL, "kprobe program in a raw_tp array: %d", err);
	CHECK(names("kprobe_read_ax", "'jmp'", "is kprobe"), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_array_get(jmp, 0) == NULL);
	bpfrt_object_close(obj);
}

/* dispatch reads no context itself, but its targets may read all 16 bytes
 * of cc_two: attaching it where fewer are given is refused. */
TEST(tail_caller_needs_the_owners_context_at_attach)
{
	struct bpfrt_object *obj = load_compat(false);
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_RAW_TRACEPOINT,
		   .target = "cc_one");
	struct bpfrt_prog *dispatch;
	struct bpfrt_link *l = NULL;
	int err;

	if (!obj)
		return;
	dispatch = prog_of(obj, "dispatch");
	REQUIRE(dispatch);
	CHECK(bpfrt_prog_ctx_access(dispatch) == 16, "reach %u", bpfrt_prog_ctx_access(dispatch));
	err = bpfrt_prog_attach(dispatch, &o, &l);
	CHECK(err == -EINVAL && !l, "dispatch on the 1-argument cc_one: %d", err);
	CHECK(names("dispatch", "cc_one", "16"), "%s", bpfrt_last_error());
	o.target = NULL;
	err = bpfrt_prog_attach(dispatch, &o, &l);
	CHECK(!err && l, "dispatch on its own cc_two: %d %s", err, bpfrt_last_error());
	BPFRT_TRACEPOINT(cc_two, 1, 2);
	bpfrt_link_destroy(l);
	bpfrt_object_close(obj);
}

static void load_fails(const char *file, const char *a, const char *b, const char *c)
{
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(tl_prog_path(file), NULL, &obj);

	REQUIRE(!err, "open %s: %s", file, bpfrt_last_error());
	err = bpfrt_object_load(obj, NULL);
	CHECK(err == -EINVAL, "%s loaded: %d", file, err);
	CHECK(names(a, b, c), "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

TEST(referencing_an_array_of_another_kind_fails_to_load)
{
	/* raw_dispatch owns jmp; kprobe_dispatch would pass a pt_regs */
	load_fails("ctx_compat_kind.bpf.o", "kprobe_dispatch", "'jmp'", "raw_dispatch");
}

TEST(referencing_an_array_with_a_smaller_context_fails_to_load)
{
	/* six_dispatch owns jmp (targets may read 48 bytes); two_dispatch
	 * has 16 */
	load_fails("ctx_compat_size.bpf.o", "two_dispatch", "'jmp'", "six_dispatch");
}

/* ---- owners set by the first slot update (raw instruction programs) ---- */

/* r0 = ctx[off / 8], verified as kind with ctx_size (UNSPEC) */
static struct bpfrt_prog *reader(const char *name, enum bpfrt_prog_kind kind, int16_t off,
				 uint32_t ctx_size)
{
	struct bpf_insn insns[] = {
		LDX(BPF_DW, 0, 1, off),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = name, .verify = true,
		   .kind = kind, .ctx_size = ctx_size);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, 2, &o, &p), "%s: %s", name, bpfrt_last_error());
	return p;
}

TEST(first_slot_program_owns_the_array)
{
	struct bpfrt_map *map = NULL;
	struct bpfrt_prog *small = reader("small", BPFRT_PROG_UNSPEC, 8, 16);
	struct bpfrt_prog *fits = reader("fits", BPFRT_PROG_UNSPEC, 8, 64);
	struct bpfrt_prog *far = reader("far", BPFRT_PROG_UNSPEC, 24, 64);
	struct bpfrt_prog *sys = reader("sys", BPFRT_PROG_SYSCALL, 0, 64);
	int err;

	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 4, NULL, &map));
	REQUIRE(small && fits && far && sys);
	/* small (16 bytes of context) owns it */
	CHECK(!bpfrt_map_update_prog(map, 0, small), "%s", bpfrt_last_error());
	CHECK(!bpfrt_map_update_prog(map, 1, fits), "reads 16: %s", bpfrt_last_error());
	err = bpfrt_map_update_prog(map, 2, far);
	CHECK(err == -EINVAL && names("far", "'jmp'", "small"), "reads 32: %d %s", err,
	      bpfrt_last_error());
	err = bpfrt_map_update_prog(map, 2, sys);
	CHECK(err == -EINVAL && names("sys", "syscall", "small"), "a syscall program: %d %s", err,
	      bpfrt_last_error());
	/* an empty array keeps its owner */
	CHECK(!bpfrt_map_delete_prog(map, 0) && !bpfrt_map_delete_prog(map, 1));
	CHECK(bpfrt_map_update_prog(map, 2, far) == -EINVAL);
	bpfrt_map_free(map);
	bpfrt_prog_free(small);
	bpfrt_prog_free(fits);
	bpfrt_prog_free(far);
	bpfrt_prog_free(sys);
}

/* A program of an object that is opened but not loaded has no verdict
 * yet: in a slot it would be taken for a trusted one (no context check)
 * and keep its place when its load then verifies it as reading 48 bytes
 * behind dispatch's 16. A slot takes loaded programs only. */
TEST(slot_refuses_a_program_not_loaded_yet)
{
	struct bpfrt_object *obj = load_compat(false), *later = NULL;
	struct bpfrt_map *jmp;
	struct bpfrt_prog *arg5;
	int err;

	if (!obj)
		return;
	jmp = bpfrt_object_find_map(obj, "jmp");
	REQUIRE(jmp);
	REQUIRE(!bpfrt_object_open(tl_prog_path("ctx_compat.bpf.o"), NULL, &later), "%s",
		bpfrt_last_error());
	arg5 = prog_of(later, "read_arg5");
	REQUIRE(arg5);
	err = bpfrt_map_update_prog(jmp, 0, arg5);
	CHECK(err == -EINVAL && names("read_arg5", "'jmp'", "not loaded"), "%d %s", err,
	      bpfrt_last_error());
	CHECK(bpfrt_prog_array_get(jmp, 0) == NULL, "the unloaded program is in the slot");
	bpfrt_map_delete_prog(jmp, 0);
	/* loaded, it is what it was verified as: refused by its reach */
	REQUIRE(!bpfrt_object_load(later, &(struct bpfrt_object_load_opts){ .sz = sizeof(
		struct bpfrt_object_load_opts) }), "%s", bpfrt_last_error());
	CHECK(bpfrt_map_update_prog(jmp, 0, arg5) == -EINVAL && strstr(bpfrt_last_error(), "48"),
	      "%s", bpfrt_last_error());
	bpfrt_object_close(later);
	bpfrt_object_close(obj);
}

/* Before its load is complete a program has no verdict: a run of it
 * would run unverified code (here: with no code at all). */
TEST(a_program_not_loaded_does_not_run)
{
	struct bpfrt_object *later = NULL;
	struct bpfrt_prog *arg1;
	uint64_t args[2] = { 1, 2 }, r0 = 0;

	REQUIRE(!bpfrt_object_open(tl_prog_path("ctx_compat.bpf.o"), NULL, &later), "%s",
		bpfrt_last_error());
	arg1 = prog_of(later, "read_arg1");
	REQUIRE(arg1);
	CHECK(bpfrt_prog_run(arg1, BPFRT_EXEC_INTERP, (uintptr_t)args, sizeof(args), &r0) ==
	      -EINVAL && names("read_arg1", "not loaded", "prog_run"), "%s", bpfrt_last_error());
	REQUIRE(!bpfrt_object_load(later, NULL), "%s", bpfrt_last_error());
	CHECK(!bpfrt_prog_run(arg1, BPFRT_EXEC_INTERP, (uintptr_t)args, sizeof(args), &r0) &&
	      r0 == 2, "%s", bpfrt_last_error());
	bpfrt_object_close(later);
}

/* Nor while its load is verifying it: verified and the reach are set at
 * the end, and a slot filled in between took read_arg5 for trusted. A
 * thread offers it to dispatch's array for the whole load (a race: 3000
 * loads caught it on the old code within the first run). */
struct offer {
	struct bpfrt_map *jmp;
	struct bpfrt_prog *prog;
	_Atomic bool done;
	_Atomic int taken;
};

static void *offer_slot(void *arg)
{
	struct offer *o = arg;

	while (!atomic_load(&o->done))
		if (!bpfrt_map_update_prog(o->jmp, 0, o->prog))
			atomic_fetch_add(&o->taken, 1);
	return NULL;
}

TEST(slot_refuses_a_program_being_loaded)
{
	struct bpfrt_object *obj = load_compat(false);
	int taken = 0;

	if (!obj)
		return;
	for (int round = 0; round < 3000 && !taken; round++) {
		struct offer o = { .jmp = bpfrt_object_find_map(obj, "jmp") };
		struct bpfrt_object *later = NULL;
		pthread_t t;

		REQUIRE(o.jmp);
		REQUIRE(!bpfrt_object_open(tl_prog_path("ctx_compat.bpf.o"), NULL, &later));
		o.prog = prog_of(later, "read_arg5");
		REQUIRE(o.prog && !pthread_create(&t, NULL, offer_slot, &o));
		CHECK(!bpfrt_object_load(later, NULL), "%s", bpfrt_last_error());
		atomic_store(&o.done, true);
		pthread_join(t, NULL);
		taken = atomic_load(&o.taken);
		bpfrt_map_delete_prog(o.jmp, 0);
		bpfrt_object_close(later);
	}
	CHECK(!taken, "read_arg5 (48 bytes of context) went into a 16-byte array %d times "
	      "while it was loaded", taken);
	bpfrt_object_close(obj);
}

TEST(trusted_owner_gives_verified_targets_no_context)
{
	static const struct bpf_insn ret3[] = { MOV64_IMM(0, 3), EXIT() };
	BPFRT_OPTS(bpfrt_prog_load_opts, to, .name = "owner");
	BPFRT_OPTS(bpfrt_prog_load_opts, vo, .name = "blind", .verify = true);
	struct bpfrt_prog *trusted = NULL, *blind = NULL;
	struct bpfrt_prog *looks = reader("looks", BPFRT_PROG_UNSPEC, 0, 8);
	struct bpfrt_prog *rawtp = reader("rawtp", BPFRT_PROG_RAW_TRACEPOINT, 0, 0);
	struct bpfrt_map *map = NULL;
	int err;

	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 4, NULL, &map));
	REQUIRE(!bpfrt_prog_load(ret3, 2, &to, &trusted));
	/* verified, reading no context */
	REQUIRE(!bpfrt_prog_load(ret3, 2, &vo, &blind), "%s", bpfrt_last_error());
	REQUIRE(looks && rawtp);
	CHECK(!bpfrt_map_update_prog(map, 0, trusted), "%s", bpfrt_last_error());
	CHECK(!bpfrt_map_update_prog(map, 1, trusted));
	CHECK(!bpfrt_map_update_prog(map, 2, blind), "reads nothing: %s", bpfrt_last_error());
	err = bpfrt_map_update_prog(map, 3, looks);
	CHECK(err == -EINVAL && names("looks", "'jmp'", "owner (trusted)"), "%d %s", err,
	      bpfrt_last_error());
	err = bpfrt_map_update_prog(map, 3, rawtp);
	CHECK(err == -EINVAL && names("rawtp", "is raw_tp", "unspec"), "%d %s", err,
	      bpfrt_last_error());
	bpfrt_map_free(map);
	bpfrt_prog_free(trusted);
	bpfrt_prog_free(blind);
	bpfrt_prog_free(looks);
	bpfrt_prog_free(rawtp);
}

/* ---- nest kfunc children ------------------------------------------------- */

#define NEST_LIST 200   /* a list no other test uses */

static uint64_t ctx_sink(uint64_t ctx, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return 0;
}

/* r0 = bpfrt_run_children(NEST_LIST, 9), trusted */
static struct bpfrt_prog *nest_parent(int nest, bool jit)
{
	const struct bpf_insn insns[] = {
		MOV64_IMM(1, NEST_LIST),
		MOV64_IMM(2, 9),
		CALL_HELPER(nest),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "parent", .jit = jit);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, 4, &o, &p), "%s", bpfrt_last_error());
	return p;
}

static struct bpfrt_prog *verified_raw_tp(const char *name, const struct bpf_insn *insns,
					  size_t n, bool jit)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = name, .jit = jit,
		   .kind = BPFRT_PROG_RAW_TRACEPOINT);
	struct bpfrt_prog *p = NULL;

	CHECK(!bpfrt_prog_load(insns, n, &o, &p), "%s: %s", name, bpfrt_last_error());
	return p;
}

/* Refused by name, and never run: the list stays as it was. */
static void child_refused(struct bpfrt_prog *child, const char *why)
{
	int err;

	if (!child)
		return;
	err = bpfrt_nest_set_children(NEST_LIST, &child, 1);
	CHECK(err == -EINVAL, "%s: %d", why, err);
	CHECK(names(bpfrt_prog_name(child), "bytes of context", "raw_tp"), "%s: %s", why,
	      bpfrt_last_error());
	if (!err)
		bpfrt_nest_set_children(NEST_LIST, NULL, 0);
}

TEST(nest_child_reading_a_context_is_refused)
{
	int nest = bpfrt_nest_kfunc_register();
	struct bpfrt_prog *arg3 = reader("reads_arg3", BPFRT_PROG_RAW_TRACEPOINT, 24, 0);

	REQUIRE(nest >= 0, "%s", bpfrt_last_error());
	/* it would read ctx[3] at the address 9 */
	child_refused(arg3, "raw_tp child reading ctx[3]");
	bpfrt_prog_free(arg3);
}

TEST(nest_child_handing_its_context_on_is_refused)
{
	static const struct bpfrt_helper sink = {
		.name = "cc_ctx_sink", .fn = ctx_sink, .args = { BPFRT_ARG_PTR_TO_CTX },
	};
	int nest = bpfrt_nest_kfunc_register();
	int kid = bpfrt_kfunc_id(sink.name) >= 0 ? bpfrt_kfunc_id(sink.name)
						  : bpfrt_kfunc_register(sink.name, &sink);
	struct bpfrt_object *obj = load_compat(false);
	const struct bpf_insn to_kfunc[] = { CALL_HELPER(kid), MOV64_IMM(0, 0), EXIT() };
	struct bpfrt_prog *via_kfunc, *dispatch;

	REQUIRE(nest >= 0 && kid >= 0, "%s", bpfrt_last_error());
	/* a host kfunc taking the context may read all of it */
	via_kfunc = verified_raw_tp("via_kfunc", to_kfunc, 3, false);
	if (via_kfunc)
		CHECK(bpfrt_prog_ctx_access(via_kfunc) == 8 * BPFRT_TP_MAX_ARGS, "reach %u",
		      bpfrt_prog_ctx_access(via_kfunc));
	child_refused(via_kfunc, "raw_tp child passing ctx to a kfunc");
	/* reads none itself, but its tail-call targets may read 16 bytes */
	if (obj) {
		dispatch = prog_of(obj, "dispatch");
		child_refused(dispatch, "raw_tp child tail-calling with its ctx");
	}
	bpfrt_prog_free(via_kfunc);
	bpfrt_object_close(obj);
}

BOTH_ENGINES(nest_children_without_context_run)
{
	static const struct bpf_insn five[] = { MOV64_IMM(0, 5), EXIT() };
	static const struct bpf_insn ret0[] = { MOV64_IMM(0, 0), EXIT() };
	int nest = bpfrt_nest_kfunc_register();
	struct bpfrt_prog *children[2] = { verified_raw_tp("blind", five, 2, jit), NULL };
	struct bpfrt_prog *parent = nest_parent(nest, jit);
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "trusted", .jit = jit);
	uint64_t r0 = 0;

	REQUIRE(nest >= 0 && children[0] && parent);
	/* a trusted child (the host vouches for it) and a verified one
	 * that reads no context */
	REQUIRE(!bpfrt_prog_load(ret0, 2, &o, &children[1]), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_ctx_access(children[0]) == 0);
	REQUIRE(!bpfrt_nest_set_children(NEST_LIST, children, 2), "%s", bpfrt_last_error());
	CHECK(!bpfrt_prog_run(parent, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, 0, 0, &r0) &&
	      r0 == 5, "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(!bpfrt_nest_set_children(NEST_LIST, NULL, 0));
	bpfrt_prog_free(parent);
	bpfrt_prog_free(children[0]);
	bpfrt_prog_free(children[1]);
}

/* ---- a program in use outlives bpfrt_prog_free ---------------------------- */

/* Freed by its caller while a prog array slot holds it: the slot (what a
 * tail call runs) keeps it alive until the slot lets it go (under ASan,
 * a run after the free would be a use after free). */
BOTH_ENGINES(program_freed_in_a_slot_stays_until_the_slot_drops_it)
{
	static const struct bpf_insn seven[] = { MOV64_IMM(0, 7), EXIT() };
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = "in_slot", .jit = jit);
	struct bpfrt_map *map = NULL;
	struct bpfrt_prog *p = NULL;
	uint64_t r0 = 0;

	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "held", 4, 4, 2, NULL, &map));
	REQUIRE(!bpfrt_prog_load(seven, 2, &o, &p), "%s", bpfrt_last_error());
	REQUIRE(!bpfrt_map_update_prog(map, 0, p), "%s", bpfrt_last_error());
	REQUIRE(!bpfrt_map_update_prog(map, 1, p), "%s", bpfrt_last_error());
	bpfrt_prog_free(p);
	p = bpfrt_prog_array_get(map, 0);
	REQUIRE(p);
	CHECK(!bpfrt_prog_run(p, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, 0, 0, &r0) && r0 == 7,
	      "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(!bpfrt_map_delete_prog(map, 0));
	/* slot 1 still holds it */
	p = bpfrt_prog_array_get(map, 1);
	REQUIRE(p);
	CHECK(!strcmp(bpfrt_prog_name(p), "in_slot"));
	CHECK(!bpfrt_prog_run(p, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, 0, 0, &r0) && r0 == 7);
	bpfrt_map_free(map); /* the last use: the program goes with it */
}

static long link_runs;

static uint64_t count_run(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	link_runs++;
	return 0;
}

/* Freed while attached: the link keeps it, and it runs until the link
 * is destroyed. */
BOTH_ENGINES(program_freed_while_attached_runs_until_the_link_goes)
{
	static const struct bpfrt_helper counter = {
		.name = "cc_count_run", .fn = count_run, .ret = BPFRT_RET_INTEGER,
	};
	const int id = 509; /* a helper id no other test of this file uses */
	struct bpf_insn insns[] = { CALL_HELPER(id), MOV64_IMM(0, 0), EXIT() };
	struct bpfrt_prog *p;
	BPFRT_OPTS(bpfrt_attach_opts, ao, .target = "cc_two");
	struct bpfrt_link *l = NULL;

	REQUIRE(!bpfrt_helper_register(id, &counter), "%s", bpfrt_last_error());
	p = verified_raw_tp("attached", insns, 3, jit);
	REQUIRE(p);
	REQUIRE(!bpfrt_prog_attach(p, &ao, &l), "%s", bpfrt_last_error());
	bpfrt_prog_free(p);
	link_runs = 0;
	BPFRT_TRACEPOINT(cc_two, 1, 2);
	CHECK(link_runs == 1, "runs %ld", link_runs);
	CHECK(!strcmp(bpfrt_prog_name(bpfrt_link_prog(l)), "attached"));
	bpfrt_link_destroy(l); /* the last use */
	BPFRT_TRACEPOINT(cc_two, 1, 2);
	CHECK(link_runs == 1, "runs %ld after the link went", link_runs);
}

/* Freed while a nest list names it: the list keeps it until replaced. */
BOTH_ENGINES(nest_child_freed_runs_until_the_list_is_replaced)
{
	static const struct bpf_insn five[] = { MOV64_IMM(0, 5), EXIT() };
	int nest = bpfrt_nest_kfunc_register();
	struct bpfrt_prog *child = verified_raw_tp("child", five, 2, jit);
	struct bpfrt_prog *parent = nest_parent(nest, jit);
	uint64_t r0 = 0;

	REQUIRE(nest >= 0 && child && parent);
	REQUIRE(!bpfrt_nest_set_children(NEST_LIST, &child, 1), "%s", bpfrt_last_error());
	bpfrt_prog_free(child);
	CHECK(!bpfrt_prog_run(parent, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, 0, 0, &r0) &&
	      r0 == 5, "r0 %llu %s", (unsigned long long)r0, bpfrt_last_error());
	CHECK(!bpfrt_nest_set_children(NEST_LIST, NULL, 0)); /* the last use */
	bpfrt_prog_free(parent);
}
