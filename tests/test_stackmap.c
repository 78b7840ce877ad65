/* BPF_MAP_TYPE_STACK_TRACE, bpf_get_stackid, bpf_get_stack and
 * bpf_map_lookup_percpu_elem: creation rules and user-space operations
 * with Linux's error codes (compared with the running kernel's answers
 * where it lets us create maps), the user stack a kprobe's program sees
 * on a known chain of frame-pointer functions (tests/host/stack_chain.c,
 * symbolized with the host symbol table) in the interpreter and the JIT,
 * every flag's answer in every engine, the checking interpreter included,
 * and concurrent stores and deletes. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"
#include "sym/symbols.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define DEPTH 4

long stack_chain_a(long x);
long stack_chain_b(long x);
long stack_chain_c(long x);
long stack_chain_leaf(long x);
long stack_walk_a(long x);
extern uint64_t stack_walk_ips[3];
extern uint32_t stack_walk_nr;

/* The function containing addr (a return address: the call before it). */
static const char *func_at(uint64_t addr)
{
	const struct bpfrt_sym *s;

	return bpfrt_sym_at((uintptr_t)addr, &s) ? "?" : s->name;
}

/* The frame-pointer walk from a C frame, on every architecture (each has
 * its own frame record layout): the callers' return addresses in order. */
TEST(walk_from_a_frame)
{
	CHECK_EQ(stack_walk_a(1), 6);
	REQUIRE(stack_walk_nr == 3, "%u frames", stack_walk_nr);
	CHECK_STR_EQ(func_at(stack_walk_ips[0] - 1), "stack_walk_b");
	CHECK_STR_EQ(func_at(stack_walk_ips[1] - 1), "stack_walk_a");
	CHECK_STR_EQ(func_at(stack_walk_ips[2] - 1), "walk_from_a_frame");
}

static int try_create(uint32_t key, uint32_t value, uint32_t max, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags);
	struct bpfrt_map *m = NULL;
	int err = bpfrt_map_create(BPF_MAP_TYPE_STACK_TRACE, "st", key, value, max, &o, &m);

	bpfrt_map_free(m);
	return err;
}

/* Linux's answer: 0, -errno, or 1 when the kernel cannot be asked. */
static int kernel_create(uint32_t key, uint32_t value, uint32_t max, uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "st", key, value, max, &o);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EPERM || errno == ENOSYS ? 1 : -errno;
}

static const struct create_case {
	const char *what;
	uint32_t key, value, max, flags;
	int want;
	bool differs;  /* bpfrt refuses on purpose (docs/MAPS.md) */
} create_cases[] = {
	{ "one frame", 4, 8, 16, 0, 0 },
	{ "127 frames", 4, 127 * 8, 16, 0, 0 },
	{ "128 frames", 4, 128 * 8, 16, 0, -EINVAL },
	{ "key 8", 8, 8, 16, 0, -EINVAL },
	{ "value 12", 4, 12, 16, 0, -EINVAL },
	{ "value 0", 4, 0, 16, 0, -EINVAL },
	{ "no entries", 4, 8, 0, 0, -EINVAL },
	{ "NO_PREALLOC", 4, 8, 16, BPF_F_NO_PREALLOC, -EINVAL },
	{ "RDONLY_PROG", 4, 8, 16, BPF_F_RDONLY_PROG, -EINVAL },
	{ "RDONLY", 4, 8, 16, BPF_F_RDONLY, 0 },
	{ "past 2^31 entries", 4, 8, (1u << 31) + 1, 0, -E2BIG },
	{ "STACK_BUILD_ID", 4, 32, 16, BPF_F_STACK_BUILD_ID, -EOPNOTSUPP, true },
};

TEST(creation_rules_as_linux)
{
	int compared = 0;

	for (size_t i = 0; i < ARRAY_LEN(create_cases); i++) {
		const struct create_case *c = &create_cases[i];
		int got = try_create(c->key, c->value, c->max, c->flags);
		int lx = kernel_create(c->key, c->value, c->max, c->flags);

		CHECK_EQ(got, c->want, "%s: %s", c->what, bpfrt_last_error());
		if (lx != 1 && !c->differs) {
			CHECK_EQ(lx, c->want, "%s: the kernel answers differently", c->what);
			compared++;
		}
	}
	CHECK(strstr(bpfrt_last_error(), "BPF_F_STACK_BUILD_ID"), "%s", bpfrt_last_error());
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2)): checked against the table "
		     "only");
}

