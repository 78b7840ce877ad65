/* The keyless map kinds (queue, stack, bloom filter) and LRU_PERCPU_HASH:
 * creation rules, every user-space operation with its Linux error code
 * (compared with the running kernel's answers where it lets us create
 * maps), the program side in every engine, and concurrent use. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int try_create(enum bpf_map_type type, uint32_t key, uint32_t value, uint32_t max,
		      uint32_t flags, uint64_t extra)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags, .map_extra = extra);
	struct bpfrt_map *m = NULL;
	int err = bpfrt_map_create(type, "m", key, value, max, &o, &m);

	bpfrt_map_free(m);
	return err;
}

/* Linux's answer to the same BPF_MAP_CREATE: 0, -errno, or 1 when the
 * kernel cannot be asked (no privilege). */
static int kernel_create(enum bpf_map_type type, uint32_t key, uint32_t value, uint32_t max,
			 uint32_t flags, uint64_t extra)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags, .map_extra = extra);
	int fd = bpf_map_create(type, "m", key, value, max, &o);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EPERM || errno == ENOSYS ? 1 : -errno; /* not root; no bpf(2) under qemu-user */
}

static const struct create_case {
	const char *what;
	enum bpf_map_type type;
	uint32_t key, value, max, flags;
	uint64_t extra;
	int want;
	bool kernels_differ;   /* Linux 6.12 (the source bpfrt follows) gives want, later ones not */
} create_cases[] = {
	{ "queue", BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0, 0, 0 },
	{ "queue with a key", BPF_MAP_TYPE_QUEUE, 4, 8, 4, 0, 0, -EINVAL },
	{ "queue value 0", BPF_MAP_TYPE_QUEUE, 0, 0, 4, 0, 0, -EINVAL },
	{ "queue no entries", BPF_MAP_TYPE_QUEUE, 0, 8, 0, 0, 0, -EINVAL },
	{ "queue NO_PREALLOC", BPF_MAP_TYPE_QUEUE, 0, 8, 4, BPF_F_NO_PREALLOC, 0, -EINVAL },
	{ "queue RDONLY_PROG", BPF_MAP_TYPE_QUEUE, 0, 8, 4, BPF_F_RDONLY_PROG, 0, 0 },
	{ "queue value too large", BPF_MAP_TYPE_QUEUE, 0, (4u << 20) + 1, 4, 0, 0, -E2BIG },
	{ "queue ring over 4 GiB", BPF_MAP_TYPE_QUEUE, 0, 1024, 1u << 22, 0, 0, -E2BIG, true },
	{ "queue map_extra", BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0, 1, -EINVAL },
	{ "stack", BPF_MAP_TYPE_STACK, 0, 4, 1, 0, 0, 0 },
	{ "stack with a key", BPF_MAP_TYPE_STACK, 8, 4, 1, 0, 0, -EINVAL },
	{ "stack ZERO_SEED", BPF_MAP_TYPE_STACK, 0, 4, 1, BPF_F_ZERO_SEED, 0, -EINVAL },
	{ "bloom", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 100, 0, 0, 0 },
	{ "bloom 15 hashes", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 100, 0, 15, 0 },
	{ "bloom map_extra 16", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 100, 0, 16, -EINVAL },
	{ "bloom with a key", BPF_MAP_TYPE_BLOOM_FILTER, 4, 8, 100, 0, 0, -EINVAL },
	{ "bloom value 0", BPF_MAP_TYPE_BLOOM_FILTER, 0, 0, 100, 0, 0, -EINVAL },
	{ "bloom no entries", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 0, 0, 0, -EINVAL },
	{ "bloom ZERO_SEED", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 100, BPF_F_ZERO_SEED, 0, 0 },
	{ "bloom NO_PREALLOC", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 100, BPF_F_NO_PREALLOC, 0, -EINVAL },
	{ "bloom value too large", BPF_MAP_TYPE_BLOOM_FILTER, 4, (4u << 20) + 1, 1, 0, 0, -E2BIG },
	{ "lru percpu", BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 16, 0, 0, 0 },
	{ "lru percpu NO_COMMON_LRU", BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 16, BPF_F_NO_COMMON_LRU,
	  0, 0 },
	{ "lru percpu key 0", BPF_MAP_TYPE_LRU_PERCPU_HASH, 0, 8, 16, 0, 0, -EINVAL },
	{ "lru percpu value 32k+1", BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, (32u << 10) + 1, 16, 0, 0,
	  -E2BIG },
	{ "hash map_extra", BPF_MAP_TYPE_HASH, 4, 8, 16, 0, 5, -EINVAL },
	{ "cgroup array", BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 2, 0, 0, 0 },
	{ "cgroup array key 8", BPF_MAP_TYPE_CGROUP_ARRAY, 8, 4, 2, 0, 0, -EINVAL },
	{ "cgroup array value 8", BPF_MAP_TYPE_CGROUP_ARRAY, 4, 8, 2, 0, 0, -EINVAL },
	{ "perf event array", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 2, 0, 0, 0 },
	{ "perf event array value 8", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 8, 2, 0, 0, -EINVAL },
};

