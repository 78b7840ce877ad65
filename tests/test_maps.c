/* Maps: every kind, flag and error code against Linux's behaviour, the
 * program-side ops, the ring buffer record format, and the RCU module. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "core/rcu.h"
#include "maps/map.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A zeroed program with code, marked loaded (a slot takes loaded programs only): trusted
 * and of no kind, so any slot takes it (which programs a slot takes:
 * test_ctx_compat). Never run. */
static struct bpfrt_prog *fake_prog(void)
{
	static struct bpf_insn code[1];
	struct bpfrt_prog *p = calloc(1, sizeof(*p));

	if (p) {
		p->insns = code;
		p->insn_cnt = 1;
		p->loaded = true;
	}
	return p;
}

static struct bpfrt_map *create(enum bpf_map_type type, uint32_t key_size,
				uint32_t value_size, uint32_t max_entries, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_map_create_opts, opts, .map_flags = flags);
	struct bpfrt_map *map = NULL;
	int err = bpfrt_map_create(type, "test_map", key_size, value_size, max_entries,
				   &opts, &map);

	if (err)
		tl_fail(__FILE__, __LINE__, "create type %d: %d %s", type, err,
			bpfrt_last_error());
	return map;
}

static int try_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size,
		      uint32_t max_entries, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_map_create_opts, opts, .map_flags = flags);
	struct bpfrt_map *map = (struct bpfrt_map *)1;
	int err = bpfrt_map_create(type, "m", key_size, value_size, max_entries, &opts, &map);

	if (!err)
		bpfrt_map_free(map);
	else if (map)
		tl_fail(__FILE__, __LINE__, "failed create left *map set");
	return err;
}

/* Runs on CPU 0 only so "this CPU's slot" is known. */
static bool pin_to_cpu0(cpu_set_t *old)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(*old), old))
		return false;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == 0;
}

/* ---- creation ---------------------------------------------------------------- */

TEST(create_rejects_bad_attributes)
{
	struct bpfrt_map *map = NULL;
	struct {
		uint64_t a;
		uint64_t b;
		uint64_t c;
		uint64_t extra;
	} big = { sizeof(big), 0, 0, 1 };

	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_INODE_STORAGE, 4, 4, 16, 0), -EINVAL);
	CHECK_EQ(try_create((enum bpf_map_type)1000, 4, 8, 16, 0), -EINVAL);
	/* array */
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 8, 8, 16, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 0, 16, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 0, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, BPF_F_NO_PREALLOC), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, BPF_F_RDONLY | BPF_F_WRONLY), -EINVAL);
	CHECK(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16,
			 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG) == -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, BPF_F_RDONLY_PROG | BPF_F_MMAPABLE), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, BPFRT_MAP_VALUE_SIZE_MAX + 1, 1, 0), -E2BIG);
	CHECK_EQ(try_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, BPFRT_PERCPU_VALUE_MAX + 1, 1, 0), -E2BIG);
	CHECK_EQ(try_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, BPF_F_MMAPABLE), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_ARRAY, 4, 1 << 20, 1 << 13, 0), -ENOMEM);
	/* hash */
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 0, 8, 16, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 4, 0, 16, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 4, 8, 0, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 513, 8, 16, 0), -E2BIG);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 512, 8, 16, 0), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 4, BPFRT_MAP_VALUE_SIZE_MAX, 16, 0), -E2BIG);
	CHECK_EQ(try_create(BPF_MAP_TYPE_PERCPU_HASH, 4, BPFRT_PERCPU_VALUE_MAX + 1, 16, 0), -E2BIG);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 4, 8, 16, BPF_F_NO_COMMON_LRU), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 4, 8, 16, BPF_F_MMAPABLE), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_HASH, 4, 8, 16, BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_LRU_HASH, 4, 8, 16, BPF_F_NO_COMMON_LRU), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_LRU_HASH, 4, 8, 16, BPF_F_NO_PREALLOC), -EOPNOTSUPP);
	/* ringbuf */
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096 * 3, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 2048, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 0, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 4, 0, 4096, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 8, 4096, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, BPF_F_RDONLY_PROG), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 1u << 31, 0), -E2BIG);
	/* prog array */
	CHECK_EQ(try_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 8, 0), 0);
	CHECK_EQ(try_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 8, 8, 0), -EINVAL);
	CHECK_EQ(try_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 8, BPF_F_RDONLY_PROG), -EINVAL);
	/* names and opts */
	CHECK(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "bad-name", 4, 4, 1, NULL, &map) == -EINVAL);
	CHECK(map == NULL);
	CHECK(strstr(bpfrt_last_error(), "bad-name") != NULL, "message: %s", bpfrt_last_error());
	CHECK(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "ok", 4, 4, 1,
			       (struct bpfrt_map_create_opts *)&big, &map) == -EINVAL);
	big.extra = 0;
	CHECK(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "ok", 4, 4, 1,
			       (struct bpfrt_map_create_opts *)&big, &map) == 0);
	bpfrt_map_free(map);
	CHECK(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL, NULL) == -EINVAL);
}

/* Unsupported types are named as Linux names them. */
TEST(create_names_unsupported_types)
{
	CHECK_EQ(try_create(BPF_MAP_TYPE_INODE_STORAGE, 4, 4, 16, 0), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "map type BPF_MAP_TYPE_INODE_STORAGE is not supported"), "%s",
	      bpfrt_last_error());
	CHECK_EQ(try_create((enum bpf_map_type)1000, 4, 8, 16, 0), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "unknown map type 1000"), "%s", bpfrt_last_error());
}

TEST(create_accessors_and_names)
{
	struct bpfrt_map *map = NULL;
	char longname[200];

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PERCPU_HASH, "counts.v1", 12, 5, 33, NULL,
				 &map) == 0);
	CHECK(!strcmp(bpfrt_map_name(map), "counts.v1"));
	CHECK_EQ(bpfrt_map_type(map), BPF_MAP_TYPE_PERCPU_HASH);
	CHECK_EQ(bpfrt_map_key_size(map), 12);
	CHECK_EQ(bpfrt_map_value_size(map), 5);
	CHECK_EQ(bpfrt_map_max_entries(map), 33);
	CHECK_EQ(bpfrt_map_flags(map), 0);
	CHECK_EQ(bpfrt_map_value_buf_size(map), (size_t)bpfrt_num_possible_cpus() * 8);
	bpfrt_map_free(map);

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, longname, 4, 4, 1, NULL, &map) == 0);
	CHECK_EQ(strlen(bpfrt_map_name(map)), BPFRT_NAME_LEN - 1);
	bpfrt_map_free(map);
	bpfrt_map_free(NULL);
}

TEST(possible_cpus_matches_sysfs)
{
	int n = bpfrt_num_possible_cpus();

	CHECK(n >= 1);
	CHECK(n >= (int)sysconf(_SC_NPROCESSORS_ONLN), "n=%d", n);
}

/* ---- array ---------------------------------------------------------------------- */

