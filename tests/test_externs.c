/* __kconfig and __ksym externs as the loader gives them meaning here
 * (src/engine/loader/externs.c), and map definitions with pinning and
 * map_extra. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

static const char kconfig[] =
	"# a config fragment, as the open option takes it\n"
	"CONFIG_BPFRT_TEST_NUM=42\n"
	"CONFIG_BPFRT_TEST_BOOL=y\n"
	"CONFIG_BPFRT_TEST_TRI=m\n"
	"CONFIG_BPFRT_TEST_STR=\"ab\"\n";

static uint64_t uname_version(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0, c = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u.%u", &a, &b, &c) < 2)
		return 0;
	return (a << 16) + (b << 8) + (c > 255 ? 255 : c);
}

TEST(kconfig_and_ksym_externs_read_as_documented)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .kconfig = kconfig);
	BPFRT_OPTS(bpfrt_test_run_opts, ro);
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	uint64_t *out;
	size_t size = 0;
	uint8_t ctx[8] = { 0 };

	REQUIRE(!bpfrt_object_open(tl_prog_path("externs.bpf.o"), &oo, &obj), "%s",
		bpfrt_last_error());
	REQUIRE(!bpfrt_object_load(obj, NULL), "%s", bpfrt_last_error());
	REQUIRE(bpfrt_object_find_map(obj, ".kconfig"), "no .kconfig map: %s", bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "read_externs");
	REQUIRE(p);
	ro.ctx_in = ctx;
	ro.ctx_size_in = sizeof(ctx);
	REQUIRE(!bpfrt_prog_test_run_opts(p, &ro), "%s", bpfrt_last_error());
	CHECK_EQ(ro.retval, 0);
	out = bpfrt_object_global(obj, "out", &size);
	REQUIRE(out && size == 9 * 8);
	CHECK_EQ(out[0], uname_version());
	CHECK_EQ(out[1], 42);
	CHECK_EQ(out[2], 1);             /* y as a bool */
	CHECK_EQ(out[3], 2);             /* m as libbpf's tristate */
	CHECK_EQ(out[4], 'a' | ('b' << 8));
	CHECK_EQ(out[5], 0);             /* weak, set nowhere */
	CHECK_EQ(out[6], 0);             /* weak kernel variable: absent */
	CHECK_EQ(out[7], 0);             /* weak kfunc no one registered: absent */
	CHECK_EQ(out[8], 2);             /* the pinned map is an ordinary, empty map */
	bpfrt_object_close(obj);
}

/* the program's `if (CONFIG_BPFRT_TEST_NUM != 42) return 1` with
 * another value: the map holds what the config says */
TEST(kconfig_values_come_from_the_open_option_first)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .kconfig = "CONFIG_BPFRT_TEST_NUM=0x7\n");
	BPFRT_OPTS(bpfrt_test_run_opts, ro);
	struct bpfrt_object *obj = NULL;
	uint8_t ctx[8] = { 0 };
	uint64_t *out;

	REQUIRE(!bpfrt_object_open(tl_prog_path("externs.bpf.o"), &oo, &obj), "%s",
		bpfrt_last_error());
	REQUIRE(!bpfrt_object_load(obj, NULL), "%s", bpfrt_last_error());
	ro.ctx_in = ctx;
	ro.ctx_size_in = sizeof(ctx);
	REQUIRE(!bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "read_externs"), &ro), "%s",
		bpfrt_last_error());
	CHECK_EQ(ro.retval, 1);
	out = bpfrt_object_global(obj, "out", NULL);
	CHECK_EQ(out[1], 7);
	CHECK_EQ(out[2], 0);             /* unset weak bool */
	bpfrt_object_close(obj);
}

TEST(missing_strong_externs_fail_naming_them)
{
	struct bpfrt_object *obj = NULL;
	int err;

	/* no kconfig line for a strong extern: the running kernel's config
	 * does not have this name either */
	err = bpfrt_object_open(tl_prog_path("externs.bpf.o"), NULL, &obj);
	CHECK(err == -ESRCH && strstr(bpfrt_last_error(), "CONFIG_BPFRT_TEST_NUM") && !obj,
	      "%d %s", err, bpfrt_last_error());
	err = bpfrt_object_open(tl_prog_path("bad_kconfig_strong.bpf.o"), NULL, &obj);
	CHECK(err == -ESRCH && strstr(bpfrt_last_error(), "CONFIG_BPFRT_NOWHERE_SET") && !obj,
	      "%d %s", err, bpfrt_last_error());
	/* a bad value for its type */
	err = bpfrt_object_open(tl_prog_path("externs.bpf.o"),
				&(struct bpfrt_object_open_opts){
					.sz = sizeof(struct bpfrt_object_open_opts),
					.kconfig = "CONFIG_BPFRT_TEST_NUM=forty\n" }, &obj);
	CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "CONFIG_BPFRT_TEST_NUM") &&
	      strstr(bpfrt_last_error(), "not a number"), "%d %s", err, bpfrt_last_error());
	/* a strong kernel variable: at load, naming it */
	REQUIRE(!bpfrt_object_open(tl_prog_path("bad_ksym_var.bpf.o"), NULL, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, NULL);
	CHECK(err == -ENOENT && strstr(bpfrt_last_error(), "bpf_prog_active") &&
	      strstr(bpfrt_last_error(), "kernel variable"), "%d %s", err, bpfrt_last_error());
	bpfrt_object_close(obj);
}

TEST(pinning_and_map_extra_values_linux_refuses)
{
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(tl_prog_path("bad_pinning.bpf.o"), NULL, &obj);

	CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "bad_pinning") &&
	      strstr(bpfrt_last_error(), "unknown pinning value 2"), "%d %s", err,
	      bpfrt_last_error());
	REQUIRE(!bpfrt_object_open(tl_prog_path("bad_map_extra.bpf.o"), NULL, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, NULL);
	CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "bad_map_extra") &&
	      strstr(bpfrt_last_error(), "only bloom filter"), "%d %s", err, bpfrt_last_error());
	bpfrt_object_close(obj);
}
