/* bpfrt gen skeleton OBJ [name NAME]: a C header for one BPF object, as
 * `bpftool gen skeleton` makes for libbpf, over the bpfrt public API:
 *
 *   struct NAME {                     the object and typed handles
 *       struct bpfrt_object *obj;
 *       struct { struct bpfrt_map *M; ... } maps;     set at load
 *       struct { struct bpfrt_prog *P; ... } progs;   set at open
 *       struct { struct bpfrt_link *P; ... } links;   set by NAME__attach
 *       struct NAME__rodata *rodata;  .rodata/.data/.bss (and .data.X,
 *       ...                           .rodata.X) as C structs from BTF
 *   };
 *   NAME__open(), NAME__open_opts(), NAME__load(), NAME__load_opts(),
 *   NAME__open_and_load(), NAME__attach(), NAME__detach(), NAME__destroy(),
 *   NAME__elf_bytes()                 the object, embedded in the header
 *
 * The section structs are laid out from the object: each global variable
 * at its symbol's offset (the BTF DATASEC of an unlinked object carries no
 * offsets), padding where natural alignment would not reach it, the types
 * printed by libbpf's btf_dump with const/volatile stripped (so knobs can
 * be written before load). Static variables are not part of the layout,
 * as in bpftool. The section pointers follow the object: the initial
 * image after open, the live storage after load
 * (bpfrt_object_global_data). */
#include "cli.h"
#include "bpfrt/bpfrt.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gen_var {
	const char *name;
	uint32_t type;   /* BTF type of the variable (under the VAR) */
	uint64_t off;    /* from its ELF symbol */
	uint64_t size;
};

struct gen_sec {
	const char *name;     /* ".bss" */
	char ident[64];       /* "bss" */
	size_t idx;           /* ELF section index */
	uint64_t size;
	struct gen_var *vars; /* global variables by offset */
	size_t var_cnt;
};

struct gen_map {
	char ident[64];       /* field of obj->maps: "bss", "counts" */
	char *name;           /* the map's name: ".bss", "counts" */
};

struct gen {
	const char *path;
	char name[64];        /* the skeleton's identifier */
	unsigned char *file;  /* the object's bytes, embedded */
	size_t file_len;
	char *image;          /* libelf's copy */
	Elf *elf;
	size_t shstrndx;
	Elf_Data *symtab;
	size_t sym_cnt, strtab;
	struct btf *btf;
	struct bpfrt_object *obj;
	struct gen_map *maps; /* the object's maps */
	size_t map_cnt;
	struct gen_sec *secs; /* global-data sections */
	size_t sec_cnt;
	FILE *out;
};

