/* trace_printk support: a Linux-compatible format engine and a bounded
 * ring of trace lines that user space drains like trace_pipe. */
#define _GNU_SOURCE
#include "helpers/trace.h"
#include "helpers/probe.h"
#include "core/error.h"
#include "maps/map.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* ---- format engine ------------------------------------------------------ */

#define FMT_MAX       1024  /* longest format accepted */
#define WIDTH_MAX     256   /* wider fields are clamped */

struct fmt_out {
	char *buf;
	size_t size;
	size_t len;             /* bytes written so far, < size */
};

static void out_bytes(struct fmt_out *o, const char *s, size_t n)
{
	size_t room = o->size - 1 - o->len;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

/* Appends one conversion through snprintf; spec was built from characters
 * the parser accepted, so it is a well-formed printf directive. */
#define OUT_PRINTF(o, spec, val) do {                                          \
	char tmp_[WIDTH_MAX + 64];                                             \
	int n_ = snprintf(tmp_, sizeof(tmp_), spec, val);                      \
	if (n_ > 0)                                                            \
		out_bytes(o, tmp_, (size_t)n_ < sizeof(tmp_) ? (size_t)n_      \
							      : sizeof(tmp_) - 1); \
} while (0)

/* "%<flags><width>" prefix of a directive, as parsed. */
struct spec {
	char text[16];
	size_t len;
};

static void spec_add(struct spec *s, char c)
{
	if (s->len < sizeof(s->text) - 1)
		s->text[s->len++] = c;
	s->text[s->len] = 0;
}

static void spec_add_str(struct spec *s, const char *str)
{
	while (*str)
		spec_add(s, *str++);
}

