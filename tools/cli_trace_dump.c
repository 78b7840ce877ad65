/* bpfrt trace's map dump: a map's entries (as the agent sends them, or as
 * read from its shared memory) formatted with the object's BTF: `name =
 * value` for globals, with offsets from .symtab as libbpf takes them;
 * `map[key] = value`, arrays only where non-zero. */
#define _GNU_SOURCE
#include "cli_trace.h"

#include <linux/bpf.h>

#include <bpf/btf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the dump -------------------------------------------------------------- */

/* The offset of global var in section sec of the object: clang leaves
 * DATASEC offsets to the loader (libbpf fills them from the symbols), so
 * they are read from .symtab here too. -1 if not found. */
long var_offset(const char *path, const char *sec, const char *var)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx, secidx = 0;
	long off = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, sec))
			secidx = elf_ndxscn(scn);
	}
	while (secidx && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != secidx)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, var)) {
				off = (long)sym.st_value;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return off;
}

void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	struct dumper *dp = ctx;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (dp->len + (size_t)n + 1 > dp->cap) {
		size_t cap = (dp->len + (size_t)n + 1) * 2;
		char *nb = realloc(dp->buf, cap);

		if (!nb)
			return;
		dp->buf = nb;
		dp->cap = cap;
	}
	vsnprintf(dp->buf + dp->len, dp->cap - dp->len, fmt, ap);
	dp->len += (size_t)n;
}

static void append(struct dumper *dp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(struct dumper *dp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dump_printf(dp, fmt, ap);
	va_end(ap);
}

/* Formats size bytes of BTF type id (hex without one) into dp->buf. */
static const char *format(struct dumper *dp, int id, const void *data, size_t size)
{
	LIBBPF_OPTS(btf_dump_type_data_opts, o, .compact = true, .emit_zeroes = true);
	int rid = id > 0 && dp->btf ? btf__resolve_type(dp->btf, (__u32)id) : -1;
	const struct btf_type *t = rid > 0 ? btf__type_by_id(dp->btf, (__u32)rid) : NULL;

	/* numbers bare ("42", not "(long)42"); aggregates with their names */
	o.skip_names = t && (btf_is_int(t) || btf_is_enum(t) || btf_is_ptr(t) ||
			     btf_is_float(t) || btf_is_enum64(t));
	dp->len = 0;
	if (dp->buf)
		dp->buf[0] = 0;
	if (id > 0 && dp->d && btf_dump__dump_type_data(dp->d, (__u32)id, data, size, &o) >= 0)
		return dp->buf ? dp->buf : "";
	dp->len = 0;
	for (size_t i = 0; i < size; i++) {
		char hex[4];

		snprintf(hex, sizeof(hex), "%s%02x", i ? " " : "", ((const uint8_t *)data)[i]);
		append(dp, "%s", hex);
	}
	return dp->buf ? dp->buf : "";
}

/* The key and value types of a BTF-defined map: the members "key" and
 * "value" of its variable in .maps (pointers to the types). */
static void map_types(struct dumper *dp, const char *name)
{
	int sec = dp->btf ? btf__find_by_name_kind(dp->btf, ".maps", BTF_KIND_DATASEC) : -1;
	const struct btf_type *t;

	dp->key_type = dp->value_type = dp->datasec = 0;
	if (dp->btf && name[0] == '.') {
		int id = btf__find_by_name_kind(dp->btf, name, BTF_KIND_DATASEC);

		dp->datasec = id > 0 ? id : 0;
		return;
	}
	if (sec <= 0)
		return;
	t = btf__type_by_id(dp->btf, (__u32)sec);
	const struct btf_var_secinfo *vs = btf_var_secinfos(t);

	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(dp->btf, vs->type);

		if (!var || strcmp(btf__name_by_offset(dp->btf, var->name_off), name))
			continue;
		int sid = btf__resolve_type(dp->btf, var->type);
		const struct btf_type *st = sid > 0 ? btf__type_by_id(dp->btf, (__u32)sid) : NULL;

		if (!st || !btf_is_struct(st))
			return;
		const struct btf_member *m = btf_members(st);

		for (int j = 0; j < btf_vlen(st); j++, m++) {
			const char *mn = btf__name_by_offset(dp->btf, m->name_off);
			const struct btf_type *pt = btf__type_by_id(dp->btf, m->type);

			if (!pt || !btf_is_ptr(pt))
				continue;
			if (!strcmp(mn, "key"))
				dp->key_type = (int)pt->type;
			else if (!strcmp(mn, "value"))
				dp->value_type = (int)pt->type;
		}
		return;
	}
}

