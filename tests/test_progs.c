/* BPF C programs built by clang (tests/progs/NAME.bpf.c), loaded from their
 * ELF objects and run in the interpreter and the JIT: every map kind,
 * every Linux helper, globals from both sides, subprograms, tail calls,
 * bpf_loop and host kfuncs. Each case runs once per engine. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define JIT_TAIL_SKIP "JIT tail calls not emitted yet (bpf_tail_call returned -EOPNOTSUPP)"

static struct bpfrt_object *open_obj(const char *file)
{
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(tl_prog_path(file), NULL, &obj);

	if (err) {
		tl_fail(__FILE__, __LINE__, "open %s: %d %s", file, err, bpfrt_last_error());
		return NULL;
	}
	return obj;
}

static int load_obj(struct bpfrt_object *obj, bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, opts, .jit = jit);
	int err = bpfrt_object_load(obj, &opts);

	if (err)
		tl_fail(__FILE__, __LINE__, "load %s (%s): %d %s", bpfrt_object_name(obj),
			jit ? "jit" : "interp", err, bpfrt_last_error());
	return err;
}

static struct bpfrt_object *open_and_load(const char *file, bool jit)
{
	struct bpfrt_object *obj = open_obj(file);

	if (obj && load_obj(obj, jit)) {
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

/* Test-runs program `name` (bpfrt_prog_test_run_opts) in the engine the
 * object was loaded for, with ctx_in = ctx (len bytes), or without one:
 * a zeroed context of the program's kind. Returns r0; a run error fails
 * the test (and returns ~0). */
static uint64_t run_ctx(struct bpfrt_object *obj, const char *name, bool jit, const void *ctx,
			size_t len)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, name);
	BPFRT_OPTS(bpfrt_test_run_opts, o, .ctx_in = ctx, .ctx_size_in = ctx ? (uint32_t)len : 0,
		   .mode = tl_exec_mode(jit));
	int err;

	if (!p) {
		tl_fail(__FILE__, __LINE__, "no program %s: %s", name, bpfrt_last_error());
		return ~0ull;
	}
	err = bpfrt_prog_test_run_opts(p, &o);
	if (err) {
		tl_fail(__FILE__, __LINE__, "run %s (%s): %d %s", name, jit ? "jit" : "interp",
			err, bpfrt_last_error());
		return ~0ull;
	}
	return o.retval;
}

static uint64_t run(struct bpfrt_object *obj, const char *name, bool jit)
{
	return run_ctx(obj, name, jit, NULL, 0);
}

/* A global variable's storage, checked for its size. */
static void *global(struct bpfrt_object *obj, const char *name, size_t size)
{
	size_t sz = 0;
	void *p = bpfrt_object_global(obj, name, &sz);

	if (!p || sz != size) {
		tl_fail(__FILE__, __LINE__, "global %s: %p size %zu (want %zu): %s", name, p, sz,
			size, bpfrt_last_error());
		return NULL;
	}
	return p;
}

#define GLOBAL(obj, name, type) ((type *)global(obj, name, sizeof(type)))

static struct bpfrt_map *find_map(struct bpfrt_object *obj, const char *name)
{
	struct bpfrt_map *m = bpfrt_object_find_map(obj, name);

	if (!m)
		tl_fail(__FILE__, __LINE__, "no map %s: %s", name, bpfrt_last_error());
	return m;
}

static int count_keys(struct bpfrt_map *map)
{
	uint8_t key[64], next[64];
	int n = 0;

	for (int err = bpfrt_map_get_next_key(map, NULL, next); !err && n < 100000;
	     err = bpfrt_map_get_next_key(map, key, next)) {
		memcpy(key, next, bpfrt_map_key_size(map));
		n++;
	}
	return n;
}

/* ---- maps.bpf.c --------------------------------------------------------- */

struct pair {
	uint64_t a, b;
};

TEST(map_definitions_from_btf)
{
	static const struct {
		const char *name;
		enum bpf_map_type type;
		uint32_t key, value, max;
	} want[] = {
		{ "arr", BPF_MAP_TYPE_ARRAY, 4, 8, 8 },
		{ "pcpu_arr", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4 },
		{ "hash", BPF_MAP_TYPE_HASH, 4, 16, 4 },
		{ "pcpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 16 },
		{ "lru", BPF_MAP_TYPE_LRU_HASH, 4, 8, 8 },
	};
	struct bpfrt_object *obj = open_and_load("maps.bpf.o", false);

	REQUIRE(obj);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct bpfrt_map *m = find_map(obj, want[i].name);

		if (!m)
			continue;
		CHECK_EQ(bpfrt_map_type(m), want[i].type, "%s", want[i].name);
		CHECK_EQ(bpfrt_map_key_size(m), want[i].key, "%s", want[i].name);
		CHECK_EQ(bpfrt_map_value_size(m), want[i].value, "%s", want[i].name);
		CHECK_EQ(bpfrt_map_max_entries(m), want[i].max, "%s", want[i].name);
	}
	bpfrt_object_close(obj);
}

ALL_ENGINES(map_errors_seen_by_the_program)
{
	static const long want[] = {
		0, -EEXIST, -ENOENT, 0, 122, 0, -ENOENT, 0,     /* hash */
		-E2BIG, 0, -EINVAL,                              /* hash full, bad flags */
		0, -EEXIST, 0, -E2BIG, 0, -EINVAL, 7, 0,         /* array */
	};
	const size_t n = sizeof(want) / sizeof(want[0]);
	struct bpfrt_object *obj = open_and_load("maps.bpf.o", jit);
	struct bpfrt_map *hash, *arr;
	struct pair p;
	uint32_t k;
	uint64_t v;
	long *rc;

	REQUIRE(obj);
	rc = global(obj, "rc", 24 * sizeof(long));
	hash = find_map(obj, "hash");
	arr = find_map(obj, "arr");
	REQUIRE(rc && hash && arr);
	CHECK(run(obj, "map_errors", jit) == n);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ(rc[i], want[i], "step %zu: %ld, want %ld", i, rc[i], want[i]);

	/* What the program left, seen from user space. */
	CHECK_EQ(count_keys(hash), 4);
	for (k = 10; k < 14; k++) {
		CHECK_EQ(bpfrt_map_lookup_elem(hash, &k, &p), 0, "key %u", k);
		CHECK(p.a == 1 && p.b == 22, "key %u: %llu %llu", k, (unsigned long long)p.a,
		      (unsigned long long)p.b);
	}
	k = 1;
	CHECK_EQ(bpfrt_map_lookup_elem(hash, &k, &p), -ENOENT);
	k = 10;
	CHECK_EQ(bpfrt_map_update_elem(hash, &k, &p, BPF_NOEXIST), -EEXIST);
	k = 3;
	CHECK(bpfrt_map_lookup_elem(arr, &k, &v) == 0 && v == 7);
	bpfrt_object_close(obj);
}