/* What user space may do on an empty map, in bpfrt and in the kernel. */
TEST(user_side_on_empty_map)
{
	struct bpfrt_map *m = NULL;
	uint64_t v[DEPTH];
	uint32_t k = 0, next, big = 16;
	int fd;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_STACK_TRACE, "st", 4, sizeof(v), 16, NULL, &m) == 0);
	CHECK_EQ(bpfrt_map_lookup_elem(m, &k, v), -ENOENT);
	CHECK_EQ(bpfrt_map_lookup_elem(m, &big, v), -ENOENT);
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), -ENOENT);
	CHECK_EQ(bpfrt_map_delete_elem(m, &big), -E2BIG);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, v, BPF_ANY), -EINVAL);
	CHECK_EQ(bpfrt_map_get_next_key(m, NULL, &next), -ENOENT);
	CHECK_EQ(bpfrt_map_get_next_key(m, &k, &next), -ENOENT);
	/* not a command of this kind (bpfrt's answer for every kind Linux
	 * gives no lookup_and_delete) */
	CHECK_EQ(bpfrt_map_lookup_and_delete_elem(m, &k, v, 0), -EOPNOTSUPP);
	bpfrt_map_free(m);

	fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "st", 4, sizeof(v), 16, NULL);
	if (fd < 0)
		SKIP("no kernel stack trace map (not root): bpfrt checked alone");
	CHECK_EQ(bpf_map_lookup_elem(fd, &k, v), -ENOENT);
	CHECK_EQ(bpf_map_lookup_elem(fd, &big, v), -ENOENT);
	CHECK_EQ(bpf_map_delete_elem(fd, &k), -ENOENT);
	CHECK_EQ(bpf_map_delete_elem(fd, &big), -E2BIG);
	CHECK_EQ(bpf_map_update_elem(fd, &k, v, BPF_ANY), -EINVAL);
	CHECK_EQ(bpf_map_get_next_key(fd, NULL, &next), -ENOENT);
	close(fd);
}

/* What every engine answers to the flags, whatever the stack holds. */
static void check_flag_answers(const long *rc)
{
	CHECK_EQ(rc[0], -EFAULT, "kernel stack");
	CHECK_EQ(rc[1], -EINVAL, "unknown flag");
	CHECK_EQ(rc[2], -EFAULT, "skip 200");
	CHECK_EQ(rc[3], -EINVAL, "USER_BUILD_ID for get_stackid");
	CHECK_EQ(rc[10], -EINVAL, "get_stack size 12");
	CHECK_EQ(rc[11], 0, "get_stack kernel stack");
	CHECK_EQ(rc[12], 0, "get_stack kernel stack zeroes the buffer");
	CHECK_EQ(rc[13], -EINVAL, "get_stack USER_BUILD_ID");
	CHECK_EQ(rc[14], 0, "get_stack error zeroes the buffer");
	CHECK_EQ(rc[15], -EFAULT, "get_stack skip 200");
	CHECK_EQ(rc[16], -EFAULT, "get_stack kernel stack, skip 1");
	CHECK_EQ(rc[18], 0, "get_stack size 0");
	CHECK_EQ(rc[19], -EINVAL, "get_stackid unknown flag 13");
}

/* ---- the kprobe on the chain's leaf ---------------------------------------------- */

#if defined(__x86_64__)
struct leaf_run {
	struct bpfrt_object *obj;
	long *rc, *stack_id, *stack_len, *hits;
	uint64_t *stack_buf, *skip2_buf;
	struct bpfrt_map *stacks, *one;
};

