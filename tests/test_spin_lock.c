/* bpf_spin_lock / bpf_spin_unlock (tests/progs/spin_lock.bpf.c): four
 * threads, half in the JIT and half in the interpreter, increment a
 * counter under the lock of an array value and of a hash value; the
 * counts must be exact. Also: the loader finds the lock from BTF, user
 * space sees its bytes as 0 and BPF_F_LOCK copies under it, creation
 * refuses what Linux refuses. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"
#include "maps/map.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define NR_THREADS 4
#define RUNS       20000

struct counted {
	long before;
	uint32_t lock;
	uint32_t pad;
	long count;
	long twice;
};

struct shared {
	struct bpfrt_prog *prog;
	atomic_int errors;
};

struct worker {
	struct shared *s;
	int id;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	enum bpfrt_exec_mode mode = w->id % 2 ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT;
	char ctx[8] = { 0 };

	for (int i = 0; i < RUNS; i++) {
		uint64_t r0 = 1;

		if (bpfrt_prog_run(w->s->prog, mode, (uintptr_t)ctx, sizeof(ctx), &r0) || r0)
			atomic_fetch_add(&w->s->errors, 1);
	}
	return NULL;
}

static void hammer(struct bpfrt_object *obj, const char *prog, const char *map)
{
	struct shared s = { .prog = bpfrt_object_find_prog(obj, prog) };
	struct worker w[NR_THREADS];
	pthread_t t[NR_THREADS];
	struct bpfrt_map *m = bpfrt_object_find_map(obj, map);
	struct counted v = { 0 };
	int key = 0;

	REQUIRE(s.prog && m);
	if (bpfrt_map_type(m) == BPF_MAP_TYPE_HASH)
		CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_NOEXIST), 0);
	for (int i = 0; i < NR_THREADS; i++) {
		w[i] = (struct worker){ .s = &s, .id = i };
		REQUIRE(!pthread_create(&t[i], NULL, worker_main, &w[i]));
	}
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&s.errors), 0);
	memset(&v, 0xff, sizeof(v));
	CHECK_EQ(bpfrt_map_lookup_elem_flags(m, &key, &v, BPF_F_LOCK), 0);
	CHECK_EQ(v.count, (long)NR_THREADS * RUNS);
	CHECK_EQ(v.twice, 2L * NR_THREADS * RUNS);
	CHECK_EQ(v.lock, 0); /* released, and shown as 0 anyway */
	CHECK_EQ(v.before, 0);
}

TEST(four_threads_count_exactly_under_the_lock)
{
	BPFRT_OPTS(bpfrt_object_load_opts, o, .jit = true);
	struct bpfrt_object *obj = load_object("spin_lock.bpf.o", &o);

	REQUIRE(obj);
	hammer(obj, "bump_array", "counters");
	hammer(obj, "bump_hash", "hcounters");
	bpfrt_object_close(obj);
}

TEST(user_space_never_writes_or_reads_the_lock)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .has_spin_lock = 1, .spin_lock_off = 8);
	struct bpfrt_map *m;
	struct counted v = { .before = 5, .lock = 1, .count = 6 }, out;
	uint32_t *lock;
	int key = 0;

	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "locked", 4, sizeof(v), 1, &o, &m),
		"%s", bpfrt_last_error());
	/* an update leaves the lock's bytes alone (a held lock stays held) */
	CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_ANY), 0);
	lock = (uint32_t *)((char *)bpfrt_map_value_ptr(m, 0) + 8);
	CHECK_EQ(*lock, 0);
	*lock = 1; /* as a program holding it */
	v.count = 7;
	CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_ANY), 0);
	CHECK_EQ(*lock, 1);
	memset(&out, 0xff, sizeof(out));
	CHECK_EQ(bpfrt_map_lookup_elem(m, &key, &out), 0);
	CHECK_EQ(out.lock, 0);
	CHECK_EQ(out.count, 7);
	CHECK_EQ(out.before, 5);
	*lock = 0;
	v.count = 8;
	CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_F_LOCK), 0);
	CHECK_EQ(bpfrt_map_lookup_elem_flags(m, &key, &out, BPF_F_LOCK), 0);
	CHECK_EQ(out.count, 8);
	CHECK_EQ(*lock, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_F_LOCK | BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_lookup_elem_flags(m, &key, &out, 8), -EINVAL);
	bpfrt_map_free(m);

	/* a hash element is born unlocked whatever the value says */
	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_HASH, "hlocked", 4, sizeof(v), 4, &o, &m));
	v.lock = 1;
	CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_F_LOCK), 0);
	CHECK_EQ(bpfrt_map_lookup_elem_flags(m, &key, &out, BPF_F_LOCK), 0); /* no deadlock */
	CHECK_EQ(out.count, 8);
	CHECK_EQ(bpfrt_map_lookup_and_delete_elem(m, &key, &out, BPF_F_LOCK), 0);
	CHECK_EQ(out.lock, 0);
	bpfrt_map_free(m);

	/* BPF_F_LOCK on a map without a lock: -EINVAL, as Linux */
	REQUIRE(!bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "plain", 4, sizeof(v), 1, NULL, &m));
	CHECK_EQ(bpfrt_map_update_elem(m, &key, &v, BPF_F_LOCK), -EINVAL);
	CHECK_EQ(bpfrt_map_lookup_elem_flags(m, &key, &out, BPF_F_LOCK), -EINVAL);
	bpfrt_map_free(m);
}

TEST(creation_refuses_what_linux_refuses)
{
	struct bpfrt_map *m = NULL;
	BPFRT_OPTS(bpfrt_map_create_opts, misaligned, .has_spin_lock = 1, .spin_lock_off = 6);
	BPFRT_OPTS(bpfrt_map_create_opts, outside, .has_spin_lock = 1, .spin_lock_off = 32);
	BPFRT_OPTS(bpfrt_map_create_opts, at0, .has_spin_lock = 1);
	BPFRT_OPTS(bpfrt_map_create_opts, ro, .has_spin_lock = 1,
		   .map_flags = BPF_F_RDONLY_PROG);

	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "m", 4, 32, 1, &misaligned, &m), -EINVAL);
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "m", 4, 32, 1, &outside, &m), -EINVAL);
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "m", 4, 32, 1, &at0, &m),
		 -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_LRU_HASH, "m", 4, 32, 4, &at0, &m), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "m", 4, 32, 1, &ro, &m), -EACCES);
	CHECK(!m);
}
