/* Nested JIT runs of programs without a private stack run on per-thread
 * nest stacks: 64 levels through the nest kfunc on a thread
 * whose native stack is 64 KiB (native stack measured by painting, each
 * level's frame address seen by a kfunc), results equal to the
 * interpreter's, the level limit, attached runs fired inside a run, the
 * thunk itself, stacks freed at thread exit; and a thread's first run of
 * a program in a kprobe's SIGTRAP handler allocating without malloc and
 * without waiting for a lock the interrupted code holds. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"
#include "bpfrt/tracepoint.h"
#include "stack/privstack.h"
#include "stack/stack_switch.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOSAN __attribute__((noinline, no_sanitize_address))

/* ---- kfuncs the programs call ----------------------------------------- */

#define MAX_LEVELS 300

/* Frame address of the kfunc each level called (one chain at a time). */
static uintptr_t level_sp[MAX_LEVELS];

static uint64_t k_note_sp(uint64_t level, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	if (level < MAX_LEVELS)
		level_sp[level] = (uintptr_t)__builtin_frame_address(0);
	return 0;
}

static struct bpfrt_prog *direct_target;

/* Runs direct_target from inside a program: that run is nested. */
static uint64_t k_run_direct(uint64_t arg, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t r0 = 0;

	if (bpfrt_prog_run(direct_target, BPFRT_EXEC_DEFAULT, arg, 0, &r0))
		return 1000000;
	return r0;
}

static int kfunc(const char *name, bpfrt_helper_fn fn)
{
	const struct bpfrt_helper proto = {
		.name = name, .fn = fn, .args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	int id = bpfrt_kfunc_id(name);

	return id >= 0 ? id : bpfrt_kfunc_register(name, &proto);
}

static int note_id(void)
{
	return kfunc("nest_test_note_sp", k_note_sp);
}

/* ---- a chain of levels ------------------------------------------------ */

/* Level L: keeps its arg (and 256 bytes of frame), notes its kfunc's
 * frame, asks list L (level L + 1) with arg * 3 + L, and returns
 * child * 7 + (arg ^ L). */
static const char level_fmt[] =
	"mov %%r6, %%r1\n"
	"stxdw [%%r10-8], %%r6\n"
	"stxdw [%%r10-256], %%r6\n"
	"mov %%r1, %u\n"
	"call %d\n"
	"mov %%r1, %u\n"
	"mov %%r2, %%r6\n"
	"mul %%r2, 3\n"
	"add %%r2, %u\n"
	"call %d\n"
	"ldxdw %%r1, [%%r10-256]\n"
	"xor %%r1, %u\n"
	"mul %%r0, 7\n"
	"add %%r0, %%r1\n"
	"exit\n";

static uint64_t level_ref(uint32_t level, uint32_t levels, uint64_t arg)
{
	uint64_t child = level + 1 < levels ? level_ref(level + 1, levels, arg * 3 + level) : 0;

	return child * 7 + (arg ^ level);
}

static struct bpfrt_prog *level_prog(uint32_t level, bool jit, uint32_t flags)
{
	char text[sizeof(level_fmt) + 64], name[32];
	int nest = bpfrt_nest_kfunc_register(), note = note_id();

	if (nest < 0 || note < 0) {
		tl_fail(__FILE__, __LINE__, "kfuncs: %s", bpfrt_last_error());
		return NULL;
	}
	snprintf(text, sizeof(text), level_fmt, level, note, level, level, nest, level);
	snprintf(name, sizeof(name), "level%u", level);
	return load_asm(name, text, jit, flags);
}

/* Loads levels programs, level i asking list i for level i + 1. */
static bool chain_load(struct bpfrt_prog **progs, uint32_t levels, bool jit, uint32_t flags)
{
	for (uint32_t i = 0; i < levels; i++)
		if (!(progs[i] = level_prog(i, jit, flags)))
			return false;
	for (uint32_t i = 0; i + 1 < levels; i++)
		if (bpfrt_nest_set_children(i, &progs[i + 1], 1))
			return false;
	return !bpfrt_nest_set_children(levels - 1, NULL, 0);
}

static void chain_free(struct bpfrt_prog **progs, uint32_t levels)
{
	for (uint32_t i = 0; i < levels && i < BPFRT_NEST_MAX_LISTS; i++)
		bpfrt_nest_set_children(i, NULL, 0);
	for (uint32_t i = 0; i < levels; i++)
		bpfrt_prog_free(progs[i]);
}

/* ---- threads with a small native stack ---------------------------------- */

struct small_thread {
	size_t size;            /* usable bytes above the guard page */
	char *map;
	size_t map_len;
	pthread_t thread;
};

/* A thread on a stack of exactly size bytes (glibc puts its descriptor
 * and static TLS at the top of it) above a PROT_NONE page: an overflow
 * faults instead of running into other memory. */
static bool small_thread_start(struct small_thread *st, void *(*fn)(void *), void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	int err;

	st->map_len = st->size + page;
	st->map = mmap(NULL, st->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (st->map == MAP_FAILED)
		return false;
	mprotect(st->map, page, PROT_NONE);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, st->map + page, st->size);
	err = pthread_create(&st->thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err)
		munmap(st->map, st->map_len);
	return !err;
}

static void small_thread_join(struct small_thread *st)
{
	pthread_join(st->thread, NULL);
	munmap(st->map, st->map_len);
}

static void thread_stack(char **lo, char **hi)
{
	pthread_attr_t attr;
	size_t size;
	void *p;

	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &p, &size);
	pthread_attr_destroy(&attr);
	*lo = p;
	*hi = (char *)p + size;
}

