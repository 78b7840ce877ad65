#include "testlib.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define TL_MAX 512

static struct { const char *name; tl_fn fn; } tests[TL_MAX];
static int ntests;
static bool cur_failed;
static char skip_reason[256];
static char first_failure[256]; /* appended to the test's "not ok" line */
static const char *skip_all_reason;

bool tl_checked;

void tl_register(const char *name, tl_fn fn)
{
	if (ntests == TL_MAX) {
		fprintf(stderr, "testlib: too many tests\n");
		exit(2);
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

static void vfail(const char *file, int line, const char *cond, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!cur_failed) {
		/* one line: the first line of the message */
		size_t c = strlen(cond), m = strcspn(msg, "\n");

		c = c < sizeof(first_failure) - 1 ? c : sizeof(first_failure) - 1;
		m = m < sizeof(first_failure) - 1 - c ? m : sizeof(first_failure) - 1 - c;
		memcpy(first_failure, cond, c);
		memcpy(first_failure + c, msg, m);
		first_failure[c + m] = '\0';
		first_failure[strcspn(first_failure, "\n")] = '\0';
	}
	cur_failed = true;
	fprintf(stdout, "#   %s:%d: %s%s\n", file, line, cond, msg);
	fflush(stdout);
}

void tl_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(file, line, "", fmt, ap);
	va_end(ap);
}

void tl_check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(file, line, cond, fmt, ap);
	va_end(ap);
}

static void format_value(char *buf, size_t len, bool is_signed, unsigned long long v)
{
	if (is_signed)
		snprintf(buf, len, "%lld", (long long)v);
	else if (v > 0xffff)
		snprintf(buf, len, "%llu (%#llx)", v, v);
	else
		snprintf(buf, len, "%llu", v);
}

void tl_cmp_fail(const char *file, int line, const char *macro, const char *expr,
		 bool is_signed, unsigned long long got, unsigned long long want,
		 const char *fmt, ...)
{
	char head[512], g[64], w[64];
	const char *relation = !strcmp(macro + strlen(macro) - 2, "EQ") ? "want" :
			       !strcmp(macro + strlen(macro) - 2, "NE") ? "want not" :
			       !strcmp(macro + strlen(macro) - 2, "LT") ? "want <" :
			       !strcmp(macro + strlen(macro) - 2, "LE") ? "want <=" :
			       !strcmp(macro + strlen(macro) - 2, "GT") ? "want >" : "want >=";
	va_list ap;

	format_value(g, sizeof(g), is_signed, got);
	format_value(w, sizeof(w), is_signed, want);
	snprintf(head, sizeof(head), "%s(%s): got %s, %s %s%s", macro, expr, g, relation, w,
		 strcmp(fmt, " ") ? ";" : "");
	va_start(ap, fmt);
	vfail(file, line, head, strcmp(fmt, " ") ? fmt : "", ap);
	va_end(ap);
}

void tl_str_fail(const char *file, int line, const char *macro, const char *expr,
		 const char *got, const char *want, const char *fmt, ...)
{
	char head[1024];
	va_list ap;

	snprintf(head, sizeof(head), "%s(%s): got %s%s%s, want %s%s%s%s%s", macro, expr,
		 got ? "\"" : "", got ? got : "NULL", got ? "\"" : "",
		 strstr(macro, "NE") ? "not " : "",
		 want ? "\"" : "", want ? want : "NULL", want ? "\"" : "",
		 strcmp(fmt, " ") ? ";" : "");
	va_start(ap, fmt);
	vfail(file, line, head, strcmp(fmt, " ") ? fmt : "", ap);
	va_end(ap);
}

void tl_skip_all(const char *why)
{
	skip_all_reason = why;
}

void tl_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
}

const char *tl_test_path(const char *rel)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return rel;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), rel);
	return path;
}

const char *tl_prog_path(const char *name)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "progs/%s", name);
	return tl_test_path(rel);
}

int tl_run_self_with_env(const char *env, const char *value, const char *name, char *out,
			 size_t size)
{
	int pipefd[2], status = 0;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (!size || pipe(pipefd))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		setenv(env, value, 1);
		tl_exec_self(name);
		_exit(127);
	}
	close(pipefd[1]);
	while (len < size - 1 && (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

int tl_exit_code_in_child(int (*fn)(void), int *status)
{
	pid_t pid;

	*status = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, status, 0) != pid || !WIFEXITED(*status))
		return -1;
	return WEXITSTATUS(*status);
}

