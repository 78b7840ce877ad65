/* Linux's open-coded iterators (bpf_iter_num_*, bpf_iter_bits_*): BPF C
 * loops written with bpf_for, bpf_repeat and bpf_for_each
 * (tests/progs/iters.bpf.c) whose trip counts the verifier cannot know,
 * verified by convergence at the iterator's next call and run with exact
 * results in the interpreter, the checking interpreter and the JIT; the
 * kfuncs' registration under their Linux names. */
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct iter_args {
	int32_t start, end;
	int32_t n;
	uint32_t nr_words;
	uint64_t bits[4];
	uint64_t addr;
};

static struct bpfrt_object *load(bool jit)
{
	struct bpfrt_object *obj = NULL;
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	if (bpfrt_object_open(tl_prog_path("iters.bpf.o"), NULL, &obj) ||
	    bpfrt_object_load(obj, &lo)) {
		tl_fail(__FILE__, __LINE__, "iters.bpf.o (%s): %s", jit ? "jit" : "interp",
			bpfrt_last_error());
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

static int64_t run(struct bpfrt_object *obj, const char *name, bool jit, struct iter_args *a)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, name);
	struct bpfrt_map *bss = bpfrt_object_find_map(obj, ".bss");
	BPFRT_OPTS(bpfrt_test_run_opts, o, .mode = tl_exec_mode(jit));
	uint32_t key = 0;
	int err;

	if (!p || !bss) {
		tl_fail(__FILE__, __LINE__, "no program %s or no .bss", name);
		return INT64_MIN;
	}
	if (bpfrt_map_update_elem(bss, &key, a, 0)) {
		tl_fail(__FILE__, __LINE__, ".bss: %s", bpfrt_last_error());
		return INT64_MIN;
	}
	err = bpfrt_prog_test_run_opts(p, &o);
	if (err) {
		tl_fail(__FILE__, __LINE__, "%s: run: %d %s", name, err, bpfrt_last_error());
		return INT64_MIN;
	}
	return (int32_t)o.retval;
}

#define RUN(name, ...) run(obj, name, jit, &(struct iter_args){ __VA_ARGS__ })

ALL_ENGINES(number_loops)
{
	struct bpfrt_object *obj = load(jit);

	if (!obj)
		return;
	CHECK_EQ(RUN("sum_range", .start = 3, .end = 10), 42);
	CHECK_EQ(RUN("sum_range", .start = -5, .end = 5), -5);
	CHECK_EQ(RUN("sum_range", .start = 7, .end = 7), 0);
	CHECK_EQ(RUN("sum_range", .start = 0, .end = 100000), (int32_t)(100000ll * 99999 / 2));
	CHECK_EQ(RUN("repeat_count", .n = 0), 0);
	CHECK_EQ(RUN("repeat_count", .n = 1234), 1234);
	CHECK_EQ(RUN("repeat_count", .n = -1), 0); /* start > end: -EINVAL, nothing */
	CHECK_EQ(RUN("for_each_num", .start = 1, .end = 5), 20);
	CHECK_EQ(RUN("nested", .n = 5), 0 + 0 + 1 + 3 + 6);
	CHECK_EQ(RUN("nested", .n = 40), 40 * 39 * 38 / 6);
	CHECK_EQ(RUN("early_break", .n = 10), 45);
	CHECK_EQ(RUN("early_break", .n = 5000), 999 * 1000 / 2);
	CHECK_EQ(RUN("array_index", .start = 2, .end = 5), 4 + 9 + 16);
	CHECK_EQ(RUN("array_index", .start = -3, .end = 40), 1240);
	bpfrt_object_close(obj);
}

