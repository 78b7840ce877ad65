/* BTF-formatted map keys and values for `bpfrt map dump` (cli_btf.h).
 * Types are walked as bpftool's btf_dumper walks them: integers by
 * signedness and size (bool as true/false, bitfields extracted), enums by
 * name, char arrays as strings, other arrays as lists, structs and unions
 * as objects (an anonymous member's fields inline), pointers as numbers.
 * Reads stay inside the value's size: a type that claims more prints as
 * nothing past the end. */
#include "cli_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON ----------------------------------------------------------- */

static void jw_newline(struct jw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("    ", w->f);
}

/* Before a value or a key: the comma and line break it needs (none for
 * the value right after its key). */
static void jw_sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->need_comma)
		fputc(',', w->f);
	if (w->depth)
		jw_newline(w);
}

void jw_open(struct jw *w, char c)
{
	jw_sep(w);
	fputc(c, w->f);
	w->depth++;
	w->need_comma = false;
}

void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (w->need_comma)
		jw_newline(w);
	fputc(c, w->f);
	w->need_comma = true;
	if (!w->depth && w->pretty)
		fputc('\n', w->f);
}

void jw_key(struct jw *w, const char *key)
{
	jw_sep(w);
	jw_str(w, key, strlen(key));
	fputs(w->pretty ? ": " : ":", w->f);
	w->need_comma = false;
	w->after_key = true;
}

void jw_raw(struct jw *w, const char *text)
{
	jw_sep(w);
	fputs(text, w->f);
	w->need_comma = true;
}

void jw_u64(struct jw *w, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	jw_raw(w, buf);
}

void jw_s64(struct jw *w, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	jw_raw(w, buf);
}

void jw_str(struct jw *w, const char *s, size_t max)
{
	fputc('"', w->f);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(w->f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(w->f, "\\u%04x", c);
		else
			fputc(c, w->f);
	}
	fputc('"', w->f);
	w->need_comma = true;
}

static void jw_strval(struct jw *w, const char *s, size_t max)
{
	jw_sep(w);
	jw_str(w, s, max);
}

void jw_hex(struct jw *w, const void *buf, size_t len)
{
	bool pretty = w->pretty;

	jw_open(w, '[');
	w->pretty = false; /* bytes on one line */
	for (size_t i = 0; i < len; i++) {
		char b[8];

		snprintf(b, sizeof(b), "\"0x%02x\"", ((const uint8_t *)buf)[i]);
		jw_raw(w, b);
	}
	jw_close(w, ']');
	w->pretty = pretty;
}

/* ---- the object's BTF ------------------------------------------------ */

struct cli_btf {
	char *image;
	Elf *elf;
	struct btf *btf;
	Elf_Data *symtab;
	size_t sym_cnt, strtab, shstrndx;
};

void cli_btf_close(struct cli_btf *b)
{
	if (!b)
		return;
	btf__free(b->btf);
	if (b->elf)
		elf_end(b->elf);
	free(b->image);
	free(b);
}

struct cli_btf *cli_btf_open(const char *path)
{
	struct cli_btf *b = calloc(1, sizeof(*b));
	FILE *f = fopen(path, "rb");
	Elf_Scn *scn = NULL;
	long n = -1;

	if (!b || !f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(b->image = malloc((size_t)n)) || fread(b->image, 1, (size_t)n, f) != (size_t)n ||
	    elf_version(EV_CURRENT) == EV_NONE || !(b->elf = elf_memory(b->image, (size_t)n)) ||
	    elf_getshdrstrndx(b->elf, &b->shstrndx))
		goto fail;
	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(b->elf, b->shstrndx, sh.sh_name)))
			goto fail;
		if (sh.sh_type == SHT_SYMTAB && (d = elf_getdata(scn, NULL)) && sh.sh_entsize) {
			b->symtab = d;
			b->sym_cnt = d->d_size / sh.sh_entsize;
			b->strtab = sh.sh_link;
		} else if (!strcmp(name, ".BTF") && (d = elf_getdata(scn, NULL)) && d->d_buf &&
			   d->d_size && !b->btf) {
			libbpf_print_fn_t prev = libbpf_set_print(NULL);

			b->btf = btf__new(d->d_buf, (uint32_t)d->d_size);
			libbpf_set_print(prev);
			if (!b->btf)
				goto fail;
		}
	}
	if (!b->btf || !b->symtab)
		goto fail;
	fclose(f);
	return b;