void dump_begin(struct dumper *dp, const struct agent_map *m)
{
	dp->map = *m;
	dp->map.name[sizeof(dp->map.name) - 1] = 0;
	map_types(dp, dp->map.name);
	if (dp->quiet)
		return;
	if (m->type == BPF_MAP_TYPE_RINGBUF || m->type == BPF_MAP_TYPE_PROG_ARRAY)
		return;
	if (m->skipped)
		printf("%s: entries of %u + %u bytes not shown\n", dp->map.name, m->key_size,
		       m->value_buf_size);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Global data: one line per variable of its section. */
static void dump_globals(struct dumper *dp, const uint8_t *val, size_t size)
{
	const struct btf_type *t = btf__type_by_id(dp->btf, (__u32)dp->datasec);
	const struct btf_var_secinfo *vs = btf_var_secinfos(t);

	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(dp->btf, vs->type);
		const char *name = var ? btf__name_by_offset(dp->btf, var->name_off) : NULL;
		long sz = var ? btf__resolve_size(dp->btf, var->type) : -1;
		long off;

		/* function-local statics (bpf_printk's format: "fn.fmt") are
		 * no globals of the program's */
		if (!name || strchr(name, '.') || sz <= 0)
			continue;
		off = var_offset(dp->obj, dp->map.name, name);
		if (off < 0 || (size_t)(off + sz) > size)
			continue;
		printf("%s = %s\n", name, format(dp, (int)var->type, val + off, (size_t)sz));
	}
}

void dump_entry(struct dumper *dp, const uint8_t *data, size_t len)
{
	const struct agent_map *m = &dp->map;
	const uint8_t *key = data, *val = data + m->key_size;
	bool array = m->type == BPF_MAP_TYPE_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_ARRAY;
	bool percpu = m->type == BPF_MAP_TYPE_PERCPU_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_HASH;
	char keytxt[512];

	if (dp->quiet || len != (size_t)m->key_size + m->value_buf_size)
		return;
	if (dp->datasec) {
		dump_globals(dp, val, m->value_size);
		return;
	}
	/* arrays: the slots a program wrote (the others hold zeros) */
	if (array && all_zero(val, m->value_buf_size))
		return;
	if (array && m->key_size == 4) {
		uint32_t idx;

		memcpy(&idx, key, 4);
		snprintf(keytxt, sizeof(keytxt), "%u", idx);
	} else {
		snprintf(keytxt, sizeof(keytxt), "%s", format(dp, dp->key_type, key, m->key_size));
	}
	if (!percpu) {
		printf("%s[%s] = %s\n", m->name, keytxt, format(dp, dp->value_type, val,
								   m->value_size));
		return;
	}
	size_t stride = (m->value_size + 7) & ~7u;

	printf("%s[%s] = [", m->name, keytxt);
	for (size_t off = 0, cpu = 0; off + m->value_size <= m->value_buf_size; off += stride, cpu++)
		printf("%s%s", cpu ? ", " : "", format(dp, dp->value_type, val + off, m->value_size));
	printf("]\n");
}

int dumper_open(struct dumper *dp, const char *obj, bool quiet)
{
	memset(dp, 0, sizeof(*dp));
	/* libbpf 1.x: NULL (and errno) on failure; without BTF, hex */
	dp->btf = btf__parse_elf(obj, NULL);
	if (dp->btf)
		dp->d = btf_dump__new(dp->btf, dump_printf, dp, NULL);
	dp->quiet = quiet;
	snprintf(dp->obj, sizeof(dp->obj), "%s", obj);
	return 0;
}

void dumper_close(struct dumper *dp)
{
	btf_dump__free(dp->d);
	btf__free(dp->btf);
	free(dp->buf);
	dp->d = NULL;
	dp->btf = NULL;
	dp->buf = NULL;
}
