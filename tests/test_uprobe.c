/* uprobes and uretprobes in this process (bpfrt/uprobe.h) on functions
 * built with plain gcc -O2 (tests/trace/uprobe_funcs.c): libbpf's section
 * syntax (FUNC, BINARY:FUNC by soname, stem and path, BINARY:0xOFF, +OFF,
 * addresses), exact hit counts from 4 threads in both modes, uretprobe
 * return values, malloc/free in libc, a library probed before it is
 * loaded (pending until dlopen), refusals, and the original bytes back
 * after detach. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "uprobe/uprobe.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
long up_add(long a, long b);
long up_fib(long n);
long up_sum3(long a, long b, long c);

static struct bpfrt_object *open_progs(bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	return load_object("uprobe.bpf.o", &lo);
}

static struct bpfrt_link *attach_sec(struct bpfrt_object *obj, const char *prog)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, prog);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return NULL;
	err = bpfrt_prog_attach(p, NULL, &l);
	CHECK(!err && l, "attach %s (%s): %d %s", prog, bpfrt_prog_section(p), err,
	      bpfrt_last_error());
	return l;
}

TEST(parse_targets)
{
	static const struct {
		const char *t, *bin, *fn;
		uint64_t off;
	} ok[] = {
		{ "malloc", NULL, "malloc", 0 },
		{ "up_add+0x4", NULL, "up_add", 4 },
		{ "libc.so.6:malloc", "libc.so.6", "malloc", 0 },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6:free+16", "/usr/lib/x86_64-linux-gnu/libc.so.6",
		  "free", 16 },
		{ "/bin/true:0x1040", "/bin/true", NULL, 0x1040 },
		{ "0x401000", NULL, NULL, 0x401000 },
	};
	static const char *bad[] = { "", ":malloc", "libc:", "f+", "f+zz", "lib:0xzz", "lib:+4" };
	const char *bin, *fn;
	uint64_t off;
	char buf[256];

	for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
		int err = bpfrt_uprobe_parse_target(ok[i].t, buf, sizeof(buf), &bin, &fn, &off);

		CHECK_EQ(err, 0, "%s: %s", ok[i].t, bpfrt_last_error());
		CHECK_STR_EQ(bin, ok[i].bin, "%s", ok[i].t);
		CHECK_STR_EQ(fn, ok[i].fn, "%s", ok[i].t);
		CHECK_EQ(off, ok[i].off, "%s", ok[i].t);
	}
	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		CHECK_EQ(bpfrt_uprobe_parse_target(bad[i], buf, sizeof(buf), &bin, &fn, &off),
			 -EINVAL, "'%s' accepted", bad[i]);
}

#define THREADS 4
#define CALLS 20000

static void *call_add(void *arg)
{
	long base = (long)(uintptr_t)arg;

	for (long i = 0; i < CALLS; i++)
		up_add(base, i);
	return NULL;
}

/* Exact counts from 4 threads: no lost or phantom events, entry and
 * return, with the arguments and return values summed. */