static int gen_err(const struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int gen_err(const struct gen *g, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bpfrt gen skeleton: %s: ", g->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* A C identifier from a file or section name: ".data.foo" -> "data_foo". */
static void ident_of(const char *s, char *out, size_t len)
{
	size_t n = 0;

	while (*s == '.')
		s++;
	if (!*s || isdigit((unsigned char)*s))
		out[n++] = '_';
	for (; *s && n + 1 < len; s++)
		out[n++] = isalnum((unsigned char)*s) ? *s : '_';
	out[n] = '\0';
}

static bool is_data_sec(const char *name)
{
	/* the sections the loader makes global-data maps of */
	return !strcmp(name, ".data") || !strcmp(name, ".bss") || !strcmp(name, ".rodata") ||
	       !strncmp(name, ".rodata.", 8) || !strncmp(name, ".data.", 6);
}

static int read_object(struct gen *g)
{
	FILE *f = fopen(g->path, "rb");
	long n;

	if (!f)
		return gen_err(g, "%s", strerror(errno));
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return gen_err(g, "cannot read: %s", strerror(errno));
	}
	g->file_len = (size_t)n;
	g->file = malloc(g->file_len + 1);
	g->image = malloc(g->file_len + 1);
	if (!g->file || !g->image || fread(g->file, 1, g->file_len, f) != g->file_len) {
		fclose(f);
		return gen_err(g, "cannot read %zu bytes", g->file_len);
	}
	fclose(f);
	memcpy(g->image, g->file, g->file_len);
	return 0;
}

static const char *sym_name(const struct gen *g, const GElf_Sym *sym)
{
	return elf_strptr(g->elf, g->strtab, sym->st_name);
}

static int add_map(struct gen *g, const char *name)
{
	struct gen_map *m = realloc(g->maps, (g->map_cnt + 1) * sizeof(*m));

	if (!m)
		return gen_err(g, "out of memory");
	g->maps = m;
	m = &g->maps[g->map_cnt];
	ident_of(name, m->ident, sizeof(m->ident));
	if (!(m->name = strdup(name)))
		return gen_err(g, "out of memory");
	g->map_cnt++;
	return 0;
}

/* The maps (BTF-defined, legacy, global data) and the global-data
 * sections, as the loader finds them. */
static int scan_elf(struct gen *g)
{
	Elf_Scn *scn = NULL;
	size_t nsec;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return gen_err(g, "libelf too old");
	g->elf = elf_memory(g->image, g->file_len);
	if (!g->elf || elf_kind(g->elf) != ELF_K_ELF || elf_getshdrnum(g->elf, &nsec) ||
	    elf_getshdrstrndx(g->elf, &g->shstrndx))
		return gen_err(g, "not an ELF file");
	g->secs = calloc(nsec ? nsec : 1, sizeof(*g->secs));
	if (!g->secs)
		return gen_err(g, "out of memory");
	while ((scn = elf_nextscn(g->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(g->elf, g->shstrndx, sh.sh_name)))
			return gen_err(g, "bad section header");
		if (sh.sh_type == SHT_SYMTAB) {
			g->symtab = elf_getdata(scn, NULL);
			g->sym_cnt = g->symtab && sh.sh_entsize ? g->symtab->d_size / sh.sh_entsize : 0;
			g->strtab = sh.sh_link;
		} else if (!strcmp(name, ".BTF")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d && d->d_buf && d->d_size)
				g->btf = btf__new(d->d_buf, (uint32_t)d->d_size);
		} else if (is_data_sec(name) && sh.sh_size && !(sh.sh_flags & SHF_EXECINSTR)) {
			struct gen_sec *s = &g->secs[g->sec_cnt++];

			s->name = name;
			s->idx = elf_ndxscn(scn);
			s->size = sh.sh_size;
			ident_of(name, s->ident, sizeof(s->ident));
		}
	}
	if (!g->symtab)
		return gen_err(g, "no symbol table");
	/* map definitions: the objects in .maps and maps */
	for (size_t i = 1; i < g->sym_cnt; i++) {
		GElf_Sym sym;
		Elf_Scn *s;
		GElf_Shdr sh;
		const char *sec, *name;

		if (!gelf_getsym(g->symtab, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE || GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
		    !(s = elf_getscn(g->elf, sym.st_shndx)) || !gelf_getshdr(s, &sh) ||
		    !(sec = elf_strptr(g->elf, g->shstrndx, sh.sh_name)))
			continue;
		if (strcmp(sec, ".maps") && strcmp(sec, "maps"))
			continue;
		name = sym_name(g, &sym);
		if (name && *name && add_map(g, name))
			return -1;
	}
	for (size_t i = 0; i < g->sec_cnt; i++)
		if (add_map(g, g->secs[i].name))
			return -1;
	return 0;
}

static int cmp_var(const void *a, const void *b)
{
	const struct gen_var *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The global variables of s from its BTF DATASEC, at their symbols'
 * offsets. A section without BTF gets no struct. */
static int collect_vars(struct gen *g, struct gen_sec *s)
{
	const struct btf_type *sec = NULL;
	const struct btf_var_secinfo *vsi;
	int id;

	if (!g->btf)
		return 0;
	id = btf__find_by_name_kind(g->btf, s->name, BTF_KIND_DATASEC);
	if (id <= 0)
		return 0;
	sec = btf__type_by_id(g->btf, (uint32_t)id);
	vsi = btf_var_secinfos(sec);
	s->vars = calloc(btf_vlen(sec) + 1, sizeof(*s->vars));
	if (!s->vars)
		return gen_err(g, "out of memory");
	for (int i = 0; i < btf_vlen(sec); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(g->btf, vsi->type);
		const char *name;
		struct gen_var *v;
		long long size;
		bool found = false;

		if (!var || !btf_is_var(var))
			return gen_err(g, "section %s: BTF entry %d is not a variable", s->name, i);
		if (btf_var(var)->linkage != BTF_VAR_GLOBAL_ALLOCATED)
			continue; /* static: not part of the skeleton */
		name = btf__name_by_offset(g->btf, var->name_off);
		size = btf__resolve_size(g->btf, var->type);
		if (!name || size < 0)
			return gen_err(g, "section %s: variable %d has no name or size", s->name, i);
		v = &s->vars[s->var_cnt];
		for (size_t j = 1; j < g->sym_cnt && !found; j++) {
			GElf_Sym sym;
			const char *sn;

			if (gelf_getsym(g->symtab, (int)j, &sym) && sym.st_shndx == s->idx &&
			    GELF_ST_TYPE(sym.st_info) == STT_OBJECT &&
			    (sn = sym_name(g, &sym)) && !strcmp(sn, name)) {
				v->off = sym.st_value;
				found = true;
			}
		}
		if (!found)
			return gen_err(g, "section %s: variable %s has no symbol", s->name, name);
		if (v->off + (uint64_t)size > s->size)
			return gen_err(g, "section %s: variable %s lies past the section's end",
				       s->name, name);
		v->name = name;
		v->type = var->type;
		v->size = (uint64_t)size;
		s->var_cnt++;
	}
	qsort(s->vars, s->var_cnt, sizeof(*s->vars), cmp_var);
	return 0;
}

static void btf_printf(void *ctx, const char *fmt, va_list args)
{
	vfprintf(ctx, fmt, args);
}

/* The named types the sections' variables use, then one struct per
 * section. */
static int emit_sections(struct gen *g)
{
	struct btf_dump *d;
	bool any = false;
	int err = 0;

	for (size_t i = 0; i < g->sec_cnt; i++)
		any |= g->secs[i].var_cnt > 0;
	if (!any)
		return 0;
	d = btf_dump__new(g->btf, btf_printf, g->out, NULL);
	if (!d)
		return gen_err(g, "btf_dump: %s", strerror(errno));
	fprintf(g->out, "/* The types of the global variables (define %s__SKEL_NO_TYPES when\n"
			" * your own headers define them already). */\n"
			"#ifndef %s__SKEL_NO_TYPES\n", g->name, g->name);
	for (size_t i = 0; i < g->sec_cnt && !err; i++)
		for (size_t j = 0; j < g->secs[i].var_cnt && !err; j++)
			err = btf_dump__dump_type(d, g->secs[i].vars[j].type);
	fprintf(g->out, "#endif\n\n");
	for (size_t i = 0; i < g->sec_cnt && !err; i++) {
		struct gen_sec *s = &g->secs[i];
		uint64_t off = 0;
		int pad = 0;

		if (!s->var_cnt)
			continue;
		fprintf(g->out, "struct %s__%s {\n", g->name, s->ident);
		for (size_t j = 0; j < s->var_cnt && !err; j++) {
			struct gen_var *v = &s->vars[j];
			int align = btf__align_of(g->btf, v->type);
			uint64_t natural;
			DECLARE_LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o, .field_name = v->name,
					    .indent_level = 1, .strip_mods = true);

			if (align <= 0)
				return btf_dump__free(d), gen_err(g, "%s: no alignment", v->name);
			if (v->off < off)
				return btf_dump__free(d),
				       gen_err(g, "section %s: variables %s and the one before overlap",
					       s->name, v->name);
			natural = (off + (uint64_t)align - 1) / (uint64_t)align * (uint64_t)align;
			if (natural != v->off)
				fprintf(g->out, "\tchar __pad%d[%llu];\n", pad++,
					(unsigned long long)(v->off - off));
			fputc('\t', g->out);
			err = btf_dump__emit_type_decl(d, v->type, &o);
			fprintf(g->out, ";\n");
			off = v->off + v->size;
		}
		fprintf(g->out, "};\n\n");
	}
	btf_dump__free(d);
	return err ? gen_err(g, "btf_dump: %s", strerror(-err)) : 0;
}

/* Offsets checked by the compiler that builds the user's program: the
 * host's layout of each struct is the object's. */
static void emit_layout_checks(struct gen *g)
{
	for (size_t i = 0; i < g->sec_cnt; i++)
		for (size_t j = 0; j < g->secs[i].var_cnt; j++)
			fprintf(g->out, "BPFRT_SKEL_ASSERT(offsetof(struct %s__%s, %s) == %llu, "
					"\"%s: %s at offset %llu of %s\");\n",
				g->name, g->secs[i].ident, g->secs[i].vars[j].name,
				(unsigned long long)g->secs[i].vars[j].off, g->name,
				g->secs[i].vars[j].name, (unsigned long long)g->secs[i].vars[j].off,
				g->secs[i].name);
}

static void emit_struct(struct gen *g)
{
	const char *n = g->name;
	struct bpfrt_prog *p;

	fprintf(g->out, "struct %s {\n\tstruct bpfrt_object *obj;\n", n);
	if (g->map_cnt) {
		fprintf(g->out, "\tstruct { /* set by %s__load: maps exist once loaded */\n", n);
		for (size_t i = 0; i < g->map_cnt; i++)
			fprintf(g->out, "\t\tstruct bpfrt_map *%s;\n", g->maps[i].ident);
		fprintf(g->out, "\t} maps;\n");
	}
	if (bpfrt_object_next_prog(g->obj, NULL)) {
		fprintf(g->out, "\tstruct {\n");
		for (p = bpfrt_object_next_prog(g->obj, NULL); p; p = bpfrt_object_next_prog(g->obj, p))
			fprintf(g->out, "\t\tstruct bpfrt_prog *%s;\n", bpfrt_prog_name(p));
		fprintf(g->out, "\t} progs;\n\tstruct { /* %s__attach, or your own bpfrt_prog_attach */\n", n);
		for (p = bpfrt_object_next_prog(g->obj, NULL); p; p = bpfrt_object_next_prog(g->obj, p))
			fprintf(g->out, "\t\tstruct bpfrt_link *%s;\n", bpfrt_prog_name(p));
		fprintf(g->out, "\t} links;\n");
	}
	for (size_t i = 0; i < g->sec_cnt; i++)
		if (g->secs[i].var_cnt)
			fprintf(g->out, "\tstruct %s__%s *%s;\n", n, g->secs[i].ident, g->secs[i].ident);
	fprintf(g->out, "};\n\n");
}

/* Points the skeleton's handles at the object: programs, the sections,
 * and after load the maps. */
static void emit_bind(struct gen *g)
{
	const char *n = g->name;
	struct bpfrt_prog *p;

	fprintf(g->out,
		"static inline int %s__bind(struct %s *obj, int loaded)\n{\n"
		"\tvoid *sec;\n\n\t(void)sec;\n\t(void)loaded;\n", n, n);
	for (p = bpfrt_object_next_prog(g->obj, NULL); p; p = bpfrt_object_next_prog(g->obj, p))
		fprintf(g->out, "\tif (!(obj->progs.%s = bpfrt_object_find_prog(obj->obj, \"%s\")))\n"
				"\t\treturn -ENOENT;\n", bpfrt_prog_name(p), bpfrt_prog_name(p));
	for (size_t i = 0; i < g->sec_cnt; i++) {
		if (!g->secs[i].var_cnt)
			continue;
		fprintf(g->out, "\tif (!(sec = bpfrt_object_global_data(obj->obj, \"%s\", NULL)))\n"
				"\t\treturn -ENOENT;\n"
				"\tobj->%s = (struct %s__%s *)sec;\n",
			g->secs[i].name, g->secs[i].ident, n, g->secs[i].ident);
	}
	if (g->map_cnt) {
		fprintf(g->out, "\tif (!loaded)\n\t\treturn 0;\n");
		for (size_t i = 0; i < g->map_cnt; i++)
			fprintf(g->out, "\tif (!(obj->maps.%s = bpfrt_object_find_map(obj->obj, \"%s\")))\n"
					"\t\treturn -ENOENT;\n", g->maps[i].ident, g->maps[i].name);
	}
	fprintf(g->out, "\treturn 0;\n}\n\n");
}

static void emit_functions(struct gen *g)
{
	const char *n = g->name;
	struct bpfrt_prog *p;
	bool has_progs = bpfrt_object_next_prog(g->obj, NULL) != NULL;

	fprintf(g->out, "static inline const void *%s__elf_bytes(size_t *sz);\n\n", n);
	emit_bind(g);
	fprintf(g->out,
		"/* Destroys the links %s__attach made (and any you stored in obj->links). */\n"
		"static inline void %s__detach(struct %s *obj)\n{\n", n, n, n);
	if (has_progs)
		for (p = bpfrt_object_next_prog(g->obj, NULL); p; p = bpfrt_object_next_prog(g->obj, p))
			fprintf(g->out, "\tbpfrt_link_destroy(obj->links.%s);\n"
					"\tobj->links.%s = NULL;\n", bpfrt_prog_name(p), bpfrt_prog_name(p));
	else
		fprintf(g->out, "\t(void)obj;\n");
	fprintf(g->out, "}\n\n"
		"static inline void %s__destroy(struct %s *obj)\n{\n"
		"\tif (!obj)\n\t\treturn;\n"
		"\t%s__detach(obj);\n"
		"\tbpfrt_object_close(obj->obj);\n"
		"\tfree(obj);\n}\n\n", n, n, n);
	fprintf(g->out,
		"/* Opens the embedded object (named \"%s\" unless opts name it). NULL with\n"
		" * errno set on failure (bpfrt_last_error() says why). */\n"
		"static inline struct %s *%s__open_opts(const struct bpfrt_object_open_opts *opts)\n{\n"
		"\tstruct bpfrt_object_open_opts defaults;\n"
		"\tstruct %s *obj = (struct %s *)calloc(1, sizeof(*obj));\n"
		"\tconst void *elf;\n\tsize_t sz;\n\tint err;\n\n"
		"\tif (!obj) {\n\t\terrno = ENOMEM;\n\t\treturn NULL;\n\t}\n"
		"\tmemset(&defaults, 0, sizeof(defaults));\n"
		"\tif (opts)\n\t\tdefaults = *opts; /* the same header's struct */\n"
		"\telse\n\t\tdefaults.sz = sizeof(defaults);\n"
		"\tif (!defaults.name)\n\t\tdefaults.name = \"%s\";\n"
		"\topts = &defaults;\n"
		"\telf = %s__elf_bytes(&sz);\n"
		"\terr = bpfrt_object_open_mem(elf, sz, opts, &obj->obj);\n"
		"\tif (!err)\n\t\terr = %s__bind(obj, 0);\n"
		"\tif (err) {\n\t\t%s__destroy(obj);\n\t\terrno = -err;\n\t\treturn NULL;\n\t}\n"
		"\treturn obj;\n}\n\n",
		n, n, n, n, n, n, n, n, n);
	fprintf(g->out,
		"static inline struct %s *%s__open(void)\n{\n\treturn %s__open_opts(NULL);\n}\n\n"
		"/* Loads (maps, verification, JIT as opts say; NULL: interpreted); 0 or\n"
		" * -errno. The section pointers move to the live storage. */\n"
		"static inline int %s__load_opts(struct %s *obj, const struct bpfrt_object_load_opts *opts)\n{\n"
		"\tint err = bpfrt_object_load(obj->obj, opts);\n\n"
		"\treturn err ? err : %s__bind(obj, 1);\n}\n\n"
		"static inline int %s__load(struct %s *obj)\n{\n\treturn %s__load_opts(obj, NULL);\n}\n\n"
		"static inline struct %s *%s__open_and_load(void)\n{\n"
		"\tstruct %s *obj = %s__open();\n\tint err;\n\n"
		"\tif (!obj)\n\t\treturn NULL;\n"
		"\terr = %s__load(obj);\n"
		"\tif (err) {\n\t\t%s__destroy(obj);\n\t\terrno = -err;\n\t\treturn NULL;\n\t}\n"
		"\treturn obj;\n}\n\n",
		n, n, n, n, n, n, n, n, n, n, n, n, n, n, n);
	fprintf(g->out,
		"/* Attaches every program of a kind that attaches in this process and\n"
		" * has no link yet (attach one with options of your own first to keep\n"
		" * it out); 0 or the first -errno (the links made so far stay). */\n"
		"static inline int %s__attach(struct %s *obj)\n{\n", n, n);
	if (has_progs) {
		fprintf(g->out, "\tstruct bpfrt_prog *progs[] = {\n");
		for (p = bpfrt_object_next_prog(g->obj, NULL); p; p = bpfrt_object_next_prog(g->obj, p))
			fprintf(g->out, "\t\tobj->progs.%s,\n", bpfrt_prog_name(p));
		fprintf(g->out, "\t};\n\tstruct bpfrt_link **links[] = {\n");
		for (p = bpfrt_object_next_prog(g->obj, NULL); p; p = bpfrt_object_next_prog(g->obj, p))
			fprintf(g->out, "\t\t&obj->links.%s,\n", bpfrt_prog_name(p));
		fprintf(g->out,
			"\t};\n\n"
			"\tfor (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {\n"
			"\t\tconst struct bpfrt_prog_kind_info *kind =\n"
			"\t\t\tbpfrt_prog_kind_info(bpfrt_prog_kind(progs[i]));\n"
			"\t\tint err;\n\n"
			"\t\tif (*links[i] || !kind || !kind->attachable)\n\t\t\tcontinue;\n"
			"\t\terr = bpfrt_prog_attach(progs[i], NULL, links[i]);\n"
			"\t\tif (err)\n\t\t\treturn err;\n\t}\n");
	} else {
		fprintf(g->out, "\t(void)obj;\n");
	}
	fprintf(g->out, "\treturn 0;\n}\n\n");
}

/* The object as one string literal, 16 bytes a line. */
static void emit_elf_bytes(struct gen *g)
{
	fprintf(g->out, "static inline const void *%s__elf_bytes(size_t *sz)\n{\n"
			"\tstatic const char data[] =\n", g->name);
	for (size_t i = 0; i < g->file_len; i += 16) {
		fprintf(g->out, "\t\t\"");
		for (size_t j = i; j < g->file_len && j < i + 16; j++)
			fprintf(g->out, "\\x%02x", g->file[j]);
		fprintf(g->out, "\"\n");
	}
	if (!g->file_len)
		fprintf(g->out, "\t\t\"\"\n");
	fprintf(g->out, "\t\t;\n\n\t*sz = sizeof(data) - 1;\n\treturn data;\n}\n\n");
}

static int generate(struct gen *g)
{
	char guard[80];
	int err;

	for (size_t i = 0; i < g->sec_cnt; i++)
		if (collect_vars(g, &g->secs[i]))
			return -1;
	snprintf(guard, sizeof(guard), "%s", g->name);
	for (char *c = guard; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	fprintf(g->out,
		"/* Generated by `bpfrt gen skeleton %s`: do not edit. The BPF object is\n"
		" * embedded; rebuild the header when it changes. */\n"
		"#ifndef BPFRT_SKEL_%s_H\n#define BPFRT_SKEL_%s_H\n\n"
		"#include <errno.h>\n#include <stddef.h>\n#include <stdlib.h>\n#include <string.h>\n"
		"#include <bpfrt/bpfrt.h>\n\n"
		"#ifndef BPFRT_SKEL_ASSERT\n#ifdef __cplusplus\n"
		"#define BPFRT_SKEL_ASSERT(cond, msg) static_assert(cond, msg)\n"
		"#else\n#define BPFRT_SKEL_ASSERT(cond, msg) _Static_assert(cond, msg)\n#endif\n#endif\n\n",
		g->path, guard, guard);
	err = emit_sections(g);
	if (err)
		return err;
	emit_struct(g);
	emit_layout_checks(g);
	fprintf(g->out, "\n");
	emit_functions(g);
	emit_elf_bytes(g);
	fprintf(g->out, "#endif\n");
	return 0;
}

static void gen_free(struct gen *g)
{
	for (size_t i = 0; i < g->sec_cnt; i++)
		free(g->secs[i].vars);
	free(g->secs);
	for (size_t i = 0; i < g->map_cnt; i++)
		free(g->maps[i].name);
	free(g->maps);
	btf__free(g->btf);
	if (g->elf)
		elf_end(g->elf);
	bpfrt_object_close(g->obj);
	free(g->image);
	free(g->file);
}

static int gen_skeleton(int argc, char **argv)
{
	struct gen g = { 0 };
	const char *name = NULL;
	char *text = NULL;
	size_t text_len = 0;
	int err;

	for (int i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "name") || !strcmp(argv[i], "--name")) && i + 1 < argc)
			name = argv[++i];
		else if (argv[i][0] != '-' && !g.path)
			g.path = argv[i];
		else
			return fprintf(stderr, "usage: bpfrt gen skeleton OBJ [name NAME]\n"), 2;
	}
	if (!g.path)
		return fprintf(stderr, "usage: bpfrt gen skeleton OBJ [name NAME]\n"), 2;
	if (name) {
		char id[64];

		ident_of(name, id, sizeof(id));
		if (strcmp(id, name) || strlen(name) >= sizeof(g.name))
			return fprintf(stderr, "bpfrt gen skeleton: name '%s' is not a C identifier "
					       "of at most 63 characters\n", name), 2;
		snprintf(g.name, sizeof(g.name), "%s", name);
	} else {
		/* as bpftool: the file name without ".o", made an identifier
		 * (count.bpf.o: count_bpf) */
		const char *base = strrchr(g.path, '/');
		char tmp[64];
		size_t len;

		base = base ? base + 1 : g.path;
		snprintf(tmp, sizeof(tmp), "%s", base);
		len = strlen(tmp);
		if (len > 2 && !strcmp(tmp + len - 2, ".o"))
			tmp[len - 2] = '\0';
		ident_of(tmp, g.name, sizeof(g.name));
	}
	/* the loader's view first: an object bpfrt cannot open gets no header */
	err = bpfrt_object_open(g.path, NULL, &g.obj);
	if (err) {
		fprintf(stderr, "bpfrt gen skeleton: %s\n", bpfrt_last_error());
		g.obj = NULL;
		gen_free(&g);
		return 1;
	}
	g.out = open_memstream(&text, &text_len);
	err = !g.out || read_object(&g) || scan_elf(&g) || generate(&g);
	if (g.out && fclose(g.out))
		err = 1;
	if (!err && (fwrite(text, 1, text_len, stdout) != text_len || fflush(stdout))) {
		fprintf(stderr, "bpfrt gen skeleton: cannot write the header: %s\n", strerror(errno));
		err = 1;
	}
	free(text);
	gen_free(&g);
	return err ? 1 : 0;
}

int cli_gen(int argc, char **argv)
{
	if (argc >= 1 && !strcmp(argv[0], "skeleton"))
		return gen_skeleton(argc - 1, argv + 1);
	fprintf(stderr, "usage: bpfrt gen skeleton OBJ [name NAME]\n");
	return 2;
}
