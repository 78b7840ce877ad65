/* Maps under concurrency: several "program" threads using the program-side
 * ops inside RCU read sections (as the run glue will run them) while user
 * space looks up, iterates, inserts and deletes. Checks totals (no lost
 * update), that held pointers stay valid and unchanged until the read
 * section ends, and that ring buffer consumers get every record. Meant to
 * run clean under ASan and TSan too. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "core/rcu.h"
#include "maps/map.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 3
#define ITERS    60000
#define NKEYS    16

static struct bpfrt_map *create(enum bpf_map_type type, uint32_t key_size,
				uint32_t value_size, uint32_t max_entries)
{
	struct bpfrt_map *map = NULL;
	int err = bpfrt_map_create(type, "conc", key_size, value_size, max_entries, NULL, &map);

	if (err)
		tl_fail(__FILE__, __LINE__, "create: %d %s", err, bpfrt_last_error());
	return map;
}

struct worker {
	pthread_t tid;
	int id;
	struct bpfrt_map *map;
	struct bpfrt_map *map2;
	_Atomic bool *stop;
	long errors;
};

/* What a BPF program does: look up, create if missing, add atomically. */
static bool count_in(struct bpfrt_map *map, uint32_t key)
{
	uint64_t zero = 0, *p;

	p = bpfrt_map_prog_lookup(map, &key);
	if (!p) {
		long err = bpfrt_map_prog_update(map, &key, &zero, BPF_NOEXIST);

		if (err && err != -EEXIST)
			return false;
		p = bpfrt_map_prog_lookup(map, &key);
		if (!p)
			return false;
	}
	__sync_fetch_and_add(p, 1);
	return true;
}

static void *hash_worker(void *arg)
{
	struct worker *w = arg;

	for (uint32_t i = 0; i < ITERS; i++) {
		uint32_t scratch = 1000 + w->id * 100 + i % 50;
		uint64_t v = i;

		bpfrt_rcu_read_lock();
		if (!count_in(w->map, i % NKEYS))
			w->errors++;
		/* Churn: elements retired and reused under the readers. */
		bpfrt_map_prog_update(w->map, &scratch, &v, BPF_ANY);
		if (i & 1)
			bpfrt_map_prog_delete(w->map, &scratch);
		bpfrt_rcu_read_unlock();
	}
	return NULL;
}

static uint64_t sum_values(struct bpfrt_map *map, const void *key)
{
	int ncpu = bpfrt_num_possible_cpus();
	size_t n = bpfrt_map_value_buf_size(map) / 8;
	uint64_t buf[n], sum = 0;

	if (bpfrt_map_lookup_elem(map, key, buf))
		return 0;
	if (n == 1)
		return buf[0];
	for (int c = 0; c < ncpu; c++)
		sum += buf[c];
	return sum;
}

/* User space meanwhile: lookups, full iterations, inserts and deletes of
 * its own keys, until the workers are done. */
static void user_space_churn(struct bpfrt_map *map, _Atomic int *running, uint64_t *iters)
{
	size_t vsz = bpfrt_map_value_buf_size(map);
	char *val = calloc(1, vsz);
	uint32_t key, next;
	uint64_t n = 0;

	while (atomic_load(running)) {
		for (uint32_t k = 0; k < NKEYS; k++)
			sum_values(map, &k);
		key = 5000 + n % 40;
		bpfrt_map_update_elem(map, &key, val, BPF_ANY);
		key = 5000 + (n + 20) % 40;
		bpfrt_map_delete_elem(map, &key);
		if (n % 16 == 0) {
			int steps = 0;

			for (int err = bpfrt_map_get_next_key(map, NULL, &next);
			     !err && steps < 10000; steps++) {
				key = next;
				err = bpfrt_map_get_next_key(map, &key, &next);
			}
		}
		n++;
	}
	*iters = n;
	free(val);
}

struct joiner {
	struct worker *w;
	_Atomic int *running;
};

static void *join_all(void *arg)
{
	struct joiner *j = arg;

	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(j->w[t].tid, NULL);
		atomic_fetch_sub(j->running, 1);
	}
	return NULL;
}