#define PAINT 0x5a

static NOSAN void paint_below(char *from, char *to)
{
	volatile char *p = to;

	while (p < (volatile char *)from)
		*p++ = PAINT;
}

static NOSAN size_t painted_used(char *from, char *to)
{
	volatile char *p = to;

	while (p < (volatile char *)from && *p == PAINT)
		p++;
	return (size_t)(from - (char *)p);
}

/* ---- 64 levels on a 64 KiB thread --------------------------------------- */

#define LEVELS 64

struct nest64 {
	struct bpfrt_prog **progs;
	int err;
	uint64_t r0;
	size_t used;                    /* native bytes touched below the paint start */
	uint64_t nest_new;              /* nest stacks this thread mapped */
	int off_native;                 /* levels 1.. whose kfunc ran off the native stack */
	int distinct;                   /* pairs of levels >= 1 on different stacks */
	bool level0_native;
	char msg[256];
};

static void *nest64_thread(void *arg)
{
	struct nest64 *n = arg;
	struct bpfrt_privstack_stats before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	char *lo, *hi, *here = __builtin_frame_address(0), *start;

	thread_stack(&lo, &hi);
	memset(level_sp, 0, sizeof(level_sp));
	bpfrt_privstack_stats(&before);
	start = here - 1024;
	paint_below(start, lo + 512);
	n->err = bpfrt_prog_run(n->progs[0], BPFRT_EXEC_JIT, 5, 0, &n->r0);
	n->used = painted_used(start, lo + 512);
	if (n->err)
		snprintf(n->msg, sizeof(n->msg), "%s", bpfrt_last_error());
	bpfrt_privstack_stats(&after);
	n->nest_new = after.nest_stacks - before.nest_stacks;
	n->level0_native = level_sp[0] >= (uintptr_t)lo && level_sp[0] < (uintptr_t)hi;
	for (int i = 1; i < LEVELS; i++) {
		n->off_native += level_sp[i] && (level_sp[i] < (uintptr_t)lo ||
						 level_sp[i] >= (uintptr_t)hi);
		for (int j = 1; j < i; j++) {
			uintptr_t d = level_sp[i] > level_sp[j] ? level_sp[i] - level_sp[j]
							      : level_sp[j] - level_sp[i];

			n->distinct += d >= BPFRT_NEST_STACK_SIZE / 2;
		}
	}
	return NULL;
}