static void threads_exact(bool jit)
{
	struct bpfrt_object *obj = open_progs(jit);
	struct bpfrt_link *l, *lr;
	uint8_t before[16];
	pthread_t t[THREADS];

	if (!obj)
		return;
	memcpy(before, (void *)up_add, sizeof(before));
	volatile long *hits = object_global(obj, "add_hits");
	volatile long *ret_hits = object_global(obj, "add_ret_hits");
	volatile long *ret_sum = object_global(obj, "add_ret_sum");
	volatile long *arg_sum = object_global(obj, "add_arg_sum");

	l = attach_sec(obj, "on_add");
	lr = attach_sec(obj, "on_add_ret");
	if (l && lr) {
		CHECK_STR_EQ(bpfrt_link_kind(l), "uprobe");
		CHECK_STR_EQ(bpfrt_link_kind(lr), "uretprobe");
		CHECK_STR_EQ(bpfrt_link_target(l), "up_add");
		CHECK(!bpfrt_uprobe_pending(l), "a function of the executable is pending");
		CHECK_EQ(up_add(40, 2), 42);
		CHECK_EQ(*hits, 1);
		CHECK_EQ(*ret_hits, 1);
		CHECK_EQ(*ret_sum, 42);
		for (long i = 0; i < THREADS; i++)
			REQUIRE(!pthread_create(&t[i], NULL, call_add, (void *)(uintptr_t)(i * 1000)));
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		long want = 42;

		for (long i = 0; i < THREADS; i++)
			want += CALLS * i * 1000 + (long)CALLS * (CALLS - 1) / 2;
		CHECK_EQ(*hits, 1 + THREADS * CALLS);
		CHECK_EQ(*ret_hits, 1 + THREADS * CALLS);
		CHECK_EQ(*arg_sum, want);
		CHECK_EQ(*ret_sum, want);
	}
	bpfrt_link_destroy(l);
	bpfrt_link_destroy(lr);
	CHECK(!memcmp(before, (void *)up_add, sizeof(before)), "up_add's bytes differ after detach");
	CHECK_EQ(up_add(1, 2), 3);
	CHECK_EQ(*hits, 1 + THREADS * CALLS, "a run after detach");
	bpfrt_object_close(obj);
}

TEST(threads_exact_jit) { threads_exact(true); }
TEST(threads_exact_interp) { threads_exact(false); }

/* Recursion (gcc -O2 turns part of up_fib's recursion into loops, so
 * the count of real calls is whatever it left): every entry has its
 * return, the outermost last, and a cookie reaches the program. */
TEST(uretprobe_recursion)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_prog *p = obj ? bpfrt_object_find_prog(obj, "on_any") : NULL;
	BPFRT_OPTS(bpfrt_uprobe_opts, o, .func_name = "up_fib", .retprobe = true, .cookie = 7);
	struct bpfrt_link *l = NULL, *le, *lr;

	if (!p)
		return;
	volatile long *hits = object_global(obj, "any_hits");
	volatile long *cookie = object_global(obj, "any_cookie");
	volatile long *entries = object_global(obj, "fib_entries");
	volatile long *rets = object_global(obj, "fib_rets");
	volatile long *last = object_global(obj, "fib_last_ret");

	REQUIRE(!bpfrt_uprobe_attach(p, NULL, 0, &o, &l), "%s", bpfrt_last_error());
	CHECK_STR_EQ(bpfrt_link_kind(l), "uretprobe");
	le = attach_sec(obj, "on_fib");
	lr = attach_sec(obj, "on_fib_ret");
	CHECK_EQ(up_fib(20), 6765);
	CHECK_GT(*entries, 1, "no recursion left to see");
	CHECK_EQ(*rets, *entries);
	CHECK_EQ(*hits, *entries, "two uretprobes on one function");
	CHECK_EQ(*last, 6765);
	CHECK_EQ(*cookie, 7);
	bpfrt_link_destroy(l);
	bpfrt_link_destroy(le);
	bpfrt_link_destroy(lr);
	bpfrt_object_close(obj);
}

TEST(libc_malloc_free)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_link *lm, *lf;

	if (TL_ASAN) {
		bpfrt_object_close(obj);
		SKIP("AddressSanitizer replaces malloc and free: libc's are not called");
	}
	if (!obj)
		return;
	volatile long *mh = object_global(obj, "malloc_hits");
	volatile long *fh = object_global(obj, "free_hits");
	volatile unsigned long *watch = object_global(obj, "free_watch");

	lm = attach_sec(obj, "on_malloc");
	lf = attach_sec(obj, "on_free");
	if (lm && lf) {
		CHECK_STR_EQ(bpfrt_link_target(lm), "libc.so.6:malloc");
		for (int i = 0; i < 10; i++) {
			void *volatile p = malloc(12345);

			*watch = (unsigned long)p;
			free(p);
			*watch = 0;
		}
		CHECK_EQ(*mh, 10);
		CHECK_EQ(*fh, 10);
	}
	bpfrt_link_destroy(lm);
	bpfrt_link_destroy(lf);
	void *volatile p = malloc(12345);

	free(p);
	CHECK_EQ(*mh, 10, "counted after detach");
	bpfrt_object_close(obj);
}

