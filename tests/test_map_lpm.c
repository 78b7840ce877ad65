/* BPF_MAP_TYPE_LPM_TRIE: creation rules, longest-prefix matches, error
 * codes and get_next_key order, each against the running kernel's LPM
 * trie fed the same operations (random ones too), the program side in
 * every engine, and lookups concurrent with updates. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct key4 {
	uint32_t prefixlen;
	uint8_t data[4];
};

static struct key4 k4(uint32_t plen, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return (struct key4){ plen, { a, b, c, d } };
}

static struct bpfrt_map *lpm_create(uint32_t max)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	struct bpfrt_map *m = NULL;

	if (bpfrt_map_create(BPF_MAP_TYPE_LPM_TRIE, "lpm", sizeof(struct key4), 8, max, &o, &m))
		tl_fail(__FILE__, __LINE__, "create: %s", bpfrt_last_error());
	return m;
}

/* The kernel's copy, or -1 when it cannot be had (not root). */
static int kernel_lpm(uint32_t max)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);

	return bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "lpm", sizeof(struct key4), 8, max, &o);
}

static int kerr(int rc)
{
	return rc < 0 ? -errno : 0;
}

TEST(creation_rules_as_linux)
{
	static const struct {
		uint32_t key, value, max, flags;
		int want;
	} cases[] = {
		{ 8, 8, 16, BPF_F_NO_PREALLOC, 0 },
		{ 8, 8, 16, 0, -EINVAL },                       /* must be NO_PREALLOC */
		{ 4, 8, 16, BPF_F_NO_PREALLOC, -EINVAL },       /* no data bytes */
		{ 5, 8, 16, BPF_F_NO_PREALLOC, 0 },
		{ 260, 8, 16, BPF_F_NO_PREALLOC, 0 },
		{ 261, 8, 16, BPF_F_NO_PREALLOC, -EINVAL },     /* data past 256 bytes */
		{ 8, 0, 16, BPF_F_NO_PREALLOC, -EINVAL },
		{ 8, 8, 0, BPF_F_NO_PREALLOC, -EINVAL },
		{ 8, 8, 16, BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED, -EINVAL },
		{ 8, 8, 16, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG, 0 },
	};
	bool compared = false;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = cases[i].flags);
		LIBBPF_OPTS(bpf_map_create_opts, ko, .map_flags = cases[i].flags);
		struct bpfrt_map *m = NULL;
		int err = bpfrt_map_create(BPF_MAP_TYPE_LPM_TRIE, "lpm", cases[i].key,
					   cases[i].value, cases[i].max, &o, &m);
		int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "lpm", cases[i].key, cases[i].value,
					cases[i].max, &ko);

		CHECK_EQ(err, cases[i].want, "case %zu: %s", i, bpfrt_last_error());
		if (fd >= 0 || (errno != EPERM && errno != ENOSYS)) { /* ENOSYS: qemu-user */
			compared = true;
			CHECK_EQ(fd >= 0 ? 0 : -errno, cases[i].want, "case %zu: the kernel", i);
		}
		if (fd >= 0)
			close(fd);
		bpfrt_map_free(m);
	}
	if (!compared)
		SKIP("the kernel created no map (not root, or no bpf(2) as under qemu-user): checked against the table only");
}

/* Every get_next_key key from the start, as "len:a.b.c.d" strings joined. */
static void order_bpfrt(struct bpfrt_map *m, char *out, size_t len)
{
	struct key4 k, next;
	size_t n = 0;
	int guard = 0;

	out[0] = 0;
	for (int err = bpfrt_map_get_next_key(m, NULL, &next); !err && guard++ < 10000;
	     err = bpfrt_map_get_next_key(m, &k, &next)) {
		k = next;
		n += (size_t)snprintf(out + n, len - n, "%u.%u.%u.%u/%u ", k.data[0], k.data[1],
				      k.data[2], k.data[3], k.prefixlen);
		if (n >= len)
			break;
	}
}

static void order_kernel(int fd, char *out, size_t len)
{
	struct key4 k, next;
	size_t n = 0;
	int guard = 0;

	out[0] = 0;
	for (int err = bpf_map_get_next_key(fd, NULL, &next); !err && guard++ < 10000;
	     err = bpf_map_get_next_key(fd, &k, &next)) {
		k = next;
		n += (size_t)snprintf(out + n, len - n, "%u.%u.%u.%u/%u ", k.data[0], k.data[1],
				      k.data[2], k.data[3], k.prefixlen);
		if (n >= len)
			break;
	}
}