ALL_ENGINES(user_writes_program_reads_and_back)
{
	struct bpfrt_object *obj = open_and_load("maps.bpf.o", jit);
	struct bpfrt_map *hash, *arr;
	struct pair p = { 20, 3 };
	uint32_t k = 1;
	uint64_t v = 1000, *seen;

	REQUIRE(obj);
	hash = find_map(obj, "hash");
	arr = find_map(obj, "arr");
	seen = GLOBAL(obj, "user_value_seen", uint64_t);
	REQUIRE(hash && arr && seen);
	/* Before user space writes anything, hash[7] is missing. */
	CHECK((int)run(obj, "read_user", jit) == -1);
	CHECK_EQ(bpfrt_map_update_elem(arr, &k, &v, BPF_ANY), 0);
	k = 7;
	CHECK_EQ(bpfrt_map_update_elem(hash, &k, &p, BPF_NOEXIST), 0);
	CHECK(run(obj, "read_user", jit) == 0);
	CHECK_EQ(*seen, 1023, "%llu", (unsigned long long)*seen);
	k = 8;
	CHECK(bpfrt_map_lookup_elem(hash, &k, &p) == 0 && p.a == 21 && p.b == 4);

	CHECK(run(obj, "write_entry", jit) == 0);
	k = 0x2a;
	CHECK(bpfrt_map_lookup_elem(hash, &k, &p) == 0 && p.a == 0x1122 && p.b == 0x33);
	bpfrt_object_close(obj);
}

/* Pinned to one CPU, a program's per-CPU slot is that CPU's and user
 * space sees it in that CPU's place of the value buffer. */
ALL_ENGINES(percpu_maps_count_in_the_running_cpus_slot)
{
	struct bpfrt_object *obj = open_and_load("maps.bpf.o", jit);
	int ncpus = bpfrt_num_possible_cpus();
	cpu_set_t old, one;
	struct bpfrt_map *pa, *ph;
	uint64_t *vals;
	uint32_t k, *cpu_seen;
	int cpu;

	REQUIRE(obj);
	pa = find_map(obj, "pcpu_arr");
	ph = find_map(obj, "pcpu_hash");
	cpu_seen = GLOBAL(obj, "cpu_seen", uint32_t);
	REQUIRE(pa && ph && cpu_seen && ncpus > 0);
	REQUIRE_EQ(bpfrt_map_value_buf_size(pa), (size_t)ncpus * 8);
	vals = calloc((size_t)ncpus, 8);
	REQUIRE(vals);
	REQUIRE_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	REQUIRE_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	for (int i = 0; i < 10; i++)
		CHECK(run(obj, "percpu_count", jit) == 0);
	sched_setaffinity(0, sizeof(old), &old);
	CHECK_EQ(*cpu_seen, (uint32_t)cpu, "program saw cpu %u, pinned to %d", *cpu_seen, cpu);

	k = 0;
	CHECK_EQ(bpfrt_map_lookup_elem(pa, &k, vals), 0);
	for (int c = 0; c < ncpus; c++)
		CHECK(vals[c] == (c == cpu ? 10u : 0u), "array cpu %d: %llu", c,
		      (unsigned long long)vals[c]);
	k = 42;
	CHECK_EQ(bpfrt_map_lookup_elem(ph, &k, vals), 0);
	for (int c = 0; c < ncpus; c++)
		CHECK(vals[c] == (c == cpu ? 10u : 0u), "hash cpu %d: %llu", c,
		      (unsigned long long)vals[c]);

	/* User space writes every CPU's value; the program adds to its own. */
	for (int c = 0; c < ncpus; c++)
		vals[c] = 100 * (uint64_t)c;
	k = 0;
	CHECK_EQ(bpfrt_map_update_elem(pa, &k, vals, BPF_ANY), 0);
	CHECK(run(obj, "percpu_count", jit) == 0);
	CHECK_EQ(bpfrt_map_lookup_elem(pa, &k, vals), 0);
	uint64_t sum = 0, base = 0;
	for (int c = 0; c < ncpus; c++) {
		sum += vals[c];
		base += 100 * (uint64_t)c;
	}
	CHECK_EQ(sum, base + 1, "sum %llu", (unsigned long long)sum);
	free(vals);
	bpfrt_object_close(obj);
}

ALL_ENGINES(lru_hash_evicts_cold_keys)
{
	struct bpfrt_object *obj = open_and_load("maps.bpf.o", jit);
	struct bpfrt_map *lru;
	uint32_t k, *inserted;
	uint64_t v;
	int64_t r0;

	REQUIRE(obj);
	lru = find_map(obj, "lru");
	inserted = GLOBAL(obj, "lru_inserted", uint32_t);
	REQUIRE(lru && inserted);
	r0 = (int64_t)run(obj, "lru_churn", jit);
	CHECK_EQ(r0, 0, "insert of key %lld failed", (long long)(-r0 - 1));
	CHECK_EQ(*inserted, 32);
	CHECK_EQ(count_keys(lru), 8, "%d entries", count_keys(lru));
	k = 0;
	CHECK(bpfrt_map_lookup_elem(lru, &k, &v) == 0 && v == 0, "hot key evicted");
	k = 31;
	CHECK(bpfrt_map_lookup_elem(lru, &k, &v) == 0 && v == 310, "newest key missing");
	for (k = 1; k < 8; k++)
		CHECK_EQ(bpfrt_map_lookup_elem(lru, &k, &v), -ENOENT, "cold key %u kept", k);
	bpfrt_object_close(obj);
}

/* ---- legacy_maps.bpf.c -------------------------------------------------- */

