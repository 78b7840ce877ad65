/* ARRAY_OF_MAPS and HASH_OF_MAPS: creation rules (against the running
 * kernel where it lets us), slots from user space with Linux's error
 * codes, the loader's inner map templates and initial slots, programs
 * using inner maps in every engine, and the lifetime of a map in a slot. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct bpfrt_map *array(const char *name, uint32_t value, uint32_t max, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags);
	struct bpfrt_map *m = NULL;

	if (bpfrt_map_create(BPF_MAP_TYPE_ARRAY, name, 4, value, max, &o, &m))
		tl_fail(__FILE__, __LINE__, "%s: %s", name, bpfrt_last_error());
	return m;
}

static int outer_create(enum bpf_map_type type, uint32_t key, uint32_t value,
			struct bpfrt_map *tmpl, struct bpfrt_map **out)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .inner_map = tmpl);
	struct bpfrt_map *m = NULL;
	int err = bpfrt_map_create(type, "outer", key, value, 4, &o, &m);

	if (out)
		*out = m;
	else
		bpfrt_map_free(m);
	return err;
}

/* The kernel's answer with an inner array of the same shape; 1 if it
 * cannot be asked. */
static int kernel_outer(enum bpf_map_type type, uint32_t key, uint32_t value, bool with_inner)
{
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "in", 4, 8, 4, NULL), fd, err;
	LIBBPF_OPTS(bpf_map_create_opts, o, .inner_map_fd = with_inner ? (uint32_t)inner : 0);

	if (inner < 0)
		return 1;
	fd = bpf_map_create(type, "outer", key, value, 4, &o);
	err = fd >= 0 ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	close(inner);
	return err;
}

TEST(creation_rules_as_linux)
{
	static const struct {
		enum bpf_map_type type;
		uint32_t key, value;
		int want;
	} cases[] = {
		{ BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 0 },
		{ BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 8, -EINVAL },
		{ BPF_MAP_TYPE_ARRAY_OF_MAPS, 8, 4, -EINVAL },
		{ BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 0 },
		{ BPF_MAP_TYPE_HASH_OF_MAPS, 16, 4, 0 },
		{ BPF_MAP_TYPE_HASH_OF_MAPS, 4, 8, -EINVAL },
	};
	struct bpfrt_map *tmpl = array("tmpl", 8, 4, 0), *outer = NULL;
	bool compared = false;

	REQUIRE(tmpl);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int lx = kernel_outer(cases[i].type, cases[i].key, cases[i].value, true);

		CHECK_EQ(outer_create(cases[i].type, cases[i].key, cases[i].value, tmpl, NULL),
			 cases[i].want, "case %zu: %s", i, bpfrt_last_error());
		if (lx != 1) {
			compared = true;
			CHECK_EQ(lx, cases[i].want, "case %zu: the kernel", i);
		}
	}
	CHECK_EQ(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, NULL, NULL), -EINVAL,
		 "no template");
	CHECK(strstr(bpfrt_last_error(), "inner map template"), "%s", bpfrt_last_error());
	REQUIRE(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, tmpl, &outer) == 0);
	CHECK_EQ(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, outer, NULL), -EINVAL,
		 "a map-in-map cannot be an inner map");
	{
		BPFRT_OPTS(bpfrt_map_create_opts, o, .inner_map = tmpl);
		struct bpfrt_map *m = NULL;

		CHECK_EQ(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 4, 4, &o, &m), -EINVAL,
			 "inner_map on a plain array");
		bpfrt_map_free(m);
	}
	bpfrt_map_free(outer);
	bpfrt_map_free(tmpl);
	if (!compared)
		SKIP("the kernel refused to create maps (not root): checked against the table only");
}

TEST(slots_from_user_space)
{
	struct bpfrt_map *tmpl = array("tmpl", 8, 4, 0), *a = array("a", 8, 4, 0);
	struct bpfrt_map *wrong_size = array("w", 16, 4, 0), *wrong_max = array("m", 8, 5, 0);
	struct bpfrt_map *aom = NULL, *hom = NULL, *got = NULL;
	uint32_t k = 0, v4 = 0;

	REQUIRE(tmpl && a && wrong_size && wrong_max);
	REQUIRE(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, tmpl, &aom) == 0);
	REQUIRE(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, tmpl, &hom) == 0);
	bpfrt_map_free(tmpl);  /* only its shape is kept */

	CHECK_EQ(bpfrt_map_lookup_inner(aom, &k, &got), -ENOENT);
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, a, BPF_ANY), 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_map_lookup_inner(aom, &k, &got) == 0 && got == a);
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, wrong_size, BPF_ANY), -EINVAL);
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, wrong_max, BPF_ANY), -EINVAL);
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, a, BPF_NOEXIST), -EINVAL, "arrays: BPF_ANY only");
	k = 4;
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, a, BPF_ANY), -E2BIG);
	CHECK_EQ(bpfrt_map_delete_elem(aom, &k), -E2BIG);
	k = 0;
	CHECK_EQ(bpfrt_map_lookup_elem(aom, &k, &v4), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_update_elem(aom, &k, &v4, BPF_ANY), -EOPNOTSUPP);
	CHECK_EQ(bpfrt_map_get_next_key(aom, NULL, &v4), 0);
	CHECK_EQ(bpfrt_map_delete_elem(aom, &k), 0);
	CHECK_EQ(bpfrt_map_delete_elem(aom, &k), -ENOENT);

	k = 77;
	CHECK_EQ(bpfrt_map_update_inner(hom, &k, a, BPF_EXIST), -ENOENT);
	CHECK_EQ(bpfrt_map_update_inner(hom, &k, a, BPF_NOEXIST), 0);
	CHECK_EQ(bpfrt_map_update_inner(hom, &k, a, BPF_NOEXIST), -EEXIST);
	CHECK(bpfrt_map_get_next_key(hom, NULL, &v4) == 0 && v4 == 77);
	CHECK_EQ(bpfrt_map_delete_elem(hom, &k), 0);
	CHECK_EQ(bpfrt_map_delete_elem(hom, &k), -ENOENT);
	bpfrt_map_free(aom);
	bpfrt_map_free(hom);
	bpfrt_map_free(a);
	bpfrt_map_free(wrong_size);
	bpfrt_map_free(wrong_max);
}