/* A run sees one CPU's per-CPU slots even if its thread migrates: the
 * first per-CPU access of a read section fixes the CPU until the section
 * ends (the kernel disables migration for a run). The thread is moved by
 * changing its affinity inside the section. */
TEST(percpu_slot_fixed_for_a_read_section)
{
	cpu_set_t old, one;
	int first = -1, second = -1;

	REQUIRE(!sched_getaffinity(0, sizeof(old), &old));
	for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
		if (CPU_ISSET(c, &old) && c < bpfrt_map_nr_cpus())
			*(first < 0 ? &first : &second) = c;
	if (second < 0)
		SKIP("one usable CPU: nothing to migrate to");
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	REQUIRE(!sched_setaffinity(0, sizeof(one), &one));
	bpfrt_rcu_read_lock();
	int seen = bpfrt_map_this_cpu();
	CPU_ZERO(&one);
	CPU_SET(second, &one);
	REQUIRE(!sched_setaffinity(0, sizeof(one), &one));
	int moved = sched_getcpu();
	bpfrt_rcu_read_lock();  /* a nested section keeps the outer one's CPU */
	CHECK(bpfrt_map_this_cpu() == seen, "nested section: cpu %d, section began on %d",
	      bpfrt_map_this_cpu(), seen);
	bpfrt_rcu_read_unlock();
	CHECK(bpfrt_map_this_cpu() == seen, "cpu %d after moving to %d, section began on %d",
	      bpfrt_map_this_cpu(), moved, seen);
	bpfrt_rcu_read_unlock();
	if (moved == second)  /* qemu-user reports the host's CPU, not ours */
		CHECK(bpfrt_map_this_cpu() == second, "outside a section: cpu %d, thread on %d",
		      bpfrt_map_this_cpu(), second);
	sched_setaffinity(0, sizeof(old), &old);
}

TEST(array_semantics)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_ARRAY, 4, 12, 8, 0);
	uint32_t key, next;
	uint8_t val[12], out[12];
	int n;

	REQUIRE(map);
	key = 3;
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	for (int i = 0; i < 12; i++)
		CHECK_EQ(out[i], 0, "zero-initialised");
	memset(val, 0xab, sizeof(val));
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	CHECK(!memcmp(out, val, sizeof(val)));
	val[0] = 1;
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, BPF_EXIST), 0);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, BPF_F_LOCK), -EINVAL);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, 8), -EINVAL);
	key = 8;
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), -ENOENT);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, BPF_ANY), -E2BIG);
	key = UINT32_MAX;
	CHECK_EQ(bpfrt_map_update_elem(map, &key, val, BPF_ANY), -E2BIG);
	key = 1;
	CHECK_EQ(bpfrt_map_delete_elem(map, &key), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "delete") != NULL, "message: %s", bpfrt_last_error());

	/* get_next_key: NULL -> 0, then each index, -ENOENT after the last;
	 * an out-of-range key restarts at 0. */
	n = 0;
	for (int err = bpfrt_map_get_next_key(map, NULL, &next); !err;
	     err = bpfrt_map_get_next_key(map, &key, &next)) {
		CHECK_EQ(next, (uint32_t)n, "next %u at step %d", next, n);
		key = next;
		n++;
	}
	CHECK_EQ(n, 8);
	key = 7;
	CHECK_EQ(bpfrt_map_get_next_key(map, &key, &next), -ENOENT);
	key = 100;
	CHECK(bpfrt_map_get_next_key(map, &key, &next) == 0 && next == 0);

	/* Program side: pointers into the same storage. */
	key = 3;
	uint8_t *p = bpfrt_map_prog_lookup(map, &key);

	REQUIRE(p);
	CHECK(p[0] == 1 && p[1] == 0xab);
	CHECK_EQ(((uintptr_t)p & 7), 0, "values 8-byte aligned");
	p[0] = 9;
	CHECK(bpfrt_map_lookup_elem(map, &key, out) == 0 && out[0] == 9);
	CHECK(bpfrt_map_value_ptr(map, 3) == p);
	CHECK(bpfrt_map_value_ptr(map, 8) == NULL);
	key = 4;
	CHECK((uint8_t *)bpfrt_map_prog_lookup(map, &key) == p + 16, "stride round_up(12, 8)");
	key = 8;
	CHECK(bpfrt_map_prog_lookup(map, &key) == NULL);
	CHECK_EQ(bpfrt_map_prog_update(map, &key, val, BPF_ANY), -E2BIG);
	key = 2;
	CHECK_EQ(bpfrt_map_prog_update(map, &key, val, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_prog_update(map, &key, val, 3), -EINVAL);
	CHECK_EQ(bpfrt_map_prog_update(map, &key, val, BPF_EXIST), 0);
	CHECK(bpfrt_map_lookup_elem(map, &key, out) == 0 && !memcmp(out, val, 12));
	CHECK_EQ(bpfrt_map_prog_delete(map, &key), -EINVAL);
	CHECK(bpfrt_map_lookup_elem(map, NULL, out) == -EINVAL);
	CHECK(bpfrt_map_lookup_elem(map, &key, NULL) == -EINVAL);
	CHECK(bpfrt_map_update_elem(NULL, &key, val, 0) == -EINVAL);
	CHECK(bpfrt_map_delete_elem(map, NULL) == -EINVAL);
	CHECK(bpfrt_map_get_next_key(map, NULL, NULL) == -EINVAL);
	bpfrt_map_free(map);
}

