/* bpfrt-conformance: the plugin the bpf_conformance runner starts once per
 * test (protocol in tests/conformance/README.md):
 *
 *   bpfrt-conformance [MEMORY_HEX] [--jit|--interpret] < PROGRAM_HEX
 *
 * The program arrives on stdin as hex bytes ("b7  00  ..."), the memory as
 * one argument in the same encoding. Prints r0 in hex and exits 0, or
 * prints one line on stderr saying what was wrong and exits 1. It must never hang
 * (the runner has no timeout), so a watchdog ends runaway programs. */
#include "bpfrt/bpfrt.h"
#include "isa/conformance.h"

#include <ctype.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seconds before a run is cut off; BPFRT_CONFORMANCE_TIMEOUT overrides. */
#define PLUGIN_TIMEOUT_SEC 30
/* More hex digits than this on stdin cannot be a loadable program. */
#define PLUGIN_MAX_PROG_BYTES ((size_t)BPFRT_MAX_INSNS * 8)

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("bpfrt-conformance: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void on_timeout(int sig)
{
	static const char msg[] = "bpfrt-conformance: timed out (the program does not end)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Byte buffer that grows as hex tokens are parsed. */
struct bytes {
	uint8_t *data;
	size_t len, cap;
};

static void bytes_push(struct bytes *b, uint8_t v, const char *what, size_t limit)
{
	if (b->len >= limit)
		fail("%s: more than %zu bytes (%zu instructions), over the limit", what,
		     limit, limit / 8);
	if (b->len == b->cap) {
		uint8_t *nd = realloc(b->data, b->cap = b->cap ? b->cap * 2 : 256);

		if (!nd)
			fail("%s: out of memory", what);
		b->data = nd;
	}
	b->data[b->len++] = v;
}

/* Feeds one character of whitespace-separated two-digit hex tokens;
 * c == EOF ends the input. *pending holds a half-read token. */
static void hex_feed(struct bytes *b, int c, int *pending, size_t *pos,
		     const char *what, size_t limit)
{
	int d;

	if (c == EOF || isspace(c)) {
		if (*pending >= 0 && *pending < 16)
			fail("%s: odd hex digit at offset %zu", what, *pos);
		*pending = -1;
	} else if ((d = hex_digit(c)) < 0) {
		fail("%s: '%c' at offset %zu is not a hex digit", what,
		     isprint(c) ? c : '?', *pos);
	} else if (*pending < 0) {
		*pending = d;
	} else if (*pending < 16) {
		bytes_push(b, (uint8_t)(*pending << 4 | d), what, limit);
		*pending = 16; /* token complete: only whitespace may follow */
	} else {
		fail("%s: hex token longer than two digits at offset %zu", what, *pos);
	}
	(*pos)++;
}

static void parse_hex_arg(const char *s, struct bytes *b)
{
	int pending = -1;
	size_t pos = 0;

	for (; *s; s++)
		hex_feed(b, (unsigned char)*s, &pending, &pos, "memory", SIZE_MAX / 2);
	hex_feed(b, EOF, &pending, &pos, "memory", SIZE_MAX / 2);
}

static void read_program(struct bytes *b)
{
	int pending = -1, c;
	size_t pos = 0;

	/* unlocked: one thread, and up to 8M characters (slow under qemu-user) */
	while ((c = getchar_unlocked()) != EOF)
		hex_feed(b, c, &pending, &pos, "program", PLUGIN_MAX_PROG_BYTES);
	if (ferror(stdin))
		fail("program: error reading stdin");
	hex_feed(b, EOF, &pending, &pos, "program", PLUGIN_MAX_PROG_BYTES);
	if (b->len == 0)
		fail("program: no instructions on stdin");
	if (b->len % 8)
		fail("program: %zu bytes is not a multiple of 8", b->len);
}

static unsigned plugin_timeout(void)
{
	const char *env = getenv("BPFRT_CONFORMANCE_TIMEOUT");
	unsigned long v = env ? strtoul(env, NULL, 10) : 0;

	return v >= 1 && v <= 3600 ? (unsigned)v : PLUGIN_TIMEOUT_SEC;
}

int main(int argc, char **argv)
{
	enum bpfrt_exec_mode mode = BPFRT_EXEC_INTERP;
	struct bytes mem = { 0 }, prog = { 0 };
	bool have_mem = false;
	enum bpfrt_conf_stage stage;
	struct bpf_insn *insns;
	uint64_t r0;
	int err;

	signal(SIGALRM, on_timeout);
	alarm(plugin_timeout());

	for (int i = 1; i < argc; i++) {
		if (!argv[i][0])
			continue;
		if (!strcmp(argv[i], "--jit"))
			mode = BPFRT_EXEC_JIT;
		else if (!strcmp(argv[i], "--interpret") || !strcmp(argv[i], "--interp"))
			mode = BPFRT_EXEC_INTERP;
		else if (argv[i][0] == '-')
			fail("unknown option '%s' (have --jit, --interpret)", argv[i]);
		else if (have_mem)
			fail("unexpected argument '%s' (memory already given)", argv[i]);
		else {
			parse_hex_arg(argv[i], &mem);
			have_mem = true;
		}
	}
	read_program(&prog);

	if (bpfrt_conf_register_helpers())
		fail("%s", bpfrt_last_error());
	/* The byte buffer is malloc'd, so it is aligned for struct bpf_insn. */
	insns = (struct bpf_insn *)prog.data;
	err = bpfrt_conf_exec(insns, prog.len / 8, mem.data, mem.len, mode, &r0, &stage);
	if (err)
		fail("%s failed: %s", stage == BPFRT_CONF_STAGE_RUN ? "run" : "load",
		     bpfrt_last_error());
	printf("%" PRIx64 "\n", r0);
	free(prog.data);
	free(mem.data);
	return 0;
}