TEST(creation_rules_as_linux)
{
	int compared = 0;

	for (size_t i = 0; i < ARRAY_LEN(create_cases); i++) {
		const struct create_case *c = &create_cases[i];
		int got = try_create(c->type, c->key, c->value, c->max, c->flags, c->extra);
		int lx = kernel_create(c->type, c->key, c->value, c->max, c->flags, c->extra);

		CHECK_EQ(got, c->want, "%s: %s", c->what, bpfrt_last_error());
		if (lx != 1 && !c->kernels_differ) {
			CHECK_EQ(lx, c->want, "%s: the kernel answers differently", c->what);
			compared++;
		}
	}
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2) as under qemu-user): bpfrt checked against the "
		     "table only");
}

/* ---- one scripted sequence, run against bpfrt and the kernel ---------------- */

enum op { PUSH, PEEK, POP, DELETE, NEXT_KEY, LOOKUP_DELETE_FLAGS };

struct step {
	enum op op;
	uint64_t value;  /* PUSH: the value; PEEK/POP: the value expected on success */
	uint64_t flags;
	int want;
};

static int run_step_bpfrt(struct bpfrt_map *m, const struct step *s, uint64_t *out)
{
	uint64_t v = s->value, key = 0;

	switch (s->op) {
	case PUSH: return bpfrt_map_update_elem(m, NULL, &v, s->flags);
	case PEEK: return bpfrt_map_lookup_elem(m, NULL, out);
	case POP: return bpfrt_map_lookup_and_delete_elem(m, NULL, out, 0);
	case DELETE: return bpfrt_map_delete_elem(m, NULL);
	case NEXT_KEY: return bpfrt_map_get_next_key(m, NULL, &key);
	case LOOKUP_DELETE_FLAGS: return bpfrt_map_lookup_and_delete_elem(m, NULL, out, s->flags);
	}
	return -1;
}

static int run_step_kernel(int fd, const struct step *s, uint64_t *out)
{
	uint64_t v = s->value, key = 0;
	int err = 0;

	switch (s->op) {
	case PUSH: err = bpf_map_update_elem(fd, NULL, &v, s->flags); break;
	case PEEK: err = bpf_map_lookup_elem(fd, NULL, out); break;
	case POP: err = bpf_map_lookup_and_delete_elem(fd, NULL, out); break;
	case DELETE: err = bpf_map_delete_elem(fd, NULL); break;
	case NEXT_KEY: err = bpf_map_get_next_key(fd, NULL, &key); break;
	case LOOKUP_DELETE_FLAGS:
		err = bpf_map_lookup_and_delete_elem_flags(fd, NULL, out, s->flags);
		break;
	}
	/* Linux's internal ENOTSUPP (524) reaches user space here; bpfrt
	 * says EOPNOTSUPP, as it does wherever Linux leaks ENOTSUPP */
	if (err < 0 && errno == 524)
		return -EOPNOTSUPP;
	return err < 0 ? -errno : 0;
}

/* queue of 3: FIFO, full, BPF_EXIST drops the oldest */
static const struct step queue_steps[] = {
	{ PEEK, 0, 0, -ENOENT }, { POP, 0, 0, -ENOENT },
	{ PUSH, 1, BPF_ANY, 0 }, { PUSH, 2, BPF_ANY, 0 }, { PUSH, 3, BPF_ANY, 0 },
	{ PUSH, 4, BPF_ANY, -E2BIG }, { PUSH, 4, BPF_NOEXIST, -EINVAL }, { PUSH, 4, 4, -EINVAL },
	{ PUSH, 4, BPF_EXIST, 0 },
	{ PEEK, 2, 0, 0 }, { POP, 2, 0, 0 }, { POP, 3, 0, 0 },
	{ DELETE, 0, 0, -EINVAL }, { NEXT_KEY, 0, 0, -EINVAL },
	{ LOOKUP_DELETE_FLAGS, 0, BPF_F_LOCK, -EINVAL }, { LOOKUP_DELETE_FLAGS, 0, 1, -EINVAL },
	{ POP, 4, 0, 0 }, { POP, 0, 0, -ENOENT },
};

/* stack of 3: LIFO; BPF_EXIST on a full stack drops the oldest too */
static const struct step stack_steps[] = {
	{ PUSH, 1, BPF_ANY, 0 }, { PUSH, 2, BPF_ANY, 0 }, { PUSH, 3, BPF_ANY, 0 },
	{ PUSH, 4, BPF_ANY, -E2BIG }, { PUSH, 4, BPF_EXIST, 0 },
	{ PEEK, 4, 0, 0 }, { POP, 4, 0, 0 }, { POP, 3, 0, 0 }, { POP, 2, 0, 0 },
	{ POP, 0, 0, -ENOENT }, { PEEK, 0, 0, -ENOENT },
	{ DELETE, 0, 0, -EINVAL }, { NEXT_KEY, 0, 0, -EINVAL },
};

/* bloom: peek tests the value passed in; no pop, delete or keys */
static const struct step bloom_steps[] = {
	{ PUSH, 7, BPF_ANY, 0 }, { PUSH, 8, BPF_EXIST, -EINVAL }, { PUSH, 8, BPF_NOEXIST, -EINVAL },
	{ POP, 7, 0, -EOPNOTSUPP }, { DELETE, 0, 0, -EOPNOTSUPP }, { NEXT_KEY, 0, 0, -EOPNOTSUPP },
};

