/* BPF_MAP_TYPE_USER_RINGBUF end to end: user space produces through
 * bpfrt/user_ringbuf.h (from another thread, blocking for space), a BPF C
 * program (tests/progs/user_ringbuf.bpf.c) drains with
 * bpf_user_ringbuf_drain and reads each sample through a dynptr; the
 * producer API's errors; the drain's count and stop rules; ringbuf and
 * local dynptrs from BPF C. Every engine. */
#define _GNU_SOURCE
#include "bpfrt/bpfrt.h"
#include "testlib.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sample {
	uint64_t seq;
	uint64_t value;
};

struct globals {
	uint64_t *total, *count, *next_seq, *bad_order, *read_errors, *short_samples;
	long *drained, *echo_errors;
	uint32_t *stop_after;
};

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

#define G(obj, name, type) ((type *)global(obj, name, sizeof(type)))

static struct bpfrt_object *load(bool jit, struct globals *g)
{
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	if (bpfrt_object_open(tl_prog_path("user_ringbuf.bpf.o"), NULL, &obj) ||
	    bpfrt_object_load(obj, &lo)) {
		tl_fail(__FILE__, __LINE__, "user_ringbuf.bpf.o (%s): %s", jit ? "jit" : "interp",
			bpfrt_last_error());
		bpfrt_object_close(obj);
		return NULL;
	}
	g->total = G(obj, "total", uint64_t);
	g->count = G(obj, "count", uint64_t);
	g->next_seq = G(obj, "next_seq", uint64_t);
	g->bad_order = G(obj, "bad_order", uint64_t);
	g->read_errors = G(obj, "read_errors", uint64_t);
	g->short_samples = G(obj, "short_samples", uint64_t);
	g->drained = G(obj, "drained", long);
	g->echo_errors = G(obj, "echo_errors", long);
	g->stop_after = G(obj, "stop_after", uint32_t);
	if (!g->total || !g->count || !g->next_seq || !g->bad_order || !g->read_errors ||
	    !g->short_samples || !g->drained || !g->echo_errors || !g->stop_after) {
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

static uint64_t run(struct bpfrt_object *obj, const char *name, bool jit)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, name);
	BPFRT_OPTS(bpfrt_test_run_opts, o, .mode = tl_exec_mode(jit));
	int err;

	if (!p) {
		tl_fail(__FILE__, __LINE__, "no program %s", name);
		return ~0ull;
	}
	err = bpfrt_prog_test_run_opts(p, &o);
	if (err) {
		tl_fail(__FILE__, __LINE__, "run %s: %d %s", name, err, bpfrt_last_error());
		return ~0ull;
	}
	return o.retval;
}

static struct bpfrt_user_ring_buffer *producer_for(struct bpfrt_object *obj)
{
	struct bpfrt_user_ring_buffer *urb = NULL;
	struct bpfrt_map *map = bpfrt_object_find_map(obj, "urb");

	if (!map || bpfrt_user_ring_buffer_new(map, NULL, &urb)) {
		tl_fail(__FILE__, __LINE__, "user ring buffer: %s", bpfrt_last_error());
		return NULL;
	}
	return urb;
}

static bool put(struct bpfrt_user_ring_buffer *urb, uint64_t seq, uint64_t value, bool discard)
{
	struct sample *s = bpfrt_user_ring_buffer_reserve(urb, sizeof(*s));

	if (!s)
		return false;
	s->seq = seq;
	s->value = value;
	if (discard)
		bpfrt_user_ring_buffer_discard(urb, s);
	else
		bpfrt_user_ring_buffer_submit(urb, s);
	return true;
}

/* ---- a producer thread, the program draining ----------------------------- */

#define RECORDS 20000

struct producer {
	struct bpfrt_user_ring_buffer *urb;
	uint64_t sum;           /* of the values submitted */
	int failures;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint64_t seq = 0;

	/* every 5th reservation is discarded: drains skip it */
	for (uint64_t i = 0; seq < RECORDS; i++) {
		struct sample *s = bpfrt_user_ring_buffer_reserve_blocking(p->urb, sizeof(*s), -1);
		bool discard = i % 5 == 4;

		if (!s) {
			p->failures++;
			break;
		}
		s->seq = discard ? ~0ull : seq;
		s->value = discard ? 1000000 : seq * 3 + 1;
		if (discard) {
			bpfrt_user_ring_buffer_discard(p->urb, s);
			continue;
		}
		p->sum += s->value;
		seq++;
		bpfrt_user_ring_buffer_submit(p->urb, s);
	}
	return NULL;
}

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