TEST(percpu_array_every_cpu)
{
	int ncpu = bpfrt_num_possible_cpus();
	struct bpfrt_map *map = create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 4, 0);
	uint64_t *buf = calloc(ncpu, 8), *out = calloc(ncpu, 8);
	uint32_t key = 2, v;
	cpu_set_t old;

	REQUIRE(map && buf && out);
	for (int c = 0; c < ncpu; c++)
		buf[c] = 0xdead00000000ull | (100 + c);  /* high half beyond value_size */
	CHECK_EQ(bpfrt_map_update_elem(map, &key, buf, BPF_ANY), 0);
	memset(out, 0xff, ncpu * 8);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	for (int c = 0; c < ncpu; c++)
		CHECK_EQ(out[c], (uint64_t)(100 + c), "cpu %d: %llx", c, (unsigned long long)out[c]);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, buf, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_delete_elem(map, &key), -EINVAL);
	key = 4;
	CHECK_EQ(bpfrt_map_update_elem(map, &key, buf, BPF_ANY), -E2BIG);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), -ENOENT);

	if (!pin_to_cpu0(&old)) {
		free(buf);
		free(out);
		bpfrt_map_free(map);
		SKIP("cannot pin to CPU 0");
	}
	key = 2;
	uint32_t *p = bpfrt_map_prog_lookup(map, &key);

	CHECK(p && *p == 100, "this CPU's slot");
	v = 7;
	CHECK_EQ(bpfrt_map_prog_update(map, &key, &v, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	CHECK_EQ(out[0], 7);
	for (int c = 1; c < ncpu; c++)
		CHECK_EQ(out[c], (uint64_t)(100 + c), "other CPUs untouched");
	sched_setaffinity(0, sizeof(old), &old);
	free(buf);
	free(out);
	bpfrt_map_free(map);
}

/* ---- hash ------------------------------------------------------------------------ */

struct key48 {
	uint32_t d[12];
};

TEST(hash_flags_and_errors)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_HASH, sizeof(struct key48), 48, 4, 0);
	struct key48 k = { { 0 } }, v = { { 0 } }, out;

	REQUIRE(map);
	k.d[10] = 5;
	v.d[8] = 10;
	CHECK_EQ(bpfrt_map_lookup_elem(map, &k, &out), -ENOENT);
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_EXIST), -ENOENT);
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), 0);
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), -EEXIST);
	CHECK(bpfrt_map_lookup_elem(map, &k, &out) == 0 && out.d[8] == 10);
	v.d[8] = 11;
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_EXIST), 0);
	CHECK(bpfrt_map_lookup_elem(map, &k, &out) == 0 && out.d[8] == 11);
	v.d[8] = 12;
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_ANY), 0);
	CHECK(bpfrt_map_lookup_elem(map, &k, &out) == 0 && out.d[8] == 12);
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_F_LOCK), -EINVAL);
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, 3), -EINVAL);
	CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, 3), -EINVAL);
	CHECK_EQ(bpfrt_map_delete_elem(map, &k), 0);
	CHECK_EQ(bpfrt_map_delete_elem(map, &k), -ENOENT);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &k, &out), -ENOENT);
	CHECK(bpfrt_map_get_next_key(map, NULL, &out) == -ENOENT, "empty map");

	/* Full: -E2BIG for a new key; replacing and deleting still work. */
	for (uint32_t i = 0; i < 4; i++) {
		k.d[0] = i;
		CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), 0, "i=%u", i);
	}
	k.d[0] = 4;
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_ANY), -E2BIG);
	CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, BPF_ANY), -E2BIG);
	for (int round = 0; round < 200; round++) {
		k.d[0] = round % 4;
		v.d[0] = round;
		CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_ANY), 0, "replace when full");
		CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, BPF_EXIST), 0, "replace when full");
	}
	k.d[0] = 1;
	CHECK_EQ(bpfrt_map_delete_elem(map, &k), 0);
	k.d[0] = 4;
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), 0);
	k.d[0] = 5;
	CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), -E2BIG);
	bpfrt_map_free(map);
}

/* The private-stack benchmark's hash map pattern inside one read section:
 * many insert/delete cycles must keep working although nothing can be
 * reused after a grace period (Linux reuses preallocated elements at once). */
TEST(hash_churn_inside_one_read_section)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_HASH, 48, 48, 10, 0);
	struct key48 k = { { 0 } }, v = { { 0 } };
	int fails = 0;

	REQUIRE(map);
	k.d[10] = 5;
	v.d[8] = 10;
	bpfrt_rcu_read_lock();
	for (int i = 0; i < 10000; i++) {
		if (!bpfrt_map_prog_lookup(map, &k) &&
		    bpfrt_map_prog_update(map, &k, &v, BPF_ANY))
			fails++;
		if (bpfrt_map_prog_delete(map, &k))
			fails++;
	}
	bpfrt_rcu_read_unlock();
	CHECK_EQ(fails, 0, "%d failures", fails);
	bpfrt_map_free(map);
}

TEST(hash_get_next_key_covers_all_once)
{
	enum { N = 1000 };
	struct bpfrt_map *map = create(BPF_MAP_TYPE_HASH, 3, 8, N, 0);
	static uint8_t seen[N];
	uint8_t key[3], next[3], missing[3] = { 0xff, 0xff, 0xff };
	int count = 0, err;

	REQUIRE(map);
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < N; i++) {
		uint64_t v = i * 3;

		memcpy(key, &i, 3);
		REQUIRE_EQ(bpfrt_map_update_elem(map, key, &v, BPF_NOEXIST), 0);
	}
	for (err = bpfrt_map_get_next_key(map, NULL, next); !err;
	     err = bpfrt_map_get_next_key(map, key, next)) {
		uint32_t i = 0;
		uint64_t v;

		memcpy(&i, next, 3);
		REQUIRE(i < N, "key %u", i);
		CHECK(!seen[i], "key %u twice", i);
		seen[i] = 1;
		CHECK(bpfrt_map_lookup_elem(map, next, &v) == 0 && v == i * 3);
		memcpy(key, next, 3);
		if (++count > N)
			break;
	}
	CHECK_EQ(err, -ENOENT);
	CHECK_EQ(count, N, "count %d", count);
	/* A key not in the map restarts from the first key. */
	CHECK(bpfrt_map_get_next_key(map, NULL, key) == 0);
	CHECK_EQ(bpfrt_map_get_next_key(map, missing, next), 0);
	CHECK(!memcmp(key, next, 3));
	/* Delete everything while iterating, as user-space tools do. */
	count = 0;
	while (!bpfrt_map_get_next_key(map, NULL, key)) {
		CHECK_EQ(bpfrt_map_delete_elem(map, key), 0);
		if (++count > N)
			break;
	}
	CHECK_EQ(count, N);
	bpfrt_map_free(map);
}

TEST(hash_program_side)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_HASH, 8, 8, 16, 0);
	uint64_t k = 42, v = 1, out;
	uint64_t *p;

	REQUIRE(map);
	bpfrt_rcu_read_lock();
	CHECK(bpfrt_map_prog_lookup(map, &k) == NULL);
	CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, BPF_EXIST), -ENOENT);
	CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, BPF_NOEXIST), 0);
	CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, BPF_NOEXIST), -EEXIST);
	p = bpfrt_map_prog_lookup(map, &k);
	REQUIRE(p);
	CHECK_EQ(((uintptr_t)p & 7), 0);
	__sync_fetch_and_add(p, 5);
	bpfrt_rcu_read_unlock();
	CHECK(bpfrt_map_lookup_elem(map, &k, &out) == 0 && out == 6);
	CHECK_EQ(bpfrt_map_prog_delete(map, &k), 0);
	CHECK_EQ(bpfrt_map_prog_delete(map, &k), -ENOENT);
	bpfrt_map_free(map);
}