fail:
	if (f)
		fclose(f);
	cli_btf_close(b);
	return NULL;
}

/* Under typedefs and modifiers. */
static uint32_t skip_mods(const struct btf *btf, uint32_t id)
{
	for (int depth = 0; depth < 32; depth++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (!t || !(btf_is_typedef(t) || btf_is_mod(t)))
			return id;
		id = t->type;
	}
	return 0;
}

/* The type a `__type(key, T)` member points at. */
static uint32_t member_target(const struct btf *btf, const struct btf_type *def, const char *name)
{
	const struct btf_member *m = btf_members(def);

	for (int i = 0; i < btf_vlen(def); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *pt;

		if (!mn || strcmp(mn, name))
			continue;
		pt = btf__type_by_id(btf, skip_mods(btf, m->type));
		return pt && btf_is_ptr(pt) ? pt->type : 0;
	}
	return 0;
}

static bool is_data_sec(const char *name)
{
	return !strcmp(name, ".data") || !strcmp(name, ".bss") || !strcmp(name, ".rodata") ||
	       !strncmp(name, ".rodata.", 8) || !strncmp(name, ".data.", 6);
}

bool cli_btf_map_types(struct cli_btf *b, const char *name, struct cli_map_types *t)
{
	const struct btf_var_secinfo *vsi;
	const struct btf_type *sec;
	int id;

	memset(t, 0, sizeof(*t));
	if (!b)
		return false;
	if (is_data_sec(name)) {
		if (btf__find_by_name_kind(b->btf, name, BTF_KIND_DATASEC) <= 0)
			return false;
		t->section = true;
		t->sec_name = name;
		return true;
	}
	id = btf__find_by_name_kind(b->btf, ".maps", BTF_KIND_DATASEC);
	if (id <= 0)
		return false;
	sec = btf__type_by_id(b->btf, (uint32_t)id);
	vsi = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(b->btf, vsi->type);
		const struct btf_type *def;
		const char *vn;

		if (!var || !btf_is_var(var) || !(vn = btf__name_by_offset(b->btf, var->name_off)) ||
		    strcmp(vn, name))
			continue;
		def = btf__type_by_id(b->btf, skip_mods(b->btf, var->type));
		if (!def || !btf_is_struct(def))
			return false;
		t->key = member_target(b->btf, def, "key");
		t->value = member_target(b->btf, def, "value");
		return t->key || t->value;
	}
	return false;
}

/* ---- values ------------------------------------------------------------ */

static void write_type(struct cli_btf *b, struct jw *w, uint32_t id, const uint8_t *data,
		       size_t size, int depth);