static void run_script(const char *what, enum bpf_map_type type, uint32_t max,
		       const struct step *steps, size_t n, bool *compared)
{
	struct bpfrt_map *m = NULL;
	int fd;

	if (bpfrt_map_create(type, "script", 0, 8, max, NULL, &m)) {
		tl_fail(__FILE__, __LINE__, "%s: %s", what, bpfrt_last_error());
		return;
	}
	fd = bpf_map_create(type, "script", 0, 8, max, NULL);
	if (fd >= 0)
		*compared = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t got = ~0ull, kgot = ~0ull;
		int err = run_step_bpfrt(m, &steps[i], &got);

		CHECK_EQ(err, steps[i].want, "%s step %zu", what, i);
		if (!err && (steps[i].op == PEEK || steps[i].op == POP))
			CHECK_EQ(got, steps[i].value, "%s step %zu", what, i);
		if (fd >= 0) {
			int kerr = run_step_kernel(fd, &steps[i], &kgot);

			CHECK_EQ(kerr, err, "%s step %zu: the kernel answers differently", what, i);
			if (!kerr && !err && (steps[i].op == PEEK || steps[i].op == POP))
				CHECK_EQ(kgot, got, "%s step %zu: the kernel's value", what, i);
		}
	}
	if (fd >= 0)
		close(fd);
	bpfrt_map_free(m);
}

TEST(queue_stack_bloom_user_ops_as_linux)
{
	bool compared = false;

	run_script("queue", BPF_MAP_TYPE_QUEUE, 3, queue_steps, ARRAY_LEN(queue_steps), &compared);
	run_script("stack", BPF_MAP_TYPE_STACK, 3, stack_steps, ARRAY_LEN(stack_steps), &compared);
	run_script("bloom", BPF_MAP_TYPE_BLOOM_FILTER, 16, bloom_steps, ARRAY_LEN(bloom_steps),
		   &compared);
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2) as under qemu-user): compared with the table only");
}

TEST(bloom_has_no_false_negatives_and_few_false_positives)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_extra = 3);
	struct bpfrt_map *m = NULL;
	int false_pos = 0;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_BLOOM_FILTER, "bloom", 0, 8, 1000, &o, &m) == 0,
		"%s", bpfrt_last_error());
	for (uint64_t v = 0; v < 1000; v++)
		CHECK_EQ(bpfrt_map_update_elem(m, NULL, &v, BPF_ANY), 0);
	for (uint64_t v = 0; v < 1000; v++)
		CHECK_EQ(bpfrt_map_lookup_elem(m, NULL, &v), 0, "value %llu pushed, not found",
			 (unsigned long long)v);
	for (uint64_t v = 1000000; v < 1010000; v++)
		false_pos += bpfrt_map_lookup_elem(m, NULL, &v) == 0;
	/* 1000 values, 3 hashes, 4096 bits: about 1.7% expected */
	CHECK(false_pos < 500, "%d false positives in 10000", false_pos);
	bpfrt_map_free(m);
}

TEST(lookup_and_delete_needs_read_and_write_access)
{
	BPFRT_OPTS(bpfrt_map_create_opts, ro, .map_flags = BPF_F_RDONLY);
	BPFRT_OPTS(bpfrt_map_create_opts, wo, .map_flags = BPF_F_WRONLY);
	struct bpfrt_map *a = NULL, *b = NULL, *c = NULL;
	uint64_t v = 1;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_QUEUE, "ro", 0, 8, 4, &ro, &a) == 0);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_QUEUE, "wo", 0, 8, 4, &wo, &b) == 0);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_QUEUE, "frozen", 0, 8, 4, NULL, &c) == 0);
	CHECK_EQ(bpfrt_map_lookup_and_delete_elem(a, NULL, &v, 0), -EPERM);
	CHECK_EQ(bpfrt_map_lookup_and_delete_elem(b, NULL, &v, 0), -EPERM);
	CHECK_EQ(bpfrt_map_update_elem(c, NULL, &v, 0), 0);
	CHECK_EQ(bpfrt_map_freeze(c), 0);
	CHECK_EQ(bpfrt_map_lookup_and_delete_elem(c, NULL, &v, 0), -EPERM);
	CHECK_EQ(bpfrt_map_lookup_elem(c, NULL, &v), 0, "peek still reads a frozen queue");
	bpfrt_map_free(a);
	bpfrt_map_free(b);
	bpfrt_map_free(c);
}

TEST(hash_lookup_and_delete)
{
	enum bpf_map_type types[] = { BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_LRU_HASH,
				      BPF_MAP_TYPE_PERCPU_HASH, BPF_MAP_TYPE_LRU_PERCPU_HASH };

	for (size_t t = 0; t < ARRAY_LEN(types); t++) {
		struct bpfrt_map *m = NULL;
		size_t sz;
		uint64_t *val, *out;
		uint32_t k = 5;

		REQUIRE(bpfrt_map_create(types[t], "h", 4, 8, 8, NULL, &m) == 0);
		sz = bpfrt_map_value_buf_size(m);
		val = calloc(1, sz);
		out = calloc(1, sz);
		for (size_t i = 0; i < sz / 8; i++)
			val[i] = 100 + i;
		CHECK_EQ(bpfrt_map_update_elem(m, &k, val, BPF_ANY), 0);
		CHECK_EQ(bpfrt_map_lookup_and_delete_elem(m, &k, out, 1), -EINVAL, "type %d",
			 types[t]);
		CHECK_EQ(bpfrt_map_lookup_and_delete_elem(m, &k, out, 0), 0, "type %d", types[t]);
		CHECK(!memcmp(val, out, sz), "type %d: every CPU's value comes back", types[t]);
		CHECK_EQ(bpfrt_map_lookup_elem(m, &k, out), -ENOENT);
		CHECK_EQ(bpfrt_map_lookup_and_delete_elem(m, &k, out, 0), -ENOENT);
		free(val);
		free(out);
		bpfrt_map_free(m);
	}
	{
		struct bpfrt_map *arr = NULL;
		uint32_t k = 0;
		uint64_t v;

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 8, 1, NULL, &arr) == 0);
		CHECK_EQ(bpfrt_map_lookup_and_delete_elem(arr, &k, &v, 0), -EOPNOTSUPP);
		bpfrt_map_free(arr);
	}
}