ALL_ENGINES(number_iterator_errors)
{
	struct bpfrt_object *obj = load(jit);

	if (!obj)
		return;
	CHECK_EQ(RUN("num_errors", .start = 0, .end = 3), 3000);
	CHECK_EQ(RUN("num_errors", .start = 5, .end = 3), -EINVAL);
	CHECK_EQ(RUN("num_errors", .start = 0, .end = (1 << 23) + 1), -E2BIG);
	CHECK_EQ(RUN("num_errors", .start = 1, .end = (1 << 23) + 1), (int32_t)(1000u * (1u << 23)));
	CHECK_EQ(RUN("num_errors", .start = INT32_MAX - 2, .end = INT32_MAX), 2000);
	CHECK_EQ(RUN("num_errors", .start = INT32_MIN, .end = INT32_MIN + 2), 2000);
	bpfrt_object_close(obj);
}

ALL_ENGINES(bits_loops)
{
	struct bpfrt_object *obj = load(jit);

	if (!obj)
		return;
	/* count << 20 | sum of the set bits' indexes */
	CHECK_EQ(RUN("bits_sum", .nr_words = 1, .bits = { 0x8000000000000005ull }),
		 3 << 20 | (0 + 2 + 63));
	CHECK_EQ(RUN("bits_sum", .nr_words = 3, .bits = { 1, 0, 1ull << 5 }),
		 2 << 20 | (0 + 133));
	CHECK_EQ(RUN("bits_sum", .nr_words = 4, .bits = { ~0ull, ~0ull, ~0ull, ~0ull }),
		 256 << 20 | (255 * 256 / 2));
	CHECK_EQ(RUN("bits_sum", .nr_words = 2, .bits = { 0, 0, ~0ull }), 0);
	CHECK_EQ(RUN("bits_sum", .nr_words = 0, .bits = { ~0ull }), 0); /* -EINVAL */
	bpfrt_object_close(obj);
}

ALL_ENGINES(bits_iterator_errors_and_memory)
{
	struct bpfrt_object *obj = load(jit);
	static uint64_t words[511];
	long page = sysconf(_SC_PAGESIZE);
	void *hole;

	if (!obj)
		return;
	memset(words, 0, sizeof(words));
	words[0] = 1ull << 3;
	words[510] = 1ull << 63;
	CHECK_EQ(RUN("bits_at", .addr = (uintptr_t)words, .nr_words = 0), -EINVAL);
	CHECK_EQ(RUN("bits_at", .addr = 0, .nr_words = 1), -EINVAL);
	CHECK_EQ(RUN("bits_at", .addr = (uintptr_t)words, .nr_words = 512), -E2BIG);
	CHECK_EQ(RUN("bits_at", .addr = (uintptr_t)words, .nr_words = 1), 1000 + (3 << 20));
	CHECK_EQ(RUN("bits_at", .addr = (uintptr_t)words, .nr_words = 511),
		 2000 + (int32_t)(32703u << 20));
	hole = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(hole != MAP_FAILED, "mmap");
	CHECK_EQ(RUN("bits_at", .addr = (uintptr_t)hole, .nr_words = 1), -EFAULT);
	CHECK_EQ(RUN("bits_at", .addr = (uintptr_t)hole - 8, .nr_words = 2), -EFAULT);
	munmap(hole, (size_t)page);
	bpfrt_object_close(obj);
}

TEST(kfuncs_under_linux_names)
{
	static const char *const names[] = { "bpf_iter_num_new", "bpf_iter_num_next",
					     "bpf_iter_num_destroy", "bpf_iter_bits_new",
					     "bpf_iter_bits_next", "bpf_iter_bits_destroy" };
	struct bpfrt_env *env = NULL;

	bpfrt_helpers_init();
	REQUIRE(!bpfrt_env_new(NULL, &env), "%s", bpfrt_last_error());
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK(bpfrt_kfunc_id(names[i]) >= BPFRT_KFUNC_ID_BASE, "%s: default env", names[i]);
		CHECK(bpfrt_env_kfunc_id(env, names[i]) >= BPFRT_KFUNC_ID_BASE, "%s: new env",
		      names[i]);
	}
	bpfrt_env_free(env);
}