static bool open_leaf(struct leaf_run *r, bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	size_t sz;

	memset(r, 0, sizeof(*r));
	if (bpfrt_object_open(tl_prog_path("stackmap.bpf.o"), NULL, &r->obj) ||
	    bpfrt_object_load(r->obj, &lo)) {
		CHECK(0, "stackmap.bpf.o: %s", bpfrt_last_error());
		return false;
	}
	r->rc = bpfrt_object_global(r->obj, "rc", &sz);
	r->stack_id = bpfrt_object_global(r->obj, "stack_id", &sz);
	r->stack_len = bpfrt_object_global(r->obj, "stack_len", &sz);
	r->hits = bpfrt_object_global(r->obj, "hits", &sz);
	r->stack_buf = bpfrt_object_global(r->obj, "stack_buf", &sz);
	r->skip2_buf = bpfrt_object_global(r->obj, "skip2_buf", &sz);
	r->stacks = bpfrt_object_find_map(r->obj, "stacks");
	r->one = bpfrt_object_find_map(r->obj, "one");
	CHECK(r->rc && r->stack_id && r->stack_len && r->hits && r->stack_buf && r->skip2_buf &&
	      r->stacks && r->one);
	return !tl_failed();
}


/* mode: where the probe runs its programs: int3 (a SIGTRAP handler, on
 * the alternate signal stack) or auto (jmp, on the thread's stack) */
static struct bpfrt_link *attach_leaf(struct leaf_run *r, enum bpfrt_kprobe_mode mode)
{
	BPFRT_OPTS(bpfrt_kprobe_opts, o, .mode = mode);
	struct bpfrt_link *l = NULL;
	int err = bpfrt_kprobe_attach(bpfrt_object_find_prog(r->obj, "on_leaf"), "stack_chain_leaf",
				      0, &o, &l);

	CHECK(!err, "attach: %s", bpfrt_last_error());
	return l;
}

static void leaf_stack(bool jit, enum bpfrt_kprobe_mode mode)
{
	struct leaf_run r;
	struct bpfrt_link *l = NULL;
	uint64_t trace[DEPTH] = { 0 }, next_trace[DEPTH];
	uint32_t id, next;

	if (!open_leaf(&r, jit))
		return;
	l = attach_leaf(&r, mode);
	REQUIRE(l);
	CHECK_EQ(stack_chain_a(1), 15);
	bpfrt_link_destroy(l);
	REQUIRE(*r.hits == 1);

	/* the probed instruction, then the callers' return addresses */
	REQUIRE(*r.stack_id >= 0 && *r.stack_id < 16, "stack id %ld", *r.stack_id);
	id = (uint32_t)*r.stack_id;
	REQUIRE(bpfrt_map_lookup_elem(r.stacks, &id, trace) == 0, "%s", bpfrt_last_error());
	CHECK_EQ(trace[0], (uint64_t)(uintptr_t)stack_chain_leaf);
	CHECK_STR_EQ(func_at(trace[1] - 1), "stack_chain_c");
	CHECK_STR_EQ(func_at(trace[2] - 1), "stack_chain_b");
	CHECK_STR_EQ(func_at(trace[3] - 1), "stack_chain_a");
	/* get_stack saw the same frames; skip 2 starts at b's */
	CHECK_EQ(*r.stack_len, DEPTH * 8);
	for (int i = 0; i < DEPTH; i++)
		CHECK_EQ(r.stack_buf[i], trace[i], "frame %d", i);
	CHECK_EQ(r.rc[17], 16);
	CHECK_EQ(r.skip2_buf[0], trace[2]);
	CHECK_EQ(r.skip2_buf[1], trace[3]);
	CHECK_EQ(r.rc[18], 0);
	check_flag_answers(r.rc);

	/* the one-slot map: -EEXIST on a collision; with REUSE_STACKID
	 * -ENOMEM, as Linux: its one bucket holds the first trace */
	CHECK_EQ(r.rc[4], 0, "first trace");
	CHECK_EQ(r.rc[5], -EEXIST, "another trace, same id");
	CHECK_EQ(r.rc[6], -EEXIST, "another trace, FAST_STACK_CMP (another hash)");
	CHECK_EQ(r.rc[7], -ENOMEM, "REUSE_STACKID, no free bucket");
	CHECK_EQ(r.rc[8], -EEXIST, "the first trace stays");
	CHECK_EQ(r.rc[9], 0, "the first trace again, FAST_STACK_CMP");
	id = 0;
	REQUIRE(bpfrt_map_lookup_elem(r.one, &id, next_trace) == 0);
	for (int i = 0; i < DEPTH; i++)
		CHECK_EQ(next_trace[i], trace[i], "frame %d", i);

	/* the same chain again: the same id, no new entry */
	id = (uint32_t)*r.stack_id;
	l = attach_leaf(&r, mode);
	REQUIRE(l);
	CHECK_EQ(stack_chain_a(1), 15);
	bpfrt_link_destroy(l);
	CHECK_EQ(*r.stack_id, (long)id);
	/* user space: get_next_key walks the occupied ids, delete empties one */
	CHECK_EQ(bpfrt_map_get_next_key(r.stacks, NULL, &next), 0);
	CHECK_EQ(next, id, "the only stored trace");
	CHECK_EQ(bpfrt_map_get_next_key(r.stacks, &next, &next), -ENOENT);
	CHECK_EQ(bpfrt_map_delete_elem(r.stacks, &id), 0);
	CHECK_EQ(bpfrt_map_delete_elem(r.stacks, &id), -ENOENT);
	CHECK_EQ(bpfrt_map_lookup_elem(r.stacks, &id, trace), -ENOENT);
	bpfrt_object_close(r.obj);
}

