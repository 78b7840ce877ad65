/* The link API: ids, kinds, targets, listing (in process, through the
 * memfd snapshot and through `bpfrt links PID`), detach vs destroy, and
 * attach errors. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/tracepoint.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

BPFRT_DECLARE_TRACEPOINT(tp_args3, int a, long b, const char *c);
BPFRT_DEFINE_TRACEPOINT(tp_args3);
BPFRT_DECLARE_TRACEPOINT(tp_stress, uint64_t idx);
BPFRT_DEFINE_TRACEPOINT(tp_stress);

__attribute__((noinline)) static void fire_args3(int a, long b, const char *c)
{
	BPFRT_TRACEPOINT(tp_args3, a, b, c);
}

static uint64_t tp_test_refire(uint64_t depth, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5)
{
	return 0;
}

static struct bpfrt_object *open_progs(void)
{
	static const struct bpfrt_helper k = {
		.fn = tp_test_refire,
		.args = { BPFRT_ARG_ANYTHING },
	};
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = true);

	if (bpfrt_kfunc_id("tp_test_refire") < 0)
		bpfrt_kfunc_register("tp_test_refire", &k);
	return load_object("tracepoint.bpf.o", &lo);
}

static char *list_links(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	bpfrt_link_list(f);
	fclose(f);
	return buf;
}

/* The memfd listing, read back through /proc/self/fd like the CLI does. */
static char *read_snapshot(void)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	char *buf = NULL;
	DIR *d = opendir("/proc/self/fd");

	while (d && !buf && (de = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "/memfd:bpfrt-links (deleted)"))
			continue;
		FILE *f = fopen(path, "r");

		if (f) {
			buf = calloc(1, 65536);
			if (buf)
				(void)!fread(buf, 1, 65535, f);
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return buf;
}

TEST(links_have_ids_kinds_targets_and_are_listed)
{
	struct bpfrt_object *obj = open_progs();
	BPFRT_OPTS(bpfrt_attach_opts, o, .cookie = 0xabc);
	struct bpfrt_link *a = NULL, *b = NULL;
	struct bpfrt_prog *pa, *pb;
	uint32_t base;
	char *s, *snap;

	REQUIRE(obj);
	base = bpfrt_link_count();
	pa = bpfrt_object_find_prog(obj, "on_tp_args");
	pb = bpfrt_object_find_prog(obj, "on_raw_args");
	REQUIRE(pa && pb);
	REQUIRE(bpfrt_prog_attach(pa, NULL, &a) == 0, "%s", bpfrt_last_error());
	REQUIRE(bpfrt_prog_attach(pb, &o, &b) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_link_count() == base + 2);
	CHECK(bpfrt_link_id(a) > 0 && bpfrt_link_id(b) == bpfrt_link_id(a) + 1);
	CHECK(bpfrt_link_prog(a) == pa && bpfrt_link_prog(b) == pb);
	CHECK(!strcmp(bpfrt_link_kind(a), "tracepoint"), "%s", bpfrt_link_kind(a));
	CHECK(!strcmp(bpfrt_link_kind(b), "raw_tracepoint"));
	CHECK(!strcmp(bpfrt_link_target(a), "bpfrt_test/tp_args3"), "%s", bpfrt_link_target(a));
	CHECK(!strcmp(bpfrt_link_target(b), "tp_args3"));

	s = list_links();
	REQUIRE(s);
	CHECK(strstr(s, "tracepoint  prog on_tp_args  target bpfrt_test/tp_args3"), "%s", s);
	CHECK(strstr(s, "raw_tracepoint  prog on_raw_args  target tp_args3  cookie 0xabc"),
	      "%s", s);
	/* oldest first */
	CHECK(strstr(s, "on_tp_args") < strstr(s, "on_raw_args"));
	free(s);

	snap = read_snapshot();
	REQUIRE(snap, "no bpfrt-links memfd");
	CHECK(atoi(snap + 4) == getpid() && !strncmp(snap, "pid ", 4), "%.40s", snap);
	CHECK(strstr(snap, "prog on_raw_args"), "%s", snap);
	free(snap);

	/* detach keeps the link (listed as detached), programs stop */
	CHECK(bpfrt_link_detach(a) == 0);
	CHECK(bpfrt_link_detach(a) == 0); /* idempotent */
	s = list_links();
	CHECK(s && strstr(s, "prog on_tp_args  target bpfrt_test/tp_args3  misses 0  (detached)"),
	      "%s", s);
	free(s);
	bpfrt_link_destroy(a);
	bpfrt_link_destroy(b);
	bpfrt_link_destroy(NULL);
	CHECK(bpfrt_link_count() == base);
	snap = read_snapshot();
	CHECK(snap && !strstr(snap, "on_raw_args"), "%s", snap ? snap : "");
	free(snap);
	bpfrt_object_close(obj);
}

TEST(cli_lists_links_of_this_process)
{
	struct bpfrt_object *obj = open_progs();
	struct bpfrt_link *l = NULL;
	char cmd[PATH_MAX + 64], out[4096];
	size_t n;
	FILE *p;

	REQUIRE(obj);
	REQUIRE(bpfrt_prog_attach(bpfrt_object_find_prog(obj, "on_stress"), NULL, &l) == 0);
	if (access(tl_test_path("../bpfrt"), X_OK)) {
		bpfrt_link_destroy(l);
		bpfrt_object_close(obj);
		SKIP("no bpfrt CLI next to the tests");
	}
	snprintf(cmd, sizeof(cmd), "%s links %d", tl_test_path("../bpfrt"), (int)getpid());
	p = popen(cmd, "r");
	REQUIRE(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	CHECK(pclose(p) == 0);
	CHECK(strstr(out, "pid "), "%s", out);
	CHECK(strstr(out, "raw_tracepoint  prog on_stress  target tp_stress"), "%s", out);
	bpfrt_link_destroy(l);
	bpfrt_object_close(obj);
}

TEST(attach_errors)
{
	struct bpfrt_object *obj = open_progs();
	BPFRT_OPTS(bpfrt_attach_opts, o);
	struct bpfrt_attach_opts bad = { 0 };
	struct bpfrt_link *l = (struct bpfrt_link *)1;
	struct bpfrt_prog *p;
	struct bpf_insn ret0[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpfrt_prog *raw;

	REQUIRE(obj);
	p = bpfrt_object_find_prog(obj, "on_zero");
	REQUIRE(p);
	CHECK(bpfrt_prog_attach(NULL, NULL, &l) == -EINVAL);
	CHECK(bpfrt_prog_attach(p, NULL, NULL) == -EINVAL);
	CHECK(bpfrt_prog_attach(p, &bad, &l) == -EINVAL && l == NULL);
	/* tp_zero is not defined in this binary */
	CHECK(bpfrt_prog_attach(p, NULL, &l) == -ENOENT && l == NULL);
	/* programs from bytes have no kind or target until opts give them */
	REQUIRE(bpfrt_prog_load(ret0, 2, NULL, &raw) == 0);
	CHECK(bpfrt_prog_attach(raw, NULL, &l) == -EOPNOTSUPP, "%s", bpfrt_last_error());
	o.kind = BPFRT_PROG_RAW_TRACEPOINT;
	CHECK(bpfrt_prog_attach(raw, &o, &l) == -EINVAL);   /* no target */
	o.target = "tp_args3";
	CHECK(bpfrt_prog_attach(raw, &o, &l) == 0, "%s", bpfrt_last_error());
	fire_args3(1, 2, "3");
	bpfrt_link_destroy(l);
	bpfrt_prog_free(raw);
	bpfrt_object_close(obj);
}
