/* Reads the BPFRT_* environment variables (config.h) once. */
#include "core/config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct bpfrt_config_var bpfrt_config_vars[] = {
#define ROW_FLAG "flag"
#define ROW_SIZE "size"
#define ROW_TEXT "text"
#define ROW(field, var, kind, def, meaning) { var, ROW_##kind, def, meaning },
	BPFRT_CONFIG_VARS(ROW)
#undef ROW
};
const size_t bpfrt_config_var_count = sizeof(bpfrt_config_vars) / sizeof(bpfrt_config_vars[0]);

static struct bpfrt_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* "123", "64k", "512M", "2g", "1gb" (powers of 1024); false if not a size. */
static bool parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static void read_FLAG(bool *out, const char *name, const char *env, const char *def)
{
	if (!env || !*env)
		*out = !strcmp(def, "on");
	else
		*out = strcmp(env, "0") != 0;
}

static void read_SIZE(struct bpfrt_config_size *out, const char *name, const char *env,
		      const char *def)
{
	out->set = false;
	out->bytes = 0;
	if (!env)
		return;
	if (parse_size(env, &out->bytes))
		out->set = true;
	else
		fprintf(stderr, "bpfrt: %s='%s' is not a size (bytes, or with k/m/g/t); "
			"it stays %s\n", name, env, def);
}

static void read_TEXT(struct bpfrt_config_text *out, const char *name, const char *env,
		      const char *def)
{
	out->set = env != NULL;
	snprintf(out->value, sizeof(out->value), "%s", env ? env : "");
	if (env && strlen(env) >= sizeof(out->value))
		fprintf(stderr, "bpfrt: %s is longer than %zu bytes; cut to '%s'\n", name,
			sizeof(out->value) - 1, out->value);
}

static void read_all(void)
{
#define READ(field, var, kind, def, meaning) read_##kind(&config.field, var, getenv(var), def);
	BPFRT_CONFIG_VARS(READ)
#undef READ
}

const struct bpfrt_config *bpfrt_config(void)
{
	pthread_once(&config_once, read_all);
	return &config;
}

void bpfrt_config_reread(void)
{
	pthread_once(&config_once, read_all);
	read_all();
}

static void text_FLAG(const bool *v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", *v ? "on" : "off");
}

static void text_SIZE(const struct bpfrt_config_size *v, char *buf, size_t len)
{
	if (v->set)
		snprintf(buf, len, "%" PRIu64, v->bytes);
	else
		snprintf(buf, len, "(default)");
}

static void text_TEXT(const struct bpfrt_config_text *v, char *buf, size_t len)
{
	if (v->set)
		snprintf(buf, len, "\"%s\"", v->value);
	else
		snprintf(buf, len, "(default)");
}

void bpfrt_config_value_text(size_t i, char *buf, size_t len)
{
	const struct bpfrt_config *c = bpfrt_config();
	size_t n = 0;

	snprintf(buf, len, "?");
#define TEXT(field, var, kind, def, meaning)         \
	if (n++ == i) {                               \
		text_##kind(&c->field, buf, len);     \
		return;                               \
	}
	BPFRT_CONFIG_VARS(TEXT)
#undef TEXT
}