/* A kretprobe's: the return address into c, then b's and a's. */
static void leaf_ret_stack(bool jit)
{
	BPFRT_OPTS(bpfrt_kprobe_opts, o, .retprobe = true);
	struct bpfrt_link *l = NULL;
	struct leaf_run r;
	uint64_t *buf;
	long *len;

	if (!open_leaf(&r, jit))
		return;
	buf = bpfrt_object_global(r.obj, "ret_buf", &(size_t){ 0 });
	len = bpfrt_object_global(r.obj, "ret_len", &(size_t){ 0 });
	REQUIRE(buf && len);
	REQUIRE(!bpfrt_kprobe_attach(bpfrt_object_find_prog(r.obj, "on_leaf_ret"), "stack_chain_leaf",
				     0, &o, &l), "%s", bpfrt_last_error());
	CHECK_EQ(stack_chain_a(1), 15);
	bpfrt_link_destroy(l);
	CHECK_EQ(*len, 24);
	CHECK_STR_EQ(func_at(buf[0] - 1), "stack_chain_c");
	CHECK_STR_EQ(func_at(buf[1] - 1), "stack_chain_b");
	CHECK_STR_EQ(func_at(buf[2] - 1), "stack_chain_a");
	bpfrt_object_close(r.obj);
}

TEST(kretprobe_stack_interp) { leaf_ret_stack(false); }
TEST(kretprobe_stack_jit) { leaf_ret_stack(true); }
TEST(kprobe_stack_interp) { leaf_stack(false, BPFRT_KPROBE_AUTO); }
TEST(kprobe_stack_jit) { leaf_stack(true, BPFRT_KPROBE_AUTO); }
TEST(kprobe_int3_stack_interp) { leaf_stack(false, BPFRT_KPROBE_INT3); }
TEST(kprobe_int3_stack_jit) { leaf_stack(true, BPFRT_KPROBE_INT3); }

/* BPF_F_REUSE_STACKID and BPF_F_FAST_STACK_CMP on a collision, in a map
 * of two ids: after trace A is stored, traces of other entry points and
 * skips are stored (and deleted again) until one collides with A; each
 * of 11 does with chance 1/2. */
static long call_with(struct leaf_run *r, long (*entry)(long), uint64_t flags)
{
	uint64_t *f = bpfrt_object_global(r->obj, "two_flags", &(size_t){ 0 });
	long *rc = bpfrt_object_global(r->obj, "two_rc", &(size_t){ 0 });

	*f = flags;
	*rc = 1;
	entry(1);
	return *rc;
}