TEST(percpu_hash_every_cpu)
{
	int ncpu = bpfrt_num_possible_cpus();
	struct bpfrt_map *map = create(BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 8, 0);
	uint64_t *buf = calloc(ncpu, 8), *out = calloc(ncpu, 8);
	uint32_t key = 9;
	uint64_t v;
	cpu_set_t old;

	REQUIRE(map && buf && out);
	for (int c = 0; c < ncpu; c++)
		buf[c] = 1000 + c;
	CHECK_EQ(bpfrt_map_update_elem(map, &key, buf, BPF_EXIST), -ENOENT);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, buf, BPF_NOEXIST), 0);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, buf, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	for (int c = 0; c < ncpu; c++)
		CHECK_EQ(out[c], (uint64_t)(1000 + c));
	if (!pin_to_cpu0(&old)) {
		free(buf);
		free(out);
		bpfrt_map_free(map);
		SKIP("cannot pin to CPU 0");
	}
	uint64_t *p = bpfrt_map_prog_lookup(map, &key);

	CHECK(p && *p == 1000);
	/* Existing key: this CPU's slot changes in place. */
	v = 5;
	CHECK_EQ(bpfrt_map_prog_update(map, &key, &v, BPF_EXIST), 0);
	CHECK(bpfrt_map_prog_lookup(map, &key) == p && *p == 5);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	for (int c = 1; c < ncpu; c++)
		CHECK_EQ(out[c], (uint64_t)(1000 + c));
	/* New key from a program: other CPUs start at zero, even when the
	 * element is a reused one. */
	CHECK_EQ(bpfrt_map_delete_elem(map, &key), 0);
	bpfrt_rcu_barrier();
	v = 77;
	CHECK_EQ(bpfrt_map_prog_update(map, &key, &v, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, out), 0);
	CHECK_EQ(out[0], 77);
	for (int c = 1; c < ncpu; c++)
		CHECK_EQ(out[c], 0, "cpu %d", c);
	sched_setaffinity(0, sizeof(old), &old);
	free(buf);
	free(out);
	bpfrt_map_free(map);
}

static int count_keys(struct bpfrt_map *map, uint32_t *keys, int max)
{
	uint32_t key, next;
	int n = 0;

	for (int err = bpfrt_map_get_next_key(map, NULL, &next); !err;
	     err = bpfrt_map_get_next_key(map, &key, &next)) {
		if (n < max)
			keys[n] = next;
		key = next;
		if (++n > 100000)
			break;
	}
	return n;
}

