/* The bpf_conformance suite in both engines, the negative files, and the
 * bpfrt-conformance plugin driven through its process protocol. */
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "isa/conformance.h"
#include "isa/datafile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Directory of the test binary (BUILD/tests). */
static const char *self_dir(void)
{
	static char dir[PATH_MAX];

	if (!dir[0]) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return ".";
		exe[n] = '\0';
		snprintf(dir, sizeof(dir), "%s", dirname(exe));
	}
	return dir;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* tests/conformance/SUB: relative to the working directory (the repo
 * root under make and tests/run.sh), else found from the binary's place
 * (BUILD/tests/ inside the repo). */
static const char *conf_dir(const char *sub, char *buf, size_t len)
{
	snprintf(buf, len, "tests/conformance/%s", sub);
	if (is_dir(buf))
		return buf;
	snprintf(buf, len, "%s/../../tests/conformance/%s", self_dir(), sub);
	return buf;
}

static const char *plugin_path(void)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	if (build && build[0])
		snprintf(path, sizeof(path), "%s/bpfrt-conformance", build);
	else
		snprintf(path, sizeof(path), "%s/../bpfrt-conformance", self_dir());
	return path;
}

static const char *mode_name(enum bpfrt_exec_mode mode)
{
	return mode == BPFRT_EXEC_JIT ? "jit" : mode == BPFRT_EXEC_CHECKED ? "checking interpreter"
							 : "interpreter";
}

/* Every file must pass; callx.data alone may be skipped (callx not yet in
 * the engines), and says so. */
static void run_suite(enum bpfrt_exec_mode mode, bool negative)
{
	char dir[PATH_MAX];
	struct bpfrt_conf_summary sum;
	int err = bpfrt_conf_run_dir(conf_dir(negative ? "negative" : "tests", dir, sizeof(dir)),
				     mode, negative, &sum);

	REQUIRE(err == 0, "%s: %s", dir, bpfrt_last_error());
	CHECK(sum.files >= (negative ? 50u : 300u), "only %zu files in %s", sum.files, dir);
	for (size_t i = 0; i < sum.files; i++) {
		const struct bpfrt_conf_result *r = &sum.results[i];

		if (r->status == BPFRT_CONF_FAIL)
			tl_fail(__FILE__, __LINE__, "[%s%s] %s: %s", mode_name(mode),
				negative ? ", negative" : "", r->name, r->reason);
		else if (r->status == BPFRT_CONF_SKIP && strcmp(r->name, "callx.data"))
			tl_fail(__FILE__, __LINE__, "[%s] %s skipped: %s", mode_name(mode),
				r->name, r->reason);
		else if (r->status == BPFRT_CONF_SKIP)
			printf("# [%s] %s skipped: %s\n", mode_name(mode), r->name, r->reason);
	}
	printf("# %s %s: %zu files, %zu passed, %zu failed, %zu skipped\n", mode_name(mode),
	       negative ? "negative" : "tests", sum.files, sum.passed, sum.failed, sum.skipped);
	bpfrt_conf_summary_free(&sum);
}

TEST(conformance_interpreter)
{
	run_suite(BPFRT_EXEC_INTERP, false);
}

TEST(conformance_jit)
{
	run_suite(BPFRT_EXEC_JIT, false);
}

/* The checking interpreter finds no violation in any of them (r1 = the
 * memory, r2 = its length: the region the checks allow besides the
 * stack) and computes the same results. */
TEST(conformance_checking_interpreter)
{
	run_suite(BPFRT_EXEC_CHECKED, false);
}

TEST(negative_interpreter)
{
	run_suite(BPFRT_EXEC_INTERP, true);
}

TEST(negative_jit)
{
	run_suite(BPFRT_EXEC_JIT, true);
}

/* ---- the runner's judgement itself ------------------------------------ */

static enum bpfrt_conf_status run_text(const char *name, const char *text, bool negative,
				       struct bpfrt_conf_result *res)
{
	char path[PATH_MAX];
	char dir[] = "/tmp/bpfrt-conf-XXXXXX";
	enum bpfrt_conf_status st;
	FILE *f;