static void reuse_stackid(bool jit)
{
	long (*const entries[])(long) = { stack_chain_a, stack_chain_b, stack_chain_c };
	struct bpfrt_map *two;
	struct leaf_run r;
	struct bpfrt_link *l = NULL;
	uint64_t got[DEPTH], want[DEPTH];
	bool found = false;
	long id_a;

	/* The test needs a trace to repeat exactly from call to call; under
	 * ASan the frames above the known chain (fake stack frames of the
	 * test's own callers) differ between calls. The normal build checks. */
	if (TL_ASAN)
		SKIP("ASan's fake stack frames change the trace above the chain from call to call");
	if (!open_leaf(&r, jit))
		return;
	two = bpfrt_object_find_map(r.obj, "two");
	REQUIRE(two);
	REQUIRE(!bpfrt_prog_attach(bpfrt_object_find_prog(r.obj, "on_leaf"), NULL, &l), "%s",
		bpfrt_last_error());
	id_a = call_with(&r, stack_chain_a, 0);
	CHECK(id_a == 0 || id_a == 1, "trace A: %ld", id_a);
	for (size_t e = 0; e < ARRAY_LEN(entries) && !found && !tl_failed(); e++)
		for (uint64_t skip = e ? 0 : 1; skip < DEPTH && !found; skip++) {
			long rc = call_with(&r, entries[e], skip);
			uint32_t k = (uint32_t)rc;

			if (rc >= 0) {
				CHECK_NE(rc, id_a, "entry %zu skip %llu: another trace", e,
					 (unsigned long long)skip);
				CHECK_EQ(bpfrt_map_delete_elem(two, &k), 0);
				continue;
			}
			CHECK_EQ(rc, -EEXIST, "entry %zu skip %llu", e, (unsigned long long)skip);
			found = true;
			CHECK_EQ(call_with(&r, entries[e], skip | BPF_F_FAST_STACK_CMP), -EEXIST);
			CHECK_EQ(call_with(&r, entries[e], skip | BPF_F_REUSE_STACKID), id_a,
				 "REUSE_STACKID takes the id");
			k = (uint32_t)id_a;
			REQUIRE(bpfrt_map_lookup_elem(two, &k, got) == 0);
			CHECK_EQ(call_with(&r, entries[e], skip), id_a, "now stored");
			CHECK_EQ(call_with(&r, stack_chain_a, 0), -EEXIST, "A lost its id");
			CHECK_EQ(call_with(&r, stack_chain_a, BPF_F_REUSE_STACKID), id_a);
			REQUIRE(bpfrt_map_lookup_elem(two, &k, want) == 0);
			CHECK_NE(got[0] ^ got[1] ^ got[2] ^ got[3], want[0] ^ want[1] ^ want[2] ^ want[3],
				 "two different traces");
			CHECK_EQ(want[0], (uint64_t)(uintptr_t)stack_chain_leaf, "A is back");
		}
	bpfrt_link_destroy(l);
	CHECK(found, "none of 11 traces took trace A's id of 2 (chance 1 in 2048)");
	bpfrt_object_close(r.obj);
}

TEST(reuse_stackid_interp) { reuse_stackid(false); }
TEST(reuse_stackid_jit) { reuse_stackid(true); }
#endif

/* The flags' answers from a test run (the walk starts at the helper's
 * caller there), in every engine: the checking interpreter checks what
 * the helpers write. */
ALL_ENGINES(test_run_flags)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));
	struct bpfrt_object *obj = NULL;
	long *rc, *len;
	size_t sz;

	REQUIRE(bpfrt_object_open(tl_prog_path("stackmap.bpf.o"), NULL, &obj) == 0);
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	rc = bpfrt_object_global(obj, "rc", &sz);
	len = bpfrt_object_global(obj, "stack_len", &sz);
	REQUIRE(rc && len);
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "on_leaf"), &ro) == 0, "%s",
		bpfrt_last_error());
	check_flag_answers(rc);
	CHECK(*len >= 8 && *len <= DEPTH * 8 && *len % 8 == 0, "get_stack: %ld", *len);
	bpfrt_object_close(obj);
}

