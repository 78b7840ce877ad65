/* Reader for the bpf_conformance .data format.
 *
 * The "-- asm" text keeps the file's line numbering (every other line of
 * the file before it becomes an empty line) so assembler messages point at
 * the right line of the .data file. Unknown "--" directives are rejected as
 * the suite's own reader does; "-- c" and the runner option
 * "-- no register offset" start sections that are ignored. */
#include "isa/datafile.h"

#include "bpfrt/bpfrt.h"

#include "core/error.h"
#include "isa/lines.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum section { SEC_NONE, SEC_IGNORE, SEC_ASM, SEC_RAW, SEC_MEM, SEC_RESULT, SEC_ERROR };

struct buf {
	char *data;
	size_t len, cap;
};

struct parser {
	struct bpfrt_datafile *df;
	enum section sec;
	unsigned line;
	struct buf asm_text;
	unsigned asm_lines;     /* lines already in asm_text */
	struct buf raw, mem, error;
	bool has_asm, has_raw;
};

static int df_error(const struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int df_error(const struct parser *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bpfrt_err(-EINVAL, "data: line %u: %s", p->line, msg);
}

static int buf_append(struct buf *b, const void *data, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		char *n;

		while (ncap < b->len + len + 1)
			ncap *= 2;
		n = realloc(b->data, ncap);
		if (!n)
			return bpfrt_err(-ENOMEM, "data: out of memory");
		b->data = n;
		b->cap = ncap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static bool is_directive(const char *line)
{
	return line[0] == '-' && line[1] == '-' &&
	       (line[2] == '\0' || isspace((unsigned char)line[2]));
}

static int start_section(struct parser *p, char *line)
{
	static const struct { const char *name; enum section sec; } known[] = {
		{ "asm", SEC_ASM },       { "raw", SEC_RAW },
		{ "mem", SEC_MEM },       { "result", SEC_RESULT },
		{ "error", SEC_ERROR },   { "c", SEC_IGNORE },
		{ "no register offset", SEC_IGNORE },
	};
	const char *name = trim(line + 2);

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(name, known[i].name))
			continue;
		p->sec = known[i].sec;
		if (p->sec == SEC_ASM)
			p->has_asm = true;
		else if (p->sec == SEC_RAW)
			p->has_raw = true;
		else if (p->sec == SEC_ERROR)
			p->df->expect_error = true;
		return 0;
	}
	return df_error(p, "unknown directive '-- %s'", name);
}

static int add_asm_line(struct parser *p, const char *line)
{
	int err = 0;

	/* Blank lines for everything since the last asm line. */
	while (!err && p->asm_lines + 1 < p->line) {
		err = buf_append(&p->asm_text, "\n", 1);
		p->asm_lines++;
	}
	if (!err)
		err = buf_append(&p->asm_text, line, strlen(line));
	if (!err)
		err = buf_append(&p->asm_text, "\n", 1);
	p->asm_lines++;
	return err;
}