/* LRU_PERCPU_HASH: user space writes every CPU's value; a full map
 * evicts instead of failing. */
TEST(lru_percpu_hash_user_side)
{
	int ncpu = bpfrt_num_possible_cpus();
	struct bpfrt_map *m = NULL;
	uint64_t *vals = calloc((size_t)ncpu, 8), *out = calloc((size_t)ncpu, 8);
	uint32_t k, next;
	int keys = 0;

	REQUIRE(vals && out);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_LRU_PERCPU_HASH, "lru", 4, 8, 4, NULL, &m) == 0);
	CHECK_EQ(bpfrt_map_value_buf_size(m), (size_t)ncpu * 8);
	for (k = 0; k < 10; k++) {
		for (int c = 0; c < ncpu; c++)
			vals[c] = k * 100 + (uint64_t)c;
		CHECK_EQ(bpfrt_map_update_elem(m, &k, vals, BPF_ANY), 0, "key %u", k);
	}
	k = 9;
	CHECK_EQ(bpfrt_map_lookup_elem(m, &k, out), 0);
	for (int c = 0; c < ncpu; c++)
		CHECK_EQ(out[c], 900 + (uint64_t)c, "cpu %d", c);
	for (int err = bpfrt_map_get_next_key(m, NULL, &next); !err && keys < 100;
	     err = bpfrt_map_get_next_key(m, &k, &next)) {
		k = next;
		keys++;
	}
	CHECK(keys <= 4 && keys >= 1, "%d keys in a 4-entry LRU map", keys);
	k = 9;
	CHECK_EQ(bpfrt_map_update_elem(m, &k, vals, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, vals, 4), -EINVAL);
	free(vals);
	free(out);
	bpfrt_map_free(m);
}

/* ---- programs (keyless_maps.bpf.c) ------------------------------------------ */

ALL_ENGINES(programs_push_pop_peek)
{
	static const long want[] = {
		0, 0, 0, -E2BIG, -EINVAL, 0, 2, 2, 3, 4, -ENOENT, -ENOENT,      /* queue */
		0, 0, 0, -E2BIG, -EINVAL, 0, 4, 4, 3, 2, -ENOENT, -ENOENT,      /* stack */
		-ENOENT, 0, 0, -EINVAL,                                          /* bloom */
		0, 0, 0, 0, 0, 1, -EEXIST,                                       /* lru percpu */
	};
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));
	struct bpfrt_map *queue, *bloom;
	size_t sz = 0;
	long *rc;

	REQUIRE(bpfrt_object_open(tl_prog_path("keyless_maps.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	rc = bpfrt_object_global(obj, "rc", &sz);
	queue = bpfrt_object_find_map(obj, "queue");
	bloom = bpfrt_object_find_map(obj, "bloom");
	REQUIRE(rc && queue && bloom);
	CHECK_EQ(bpfrt_map_key_size(bloom), 0);
	CHECK_EQ(bpfrt_map_type(bloom), BPF_MAP_TYPE_BLOOM_FILTER);
	CHECK_EQ(bpfrt_map_type(bpfrt_object_find_map(obj, "lru_pcpu")),
		 BPF_MAP_TYPE_LRU_PERCPU_HASH);
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "keyless"), &ro) == 0, "%s",
		bpfrt_last_error());
	CHECK_EQ(ro.retval, ARRAY_LEN(want));
	for (size_t i = 0; i < ARRAY_LEN(want); i++)
		CHECK_EQ(rc[i], want[i], "step %zu", i);
	/* what the program pushed into the bloom filter, seen from user space */
	CHECK_EQ(bpfrt_map_lookup_elem(bloom, NULL, &(uint64_t){ 42 }), 0);
	/* what user space pushes, the program pops */
	for (uint32_t v = 10; v < 13; v++)
		CHECK_EQ(bpfrt_map_update_elem(queue, NULL, &v, BPF_ANY), 0);
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "keyless_sum"), &ro) == 0);
	CHECK_EQ(ro.retval, 33);
	CHECK_EQ(bpfrt_map_lookup_elem(queue, NULL, &(uint32_t){ 0 }), -ENOENT);
	bpfrt_object_close(obj);
}

/* ---- concurrency --------------------------------------------------------------- */

/* Linux's queue and stack take one lock per map; bpfrt's too: threads
 * pushing and popping at once lose and duplicate nothing. */
#define QS_THREADS 4
#define QS_PER_THREAD 20000

struct qs_arg {
	struct bpfrt_map *map;
	int id;
	uint64_t popped_sum, popped;
};

