/* PERF_EVENT_ARRAY with bpf_perf_event_output and the perf buffer
 * consumer (bpfrt/perf_buffer.h), end to end in every engine: samples in
 * order with Linux's sizes, the helper's error codes, lost records, many
 * producer threads with a consumer polling, and the consumer's own errors. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct event {
	uint64_t seq;
	uint32_t tag;
};

struct seen {
	int samples, short_samples, bad;
	uint64_t lost;
	uint8_t *seqs;       /* seqs[seq] counts each sequence number seen */
	size_t nseq;
};

static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct seen *s = ctx;

	if (cpu < 0 || cpu >= bpfrt_num_possible_cpus())
		s->bad++;
	if (size == 12) {
		struct event e = { 0 };

		memcpy(&e, data, 12);  /* seq and tag: the record's 12 bytes */
		if (e.tag == 0xabc && e.seq < s->nseq) {
			s->seqs[e.seq]++;
			s->samples++;
		} else if (!memcmp(data, "\1\2\3\4\5\0\0\0\0\0\0\0", 12)) {
			s->short_samples++;
		} else {
			s->bad++;
		}
	} else {
		s->bad++;
	}
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	((struct seen *)ctx)->lost += cnt;
}

static struct bpfrt_object *load(bool jit)
{
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	if (bpfrt_object_open(tl_prog_path("perf_output.bpf.o"), NULL, &obj) ||
	    bpfrt_object_load(obj, &lo)) {
		tl_fail(__FILE__, __LINE__, "load: %s", bpfrt_last_error());
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

static int run(struct bpfrt_object *obj, const char *prog, bool jit)
{
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));

	if (bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, prog), &ro)) {
		tl_fail(__FILE__, __LINE__, "run %s: %s", prog, bpfrt_last_error());
		return 1;
	}
	return (int)ro.retval;
}

ALL_ENGINES(samples_errors_and_lost_records)
{
	struct bpfrt_object *obj = load(jit);
	struct seen s = { .nseq = 1024 };
	struct bpfrt_perf_buffer *pb = NULL;
	struct bpfrt_map *events;
	size_t sz = 0;
	long *rc;
	int outputs = 0, nospc = 0, n;

	REQUIRE(obj);
	s.seqs = calloc(s.nseq, 1);
	events = bpfrt_object_find_map(obj, "events");
	rc = bpfrt_object_global(obj, "rc", &sz);
	REQUIRE(events && rc && s.seqs);
	CHECK_EQ(bpfrt_map_max_entries(events), (uint32_t)bpfrt_num_possible_cpus(),
		 "max_entries 0 in .maps is the CPU count");
	CHECK_EQ(bpfrt_map_key_size(events), 4);

	CHECK_EQ(run(obj, "perf_output", jit), -ENOENT, "no perf buffer yet");
	REQUIRE(bpfrt_perf_buffer_new(events, 1, on_sample, on_lost, &s, NULL, &pb) == 0, "%s",
		bpfrt_last_error());
	CHECK_EQ(bpfrt_perf_buffer_new(events, 1, on_sample, on_lost, &s, NULL,
				       &(struct bpfrt_perf_buffer *){ NULL }), -EBUSY);
	CHECK_EQ(run(obj, "perf_output", jit), 0);
	outputs++;
	CHECK_EQ(rc[1], -EINVAL, "flags past the index");
	CHECK_EQ(rc[2], -E2BIG, "index past max_entries");
	CHECK_EQ(run(obj, "perf_output_short", jit), 0);
	CHECK_EQ(bpfrt_perf_buffer_poll(pb, 1000), 2);
	CHECK_EQ(s.samples, 1);
	CHECK_EQ(s.short_samples, 1);
	CHECK_EQ(bpfrt_perf_buffer_poll(pb, 0), 0, "nothing left: a timeout");

	/* one page per CPU holds 256 records of 16 bytes: the rest are lost.
	 * The thread stays on one CPU for the whole batch most of the time;
	 * a migration only spreads the records over two rings. */
	for (int i = 0; i < 400; i++) {
		int r = run(obj, "perf_output", jit);

		outputs++;
		nospc += r == -ENOSPC;
		CHECK(r == 0 || r == -ENOSPC, "%d", r);
	}
	n = bpfrt_perf_buffer_consume(pb);
	CHECK(n > 0);
	CHECK(nospc > 0, "a 4 KiB ring took 400 records");
	CHECK_EQ(s.lost, (uint64_t)nospc, "every -ENOSPC is reported lost");
	CHECK_EQ((uint64_t)s.samples + s.lost, (uint64_t)outputs);
	for (int i = 0; i < outputs; i++)
		CHECK(s.seqs[i] <= 1, "seq %d seen %d times", i, s.seqs[i]);
	CHECK_EQ(s.bad, 0);
	bpfrt_perf_buffer_free(pb);
	CHECK_EQ(run(obj, "perf_output", jit), -ENOENT, "the perf buffer is gone");
	free(s.seqs);
	bpfrt_object_close(obj);
}