TEST(nest_64_levels_without_private_stacks_on_64k_thread)
{
	struct bpfrt_prog *jit[LEVELS] = { 0 }, *interp[LEVELS] = { 0 };
	struct nest64 n = { .progs = jit };
	struct small_thread st = { .size = 64u << 10 };
	struct bpfrt_privstack_stats s0 = { .sz = sizeof(s0) }, s1 = { .sz = sizeof(s1) };
	uint64_t ref = level_ref(0, LEVELS, 5), r0 = 0;
	int err;

	REQUIRE(chain_load(jit, LEVELS, true, BPFRT_F_DISABLE_PRIVATE_STACK));
	for (int i = 0; i < LEVELS; i++) {
		struct bpfrt_privstack_info info = { .sz = sizeof(info) };

		CHECK(!bpfrt_prog_privstack_info(jit[i], &info) && !info.enabled);
	}
	bpfrt_privstack_stats(&s0);
	REQUIRE(small_thread_start(&st, nest64_thread, &n));
	small_thread_join(&st);
	bpfrt_privstack_stats(&s1);
	CHECK(n.err == 0, "%d %s", n.err, n.msg);
	CHECK(n.r0 == ref, "jit %#llx, expected %#llx", (unsigned long long)n.r0,
	      (unsigned long long)ref);
	printf("# 64 levels without private stacks: %zu bytes of the 64 KiB native stack, "
	       "%llu nest stacks\n", n.used, (unsigned long long)n.nest_new);
	/* level 0 on the native stack, every nested level on its own stack */
	CHECK(n.level0_native, "level 0 ran off the native stack");
	CHECK(n.off_native == LEVELS - 1, "%d of %d levels off the native stack", n.off_native,
	      LEVELS - 1);
	CHECK(n.distinct == (LEVELS - 1) * (LEVELS - 2) / 2, "%d pairs on distinct stacks",
	      n.distinct);
	CHECK(n.nest_new == LEVELS - 1, "%llu nest stacks", (unsigned long long)n.nest_new);
	CHECK(s1.nest_stacks == s0.nest_stacks, "thread exit left %llu of %llu",
	      (unsigned long long)s1.nest_stacks, (unsigned long long)s0.nest_stacks);
	/* one level of C and BPF frames: ASan's frames are several times
	 * bigger, but 63 more levels would be far more */
	CHECK(n.used > 0);
	CHECK(n.used < (TL_ASAN ? 16u : 8u) << 10, "%zu bytes of native stack", n.used);

	/* the interpreter computes the same */
	chain_free(jit, LEVELS);
	REQUIRE(chain_load(interp, LEVELS, false, BPFRT_F_DISABLE_PRIVATE_STACK));
	err = bpfrt_prog_run(interp[0], BPFRT_EXEC_INTERP, 5, 0, &r0);
	CHECK(!err && r0 == ref, "interp %d %#llx, expected %#llx", err, (unsigned long long)r0,
	      (unsigned long long)ref);
	chain_free(interp, LEVELS);
}

/* ---- the level limit ---------------------------------------------------- */

#define DEEP (BPFRT_NEST_STACK_LEVELS + 1)

struct deep_run {
	struct bpfrt_prog *top;
	int err;
	uint64_t r0;
	char msg[256];
};

static void *deep_thread(void *arg)
{
	struct deep_run *d = arg;

	d->err = bpfrt_prog_run(d->top, BPFRT_EXEC_JIT, 0, 0, &d->r0);
	snprintf(d->msg, sizeof(d->msg), "%s", bpfrt_last_error());
	return NULL;
}

/* A program running 257 levels: the direct run it starts from a kfunc is
 * nested (level 0), lists 0..255 take it to level 256, one too many. */
