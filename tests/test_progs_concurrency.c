/* Clang-built programs (tests/progs/concurrency.bpf.c) run on several
 * threads at once, half in the JIT and half in the interpreter, against
 * the same hash, per-CPU hash and per-CPU array, while user space looks
 * up, walks and deletes. Counters must come out exact: no update lost. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NR_KEYS     16      /* as in concurrency.bpf.c */
#define NR_WORKERS  4
#define RUNS        50000   /* per worker, a multiple of NR_KEYS */

struct shared {
	struct bpfrt_object *obj;
	struct bpfrt_prog *bump, *churn;
	struct bpfrt_map *counts, *pcpu_counts, *pcpu_slots, *churn_map;
	atomic_int workers_left;
	atomic_int run_errors;
	atomic_int bad_returns;
	/* what the user-space side saw */
	atomic_long reader_errors;
	long reader_passes, deletes, torn_seen;
	char why[256];
};

struct worker {
	struct shared *s;
	int id;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	enum bpfrt_exec_mode mode = w->id % 2 ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT;

	for (uint64_t i = 0; i < RUNS; i++) {
		uint64_t args[1] = { (uint64_t)w->id * RUNS + i }, r0 = 0;

		if (bpfrt_prog_run(s->bump, mode, (uintptr_t)args, sizeof(args), &r0))
			atomic_fetch_add(&s->run_errors, 1);
		else if (r0)
			atomic_fetch_add(&s->bad_returns, 1);
		if (bpfrt_prog_run(s->churn, mode, (uintptr_t)args, sizeof(args), &r0))
			atomic_fetch_add(&s->run_errors, 1);
	}
	atomic_fetch_sub(&s->workers_left, 1);
	return NULL;
}

static void reader_fail(struct shared *s, const char *what, uint32_t key, long v)
{
	if (!atomic_fetch_add(&s->reader_errors, 1))
		snprintf(s->why, sizeof(s->why), "%s: key %u value %ld", what, key, v);
}

/* Sum of a per-CPU value buffer. */
static uint64_t cpu_sum(const uint64_t *vals, int ncpus)
{
	uint64_t sum = 0;

	for (int c = 0; c < ncpus; c++)
		sum += vals[c];
	return sum;
}

/* User space while the programs run: every counter only grows (per-CPU
 * ones summed over CPUs), get_next_key walks stay within the key range,
 * and churn keys are deleted behind the programs' backs. */
static void *reader_main(void *arg)
{
	struct shared *s = arg;
	int ncpus = bpfrt_num_possible_cpus();
	uint64_t last[NR_KEYS] = { 0 }, last_pcpu[NR_KEYS] = { 0 }, v;
	uint64_t *vals = calloc((size_t)ncpus, 8);
	struct { uint64_t seq, check; } cv;
	uint32_t key, next;
	int err;

	if (!vals)
		return NULL;
	while (atomic_load(&s->workers_left) > 0) {
		int walked = 0;

		for (err = bpfrt_map_get_next_key(s->counts, NULL, &next); !err;
		     err = bpfrt_map_get_next_key(s->counts, &key, &next)) {
			key = next;
			if (key >= NR_KEYS || ++walked > NR_KEYS) {
				reader_fail(s, "walk of counts", key, walked);
				break;
			}
			if (bpfrt_map_lookup_elem(s->counts, &key, &v))
				reader_fail(s, "lookup of a walked key", key, -1);
			else if (v < last[key])
				reader_fail(s, "hash counter went back", key, (long)v);
			else
				last[key] = v;
		}
		for (key = 0; key < NR_KEYS; key++) {
			err = bpfrt_map_lookup_elem(s->pcpu_counts, &key, vals);
			if (err == -ENOENT)
				continue;
			v = cpu_sum(vals, ncpus);
			if (err || v < last_pcpu[key])
				reader_fail(s, "per-CPU hash counter went back", key, (long)v);
			else
				last_pcpu[key] = v;
		}
		for (err = bpfrt_map_get_next_key(s->churn_map, NULL, &next); !err;
		     err = bpfrt_map_get_next_key(s->churn_map, &key, &next)) {
			key = next;
			if (key >= 48) {
				reader_fail(s, "walk of churn", key, 0);
				break;
			}
			/* A value may mix two writes when an update had to reuse
			 * an element before its grace period (Linux's
			 * preallocated maps do the same): counted, not failed. */
			if (!bpfrt_map_lookup_elem(s->churn_map, &key, &cv) && cv.seq != ~cv.check)
				s->torn_seen++;
			if (key % 3 == 0 && bpfrt_map_delete_elem(s->churn_map, &key) == 0)
				s->deletes++;
		}
		s->reader_passes++;
	}
	free(vals);
	return NULL;
}