TEST(lru_hash_evicts_instead_of_failing)
{
	enum { MAX = 128 };
	struct bpfrt_map *map = create(BPF_MAP_TYPE_LRU_HASH, 4, 8, MAX, 0);
	uint32_t keys[4 * MAX];
	uint64_t v, out;
	int n;

	REQUIRE(map);
	for (uint32_t k = 0; k < MAX; k++) {
		v = k;
		CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), 0);
	}
	/* Referenced by "programs": these survive the next evictions. */
	for (uint32_t k = 0; k < 10; k++)
		CHECK(bpfrt_map_prog_lookup(map, &k) != NULL);
	for (uint32_t k = MAX; k < MAX + 64; k++) {
		v = k;
		CHECK_EQ(bpfrt_map_update_elem(map, &k, &v, BPF_NOEXIST), 0, "k=%u", k);
	}
	n = count_keys(map, keys, 4 * MAX);
	CHECK_EQ(n, MAX, "%d keys", n);
	for (uint32_t k = 0; k < 10; k++)
		CHECK(bpfrt_map_lookup_elem(map, &k, &out) == 0 && out == k,
		      "recently used key %u evicted", k);
	for (uint32_t k = MAX; k < MAX + 64; k++)
		CHECK(bpfrt_map_lookup_elem(map, &k, &out) == 0 && out == k,
		      "new key %u missing", k);
	/* Programs can insert into a full LRU map too. */
	bpfrt_rcu_read_lock();
	for (uint32_t k = 1000; k < 1000 + 3 * MAX; k++) {
		v = k;
		CHECK_EQ(bpfrt_map_prog_update(map, &k, &v, BPF_ANY), 0);
	}
	bpfrt_rcu_read_unlock();
	n = count_keys(map, keys, 4 * MAX);
	CHECK(n <= MAX && n >= MAX - 2, "%d keys", n);
	CHECK_EQ(bpfrt_map_update_elem(map, &keys[0], &v, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(bpfrt_map_delete_elem(map, &keys[0]), 0);
	CHECK_EQ(bpfrt_map_delete_elem(map, &keys[0]), -ENOENT);
	bpfrt_map_free(map);
}

/* ---- prog array ---------------------------------------------------------------- */

TEST(prog_array_slots)
{
	struct bpfrt_map *map = create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	struct bpfrt_map *arr = create(BPF_MAP_TYPE_ARRAY, 4, 4, 4, 0);
	struct bpfrt_prog *p1 = fake_prog(), *p2 = fake_prog();
	uint32_t key = 1, next, val = 0;

	REQUIRE(map && arr);
	CHECK(bpfrt_prog_array_get(map, 1) == NULL);
	CHECK_EQ(bpfrt_map_update_prog(map, 1, p1), 0);
	CHECK(bpfrt_prog_array_get(map, 1) == p1);
	CHECK_EQ(bpfrt_map_update_prog(map, 1, p2), 0);
	CHECK(bpfrt_prog_array_get(map, 1) == p2);
	CHECK_EQ(bpfrt_map_update_prog(map, 4, p1), -E2BIG);
	CHECK(bpfrt_map_update_prog(map, 0, NULL) == -EINVAL);
	CHECK_EQ(bpfrt_map_update_prog(arr, 0, p1), -EINVAL);
	CHECK(bpfrt_prog_array_get(map, 4) == NULL);
	CHECK(bpfrt_prog_array_get(arr, 0) == NULL);
	CHECK_EQ(bpfrt_map_delete_prog(map, 0), -ENOENT);
	CHECK_EQ(bpfrt_map_delete_prog(map, 9), -E2BIG);
	CHECK_EQ(bpfrt_map_delete_elem(map, &key), 0);
	CHECK(bpfrt_prog_array_get(map, 1) == NULL);
	CHECK_EQ(bpfrt_map_delete_elem(map, &key), -ENOENT);
	CHECK_EQ(bpfrt_map_update_prog(map, 3, p1), 0);
	CHECK_EQ(bpfrt_map_delete_prog(map, 3), 0);
	CHECK_EQ(bpfrt_map_lookup_elem(map, &key, &val), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_update_elem(map, &key, &val, BPF_ANY), -EOPNOTSUPP);
	CHECK(bpfrt_map_get_next_key(map, NULL, &next) == 0 && next == 0);
	key = 3;
	CHECK_EQ(bpfrt_map_get_next_key(map, &key, &next), -ENOENT);
	CHECK(bpfrt_map_prog_lookup(map, &key) == NULL);
	bpfrt_map_free(map);
	bpfrt_map_free(arr);
	free(p1);
	free(p2);
}

/* ---- freezing ---------------------------------------------------------------------- */

static bool last_error_has(const char *what)
{
	return strstr(bpfrt_last_error(), what) != NULL;
}

TEST(freeze_refuses_host_writes)
{
	struct bpfrt_map *arr = create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	struct bpfrt_map *hash = create(BPF_MAP_TYPE_HASH, 4, 8, 4, 0);
	struct bpfrt_map *progs = create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	struct bpfrt_prog *fake = fake_prog();
	uint64_t v = 7, out = 0;
	uint32_t key = 1;

	REQUIRE(arr && hash && progs);
	CHECK(!bpfrt_map_is_frozen(arr));
	CHECK_EQ(bpfrt_map_update_elem(arr, &key, &v, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_update_elem(hash, &key, &v, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_update_prog(progs, 0, fake), 0);
	CHECK(bpfrt_map_freeze(arr) == 0 && bpfrt_map_is_frozen(arr));
	CHECK(bpfrt_map_freeze(hash) == 0 && bpfrt_map_freeze(progs) == 0);
	CHECK_EQ(bpfrt_map_freeze(arr), -EBUSY);
	CHECK(bpfrt_map_freeze(NULL) == -EINVAL);

	v = 8;
	CHECK_EQ(bpfrt_map_update_elem(arr, &key, &v, BPF_ANY), -EPERM);
	CHECK(last_error_has("test_map") && last_error_has("frozen"), "%s", bpfrt_last_error());
	CHECK_EQ(bpfrt_map_update_elem(hash, &key, &v, BPF_ANY), -EPERM);
	CHECK_EQ(bpfrt_map_delete_elem(hash, &key), -EPERM);
	CHECK_EQ(bpfrt_map_update_prog(progs, 1, fake), -EPERM);
	CHECK_EQ(bpfrt_map_delete_prog(progs, 0), -EPERM);
	CHECK_EQ(bpfrt_map_delete_elem(progs, &key), -EPERM);
	CHECK(bpfrt_prog_array_get(progs, 0) == fake);
	/* reads still work, and nothing changed */
	CHECK(bpfrt_map_lookup_elem(arr, &key, &out) == 0 && out == 7);
	CHECK(bpfrt_map_lookup_elem(hash, &key, &out) == 0 && out == 7);
	/* Frozen only for user space (Linux's BPF_MAP_FREEZE): programs may
	 * still write an array that is not BPF_F_RDONLY_PROG. */
	CHECK_EQ(bpfrt_map_prog_update(arr, &key, &v, BPF_ANY), 0);
	CHECK(tl_memory_writable(bpfrt_map_value_ptr(arr, 1)));
	CHECK(bpfrt_map_lookup_elem(arr, &key, &out) == 0 && out == 8);
	bpfrt_map_free(arr);
	bpfrt_map_free(hash);
	bpfrt_map_free(progs);
	free(fake);
}

/* The child of frozen_map_is_marked_only_once_its_storage_is_read_only:
 * mprotect fails (ENOMEM, from a seccomp filter installed after the map
 * was created), so freezing must fail, naming the map, and leave it
 * unfrozen and writable. Returns the exit status: 0 passed, 77 no
 * seccomp here, else the number of the failed check. */
static int freeze_with_mprotect_failing(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOMEM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct bpfrt_map *ro = create(BPF_MAP_TYPE_ARRAY, 4, 16, 1, BPF_F_RDONLY_PROG);
	char img[16] = "knob";
	uint32_t key = 0;

	if (!ro)
		return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
		return 77;
	if (bpfrt_map_freeze(ro) != -ENOMEM)
		return 2;
	if (!strstr(bpfrt_last_error(), "map 'test_map'") ||
	    !strstr(bpfrt_last_error(), "cannot make the storage read-only"))
		return 3;
	if (bpfrt_map_is_frozen(ro) || bpfrt_map_is_rdonly(ro))
		return 4; /* the verifier would fold a writable map */
	if (bpfrt_map_update_elem(ro, &key, img, BPF_ANY) != 0)
		return 5; /* not frozen: still writable */
	if (!tl_memory_writable(bpfrt_map_value_ptr(ro, 0)))
		return 6;
	return 0;
}

/* A map is marked frozen (and so folded by the verifier) only after its
 * storage was made read-only: if mprotect fails, it is not frozen. */
TEST(frozen_map_is_marked_only_once_its_storage_is_read_only)
{
	int status, code = tl_exit_code_in_child(freeze_with_mprotect_failing, &status);

	REQUIRE(code >= 0, "child status %#x", status);
	if (code == 77)
		SKIP("no seccomp filters here");
	CHECK_EQ(code, 0, "check %d failed in the child", code);
}

TEST(frozen_read_only_array_storage_is_read_only)
{
	struct bpfrt_map *ro = create(BPF_MAP_TYPE_ARRAY, 4, 16, 1, BPF_F_RDONLY_PROG);
	char img[16] = "knob", out[16];
	uint32_t key = 0;
	char *p;

	REQUIRE(ro);
	p = bpfrt_map_value_ptr(ro, 0);
	REQUIRE(p);
	CHECK_EQ(((uintptr_t)p & (sysconf(_SC_PAGESIZE) - 1)), 0, "page-aligned storage");
	/* before freezing, user space sets the initial value either way */
	CHECK_EQ(bpfrt_map_update_elem(ro, &key, img, BPF_ANY), 0);
	p[5] = 'x';
	CHECK(tl_memory_writable(p));
	CHECK_EQ(bpfrt_map_freeze(ro), 0);
	CHECK(!tl_memory_writable(p), "a host write to a frozen read-only map must fault");
	CHECK(!tl_memory_writable(p + 15));
	CHECK_EQ(bpfrt_map_update_elem(ro, &key, img, BPF_ANY), -EPERM);
	/* a program the verifier did not check gets an error, not a fault */
	CHECK_EQ(bpfrt_map_prog_update(ro, &key, img, BPF_ANY), -EPERM);
	CHECK(bpfrt_map_lookup_elem(ro, &key, out) == 0 && !strcmp(out, "knob") && out[5] == 'x');
	bpfrt_map_free(ro);
}

/* BPF_F_RDONLY / BPF_F_WRONLY: what user space may do (Linux: the fd's
 * access mode); programs are not affected. */
TEST(user_space_access_flags)
{
	struct bpfrt_map *ro = create(BPF_MAP_TYPE_ARRAY, 4, 8, 2, BPF_F_RDONLY);
	struct bpfrt_map *wo = create(BPF_MAP_TYPE_ARRAY, 4, 8, 2, BPF_F_WRONLY);
	struct bpfrt_map *roh = create(BPF_MAP_TYPE_HASH, 4, 8, 2, BPF_F_RDONLY);
	struct bpfrt_map *rop = create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 2, BPF_F_RDONLY);
	struct bpfrt_prog *fake = fake_prog();
	uint64_t v = 3, out = 0;
	uint32_t key = 1, next;

	REQUIRE(ro && wo && roh && rop && fake);
	CHECK_EQ(bpfrt_map_update_elem(ro, &key, &v, BPF_ANY), -EPERM);
	CHECK(last_error_has("test_map") && last_error_has("BPF_F_RDONLY"), "%s",
	      bpfrt_last_error());
	CHECK_EQ(bpfrt_map_freeze(ro), -EPERM);
	CHECK_EQ(bpfrt_map_update_elem(roh, &key, &v, BPF_ANY), -EPERM);
	CHECK_EQ(bpfrt_map_delete_elem(roh, &key), -EPERM);
	CHECK_EQ(bpfrt_map_update_prog(rop, 0, fake), -EPERM);
	CHECK_EQ(bpfrt_map_delete_prog(rop, 0), -EPERM);
	CHECK_EQ(bpfrt_map_prog_update(ro, &key, &v, BPF_ANY), 0);
	CHECK(bpfrt_map_lookup_elem(ro, &key, &out) == 0 && out == 3);
	CHECK(bpfrt_map_get_next_key(ro, NULL, &next) == 0);

	CHECK_EQ(bpfrt_map_update_elem(wo, &key, &v, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_lookup_elem(wo, &key, &out), -EPERM);
	CHECK(last_error_has("test_map") && last_error_has("BPF_F_WRONLY"), "%s",
	      bpfrt_last_error());
	CHECK(bpfrt_map_get_next_key(wo, NULL, &next) == -EPERM);
	CHECK_EQ(*(uint64_t *)bpfrt_map_prog_lookup(wo, &key), 3);
	CHECK_EQ(bpfrt_map_freeze(wo), 0);
	bpfrt_map_free(ro);
	bpfrt_map_free(wo);
	bpfrt_map_free(roh);
	bpfrt_map_free(rop);
	free(fake);
}

struct freeze_race {
	struct bpfrt_map *map;
	int stopped;        /* updates refused with -EPERM */
	int bad;            /* any other error */
};

static void *update_until_frozen(void *arg)
{
	struct freeze_race *r = arg;
	char val[64] = { 1 };
	uint32_t key = 0;

	for (;;) {
		int err = bpfrt_map_update_elem(r->map, &key, val, BPF_ANY);

		if (err == -EPERM) {
			__atomic_add_fetch(&r->stopped, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		if (err)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		val[0]++;
	}
}

/* Writers in flight when the storage becomes read-only would fault:
 * freeze waits for them, and no write starts after it. */
TEST(freeze_waits_for_host_writers)
{
	struct freeze_race r = { create(BPF_MAP_TYPE_ARRAY, 4, 64, 1, BPF_F_RDONLY_PROG) };
	pthread_t t[3];

	REQUIRE(r.map);
	for (int i = 0; i < 3; i++)
		REQUIRE(pthread_create(&t[i], NULL, update_until_frozen, &r) == 0);
	usleep(20000);
	CHECK_EQ(bpfrt_map_freeze(r.map), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(r.stopped == 3 && r.bad == 0, "stopped %d bad %d", r.stopped, r.bad);
	CHECK(!tl_memory_writable(bpfrt_map_value_ptr(r.map, 0)));
	bpfrt_map_free(r.map);
}

/* ---- map memory limit -------------------------------------------------------- */

static int create_named(enum bpf_map_type type, const char *name, uint32_t key_size,
			uint32_t value_size, uint32_t max_entries, struct bpfrt_map **map)
{
	*map = NULL;
	return bpfrt_map_create(type, name, key_size, value_size, max_entries, NULL, map);
}

TEST(map_memory_is_bounded_per_process)
{
	uint64_t prev = bpfrt_map_memory_limit(), used0 = bpfrt_map_memory_used();
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	struct bpfrt_map *a = NULL, *b = NULL;

	if (!getenv("BPFRT_MAP_MEMORY_LIMIT"))
		CHECK(prev == (uint64_t)pages * (uint64_t)psize / 2, "default limit %llu",
		      (unsigned long long)prev);
	REQUIRE_EQ(bpfrt_set_map_memory_limit(used0 + (1u << 20)), 0);
	CHECK_EQ(bpfrt_map_memory_limit(), used0 + (1u << 20));

	/* 2 MiB of values: past the limit, refused naming the map */
	CHECK(create_named(BPF_MAP_TYPE_ARRAY, "two_mib", 4, 1024, 2048, &a) == -ENOMEM && !a);
	CHECK(strstr(bpfrt_last_error(), "two_mib") && strstr(bpfrt_last_error(), "limit"), "%s",
	      bpfrt_last_error());
	CHECK(create_named(BPF_MAP_TYPE_HASH, "big_hash", 4, 8, 1u << 20, &a) == -ENOMEM);
	CHECK(strstr(bpfrt_last_error(), "big_hash"), "%s", bpfrt_last_error());
	CHECK(create_named(BPF_MAP_TYPE_RINGBUF, "big_ring", 0, 0, 2u << 20, &a) == -ENOMEM);
	CHECK(create_named(BPF_MAP_TYPE_PROG_ARRAY, "big_progs", 4, 4, 1u << 18, &a) == -ENOMEM);
	CHECK(create_named(BPF_MAP_TYPE_PERCPU_ARRAY, "big_pcpu", 4, 8,
			   (1u << 20) / 8, &a) == -ENOMEM || bpfrt_num_possible_cpus() == 1);
	bpfrt_map_free(a);
	a = NULL;
	CHECK_EQ(bpfrt_map_memory_used(), used0, "a refused map holds no memory");

	/* what is held counts until it is freed */
	REQUIRE(create_named(BPF_MAP_TYPE_ARRAY, "half", 4, 1024, 512, &a) == 0);
	CHECK(bpfrt_map_memory_used() >= used0 + (512u << 10));
	CHECK(create_named(BPF_MAP_TYPE_ARRAY, "other_half", 4, 1024, 512, &b) == -ENOMEM);
	bpfrt_map_free(a);
	CHECK_EQ(bpfrt_map_memory_used(), used0);
	CHECK(create_named(BPF_MAP_TYPE_ARRAY, "other_half", 4, 1024, 512, &b) == 0);
	bpfrt_map_free(b);

	/* 0: no limit */
	REQUIRE_EQ(bpfrt_set_map_memory_limit(0), 0);
	CHECK(create_named(BPF_MAP_TYPE_ARRAY, "two_mib", 4, 1024, 2048, &a) == 0);
	bpfrt_map_free(a);
	CHECK_EQ(bpfrt_map_memory_used(), used0);
	bpfrt_set_map_memory_limit(prev);
}

/* Sizes no limit allows: refused before any memory is asked for. */
TEST(maps_of_absurd_size_are_refused_by_name)
{
	uint64_t prev = bpfrt_map_memory_limit();
	struct bpfrt_map *m = NULL;

	REQUIRE_EQ(bpfrt_set_map_memory_limit(0), 0);
	CHECK(create_named(BPF_MAP_TYPE_PROG_ARRAY, "huge_progs", 4, 4, UINT32_MAX, &m) == -ENOMEM);
	CHECK(strstr(bpfrt_last_error(), "huge_progs") && strstr(bpfrt_last_error(), "too large"),
	      "%s", bpfrt_last_error());
	CHECK(create_named(BPF_MAP_TYPE_PROG_ARRAY, "huge_progs", 4, 4, 1u << 29, &m) == -ENOMEM);
	CHECK(create_named(BPF_MAP_TYPE_ARRAY, "huge_array", 4, 4096, 1u << 20, &m) == -ENOMEM);
	CHECK(strstr(bpfrt_last_error(), "huge_array"), "%s", bpfrt_last_error());
	CHECK(create_named(BPF_MAP_TYPE_PERCPU_ARRAY, "huge_pcpu", 4, 4096, 1u << 20, &m) ==
	      -ENOMEM);
	CHECK(create_named(BPF_MAP_TYPE_HASH, "huge_hash", 4, 4096, 1u << 31, &m) == -E2BIG);
	CHECK(strstr(bpfrt_last_error(), "huge_hash"), "%s", bpfrt_last_error());
	CHECK(m == NULL);
	bpfrt_set_map_memory_limit(prev);
}

/* ---- ring buffer ----------------------------------------------------------------- */

struct rec_log {
	int n;
	size_t len[4096];
	uint32_t first[4096];
	int stop_after;     /* return -1 on this record (1-based), 0: never */
	bool bad;
};

static int log_record(void *ctx, void *data, size_t len)
{
	struct rec_log *log = ctx;
	uint32_t first = 0;

	if (((uintptr_t)data & 7) != 0)
		log->bad = true;
	memcpy(&first, data, len < 4 ? len : 4);
	if (log->n < 4096) {
		log->len[log->n] = len;
		log->first[log->n] = first;
	}
	log->n++;
	if (log->stop_after && log->n == log->stop_after)
		return -1;
	return 0;
}

TEST(ringbuf_records_in_order)
{
	struct bpfrt_map *rb = create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	struct rec_log log = { 0 };
	uint32_t data[64];
	uint32_t *r;

	REQUIRE(rb);
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_RING_SIZE), 4096);
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_AVAIL_DATA), 0);
	for (int i = 0; i < 64; i++)
		data[i] = i;
	CHECK_EQ(bpfrt_ringbuf_output(rb, data, 5, 0), 0);            /* 8 + 5 -> 16 */
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_PROD_POS), 16);
	r = bpfrt_ringbuf_reserve(rb, 12, 0);                        /* 8 + 12 -> 24 */
	REQUIRE(r);
	CHECK_EQ(((uintptr_t)r & 7), 0);
	r[0] = 111;
	/* Not submitted yet: the consumer stops in front of it. */
	CHECK_EQ(bpfrt_ringbuf_consume(rb, log_record, &log), 1);
	CHECK(log.n == 1 && log.len[0] == 5 && log.first[0] == 0);
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_CONS_POS), 16);
	bpfrt_ringbuf_submit(r, 0);
	r = bpfrt_ringbuf_reserve(rb, 100, 0);
	REQUIRE(r);
	r[0] = 222;
	bpfrt_ringbuf_discard(r, 0);
	CHECK_EQ(bpfrt_ringbuf_output(rb, data + 1, 0, 0), 0, "empty record");
	CHECK_EQ(bpfrt_ringbuf_output(rb, data + 2, 7, BPF_RB_NO_WAKEUP), 0);
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_AVAIL_DATA), 24 + 112 + 8 + 16);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, log_record, &log), 3);
	CHECK_EQ(log.n, 4);
	CHECK(log.len[1] == 12 && log.first[1] == 111);
	CHECK_EQ(log.len[2], 0, "discarded record skipped");
	CHECK(log.len[3] == 7 && log.first[3] == 2);
	CHECK(!log.bad, "records 8-byte aligned");
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_AVAIL_DATA), 0);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, log_record, &log), 0);

	/* A negative callback return stops, and that record is consumed. */
	log = (struct rec_log){ .stop_after = 2 };
	for (int i = 0; i < 3; i++)
		CHECK_EQ(bpfrt_ringbuf_output(rb, &data[i], 4, 0), 0);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, log_record, &log), -1);
	CHECK_EQ(log.n, 2);
	log.stop_after = 0;
	CHECK_EQ(bpfrt_ringbuf_consume(rb, log_record, &log), 1);
	CHECK(log.n == 3 && log.first[2] == 2);
	bpfrt_map_free(rb);
}