TEST(nest_levels_are_limited)
{
	static const char leaf_text[] = "mov %r0, 1\nexit\n";
	static const char inner_fmt[] =
		"mov %%r1, %u\nmov %%r2, 0\ncall %d\nadd %%r0, 1\nexit\n";
	static const char top_fmt[] = "mov %%r1, 0\nmov %%r2, 0\ncall %d\nexit\n";
	struct bpfrt_prog *progs[DEEP] = { 0 }, *top;
	int nest = bpfrt_nest_kfunc_register(), direct = kfunc("nest_test_run_direct", k_run_direct);
	struct deep_run d = { 0 };
	char text[256];
	pthread_t t;

	REQUIRE(nest >= 0 && direct >= 0, "%s", bpfrt_last_error());
	_Static_assert(DEEP - 1 == BPFRT_NEST_MAX_LISTS, "one list per level");
	for (uint32_t i = 0; i + 1 < DEEP; i++) {
		snprintf(text, sizeof(text), inner_fmt, i, nest);
		REQUIRE((progs[i] = load_asm("deep", text, true, BPFRT_F_DISABLE_PRIVATE_STACK)));
	}
	REQUIRE((progs[DEEP - 1] = load_asm("deep_last", leaf_text, true,
					    BPFRT_F_DISABLE_PRIVATE_STACK)));
	for (uint32_t i = 0; i + 1 < DEEP; i++)
		REQUIRE(!bpfrt_nest_set_children(i, &progs[i + 1], 1), "%s", bpfrt_last_error());
	snprintf(text, sizeof(text), top_fmt, direct);
	REQUIRE((top = load_asm("deep_top", text, true, BPFRT_F_DISABLE_PRIVATE_STACK)));
	direct_target = progs[0];
	d.top = top;
	/* in a thread of its own, so its 256 nest stacks go at its exit */
	REQUIRE(!pthread_create(&t, NULL, deep_thread, &d));
	pthread_join(t, NULL);
	CHECK(d.err == 0, "%d %s", d.err, d.msg);
	/* levels 0..255 add one each; the run at level 256 was skipped */
	CHECK(d.r0 == DEEP - 1, "r0 %llu", (unsigned long long)d.r0);
	CHECK(bpfrt_prog_misses(progs[DEEP - 1]) == 1, "misses %llu",
	      (unsigned long long)bpfrt_prog_misses(progs[DEEP - 1]));
	CHECK(strstr(d.msg, "deep_last: nested more than 256 levels deep"), "%s", d.msg);
	/* with one level less everything runs */
	direct_target = progs[1];
	memset(&d, 0, sizeof(d));
	d.top = top;
	REQUIRE(!pthread_create(&t, NULL, deep_thread, &d));
	pthread_join(t, NULL);
	CHECK(d.err == 0 && d.r0 == DEEP - 1, "%d %llu", d.err, (unsigned long long)d.r0);
	CHECK(bpfrt_prog_misses(progs[DEEP - 1]) == 1);
	direct_target = NULL;
	bpfrt_prog_free(top);
	chain_free(progs, DEEP);
}

/* ---- attached runs fired inside a run ----------------------------------- */

BPFRT_DECLARE_TRACEPOINT(nest_tp_outer, uint64_t x);
BPFRT_DEFINE_TRACEPOINT(nest_tp_outer);
BPFRT_DECLARE_TRACEPOINT(nest_tp_inner, uint64_t x);
BPFRT_DEFINE_TRACEPOINT(nest_tp_inner);