/* bpf_map_lookup_percpu_elem on the three per-CPU kinds. */
ALL_ENGINES(lookup_percpu_elem)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));
	static const char *const maps[] = { "pcpu_array", "pcpu_hash", "pcpu_lru" };
	int ncpu = bpfrt_num_possible_cpus();
	struct bpfrt_object *obj = NULL;
	uint64_t *vals = calloc((size_t)ncpu, 8), *sums, want = 0;
	long *missing, *past_end;
	uint32_t *nr, key = 0;
	size_t sz;

	REQUIRE(vals);
	REQUIRE(ncpu <= 64, "%d CPUs: the program sums 64 at most", ncpu);
	REQUIRE(bpfrt_object_open(tl_prog_path("stackmap.bpf.o"), NULL, &obj) == 0);
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	nr = bpfrt_object_global(obj, "nr_cpus", &sz);
	sums = bpfrt_object_global(obj, "sums", &sz);
	missing = bpfrt_object_global(obj, "missing", &sz);
	past_end = bpfrt_object_global(obj, "past_end", &sz);
	REQUIRE(nr && sums && missing && past_end);
	*nr = (uint32_t)ncpu;
	for (int c = 0; c < ncpu; c++) {
		vals[c] = 10 * (uint64_t)c + 1;
		want += vals[c];
	}
	for (size_t i = 0; i < ARRAY_LEN(maps); i++)
		REQUIRE(bpfrt_map_update_elem(bpfrt_object_find_map(obj, maps[i]), &key, vals,
					      BPF_ANY) == 0, "%s: %s", maps[i], bpfrt_last_error());
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "percpu"), &ro) == 0, "%s",
		bpfrt_last_error());
	for (size_t i = 0; i < ARRAY_LEN(maps); i++) {
		CHECK_EQ(sums[i], want, "%s: every CPU's value", maps[i]);
		CHECK_EQ(missing[i], 0, "%s: a missing key", maps[i]);
		CHECK_EQ(past_end[i], 0, "%s: cpu == nr_cpus", maps[i]);
	}
	free(vals);
	bpfrt_object_close(obj);
}

#if defined(__x86_64__)
/* Threads hitting the probe while user space reads and deletes the
 * stored trace: every lookup that finds it gets the whole chain. */
#define STORE_THREADS 3
#define STORE_CALLS 3000

static _Atomic bool store_stop;

static void *call_chain(void *arg)
{
	for (int i = 0; i < STORE_CALLS; i++)
		stack_chain_a(i);
	return NULL;
}

TEST(concurrent_store_lookup_delete)
{
	struct leaf_run r;
	struct bpfrt_link *l = NULL;
	pthread_t t[STORE_THREADS];
	uint64_t trace[DEPTH];
	int found = 0;

	if (!open_leaf(&r, true))
		return;
	REQUIRE(!bpfrt_prog_attach(bpfrt_object_find_prog(r.obj, "on_leaf"), NULL, &l), "%s",
		bpfrt_last_error());
	for (int i = 0; i < STORE_THREADS; i++)
		REQUIRE(pthread_create(&t[i], NULL, call_chain, NULL) == 0);
	for (int i = 0; i < 20000 && !store_stop; i++) {
		uint32_t id, next;

		if (bpfrt_map_get_next_key(r.stacks, NULL, &next))
			continue;
		id = next;
		if (bpfrt_map_lookup_elem(r.stacks, &id, trace) == 0) {
			found++;
			CHECK_EQ(trace[0], (uint64_t)(uintptr_t)stack_chain_leaf);
			if (strcmp(func_at(trace[3] - 1), "stack_chain_a")) {
				CHECK_STR_EQ(func_at(trace[3] - 1), "stack_chain_a");
				store_stop = true;
			}
		}
		bpfrt_map_delete_elem(r.stacks, &id);
	}
	for (int i = 0; i < STORE_THREADS; i++)
		pthread_join(t[i], NULL);
	bpfrt_link_destroy(l);
	CHECK_EQ(*r.hits, STORE_THREADS * STORE_CALLS);
	printf("# %d lookups found the trace while threads stored it\n", found);
	bpfrt_object_close(r.obj);
}
#endif