static void run_counter_test(enum bpf_map_type type)
{
	struct bpfrt_map *map = create(type, 4, 8, 512);
	struct worker w[NTHREADS];
	_Atomic int running = NTHREADS;
	uint64_t total = 0, user_iters = 0;
	uint32_t key, next;
	int keys = 0;

	REQUIRE(map);
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ .id = t, .map = map };
		REQUIRE(pthread_create(&w[t].tid, NULL, hash_worker, &w[t]) == 0);
	}
	/* A separate joiner lets this thread keep churning until all exit. */
	struct joiner j = { w, &running };
	pthread_t jt;

	REQUIRE(pthread_create(&jt, NULL, join_all, &j) == 0);
	user_space_churn(map, &running, &user_iters);
	pthread_join(jt, NULL);

	for (int t = 0; t < NTHREADS; t++)
		CHECK(w[t].errors == 0, "thread %d: %ld failed updates", t, w[t].errors);
	for (key = 0; key < NKEYS; key++)
		total += sum_values(map, &key);
	CHECK(total == (uint64_t)NTHREADS * ITERS, "total %llu, want %llu",
	      (unsigned long long)total, (unsigned long long)NTHREADS * ITERS);
	CHECK(user_iters > 0);
	for (int err = bpfrt_map_get_next_key(map, NULL, &next); !err;
	     err = bpfrt_map_get_next_key(map, &key, &next)) {
		key = next;
		if (++keys > 1000)
			break;
	}
	CHECK(keys >= NKEYS && keys <= 512, "%d keys", keys);
	bpfrt_map_free(map);
	bpfrt_rcu_barrier();
}

TEST(hash_counters_no_lost_update)
{
	run_counter_test(BPF_MAP_TYPE_HASH);
}

TEST(percpu_hash_counters_no_lost_update)
{
	run_counter_test(BPF_MAP_TYPE_PERCPU_HASH);
}

static void *percpu_array_worker(void *arg)
{
	struct worker *w = arg;

	for (uint32_t i = 0; i < ITERS; i++) {
		uint32_t key = i % 4;
		uint64_t *p;

		bpfrt_rcu_read_lock();
		p = bpfrt_map_prog_lookup(w->map, &key);
		if (p)
			__sync_fetch_and_add(p, 1);  /* another thread may share the CPU */
		else
			w->errors++;
		bpfrt_rcu_read_unlock();
	}
	return NULL;
}

TEST(percpu_array_counters_no_lost_update)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4);
	struct worker w[NTHREADS];
	uint64_t total = 0;

	REQUIRE(map);
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ .id = t, .map = map };
		REQUIRE(pthread_create(&w[t].tid, NULL, percpu_array_worker, &w[t]) == 0);
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(w[t].tid, NULL);
		CHECK(w[t].errors == 0);
	}
	for (uint32_t key = 0; key < 4; key++)
		total += sum_values(map, &key);
	CHECK(total == (uint64_t)NTHREADS * ITERS, "total %llu", (unsigned long long)total);
	bpfrt_map_free(map);
}

/* A value whose halves must agree: a reader holding an element sees a torn
 * or foreign value only if the element was reused too early. */
struct pair {
	uint64_t key;
	uint64_t a;
	uint64_t b;
};

static void *pair_reader(void *arg)
{
	struct worker *w = arg;

	for (uint32_t n = 0; !atomic_load(w->stop); n++) {
		uint32_t key = n % 8;
		struct pair *p;

		bpfrt_rcu_read_lock();
		p = bpfrt_map_prog_lookup(w->map, &key);
		if (p) {
			struct pair first = *p;

			for (int spin = 0; spin < 50; spin++) {
				struct pair again = *p;

				/* Same element, unchanged: replacements link a
				 * new element instead of writing this one. */
				if (again.key != key || again.a != again.b ||
				    again.a != first.a) {
					w->errors++;
					break;
				}
			}
		}
		bpfrt_rcu_read_unlock();
	}
	return NULL;
}