ALL_ENGINES(legacy_maps_section)
{
	struct bpfrt_object *obj = open_and_load("legacy_maps.bpf.o", jit);
	struct bpfrt_map *counts, *arr;
	uint32_t k = 5, a = 0;
	uint64_t v = 0;

	REQUIRE(obj);
	counts = find_map(obj, "legacy_counts");
	arr = find_map(obj, "legacy_array");
	REQUIRE(counts && arr);
	CHECK_EQ(bpfrt_map_type(counts), BPF_MAP_TYPE_HASH);
	CHECK(bpfrt_map_key_size(counts) == 4 && bpfrt_map_value_size(counts) == 8);
	CHECK_EQ(bpfrt_map_max_entries(counts), 4);
	CHECK(bpfrt_map_type(arr) == BPF_MAP_TYPE_ARRAY && bpfrt_map_max_entries(arr) == 2);
	for (uint64_t i = 1; i <= 3; i++)
		CHECK(run(obj, "legacy_count", jit) == i);
	CHECK(bpfrt_map_lookup_elem(counts, &k, &v) == 0 && v == 3);
	k = 1;
	CHECK(bpfrt_map_lookup_elem(arr, &k, &a) == 0 && a == 30, "%u", a);
	bpfrt_object_close(obj);
}

/* ---- ringbuf.bpf.c ------------------------------------------------------ */

struct event {
	uint32_t seq;
	uint32_t kind;
	uint64_t payload;
	char tag[8];
};

struct consumed {
	uint32_t next_seq;    /* the seq the next record must carry */
	int records;
	int bad;
};

static int check_event(void *ctx, void *data, size_t len)
{
	struct consumed *c = ctx;
	const struct event *e = data;
	uint32_t want = c->next_seq;

	if (want % 3 == 2) /* discarded */
		want++;
	c->next_seq = want + 1;
	c->records++;
	if (len != sizeof(*e) || e->seq != want || e->payload != want * 1000ull ||
	    e->kind != (want % 3 == 0 ? 1u : 2u) ||
	    strcmp(e->tag, want % 3 == 0 ? "output" : "submit")) {
		if (!c->bad++)
			tl_fail(__FILE__, __LINE__, "record %d: len %zu seq %u (want %u) kind %u "
				"payload %llu tag %.8s", c->records, len, e->seq, want, e->kind,
				(unsigned long long)e->payload, e->tag);
	}
	return 0;
}

ALL_ENGINES(ringbuf_producer_and_consumer)
{
	struct bpfrt_object *obj = open_obj("ringbuf.bpf.o");
	struct consumed c = { 0 };
	struct bpfrt_map *rb;
	uint32_t *nr_events;
	uint64_t *avail, *size, *cons, *prod;
	long *errors, *too_big;
	const uint32_t n = 40, rec = 8 + sizeof(struct event);
	const int kept = 27; /* seqs 0..39 without the 13 with seq % 3 == 2 */

	REQUIRE(obj);
	nr_events = GLOBAL(obj, "nr_events", uint32_t);
	REQUIRE(nr_events && *nr_events == 30);
	*nr_events = n;
	if (load_obj(obj, jit)) {
		bpfrt_object_close(obj);
		return;
	}
	rb = find_map(obj, "rb");
	errors = GLOBAL(obj, "errors", long);
	too_big = GLOBAL(obj, "too_big_failed", long);
	avail = GLOBAL(obj, "avail_data", uint64_t);
	size = GLOBAL(obj, "ring_size", uint64_t);
	cons = GLOBAL(obj, "cons_pos", uint64_t);
	prod = GLOBAL(obj, "prod_pos", uint64_t);
	REQUIRE(rb && errors && too_big && avail && size && cons && prod);
	CHECK_EQ(bpfrt_map_type(rb), BPF_MAP_TYPE_RINGBUF);

	CHECK(run(obj, "produce", jit) == 0);
	CHECK_EQ(*errors, 0, "%ld", *errors);
	CHECK_EQ(*too_big, 1);
	CHECK_EQ(*size, 4 * 4096, "%llu", (unsigned long long)*size);
	CHECK(*cons == 0 && *prod == n * rec, "cons %llu prod %llu", (unsigned long long)*cons,
	      (unsigned long long)*prod);
	CHECK_EQ(*avail, *prod - *cons, "avail %llu", (unsigned long long)*avail);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, check_event, &c), kept);
	CHECK(c.records == kept && !c.bad, "%d records", c.records);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, check_event, &c), 0);

	/* A second batch continues the sequence; the consumer's position is
	 * visible to the program. */
	CHECK(run(obj, "produce", jit) == 0);
	CHECK(*cons == n * rec && *prod == 2 * n * rec, "cons %llu prod %llu",
	      (unsigned long long)*cons, (unsigned long long)*prod);
	CHECK_EQ(*avail, n * rec);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, check_event, &c), 2 * kept - kept);
	CHECK(c.records == 2 * kept && !c.bad && c.next_seq == 2 * n, "%d records, next %u",
	      c.records, c.next_seq);
	bpfrt_object_close(obj);
}

static int check_blob(void *ctx, void *data, size_t len)
{
	uint64_t *next = ctx;
	const uint64_t *blob = data;

	if (len != 128 || blob[0] != *next)
		return -EBADMSG;
	(*next)++;
	return 0;
}

ALL_ENGINES(ringbuf_output_fails_when_full)
{
	struct bpfrt_object *obj = open_and_load("ringbuf.bpf.o", jit);
	struct bpfrt_map *rb;
	long *sent, *rc;
	uint64_t next = 0;

	REQUIRE(obj);
	rb = find_map(obj, "rb");
	sent = GLOBAL(obj, "overflow_sent", long);
	rc = GLOBAL(obj, "overflow_rc", long);
	REQUIRE(rb && sent && rc);
	CHECK(run(obj, "overflow", jit) == 0);
	/* 136-byte records in 16 KiB: 120 fit. */
	CHECK_EQ(*sent, 120, "%ld sent", *sent);
	CHECK_EQ(*rc, -EAGAIN, "%ld", *rc);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, check_blob, &next), 120);
	CHECK_EQ(next, 120);
	/* Drained, the ring takes records again. */
	*sent = 0;
	CHECK(run(obj, "overflow", jit) == 0);
	CHECK_EQ(*sent, 120, "%ld sent after draining", *sent);
	bpfrt_object_close(obj);
}

struct poller {
	struct bpfrt_map *rb;
	int got;
	uint64_t value;
	uint64_t waited_ns;
};

static int take_u64(void *ctx, void *data, size_t len)
{
	struct poller *p = ctx;

	if (len == 8)
		memcpy(&p->value, data, 8);
	return 0;
}

