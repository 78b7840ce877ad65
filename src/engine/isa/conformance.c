/* bpf_conformance runner: see conformance.h for the rules a file is judged
 * by and ../shared/conformance/README.md for the contract it assumes. */
#include "isa/conformance.h"
#include "isa/datafile.h"
#include "isa/isa.h"
#include "core/error.h"
#include "core/exec.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static uint64_t conf_helper_return_r1(uint64_t r1, uint64_t r2, uint64_t r3,
				      uint64_t r4, uint64_t r5)
{
	return r1;
}

int bpfrt_conf_register_helpers(void)
{
	static const struct bpfrt_helper helper = {
		.name = "conformance_return_r1",
		.fn = conf_helper_return_r1,
		.ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_ANYTHING },
	};

	return bpfrt_helper_register(BPFRT_CONF_HELPER_ID, &helper);
}

int bpfrt_conf_exec(const struct bpf_insn *insns, size_t insn_cnt,
		    const uint8_t *mem, size_t mem_len, enum bpfrt_exec_mode mode,
		    uint64_t *r0, enum bpfrt_conf_stage *stage)
{
	struct bpfrt_prog_load_opts opts = {
		.sz = sizeof(opts),
		.name = "conformance",
		.jit = mode == BPFRT_EXEC_JIT,
	};
	struct bpfrt_prog *prog;
	uint8_t *buf = NULL;
	int err;

	*stage = BPFRT_CONF_STAGE_LOAD;
	err = bpfrt_prog_load(insns, insn_cnt, &opts, &prog);
	if (err)
		return err;
	/* An exact-size heap copy: the program may write it, and ASan sees
	 * any access past its end. */
	if (mem_len) {
		buf = malloc(mem_len);
		if (!buf) {
			bpfrt_prog_free(prog);
			return bpfrt_err(-ENOMEM, "conformance: out of memory");
		}
		memcpy(buf, mem, mem_len);
	}
	*stage = BPFRT_CONF_STAGE_RUN;
	err = bpfrt_prog_exec(prog, mode, (uint64_t)(uintptr_t)buf, mem_len, r0);
	if (!err)
		*stage = BPFRT_CONF_STAGE_DONE;
	free(buf);
	bpfrt_prog_free(prog);
	return err;
}

