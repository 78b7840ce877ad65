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
/* REL from the test binary's directory (BUILD/tests/), e.g. "../bpfrt";
 * like tl_prog_path, in a buffer the next call reuses. */
const char *tl_test_path(const char *rel);
/* True once the running test has failed (to stop early inside loops). */
bool tl_failed(void);
/* Whether the byte at p can be written, found out without faulting (the
 * kernel writes the same byte back, or fails with EFAULT). */
bool tl_memory_writable(void *p);
/* Lines of /proc/self/maps (mappings left behind), -1 if unreadable. */
int tl_count_mappings(void);
/* Runs fn(arg) in n threads, each joined before the next starts; returns
 * how many returned non-NULL, or -1 when a thread could not be created. */
int tl_threads_one_by_one(int n, void *(*fn)(void *), void *arg);

/* 1 in AddressSanitizer builds (fewer threads, larger frames). */
#if defined(__SANITIZE_ADDRESS__)
#define TL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_ASAN 1
#endif
#endif
#ifndef TL_ASAN
#define TL_ASAN 0
#endif

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

/* CHECK inside a helper, reported at the helper's caller. */
#define CHECK_AT(file, line, cond, ...)                                    \
	do {                                                               \
		if (!(cond))                                               \
			tl_check_fail(file, line, "CHECK(" #cond ")", " " __VA_ARGS__); \
	} while (0)

/* A case body taking the engine, run by two TESTs: name_interp, name_jit. */
#define BOTH_ENGINES(name)                                                 \
	static void name(bool jit);                                        \
	TEST(name##_interp) { name(false); }                               \
	TEST(name##_jit) { name(true); }                                   \
	static void name(bool jit)

/* BOTH_ENGINES and a third TEST, name_checked, for the checking
 * interpreter: its body sees jit = false with tl_checked set (pick the
 * mode with tl_exec_mode(jit)). */
extern bool tl_checked;
#define ALL_ENGINES(name)                                                  \
	static void name(bool jit);                                        \
	TEST(name##_interp) { name(false); }                               \
	TEST(name##_jit) { name(true); }                                   \
	TEST(name##_checked) { tl_checked = true; name(false); tl_checked = false; } \
	static void name(bool jit)
/* enum bpfrt_exec_mode: JIT, else the checking interpreter under
 * ALL_ENGINES' name_checked, else the interpreter. */
#define tl_exec_mode(jit) ((jit) ? BPFRT_EXEC_JIT : tl_checked ? BPFRT_EXEC_CHECKED \
							: BPFRT_EXEC_INTERP)

#define SKIP(...) do { tl_skip(__VA_ARGS__); return; } while (0)

#endif