static struct bpfrt_map *map(struct shared *s, const char *name)
{
	struct bpfrt_map *m = bpfrt_object_find_map(s->obj, name);

	if (!m)
		tl_fail(__FILE__, __LINE__, "no map %s: %s", name, bpfrt_last_error());
	return m;
}

static long global_long(struct shared *s, const char *name)
{
	long *p = bpfrt_object_global(s->obj, name, NULL);

	return p ? *p : -1;
}

TEST(threads_in_both_engines_lose_no_update)
{
	static struct shared s;
	struct worker w[NR_WORKERS];
	pthread_t t[NR_WORKERS], reader;
	int ncpus = bpfrt_num_possible_cpus();
	const uint64_t per_key = (uint64_t)NR_WORKERS * RUNS / NR_KEYS;
	uint64_t *vals, v;
	uint32_t key;

	memset(&s, 0, sizeof(s));
	REQUIRE(bpfrt_object_open(tl_prog_path("concurrency.bpf.o"), NULL, &s.obj) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(bpfrt_object_load(s.obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = true }) == 0, "%s",
		bpfrt_last_error());
	s.bump = bpfrt_object_find_prog(s.obj, "bump_counters");
	s.churn = bpfrt_object_find_prog(s.obj, "churn_write");
	s.counts = map(&s, "counts");
	s.pcpu_counts = map(&s, "pcpu_counts");
	s.pcpu_slots = map(&s, "pcpu_slots");
	s.churn_map = map(&s, "churn");
	vals = calloc((size_t)ncpus, 8);
	REQUIRE(s.bump && s.churn && s.counts && s.pcpu_counts && s.pcpu_slots && s.churn_map &&
		vals);

	atomic_store(&s.workers_left, NR_WORKERS);
	REQUIRE(pthread_create(&reader, NULL, reader_main, &s) == 0);
	for (int i = 0; i < NR_WORKERS; i++) {
		w[i] = (struct worker){ .s = &s, .id = i };
		REQUIRE(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
	}
	for (int i = 0; i < NR_WORKERS; i++)
		pthread_join(t[i], NULL);
	pthread_join(reader, NULL);

	CHECK(atomic_load(&s.run_errors) == 0, "%d run errors: %s", atomic_load(&s.run_errors),
	      bpfrt_last_error());
	CHECK(atomic_load(&s.bad_returns) == 0, "%d runs returned non-zero",
	      atomic_load(&s.bad_returns));
	CHECK(atomic_load(&s.reader_errors) == 0, "%ld: %s", atomic_load(&s.reader_errors), s.why);
	CHECK(global_long(&s, "failures") == 0, "%ld", global_long(&s, "failures"));
	CHECK(s.reader_passes > 0);

	/* Exact totals: every run added 1 to its key in each map. */
	for (key = 0; key < NR_KEYS; key++) {
		CHECK(bpfrt_map_lookup_elem(s.counts, &key, &v) == 0 && v == per_key,
		      "hash key %u: %llu, want %llu", key, (unsigned long long)v,
		      (unsigned long long)per_key);
		CHECK(bpfrt_map_lookup_elem(s.pcpu_counts, &key, vals) == 0 &&
		      cpu_sum(vals, ncpus) == per_key, "per-CPU hash key %u: %llu", key,
		      (unsigned long long)cpu_sum(vals, ncpus));
		CHECK(bpfrt_map_lookup_elem(s.pcpu_slots, &key, vals) == 0 &&
		      cpu_sum(vals, ncpus) == per_key, "per-CPU array key %u: %llu", key,
		      (unsigned long long)cpu_sum(vals, ncpus));
	}
	/* The churn map ends within its key range and max_entries. */
	int n = 0;
	uint32_t next;
	for (int err = bpfrt_map_get_next_key(s.churn_map, NULL, &next); !err && n <= 64;
	     err = bpfrt_map_get_next_key(s.churn_map, &key, &next)) {
		key = next;
		CHECK(key < 48);
		n++;
	}
	CHECK(n <= 48, "%d churn keys", n);
	printf("# %ld reader passes, %ld churn keys deleted by user space, torn churn values "
	       "seen: %ld by user space, %ld by programs\n", s.reader_passes, s.deletes,
	       s.torn_seen, global_long(&s, "torn"));
	free(vals);
	bpfrt_object_close(s.obj);
}
