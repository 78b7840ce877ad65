/* Typed arguments: fentry/fexit programs (tests/progs/btf_args.bpf.c) read
 * the host's struct btfargs_req (tests/host/btfargs_host.c) through the
 * pointer they are handed, typed from the host's BTF, either the .BTF in
 * this executable (the host's lookup) or btf_custom_path. Loads through
 * it are fault-safe: a NULL, dangling (unmapped) or bad pointer member
 * reads 0 in the interpreter, the checking interpreter and the JIT, and
 * the host does not crash. Without BTF the argument stays a number and
 * the dereference is refused, saying why. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct btfargs_req {
	int len;
	unsigned short flags;
	unsigned char prio : 3, busy : 1;
	struct btfargs_req *next;
	struct btfargs_inner {
		long a, b;
	} inner;
	char name[8];
	void *opaque;
};

int btfargs_f(struct btfargs_req *r);
struct btfargs_req *btfargs_next(struct btfargs_req *r, long n);

struct outs {
	long len, next_len, next_next_len, inner_b, flags, name0, probe_read, ret_len, calls;
};

static const char *host_btf(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/../host/btfargs_host.btf", tl_prog_path(""));
	return path;
}

/* An address nothing is mapped at (a page mapped, then unmapped). */
static void *dangling(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, 4096);
	return p;
}

static struct outs read_outs(struct bpfrt_object *obj)
{
	struct outs o;

#define G(f) o.f = *(long *)bpfrt_object_global(obj, "out_" #f, NULL)
	G(len); G(next_len); G(next_next_len); G(inner_b); G(flags); G(name0);
	G(probe_read); G(ret_len); G(calls);
#undef G
	return o;
}

static void zero_outs(struct bpfrt_object *obj)
{
	static const char *const names[] = { "out_len", "out_next_len", "out_next_next_len",
		"out_inner_b", "out_flags", "out_name0", "out_probe_read", "out_ret_len" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		*(long *)bpfrt_object_global(obj, names[i], NULL) = -99;
}

static struct bpfrt_object *load(const char *btf, bool jit)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .btf_custom_path = btf);
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	struct bpfrt_object *obj = NULL;

	if (bpfrt_object_open(tl_prog_path("btf_args.bpf.o"), &oo, &obj)) {
		tl_fail(__FILE__, __LINE__, "open: %s", bpfrt_last_error());
		return NULL;
	}
	if (bpfrt_object_load(obj, &lo)) {
		tl_fail(__FILE__, __LINE__, "load (%s, %s): %s", btf ? btf : "host BTF",
			jit ? "jit" : "interp", bpfrt_last_error());
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

/* The requests every run reads: a chain of two, one whose next is NULL,
 * one whose next is unmapped, and r itself NULL or unmapped. */
struct scene {
	struct btfargs_req a, b, c, d;
	void *gone;
};

static void scene_init(struct scene *s)
{
	memset(s, 0, sizeof(*s));
	s->gone = dangling();
	s->a = (struct btfargs_req){ .len = 11, .flags = 0x1234, .next = &s->b,
				     .inner = { 5, 55 }, .name = "abc" };
	s->b = (struct btfargs_req){ .len = 22, .next = &s->c };
	s->c = (struct btfargs_req){ .len = 33, .next = NULL };
	s->d = (struct btfargs_req){ .len = 44, .next = s->gone };
}

/* What read_req must have seen for r, after one call. */
static void check_outs(struct bpfrt_object *obj, struct scene *s, struct btfargs_req *r,
		       const char *how)
{
	struct outs o = read_outs(obj);

	if (r == &s->a) {
		CHECK_EQ(o.len, 11, "%s", how);
		CHECK_EQ(o.next_len, 22, "%s", how);
		CHECK_EQ(o.next_next_len, 33, "%s", how);
		CHECK_EQ(o.inner_b, 55, "%s", how);
		CHECK_EQ(o.flags, 0x1234, "%s", how);
		CHECK_EQ(o.name0, 'a', "%s", how);
		CHECK_EQ(o.probe_read, 11, "%s", how);
	} else if (r == &s->c) {          /* next NULL */
		CHECK_EQ(o.len, 33, "%s", how);
		CHECK_EQ(o.next_len, 0, "%s: through NULL", how);
		CHECK_EQ(o.next_next_len, 0, "%s: through NULL", how);
	} else if (r == &s->d) {          /* next unmapped */
		CHECK_EQ(o.len, 44, "%s", how);
		CHECK_EQ(o.next_len, 0, "%s: through an unmapped pointer", how);
		CHECK_EQ(o.next_next_len, 0, "%s: through an unmapped pointer", how);
	} else {                          /* r NULL or unmapped */
		CHECK_EQ(o.len, 0, "%s: r %p", how, (void *)r);
		CHECK_EQ(o.next_len, 0, "%s: r %p", how, (void *)r);
		CHECK_EQ(o.inner_b, 0, "%s: r %p", how, (void *)r);
		CHECK_EQ(o.probe_read, 0, "%s: r %p (probe_read fails, zeroing)", how, (void *)r);
	}
}

static void run_all(struct bpfrt_object *obj, enum bpfrt_exec_mode mode, const char *how)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, "read_req");
	struct scene s;
	struct btfargs_req *rs[5];
	uint64_t r0 = 1;

	scene_init(&s);
	rs[0] = &s.a, rs[1] = &s.c, rs[2] = &s.d, rs[3] = NULL, rs[4] = s.gone;
	REQUIRE(p && s.gone);
	for (int i = 0; i < 5; i++) {
		uint64_t ctx[6] = { (uintptr_t)rs[i] };

		zero_outs(obj);
		CHECK(!bpfrt_prog_run(p, mode, (uintptr_t)ctx, sizeof(ctx), &r0) && r0 == 0,
		      "%s: %s", how, bpfrt_last_error());
		check_outs(obj, &s, rs[i], how);
	}
}