static uint64_t load_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void write_int(struct jw *w, const struct btf_type *t, const uint8_t *data, size_t size,
		      uint32_t bit_off, uint32_t bits)
{
	uint32_t enc = btf_int_encoding(t);
	uint64_t v;

	if (t->size > 8) { /* __int128: the bytes, as bpftool's hex */
		char buf[64] = "\"0x";
		size_t n = 3;

		for (size_t i = t->size < size ? t->size : size; i-- > 0 && n + 3 < sizeof(buf);)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%02x", data[i]);
		snprintf(buf + n, sizeof(buf) - n, "\"");
		jw_raw(w, buf);
		return;
	}
	bits = bits ? bits : btf_int_bits(t);
	bit_off += btf_int_offset(t);
	if ((bit_off + bits + 7) / 8 > size || !bits || bits > 64) {
		jw_raw(w, "null");
		return;
	}
	if (bit_off + bits > 64) { /* a bitfield past 8 bytes from its first: not read */
		jw_raw(w, "null");
		return;
	}
	v = load_le(data, (bit_off + bits + 7) / 8) >> bit_off;
	if (bits < 64)
		v &= (1ull << bits) - 1;
	if (enc & BTF_INT_BOOL)
		jw_raw(w, v ? "true" : "false");
	else if (enc & BTF_INT_SIGNED)
		jw_s64(w, bits < 64 && (v >> (bits - 1)) ? (int64_t)(v | ~((1ull << bits) - 1))
							  : (int64_t)v);
	else
		jw_u64(w, v);
}

static void write_enum(struct cli_btf *b, struct jw *w, const struct btf_type *t,
		       const uint8_t *data, size_t size)
{
	size_t n = t->size < size ? t->size : size;
	uint64_t v = load_le(data, n);
	bool is_signed = btf_kflag(t);

	if (n < 8 && is_signed && (v >> (8 * n - 1)))
		v |= ~((1ull << (8 * n)) - 1);
	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		for (int i = 0; i < btf_vlen(t); i++, e++)
			if ((uint32_t)e->val == (uint32_t)v) {
				jw_strval(w, btf__name_by_offset(b->btf, e->name_off), 256);
				return;
			}
	} else {
		const struct btf_enum64 *e = btf_enum64(t);

		for (int i = 0; i < btf_vlen(t); i++, e++)
			if (btf_enum64_value(e) == v) {
				jw_strval(w, btf__name_by_offset(b->btf, e->name_off), 256);
				return;
			}
	}
	if (is_signed)
		jw_s64(w, (int64_t)v);
	else
		jw_u64(w, v);
}

/* A char array holding text (bpftool's is_str_array): a 1-byte "char"
 * element (not unsigned char, which is bytes), printable up to a NUL. */
static bool is_string(struct cli_btf *b, uint32_t elem, const uint8_t *data, size_t len)
{
	const struct btf_type *t = btf__type_by_id(b->btf, skip_mods(b->btf, elem));
	const char *name;
	size_t i;

	if (!t || !btf_is_int(t) || t->size != 1)
		return false;
	name = btf__name_by_offset(b->btf, t->name_off);
	if (!name || (strcmp(name, "char") && strcmp(name, "signed char")))
		return false;
	for (i = 0; i < len && data[i]; i++)
		if (!isprint(data[i]))
			return false;
	return true;
}

static void write_members(struct cli_btf *b, struct jw *w, const struct btf_type *t,
			  const uint8_t *data, size_t size, int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(b->btf, m->name_off);
		uint32_t bit_off = btf_member_bit_offset(t, (uint32_t)i);
		uint32_t bits = btf_member_bitfield_size(t, (uint32_t)i);
		size_t off = bit_off / 8;
		const struct btf_type *mt = btf__type_by_id(b->btf, skip_mods(b->btf, m->type));

		if (off > size || !mt)
			continue;
		if (!name || !*name) { /* anonymous struct/union: its fields here */
			if (btf_is_composite(mt))
				write_members(b, w, mt, data + off, size - off, depth + 1);
			continue;
		}
		jw_key(w, name);
		if (bits && btf_is_int(mt))
			write_int(w, mt, data + off, size - off, bit_off % 8, bits);
		else
			write_type(b, w, m->type, data + off, size - off, depth + 1);
	}
}