static void *qs_worker(void *p)
{
	struct qs_arg *a = p;

	for (uint64_t i = 0; i < QS_PER_THREAD; i++) {
		uint64_t v = (uint64_t)a->id * QS_PER_THREAD + i + 1;

		while (bpfrt_map_update_elem(a->map, NULL, &v, BPF_ANY) == -E2BIG) {
			uint64_t out;

			if (!bpfrt_map_lookup_and_delete_elem(a->map, NULL, &out, 0)) {
				a->popped_sum += out;
				a->popped++;
			}
		}
		if (i % 2) {
			uint64_t out;

			if (!bpfrt_map_lookup_and_delete_elem(a->map, NULL, &out, 0)) {
				a->popped_sum += out;
				a->popped++;
			}
		}
	}
	return NULL;
}

TEST(queue_and_stack_concurrent_push_pop_conserve_values)
{
	enum bpf_map_type types[] = { BPF_MAP_TYPE_QUEUE, BPF_MAP_TYPE_STACK };

	for (size_t t = 0; t < ARRAY_LEN(types); t++) {
		struct bpfrt_map *m = NULL;
		struct qs_arg args[QS_THREADS];
		pthread_t th[QS_THREADS];
		uint64_t sum = 0, n = 0, out, want = 0;

		REQUIRE(bpfrt_map_create(types[t], "qs", 0, 8, 64, NULL, &m) == 0);
		for (int i = 0; i < QS_THREADS; i++) {
			args[i] = (struct qs_arg){ .map = m, .id = i };
			REQUIRE(pthread_create(&th[i], NULL, qs_worker, &args[i]) == 0);
		}
		for (int i = 0; i < QS_THREADS; i++) {
			pthread_join(th[i], NULL);
			sum += args[i].popped_sum;
			n += args[i].popped;
		}
		while (!bpfrt_map_lookup_and_delete_elem(m, NULL, &out, 0)) {
			sum += out;
			n++;
		}
		for (uint64_t v = 1; v <= (uint64_t)QS_THREADS * QS_PER_THREAD; v++)
			want += v;
		CHECK_EQ(n, (uint64_t)QS_THREADS * QS_PER_THREAD, "type %d: values out", types[t]);
		CHECK_EQ(sum, want, "type %d: sum of the values out", types[t]);
		bpfrt_map_free(m);
	}
}

/* A bloom filter's bits are set with atomic ORs (Linux: set_bit, no
 * lock): values pushed from many threads at once are all found. */
struct bloom_arg {
	struct bpfrt_map *map;
	int id;
};

static void *bloom_worker(void *p)
{
	struct bloom_arg *a = p;

	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t v = (uint64_t)a->id << 32 | i;

		bpfrt_map_update_elem(a->map, NULL, &v, BPF_ANY);
	}
	return NULL;
}

TEST(bloom_concurrent_pushes_are_all_found)
{
	struct bpfrt_map *m = NULL;
	struct bloom_arg args[4];
	pthread_t th[4];
	int missing = 0;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_BLOOM_FILTER, "b", 0, 8, 20000, NULL, &m) == 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct bloom_arg){ m, i };
		REQUIRE(pthread_create(&th[i], NULL, bloom_worker, &args[i]) == 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		for (uint64_t j = 0; j < 5000; j++)
			missing += bpfrt_map_lookup_elem(m, NULL, &(uint64_t){ (uint64_t)i << 32 | j }) != 0;
	CHECK_EQ(missing, 0);
	bpfrt_map_free(m);
}

/* ---- cgroup array: it lists no cgroup in bpfrt ------------------------------- */

TEST(cgroup_array_user_ops)
{
	struct bpfrt_map *m = NULL;
	uint32_t k = 0, v = 0, next;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_CGROUP_ARRAY, "cg", 4, 4, 2, NULL, &m) == 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &v, BPF_ANY), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_lookup_elem(m, &k, &v), -ENOENT);
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), -ENOENT);
	k = 2;
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), -E2BIG);
	CHECK(bpfrt_map_get_next_key(m, NULL, &next) == 0 && next == 0);
	bpfrt_map_free(m);
}

ALL_ENGINES(current_task_is_under_no_listed_cgroup)
{
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));
	size_t sz = 0;
	long *rc;

	REQUIRE(bpfrt_object_open(tl_prog_path("cgroup_array.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	rc = bpfrt_object_global(obj, "rc", &sz);
	REQUIRE(rc);
	rc[0] = rc[1] = 99;
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "under_cgroup"), &ro) == 0);
	CHECK_EQ(rc[0], 0, "not under the (absent) cgroup of slot 0");
	CHECK_EQ(rc[1], -E2BIG, "index past max_entries");
	bpfrt_object_close(obj);
}

/* ---- cgroup storage: one storage, as if the process were one cgroup ---------- */

static const struct create_case cgroup_storage_cases[] = {
	{ "cgroup storage", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 64, 0, 0, 0, 0 },
	{ "cgroup storage key 8", BPF_MAP_TYPE_CGROUP_STORAGE, 8, 64, 0, 0, 0, 0 },
	{ "cgroup storage key 12", BPF_MAP_TYPE_CGROUP_STORAGE, 12, 64, 0, 0, 0, -EINVAL },
	{ "cgroup storage value 0", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 0, 0, 0, 0, -EINVAL },
	{ "cgroup storage value 65407", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 65407, 0, 0, 0, 0 },
	{ "cgroup storage value 65408", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 65408, 0, 0, 0, -E2BIG },
	{ "cgroup storage max_entries 1", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 8, 1, 0, 0, -EINVAL },
	{ "cgroup storage NO_PREALLOC", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 8, 0, BPF_F_NO_PREALLOC,
	  0, -EINVAL },
	{ "cgroup storage RDONLY_PROG", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 8, 0, BPF_F_RDONLY_PROG,
	  0, 0 },
	{ "percpu cgroup storage", BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 16, 8, 0, 0, 0, 0 },
	{ "percpu cgroup storage value 32k", BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 16, 32u << 10, 0,
	  0, 0, 0 },
	{ "percpu cgroup storage value 32k+1", BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 16,
	  (32u << 10) + 1, 0, 0, 0, -E2BIG },
	{ "percpu cgroup storage key 4", BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 4, 8, 0, 0, 0,
	  -EINVAL },
};