static void out_ipv4(struct fmt_out *o, uint64_t addr)
{
	uint8_t ip[4];
	char tmp[20];
	int n;

	if (bpfrt_probe_read(ip, (const void *)(uintptr_t)addr, sizeof(ip)))
		return;
	n = snprintf(tmp, sizeof(tmp), "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
	out_bytes(o, tmp, (size_t)n);
}

/* %pi6 prints 32 hex digits, %pI6 eight colon-separated groups (the
 * kernel's uncompressed form). */
static void out_ipv6(struct fmt_out *o, uint64_t addr, bool colons)
{
	uint8_t ip[16];
	char tmp[48];
	size_t n = 0;

	if (bpfrt_probe_read(ip, (const void *)(uintptr_t)addr, sizeof(ip)))
		return;
	for (int i = 0; i < 16; i++) {
		if (colons && i && !(i & 1))
			tmp[n++] = ':';
		n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%02x", ip[i]);
	}
	out_bytes(o, tmp, n);
}

static void out_string(struct fmt_out *o, const struct spec *sp, uint64_t addr)
{
	char str[FMT_MAX];
	struct spec s = *sp;

	if (bpfrt_probe_read_str(str, (const void *)(uintptr_t)addr, sizeof(str)) < 0)
		str[0] = 0; /* Linux prints an unreadable string as empty */
	spec_add(&s, 's');
	OUT_PRINTF(o, s.text, str);
}

/* Handles the conversion at *p (after flags and width); advances *p past
 * it. Returns 0 or -EINVAL. */
static int format_one(struct fmt_out *o, const char **p, const struct spec *sp, uint64_t arg)
{
	const char *f = *p;
	struct spec s = *sp;
	int longs = 0;

	if (*f == 'p') {
		f++;
		if ((f[0] == 'k' || f[0] == 'u') && f[1] == 's') {
			out_string(o, sp, arg);
			*p = f + 2;
			return 0;
		}
		if ((f[0] == 'i' || f[0] == 'I') && (f[1] == '4' || f[1] == '6')) {
			if (f[1] == '4')
				out_ipv4(o, arg);
			else
				out_ipv6(o, arg, f[0] == 'I');
			*p = f + 2;
			return 0;
		}
		/* %p, %px, %pK, %ps, %pS, %pB: the address itself. Inside one
		 * process there is nothing to hide or symbolize. */
		if (f[0] == 'x' || f[0] == 'K' || f[0] == 's' || f[0] == 'S' || f[0] == 'B')
			f++;
		else if (f[0] && !isspace((unsigned char)f[0]) && !ispunct((unsigned char)f[0]))
			return -EINVAL;
		spec_add_str(&s, "016" PRIx64);
		if (sp->len > 1) { /* explicit flags/width replace the default */
			s = *sp;
			spec_add_str(&s, PRIx64);
		}
		OUT_PRINTF(o, s.text, arg);
		*p = f;
		return 0;
	}
	if (*f == 's') {
		out_string(o, sp, arg);
		*p = f + 1;
		return 0;
	}
	if (*f == 'c') {
		spec_add(&s, 'c');
		OUT_PRINTF(o, s.text, (int)(unsigned char)arg);
		*p = f + 1;
		return 0;
	}
	while (*f == 'l' && longs < 2) {
		longs++;
		f++;
	}
	if (*f != 'd' && *f != 'i' && *f != 'u' && *f != 'x' && *f != 'X')
		return -EINVAL;
	if (longs) {
		spec_add_str(&s, "ll");
		spec_add(&s, *f);
		if (*f == 'd' || *f == 'i')
			OUT_PRINTF(o, s.text, (long long)arg);
		else
			OUT_PRINTF(o, s.text, (unsigned long long)arg);
	} else {
		/* int-sized: the low 32 bits, as the kernel's va_arg(int) */
		spec_add(&s, *f);
		if (*f == 'd' || *f == 'i')
			OUT_PRINTF(o, s.text, (int)(uint32_t)arg);
		else
			OUT_PRINTF(o, s.text, (unsigned int)(uint32_t)arg);
	}
	*p = f + 1;
	return 0;
}

/* Parses "[0+- ]*[width]" after a '%'. */
static void parse_flags_width(const char **p, struct spec *s)
{
	const char *f = *p;
	unsigned width = 0;
	char digits[8];

	s->len = 0;
	spec_add(s, '%');
	while (*f == '0' || *f == '+' || *f == '-' || *f == ' ')
		spec_add(s, *f++);
	while (*f >= '0' && *f <= '9') {
		if (width <= WIDTH_MAX)
			width = width * 10 + (unsigned)(*f - '0');
		f++;
	}
	if (width) {
		snprintf(digits, sizeof(digits), "%u", width > WIDTH_MAX ? WIDTH_MAX : width);
		spec_add_str(s, digits);
	}
	*p = f;
}

long bpfrt_trace_format(char *out, size_t out_size, const void *fmt, uint32_t fmt_size,
			const uint64_t *args, uint32_t nr_args)
{
	char text[FMT_MAX];
	struct fmt_out o = { out, out_size, 0 };
	uint32_t used = 0;
	const char *p;

	if (!out || out_size == 0)
		return -EINVAL;
	out[0] = 0;
	if (fmt_size == 0)
		return -EINVAL;
	if (fmt_size == BPFRT_TRACE_FMT_STRING) {
		long n = bpfrt_probe_read_str(text, fmt, sizeof(text));

		if (n < 0)
			return -EFAULT;
		if (n == (long)sizeof(text) && strlen(text) == sizeof(text) - 1)
			return -EINVAL; /* possibly cut: too long to be sure */
	} else {
		if (fmt_size > sizeof(text))
			fmt_size = sizeof(text);
		if (bpfrt_probe_read(text, fmt, fmt_size))
			return -EFAULT;
		if (!memchr(text, 0, fmt_size))
			return -EINVAL;
	}
	/* Reject the whole format before printing anything, as Linux. */
	for (p = text; *p; p++)
		if (!isascii((unsigned char)*p) ||
		    (!isprint((unsigned char)*p) && !isspace((unsigned char)*p)))
			return -EINVAL;

	for (p = text; *p;) {
		const char *pct = strchr(p, '%');
		struct spec s;
		int err;

		if (!pct) {
			out_bytes(&o, p, strlen(p));
			break;
		}
		out_bytes(&o, p, (size_t)(pct - p));
		p = pct + 1;
		if (*p == '%') {
			out_bytes(&o, "%", 1);
			p++;
			continue;
		}
		if (used >= nr_args)
			goto invalid;
		parse_flags_width(&p, &s);
		err = format_one(&o, &p, &s, args[used++]);
		if (err)
			goto invalid;
	}
	return (long)o.len;
invalid:
	out[0] = 0;
	return -EINVAL;
}

/* ---- trace buffer ------------------------------------------------------- */

#define TRACE_LINES 1024u

struct trace_rec {
	uint64_t ns;
	int32_t tgid;
	int32_t tid;
	int32_t cpu;
	uint32_t len;
	char comm[16];
	char msg[BPFRT_TRACE_MSG_MAX];
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trace_rec *trace_ring; /* TRACE_LINES records, allocated on first use */
static uint64_t trace_head, trace_tail; /* next to write, next to read */
static uint64_t trace_dropped;

void bpfrt_trace_emit(const char *msg, size_t len)
{
	struct trace_rec rec;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	rec.ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	rec.tgid = getpid();
	rec.tid = gettid();
	rec.cpu = bpfrt_map_this_cpu();
	memset(rec.comm, 0, sizeof(rec.comm));
	prctl(PR_GET_NAME, rec.comm);
	if (len > sizeof(rec.msg) - 1)
		len = sizeof(rec.msg) - 1;
	/* one event, one line: the newline bpf_printk users add is implied */
	if (len && msg[len - 1] == '\n')
		len--;
	memcpy(rec.msg, msg, len);
	rec.msg[len] = 0;
	rec.len = (uint32_t)len;

	pthread_mutex_lock(&trace_lock);
	if (!trace_ring)
		trace_ring = calloc(TRACE_LINES, sizeof(*trace_ring));
	if (trace_ring) {
		if (trace_head - trace_tail == TRACE_LINES) {
			trace_tail++;
			trace_dropped++;
		}
		trace_ring[trace_head++ % TRACE_LINES] = rec;
	}
	pthread_mutex_unlock(&trace_lock);
}

/* Linux's trace_pipe layout: comm-pid [cpu] flags seconds: event: message */
static int format_line(char *buf, size_t size, const struct trace_rec *r)
{
	return snprintf(buf, size, "%16s-%-7d [%03d] ..... %5" PRIu64 ".%06" PRIu64
			": bpf_trace_printk: %s\n", r->comm, r->tid, r->cpu,
			(uint64_t)(r->ns / 1000000000u), (uint64_t)(r->ns % 1000000000u / 1000), r->msg);
}

#define LINE_MAX_LEN (BPFRT_TRACE_MSG_MAX + 96)

int bpfrt_trace_drain(bpfrt_trace_line_fn fn, void *ctx)
{
	char line[LINE_MAX_LEN];
	int n = 0;

	if (!fn)
		return bpfrt_err(-EINVAL, "trace_drain: no callback");
	for (;;) {
		struct trace_rec rec;
		int len, ret;

		pthread_mutex_lock(&trace_lock);
		if (trace_tail == trace_head) {
			pthread_mutex_unlock(&trace_lock);
			return n;
		}
		rec = trace_ring[trace_tail++ % TRACE_LINES];
		pthread_mutex_unlock(&trace_lock);
		len = format_line(line, sizeof(line), &rec);
		if (len >= (int)sizeof(line))
			len = (int)sizeof(line) - 1;
		n++;
		ret = fn(ctx, line, (size_t)len);
		if (ret < 0)
			return ret;
	}
}

int bpfrt_trace_read(char *buf, size_t len)
{
	char line[LINE_MAX_LEN];
	size_t used = 0;

	if (!buf || len == 0)
		return bpfrt_err(-EINVAL, "trace_read: no buffer");
	buf[0] = 0;
	pthread_mutex_lock(&trace_lock);
	while (trace_tail != trace_head) {
		int n = format_line(line, sizeof(line), &trace_ring[trace_tail % TRACE_LINES]);

		if (n >= (int)sizeof(line))
			n = (int)sizeof(line) - 1;
		if (used + (size_t)n + 1 > len)
			break;
		memcpy(buf + used, line, (size_t)n + 1);
		used += (size_t)n;
		trace_tail++;
	}
	if (used == 0 && trace_tail != trace_head) {
		pthread_mutex_unlock(&trace_lock);
		return bpfrt_err(-ENOSPC, "trace_read: a line needs more than %zu bytes", len);
	}
	pthread_mutex_unlock(&trace_lock);
	return (int)used;
}

static int pipe_line(void *ctx, const char *line, size_t len)
{
	return fwrite(line, 1, len, ctx) == len ? 0 : -EIO;
}

int bpfrt_trace_pipe(FILE *out)
{
	int n;

	if (!out)
		return bpfrt_err(-EINVAL, "trace_pipe: no stream");
	n = bpfrt_trace_drain(pipe_line, out);
	if (n >= 0 && fflush(out))
		return bpfrt_err(-EIO, "trace_pipe: write failed");
	return n;
}

uint64_t bpfrt_trace_dropped(void)
{
	uint64_t n;

	pthread_mutex_lock(&trace_lock);
	n = trace_dropped;
	pthread_mutex_unlock(&trace_lock);
	return n;
}

void bpfrt_trace_clear(void)
{
	pthread_mutex_lock(&trace_lock);
	trace_tail = trace_head;
	trace_dropped = 0;
	pthread_mutex_unlock(&trace_lock);
}
