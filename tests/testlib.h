/* Minimal test framework: TEST(name) { CHECK(...); } registers a test;
 * each binary prints TAP-like lines ("ok N - name", "not ok N - name",
 * "ok N - name # SKIP why") that tests/run.sh counts. */
#ifndef BPFRT_TESTLIB_H
#define BPFRT_TESTLIB_H

#include <stdbool.h>
#include <stdio.h>

typedef void (*tl_fn)(void);
void tl_register(const char *name, tl_fn fn);
void tl_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* CHECK/REQUIRE failures: the condition text is not a format string. */
void tl_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void tl_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Path of a BPF object built from tests/progs/NAME.bpf.c: test binaries
 * live in BUILD/tests/, the objects in BUILD/tests/progs/. */
const char *tl_prog_path(const char *name);
/* True once the running test has failed (to stop early inside loops). */
bool tl_failed(void);

#define TEST(name)                                                         \
	static void name(void);                                            \
	__attribute__((constructor)) static void tl_reg_##name(void)       \
	{ tl_register(#name, name); }                                      \
	static void name(void)

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond))                                               \
			tl_check_fail(__FILE__, __LINE__, "CHECK(" #cond ")", " " __VA_ARGS__); \
	} while (0)

/* Like CHECK but returns from the test on failure. */
#define REQUIRE(cond, ...)                                                 \
	do {                                                               \
		if (!(cond)) {                                             \
			tl_check_fail(__FILE__, __LINE__, "REQUIRE(" #cond ")", " " __VA_ARGS__); \
			return;                                            \
		}                                                          \
	} while (0)

#define SKIP(...) do { tl_skip(__VA_ARGS__); return; } while (0)

#endif