TEST(ringbuf_full_and_bad_arguments)
{
	struct bpfrt_map *rb = create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	struct rec_log log = { 0 };
	char big[4096] = { 0 };
	void *r;
	int n = 0;

	REQUIRE(rb);
	CHECK(bpfrt_ringbuf_reserve(rb, 8, 1) == NULL, "flags must be 0");
	CHECK_EQ(bpfrt_ringbuf_output(rb, big, 8, 4), -EINVAL);
	CHECK(bpfrt_ringbuf_reserve(rb, 4096, 0) == NULL, "larger than the ring");
	CHECK(bpfrt_ringbuf_reserve(rb, 4096 - 8, 0) == NULL, "producer at most size-1 ahead");
	CHECK(bpfrt_ringbuf_reserve(rb, 1ull << 40, 0) == NULL);
	/* 4096 / 64 = 64 records of 56 + 8 bytes, minus the last one: the
	 * ring is never filled completely. */
	while (bpfrt_ringbuf_output(rb, big, 56, 0) == 0)
		n++;
	CHECK_EQ(n, 63, "n=%d", n);
	CHECK_EQ(bpfrt_ringbuf_output(rb, big, 56, 0), -EAGAIN);
	CHECK(bpfrt_ringbuf_reserve(rb, 56, 0) == NULL);
	/* 64 bytes left: a 56-byte record fits, after it nothing does (not
	 * even an empty one: it would fill the ring). */
	r = bpfrt_ringbuf_reserve(rb, 48, 0);
	CHECK(r != NULL, "48 + 8 bytes fit");
	if (r)
		bpfrt_ringbuf_submit(r, 0);
	CHECK(bpfrt_ringbuf_reserve(rb, 0, 0) == NULL);
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_AVAIL_DATA), 4088);
	CHECK_EQ(bpfrt_ringbuf_consume(rb, log_record, &log), 64);
	CHECK_EQ(bpfrt_ringbuf_output(rb, big, 56, 0), 0, "space again after consuming");

	uint32_t key = 0, val = 0;

	CHECK_EQ(bpfrt_map_lookup_elem(rb, &key, &val), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_update_elem(rb, &key, &val, 0), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_delete_elem(rb, &key), -EOPNOTSUPP);
	CHECK(bpfrt_map_get_next_key(rb, NULL, &key) == -EOPNOTSUPP);
	CHECK(bpfrt_ringbuf_consume(NULL, log_record, NULL) == -EINVAL);
	CHECK(bpfrt_ringbuf_consume(rb, NULL, NULL) == -EINVAL);
	CHECK(bpfrt_ringbuf_reserve(NULL, 8, 0) == NULL);
	bpfrt_map_free(rb);
}