TEST(hash_held_elements_survive_replacement)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_HASH, 4, sizeof(struct pair), 16);
	_Atomic bool stop = false;
	struct worker w[2];

	REQUIRE(map);
	for (uint32_t k = 0; k < 8; k++) {
		struct pair v = { k, 0, 0 };

		REQUIRE(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST) == 0);
	}
	for (int t = 0; t < 2; t++) {
		w[t] = (struct worker){ .id = t, .map = map, .stop = &stop };
		REQUIRE(pthread_create(&w[t].tid, NULL, pair_reader, &w[t]) == 0);
	}
	/* User space replaces values (new elements each time) and deletes and
	 * re-inserts keys: elements recycle only after grace periods. */
	for (uint64_t i = 1; i < 20000; i++) {
		uint32_t k = i % 8;
		struct pair v = { k, i, i };

		CHECK(bpfrt_map_update_elem(map, &k, &v, BPF_ANY) == 0);
		if (i % 5 == 0) {
			CHECK(bpfrt_map_delete_elem(map, &k) == 0);
			CHECK(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST) == 0);
		}
	}
	atomic_store(&stop, true);
	for (int t = 0; t < 2; t++) {
		pthread_join(w[t].tid, NULL);
		CHECK(w[t].errors == 0, "reader %d saw a reused element %ld times", t, w[t].errors);
	}
	bpfrt_map_free(map);
}

static void *lru_worker(void *arg)
{
	struct worker *w = arg;
	uint32_t seed = 12345 + w->id;

	for (int i = 0; i < ITERS / 2; i++) {
		uint32_t key;
		uint64_t v = i;

		seed = seed * 1103515245 + 12345;
		key = (seed >> 8) % 512;
		bpfrt_rcu_read_lock();
		if (!bpfrt_map_prog_lookup(w->map, &key) &&
		    bpfrt_map_prog_update(w->map, &key, &v, BPF_ANY))
			w->errors++;
		bpfrt_rcu_read_unlock();
	}
	return NULL;
}

TEST(lru_hash_concurrent_inserts_stay_bounded)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_LRU_HASH, 4, 8, 64);
	struct worker w[NTHREADS];
	uint32_t key, next;
	int keys = 0;

	REQUIRE(map);
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ .id = t, .map = map };
		REQUIRE(pthread_create(&w[t].tid, NULL, lru_worker, &w[t]) == 0);
	}
	for (int i = 0; i < 2000; i++) {
		key = i % 512;
		bpfrt_map_delete_elem(map, &key);
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(w[t].tid, NULL);
		CHECK(w[t].errors == 0, "thread %d: %ld failed inserts", t, w[t].errors);
	}
	for (int err = bpfrt_map_get_next_key(map, NULL, &next); !err;
	     err = bpfrt_map_get_next_key(map, &key, &next)) {
		key = next;
		if (++keys > 1000)
			break;
	}
	CHECK(keys > 0 && keys <= 64, "%d keys", keys);
	bpfrt_map_free(map);
}

/* ---- prog array: slots swapped and old programs freed under readers ---- */

#define FAKE_MAGIC 0x5eedf00dcafe1234ull

/* A zeroed program with code (trusted, of no kind: every slot takes it;
 * slots take loaded programs only) that only the workers look into. */
struct fake_prog {
	struct bpfrt_prog prog;
	uint64_t magic;
};

static struct bpf_insn fake_code[1];

static void *tail_caller(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(w->stop)) {
		bpfrt_rcu_read_lock();
		struct fake_prog *p = (struct fake_prog *)bpfrt_prog_array_get(w->map, 0);

		/* "Running" it: ASan reports a use after free here if the
		 * slot's old program were freed too early. */
		for (int i = 0; p && i < 20; i++)
			if (__atomic_load_n(&p->magic, __ATOMIC_RELAXED) != FAKE_MAGIC)
				w->errors++;
		bpfrt_rcu_read_unlock();
	}
	return NULL;
}