TEST(longest_prefix_match_and_errors)
{
	struct bpfrt_map *m = lpm_create(4);
	struct key4 k;
	uint64_t v;
	char order[512];

	REQUIRE(m);
	k = k4(16, 192, 168, 0, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 16 }, BPF_ANY), 0);
	k = k4(24, 192, 168, 1, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 24 }, BPF_NOEXIST), 0);
	k = k4(24, 192, 168, 1, 99);  /* the same /24 prefix */
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 25 }, BPF_NOEXIST), -EEXIST);
	k = k4(8, 10, 0, 0, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 8 }, BPF_EXIST), -ENOENT);
	k = k4(33, 10, 0, 0, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 8 }, BPF_ANY), -EINVAL);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 8 }, 4), -EINVAL);
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), -EINVAL);

	k = k4(32, 192, 168, 1, 7);
	CHECK(bpfrt_map_lookup_elem(m, &k, &v) == 0 && v == 24, "%llu", (unsigned long long)v);
	k = k4(32, 192, 168, 2, 7);
	CHECK(bpfrt_map_lookup_elem(m, &k, &v) == 0 && v == 16);
	k = k4(20, 192, 168, 1, 7);  /* only the first 20 bits count */
	CHECK(bpfrt_map_lookup_elem(m, &k, &v) == 0 && v == 16);
	k = k4(32, 10, 1, 1, 1);
	CHECK_EQ(bpfrt_map_lookup_elem(m, &k, &v), -ENOENT);

	k = k4(24, 192, 168, 128, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 128 }, BPF_ANY), 0);
	k = k4(24, 192, 168, 0, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 0 }, BPF_ANY), 0);
	k = k4(8, 10, 0, 0, 0);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 8 }, BPF_ANY), -ENOSPC);
	/* Linux's example order: more specific first, left before right */
	order_bpfrt(m, order, sizeof(order));
	CHECK_STR_EQ(order, "192.168.0.0/24 192.168.1.0/24 192.168.128.0/24 192.168.0.0/16 ");
	k = k4(24, 192, 168, 1, 0);
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), 0);
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), -ENOENT);
	k = k4(16, 192, 168, 0, 0);
	CHECK_EQ(bpfrt_map_delete_elem(m, &k), 0);
	k = k4(32, 192, 168, 1, 7);
	CHECK_EQ(bpfrt_map_lookup_elem(m, &k, &v), -ENOENT);
	order_bpfrt(m, order, sizeof(order));
	CHECK_STR_EQ(order, "192.168.0.0/24 192.168.128.0/24 ");
	bpfrt_map_free(m);
}

/* Random updates and deletes of short prefixes (so they nest and part
 * often), the same on both; every answer, the key order and random
 * lookups must agree. */
TEST(random_operations_match_the_kernel)
{
	struct bpfrt_map *m = lpm_create(48);
	int fd = kernel_lpm(48);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	char a[4096], b[4096];

	REQUIRE(m);
	if (fd < 0) {
		bpfrt_map_free(m);
		SKIP("no kernel LPM trie to compare with (%s): needs root", strerror(errno));
	}
	for (int i = 0; i < 4000 && !tl_failed(); i++) {
		uint32_t r;
		struct key4 k;
		uint64_t v = (uint64_t)i, kv = 0, bv = 0;
		int op, e1, e2;

		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		r = (uint32_t)seed;
		/* prefixes in 10.0.0.0/12 with few distinct bits */
		k = k4(8 + (r & 7) * 3, 10, (uint8_t)(r >> 8 & 0xf0), (uint8_t)(r >> 16 & 0xc0), 0);
		op = (int)(r >> 28) % 4;
		if (op == 0 || op == 1) {
			uint64_t flags = (r >> 24) % 3;

			e1 = bpfrt_map_update_elem(m, &k, &v, flags);
			e2 = kerr(bpf_map_update_elem(fd, &k, &v, flags));
		} else if (op == 2) {
			e1 = bpfrt_map_delete_elem(m, &k);
			e2 = kerr(bpf_map_delete_elem(fd, &k));
		} else {
			k.prefixlen = 32;
			k.data[3] = (uint8_t)r;
			e1 = bpfrt_map_lookup_elem(m, &k, &bv);
			e2 = kerr(bpf_map_lookup_elem(fd, &k, &kv));
			if (!e1 && !e2)
				CHECK_EQ(bv, kv, "step %d: lookup", i);
		}
		CHECK_EQ(e1, e2, "step %d: op %d on %u.%u.%u.%u/%u", i, op, k.data[0], k.data[1],
			 k.data[2], k.data[3], k.prefixlen);
		if (i % 50 == 0) {
			order_bpfrt(m, a, sizeof(a));
			order_kernel(fd, b, sizeof(b));
			CHECK_STR_EQ(a, b, "step %d: get_next_key order", i);
		}
	}
	/* a key not in the map, and one with a bad prefixlen, start over */
	{
		struct key4 k = k4(31, 1, 2, 3, 4), n1, n2;
		int e1 = bpfrt_map_get_next_key(m, &k, &n1);
		int e2 = kerr(bpf_map_get_next_key(fd, &k, &n2));

		CHECK_EQ(e1, e2);
		if (!e1 && !e2)
			CHECK(!memcmp(&n1, &n2, sizeof(n1)), "first key after a missing one");
		k.prefixlen = 40;
		e1 = bpfrt_map_get_next_key(m, &k, &n1);
		e2 = kerr(bpf_map_get_next_key(fd, &k, &n2));
		CHECK_EQ(e1, e2);
	}
	close(fd);
	bpfrt_map_free(m);
}