static __attribute__((noinline)) void fire_outer(uint64_t x)
{
	BPFRT_TRACEPOINT(nest_tp_outer, x);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void fire_inner(uint64_t x)
{
	BPFRT_TRACEPOINT(nest_tp_inner, x);
	__asm__ volatile("" ::: "memory");
}

static uint64_t k_fire_inner(uint64_t x, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	fire_inner(x);
	return 0;
}

static struct bpfrt_link *raw_tp_attach(struct bpfrt_prog *prog, const char *tp)
{
	BPFRT_OPTS(bpfrt_attach_opts, o, .kind = BPFRT_PROG_RAW_TRACEPOINT,
		   .target = tp);
	struct bpfrt_link *l = NULL;
	int err = bpfrt_prog_attach(prog, &o, &l);

	CHECK(!err && l, "attach %s: %d %s", tp, err, bpfrt_last_error());
	return l;
}

static void attached_nested(uint32_t inner_flags, bool switched)
{
	static const char outer_fmt[] =
		"ldxdw %%r6, [%%r1+0]\nmov %%r1, 0\nmov %%r2, 0\ncall %d\n"
		"mov %%r1, %%r6\nmov %%r2, 0\ncall %d\n"
		"mov %%r0, 0\nexit\n";
	static const char inner_fmt[] = "mov %%r1, 1\nmov %%r2, 0\ncall %d\nmov %%r0, 0\nexit\n";
	int note = note_id(), fire = kfunc("nest_test_fire_inner", k_fire_inner);
	struct bpfrt_prog *outer, *inner;
	struct bpfrt_link *lo, *li;
	char text[256], *slo, *shi;
	bool inner_native;

	REQUIRE(note >= 0 && fire >= 0, "%s", bpfrt_last_error());
	snprintf(text, sizeof(text), outer_fmt, note, fire);
	REQUIRE((outer = load_asm("tp_outer", text, true, BPFRT_F_DISABLE_PRIVATE_STACK)));
	snprintf(text, sizeof(text), inner_fmt, note);
	inner = load_asm("tp_inner", text, true, inner_flags);
	REQUIRE(inner);
	lo = raw_tp_attach(outer, "nest_tp_outer");
	li = raw_tp_attach(inner, "nest_tp_inner");
	memset(level_sp, 0, sizeof(level_sp));
	fire_outer(7);
	thread_stack(&slo, &shi);
	CHECK(level_sp[0] >= (uintptr_t)slo && level_sp[0] < (uintptr_t)shi,
	      "the outer run is not on the native stack");
	CHECK(level_sp[1], "the inner program did not run");
	inner_native = level_sp[1] >= (uintptr_t)slo && level_sp[1] < (uintptr_t)shi;
	CHECK(inner_native != switched, "inner run %s the native stack",
	      inner_native ? "on" : "off");
	CHECK(bpfrt_prog_misses(inner) == 0 && bpfrt_prog_aborts(inner) == 0);
	bpfrt_link_destroy(li);
	bpfrt_link_destroy(lo);
	bpfrt_prog_free(inner);
	bpfrt_prog_free(outer);
}

/* Without a private stack the inner run switches; with one its BPF frame
 * is private and the rest stays where it was. */
TEST(attached_run_inside_attached_run_switches)
{
	attached_nested(BPFRT_F_DISABLE_PRIVATE_STACK, true);
	attached_nested(BPFRT_F_PRIVATE_STACK, false);
}

/* ---- the thunk ---------------------------------------------------------- */

static uint64_t on_stack_fn(uint64_t a, uint64_t b)
{
	return a * 1000 + b;
}

static uintptr_t seen_sp;

static uint64_t on_stack_sp(uint64_t a, uint64_t b)
{
	char local[64];

	/* a local, not the frame address: on riscv64 that is the sp at entry */
	seen_sp = (uintptr_t)local;
	memset(local, (int)a, sizeof(local));
	__asm__ volatile("" :: "r"(local) : "memory");
	return local[5] + b;
}

TEST(call_on_stack_runs_on_the_given_stack)
{
	size_t size = 64u << 10;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *top;

	REQUIRE(stack != MAP_FAILED);
	top = stack + size;
	CHECK(bpfrt_run_on_stack(on_stack_fn, 3, 4, top, size) == 3004);
	CHECK(bpfrt_run_on_stack(on_stack_sp, 2, 40, top, size) == 42);
	CHECK(seen_sp < (uintptr_t)top && seen_sp > (uintptr_t)top - 4096, "sp %#lx, top %p",
	      (unsigned long)seen_sp, top);
	munmap(stack, size);
}

/* ---- thread exit -------------------------------------------------------- */

struct pair {
	struct bpfrt_prog *parent, *child;
};

/* Sequential threads: the counters move by this thread's stacks only. */
static void *short_thread(void *arg)
{
	struct pair *p = arg;
	struct bpfrt_privstack_stats s0 = { .sz = sizeof(s0) }, s1 = { .sz = sizeof(s1) };
	uint64_t r0 = 0;

	bpfrt_privstack_stats(&s0);
	if (bpfrt_prog_run(p->parent, BPFRT_EXEC_JIT, 1, 0, &r0) || r0 != level_ref(0, 2, 1))
		return (void *)1;
	bpfrt_privstack_stats(&s1);
	/* the child's run mapped this thread's first level, if it had none */
	if (s1.nest_stacks - s0.nest_stacks > 1)
		return (void *)2;
	return s1.nest_stacks > 0 ? NULL : (void *)3;
}

TEST(nest_stacks_freed_at_thread_exit)
{
	const int threads = TL_ASAN ? 2000 : 10000;
	struct bpfrt_prog *progs[2] = { 0 };
	struct bpfrt_privstack_stats before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	struct pair p;
	int maps_before, maps_after, bad = 0;

	REQUIRE(chain_load(progs, 2, true, BPFRT_F_DISABLE_PRIVATE_STACK));
	p = (struct pair){ progs[0], progs[1] };
	bpfrt_privstack_stats(&before);
	maps_before = tl_count_mappings();
	bad = tl_threads_one_by_one(threads, short_thread, &p);
	REQUIRE(bad >= 0, "pthread_create failed");
	bpfrt_privstack_stats(&after);
	maps_after = tl_count_mappings();
	CHECK(bad == 0, "%d runs failed", bad);
	CHECK(after.nest_stacks == before.nest_stacks, "nest stacks %llu -> %llu",
	      (unsigned long long)before.nest_stacks, (unsigned long long)after.nest_stacks);
	CHECK(after.nest_bytes == before.nest_bytes);
	CHECK(after.threads == before.threads, "thread records %llu -> %llu",
	      (unsigned long long)before.threads, (unsigned long long)after.threads);
	CHECK(maps_after <= maps_before + 8, "mappings %d -> %d", maps_before, maps_after);
	printf("# %d threads: nest stacks %llu -> %llu, mappings %d -> %d\n", threads,
	       (unsigned long long)before.nest_stacks, (unsigned long long)after.nest_stacks,
	       maps_before, maps_after);
	/* on this thread: mapped once, kept for later runs */
	CHECK(short_thread(&p) == NULL);
	bpfrt_privstack_stats(&before);
	CHECK(short_thread(&p) == NULL);
	bpfrt_privstack_stats(&after);
	CHECK(after.nest_stacks == before.nest_stacks && after.allocs == before.allocs);
	chain_free(progs, 2);
}

/* ---- first runs in a kprobe's signal handler ---------------------------- */

#if defined(__x86_64__)
/* The probed host function: plain instructions the int3 path can run
 * out of line. */
uint64_t nest_kp_target(uint64_t x);
__asm__(".text\n"
	".globl nest_kp_target\n"
	".type nest_kp_target, @function\n"
	"nest_kp_target:\n"
	"	mov %rdi, %rax\n"
	"	add $1, %rax\n"
	"	ret\n"
	".size nest_kp_target, .-nest_kp_target\n");

/* Allocations made while the thread is inside the probed function, i.e.
 * by the SIGTRAP handler (trap dispatch, the program's first run, its
 * stack, the nested child's nest stack). Counted by the malloc family
 * below, which wraps glibc's (not under ASan, which owns malloc). */
static __thread bool in_target;
static _Atomic uint64_t handler_mallocs, kp_hits;

#if !TL_ASAN
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n)
{
	if (in_target)
		atomic_fetch_add(&handler_mallocs, 1);
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (in_target)
		atomic_fetch_add(&handler_mallocs, 1);
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (in_target)
		atomic_fetch_add(&handler_mallocs, 1);
	return __libc_realloc(p, n);
}
#endif

