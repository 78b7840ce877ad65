/* The host symbol table (src/host/sym/symbols.c): lookups by name and by
 * address in the executable, in libc, and in a library loaded with dlopen
 * after the first lookups (mk/host-targets.mk builds it: SYM_LATE_LIB). */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "sym/symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int sym_exe_global(int x)
{
	return x * 3 + 7;
}

static __attribute__((noinline, noclone, used)) int sym_exe_static(int x)
{
	return x ^ 0x1234;
}

int (*volatile sym_exe_static_ref)(int) = sym_exe_static;

TEST(executable_function_by_name_and_address)
{
	const struct bpfrt_sym *s = NULL, *t = NULL;

	REQUIRE(!bpfrt_sym_lookup("sym_exe_global", &s), "%s", bpfrt_last_error());
	CHECK(s->addr == (uintptr_t)sym_exe_global, "%#lx vs %p", (unsigned long)s->addr,
	      (void *)sym_exe_global);
	CHECK(s->size > 0 && s->global && !strcmp(s->name, "sym_exe_global"));
	CHECK(s->module->executable && !strcmp(s->module->name, "test_symbols"),
	      "module %s", s->module->path);
	/* every byte of the function answers with it; the byte after does not */
	REQUIRE(!bpfrt_sym_at(s->addr + s->size - 1, &t), "%s", bpfrt_last_error());
	CHECK(t == s, "containing function of its last byte: %s", t->name);
	CHECK(bpfrt_sym_at(s->addr + s->size, &t) || t != s);

	/* static functions come from .symtab */
	REQUIRE(!bpfrt_sym_lookup("sym_exe_static", &s), "%s", bpfrt_last_error());
	CHECK(s->addr == (uintptr_t)sym_exe_static_ref && !s->global);
	/* qualified by the module's name */
	REQUIRE(!bpfrt_sym_lookup("test_symbols:sym_exe_global", &t), "%s", bpfrt_last_error());
	CHECK(t->addr == (uintptr_t)sym_exe_global);
}

TEST(library_function_by_name_and_address)
{
	const struct bpfrt_sym *s = NULL, *t = NULL;
	void *real = dlsym(RTLD_DEFAULT, "getpid");

	REQUIRE(real);
	REQUIRE(!bpfrt_sym_lookup("libc:getpid", &s), "%s", bpfrt_last_error());
	CHECK(s->addr == (uintptr_t)real, "libc:getpid at %#lx, dlsym says %p",
	      (unsigned long)s->addr, real);
	CHECK(!strncmp(s->module->name, "libc.so", 7), "module %s", s->module->path);
	REQUIRE(!bpfrt_sym_lookup("libc.so.6:getpid", &t), "%s", bpfrt_last_error());
	CHECK(t == s);
	REQUIRE(!bpfrt_sym_at((uintptr_t)real + 1, &t), "%s", bpfrt_last_error());
	CHECK(t->addr == (uintptr_t)real, "%s at %#lx", t->name, (unsigned long)t->addr);
}

TEST(missing_names_are_enoent_naming_them)
{
	const struct bpfrt_sym *s = (const void *)1;

	CHECK(bpfrt_sym_lookup("no_such_function_anywhere", &s) == -ENOENT && !s);
	CHECK(strstr(bpfrt_last_error(), "no_such_function_anywhere"), "%s", bpfrt_last_error());
	CHECK(bpfrt_sym_lookup("libnosuchlib:getpid", &s) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "libnosuchlib"), "%s", bpfrt_last_error());
	CHECK(bpfrt_sym_lookup("libc:no_such_function_in_libc", &s) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "no_such_function_in_libc") &&
	      strstr(bpfrt_last_error(), "libc"), "%s", bpfrt_last_error());
	CHECK(bpfrt_sym_lookup("", &s) == -EINVAL);
	CHECK(bpfrt_sym_lookup("libc:", &s) == -EINVAL);
	/* data, not code */
	CHECK(bpfrt_sym_at((uintptr_t)&sym_exe_static_ref, &s) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "no function contains"), "%s", bpfrt_last_error());
}