static void write_type(struct cli_btf *b, struct jw *w, uint32_t id, const uint8_t *data,
		       size_t size, int depth)
{
	const struct btf_type *t = btf__type_by_id(b->btf, skip_mods(b->btf, id));

	if (!t || depth > 32) {
		jw_raw(w, "null");
		return;
	}
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		write_int(w, t, data, size, 0, 0);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		write_enum(b, w, t, data, size);
		break;
	case BTF_KIND_PTR:
		jw_u64(w, size >= 8 ? load_le(data, 8) : 0);
		break;
	case BTF_KIND_FLOAT: {
		char buf[64];

		if (t->size == 4 && size >= 4) {
			float f;

			memcpy(&f, data, 4);
			snprintf(buf, sizeof(buf), "%g", (double)f);
		} else if (t->size == 8 && size >= 8) {
			double d;

			memcpy(&d, data, 8);
			snprintf(buf, sizeof(buf), "%g", d);
		} else {
			snprintf(buf, sizeof(buf), "null");
		}
		jw_raw(w, buf);
		break;
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		long long esz = btf__resolve_size(b->btf, a->type);

		if (is_string(b, a->type, data, a->nelems < size ? a->nelems : size)) {
			jw_strval(w, (const char *)data, a->nelems < size ? a->nelems : size);
			break;
		}
		{
			const struct btf_type *et = btf__type_by_id(b->btf, skip_mods(b->btf, a->type));
			bool pretty = w->pretty;

			jw_open(w, '[');
			/* scalars on one line */
			if (et && !btf_is_composite(et) && !btf_is_array(et))
				w->pretty = false;
			for (uint32_t i = 0; esz > 0 && i < a->nelems && (i + 1) * (size_t)esz <= size; i++)
				write_type(b, w, a->type, data + i * (size_t)esz, (size_t)esz, depth + 1);
			jw_close(w, ']');
			w->pretty = pretty;
		}
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		jw_open(w, '{');
		write_members(b, w, t, data, size, depth);
		jw_close(w, '}');
		break;
	default:
		jw_raw(w, "null");
		break;
	}
}

void cli_btf_write(struct cli_btf *b, struct jw *w, uint32_t id, const void *data, size_t size)
{
	write_type(b, w, id, data, size, 0);
}

/* A variable's offset in its section, from its symbol (an unlinked
 * object's DATASEC has none). */
static bool var_offset(struct cli_btf *b, const char *sec, const char *var, size_t *off)
{
	for (size_t i = 1; i < b->sym_cnt; i++) {
		GElf_Sym sym;
		GElf_Shdr sh;
		Elf_Scn *scn;
		const char *sn, *secn;

		if (!gelf_getsym(b->symtab, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    !(sn = elf_strptr(b->elf, b->strtab, sym.st_name)) || strcmp(sn, var) ||
		    !(scn = elf_getscn(b->elf, sym.st_shndx)) || !gelf_getshdr(scn, &sh) ||
		    !(secn = elf_strptr(b->elf, b->shstrndx, sh.sh_name)) || strcmp(secn, sec))
			continue;
		*off = sym.st_value;
		return true;
	}
	return false;
}

void cli_btf_write_section(struct cli_btf *b, struct jw *w, const char *sec, const void *data,
			   size_t size)
{
	int id = btf__find_by_name_kind(b->btf, sec, BTF_KIND_DATASEC);
	const struct btf_type *t = id > 0 ? btf__type_by_id(b->btf, (uint32_t)id) : NULL;
	const struct btf_var_secinfo *vsi = t ? btf_var_secinfos(t) : NULL;

	jw_open(w, '{');
	for (int i = 0; t && i < btf_vlen(t); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(b->btf, vsi->type);
		const char *name;
		long long sz;
		size_t off;

		if (!var || !btf_is_var(var) || !(name = btf__name_by_offset(b->btf, var->name_off)) ||
		    (sz = btf__resolve_size(b->btf, var->type)) < 0 || !var_offset(b, sec, name, &off) ||
		    off > size || (size_t)sz > size - off)
			continue;
		jw_key(w, name);
		write_type(b, w, var->type, (const uint8_t *)data + off, (size_t)sz, 1);
	}
	jw_close(w, '}');
}