static enum bpfrt_conf_status conf_set(struct bpfrt_conf_result *res,
				       enum bpfrt_conf_status status,
				       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum bpfrt_conf_status conf_set(struct bpfrt_conf_result *res,
				       enum bpfrt_conf_status status,
				       const char *fmt, ...)
{
	char msg[sizeof(res->reason)];
	va_list ap;

	/* Formats into a copy: the arguments often include res->reason. */
	res->status = status;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(res->reason, msg, sizeof(msg));
	return status;
}

static const char *conf_stage_name(enum bpfrt_conf_stage stage)
{
	switch (stage) {
	case BPFRT_CONF_STAGE_PARSE: return "parse";
	case BPFRT_CONF_STAGE_ASM:   return "assemble";
	case BPFRT_CONF_STAGE_LOAD:  return "load";
	case BPFRT_CONF_STAGE_RUN:   return "run";
	default:                     return "done";
	}
}

static const char *conf_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Gets the program of a parsed file: the assembly when there is one (a
 * few files carry both, and the text is the authoritative form), else the
 * raw bytes. */
static int conf_program(const struct bpfrt_datafile *df, struct bpf_insn **insns,
			size_t *cnt, enum bpfrt_conf_stage *stage)
{
	*stage = BPFRT_CONF_STAGE_ASM;
	if (df->asm_text)
		return bpfrt_asm(df->asm_text, insns, cnt);
	if (!df->raw) {
		*stage = BPFRT_CONF_STAGE_PARSE;
		return bpfrt_err(-EINVAL, "no -- asm or -- raw section");
	}
	if (df->raw_len % sizeof(struct bpf_insn))
		return bpfrt_err(-EINVAL, "-- raw has %zu bytes, not a multiple of 8",
				 df->raw_len);
	*cnt = df->raw_len / sizeof(struct bpf_insn);
	*insns = malloc(df->raw_len ? df->raw_len : 1);
	if (!*insns)
		return bpfrt_err(-ENOMEM, "out of memory");
	memcpy(*insns, df->raw, df->raw_len);
	return 0;
}

static bool conf_uses_callx(const struct bpf_insn *insns, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		if (insn_is_callx(&insns[i]))
			return true;
	return false;
}

/* Parses, assembles, loads and runs; res->stage says how far it got and
 * res->reason holds the message of the step that failed. */
static void conf_attempt(const char *path, enum bpfrt_exec_mode mode,
			 struct bpfrt_datafile *df, bool *uses_callx,
			 struct bpfrt_conf_result *res)
{
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;
	int err;

	*uses_callx = false;
	memset(df, 0, sizeof(*df));
	res->stage = BPFRT_CONF_STAGE_PARSE;
	err = bpfrt_datafile_load(path, df);
	if (!err)
		err = conf_program(df, &insns, &cnt, &res->stage);
	if (!err) {
		*uses_callx = conf_uses_callx(insns, cnt);
		err = bpfrt_conf_exec(insns, cnt, df->mem, df->mem_len, mode,
				      &res->r0, &res->stage);
	}
	if (err)
		snprintf(res->reason, sizeof(res->reason), "%s: %s",
			 conf_stage_name(res->stage), bpfrt_last_error());
	free(insns);
}

static bool conf_rejected_early(enum bpfrt_conf_stage stage)
{
	return stage <= BPFRT_CONF_STAGE_LOAD;
}

/* A file of tests/: result must match, "-- error" must be rejected. */
static enum bpfrt_conf_status conf_judge_normal(const struct bpfrt_datafile *df,
						bool uses_callx,
						struct bpfrt_conf_result *res)
{
	if (df->expect_error) {
		if (conf_rejected_early(res->stage))
			return conf_set(res, BPFRT_CONF_PASS, "rejected (%s)", res->reason);
		if (res->stage == BPFRT_CONF_STAGE_RUN)
			return conf_set(res, BPFRT_CONF_FAIL,
					"expected rejection at load, but the run aborted: %s",
					res->reason);
		return conf_set(res, BPFRT_CONF_FAIL,
				"expected rejection, but it ran and returned 0x%" PRIx64,
				res->r0);
	}
	if (res->stage != BPFRT_CONF_STAGE_DONE) {
		if (uses_callx && res->stage == BPFRT_CONF_STAGE_LOAD)
			return conf_set(res, BPFRT_CONF_SKIP, "callx not supported: %s",
					res->reason);
		return conf_set(res, BPFRT_CONF_FAIL, "%s", res->reason);
	}
	if (!df->has_result)
		return conf_set(res, BPFRT_CONF_FAIL, "no -- result or -- error section");
	if (res->r0 != df->result)
		return conf_set(res, BPFRT_CONF_FAIL,
				"r0 = 0x%" PRIx64 ", expected 0x%" PRIx64,
				res->r0, df->result);
	return conf_set(res, BPFRT_CONF_PASS, "r0 = 0x%" PRIx64, res->r0);
}

/* A file of negative/: "incorrect_*" must run to a different result, all
 * others must be rejected before they run. */
static enum bpfrt_conf_status conf_judge_negative(const struct bpfrt_datafile *df,
						  struct bpfrt_conf_result *res)
{
	if (!strncmp(res->name, "incorrect_", 10)) {
		if (res->stage != BPFRT_CONF_STAGE_DONE)
			return conf_set(res, BPFRT_CONF_FAIL,
					"expected to run to a wrong result, but %s",
					res->reason);
		if (!df->has_result)
			return conf_set(res, BPFRT_CONF_FAIL, "no -- result section");
		if (res->r0 == df->result)
			return conf_set(res, BPFRT_CONF_FAIL,
					"r0 = 0x%" PRIx64 " matches the wrong result", res->r0);
		return conf_set(res, BPFRT_CONF_PASS,
				"r0 = 0x%" PRIx64 " differs from 0x%" PRIx64,
				res->r0, df->result);
	}
	if (conf_rejected_early(res->stage))
		return conf_set(res, BPFRT_CONF_PASS, "rejected (%s)", res->reason);
	if (res->stage == BPFRT_CONF_STAGE_RUN)
		return conf_set(res, BPFRT_CONF_FAIL,
				"expected rejection before running, but the run aborted: %s",
				res->reason);
	return conf_set(res, BPFRT_CONF_FAIL,
			"expected rejection, but it ran and returned 0x%" PRIx64, res->r0);
}

enum bpfrt_conf_status bpfrt_conf_run_file(const char *path, enum bpfrt_exec_mode mode,
					   bool negative, struct bpfrt_conf_result *res)
{
	struct bpfrt_datafile df;
	bool uses_callx;
	enum bpfrt_conf_status status;

	memset(res, 0, sizeof(*res));
	snprintf(res->name, sizeof(res->name), "%s", conf_base_name(path));
	if (bpfrt_conf_register_helpers())
		return conf_set(res, BPFRT_CONF_FAIL, "helper registration: %s",
				bpfrt_last_error());
	conf_attempt(path, mode, &df, &uses_callx, res);
	status = negative ? conf_judge_negative(&df, res)
			  : conf_judge_normal(&df, uses_callx, res);
	bpfrt_datafile_free(&df);
	return status;
}

static bool conf_is_data_file(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && name[0] != '.' && !strcmp(name + len - 5, ".data");
}

static int conf_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the *.data files of dir, or NULL with *err set. */
static char **conf_list_dir(const char *dir, size_t *cnt, int *err)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	*cnt = 0;
	if (!d) {
		*err = bpfrt_err(-errno, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		if (!conf_is_data_file(de->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!nn)
				goto oom;
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), conf_cmp_names);
	*cnt = n;
	*err = 0;
	return names ? names : calloc(1, sizeof(*names));
oom:
	closedir(d);
	while (n)
		free(names[--n]);
	free(names);
	*err = bpfrt_err(-ENOMEM, "%s: out of memory", dir);
	return NULL;
}

int bpfrt_conf_run_dir(const char *dir, enum bpfrt_exec_mode mode, bool negative,
		       struct bpfrt_conf_summary *sum)
{
	size_t cnt;
	int err;
	char **names = conf_list_dir(dir, &cnt, &err);

	memset(sum, 0, sizeof(*sum));
	sum->mode = mode;
	sum->negative = negative;
	if (!names)
		return err;
	sum->results = calloc(cnt ? cnt : 1, sizeof(*sum->results));
	if (!sum->results) {
		err = bpfrt_err(-ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	for (size_t i = 0; i < cnt; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);

		if (!path) {
			err = bpfrt_err(-ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		snprintf(path, len, "%s/%s", dir, names[i]);
		switch (bpfrt_conf_run_file(path, mode, negative, &sum->results[i])) {
		case BPFRT_CONF_PASS: sum->passed++; break;
		case BPFRT_CONF_FAIL: sum->failed++; break;
		case BPFRT_CONF_SKIP: sum->skipped++; break;
		}
		sum->files++;
		free(path);
	}
out:
	for (size_t i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
	return err;
}

void bpfrt_conf_summary_free(struct bpfrt_conf_summary *sum)
{
	free(sum->results);
	sum->results = NULL;
}

/* ---- `bpfrt conformance` ---------------------------------------------- */

#define CONF_DEFAULT_DIR "tests/conformance/tests"
#define CONF_DEFAULT_NEGATIVE_DIR "tests/conformance/negative"

static const char *conf_mode_name(enum bpfrt_exec_mode mode)
{
	return mode == BPFRT_EXEC_JIT ? "jit" : "interpreter";
}

static void conf_print_row(FILE *out, const struct bpfrt_conf_summary *sum)
{
	fprintf(out, "%-12s %-9s %6zu %7zu %7zu %8zu\n", conf_mode_name(sum->mode),
		sum->negative ? "negative" : "tests", sum->files, sum->passed,
		sum->failed, sum->skipped);
}

static void conf_print_details(FILE *out, const struct bpfrt_conf_summary *sum)
{
	for (size_t i = 0; i < sum->files; i++) {
		const struct bpfrt_conf_result *r = &sum->results[i];

		if (r->status == BPFRT_CONF_PASS)
			continue;
		fprintf(out, "  %s [%s%s] %s: %s\n",
			r->status == BPFRT_CONF_FAIL ? "FAIL" : "SKIP",
			conf_mode_name(sum->mode), sum->negative ? ", negative" : "",
			r->name, r->reason);
	}
}

static int conf_cli_usage(FILE *err)
{
	fprintf(err, "usage: bpfrt conformance [DIR] [--interp|--jit|--both] [--negative DIR]\n"
		"  DIR defaults to " CONF_DEFAULT_DIR ", --negative to "
		CONF_DEFAULT_NEGATIVE_DIR "\n");
	return 2;
}

int bpfrt_conf_cli(int argc, char **argv, FILE *out)
{
	const char *dir = NULL, *neg_dir = CONF_DEFAULT_NEGATIVE_DIR;
	bool want_interp = true, want_jit = true;
	struct bpfrt_conf_summary sums[4];
	size_t nsums = 0;
	bool any_fail = false;
	int status = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--interp")) {
			want_interp = true;
			want_jit = false;
		} else if (!strcmp(argv[i], "--jit")) {
			want_interp = false;
			want_jit = true;
		} else if (!strcmp(argv[i], "--both")) {
			want_interp = want_jit = true;
		} else if (!strcmp(argv[i], "--negative") && i + 1 < argc) {
			neg_dir = argv[++i];
		} else if (argv[i][0] == '-' || dir) {
			return conf_cli_usage(stderr);
		} else {
			dir = argv[i];
		}
	}
	if (!dir)
		dir = CONF_DEFAULT_DIR;

	for (int m = 0; m < 2; m++) {
		enum bpfrt_exec_mode mode = m ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;

		if (!(m ? want_jit : want_interp))
			continue;
		for (int neg = 0; neg < 2; neg++) {
			const char *d = neg ? neg_dir : dir;

			if (bpfrt_conf_run_dir(d, mode, neg, &sums[nsums])) {
				fprintf(stderr, "bpfrt: conformance: %s\n", bpfrt_last_error());
				bpfrt_conf_summary_free(&sums[nsums]);
				status = 2;
				goto out;
			}
			any_fail |= sums[nsums].failed != 0;
			nsums++;
		}
	}

	fprintf(out, "conformance: %s, negative: %s\n", dir, neg_dir);
	fprintf(out, "%-12s %-9s %6s %7s %7s %8s\n", "mode", "set", "files", "passed",
		"failed", "skipped");
	struct bpfrt_conf_summary total = { 0 };

	for (size_t i = 0; i < nsums; i++) {
		conf_print_row(out, &sums[i]);
		total.files += sums[i].files;
		total.passed += sums[i].passed;
		total.failed += sums[i].failed;
		total.skipped += sums[i].skipped;
	}
	fprintf(out, "%-12s %-9s %6zu %7zu %7zu %8zu\n", "total", "", total.files,
		total.passed, total.failed, total.skipped);
	for (size_t i = 0; i < nsums; i++)
		conf_print_details(out, &sums[i]);
	status = any_fail ? 1 : 0;
out:
	for (size_t i = 0; i < nsums; i++)
		bpfrt_conf_summary_free(&sums[i]);
	return status;
}