static int hex_value(const char *s, size_t max_digits, uint64_t *v)
{
	size_t n = 0;

	*v = 0;
	for (; *s; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (n == max_digits)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	return n ? 0 : -1;
}

static bool has_hex_prefix(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* "0x" + up to 16 digits is one little-endian instruction word; a two-digit
 * token is one byte. */
static int add_raw_token(struct parser *p, const char *tok)
{
	uint64_t v;
	uint8_t bytes[8];

	if (has_hex_prefix(tok)) {
		if (hex_value(tok + 2, 16, &v))
			return df_error(p, "invalid raw instruction word '%s'", tok);
		for (int i = 0; i < 8; i++)
			bytes[i] = (uint8_t)(v >> (8 * i));
		return buf_append(&p->raw, bytes, 8);
	}
	if (strlen(tok) != 2 || hex_value(tok, 2, &v))
		return df_error(p, "invalid raw byte '%s'", tok);
	bytes[0] = (uint8_t)v;
	return buf_append(&p->raw, bytes, 1);
}

static int add_mem_token(struct parser *p, const char *tok)
{
	const char *digits = has_hex_prefix(tok) ? tok + 2 : tok;
	uint64_t v;
	uint8_t byte;

	if (hex_value(digits, 2, &v))
		return df_error(p, "invalid memory byte '%s'", tok);
	byte = (uint8_t)v;
	return buf_append(&p->mem, &byte, 1);
}

static int parse_result(struct parser *p, const char *s)
{
	struct bpfrt_datafile *df = p->df;
	bool neg = *s == '-';
	uint64_t v = 0;

	if (df->has_result)
		return df_error(p, "more than one result value");
	if (has_hex_prefix(s)) {
		if (hex_value(s + 2, 16, &v))
			return df_error(p, "invalid result '%s'", s);
	} else {
		const char *d = neg ? s + 1 : s;

		if (!*d)
			return df_error(p, "invalid result '%s'", s);
		for (; *d; d++) {
			if (!isdigit((unsigned char)*d) || v > (UINT64_MAX - (*d - '0')) / 10)
				return df_error(p, "invalid result '%s'", s);
			v = v * 10 + (uint64_t)(*d - '0');
		}
		if (neg)
			v = 0 - v;
	}
	df->has_result = true;
	df->result = v;
	return 0;
}

/* raw, mem, result and error lines: '#' comments, blank-separated tokens. */
static int add_data_line(struct parser *p, char *line)
{
	char *hash = strchr(line, '#');
	char *s, *tok, *save = NULL;
	int err = 0;

	if (hash)
		*hash = '\0';
	s = trim(line);
	if (!*s)
		return 0;
	switch (p->sec) {
	case SEC_RESULT:
		return parse_result(p, s);
	case SEC_ERROR:
		if (p->error.len)
			err = buf_append(&p->error, "\n", 1);
		return err ? err : buf_append(&p->error, s, strlen(s));
	default:
		break;
	}
	for (tok = strtok_r(s, " \t", &save); tok && !err; tok = strtok_r(NULL, " \t", &save))
		err = p->sec == SEC_RAW ? add_raw_token(p, tok) : add_mem_token(p, tok);
	return err;
}

static int parse_line(struct parser *p, char *line)
{
	size_t len = strlen(line);

	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (is_directive(line))
		return start_section(p, line);
	switch (p->sec) {
	case SEC_ASM:
		return add_asm_line(p, line);
	case SEC_RAW:
	case SEC_MEM:
	case SEC_RESULT:
	case SEC_ERROR:
		return add_data_line(p, line);
	default:
		return 0;
	}
}

static int parse_one_line(void *p, char *line)
{
	return parse_line(p, line);
}

/* Hands the collected sections over to df (empty but present sections as
 * non-NULL buffers where the header promises presence). */
static int finish(struct parser *p)
{
	struct bpfrt_datafile *df = p->df;

	if (p->raw.len % 8)
		return bpfrt_err(-EINVAL, "data: raw section has %zu bytes, not a multiple of 8",
				 p->raw.len);
	if ((p->has_asm && buf_append(&p->asm_text, "", 0)) ||
	    (p->has_raw && buf_append(&p->raw, "", 0)) ||
	    (df->expect_error && buf_append(&p->error, "", 0)))
		return -ENOMEM;
	if (p->has_asm) {
		df->asm_text = p->asm_text.data;
		p->asm_text.data = NULL;
	}
	if (p->has_raw) {
		df->raw = (uint8_t *)p->raw.data;
		df->raw_len = p->raw.len;
		p->raw.data = NULL;
	}
	if (p->mem.len) {
		df->mem = (uint8_t *)p->mem.data;
		df->mem_len = p->mem.len;
		p->mem.data = NULL;
	}
	if (df->expect_error) {
		df->error_text = p->error.data;
		p->error.data = NULL;
	}
	return 0;
}

int bpfrt_datafile_parse(const char *text, struct bpfrt_datafile *df)
{
	struct parser p = { .df = df };
	int err;

	if (!df)
		return bpfrt_err(-EINVAL, "data: NULL argument");
	memset(df, 0, sizeof(*df));
	if (!text)
		return bpfrt_err(-EINVAL, "data: NULL argument");
	err = bpfrt_for_each_line(text, &p.line, parse_one_line, &p, "data");
	if (!err)
		err = finish(&p);
	free(p.asm_text.data);
	free(p.raw.data);
	free(p.mem.data);
	free(p.error.data);
	if (err)
		bpfrt_datafile_free(df);
	return err;
}

static int read_whole_file(const char *path, char **text)
{
	struct buf b = { 0 };
	char chunk[4096];
	size_t got;
	FILE *f = fopen(path, "rb");
	int err = 0;

	if (!f)
		return bpfrt_err(-errno, "data: %s: %s", path, strerror(errno));
	while (!err && (got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		err = buf_append(&b, chunk, got);
	if (!err && ferror(f))
		err = bpfrt_err(-EIO, "data: %s: read error", path);
	fclose(f);
	if (!err && memchr(b.data ? b.data : "", '\0', b.len))
		err = bpfrt_err(-EINVAL, "data: %s: contains NUL bytes", path);
	if (!err && !b.data)
		err = buf_append(&b, "", 0);
	if (err) {
		free(b.data);
		return err;
	}
	*text = b.data;
	return 0;
}

int bpfrt_datafile_load(const char *path, struct bpfrt_datafile *df)
{
	char *text = NULL;
	int err;

	if (!df)
		return bpfrt_err(-EINVAL, "data: NULL argument");
	memset(df, 0, sizeof(*df));
	if (!path)
		return bpfrt_err(-EINVAL, "data: NULL path");
	err = read_whole_file(path, &text);
	if (err)
		return err;
	err = bpfrt_datafile_parse(text, df);
	free(text);
	if (err) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", bpfrt_last_error());
		bpfrt_err(err, "%s: %s", path, msg);
	}
	return err;
}

void bpfrt_datafile_free(struct bpfrt_datafile *df)
{
	if (!df)
		return;
	free(df->asm_text);
	free(df->raw);
	free(df->mem);
	free(df->error_text);
	memset(df, 0, sizeof(*df));
}