bool tl_child_passed(int status, const char *out, const char *name)
{
	char line[256];

	snprintf(line, sizeof(line), "ok 1 - %s\n", name);
	return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(out, line) &&
	       !strstr(out, "SKIP");
}

int tl_exec_self(const char *arg)
{
	const char *qemu = getenv("BPFRT_CROSS_QEMU");
	char buf[1024], exe[PATH_MAX], *args[20], *save;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int k = 0;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	if (qemu && *qemu) {
		if (strlen(qemu) >= sizeof(buf))
			return -E2BIG;
		strcpy(buf, qemu);
		for (char *tok = strtok_r(buf, " ", &save); tok && k < 16;
		     tok = strtok_r(NULL, " ", &save))
			args[k++] = tok;
	}
	args[k++] = exe;
	args[k++] = (char *)arg;
	args[k] = NULL;
	execvp(args[0], args);
	return -errno;
}

bool tl_failed(void)
{
	return cur_failed;
}

bool tl_memory_writable(void *p)
{
	int fds[2];
	ssize_t n;

	if (pipe(fds))
		return true;
	n = write(fds[1], p, 1) == 1 ? read(fds[0], p, 1) : -1;
	close(fds[0]);
	close(fds[1]);
	return n == 1;
}

int tl_count_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int tl_threads_one_by_one(int n, void *(*fn)(void *), void *arg)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		pthread_t t;
		void *ret;

		if (pthread_create(&t, NULL, fn, arg))
			return -1;
		pthread_join(t, &ret);
		bad += ret != NULL;
	}
	return bad;
}

/* Fails the running test for every writable+executable mapping of the
 * process. JIT code must be W^X, so every test ends with this
 * scan of /proc/self/maps (some microseconds), and so does the binary
 * (no_wx_mapping). */
static void check_no_wx_mapping(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool line_start = true;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		bool whole = strchr(line, '\n') != NULL;

		/* the tail of an overlong line is not a mapping of its own */
		if (line_start && sscanf(line, "%*x-%*x %7s", perms) == 1 &&
		    perms[1] == 'w' && perms[2] == 'x') {
			line[strcspn(line, "\n")] = '\0';
			tl_fail(__FILE__, __LINE__, "writable+executable mapping: %s", line);
		}
		line_start = whole;
	}
	fclose(f);
}

/* BPFRT_TESTLIB_MAP_WX=1 maps one writable+executable page before the
 * tests, so that tests/test_cli_execmem.sh can show the scan failing. */
static void map_wx_page_if_asked(void)
{
	const char *env = getenv("BPFRT_TESTLIB_MAP_WX");

	if (env && !strcmp(env, "1") &&
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0) == MAP_FAILED)
		fprintf(stderr, "testlib: cannot map a w+x page\n");
}

/* Runs every test, or only those named on the command line. */
int main(int argc, char **argv)
{
	int failed = 0, n = 0;

	if (skip_all_reason) {
		printf("1..0 # SKIP %s\n", skip_all_reason);
		return 0;
	}
	map_wx_page_if_asked();
	for (int i = 0; i < ntests; i++) {
		bool selected = argc < 2;

		for (int a = 1; a < argc; a++)
			if (!strcmp(argv[a], tests[i].name))
				selected = true;
		if (!selected)
			continue;
		cur_failed = false;
		skip_reason[0] = '\0';
		first_failure[0] = '\0';
		tests[i].fn();
		check_no_wx_mapping();
		n++;
		if (cur_failed) {
			failed++;
			printf("not ok %d - %s: %s\n", n, tests[i].name, first_failure);
		} else if (skip_reason[0]) {
			printf("ok %d - %s # SKIP %s\n", n, tests[i].name, skip_reason);
		} else {
			printf("ok %d - %s\n", n, tests[i].name);
		}
		fflush(stdout);
	}
	/* Once more after all tests: a mapping left by some destructor-free
	 * path, or one that a skipped test's setup made, still counts. */
	cur_failed = false;
	check_no_wx_mapping();
	n++;
	if (cur_failed)
		failed++;
	printf("%s %d - no_wx_mapping\n", cur_failed ? "not ok" : "ok", n);
	/* the plan last: a binary that dies half-way has none */
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