TEST(cgroup_storage_creation_as_linux)
{
	int compared = 0;

	for (size_t i = 0; i < ARRAY_LEN(cgroup_storage_cases); i++) {
		const struct create_case *c = &cgroup_storage_cases[i];
		int got = try_create(c->type, c->key, c->value, c->max, c->flags, c->extra);
		int lx = kernel_create(c->type, c->key, c->value, c->max, c->flags, c->extra);

		CHECK_EQ(got, c->want, "%s: %s", c->what, bpfrt_last_error());
		if (lx != 1) {
			CHECK_EQ(lx, c->want, "%s: the kernel answers differently", c->what);
			compared++;
		}
	}
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2) as under qemu-user): bpfrt checked against the "
		     "table only");
}

TEST(cgroup_storage_user_ops)
{
	struct bpfrt_map *m = NULL, *pm = NULL;
	struct { uint64_t id; uint32_t attach_type, pad; } key = { 0 }, next = { 1, 1, 0 };
	uint64_t v[2] = { 5, 6 }, out[2] = { 0 };
	int ncpu = bpfrt_num_possible_cpus();
	uint64_t *pv = calloc((size_t)ncpu, 8);

	REQUIRE(pv);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_CGROUP_STORAGE, "cgs", 16, 16, 0, NULL, &m) == 0,
		"%s", bpfrt_last_error());
	/* the one storage, zeroed, under the all-zero key */
	CHECK(bpfrt_map_get_next_key(m, NULL, &next) == 0 && next.id == 0 && next.attach_type == 0);
	CHECK_EQ(bpfrt_map_get_next_key(m, &key, &next), -ENOENT);
	CHECK(bpfrt_map_lookup_elem(m, &key, out) == 0 && out[0] == 0 && out[1] == 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &key, v, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &key, v, BPF_NOEXIST), 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &key, v, 4), -EINVAL);
	CHECK(bpfrt_map_lookup_elem(m, &key, out) == 0 && out[0] == 5 && out[1] == 6);
	CHECK_EQ(bpfrt_map_delete_elem(m, &key), -EINVAL);
	key.id = 42;
	CHECK_EQ(bpfrt_map_lookup_elem(m, &key, out), -ENOENT);
	CHECK_EQ(bpfrt_map_update_elem(m, &key, v, BPF_ANY), -ENOENT);
	key.id = 0;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, "pcgs", 16, 8, 0, NULL,
				 &pm) == 0, "%s", bpfrt_last_error());
	CHECK_EQ(bpfrt_map_value_buf_size(pm), (size_t)ncpu * 8);
	for (int c = 0; c < ncpu; c++)
		pv[c] = (uint64_t)c + 1;
	CHECK_EQ(bpfrt_map_update_elem(pm, &key, pv, BPF_NOEXIST), -EINVAL);
	CHECK_EQ(bpfrt_map_update_elem(pm, &key, pv, BPF_EXIST), 0);
	memset(pv, 0, (size_t)ncpu * 8);
	REQUIRE(bpfrt_map_lookup_elem(pm, &key, pv) == 0);
	for (int c = 0; c < ncpu; c++)
		CHECK_EQ(pv[c], (uint64_t)c + 1, "cpu %d", c);
	free(pv);
	bpfrt_map_free(m);
	bpfrt_map_free(pm);
}

/* The programs load in every engine (tests/verifier runs the helper);
 * cgroup programs themselves run only under a kernel. */