ALL_ENGINES(user_ringbuf_thread_produces_program_drains)
{
	struct globals g;
	struct bpfrt_object *obj = load(jit, &g);
	struct producer p = { 0 };
	uint64_t drained = 0;
	int64_t give_up;
	pthread_t t;

	REQUIRE(obj);
	p.urb = producer_for(obj);
	REQUIRE(p.urb);
	REQUIRE(pthread_create(&t, NULL, produce, &p) == 0);
	/* The ring holds 170 samples: the producer blocks until drains make
	 * room. Drain until every record came through (the deadline only
	 * turns a hang into a failure). */
	give_up = now_s() + 120;
	while (*g.count < RECORDS && !tl_failed() && now_s() < give_up) {
		CHECK_EQ(run(obj, "drain", jit), 0);
		CHECK(*g.drained >= 0, "drain returned %ld", *g.drained);
		drained += (uint64_t)*g.drained;
		if (!*g.drained)
			sched_yield();
	}
	pthread_join(t, NULL);
	CHECK_EQ(p.failures, 0);
	CHECK_EQ(*g.count, RECORDS);
	CHECK_EQ(drained, RECORDS, "discarded samples are not counted");
	CHECK_EQ(*g.total, p.sum);
	CHECK_EQ(*g.bad_order, 0);
	CHECK_EQ(*g.read_errors, 0);
	CHECK_EQ(*g.next_seq, RECORDS);
	/* nothing left */
	CHECK_EQ(run(obj, "drain", jit), 0);
	CHECK_EQ(*g.drained, 0);
	bpfrt_user_ring_buffer_free(p.urb);
	bpfrt_object_close(obj);
}

/* ---- the drain's count and stop rule ---------------------------------------- */

ALL_ENGINES(user_ringbuf_drain_counts_and_stops)
{
	struct globals g;
	struct bpfrt_object *obj = load(jit, &g);
	struct bpfrt_user_ring_buffer *urb;
	uint32_t *tiny;

	REQUIRE(obj);
	urb = producer_for(obj);
	REQUIRE(urb);
	CHECK(put(urb, 0, 10, false) && put(urb, 99, 99, true) && put(urb, 1, 20, false) &&
	      put(urb, 2, 30, false));
	/* the callback stops after one: that one counts, the rest wait */
	*g.stop_after = 1;
	CHECK_EQ(run(obj, "drain", jit), 0);
	CHECK_EQ(*g.drained, 1);
	CHECK_EQ(*g.total, 10);
	*g.stop_after = 0;
	CHECK_EQ(run(obj, "drain", jit), 0);
	CHECK_EQ(*g.drained, 2, "the discarded sample is skipped, not counted");
	CHECK_EQ(*g.total, 60);
	CHECK_EQ(*g.bad_order, 0);
	/* a sample shorter than the read: dynptr_read says -E2BIG */
	tiny = bpfrt_user_ring_buffer_reserve(urb, 4);
	REQUIRE(tiny);
	*tiny = 7;
	bpfrt_user_ring_buffer_submit(urb, tiny);
	CHECK_EQ(run(obj, "drain", jit), 0);
	CHECK_EQ(*g.drained, 1);
	CHECK_EQ(*g.short_samples, 1);
	/* a reserved, unsubmitted sample stops drains until it is submitted */
	tiny = bpfrt_user_ring_buffer_reserve(urb, 16);
	REQUIRE(tiny);
	CHECK(put(urb, 3, 40, false));
	CHECK_EQ(run(obj, "drain", jit), 0);
	CHECK_EQ(*g.drained, 0);
	memset(tiny, 0, 16);
	((struct sample *)tiny)->seq = 3;
	bpfrt_user_ring_buffer_submit(urb, tiny);
	*g.next_seq = 3;
	CHECK_EQ(run(obj, "drain", jit), 0);
	CHECK_EQ(*g.drained, 2);
	CHECK_EQ(*g.bad_order, 1, "the second sample repeats seq 3");
	bpfrt_user_ring_buffer_free(urb);
	bpfrt_object_close(obj);
}