static uint64_t now_ns(clockid_t clock);

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);

	p->got = bpfrt_ringbuf_poll(p->rb, take_u64, p, 5000);
	p->waited_ns = now_ns(CLOCK_MONOTONIC) - t0;
	return NULL;
}

/* A consumer blocked in poll wakes up when the program submits with
 * BPF_RB_FORCE_WAKEUP, long before its timeout. */
ALL_ENGINES(ringbuf_submit_wakes_a_poller)
{
	struct bpfrt_object *obj = open_and_load("ringbuf.bpf.o", jit);
	struct poller p = { 0 };
	pthread_t t;

	REQUIRE(obj);
	p.rb = find_map(obj, "rb");
	REQUIRE(p.rb);
	CHECK(bpfrt_ringbuf_fd(p.rb) >= 0);
	REQUIRE(pthread_create(&t, NULL, poll_thread, &p) == 0);
	usleep(20000);
	CHECK(run(obj, "notify", jit) == 0);
	pthread_join(t, NULL);
	CHECK(p.got == 1 && p.value == 0xfeed, "got %d value %llx", p.got,
	      (unsigned long long)p.value);
	CHECK(p.waited_ns < 2500000000ull, "poll waited %llu ns", (unsigned long long)p.waited_ns);
	bpfrt_object_close(obj);
}

static bool fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* BPF_RB_NO_WAKEUP leaves the consumer's eventfd quiet even when it has
 * caught up; BPF_RB_FORCE_WAKEUP signals it. */
ALL_ENGINES(ringbuf_wakeup_flags)
{
	struct bpfrt_object *obj = open_and_load("ringbuf.bpf.o", jit);
	struct poller p = { 0 };
	uint64_t *flags;
	int fd;

	REQUIRE(obj);
	p.rb = find_map(obj, "rb");
	flags = GLOBAL(obj, "notify_flags", uint64_t);
	REQUIRE(p.rb && flags);
	fd = bpfrt_ringbuf_fd(p.rb);
	REQUIRE(fd >= 0);
	*flags = BPF_RB_NO_WAKEUP;
	CHECK(run(obj, "notify", jit) == 0);
	CHECK(!fd_readable(fd), "NO_WAKEUP signalled the consumer");
	CHECK(bpfrt_ringbuf_consume(p.rb, take_u64, &p) == 1 && p.value == 0xfeed);
	*flags = BPF_RB_FORCE_WAKEUP;
	CHECK(run(obj, "notify", jit) == 0);
	CHECK(fd_readable(fd), "FORCE_WAKEUP did not signal the consumer");
	bpfrt_object_close(obj);
}

/* ---- tailcall.bpf.c ----------------------------------------------------- */

static struct bpfrt_object *load_tailcalls(bool jit)
{
	static const struct {
		uint32_t slot;
		const char *prog;
	} slots[] = { { 1, "stage1" }, { 2, "stage2" }, { 3, "self_loop" } };
	struct bpfrt_object *obj = open_and_load("tailcall.bpf.o", jit);
	struct bpfrt_map *table;