TEST(prog_array_swap_under_tail_calls)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 2);
	_Atomic bool stop = false;
	struct worker w[2];
	struct fake_prog *cur = NULL;

	REQUIRE(map);
	for (int t = 0; t < 2; t++) {
		w[t] = (struct worker){ .id = t, .map = map, .stop = &stop };
		REQUIRE(pthread_create(&w[t].tid, NULL, tail_caller, &w[t]) == 0);
	}
	for (int i = 0; i < 2000; i++) {
		struct fake_prog *next = calloc(1, sizeof(*next));

		REQUIRE(next);
		next->prog.insns = fake_code;
		next->prog.insn_cnt = 1;
		next->prog.loaded = true;
		next->magic = FAKE_MAGIC;
		CHECK(bpfrt_map_update_prog(map, 0, (struct bpfrt_prog *)next) == 0);
		/* The update waited for a grace period: nobody runs cur. */
		if (cur) {
			cur->magic = 0;
			free(cur);
		}
		cur = next;
		if (i % 7 == 0) {
			CHECK(bpfrt_map_delete_prog(map, 0) == 0);
			cur->magic = 0;
			free(cur);
			cur = NULL;
		}
	}
	atomic_store(&stop, true);
	for (int t = 0; t < 2; t++) {
		pthread_join(w[t].tid, NULL);
		CHECK(w[t].errors == 0, "caller %d saw a freed program", t);
	}
	/* the slot holds a use of cur: the map goes first */
	bpfrt_map_free(map);
	free(cur);
}

/* ---- ring buffer: two producers, one consumer ---- */

#define RB_RECORDS 20000

struct rb_rec {
	uint32_t producer;
	uint32_t seq;
	uint32_t pad[4];
};

struct rb_consumer {
	uint32_t next_seq[2];
	long bad;
	long received;
};

static void *rb_producer(void *arg)
{
	struct worker *w = arg;

	for (uint32_t seq = 0; seq < RB_RECORDS;) {
		struct rb_rec rec = { .producer = (uint32_t)w->id, .seq = seq };
		bool ok;

		bpfrt_rcu_read_lock();
		if (seq & 1) {
			ok = bpfrt_ringbuf_output(w->map, &rec, sizeof(rec), 0) == 0;
		} else {
			struct rb_rec *r = bpfrt_ringbuf_reserve(w->map, sizeof(rec), 0);

			ok = r != NULL;
			if (r) {
				*r = rec;
				bpfrt_ringbuf_submit(r, 0);
			}
		}
		bpfrt_rcu_read_unlock();
		if (ok)
			seq++;
		else
			sched_yield();  /* full: let the consumer catch up */
	}
	return NULL;
}

static int rb_receive(void *ctx, void *data, size_t len)
{
	struct rb_consumer *c = ctx;
	struct rb_rec *r = data;

	if (len != sizeof(*r) || r->producer > 1 || r->seq != c->next_seq[r->producer])
		c->bad++;
	else
		c->next_seq[r->producer]++;
	c->received++;
	return 0;
}

TEST(ringbuf_two_producers_one_consumer)
{
	struct bpfrt_map *rb = create(BPF_MAP_TYPE_RINGBUF, 0, 0, 16384);
	struct rb_consumer c = { { 0 } };
	struct worker w[2];
	int idle = 0;

	REQUIRE(rb);
	for (int t = 0; t < 2; t++) {
		w[t] = (struct worker){ .id = t, .map = rb };
		REQUIRE(pthread_create(&w[t].tid, NULL, rb_producer, &w[t]) == 0);
	}
	while (c.received < 2 * RB_RECORDS && idle < 500) {
		int n = bpfrt_ringbuf_poll(rb, rb_receive, &c, 10);

		REQUIRE(n >= 0);
		idle = n ? 0 : idle + 1;
	}
	for (int t = 0; t < 2; t++)
		pthread_join(w[t].tid, NULL);
	bpfrt_ringbuf_consume(rb, rb_receive, &c);
	CHECK(c.bad == 0, "%ld records out of order or malformed", c.bad);
	CHECK(c.received == 2 * RB_RECORDS, "received %ld", c.received);
	CHECK(c.next_seq[0] == RB_RECORDS && c.next_seq[1] == RB_RECORDS);
	CHECK(bpfrt_ringbuf_query(rb, BPF_RB_AVAIL_DATA) == 0);
	bpfrt_map_free(rb);
}