/* ---- ringbuf and local dynptrs from BPF C ------------------------------------ */

static int take_sample(void *ctx, void *data, size_t len)
{
	uint64_t *sum = ctx;
	struct sample s;

	if (len != sizeof(s))
		return -EINVAL;
	memcpy(&s, data, sizeof(s));
	*sum += s.seq * 1000 + s.value;
	return 0;
}

ALL_ENGINES(user_ringbuf_echo_through_ringbuf_dynptr)
{
	struct globals g;
	struct bpfrt_object *obj = load(jit, &g);
	struct bpfrt_user_ring_buffer *urb;
	struct bpfrt_map *out;
	uint64_t sum = 0;

	REQUIRE(obj);
	urb = producer_for(obj);
	out = bpfrt_object_find_map(obj, "out");
	REQUIRE(urb && out);
	for (uint64_t i = 0; i < 10; i++)
		CHECK(put(urb, i, i + 1, false));
	CHECK_EQ(run(obj, "echo", jit), 0);
	CHECK_EQ(*g.drained, 10);
	CHECK_EQ(*g.echo_errors, 0);
	CHECK_EQ(bpfrt_ringbuf_consume(out, take_sample, &sum), 10);
	CHECK_EQ(sum, 45 * 1000 + 55);
	bpfrt_user_ring_buffer_free(urb);
	bpfrt_object_close(obj);
}

ALL_ENGINES(local_dynptr_over_map_value)
{
	struct globals g;
	struct bpfrt_object *obj = load(jit, &g);
	struct bpfrt_map *vals;
	struct sample v = { .seq = 5, .value = 100 };
	uint32_t key = 0;

	REQUIRE(obj);
	vals = bpfrt_object_find_map(obj, "vals");
	REQUIRE(vals);
	REQUIRE(bpfrt_map_update_elem(vals, &key, &v, 0) == 0);
	CHECK_EQ((int64_t)run(obj, "local_sum", jit), 0);
	REQUIRE(bpfrt_map_lookup_elem(vals, &key, &v) == 0);
	CHECK_EQ(v.value, 105);
	bpfrt_object_close(obj);
}

/* ---- the producer API --------------------------------------------------------- */

TEST(user_ring_buffer_api_errors)
{
	struct bpfrt_map *urbm = NULL, *rbm = NULL, *bad = NULL;
	struct bpfrt_user_ring_buffer *urb = NULL;
	int n = 0;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_USER_RINGBUF, "urb", 0, 0, 4096, NULL, &urbm) == 0);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_RINGBUF, "rb", 0, 0, 4096, NULL, &rbm) == 0);
	CHECK_EQ(bpfrt_user_ring_buffer_new(rbm, NULL, &urb), -EINVAL);
	CHECK(urb == NULL);
	CHECK(strstr(bpfrt_last_error(), "'rb' is not a USER_RINGBUF") != NULL, "%s",
	      bpfrt_last_error());
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_USER_RINGBUF, "bad", 0, 0, 4097, NULL, &bad),
		 -EINVAL);
	REQUIRE(bpfrt_user_ring_buffer_new(urbm, NULL, &urb) == 0);
	errno = 0;
	CHECK(bpfrt_user_ring_buffer_reserve(urb, 4096 - 7) == NULL && errno == E2BIG);
	errno = 0;
	CHECK(bpfrt_user_ring_buffer_reserve(urb, 0x80000000u) == NULL && errno == E2BIG);
	errno = 0;
	CHECK(bpfrt_user_ring_buffer_reserve_blocking(urb, 8, -2) == NULL && errno == EINVAL);
	/* the whole ring can be filled (16-byte records: 256 of them) */
	while (bpfrt_user_ring_buffer_reserve(urb, 8))
		n++;
	CHECK_EQ(errno, ENOSPC);
	CHECK_EQ(n, 256);
	errno = 0;
	CHECK(bpfrt_user_ring_buffer_reserve_blocking(urb, 8, 0) == NULL && errno == ENOSPC);
	errno = 0;
	CHECK(bpfrt_user_ring_buffer_reserve_blocking(urb, 8, 1) == NULL && errno == ENOSPC);
	bpfrt_user_ring_buffer_free(urb);
	bpfrt_user_ring_buffer_free(NULL);
	bpfrt_map_free(urbm);
	bpfrt_map_free(rbm);
}