/* BPF_F_INNER_MAP: inner maps of any max_entries. */
TEST(inner_map_flag_allows_other_sizes)
{
	struct bpfrt_map *tmpl = array("tmpl", 8, 4, BPF_F_INNER_MAP);
	struct bpfrt_map *big = array("big", 8, 64, BPF_F_INNER_MAP), *aom = NULL;
	uint32_t k = 1;

	REQUIRE(tmpl && big);
	REQUIRE(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, tmpl, &aom) == 0);
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, big, BPF_ANY), 0, "%s", bpfrt_last_error());
	bpfrt_map_free(aom);
	bpfrt_map_free(big);
	bpfrt_map_free(tmpl);
}

/* A slot keeps its map: freed by its creator while in a slot, it stays
 * usable until the slot lets it go (ASan sees a use after free or a
 * leak otherwise). */
TEST(a_map_in_a_slot_outlives_its_creators_free)
{
	struct bpfrt_map *tmpl = array("tmpl", 8, 4, 0), *a = array("a", 8, 4, 0), *aom = NULL;
	struct bpfrt_map *got = NULL;
	uint32_t k = 2, ik = 3;
	uint64_t v = 5, out = 0;

	REQUIRE(tmpl && a);
	REQUIRE(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, tmpl, &aom) == 0);
	CHECK_EQ(bpfrt_map_update_inner(aom, &k, a, BPF_ANY), 0);
	CHECK_EQ(bpfrt_map_update_elem(a, &ik, &v, BPF_ANY), 0);
	bpfrt_map_free(a);
	REQUIRE(bpfrt_map_lookup_inner(aom, &k, &got) == 0 && got == a);
	CHECK(bpfrt_map_lookup_elem(got, &ik, &out) == 0 && out == 5);
	CHECK_EQ(bpfrt_map_delete_elem(aom, &k), 0);  /* the last user: freed after a grace period */
	bpfrt_map_free(aom);
	bpfrt_map_free(tmpl);
}

ALL_ENGINES(loader_templates_initial_slots_and_programs)
{
	static const long want[] = { 1, 0, 0, 123, 0, 0 };
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	BPFRT_OPTS(bpfrt_test_run_opts, ro, .mode = tl_exec_mode(jit));
	struct bpfrt_map *arr, *hash, *a, *b, *got = NULL;
	uint32_t k, ik;
	uint64_t v;
	size_t sz = 0;
	long *rc;

	REQUIRE(bpfrt_object_open(tl_prog_path("map_in_map.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(bpfrt_object_load(obj, &lo) == 0, "%s", bpfrt_last_error());
	arr = bpfrt_object_find_map(obj, "outer_arr");
	hash = bpfrt_object_find_map(obj, "outer_hash");
	a = bpfrt_object_find_map(obj, "inner_a");
	b = bpfrt_object_find_map(obj, "inner_b");
	rc = bpfrt_object_global(obj, "rc", &sz);
	REQUIRE(arr && hash && a && b && rc);
	CHECK_EQ(bpfrt_map_type(arr), BPF_MAP_TYPE_ARRAY_OF_MAPS);
	CHECK_EQ(bpfrt_map_value_size(arr), 4);
	CHECK_EQ(bpfrt_map_max_entries(hash), 8);
	/* the initial slots */
	k = 0;
	CHECK(bpfrt_map_lookup_inner(arr, &k, &got) == 0 && got == a);
	k = 1;
	CHECK_EQ(bpfrt_map_lookup_inner(arr, &k, &got), -ENOENT);
	k = 2;
	CHECK(bpfrt_map_lookup_inner(arr, &k, &got) == 0 && got == b);
	k = 1;
	CHECK(bpfrt_map_lookup_inner(hash, &k, &got) == 0 && got == b);

	ik = 1;
	v = 123;
	CHECK_EQ(bpfrt_map_update_elem(b, &ik, &v, BPF_ANY), 0);
	REQUIRE(bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "map_in_map"), &ro) == 0,
		"%s", bpfrt_last_error());
	CHECK_EQ(ro.retval, 6);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ(rc[i], want[i], "step %zu", i);
	ik = 1;
	CHECK(bpfrt_map_lookup_elem(a, &ik, &v) == 0 && v == 11, "inner_a[1] = %llu",
	      (unsigned long long)v);
	ik = 3;
	CHECK(bpfrt_map_lookup_elem(b, &ik, &v) == 0 && v == 22);
	bpfrt_object_close(obj);
}