ALL_ENGINES(cgroup_storage_programs_load)
{
	static const uint8_t pkt[64];
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit), .data_in = pkt,
		   .data_size_in = sizeof(pkt));
	struct bpfrt_map *counts, *percpu;

	REQUIRE(bpfrt_object_open(tl_prog_path("cgroup_storage.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	counts = bpfrt_object_find_map(obj, "counts");
	percpu = bpfrt_object_find_map(obj, "percpu_counts");
	REQUIRE(counts && percpu);
	CHECK_EQ(bpfrt_map_type(counts), BPF_MAP_TYPE_CGROUP_STORAGE);
	CHECK_EQ(bpfrt_map_key_size(counts), 16);
	CHECK_EQ(bpfrt_map_value_size(counts), 16);
	CHECK_EQ(bpfrt_map_type(percpu), BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	CHECK_EQ(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "count_packets"), &ro),
		 -EOPNOTSUPP);
	bpfrt_object_close(obj);
}

/* ---- maps of kernel objects: always empty in bpfrt ----------------------------- */

static const struct create_case kernel_object_cases[] = {
	{ "sockmap", BPF_MAP_TYPE_SOCKMAP, 4, 8, 4, 0, 0, 0 },
	{ "sockmap value 4", BPF_MAP_TYPE_SOCKMAP, 4, 4, 4, 0, 0, 0 },
	{ "sockmap value 2", BPF_MAP_TYPE_SOCKMAP, 4, 2, 4, 0, 0, -EINVAL },
	{ "sockmap key 8", BPF_MAP_TYPE_SOCKMAP, 8, 8, 4, 0, 0, -EINVAL },
	{ "sockmap no entries", BPF_MAP_TYPE_SOCKMAP, 4, 8, 0, 0, 0, -EINVAL },
	{ "sockmap RDONLY_PROG", BPF_MAP_TYPE_SOCKMAP, 4, 8, 4, BPF_F_RDONLY_PROG, 0, -EINVAL },
	{ "sockhash", BPF_MAP_TYPE_SOCKHASH, 12, 8, 4, 0, 0, 0 },
	{ "sockhash key 0", BPF_MAP_TYPE_SOCKHASH, 0, 8, 4, 0, 0, -EINVAL },
	{ "sockhash key 513", BPF_MAP_TYPE_SOCKHASH, 513, 8, 4, 0, 0, -E2BIG },
	{ "reuseport array", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 4, 0, 0, 0 },
	{ "reuseport array value 16", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 16, 4, 0, 0, -EINVAL },
	{ "xskmap", BPF_MAP_TYPE_XSKMAP, 4, 4, 4, 0, 0, 0 },
	{ "xskmap value 8", BPF_MAP_TYPE_XSKMAP, 4, 8, 4, 0, 0, -EINVAL },
	{ "devmap", BPF_MAP_TYPE_DEVMAP, 4, 4, 4, 0, 0, 0 },
	{ "devmap value 8", BPF_MAP_TYPE_DEVMAP, 4, 8, 4, 0, 0, 0 },
	{ "devmap value 12", BPF_MAP_TYPE_DEVMAP, 4, 12, 4, 0, 0, -EINVAL },
	{ "devmap RDONLY_PROG", BPF_MAP_TYPE_DEVMAP, 4, 4, 4, BPF_F_RDONLY_PROG, 0, -EINVAL },
	{ "devmap hash", BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 4, 0, 0, 0 },
	{ "cpumap", BPF_MAP_TYPE_CPUMAP, 4, 4, 4, 0, 0, 0 },
	{ "cpumap value 2", BPF_MAP_TYPE_CPUMAP, 4, 2, 4, 0, 0, -EINVAL },
	{ "cpumap RDONLY", BPF_MAP_TYPE_CPUMAP, 4, 4, 4, BPF_F_RDONLY, 0, -EINVAL },
	{ "cpumap past NR_CPUS", BPF_MAP_TYPE_CPUMAP, 4, 4, 8193, 0, 0, -E2BIG, true },
	{ "sk_storage without NO_PREALLOC", BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, 0, 0, -EINVAL },
	{ "sk_storage with entries", BPF_MAP_TYPE_SK_STORAGE, 4, 8, 1, BPF_F_NO_PREALLOC, 0,
	  -EINVAL },
};

TEST(kernel_object_map_creation_as_linux)
{
	int compared = 0;

	for (size_t i = 0; i < ARRAY_LEN(kernel_object_cases); i++) {
		const struct create_case *c = &kernel_object_cases[i];
		int got = try_create(c->type, c->key, c->value, c->max, c->flags, c->extra);
		int lx = kernel_create(c->type, c->key, c->value, c->max, c->flags, c->extra);

		CHECK_EQ(got, c->want, "%s: %s", c->what, bpfrt_last_error());
		if (lx != 1 && !c->kernels_differ) {
			CHECK_EQ(lx, c->want, "%s: the kernel answers differently", c->what);
			compared++;
		}
	}
	/* Linux also wants BTF for a socket storage's key and value, which a
	 * bare create has not: bpfrt makes it (the loader has the BTF) */
	CHECK_EQ(try_create(BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, 0), 0, "%s",
		 bpfrt_last_error());
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2) as under qemu-user): bpfrt checked against the "
		     "table only");
}

/* One user-space operation on an empty map of a kind, as bpfrt and, when it
 * can, the kernel answer it. */
struct kom_op {
	const char *what;
	enum bpf_map_type type;
	uint32_t key_size, value_size;
	char op;          /* l(ookup) u(pdate) d(elete) n(ext key) */
	uint32_t key;     /* index, or (sk_storage) an fd */
	int64_t value;    /* update: the fd, ifindex or qsize */
	uint64_t flags;
	int want;
};

static int kom_run(const struct kom_op *o, struct bpfrt_map *m, int kfd)
{
	uint8_t key[16] = { 0 }, val[16] = { 0 }, out[16];
	int err = 0;

	memcpy(key, &o->key, 4);
	memcpy(val, &o->value, o->value_size < 8 ? o->value_size : 8);
	switch (o->op) {
	case 'l': err = m ? bpfrt_map_lookup_elem(m, key, out) : bpf_map_lookup_elem(kfd, key, out); break;
	case 'u': err = m ? bpfrt_map_update_elem(m, key, val, o->flags)
			  : bpf_map_update_elem(kfd, key, val, o->flags); break;
	case 'd': err = m ? bpfrt_map_delete_elem(m, key) : bpf_map_delete_elem(kfd, key); break;
	case 'n': err = m ? bpfrt_map_get_next_key(m, NULL, out)
			  : bpf_map_get_next_key(kfd, NULL, out); break;
	}
	if (!m)
		err = err < 0 ? (errno == 524 ? -EOPNOTSUPP : -errno) : 0;
	return err;
}