static __attribute__((noinline)) uint64_t call_target(uint64_t x)
{
	uint64_t r;

	in_target = true;
	atomic_signal_fence(memory_order_seq_cst);
	r = nest_kp_target(x);
	atomic_signal_fence(memory_order_seq_cst);
	in_target = false;
	return r;
}

static uint64_t k_hit(uint64_t x, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	atomic_fetch_add(&kp_hits, 1);
	return x;
}

struct kp_setup {
	struct bpfrt_prog *probe, *child;
	struct bpfrt_link *link;
	uint32_t list;
};

/* The probe program has a private stack and runs a child without one
 * (nested: a nest stack): both first allocated in the handler. */
static bool kp_setup(struct kp_setup *k)
{
	static const char probe_fmt[] =
		"stdw [%%r10-128], 1\nmov %%r1, %u\nmov %%r2, 3\ncall %d\nexit\n";
	static const char child_fmt[] = "mov %%r1, 2\nmov %%r2, 0\ncall %d\nexit\n";
	BPFRT_OPTS(bpfrt_kprobe_opts, o, .mode = BPFRT_KPROBE_INT3);
	int nest = bpfrt_nest_kfunc_register(), hit = kfunc("nest_test_hit", k_hit);
	char text[256];
	int err;

	k->list = BPFRT_NEST_MAX_LISTS - 1;
	if (nest < 0 || hit < 0)
		return false;
	snprintf(text, sizeof(text), child_fmt, hit);
	k->child = load_asm("kp_child", text, true, BPFRT_F_DISABLE_PRIVATE_STACK);
	snprintf(text, sizeof(text), probe_fmt, k->list, nest);
	k->probe = load_asm("kp_probe", text, true, BPFRT_F_PRIVATE_STACK);
	if (!k->child || !k->probe || bpfrt_nest_set_children(k->list, &k->child, 1))
		return false;
	err = bpfrt_kprobe_attach(k->probe, NULL, (uintptr_t)nest_kp_target, &o, &k->link);
	CHECK(!err, "kprobe: %d %s", err, bpfrt_last_error());
	return !err;
}