/* The file offset of fn in the object that holds it. */
static int file_offset_of(void *fn, uint64_t *off, char *path, size_t cap)
{
	Dl_info info;
	struct link_map *lm;

	if (!dladdr1(fn, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return -1;
	const ElfW(Ehdr) *eh = info.dli_fbase;
	const ElfW(Phdr) *ph = (const void *)((const char *)eh + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		uintptr_t start = lm->l_addr + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD && (uintptr_t)fn >= start &&
		    (uintptr_t)fn < start + ph[i].p_filesz) {
			*off = (uintptr_t)fn - start + ph[i].p_offset;
			snprintf(path, cap, "%s", info.dli_fname);
			return 0;
		}
	}
	return -1;
}

/* Paths (symlinks resolved), file offsets, +OFF, addresses, int3 mode. */
TEST(paths_offsets_addresses)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_prog *p = obj ? bpfrt_object_find_prog(obj, "on_any") : NULL;
	struct bpfrt_link *l = NULL;
	char libc[PATH_MAX], exe[PATH_MAX];
	uint64_t off;
	Dl_info info;

	if (!p)
		return;
	volatile long *hits = object_global(obj, "any_hits");

	/* libc by the path the loader used and through /proc/self/root */
	REQUIRE(dladdr((void *)strverscmp, &info) && info.dli_fname);
	snprintf(libc, sizeof(libc), "/proc/self/root%s", info.dli_fname);
	{
		/* one bpfrt itself never calls */
		BPFRT_OPTS(bpfrt_uprobe_opts, o, .func_name = "strverscmp");
		REQUIRE(!bpfrt_uprobe_attach(p, libc, 0, &o, &l), "%s: %s", libc, bpfrt_last_error());
		CHECK_LT(strverscmp("a1", "a10"), 0);
		CHECK_EQ(*hits, 1);
		bpfrt_link_destroy(l);
	}
	/* the executable by /proc/self/exe and a file offset */
	REQUIRE(!file_offset_of((void *)up_sum3, &off, exe, sizeof(exe)));
	{
		BPFRT_OPTS(bpfrt_uprobe_opts, o, .mode = BPFRT_KPROBE_INT3);
		REQUIRE(!bpfrt_uprobe_attach(p, "/proc/self/exe", off, &o, &l), "%s",
			bpfrt_last_error());
		CHECK(!bpfrt_uprobe_pending(l));
		CHECK_EQ(up_sum3(3, 1, 1), 6);
		CHECK_EQ(*hits, 2);
		bpfrt_link_destroy(l);
	}
	/* an address, by hand and by section target */
	{
		char t[64];
		struct bpfrt_attach_opts ao = { .sz = sizeof(ao), .target = t };

		snprintf(t, sizeof(t), "%#lx", (unsigned long)(uintptr_t)up_sum3);
		REQUIRE(!bpfrt_prog_attach(p, &ao, &l), "%s", bpfrt_last_error());
		CHECK_EQ(up_sum3(2, 1, 0), 1);
		CHECK_EQ(*hits, 3);
		bpfrt_link_destroy(l);
	}
	/* +OFF: an instruction boundary past the entry (the loop's own
	 * instructions may move; the first one of gcc's code is 1+ bytes) */
	{
		struct bpfrt_attach_opts ao = { .sz = sizeof(ao), .target = "up_fib+0x4" };
		int err = bpfrt_prog_attach(p, &ao, &l);

		/* either the boundary is there and it counts, or the kprobe
		 * engine names why not: never a probe inside an instruction */
		if (!err) {
			up_fib(1);
			CHECK_GE(*hits, 3);
			bpfrt_link_destroy(l);
		} else {
			CHECK_EQ(err, -EINVAL, "%s", bpfrt_last_error());
		}
	}
	bpfrt_object_close(obj);
}