/* ---- hash maps at max_entries: only a new key may fail, with -E2BIG ---- */

#define FULL_MAX    16     /* as the programs' maps in test_progs_concurrency */
#define FULL_ROUNDS 100000

struct full_updater {
	pthread_t tid;
	int id;
	struct bpfrt_map *map;
	_Atomic bool *stop;
	_Atomic int *ready;   /* updaters that have updated once */
	long updates, e2big, wrong;
	long last_wrong;
};

/* Keys 0..FULL_MAX-2 are always present: updates of them with every flag,
 * from programs (in a read section) and user space alternately, may only
 * succeed (-EEXIST for BPF_NOEXIST). The value is the key. */
static void *full_updater_main(void *arg)
{
	static const uint64_t flags[] = { BPF_ANY, BPF_EXIST, BPF_NOEXIST };
	struct full_updater *u = arg;
	uint64_t *val = calloc(1, bpfrt_map_value_buf_size(u->map));

	if (!val) {
		u->wrong++;
		return NULL;
	}
	for (uint64_t i = 0; !atomic_load(u->stop); i++) {
		uint32_t key = (uint32_t)((i * 7 + u->id) % (FULL_MAX - 1));
		uint64_t f = flags[i % 3];
		long err;

		val[0] = key;
		if (i & 1) {
			bpfrt_rcu_read_lock();
			err = bpfrt_map_prog_update(u->map, &key, val, f);
			bpfrt_rcu_read_unlock();
		} else {
			err = bpfrt_map_update_elem(u->map, &key, val, f);
		}
		if (err == -E2BIG) {
			u->e2big++;
		} else if (err != (f == BPF_NOEXIST ? -EEXIST : 0)) {
			u->wrong++;
			u->last_wrong = err;
		}
		if (!u->updates++)
			atomic_fetch_add(u->ready, 1);
	}
	free(val);
	return NULL;
}

static int count_keys_u32(struct bpfrt_map *map, uint32_t *keys, int max)
{
	uint32_t key, next;
	int n = 0;

	for (int err = bpfrt_map_get_next_key(map, NULL, &next); !err && n < max;
	     err = bpfrt_map_get_next_key(map, &key, &next))
		keys[n++] = key = next;
	return n;
}

static long full_insert(struct bpfrt_map *map, uint32_t key, uint64_t *val, uint64_t flags,
			bool from_prog)
{
	long err;

	val[0] = key;
	if (!from_prog)
		return bpfrt_map_update_elem(map, &key, val, flags);
	bpfrt_rcu_read_lock();
	err = bpfrt_map_prog_update(map, &key, val, flags);
	bpfrt_rcu_read_unlock();
	return err;
}

/* A map one key short of max_entries while NTHREADS threads update its
 * present keys: this thread fills the last slot (must always work), tries
 * another new key in the now full map (must fail with -E2BIG, except an
 * LRU map, not tried: it would evict a key the updaters rely on), and
 * empties the slot again. The lost race of the bug this guards against:
 * an update of a present key held the last slot while it filled its
 * element, and a concurrent insert of a new key got -E2BIG. */