static void kp_teardown(struct kp_setup *k)
{
	bpfrt_link_destroy(k->link);
	bpfrt_nest_set_children(k->list, NULL, 0);
	bpfrt_prog_free(k->probe);
	bpfrt_prog_free(k->child);
}

static void *kp_fresh_thread(void *arg)
{
	for (int i = 0; i < 3; i++)
		if (call_target(41) != 42)
			return (void *)1;
	return NULL;
}

static atomic_bool churn_stop;

/* Takes the stack-list lock from another thread all the time: programs
 * with private stacks loaded, run (a stack each) and unloaded. */
static void *lock_churn(void *arg)
{
	static const char text[] = "stdw [%r10-128], 1\nmov %r0, 0\nexit\n";
	uint64_t r0;

	while (!atomic_load(&churn_stop)) {
		struct bpfrt_prog *p = load_asm("churn", text, true, BPFRT_F_PRIVATE_STACK);
		struct bpfrt_privstack_info info = { .sz = sizeof(info) };
		void *junk = malloc(100);

		if (!p)
			break;
		bpfrt_prog_run(p, BPFRT_EXEC_JIT, 0, 0, &r0);
		bpfrt_prog_privstack_info(p, &info);
		free(junk);
		bpfrt_prog_free(p);
	}
	return NULL;
}