static bool have_btf(void)
{
#ifdef BTFARGS_BTF_ENCODED
	return !access(host_btf(), R_OK);
#else
	return false;
#endif
}

TEST(typed_argument_reads_through_btf_custom_path)
{
	if (!have_btf())
		SKIP("no pahole when the test was built: the host function has no BTF");
	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_object *obj = load(host_btf(), jit);

		if (!obj)
			return;
		/* verified again as loaded (its loads now fault-safe ones) */
		CHECK(!bpfrt_prog_verify(bpfrt_object_find_prog(obj, "read_req"), NULL), "%s",
		      bpfrt_last_error());
		run_all(obj, BPFRT_EXEC_INTERP, "interp");
		run_all(obj, BPFRT_EXEC_CHECKED, "checked");
		if (jit)
			run_all(obj, BPFRT_EXEC_JIT, "jit");
		bpfrt_object_close(obj);
	}
}

TEST(typed_argument_reads_through_the_host_btf)
{
	struct bpfrt_object *obj;

	if (!have_btf())
		SKIP("no pahole when the test was built: the host function has no BTF");
	obj = load(NULL, true);
	if (!obj)
		return;
	run_all(obj, BPFRT_EXEC_JIT, "jit, host BTF");
	run_all(obj, BPFRT_EXEC_INTERP, "interp, host BTF");
	bpfrt_object_close(obj);
}

/* A chain walked down: a cycle sums every len, a chain ending in NULL
 * sums what is there (the loads past the end read 0). */
TEST(chain_walk_reads_through_null)
{
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	struct scene s;

	if (!have_btf())
		SKIP("no pahole when the test was built: the host function has no BTF");
	obj = load(host_btf(), true);
	if (!obj)
		return;
	p = bpfrt_object_find_prog(obj, "walk_chain");
	REQUIRE(p);
	scene_init(&s);
	for (int mode = 0; mode < 3; mode++) {
		enum bpfrt_exec_mode m = mode == 0 ? BPFRT_EXEC_JIT : mode == 1 ? BPFRT_EXEC_INTERP
						   : BPFRT_EXEC_CHECKED;
		uint64_t ctx[6] = { (uintptr_t)&s.a }, r0 = 1;

		s.c.next = NULL;
		CHECK(!bpfrt_prog_run(p, m, (uintptr_t)ctx, sizeof(ctx), &r0), "%s", bpfrt_last_error());
		CHECK_EQ(*(long *)bpfrt_object_global(obj, "out_sum", NULL), 11 + 22 + 33);
		s.c.next = &s.a; /* a, b, c, a, b, c, a, b */
		CHECK(!bpfrt_prog_run(p, m, (uintptr_t)ctx, sizeof(ctx), &r0), "%s", bpfrt_last_error());
		CHECK_EQ(*(long *)bpfrt_object_global(obj, "out_sum", NULL), 3 * 11 + 3 * 22 + 2 * 33);
	}
	bpfrt_object_close(obj);
}

/* The native instructions of a listing, without offsets and without the
 * code of lddw (the globals of two objects differ), one per line. */
static char *native_code(struct bpfrt_prog *p)
{
	char *raw = NULL, *out, *o, *line, *save = NULL;
	bool in_lddw = false;
	size_t len = 0;
	FILE *f = open_memstream(&raw, &len);

	if (!f)
		return NULL;
	bpfrt_prog_dump_jited(p, f);
	fclose(f);
	out = o = calloc(1, len + 1);
	for (line = strtok_r(raw, "\n", &save); out && line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		/* native lines are indented; BPF lines and comments are not */
		if (line[0] != ' ') {
			in_lddw = strstr(line, "lddw") != NULL;
			continue;
		}
		if (!colon || in_lddw)
			continue;
		o += sprintf(o, "%s\n", colon + 1);
	}
	free(raw);
	return out;
}

