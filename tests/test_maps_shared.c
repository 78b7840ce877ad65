/* Maps in shared memory (BPFRT_MAP_F_SHARED, bpfrt_map_shm): the kinds
 * that take the flag and those that refuse it, and the memfd another
 * process maps: the values programs and user space see, written from
 * either side, a ring buffer consumed through the mapping, and hash maps
 * read along their chains as bpfrt_map_shm documents (and privatised in
 * a fork child). */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "maps/map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct bpfrt_map *create_shared(enum bpf_map_type type, uint32_t ks, uint32_t vs,
				       uint32_t max, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags, .bpfrt_flags = BPFRT_MAP_F_SHARED);
	struct bpfrt_map *m = NULL;
	int err = bpfrt_map_create(type, "shared", ks, vs, max, &o, &m);

	if (err)
		tl_fail(__FILE__, __LINE__, "create type %d: %d %s", type, err, bpfrt_last_error());
	return m;
}

TEST(kinds_without_shared_storage_refuse_the_flag)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .bpfrt_flags = BPFRT_MAP_F_SHARED);
	BPFRT_OPTS(bpfrt_map_create_opts, bad, .bpfrt_flags = 2);
	BPFRT_OPTS(bpfrt_map_shm, info);
	struct bpfrt_map *m = NULL;

	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_QUEUE, "q", 0, 8, 4, &o, &m), -EOPNOTSUPP);
	CHECK(strstr(bpfrt_last_error(), "BPF_MAP_TYPE_QUEUE") && strstr(bpfrt_last_error(), "'q'"),
	      "message: %s", bpfrt_last_error());
	CHECK(!m);
	CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 8, 4, &bad, &m), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "bpfrt_flags") != NULL, "message: %s", bpfrt_last_error());
	CHECK(bpfrt_map_type_shareable(BPF_MAP_TYPE_PERCPU_ARRAY));
	CHECK(bpfrt_map_type_shareable(BPF_MAP_TYPE_LRU_HASH));
	CHECK(!bpfrt_map_type_shareable(BPF_MAP_TYPE_LPM_TRIE));
	/* a map made without the flag has no memfd to give */
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "private", 4, 8, 4, NULL, &m) == 0);
	CHECK_EQ(bpfrt_map_shm(m, &info), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "'private'") != NULL, "message: %s", bpfrt_last_error());
	bpfrt_map_free(m);
}

TEST(array_values_are_the_mappings)
{
	struct bpfrt_map *m = create_shared(BPF_MAP_TYPE_ARRAY, 4, 12, 10, 0);
	BPFRT_OPTS(bpfrt_map_shm, info);
	uint8_t val[12], out[12];
	uint32_t key = 7;
	uint8_t *view;
	pid_t pid;
	int st;

	REQUIRE(m);
	REQUIRE(bpfrt_map_shm(m, &info) == 0);
	CHECK_EQ(info.layout, BPFRT_MAP_SHM_ARRAY);
	CHECK_EQ(info.nr_cpus, 1u);
	CHECK_EQ(info.elem_size, 16u);
	CHECK_EQ(info.value_size, 12u);
	CHECK(info.fd >= 0 && info.size >= 160 && info.size % (uint64_t)getpagesize() == 0);
	/* a second view, as another process maps it */
	view = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, info.fd, 0);
	REQUIRE(view != MAP_FAILED);
	memset(val, 0x5a, sizeof(val));
	CHECK_EQ(bpfrt_map_update_elem(m, &key, val, BPF_ANY), 0);
	CHECK(!memcmp(view + info.data_off + 7 * info.elem_size, val, 12));
	CHECK(bpfrt_map_value_ptr(m, 7) != view + info.data_off + 7 * info.elem_size,
	      "the map's own mapping is another address");
	/* written by another process through a mapping of its own */
	pid = fork();
	if (pid == 0) {
		uint8_t *v = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, info.fd, 0);

		if (v == MAP_FAILED)
			_exit(1);
		memset(v + info.data_off + 2 * info.elem_size, 0x33, 12);
		_exit(0);
	}
	REQUIRE(pid > 0);
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	key = 2;
	CHECK_EQ(bpfrt_map_lookup_elem(m, &key, out), 0);
	memset(val, 0x33, sizeof(val));
	CHECK(!memcmp(out, val, 12), "the other process's write is the map's value");
	munmap(view, info.size);
	bpfrt_map_free(m);
}