	if (!obj)
		return NULL;
	table = find_map(obj, "jmp_table");
	for (size_t i = 0; table && i < sizeof(slots) / sizeof(slots[0]); i++) {
		struct bpfrt_prog *p = bpfrt_object_find_prog(obj, slots[i].prog);
		int err = p ? bpfrt_map_update_prog(table, slots[i].slot, p) : -ENOENT;

		if (err)
			tl_fail(__FILE__, __LINE__, "slot %u: %d %s", slots[i].slot, err,
				bpfrt_last_error());
	}
	if (!table || tl_failed()) {
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

/* True if the engine cannot tail-call yet (the JIT, until it emits them). */
static bool no_tail_calls(struct bpfrt_object *obj)
{
	long *rc = GLOBAL(obj, "fallthrough_rc", long);

	return rc && *rc == -EOPNOTSUPP;
}

ALL_ENGINES(tail_call_chain_keeps_the_context)
{
	struct bpfrt_object *obj = load_tailcalls(jit);
	/* a whole raw_tp context: the entry's reach is raised to what its
	 * tail-call targets may read */
	uint64_t args[12] = { 5, 37 };
	long *visits;
	uint64_t r0;

	REQUIRE(obj);
	visits = global(obj, "visits", 4 * sizeof(long));
	REQUIRE(visits);
	r0 = run_ctx(obj, "chain_entry", jit, args, sizeof(args));
	if (no_tail_calls(obj)) {
		bpfrt_object_close(obj);
		SKIP(JIT_TAIL_SKIP);
	}
	CHECK_EQ(r0, 42, "r0 %llu", (unsigned long long)r0);
	CHECK(visits[0] == 1 && visits[1] == 5 && visits[2] == 1, "visits %ld %ld %ld",
	      visits[0], visits[1], visits[2]);

	/* Emptying slot 2 makes stage1 fall through. */
	CHECK(bpfrt_map_delete_prog(find_map(obj, "jmp_table"), 2) == 0);
	r0 = run_ctx(obj, "chain_entry", jit, args, sizeof(args));
	CHECK_EQ(r0, 1001, "r0 %llu", (unsigned long long)r0);
	CHECK(visits[0] == 2 && visits[1] == 10 && visits[2] == 1);
	bpfrt_object_close(obj);
}

ALL_ENGINES(tail_call_to_a_missing_slot_falls_through)
{
	struct bpfrt_object *obj = load_tailcalls(jit);
	uint32_t *slot;
	long *rc;
	uint64_t args[12] = { 0 }; /* a whole raw_tp context */

	REQUIRE(obj);
	slot = GLOBAL(obj, "missing_slot", uint32_t);
	rc = GLOBAL(obj, "fallthrough_rc", long);
	REQUIRE(slot && rc);
	/* Empty slot, then past max_entries, then a huge index. */
	const uint32_t idx[] = { 5, 8, 0xffffffffu };
	for (size_t i = 0; i < 3; i++) {
		*slot = idx[i];
		*rc = 0;
		CHECK(run_ctx(obj, "jump_to_missing", jit, args, sizeof(args)) == 77, "slot %u", idx[i]);
		if (no_tail_calls(obj)) {
			bpfrt_object_close(obj);
			SKIP(JIT_TAIL_SKIP);
		}
		CHECK(*rc < 0, "slot %u: %ld", idx[i], *rc);
	}
	bpfrt_object_close(obj);
}

ALL_ENGINES(tail_call_limit_is_33)
{
	struct bpfrt_object *obj = load_tailcalls(jit);
	uint64_t args[12] = { 0 }; /* a whole raw_tp context */
	long *calls;

	REQUIRE(obj);
	calls = GLOBAL(obj, "self_calls", long);
	REQUIRE(calls);
	CHECK(run_ctx(obj, "loop_entry", jit, args, sizeof(args)) == 33);
	if (no_tail_calls(obj)) {
		bpfrt_object_close(obj);
		SKIP(JIT_TAIL_SKIP);
	}
	CHECK_EQ(*calls, 33, "%ld", *calls);
	/* The count is per run. */
	CHECK(run_ctx(obj, "loop_entry", jit, args, sizeof(args)) == 33);
	CHECK_EQ(*calls, 66, "%ld", *calls);
	bpfrt_object_close(obj);
}

/* ---- prog_array_values.bpf.c --------------------------------------------- */

/* Opens the file with autoload off for the programs named in `off`. */
static struct bpfrt_object *open_values(const char *const *off, size_t n)
{
	struct bpfrt_object *obj = open_obj("prog_array_values.bpf.o");

	for (size_t i = 0; obj && i < n; i++) {
		struct bpfrt_prog *p = bpfrt_object_find_prog(obj, off[i]);

		if (!p || bpfrt_prog_set_autoload(p, false)) {
			tl_fail(__FILE__, __LINE__, "%s: %s", off[i], bpfrt_last_error());
			bpfrt_object_close(obj);
			return NULL;
		}
	}
	return obj;
}

/* The object's .values fill the prog array at load, as libbpf's; a map
 * of a type bpfrt lacks is left out when no loaded program uses it. */
ALL_ENGINES(prog_array_values_fill_slots_at_load)
{
	static const char *const off[] = { "uses_sk_store" };
	struct bpfrt_object *obj = open_values(off, 1);
	struct bpfrt_map *m;
	uint64_t args[12] = { 0 };
	uint64_t r0;
	int maps = 0;

	REQUIRE(obj);
	REQUIRE(load_obj(obj, jit) == 0);
	r0 = run_ctx(obj, "entry", jit, args, sizeof(args));
	CHECK_EQ(r0, 42, "entry returned %llu: slot 1 not filled", (unsigned long long)r0);
	m = find_map(obj, "jmp_init");
	REQUIRE(m);
	CHECK(bpfrt_map_delete_prog(m, 1) == 0, "slot 1 held no program");
	CHECK_EQ(run_ctx(obj, "entry", jit, args, sizeof(args)), 1000);
	/* the map left out: none to find, and the reason */
	CHECK(bpfrt_object_find_map(obj, "sk_store") == NULL);
	CHECK(strstr(bpfrt_last_error(), "BPF_MAP_TYPE_INODE_STORAGE is not supported"), "%s",
	      bpfrt_last_error());
	for (m = bpfrt_object_next_map(obj, NULL); m; m = bpfrt_object_next_map(obj, m))
		maps++;
	CHECK_EQ(maps, 1, "maps listed: %d (jmp_init only)", maps);
	bpfrt_object_close(obj);
}

/* A program that uses the map bpfrt cannot create fails the load, naming
 * itself and the map; a slot naming a program the load leaves out fails
 * it too (as libbpf, which cannot put a program it did not load in a
 * slot). */
TEST(prog_array_values_refusals)
{
	static const char *const no_target[] = { "target", "uses_sk_store" };
	struct bpfrt_object *obj = open_values(NULL, 0);
	int err;

	REQUIRE(obj);
	err = bpfrt_object_load(obj, NULL);
	CHECK_EQ(err, -EOPNOTSUPP, "%s", bpfrt_last_error());
	CHECK(strstr(bpfrt_last_error(), "program uses_sk_store") &&
	      strstr(bpfrt_last_error(), "map sk_store") &&
	      strstr(bpfrt_last_error(), "BPF_MAP_TYPE_INODE_STORAGE is not supported"), "%s",
	      bpfrt_last_error());
	bpfrt_object_close(obj);

	obj = open_values(no_target, 2);
	REQUIRE(obj);
	err = bpfrt_object_load(obj, NULL);
	CHECK_EQ(err, -EINVAL, "%s", bpfrt_last_error());
	CHECK(strstr(bpfrt_last_error(), "map jmp_init: initial value [1] is program target") &&
	      strstr(bpfrt_last_error(), "autoload off"), "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

/* ---- tailcall_count.bpf.c ------------------------------------------------ */

/* 33 tail calls per run, counted as the JIT counts them: one count for
 * the whole run, whether the chain starts in the main program, in a
 * subprogram or in bpf_loop callbacks (each callback invocation used to
 * be an interpreter activation with a count of its own: 3 iterations
 * took 99). */
ALL_ENGINES(tail_call_limit_counts_per_run_from_main_subprogram_and_callbacks)
{
	static const struct {
		const char *entry;
		uint64_t r0;
		long iterations;
	} runs[] = {
		{ "from_main", 0, 0 },
		{ "from_subprog", 1, 0 },
		/* the main program's own tail call after the loop fails too */
		{ "from_callback", 100, 3 },
	};
	struct bpfrt_object *obj = open_and_load("tailcall_count.bpf.o", jit);
	uint64_t ctx[12] = { 0 }; /* a whole raw_tp context */
	long *calls, *iterations;

	REQUIRE(obj);
	calls = GLOBAL(obj, "calls", long);
	iterations = GLOBAL(obj, "iterations", long);
	REQUIRE(calls && iterations);
	REQUIRE(bpfrt_map_update_prog(find_map(obj, "jmp_table"), 0,
				      bpfrt_object_find_prog(obj, "self_loop")) == 0,
		"%s", bpfrt_last_error());
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		uint64_t r0;

		*calls = 0;
		*iterations = 0;
		r0 = run_ctx(obj, runs[i].entry, jit, ctx, sizeof(ctx));
		CHECK_EQ(*calls, 33, "%s: %ld tail calls", runs[i].entry, *calls);
		CHECK_EQ(r0, runs[i].r0, "%s: r0 %llu", runs[i].entry, (unsigned long long)r0);
		CHECK(*iterations == runs[i].iterations, "%s: %ld iterations", runs[i].entry,
		      *iterations);
	}
	bpfrt_object_close(obj);
}

/* A taken tail call from a subprogram returns the target's r0 to the
 * subprogram's caller (what the verifier models), a failed one goes on in
 * the subprogram. */
ALL_ENGINES(tail_call_from_subprog_returns_to_its_caller)
{
	struct bpfrt_object *obj = load_tailcalls(jit);
	uint64_t args[12] = { 5, 37 }; /* a whole raw_tp context */
	uint32_t *slot;
	long *visits;
	uint64_t r0;

	REQUIRE(obj);
	slot = GLOBAL(obj, "sub_slot", uint32_t);
	visits = global(obj, "visits", 4 * sizeof(long));
	REQUIRE(slot && visits);
	/* stage2 returns 5 + 37; the caller adds its kept 37 * 3 */
	r0 = run_ctx(obj, "sub_tail_entry", jit, args, sizeof(args));
	if (no_tail_calls(obj)) {
		bpfrt_object_close(obj);
		SKIP(JIT_TAIL_SKIP);
	}
	CHECK_EQ(r0, 42 + 111, "r0 %llu", (unsigned long long)r0);
	CHECK_EQ(visits[2], 1, "stage2 ran %ld times", visits[2]);
	*slot = 5; /* empty: the subprogram returns 1000 */
	r0 = run_ctx(obj, "sub_tail_entry", jit, args, sizeof(args));
	CHECK_EQ(r0, 1000 + 111, "r0 %llu", (unsigned long long)r0);
	CHECK_EQ(visits[2], 1, "stage2 ran %ld times", visits[2]);
	bpfrt_object_close(obj);
}

/* ---- helpers.bpf.c ------------------------------------------------------ */

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

ALL_ENGINES(clocks_are_monotonic_and_plausible)
{
	struct bpfrt_object *obj = open_and_load("helpers.bpf.o", jit);
	uint64_t *mono, *boot, m0, m1, b0, b1;

	REQUIRE(obj);
	mono = global(obj, "mono", 16);
	boot = global(obj, "boot", 16);
	REQUIRE(mono && boot);
	m0 = now_ns(CLOCK_MONOTONIC);
	b0 = now_ns(CLOCK_BOOTTIME);
	CHECK(run(obj, "clocks", jit) == 0);
	m1 = now_ns(CLOCK_MONOTONIC);
	b1 = now_ns(CLOCK_BOOTTIME);
	CHECK(m0 <= mono[0] && mono[0] <= mono[1] && mono[1] <= m1, "%llu %llu %llu %llu",
	      (unsigned long long)m0, (unsigned long long)mono[0],
	      (unsigned long long)mono[1], (unsigned long long)m1);
	CHECK(b0 <= boot[0] && boot[0] <= boot[1] && boot[1] <= b1, "%llu %llu %llu %llu",
	      (unsigned long long)b0, (unsigned long long)boot[0],
	      (unsigned long long)boot[1], (unsigned long long)b1);
	bpfrt_object_close(obj);
}

ALL_ENGINES(prandom_varies)
{
	struct bpfrt_object *obj = open_and_load("helpers.bpf.o", jit);
	uint32_t first[16], *rnd;
	int distinct = 0, high = 0, same = 0;

	REQUIRE(obj);
	rnd = global(obj, "rnd", sizeof(first));
	REQUIRE(rnd);
	CHECK(run(obj, "random", jit) == 0);
	memcpy(first, rnd, sizeof(first));
	CHECK(run(obj, "random", jit) == 0);
	for (int i = 0; i < 16; i++) {
		bool seen = false;

		for (int j = 0; j < i; j++)
			seen |= first[j] == first[i];
		distinct += !seen;
		high += (first[i] >> 31) + (rnd[i] >> 31);
		same += first[i] == rnd[i];
	}
	CHECK(distinct >= 15, "%d distinct of 16", distinct);
	CHECK(high > 0 && high < 32, "%d of 32 with bit 31 set", high);
	CHECK(same <= 1, "%d equal between runs", same);
	bpfrt_object_close(obj);
}

struct whoami_run {
	struct bpfrt_object *obj;
	bool jit;
	pid_t tid;
	int cpus_allowed_ok;
};

static void *whoami_thread(void *arg)
{
	struct whoami_run *w = arg;

	pthread_setname_np(pthread_self(), "progs-whoami");
	w->tid = gettid();
	run(w->obj, "whoami", w->jit);
	return NULL;
}

ALL_ENGINES(pid_tgid_comm_and_cpu_of_the_running_thread)
{
	struct bpfrt_object *obj = open_and_load("helpers.bpf.o", jit);
	struct whoami_run w = { .obj = obj, .jit = jit };
	char own_comm[16] = { 0 };
	pthread_t t;
	uint64_t *pid_tgid;
	uint32_t *cpu;
	char *comm;
	long *comm_rc;

	REQUIRE(obj);
	pid_tgid = GLOBAL(obj, "pid_tgid", uint64_t);
	cpu = GLOBAL(obj, "cpu", uint32_t);
	comm = global(obj, "comm", 16);
	comm_rc = GLOBAL(obj, "comm_rc", long);
	REQUIRE(pid_tgid && cpu && comm && comm_rc);

	/* On the main thread tid == pid. */
	CHECK(run(obj, "whoami", jit) == 0);
	pthread_getname_np(pthread_self(), own_comm, sizeof(own_comm));
	CHECK_EQ(*pid_tgid, ((uint64_t)getpid() << 32 | (uint32_t)gettid()));
	CHECK(*cpu < (uint32_t)bpfrt_num_possible_cpus(), "cpu %u", *cpu);
	CHECK(*comm_rc == 0 && !strcmp(comm, own_comm), "'%.16s' vs '%s'", comm, own_comm);

	/* On another thread, with its own name. */
	REQUIRE(pthread_create(&t, NULL, whoami_thread, &w) == 0);
	pthread_join(t, NULL);
	CHECK_NE(w.tid, getpid());
	CHECK(*pid_tgid >> 32 == (uint64_t)getpid(), "tgid %llu", (unsigned long long)(*pid_tgid >> 32));
	CHECK_EQ((uint32_t)*pid_tgid, (uint32_t)w.tid, "pid %u, tid %d", (uint32_t)*pid_tgid, w.tid);
	CHECK(*comm_rc == 0 && !strcmp(comm, "progs-whoami"), "'%.16s'", comm);
	CHECK(*cpu < (uint32_t)bpfrt_num_possible_cpus());
	bpfrt_object_close(obj);
}

struct trace_search {
	const char *needles[4];
	int found[4];
	int lines;
};

static int find_lines(void *ctx, const char *line, size_t len)
{
	struct trace_search *s = ctx;

	s->lines++;
	for (int i = 0; i < 4 && s->needles[i]; i++)
		s->found[i] += strstr(line, s->needles[i]) != NULL;
	return 0;
}

ALL_ENGINES(bpf_printk_lands_in_the_trace_buffer)
{
	struct bpfrt_object *obj = open_and_load("helpers.bpf.o", jit);
	struct trace_search s = { .needles = {
		"bpf_trace_printk: progs: hello 42 world",
		"bpf_trace_printk: progs: four 1 2 3 42",
		"bpf_trace_printk: progs: hello 7 world",
	} };
	int *value;

	REQUIRE(obj);
	value = GLOBAL(obj, "printk_value", int);
	REQUIRE(value && *value == 42);
	bpfrt_trace_clear();
	CHECK(run(obj, "printk", jit) == 0);
	*value = 7;
	CHECK(run(obj, "printk", jit) == 0);
	CHECK_EQ(bpfrt_trace_drain(find_lines, &s), 4);
	CHECK_EQ(s.lines, 4);
	CHECK(s.found[0] == 1 && s.found[1] == 1 && s.found[2] == 1, "found %d %d %d",
	      s.found[0], s.found[1], s.found[2]);
	CHECK_EQ(bpfrt_trace_drain(find_lines, &s), 0, "lines are consumed");
	bpfrt_object_close(obj);
}

struct probe_globals {
	uint64_t *src;
	char *dst[4];
	long *rc[4];
};

static bool probe_globals(struct bpfrt_object *obj, struct probe_globals *g)
{
	static const char *const dsts[] = { "dst_user", "dst_kernel", "dst_user_str",
					    "dst_kernel_str" };
	static const char *const rcs[] = { "rc_user", "rc_kernel", "rc_user_str",
					   "rc_kernel_str" };

	g->src = GLOBAL(obj, "src", uint64_t);
	for (int i = 0; i < 4; i++) {
		g->dst[i] = global(obj, dsts[i], 16);
		g->rc[i] = GLOBAL(obj, rcs[i], long);
		if (!g->dst[i] || !g->rc[i])
			return false;
	}
	return g->src != NULL;
}

static void probe_from(struct bpfrt_object *obj, bool jit, struct probe_globals *g,
		       const void *src)
{
	*g->src = (uint64_t)(uintptr_t)src;
	for (int i = 0; i < 4; i++)
		memset(g->dst[i], 0xaa, 16);
	CHECK(run(obj, "probe", jit) == 0);
}

static bool all_zero(const char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

ALL_ENGINES(probe_reads_copy_or_fault_cleanly)
{
	struct bpfrt_object *obj = open_and_load("helpers.bpf.o", jit);
	static const char text[] = "0123456789abcdefghij";
	static const char word[] = "hi\0XYZ";
	struct probe_globals g;
	long page = sysconf(_SC_PAGESIZE);
	char *none;

	REQUIRE(obj);
	REQUIRE(probe_globals(obj, &g));

	/* 20 readable bytes: the fixed-size reads copy 16; the string reads
	 * stop at 15 characters and a NUL. */
	probe_from(obj, jit, &g, text);
	for (int i = 0; i < 2; i++)
		CHECK(*g.rc[i] == 0 && !memcmp(g.dst[i], text, 16), "read %d: %ld", i, *g.rc[i]);
	for (int i = 2; i < 4; i++)
		CHECK(*g.rc[i] == 16 && !memcmp(g.dst[i], text, 15) && g.dst[i][15] == 0,
		      "str read %d: %ld", i, *g.rc[i]);

	/* A short string: length with the NUL. */
	probe_from(obj, jit, &g, word);
	for (int i = 2; i < 4; i++)
		CHECK(*g.rc[i] == 3 && !strcmp(g.dst[i], "hi"), "str read %d: %ld", i, *g.rc[i]);

	/* Unmapped, inaccessible and NULL sources: -EFAULT and a zeroed dst. */
	none = mmap(NULL, (size_t)page * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(none != MAP_FAILED);
	munmap(none + page, (size_t)page);
	const void *bad[] = { none, none + page, NULL, (void *)-4096L };
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		probe_from(obj, jit, &g, bad[b]);
		for (int i = 0; i < 4; i++)
			CHECK(*g.rc[i] == -EFAULT && all_zero(g.dst[i], 16), "bad %zu read %d: %ld",
			      b, i, *g.rc[i]);
	}
	/* A read that starts readable and runs into the PROT_NONE page. */
	char *edge = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(edge != MAP_FAILED);
	mprotect(edge + page, (size_t)page, PROT_NONE);
	memset(edge, 'x', (size_t)page);
	probe_from(obj, jit, &g, edge + page - 8);
	for (int i = 0; i < 4; i++)
		CHECK(*g.rc[i] == -EFAULT && all_zero(g.dst[i], 16), "edge read %d: %ld", i,
		      *g.rc[i]);
	/* The same with the second page unmapped, and a string that ends
	 * right before it: the string reads stop at its NUL, the fixed-size
	 * ones run into the hole. */
	munmap(edge + page, (size_t)page);
	probe_from(obj, jit, &g, edge + page - 8);
	for (int i = 0; i < 4; i++)
		CHECK(*g.rc[i] == -EFAULT && all_zero(g.dst[i], 16), "unmapped edge read %d: %ld",
		      i, *g.rc[i]);
	memcpy(edge + page - 4, "hey", 4);
	probe_from(obj, jit, &g, edge + page - 4);
	for (int i = 0; i < 2; i++)
		CHECK(*g.rc[i] == -EFAULT && all_zero(g.dst[i], 16), "read %d before the hole: %ld",
		      i, *g.rc[i]);
	for (int i = 2; i < 4; i++)
		CHECK(*g.rc[i] == 4 && !strcmp(g.dst[i], "hey") && all_zero(g.dst[i] + 3, 13),
		      "str read %d before the hole: %ld", i, *g.rc[i]);
	munmap(edge, (size_t)page);
	munmap(none, (size_t)page);
	bpfrt_object_close(obj);
}

ALL_ENGINES(bpf_loop_with_early_break)
{
	struct bpfrt_object *obj = open_and_load("helpers.bpf.o", jit);
	uint32_t *nr, *stop_at, *calls;
	uint64_t *sum;
	long *rc, *bad_flags;

	REQUIRE(obj);
	nr = GLOBAL(obj, "loop_nr", uint32_t);
	stop_at = GLOBAL(obj, "loop_stop_at", uint32_t);
	calls = GLOBAL(obj, "loop_calls", uint32_t);
	sum = GLOBAL(obj, "loop_sum", uint64_t);
	rc = GLOBAL(obj, "loop_rc", long);
	bad_flags = GLOBAL(obj, "loop_bad_flags_rc", long);
	REQUIRE(nr && stop_at && calls && sum && rc && bad_flags);

	/* The callback breaks at i == 10: 11 calls, bpf_loop returns 11. */
	CHECK(run(obj, "loop", jit) == 0);
	CHECK(*rc == 11 && *calls == 11 && *sum == 55, "rc %ld calls %u sum %llu", *rc, *calls,
	      (unsigned long long)*sum);
	CHECK_EQ(*bad_flags, -EINVAL, "%ld", *bad_flags);

	*stop_at = 1000;
	CHECK(run(obj, "loop", jit) == 0);
	CHECK(*rc == 100 && *calls == 100 && *sum == 4950, "rc %ld calls %u sum %llu", *rc,
	      *calls, (unsigned long long)*sum);

	*nr = 0;
	CHECK(run(obj, "loop", jit) == 0);
	CHECK(*rc == 0 && *calls == 0);

	*nr = (1u << 23) + 1;
	CHECK(run(obj, "loop", jit) == 0);
	CHECK(*rc == -E2BIG && *calls == 0, "rc %ld", *rc);
	bpfrt_object_close(obj);
}

/* ---- subprogs.bpf.c ----------------------------------------------------- */

static void register_kfuncs(void);

static uint64_t leaf(uint64_t x, uint32_t scale) { return x * scale + 1; }
static uint64_t level3(uint64_t x, uint32_t s) { return leaf(x, s) + leaf(x + 1, s); }
static uint64_t level2(uint64_t x, uint32_t s) { return level3(x, s) * 2; }
static uint64_t level1(uint64_t x, uint32_t s)
{
	return level2(x, s) + level2(x + 10, s) + 's';
}

ALL_ENGINES(globals_both_ways_through_subprograms)
{
	struct bpfrt_object *obj = open_obj("subprogs.bpf.o");
	uint64_t *input, *output, *runs;
	uint32_t *scale, *depth;
	const char *label;

	REQUIRE(obj);
	register_kfuncs(); /* the object also holds call_kfuncs */
	scale = GLOBAL(obj, "scale", uint32_t);
	input = GLOBAL(obj, "input", uint64_t);
	REQUIRE(scale && input && *scale == 1 && *input == 3);
	*scale = 3;   /* const volatile knob, before load */
	if (load_obj(obj, jit)) {
		bpfrt_object_close(obj);
		return;
	}
	/* after load, globals live in the maps: look them up again */
	input = GLOBAL(obj, "input", uint64_t);
	output = GLOBAL(obj, "output", uint64_t);
	runs = GLOBAL(obj, "runs", uint64_t);
	depth = GLOBAL(obj, "depth_seen", uint32_t);
	label = global(obj, "label", sizeof("subprogs"));
	REQUIRE(input && output && runs && depth && label);
	CHECK(!strcmp(label, "subprogs"));
	CHECK(*input == 3 && *output == 0 && *runs == 0, "loaded values");

	CHECK(run(obj, "call_chain", jit) == (level1(3, 3) & 0x7fffffff));
	CHECK(*output == level1(3, 3), "%llu, want %llu", (unsigned long long)*output,
	      (unsigned long long)level1(3, 3));
	CHECK(*runs == 1 && *depth == 4);

	*input = 1000; /* user space writes, the program reads */
	*output = 0;
	CHECK(run(obj, "call_chain", jit) == (level1(1000, 3) & 0x7fffffff));
	CHECK(*output == level1(1000, 3) && *runs == 2, "%llu, want %llu, runs %llu",
	      (unsigned long long)*output, (unsigned long long)level1(1000, 3),
	      (unsigned long long)*runs);
	bpfrt_object_close(obj);
}

static __thread int host_calls;

static uint64_t host_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	host_calls++;
	return a + 2 * b + 3 * c + 4 * d + 5 * e;
}

/* host_sum(vals, size): the u32s of a buffer the verifier checked (a
 * memory argument and its size in bytes, not a pointer passed as a number:
 * that would leak its address). */
static uint64_t host_sum(uint64_t vals, uint64_t size, uint64_t r3, uint64_t r4, uint64_t r5)
{
	const uint32_t *v = (const uint32_t *)(uintptr_t)vals;
	int sum = 0;

	host_calls++;
	for (int i = 0; i < (int)(size / 4); i++)
		sum += (int)v[i];
	return (uint64_t)(int64_t)sum;
}

static void register_kfuncs(void)
{
	static const struct bpfrt_helper mix = {
		.name = "host_mix", .fn = host_mix,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING,
			  BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	static const struct bpfrt_helper sum = {
		.name = "host_sum", .fn = host_sum,
		.args = { BPFRT_ARG_PTR_TO_MEM, BPFRT_ARG_CONST_SIZE },
	};

	CHECK(bpfrt_kfunc_register("host_mix", &mix) >= BPFRT_KFUNC_ID_BASE, "%s",
	      bpfrt_last_error());
	CHECK(bpfrt_kfunc_register("host_sum", &sum) >= BPFRT_KFUNC_ID_BASE, "%s",
	      bpfrt_last_error());
}

ALL_ENGINES(kfuncs_called_from_bpf)
{
	struct bpfrt_object *obj;
	uint64_t *input, *output;

	register_kfuncs();
	obj = open_and_load("subprogs.bpf.o", jit);
	REQUIRE(obj);
	input = GLOBAL(obj, "input", uint64_t);
	output = GLOBAL(obj, "output", uint64_t);
	REQUIRE(input && output);
	host_calls = 0;
	*input = 4000;
	CHECK(run(obj, "call_kfuncs", jit) == 321);
	CHECK_EQ(*output, 55 * 1000 + 4321, "%llu", (unsigned long long)*output);
	CHECK_EQ(host_calls, 3, "%d host calls", host_calls);
	bpfrt_object_close(obj);
}