struct wrap_check {
	uint32_t next;
	bool bad;
	int n;
};

static int check_pattern(void *ctx, void *data, size_t len)
{
	struct wrap_check *w = ctx;
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(w->next + i))
			w->bad = true;
	if (len != 100 + w->next % 300)
		w->bad = true;
	w->next++;
	w->n++;
	return 0;
}

TEST(ringbuf_wraps_around_contiguously)
{
	struct bpfrt_map *rb = create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	struct wrap_check w = { 0 };
	uint32_t seq = 0;
	bool spanned = false;

	REQUIRE(rb);
	for (int round = 0; round < 200; round++) {
		/* A few records per round, sizes that do not divide the ring,
		 * so records keep straddling the end. */
		for (int i = 0; i < 5; i++, seq++) {
			size_t len = 100 + seq % 300;
			uint64_t prod = bpfrt_ringbuf_query(rb, BPF_RB_PROD_POS);
			uint8_t *p = bpfrt_ringbuf_reserve(rb, len, 0);

			REQUIRE(p, "round %d", round);
			if ((prod & 4095) + 8 + len > 4096)
				spanned = true;
			for (size_t j = 0; j < len; j++)
				p[j] = (uint8_t)(seq + j);
			bpfrt_ringbuf_submit(p, 0);
		}
		CHECK_EQ(bpfrt_ringbuf_consume(rb, check_pattern, &w), 5);
	}
	CHECK(spanned, "some record crossed the end of the ring");
	CHECK(!w.bad, "contents and lengths intact");
	CHECK_EQ(w.n, 1000);
	CHECK_EQ(bpfrt_ringbuf_query(rb, BPF_RB_CONS_POS), bpfrt_ringbuf_query(rb, BPF_RB_PROD_POS));
	bpfrt_map_free(rb);
}