TEST(library_loaded_after_the_first_lookup)
{
	const struct bpfrt_sym *s = NULL, *t = NULL;
	int (*answer)(int);
	void *h;

	CHECK(bpfrt_sym_lookup("sym_late_answer", &s) == -ENOENT, "found before dlopen");
	h = dlopen(SYM_LATE_LIB, RTLD_NOW | RTLD_LOCAL);
	REQUIRE(h, "dlopen %s: %s", SYM_LATE_LIB, dlerror());
	answer = (int (*)(int))dlsym(h, "sym_late_answer");
	REQUIRE(answer && answer(1) == 7);

	REQUIRE(!bpfrt_sym_lookup("sym_late_answer", &s), "%s", bpfrt_last_error());
	CHECK(s->addr == (uintptr_t)answer && s->size > 0);
	CHECK(!strcmp(s->module->path, SYM_LATE_LIB), "module %s", s->module->path);
	REQUIRE(!bpfrt_sym_at((uintptr_t)answer + 2, &t), "%s", bpfrt_last_error());
	CHECK(t == s, "by address: %s", t->name);
	REQUIRE(!bpfrt_sym_lookup("libsym_late:sym_late_static", &t), "%s", bpfrt_last_error());
	CHECK(!t->global && t->module == s->module);
	REQUIRE(!bpfrt_sym_lookup_in(s->module, "sym_late_call_static", &t), "%s",
		bpfrt_last_error());
	CHECK(bpfrt_sym_lookup_in(s->module, "sym_exe_global", &t) == -ENOENT,
	      "another module's function");

	dlclose(h);
	if (dlopen(SYM_LATE_LIB, RTLD_NOW | RTLD_NOLOAD)) {
		/* still loaded (someone else holds it) */
		fprintf(stderr, "# %s stayed loaded after dlclose: unload not checked\n",
			SYM_LATE_LIB);
		return;
	}
	CHECK(bpfrt_sym_lookup("sym_late_answer", &s) == -ENOENT, "an unloaded library answers");
	CHECK(bpfrt_sym_at((uintptr_t)answer, &s) == -ENOENT, "an unloaded library's address");
}

/* Lookups from several threads while the library comes and goes. */
static atomic_bool stop;
static atomic_long lookups, wrong;

static void *lookup_loop(void *arg)
{
	while (!atomic_load(&stop)) {
		const struct bpfrt_sym *s;

		if (bpfrt_sym_lookup("sym_exe_global", &s) || s->addr != (uintptr_t)sym_exe_global)
			atomic_fetch_add(&wrong, 1);
		if (bpfrt_sym_at((uintptr_t)sym_exe_global + 1, &s) ||
		    s->addr != (uintptr_t)sym_exe_global)
			atomic_fetch_add(&wrong, 1);
		if (!bpfrt_sym_lookup("sym_late_answer", &s) && !s->size)
			atomic_fetch_add(&wrong, 1);
		atomic_fetch_add(&lookups, 1);
	}
	return NULL;
}

TEST(lookups_race_with_dlopen_and_dlclose)
{
	const int cycles = TL_ASAN ? 20 : 60;
	pthread_t th[3];

	for (int i = 0; i < 3; i++)
		REQUIRE(!pthread_create(&th[i], NULL, lookup_loop, NULL));
	for (int i = 0; i < cycles; i++) {
		void *h = dlopen(SYM_LATE_LIB, RTLD_NOW | RTLD_LOCAL);

		CHECK(h, "dlopen: %s", dlerror());
		for (long seen = atomic_load(&lookups); atomic_load(&lookups) < seen + 3;)
			sched_yield();
		if (h)
			dlclose(h);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK(!atomic_load(&wrong), "%ld wrong answers of %ld", atomic_load(&wrong),
	      atomic_load(&lookups));
}