TEST(consumer_argument_errors)
{
	struct bpfrt_map *arr = NULL, *pea = NULL;
	struct bpfrt_perf_buffer *pb = NULL;
	struct seen s = { 0 };

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 4, 2, NULL, &arr) == 0);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "p", 4, 4, 2, NULL, &pea) == 0);
	CHECK_EQ(bpfrt_perf_buffer_new(arr, 1, on_sample, NULL, &s, NULL, &pb), -EINVAL);
	CHECK_EQ(bpfrt_perf_buffer_new(pea, 3, on_sample, NULL, &s, NULL, &pb), -EINVAL);
	CHECK_EQ(bpfrt_perf_buffer_new(pea, 1, NULL, NULL, &s, NULL, &pb), -EINVAL);
	CHECK(!pb);
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "p", 4, 8, 2, NULL,
				  &(struct bpfrt_map *){ NULL }), -EINVAL);
	CHECK_EQ(bpfrt_map_update_elem(pea, &(uint32_t){ 0 }, &(uint32_t){ 3 }, 0), -EOPNOTSUPP);
	bpfrt_map_free(arr);
	bpfrt_map_free(pea);
}

/* Producers on four threads (any of them may share a CPU, hence a ring)
 * while the consumer polls: every output is a sample or counted lost,
 * none seen twice. */
struct prod_arg {
	struct bpfrt_object *obj;
	int n, nospc;
	int *finished;
};

static void *producer(void *p)
{
	struct prod_arg *a = p;
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = BPFRT_EXEC_JIT);
	struct bpfrt_prog *prog = bpfrt_object_find_prog(a->obj, "perf_output");

	for (int i = 0; i < a->n; i++)
		if (!bpfrt_prog_test_run_opts(prog, &ro) && (int)ro.retval == -ENOSPC)
			a->nospc++;
	__atomic_add_fetch(a->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(producers_on_many_threads_with_a_polling_consumer)
{
	struct bpfrt_object *obj = load(true);
	struct seen s = { .nseq = 4 * 5000 };
	struct bpfrt_perf_buffer *pb = NULL;
	struct prod_arg args[4];
	pthread_t th[4];
	int nospc = 0, finished = 0;

	REQUIRE(obj);
	s.seqs = calloc(s.nseq, 1);
	REQUIRE(bpfrt_perf_buffer_new(bpfrt_object_find_map(obj, "events"), 4, on_sample,
				      on_lost, &s, NULL, &pb) == 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct prod_arg){ obj, 5000, 0, &finished };
		REQUIRE(pthread_create(&th[i], NULL, producer, &args[i]) == 0);
	}
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < 4)
		bpfrt_perf_buffer_poll(pb, 10);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	bpfrt_perf_buffer_consume(pb);
	for (int i = 0; i < 4; i++)
		nospc += args[i].nospc;
	CHECK_EQ(s.lost, (uint64_t)nospc);
	CHECK_EQ((uint64_t)s.samples + s.lost, 20000);
	for (size_t i = 0; i < s.nseq; i++)
		CHECK(s.seqs[i] <= 1, "seq %zu seen %d times", i, s.seqs[i]);
	CHECK_EQ(s.bad, 0);
	bpfrt_perf_buffer_free(pb);
	free(s.seqs);
	bpfrt_object_close(obj);
}