static bool fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static void drain_fd(int fd)
{
	uint64_t v;
	ssize_t n = read(fd, &v, sizeof(v));

	(void)n;
}

TEST(ringbuf_wakeups)
{
	struct bpfrt_map *rb = create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	struct rec_log log = { 0 };
	int fd;
	uint32_t x = 1;

	REQUIRE(rb);
	fd = bpfrt_ringbuf_fd(rb);
	REQUIRE(fd >= 0);
	CHECK(!fd_readable(fd));
	/* Consumer caught up: the first record wakes it... */
	CHECK_EQ(bpfrt_ringbuf_output(rb, &x, 4, 0), 0);
	CHECK(fd_readable(fd));
	drain_fd(fd);
	/* ...the next one (consumer still behind) does not... */
	CHECK_EQ(bpfrt_ringbuf_output(rb, &x, 4, 0), 0);
	CHECK(!fd_readable(fd));
	/* ...unless forced. */
	CHECK_EQ(bpfrt_ringbuf_output(rb, &x, 4, BPF_RB_FORCE_WAKEUP), 0);
	CHECK(fd_readable(fd));
	CHECK_EQ(bpfrt_ringbuf_poll(rb, log_record, &log, 100), 3);
	drain_fd(fd);
	CHECK_EQ(bpfrt_ringbuf_output(rb, &x, 4, BPF_RB_NO_WAKEUP), 0);
	CHECK(!fd_readable(fd), "BPF_RB_NO_WAKEUP");
	CHECK_EQ(bpfrt_ringbuf_poll(rb, log_record, &log, 100), 1);
	CHECK_EQ(bpfrt_ringbuf_poll(rb, log_record, &log, 10), 0, "timeout");
	CHECK(bpfrt_ringbuf_fd(NULL) == -EINVAL);
	bpfrt_map_free(rb);
}

/* ---- RCU ------------------------------------------------------------------------------ */

struct reader_ctl {
	_Atomic int state;  /* 0 start, 1 inside, 2 leave now, 3 left */
};

static void *reader_thread(void *arg)
{
	struct reader_ctl *ctl = arg;

	bpfrt_rcu_read_lock();
	bpfrt_rcu_read_lock();  /* nested */
	bpfrt_rcu_read_unlock();
	atomic_store(&ctl->state, 1);
	while (atomic_load(&ctl->state) != 2)
		usleep(100);
	bpfrt_rcu_read_unlock();
	atomic_store(&ctl->state, 3);
	return NULL;
}

struct sync_ctl {
	_Atomic int done;
	struct reader_ctl *reader;
	int reader_state_at_return;
};

static void *sync_thread(void *arg)
{
	struct sync_ctl *s = arg;

	bpfrt_rcu_synchronize();
	s->reader_state_at_return = atomic_load(&s->reader->state);
	atomic_store(&s->done, 1);
	return NULL;
}

TEST(rcu_synchronize_waits_for_readers)
{
	struct reader_ctl ctl = { 0 };
	struct sync_ctl s = { .reader = &ctl };
	pthread_t rt, st;

	REQUIRE(pthread_create(&rt, NULL, reader_thread, &ctl) == 0);
	while (atomic_load(&ctl.state) != 1)
		usleep(100);
	REQUIRE(pthread_create(&st, NULL, sync_thread, &s) == 0);
	usleep(20000);
	CHECK(!atomic_load(&s.done), "synchronize returned while a reader was inside");
	atomic_store(&ctl.state, 2);
	pthread_join(st, NULL);
	pthread_join(rt, NULL);
	CHECK_EQ(s.reader_state_at_return, 3, "state %d", s.reader_state_at_return);
	/* Sections started after a grace period began do not hold it. */
	bpfrt_rcu_read_lock();
	CHECK(bpfrt_rcu_in_read_section());
	bpfrt_rcu_read_unlock();
	CHECK(!bpfrt_rcu_in_read_section());
	bpfrt_rcu_synchronize();
}

static void *short_reader(void *arg)
{
	for (int i = 0; i < 100; i++) {
		bpfrt_rcu_read_lock();
		bpfrt_rcu_read_unlock();
	}
	return NULL;
}

TEST(rcu_threads_unregister_at_exit)
{
	/* Exited readers must not be waited for (or touched: ASan). */
	for (int i = 0; i < 20; i++) {
		pthread_t t;

		REQUIRE(pthread_create(&t, NULL, short_reader, NULL) == 0);
		pthread_join(t, NULL);
	}
	bpfrt_rcu_synchronize();
	bpfrt_rcu_synchronize();
}

static _Atomic int freed_count;

static void count_free(void *ptr)
{
	free(ptr);
	atomic_fetch_add(&freed_count, 1);
}

struct headed {
	int payload;
	struct bpfrt_rcu_head head;
};

static void headed_free(struct bpfrt_rcu_head *head)
{
	free((char *)head - offsetof(struct headed, head));
	atomic_fetch_add(&freed_count, 1);
}

TEST(rcu_deferred_free_and_barrier)
{
	uint64_t cookie;

	atomic_store(&freed_count, 0);
	bpfrt_rcu_read_lock();
	for (int i = 0; i < 50; i++) {
		struct headed *h = malloc(sizeof(*h));

		REQUIRE(h);
		CHECK_EQ(bpfrt_rcu_call(malloc(16), count_free), 0);
		bpfrt_rcu_call_head(&h->head, headed_free);
	}
	cookie = bpfrt_rcu_get_state();
	/* Our own read section holds the grace period. */
	usleep(10000);
	CHECK(!bpfrt_rcu_poll_state(cookie));
	CHECK_EQ(atomic_load(&freed_count), 0, "freed inside the read section");
	bpfrt_rcu_read_unlock();
	bpfrt_rcu_barrier();
	CHECK_EQ(atomic_load(&freed_count), 100);
	CHECK(bpfrt_rcu_poll_state(cookie));
	/* The background reclaimer gets there on its own too. */
	CHECK_EQ(bpfrt_rcu_call(malloc(16), count_free), 0);
	for (int i = 0; i < 2000 && atomic_load(&freed_count) != 101; i++)
		usleep(1000);
	CHECK_EQ(atomic_load(&freed_count), 101);
	bpfrt_rcu_barrier();
}