TEST(percpu_array_regions)
{
	struct bpfrt_map *m = create_shared(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 3, 0);
	BPFRT_OPTS(bpfrt_map_shm, info);
	int cpus = bpfrt_num_possible_cpus();
	uint64_t *vals = calloc((size_t)cpus, 8);
	uint32_t key = 1;
	uint8_t *view;

	REQUIRE(m && vals);
	REQUIRE(bpfrt_map_shm(m, &info) == 0);
	CHECK_EQ(info.nr_cpus, (uint32_t)cpus);
	CHECK(info.cpu_stride >= 3 * 8 && info.size >= info.cpu_stride * (uint64_t)cpus);
	for (int c = 0; c < cpus; c++)
		vals[c] = 100 + (uint64_t)c;
	CHECK_EQ(bpfrt_map_update_elem(m, &key, vals, BPF_ANY), 0);
	view = mmap(NULL, info.size, PROT_READ, MAP_SHARED, info.fd, 0);
	REQUIRE(view != MAP_FAILED);
	for (int c = 0; c < cpus; c++) {
		uint64_t v;

		memcpy(&v, view + info.data_off + c * info.cpu_stride + 1 * info.elem_size, 8);
		CHECK_EQ(v, 100 + (uint64_t)c, "cpu %d", c);
	}
	munmap(view, info.size);
	free(vals);
	bpfrt_map_free(m);
}

TEST(ringbuf_consumed_through_the_mapping)
{
	struct bpfrt_map *m = create_shared(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	BPFRT_OPTS(bpfrt_map_shm, info);
	uint8_t *view;
	uint64_t *cons, *prod;
	uint32_t hdr;

	REQUIRE(m);
	REQUIRE(bpfrt_map_shm(m, &info) == 0);
	CHECK_EQ(info.layout, BPFRT_MAP_SHM_RINGBUF);
	CHECK_EQ(info.data_size, 4096u);
	CHECK_EQ(info.size, info.data_off + 4096);
	view = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, info.fd, 0);
	REQUIRE(view != MAP_FAILED);
	cons = (uint64_t *)(view + info.consumer_pos_off);
	prod = (uint64_t *)(view + info.producer_pos_off);
	uint64_t rec = 0x1122334455667788ull;

	CHECK_EQ(bpfrt_ringbuf_output(m, &rec, sizeof(rec), 0), 0);
	CHECK_EQ(__atomic_load_n(prod, __ATOMIC_ACQUIRE), 16u, "header + 8 bytes");
	memcpy(&hdr, view + info.data_off, 4);
	CHECK_EQ(hdr, 8u, "committed: no BUSY bit");
	CHECK(!memcmp(view + info.data_off + 8, &rec, 8));
	/* consumed here: the map's own query sees the position move */
	__atomic_store_n(cons, 16, __ATOMIC_RELEASE);
	CHECK_EQ(bpfrt_ringbuf_query(m, BPF_RB_CONS_POS), 16u);
	CHECK_EQ(bpfrt_ringbuf_query(m, BPF_RB_AVAIL_DATA), 0u);
	/* a record reserved and never committed stays BUSY in the mapping
	 * (its writer died): a consumer sees it and stops there */
	void *r = bpfrt_ringbuf_reserve(m, 8, 0);

	REQUIRE(r);
	memcpy(&hdr, view + info.data_off + 16, 4);
	CHECK(hdr & BPF_RINGBUF_BUSY_BIT);
	bpfrt_ringbuf_discard(r, 0);
	munmap(view, info.size);
	bpfrt_map_free(m);
}

/* ---- hash maps: a reader of the documented layout ---------------------- */

struct hash_view {
	const struct bpfrt_map_shm *info;
	const uint8_t *base;    /* this process's second mapping */
};

/* Element offset of a link, or 0: the end of a chain or a bad link. */
static uint64_t view_elem(const struct hash_view *v, uint64_t link)
{
	uint64_t off = link - v->info->addr;

	if ((link & 1) || link < v->info->addr || off < v->info->data_off ||
	    (off - v->info->data_off) % v->info->elem_size ||
	    (off - v->info->data_off) / v->info->elem_size >= v->info->n_elems)
		return 0;
	return off;
}

/* Sums key * 1000 + value over the entries (CPU 0's value of a per-CPU
 * map), counts them, and checks every chain ends in its own bucket. */
static int view_walk(const struct hash_view *v, uint64_t *sum, int *ends_ok)
{
	int n = 0;

	*sum = 0;
	*ends_ok = 1;
	for (uint32_t b = 0; b < v->info->n_buckets; b++) {
		uint64_t link, off;

		memcpy(&link, v->base + v->info->buckets_off + b * 16ull + 8, 8);
		while ((off = view_elem(v, link))) {
			const uint8_t *e = v->base + off;
			uint64_t key, val;
			uint32_t index;

			memcpy(&key, e + v->info->key_off, 8);
			if (v->info->value_off) {
				memcpy(&val, e + v->info->value_off, 8);
			} else {
				memcpy(&index, e + v->info->index_off, 4);
				memcpy(&val, v->base + v->info->pcpu_off + index * 8ull, 8);
			}
			*sum += key * 1000 + val;
			n++;
			memcpy(&link, e + v->info->next_off, 8);
		}
		if (link != (((uint64_t)b << 1) | 1))
			*ends_ok = 0;
	}
	return n;
}