/* A library named before it is loaded: pending, placed after dlopen. */
TEST(pending_until_dlopen)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_link *l;
	long (*mul)(long, long);
	void *h;

	if (!obj)
		return;
	volatile long *hits = object_global(obj, "late_hits"), *ret = object_global(obj, "late_ret");

	REQUIRE(!dlopen(UPROBE_LATE_LIB, RTLD_NOW | RTLD_NOLOAD), "loaded before the test");
	l = attach_sec(obj, "on_late_ret");
	REQUIRE(l);
	CHECK(bpfrt_uprobe_pending(l), "placed before the library is there");
	CHECK_EQ(bpfrt_uprobe_refresh(), 0, "nothing to place yet");
	h = dlopen(UPROBE_LATE_LIB, RTLD_NOW | RTLD_LOCAL);
	REQUIRE(h, "dlopen %s: %s", UPROBE_LATE_LIB, dlerror());
	mul = (long (*)(long, long))dlsym(h, "late_mul");
	REQUIRE(mul);
	CHECK_EQ(mul(6, 7), 42);
	CHECK_EQ(*hits, 0, "ran while pending");
	CHECK_EQ(bpfrt_uprobe_refresh(), 1);
	CHECK(!bpfrt_uprobe_pending(l));
	CHECK_EQ(mul(6, 7), 42);
	CHECK_EQ(*hits, 1);
	CHECK_EQ(*ret, 42);
	bpfrt_link_destroy(l);
	CHECK_EQ(mul(2, 3), 6);
	CHECK_EQ(*hits, 1);
	dlclose(h);
	bpfrt_object_close(obj);
}

TEST(refusals)
{
	struct bpfrt_object *obj = open_progs(false);
	struct bpfrt_prog *p = obj ? bpfrt_object_find_prog(obj, "on_any") : NULL;
	struct bpfrt_link *l = NULL;

	if (!p)
		return;
	{
		BPFRT_OPTS(bpfrt_uprobe_opts, o, .func_name = "no_such_function_here");
		CHECK_EQ(bpfrt_uprobe_attach(p, NULL, 0, &o, &l), -ENOENT);
		CHECK(strstr(bpfrt_last_error(), "no_such_function_here"), "%s", bpfrt_last_error());
		CHECK_EQ(bpfrt_uprobe_attach(p, "libc.so.6", 0, &o, &l), -ENOENT, "in libc");
		CHECK_EQ(bpfrt_uprobe_attach(p, "/no/such/lib.so", 0, &o, &l), -ENOENT);
		CHECK(strstr(bpfrt_last_error(), "/no/such/lib.so"), "%s", bpfrt_last_error());
	}
	{
		BPFRT_OPTS(bpfrt_uprobe_opts, o, .func_name = "up_add", .retprobe = true);
		CHECK_EQ(bpfrt_uprobe_attach(p, NULL, 4, &o, &l), -EINVAL, "uretprobe at +4");
	}
	{
		BPFRT_OPTS(bpfrt_uprobe_opts, o, .func_name = "up_add");
		CHECK_EQ(bpfrt_uprobe_attach(p, NULL, 4096, &o, &l), -EINVAL, "past the end");
		CHECK_EQ(bpfrt_uprobe_attach(p, NULL, 0, NULL, &l), -EINVAL, "no function");
	}
	{
		struct bpfrt_attach_opts ao = { .sz = sizeof(ao), .target = "0x10" };
		CHECK_EQ(bpfrt_prog_attach(p, &ao, &l), -EINVAL, "not code");
	}
	CHECK(l == NULL);
	bpfrt_object_close(obj);
}

#else
TL_SKIP_ALL("uprobes are placed by the x86-64 kprobe engine")
#endif