/* Where it does not fault a fault-safe load is the plain load: the JIT
 * code of the verified program (fault-safe loads) and of a trusted load
 * of the same object (plain loads) are the same instructions; only the
 * fixups after the code, one per load, are added. */
TEST(fault_safe_load_is_the_plain_instruction)
{
	struct bpfrt_object *obj[2] = { NULL, NULL };
	char *code[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };

	if (!have_btf())
		SKIP("no pahole when the test was built: the host function has no BTF");
	for (int t = 0; t < 2; t++) {
		BPFRT_OPTS(bpfrt_object_open_opts, oo, .btf_custom_path = host_btf());
		BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = true, .trusted = t == 1);
		struct bpfrt_prog *p;

		REQUIRE(!bpfrt_object_open(tl_prog_path("btf_args.bpf.o"), &oo, &obj[t]) &&
			!bpfrt_object_load(obj[t], &lo), "%s", bpfrt_last_error());
		p = bpfrt_object_find_prog(obj[t], "walk_chain");
		REQUIRE(p && bpfrt_prog_jited(p, &len[t]));
		code[t] = native_code(p);
		REQUIRE(code[t] && code[t][0], "no listing");
	}
	CHECK(!strcmp(code[0], code[1]), "fault-safe:\n%s\nplain:\n%s", code[0], code[1]);
	CHECK(len[0] > len[1], "the fixups follow the code (%zu, %zu bytes)", len[0], len[1]);
	printf("# walk_chain: %zu bytes with 15 fault-safe loads, %zu with plain ones\n", len[0],
	       len[1]);
	for (int t = 0; t < 2; t++) {
		free(code[t]);
		bpfrt_object_close(obj[t]);
	}
}

/* fexit: the returned pointer is typed too */
TEST(fexit_return_value_is_typed)
{
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	struct scene s;

	if (!have_btf())
		SKIP("no pahole when the test was built: the host function has no BTF");
	obj = load(host_btf(), true);
	if (!obj)
		return;
	p = bpfrt_object_find_prog(obj, "read_ret");
	REQUIRE(p);
	scene_init(&s);
	for (int mode = 0; mode < 2; mode++) {
		uint64_t ctx[7] = { (uintptr_t)&s.a, 3, (uintptr_t)&s.b }, r0 = 1;

		zero_outs(obj);
		CHECK(!bpfrt_prog_run(p, mode ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, (uintptr_t)ctx,
				      sizeof(ctx), &r0), "%s", bpfrt_last_error());
		CHECK_EQ(read_outs(obj).ret_len, 22);
		ctx[2] = (uintptr_t)s.gone;
		CHECK(!bpfrt_prog_run(p, mode ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, (uintptr_t)ctx,
				      sizeof(ctx), &r0), "%s", bpfrt_last_error());
		CHECK_EQ(read_outs(obj).ret_len, 0);
	}
	bpfrt_object_close(obj);
}

/* Attached for real: the host calls the function with each pointer. */
TEST(attached_fentry_reads_host_calls)
{
#if !defined(__x86_64__)
	SKIP("fentry attaches on x86-64 only");
#else
	if (!have_btf())
		SKIP("no pahole when the test was built: the host function has no BTF");
	for (int jit = 0; jit < 2; jit++) {
		struct bpfrt_object *obj = load(NULL, jit);
		struct bpfrt_prog *p;
		struct bpfrt_link *l = NULL;
		struct scene s;
		struct btfargs_req *rs[5];

		if (!obj)
			return;
		p = bpfrt_object_find_prog(obj, "read_req");
		REQUIRE(p);
		REQUIRE(!bpfrt_prog_attach(p, NULL, &l), "%s", bpfrt_last_error());
		scene_init(&s);
		rs[0] = &s.a, rs[1] = &s.c, rs[2] = &s.d, rs[3] = NULL, rs[4] = s.gone;
		for (int i = 0; i < 5; i++) {
			long before = read_outs(obj).calls;

			zero_outs(obj);
			CHECK_EQ(btfargs_f(rs[i]), 7);
			CHECK_EQ(read_outs(obj).calls, before + 1);
			check_outs(obj, &s, rs[i], jit ? "attached jit" : "attached interp");
		}
		bpfrt_link_destroy(l);
		bpfrt_object_close(obj);
	}
#endif
}

/* No BTF describes getpid (libc has no .BTF): its argument is a number,
 * and the load says why it is refused. */
TEST(no_btf_keeps_numbers_and_says_why)
{
	struct bpfrt_object *obj = NULL;
	int err;

	REQUIRE(!bpfrt_object_open(tl_prog_path("bad_btf_args.bpf.o"), NULL, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, NULL);
	CHECK_EQ(err, -EACCES, "%s", bpfrt_last_error());
	CHECK(strstr(bpfrt_last_error(), "invalid mem access 'scalar'") &&
	      strstr(bpfrt_last_error(), "no BTF for the function's arguments"),
	      "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