TEST(kprobe_first_runs_in_signal_handler)
{
	const int threads = TL_ASAN ? 100 : 400;
	struct bpfrt_privstack_stats before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	struct kp_setup k = { 0 };
	pthread_t churn;
	int bad = 0;

	REQUIRE(kp_setup(&k));
	bpfrt_privstack_stats(&before);
	atomic_store(&kp_hits, 0);
	atomic_store(&handler_mallocs, 0);
	atomic_store(&churn_stop, false);
	REQUIRE(!pthread_create(&churn, NULL, lock_churn, NULL));
	/* a deadlock ends the test binary (SIGALRM) instead of hanging it */
	alarm(120);
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		void *ret;

		REQUIRE(!pthread_create(&t, NULL, kp_fresh_thread, NULL));
		pthread_join(t, &ret);
		bad += ret != NULL;
	}
	atomic_store(&churn_stop, true);
	pthread_join(churn, NULL);
	alarm(0);
	bpfrt_privstack_stats(&after);
	CHECK(bad == 0, "%d threads saw a wrong result", bad);
	/* every call ran the probe and its child: nothing skipped */
	CHECK(atomic_load(&kp_hits) == (uint64_t)threads * 3, "hits %llu of %d",
	      (unsigned long long)atomic_load(&kp_hits), threads * 3);
	CHECK(bpfrt_prog_misses(k.probe) == 0 && bpfrt_prog_aborts(k.probe) == 0,
	      "misses %llu aborts %llu", (unsigned long long)bpfrt_prog_misses(k.probe),
	      (unsigned long long)bpfrt_prog_aborts(k.probe));
	if (!TL_ASAN)
		CHECK(atomic_load(&handler_mallocs) == 0, "%llu allocations in the handler",
		      (unsigned long long)atomic_load(&handler_mallocs));
	CHECK(after.nest_stacks == before.nest_stacks && after.threads == before.threads,
	      "nest stacks %llu -> %llu, threads %llu -> %llu",
	      (unsigned long long)before.nest_stacks, (unsigned long long)after.nest_stacks,
	      (unsigned long long)before.threads, (unsigned long long)after.threads);
	kp_teardown(&k);
}

static uint64_t locked_result;

static void call_target_locked(void *arg)
{
	locked_result = call_target(9);
}

static void *kp_locked_thread(void *arg)
{
	struct kp_setup *k = arg;
	uint64_t misses = bpfrt_prog_misses(k->probe), hits = atomic_load(&kp_hits);

	/* the handler's first run needs the lock this thread holds: skipped
	 * and counted, not waited for */
	bpfrt_privstack_test_locked(call_target_locked, NULL);
	if (locked_result != 10 || bpfrt_prog_misses(k->probe) != misses + 1 ||
	    atomic_load(&kp_hits) != hits)
		return (void *)1;
	/* outside the lock the next call runs it */
	if (call_target(9) != 10 || atomic_load(&kp_hits) != hits + 1)
		return (void *)2;
	return NULL;
}

TEST(kprobe_first_run_inside_the_lock_is_skipped)
{
	struct kp_setup k = { 0 };
	pthread_t t;
	void *ret = NULL;

	REQUIRE(kp_setup(&k));
	alarm(60);
	REQUIRE(!pthread_create(&t, NULL, kp_locked_thread, &k));
	pthread_join(t, &ret);
	alarm(0);
	CHECK(ret == NULL, "step %ld failed", (long)(intptr_t)ret);
	kp_teardown(&k);
}
#else
TEST(kprobe_first_runs_in_signal_handler)
{
	SKIP("kprobes are x86-64 only");
}

TEST(kprobe_first_run_inside_the_lock_is_skipped)
{
	SKIP("kprobes are x86-64 only");
}
#endif