TEST(kernel_object_maps_are_empty_as_linux)
{
	static const struct kom_op ops[] = {
		{ "sockmap lookup", BPF_MAP_TYPE_SOCKMAP, 4, 8, 'l', 0, 0, 0, -ENOENT },
		{ "sockmap lookup u32", BPF_MAP_TYPE_SOCKMAP, 4, 4, 'l', 0, 0, 0, -ENOSPC },
		{ "sockmap update bad fd", BPF_MAP_TYPE_SOCKMAP, 4, 8, 'u', 0, 999999, 0, -EBADF },
		{ "sockmap update fd > S32_MAX", BPF_MAP_TYPE_SOCKMAP, 4, 8, 'u', 0, 1ll << 32, 0,
		  -EINVAL },
		{ "sockmap delete", BPF_MAP_TYPE_SOCKMAP, 4, 8, 'd', 0, 0, 0, -EINVAL },
		{ "sockmap next key", BPF_MAP_TYPE_SOCKMAP, 4, 8, 'n', 0, 0, 0, 0 },
		{ "sockhash lookup", BPF_MAP_TYPE_SOCKHASH, 4, 8, 'l', 0, 0, 0, -ENOENT },
		{ "sockhash delete", BPF_MAP_TYPE_SOCKHASH, 4, 8, 'd', 0, 0, 0, -ENOENT },
		{ "sockhash next key", BPF_MAP_TYPE_SOCKHASH, 4, 8, 'n', 0, 0, 0, -ENOENT },
		{ "reuseport update past end", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 'u', 9, 0, 0,
		  -E2BIG },
		{ "reuseport delete", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 'd', 0, 0, 0, -ENOENT },
		{ "reuseport delete past end", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 'd', 9, 0, 0,
		  -E2BIG },
		{ "xskmap lookup", BPF_MAP_TYPE_XSKMAP, 4, 4, 'l', 0, 0, 0, -EOPNOTSUPP },
		{ "xskmap delete", BPF_MAP_TYPE_XSKMAP, 4, 4, 'd', 0, 0, 0, 0 },
		{ "xskmap delete past end", BPF_MAP_TYPE_XSKMAP, 4, 4, 'd', 9, 0, 0, -EINVAL },
		{ "xskmap update bad fd", BPF_MAP_TYPE_XSKMAP, 4, 4, 'u', 0, 999999, 0, -EBADF },
		{ "devmap lookup", BPF_MAP_TYPE_DEVMAP, 4, 4, 'l', 0, 0, 0, -ENOENT },
		{ "devmap update ifindex 0", BPF_MAP_TYPE_DEVMAP, 4, 4, 'u', 0, 0, 0, 0 },
		{ "devmap update NOEXIST", BPF_MAP_TYPE_DEVMAP, 4, 4, 'u', 0, 0, BPF_NOEXIST, -EEXIST },
		{ "devmap delete", BPF_MAP_TYPE_DEVMAP, 4, 4, 'd', 0, 0, 0, 0 },
		{ "devmap hash update ifindex 0", BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 'u', 0, 0, 0,
		  -EINVAL },
		{ "devmap hash delete", BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 'd', 0, 0, 0, -ENOENT },
		{ "cpumap lookup", BPF_MAP_TYPE_CPUMAP, 4, 4, 'l', 0, 0, 0, -ENOENT },
		{ "cpumap update qsize 0", BPF_MAP_TYPE_CPUMAP, 4, 4, 'u', 0, 0, 0, 0 },
		{ "cpumap update qsize too large", BPF_MAP_TYPE_CPUMAP, 4, 4, 'u', 0, 16385, 0,
		  -EOVERFLOW },
		{ "cpumap delete past end", BPF_MAP_TYPE_CPUMAP, 4, 4, 'd', 9, 0, 0, -EINVAL },
	};
	bool compared = false;

	for (size_t i = 0; i < ARRAY_LEN(ops); i++) {
		const struct kom_op *o = &ops[i];
		struct bpfrt_map *m = NULL;
		int kfd = bpf_map_create(o->type, "k", o->key_size, o->value_size, 4, NULL);

		REQUIRE(bpfrt_map_create(o->type, "k", o->key_size, o->value_size, 4, NULL, &m) == 0,
			"%s: %s", o->what, bpfrt_last_error());
		CHECK_EQ(kom_run(o, m, -1), o->want, "%s: %s", o->what, bpfrt_last_error());
		if (kfd >= 0) {
			CHECK_EQ(kom_run(o, NULL, kfd), o->want, "%s: the kernel answers differently",
				 o->what);
			compared = true;
			close(kfd);
		}
		bpfrt_map_free(m);
	}
	/* a descriptor that is no socket: -ENOTSOCK, as Linux's sockfd_lookup */
	{
		struct bpfrt_map *m = NULL;
		int fd = open("/dev/null", O_RDONLY);
		uint32_t k = 0;
		uint64_t v = (uint64_t)fd;

		REQUIRE(fd >= 0);
		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_SOCKMAP, "k", 4, 8, 4, NULL, &m) == 0);
		CHECK_EQ(bpfrt_map_update_elem(m, &k, &v, BPF_ANY), -ENOTSOCK);
		bpfrt_map_free(m);
		close(fd);
	}
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2) as under qemu-user): compared with the table only");
}