TEST(hash_entries_read_through_the_mapping)
{
	static const enum bpf_map_type kinds[] = { BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_LRU_HASH,
						   BPF_MAP_TYPE_PERCPU_HASH };

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct bpfrt_map *m = create_shared(kinds[k], 8, 8, 64, 0);
		bool percpu = kinds[k] == BPF_MAP_TYPE_PERCPU_HASH;
		int cpus = bpfrt_num_possible_cpus(), ends_ok;
		BPFRT_OPTS(bpfrt_map_shm, info);
		uint64_t *vals = calloc((size_t)cpus, 8), sum, want = 0;
		struct hash_view v = { .info = &info };
		uint8_t *view;

		REQUIRE(m && vals);
		REQUIRE(bpfrt_map_shm(m, &info) == 0);
		CHECK_EQ(info.layout, BPFRT_MAP_SHM_HASH);
		CHECK(info.n_buckets >= 64 && info.n_elems >= 64, "%u buckets, %u elements",
		      info.n_buckets, info.n_elems);
		CHECK_EQ(info.value_off == 0, percpu);
		for (uint64_t key = 1; key <= 40; key++) {
			for (int c = 0; c < cpus; c++)
				vals[c] = key + 5 + (uint64_t)c * 100;
			REQUIRE(bpfrt_map_update_elem(m, &key, vals, BPF_ANY) == 0);
			want += key * 1000 + key + 5;
		}
		/* mapped at another address, as another process would */
		view = mmap(NULL, info.size, PROT_READ, MAP_SHARED, info.fd, 0);
		REQUIRE(view != MAP_FAILED);
		v.base = view;
		CHECK(info.addr != (uint64_t)(uintptr_t)view);
		CHECK_EQ(view_walk(&v, &sum, &ends_ok), 40, "kind %d", kinds[k]);
		CHECK_EQ(sum, want, "kind %d", kinds[k]);
		CHECK(ends_ok, "every chain ends in its bucket's marker");
		/* deleted and replaced entries show at once */
		for (uint64_t key = 1; key <= 10; key++) {
			REQUIRE(bpfrt_map_delete_elem(m, &key) == 0);
			want -= key * 1000 + key + 5;
		}
		uint64_t key = 20;

		for (int c = 0; c < cpus; c++)
			vals[c] = 77;
		REQUIRE(bpfrt_map_update_elem(m, &key, vals, BPF_EXIST) == 0);
		want += 77 - 25;
		CHECK_EQ(view_walk(&v, &sum, &ends_ok), 30, "kind %d", kinds[k]);
		CHECK_EQ(sum, want, "kind %d", kinds[k]);
		munmap(view, info.size);
		free(vals);
		bpfrt_map_free(m);
	}
}

TEST(hash_fork_child_gets_a_private_copy)
{
	struct bpfrt_map *m = create_shared(BPF_MAP_TYPE_HASH, 8, 8, 32, 0);
	BPFRT_OPTS(bpfrt_map_shm, info);
	struct hash_view v = { .info = &info };
	uint64_t key, val, sum;
	uint8_t *view;
	int st, ends_ok;
	pid_t pid;

	REQUIRE(m);
	for (key = 1; key <= 8; key++) {
		val = key;
		REQUIRE(bpfrt_map_update_elem(m, &key, &val, BPF_ANY) == 0);
	}
	REQUIRE(bpfrt_map_shm(m, &info) == 0);
	view = mmap(NULL, info.size, PROT_READ, MAP_SHARED, info.fd, 0);
	REQUIRE(view != MAP_FAILED);
	v.base = view;
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* the child adds keys and writes values in place, all of it
		 * its own. (Not a replacement or a delete: those start the
		 * RCU worker thread, and a thread made in a fork child
		 * crashes qemu-user, where this runs too.) */
		int ok = 1;
		uint64_t *slot;

		for (key = 100; key < 120; key++)
			ok &= bpfrt_map_update_elem(m, &key, &key, BPF_NOEXIST) == 0;
		key = 6;
		slot = m->ops->lookup(m, &key);    /* a program's lookup: the value in place */
		ok &= slot != NULL;
		if (slot)
			*slot = 1006;
		ok &= bpfrt_map_lookup_elem(m, &key, &val) == 0 && val == 1006;
		key = 110;
		ok &= bpfrt_map_lookup_elem(m, &key, &val) == 0 && val == 110;
		_exit(ok ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's own updates: status %d", st);
	/* the parent's map and its shared view are as before the fork */
	CHECK_EQ(view_walk(&v, &sum, &ends_ok), 8);
	CHECK_EQ(sum, 36u * 1000 + 36u);
	CHECK(ends_ok);
	for (key = 1; key <= 8; key++) {
		REQUIRE(bpfrt_map_lookup_elem(m, &key, &val) == 0);
		CHECK_EQ(val, key);
	}
	key = 100;
	CHECK_EQ(bpfrt_map_lookup_elem(m, &key, &val), -ENOENT);
	munmap(view, info.size);
	bpfrt_map_free(m);
}
