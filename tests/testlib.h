/* Minimal test framework: TEST(name) { CHECK(...); } registers a test;
 * each binary prints TAP: "ok N - name", "not ok N - name: first failure",
 * "ok N - name # SKIP why", and the plan "1..N" last (or "1..0 # SKIP why"
 * for a binary that does not apply here, TL_SKIP_ALL). tests/run.sh fails a
 * binary whose lines do not add up to its plan (it died half-way). */
#ifndef BPFRT_TESTLIB_H
#define BPFRT_TESTLIB_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef void (*tl_fn)(void);
void tl_register(const char *name, tl_fn fn);
void tl_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* CHECK/REQUIRE failures: the condition text is not a format string. */
void tl_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* CHECK_EQ and friends: both sides' values (as integers of the compared
 * type's signedness) and the expression. */
void tl_cmp_fail(const char *file, int line, const char *macro, const char *expr,
		 bool is_signed, unsigned long long got, unsigned long long want,
		 const char *fmt, ...) __attribute__((format(printf, 8, 9)));
void tl_str_fail(const char *file, int line, const char *macro, const char *expr,
		 const char *got, const char *want, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
void tl_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The whole binary does not apply to this build (architecture, ...): it
 * runs no test and prints only "1..0 # SKIP why". */
void tl_skip_all(const char *why);
/* Path of a BPF object built from tests/progs/NAME.bpf.c: test binaries
 * live in BUILD/tests/, the objects in BUILD/tests/progs/. */
const char *tl_prog_path(const char *name);
/* REL from the test binary's directory (BUILD/tests/), e.g. "../bpfrt";
 * like tl_prog_path, in a buffer the next call reuses. */
const char *tl_test_path(const char *rel);
/* Replaces the process with this test binary run with the one argument
 * (a test name): through the emulator in BPFRT_CROSS_QEMU when set
 * (tests/run-qemu.sh: qemu-user without binfmt_misc cannot exec a
 * foreign binary itself). Returns only on failure, -errno. */
int tl_exec_self(const char *arg);
/* Runs test `name` of this binary in a child with env=value set (through
 * tl_exec_self), its stdout and stderr read into out (NUL-terminated,
 * cut to size). Returns the child's wait status, or -1 if it could not
 * be started. */
int tl_run_self_with_env(const char *env, const char *value, const char *name, char *out,
			 size_t size);
/* Runs fn in a forked child that exits with its return value; returns
 * that exit code, or -1 (with *status the wait status) if the child did
 * not exit normally or could not be started. */
int tl_exit_code_in_child(int (*fn)(void), int *status);
/* Whether a tl_run_self_with_env child ran `name` and passed it, not skipped. */
bool tl_child_passed(int status, const char *out, const char *name);
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

/* At file scope: TL_SKIP_ALL("fentry trampolines are x86-64 only"). */
#define TL_SKIP_ALL(why)                                                   \
	__attribute__((constructor)) static void tl_skip_all_here(void)    \
	{ tl_skip_all(why); }

/* CHECK_EQ(got, want[, fmt, ...]): on failure prints
 * "file:line: CHECK_EQ(r0, 7): got 3, want 7". Integer (and enum, bool)
 * operands, each evaluated once and compared in their common type, as ==
 * would; CHECK_NE, _LT, _LE, _GT, _GE alike; REQUIRE_* return from the
 * test. CHECK_STR_EQ for strings (NULL allowed). */
#define TL_CMP(macro, op, a, b, on_fail, ...)                              \
	do {                                                               \
		__typeof__((a) + (b)) tl_got_ = (a), tl_want_ = (b);       \
		if (!(tl_got_ op tl_want_)) {                              \
			tl_cmp_fail(__FILE__, __LINE__, macro, #a ", " #b, \
				    !((__typeof__(tl_got_))-1 > (__typeof__(tl_got_))0), \
				    (unsigned long long)tl_got_,           \
				    (unsigned long long)tl_want_, " " __VA_ARGS__); \
			on_fail;                                           \
		}                                                          \
	} while (0)
#define CHECK_EQ(a, b, ...) TL_CMP("CHECK_EQ", ==, a, b, (void)0, __VA_ARGS__)
#define CHECK_NE(a, b, ...) TL_CMP("CHECK_NE", !=, a, b, (void)0, __VA_ARGS__)
#define CHECK_LT(a, b, ...) TL_CMP("CHECK_LT", <, a, b, (void)0, __VA_ARGS__)
#define CHECK_LE(a, b, ...) TL_CMP("CHECK_LE", <=, a, b, (void)0, __VA_ARGS__)
#define CHECK_GT(a, b, ...) TL_CMP("CHECK_GT", >, a, b, (void)0, __VA_ARGS__)
#define CHECK_GE(a, b, ...) TL_CMP("CHECK_GE", >=, a, b, (void)0, __VA_ARGS__)
#define REQUIRE_EQ(a, b, ...) TL_CMP("REQUIRE_EQ", ==, a, b, return, __VA_ARGS__)
#define REQUIRE_NE(a, b, ...) TL_CMP("REQUIRE_NE", !=, a, b, return, __VA_ARGS__)

#define TL_STRCMP(macro, equal, a, b, on_fail, ...)                        \
	do {                                                               \
		const char *tl_got_ = (a), *tl_want_ = (b);                \
		bool tl_same_ = tl_got_ && tl_want_ ? !strcmp(tl_got_, tl_want_) \
						     : tl_got_ == tl_want_; \
		if (tl_same_ != (equal)) {                                 \
			tl_str_fail(__FILE__, __LINE__, macro, #a ", " #b, \
				    tl_got_, tl_want_, " " __VA_ARGS__);   \
			on_fail;                                           \
		}                                                          \
	} while (0)
#define CHECK_STR_EQ(a, b, ...) TL_STRCMP("CHECK_STR_EQ", true, a, b, (void)0, __VA_ARGS__)
#define CHECK_STR_NE(a, b, ...) TL_STRCMP("CHECK_STR_NE", false, a, b, (void)0, __VA_ARGS__)
#define REQUIRE_STR_EQ(a, b, ...) TL_STRCMP("REQUIRE_STR_EQ", true, a, b, return, __VA_ARGS__)

#endif