ALL_ENGINES(programs_match_prefixes)
{
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));
	struct bpfrt_map *m;
	struct key4 k = k4(16, 10, 1, 0, 0);
	size_t sz = 0;
	long *rc;

	REQUIRE(bpfrt_object_open(tl_prog_path("lpm.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	m = bpfrt_object_find_map(obj, "routes");
	rc = bpfrt_object_global(obj, "rc", &sz);
	REQUIRE(m && rc);
	CHECK_EQ(bpfrt_map_update_elem(m, &k, &(uint64_t){ 16 }, BPF_ANY), 0);
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "lpm_ops"), &ro) == 0, "%s",
		bpfrt_last_error());
	CHECK_EQ(ro.retval, 8);
	CHECK_EQ(rc[0], 16, "10.1.2.3 matches the user's /16");
	CHECK_EQ(rc[1], 0, "the program adds 10.1.2.0/24");
	CHECK_EQ(rc[2], 24, "10.1.2.3 now matches the /24");
	CHECK_EQ(rc[3], -1, "10.2.0.0 matches nothing");
	CHECK_EQ(rc[4], -EEXIST);
	CHECK_EQ(rc[5], 0, "delete the /24");
	CHECK_EQ(rc[6], -ENOENT);
	CHECK_EQ(rc[7], 16, "back to the /16");
	bpfrt_object_close(obj);
}

/* Linux: one lock for writers, lock-free (RCU) lookups. Readers looking up
 * a stable /8 while writers add and remove nested prefixes always find a
 * match with one of the values ever stored there. */
struct lpm_arg {
	struct bpfrt_map *m;
	bool stop;
	long bad, lookups;
};

static void *lpm_writer(void *p)
{
	struct lpm_arg *a = p;

	for (uint32_t i = 0; i < 20000; i++) {
		struct key4 k = k4(9 + i % 20, 10, (uint8_t)(i * 37), (uint8_t)(i * 11), 0);
		uint64_t v = 1000 + k.prefixlen;

		if (i % 3 == 2)
			bpfrt_map_delete_elem(a->m, &k);
		else
			bpfrt_map_update_elem(a->m, &k, &v, BPF_ANY);
	}
	return NULL;
}

static void *lpm_reader(void *p)
{
	struct lpm_arg *a = p;
	long n = 0, bad = 0;

	while (!__atomic_load_n(&a->stop, __ATOMIC_RELAXED)) {
		struct key4 k = k4(32, 10, (uint8_t)n, (uint8_t)(n >> 8), 1);
		uint64_t v = 0;

		if (bpfrt_map_lookup_elem(a->m, &k, &v) || (v != 8 && (v < 1009 || v > 1028)))
			bad++;
		n++;
	}
	__atomic_add_fetch(&a->bad, bad, __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->lookups, n, __ATOMIC_RELAXED);
	return NULL;
}

TEST(lookups_concurrent_with_updates_always_match)
{
	struct lpm_arg a = { .m = lpm_create(4096) };
	pthread_t w[2], r[2];
	struct key4 k = k4(8, 10, 0, 0, 0);

	REQUIRE(a.m);
	CHECK_EQ(bpfrt_map_update_elem(a.m, &k, &(uint64_t){ 8 }, BPF_ANY), 0);
	for (int i = 0; i < 2; i++) {
		pthread_create(&r[i], NULL, lpm_reader, &a);
		pthread_create(&w[i], NULL, lpm_writer, &a);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&a.stop, true, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	CHECK_EQ(a.bad, 0, "of %ld lookups", a.lookups);
	CHECK(a.lookups > 0);
	bpfrt_map_free(a.m);
}