	if (!mkdtemp(dir))
		return BPFRT_CONF_SKIP;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		rmdir(dir);
		return BPFRT_CONF_SKIP;
	}
	fputs(text, f);
	fclose(f);
	st = bpfrt_conf_run_file(path, BPFRT_EXEC_INTERP, negative, res);
	unlink(path);
	rmdir(dir);
	return st;
}

TEST(runner_judges_results)
{
	struct bpfrt_conf_result r;

	CHECK(run_text("ok.data", "-- asm\nmov %r0, 2\nexit\n-- result\n0x2\n", false, &r) ==
	      BPFRT_CONF_PASS, "%s", r.reason);
	CHECK(run_text("wrong.data", "-- asm\nmov %r0, 1\nexit\n-- result\n0x2\n", false, &r) ==
	      BPFRT_CONF_FAIL, "a wrong result must fail");
	CHECK(strstr(r.reason, "0x1") && strstr(r.reason, "0x2"), "reason: %s", r.reason);
	/* "-- error" on a program that loads: the test fails. */
	CHECK(run_text("err.data", "-- asm\nmov %r0, 1\nexit\n-- error\n", false, &r) ==
	      BPFRT_CONF_FAIL, "accepted error file must fail");
	CHECK(run_text("bad.data", "-- asm\nfoo %r0\nexit\n-- error\n", false, &r) ==
	      BPFRT_CONF_PASS, "%s", r.reason);
	/* Negative files: a matching result or an accepted program fails. */
	CHECK(run_text("incorrect_x.data", "-- asm\nmov %r0, 2\nexit\n-- result\n0x2\n", true,
		       &r) == BPFRT_CONF_FAIL, "negative with the right result must fail");
	CHECK(run_text("incorrect_y.data", "-- asm\nmov %r0, 3\nexit\n-- result\n0x2\n", true,
		       &r) == BPFRT_CONF_PASS, "%s", r.reason);
	CHECK(run_text("invalid_z.data", "-- asm\nmov %r0, 3\nexit\n-- result\n0x2\n", true,
		       &r) == BPFRT_CONF_FAIL, "negative that assembles and runs must fail");
}

TEST(runner_passes_memory)
{
	static const uint8_t mem[] = { 0x11, 0x22, 0x33, 0x44 };
	struct bpfrt_conf_result r;
	enum bpfrt_conf_stage stage;
	struct bpf_insn *insns;
	size_t cnt;
	uint64_t r0 = 0;

	/* r2 is the length, and the program writes its own copy. */
	REQUIRE(bpfrt_asm("mov %r0, %r2\nstxb [%r1], %r0\nldxb %r0, [%r1]\nexit\n", &insns,
			  &cnt) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_conf_exec(insns, cnt, mem, sizeof(mem), BPFRT_EXEC_INTERP, &r0, &stage) == 0,
	      "%s", bpfrt_last_error());
	CHECK(r0 == 4 && stage == BPFRT_CONF_STAGE_DONE, "r0 = 0x%" PRIx64, r0);
	CHECK(mem[0] == 0x11, "the caller's memory must not be written");
	free(insns);
	/* Without memory r1 and r2 are 0. */
	REQUIRE(bpfrt_asm("mov %r0, %r1\nor %r0, %r2\nexit\n", &insns, &cnt) == 0);
	CHECK(bpfrt_conf_exec(insns, cnt, NULL, 0, BPFRT_EXEC_INTERP, &r0, &stage) == 0);
	CHECK(r0 == 0, "r0 = 0x%" PRIx64, r0);
	free(insns);
	(void)r;
}

/* `bpfrt conformance` on a directory with one good and one bad file: the
 * table counts both, the failure is listed and the status is 1. */