static void run_full_map_test(enum bpf_map_type type)
{
	struct bpfrt_map *map = create(type, 4, 8, FULL_MAX);
	bool lru = type == BPF_MAP_TYPE_LRU_HASH;
	struct full_updater u[NTHREADS];
	_Atomic bool stop = false;
	_Atomic int ready = 0;
	long insert_bad = 0, full_bad = 0, last_insert = 0, last_full = 0, updates = 0;
	uint64_t *val, *probe;
	uint32_t key, keys[4 * FULL_MAX];
	int n, rounds = 0;
	struct timespec t0, t;

	REQUIRE(map);
	val = calloc(1, bpfrt_map_value_buf_size(map));
	probe = calloc(1, bpfrt_map_value_buf_size(map));
	REQUIRE(val && probe);
	for (key = 0; key < FULL_MAX - 1; key++)
		REQUIRE(full_insert(map, key, val, BPF_NOEXIST, false) == 0);
	for (int i = 0; i < NTHREADS; i++) {
		u[i] = (struct full_updater){ .id = i, .map = map, .stop = &stop,
					      .ready = &ready };
		REQUIRE(pthread_create(&u[i].tid, NULL, full_updater_main, &u[i]) == 0);
	}
	/* Under load the updaters may start late: the rounds need them. */
	while (atomic_load(&ready) < NTHREADS)
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; rounds < FULL_ROUNDS; rounds++) {
		bool from_prog = rounds & 1;
		uint32_t last = FULL_MAX - 1, extra = FULL_MAX + rounds % 64;
		long err;

		err = full_insert(map, last, val, rounds & 2 ? BPF_ANY : BPF_NOEXIST, from_prog);
		if (err) {
			insert_bad++;
			last_insert = err;
			continue;
		}
		if (!lru) {
			err = full_insert(map, extra, val, rounds & 2 ? BPF_ANY : BPF_NOEXIST,
					  !from_prog);
			if (err != -E2BIG || bpfrt_map_lookup_elem(map, &extra, probe) != -ENOENT) {
				full_bad++;
				last_full = err;
			}
		}
		CHECK(bpfrt_map_delete_elem(map, &last) == 0, "round %d", rounds);
		/* Bounded time under sanitizers and load. */
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 3)
			break;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(u[i].tid, NULL);
		CHECK(u[i].e2big == 0, "updater %d: %ld of %ld updates of present keys got -E2BIG",
		      i, u[i].e2big, u[i].updates);
		CHECK(u[i].wrong == 0, "updater %d: %ld updates failed, last with %ld", i,
		      u[i].wrong, u[i].last_wrong);
		updates += u[i].updates;
	}
	CHECK(insert_bad == 0, "%ld of %d inserts into the last free slot failed, last with %ld",
	      insert_bad, rounds, last_insert);
	CHECK(full_bad == 0, "%ld of %d inserts into the full map did not fail with -E2BIG "
	      "(last %ld)", full_bad, rounds, last_full);
	CHECK(updates > 0 && rounds > 100, "%ld updates, %d rounds", updates, rounds);

	/* Every present key survived with its value; nothing else is left. */
	n = count_keys_u32(map, keys, 4 * FULL_MAX);
	CHECK(n == FULL_MAX - 1, "%d keys", n);
	for (key = 0; key < FULL_MAX - 1; key++)
		CHECK(bpfrt_map_lookup_elem(map, &key, val) == 0 &&
		      (type == BPF_MAP_TYPE_PERCPU_HASH || val[0] == key), "key %u", key);

	/* Single-threaded, exactly: full means -E2BIG for a new key (an LRU
	 * map evicts instead), never for a present one. */
	key = FULL_MAX - 1;
	CHECK(full_insert(map, key, val, BPF_NOEXIST, false) == 0);
	for (key = FULL_MAX; key < FULL_MAX + 8; key++)
		CHECK(full_insert(map, key, val, BPF_ANY, key & 1) == (lru ? 0 : -E2BIG),
		      "new key %u", key);
	n = count_keys_u32(map, keys, 4 * FULL_MAX);
	CHECK(n == FULL_MAX, "%d keys", n);
	for (int i = 0; i < n; i++)
		CHECK(full_insert(map, keys[i], val, BPF_EXIST, i & 1) == 0, "key %u", keys[i]);
	printf("# %s: %d rounds, %ld concurrent updates of present keys\n",
	       lru ? "lru_hash" : type == BPF_MAP_TYPE_HASH ? "hash" : "percpu_hash",
	       rounds, updates);
	free(val);
	free(probe);
	bpfrt_map_free(map);
	bpfrt_rcu_barrier();
}

TEST(hash_full_map_e2big_only_for_new_keys)
{
	run_full_map_test(BPF_MAP_TYPE_HASH);
}

TEST(percpu_hash_full_map_e2big_only_for_new_keys)
{
	run_full_map_test(BPF_MAP_TYPE_PERCPU_HASH);
}

TEST(lru_hash_full_map_updates_never_evict_or_fail)
{
	run_full_map_test(BPF_MAP_TYPE_LRU_HASH);
}
