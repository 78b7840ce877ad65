#include "testlib.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TL_MAX 512

static struct { const char *name; tl_fn fn; } tests[TL_MAX];
static int ntests;
static bool cur_failed;
static char skip_reason[256];

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
	cur_failed = true;
	fprintf(stdout, "#   %s:%d: %s", file, line, cond);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
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

void tl_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
}

bool tl_failed(void)
{
	return cur_failed;
}

/* Runs every test, or only those named on the command line. */
int main(int argc, char **argv)
{
	int failed = 0, n = 0;

	for (int i = 0; i < ntests; i++) {
		bool selected = argc < 2;

		for (int a = 1; a < argc; a++)
			if (!strcmp(argv[a], tests[i].name))
				selected = true;
		if (!selected)
			continue;
		cur_failed = false;
		skip_reason[0] = '\0';
		tests[i].fn();
		n++;
		if (cur_failed) {
			failed++;
			printf("not ok %d - %s\n", n, tests[i].name);
		} else if (skip_reason[0]) {
			printf("ok %d - %s # SKIP %s\n", n, tests[i].name, skip_reason);
		} else {
			printf("ok %d - %s\n", n, tests[i].name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