TEST(cli_reports_failures)
{
	char dir[] = "/tmp/bpfrt-cli-XXXXXX", path[PATH_MAX], negdir[PATH_MAX];
	static const char *const files[][2] = {
		{ "good.data", "-- asm\nmov %r0, 7\nexit\n-- result\n0x7\n" },
		{ "incorrect_result.data", "-- asm\nmov %r0, 7\nexit\n-- result\n0x8\n" },
	};
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int status;

	REQUIRE(mkdtemp(dir));
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		FILE *f = fopen(path, "w");

		REQUIRE(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	snprintf(negdir, sizeof(negdir), "%s", dir);
	char *argv[] = { dir, "--interp", "--negative", negdir, NULL };

	out = open_memstream(&text, &len);
	REQUIRE(out);
	status = bpfrt_conf_cli(4, argv, out);
	fclose(out);
	CHECK(status == 1, "status %d", status);
	/* as tests: 2 files, 1 passed, 1 failed; as negatives the reverse */
	CHECK(strstr(text, "interpreter  tests          2       1       1        0"), "%s", text);
	CHECK(strstr(text, "interpreter  negative       2       1       1        0"), "%s", text);
	CHECK(strstr(text, "FAIL [interpreter] incorrect_result.data: r0 = 0x7, expected 0x8"), "%s", text);
	CHECK(strstr(text, "FAIL [interpreter, negative] good.data"), "%s", text);
	free(text);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	rmdir(dir);
}

/* ---- the plugin ---------------------------------------------------------- */

struct plugin_out {
	int status;        /* exit status, or 128 + signal */
	char out[512];     /* stdout */
	char err[512];     /* stderr */
};

static void read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t got;

	while (n + 1 < len && (got = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = '\0';
}

/* Runs the plugin with argv[1..] = args, stdin = input (through a file,
 * so any size works), capturing stdout and stderr. */
static int run_plugin(const char *const *args, const char *input, struct plugin_out *po)
{
	char in_path[] = "/tmp/bpfrt-plugin-in-XXXXXX";
	char out_path[] = "/tmp/bpfrt-plugin-out-XXXXXX";
	char err_path[] = "/tmp/bpfrt-plugin-err-XXXXXX";
	int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
	const char *argv[16] = { plugin_path() };
	int n = 1, wst;
	pid_t pid;

	if (in_fd < 0 || out_fd < 0 || err_fd < 0)
		return -errno;
	for (; args && args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	if (write(in_fd, input, strlen(input)) != (ssize_t)strlen(input))
		return -EIO;
	lseek(in_fd, 0, SEEK_SET);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(in_fd, 0);
		dup2(out_fd, 1);
		dup2(err_fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &wst, 0);
	po->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	lseek(out_fd, 0, SEEK_SET);
	lseek(err_fd, 0, SEEK_SET);
	read_all(out_fd, po->out, sizeof(po->out));
	read_all(err_fd, po->err, sizeof(po->err));
	close(in_fd);
	close(out_fd);
	close(err_fd);
	unlink(in_path);
	unlink(out_path);
	unlink(err_path);
	return 0;
}

/* Bytes as the runner sends them: two lowercase hex digits, two spaces. */
static char *to_hex(const uint8_t *b, size_t len)
{
	char *s = malloc(len * 4 + 1);

	for (size_t i = 0; i < len; i++)
		sprintf(s + i * 4, "%02x  ", b[i]);
	s[len * 4] = '\0';
	return s;
}

static bool one_line(const char *s)
{
	size_t len = strlen(s);

	return len > 1 && s[len - 1] == '\n' && !memchr(s, '\n', len - 1);
}

/* Feeds one suite file to the plugin in both modes and compares. */
static void plugin_check_file(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct bpfrt_datafile df;
	struct bpf_insn *insns;
	size_t cnt;

	snprintf(path, sizeof(path), "%s/%s", conf_dir("tests", dir, sizeof(dir)), name);
	REQUIRE(bpfrt_datafile_load(path, &df) == 0, "%s: %s", path, bpfrt_last_error());
	REQUIRE(df.asm_text && df.has_result, "%s", name);
	if (bpfrt_asm(df.asm_text, &insns, &cnt)) {
		tl_fail(__FILE__, __LINE__, "%s: %s", name, bpfrt_last_error());
		bpfrt_datafile_free(&df);
		return;
	}
	char *prog_hex = to_hex((const uint8_t *)insns, cnt * sizeof(*insns));
	char *mem_hex = df.mem_len ? to_hex(df.mem, df.mem_len) : NULL;
	static const char *const modes[] = { "--interpret", "--jit" };

	for (int m = 0; m < 2; m++) {
		/* Memory first, then the options string split on single
		 * spaces: empty arguments appear and must be ignored. */
		const char *args[5] = { 0 };
		int a = 0;
		struct plugin_out po;

		if (mem_hex)
			args[a++] = mem_hex;
		args[a++] = "";
		args[a++] = modes[m];
		if (run_plugin(args, prog_hex, &po)) {
			tl_fail(__FILE__, __LINE__, "cannot run %s", plugin_path());
			break;
		}
		char want[32];

		snprintf(want, sizeof(want), "%" PRIx64 "\n", df.result);
		CHECK(po.status == 0 && !strcmp(po.out, want),
		      "%s %s: exit %d, stdout '%s', stderr '%s', want '%s'", name, modes[m],
		      po.status, po.out, po.err, want);
	}
	free(prog_hex);
	free(mem_hex);
	free(insns);
	bpfrt_datafile_free(&df);
}

TEST(plugin_runs_suite_files)
{
	static const char *const files[] = {
		"add.data", "lddw2.data", "ldxdw.data", "stxb-all.data", "div64-by-zero-reg.data",
		"call_unwind_fail.data", "call_local.data", "lock_cmpxchg.data", "be64.data",
		"jit-bounce.data", "mem-len.data", "subnet.data",
	};

	REQUIRE(access(plugin_path(), X_OK) == 0, "no plugin at %s", plugin_path());
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		plugin_check_file(files[i]);
}

TEST(plugin_rejects_bad_input)
{
	/* or %r0, %r10 / exit is fine; an unknown opcode 0xff is not. */
	static const struct {
		const char *what, *arg, *input;
	} cases[] = {
		{ "unknown opcode", NULL, "ff  00  00  00  00  00  00  00  95  00  00  00  00  00  00  00" },
		{ "not hex", NULL, "zz  00" },
		{ "odd digit", NULL, "b7  0" },
		{ "long token", NULL, "b700  00" },
		{ "not 8 bytes", NULL, "95  00  00  00" },
		{ "empty", NULL, "" },
		{ "bad memory", "xyz", "95  00  00  00  00  00  00  00" },
		{ "bad option", "--frobnicate", "95  00  00  00  00  00  00  00" },
	};

	REQUIRE(access(plugin_path(), X_OK) == 0, "no plugin at %s", plugin_path());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[2] = { cases[i].arg, NULL };
		struct plugin_out po;

		REQUIRE(run_plugin(args, cases[i].input, &po) == 0);
		CHECK(po.status == 1 && po.out[0] == '\0' && one_line(po.err),
		      "%s: exit %d, stdout '%s', stderr '%s'", cases[i].what, po.status, po.out,
		      po.err);
	}
}

TEST(plugin_accepts_uppercase_and_newlines)
{
	/* mov r0, 0x2a; exit, spread over lines with upper-case digits. */
	const char *args[] = { "--jit", NULL };
	struct plugin_out po;

	REQUIRE(access(plugin_path(), X_OK) == 0, "no plugin at %s", plugin_path());
	REQUIRE(run_plugin(args, "B7  00  00  00  2A  00  00  00\n95 00 00 00 00 00 00 00\n",
			   &po) == 0);
	CHECK(po.status == 0 && !strcmp(po.out, "2a\n"), "exit %d, stdout '%s', stderr '%s'",
	      po.status, po.out, po.err);
}
