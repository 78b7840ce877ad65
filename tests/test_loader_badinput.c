/* Loader bad input: truncated and corrupted ELF, missing or
 * broken BTF, unknown map types, oversized keys, unsupported relocations,
 * references to maps and variables that are not defined, unknown section
 * names. Each must fail with a negative errno and a message naming what is
 * wrong (section, offset, symbol), without crashing or leaking (the ASan
 * build runs this too), and without disturbing objects already loaded.
 *
 * Clang-built bad objects are in tests/progs/bad_*.bpf.c; the rest are
 * good objects patched here through the ELF64 headers of <elf.h>. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"

#include <elf.h>
#include <linux/btf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t host_add(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return (uint32_t)((int)a + (int)b);
}

static void register_kfunc(const char *name)
{
	static const struct bpfrt_helper k = {
		.fn = host_add,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};

	CHECK(bpfrt_kfunc_register(name, &k) >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
}

/* ---- ELF images patched in memory ---------------------------------------- */

struct img {
	char *buf;
	size_t len;
	char path[32];
};

static bool img_read(struct img *im, const char *name)
{
	FILE *f = fopen(tl_prog_path(name), "rb");

	memset(im, 0, sizeof(*im));
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	im->len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	im->buf = malloc(im->len);
	if (im->buf && fread(im->buf, 1, im->len, f) != im->len) {
		free(im->buf);
		im->buf = NULL;
	}
	fclose(f);
	return im->buf && im->len > sizeof(Elf64_Ehdr);
}

static void img_free(struct img *im)
{
	if (im->path[0])
		unlink(im->path);
	free(im->buf);
}

/* Writes the image (its first len bytes) to a temporary file. */
static const char *img_write(struct img *im, size_t len)
{
	FILE *f;

	if (!im->path[0]) {
		int fd;

		strcpy(im->path, "/tmp/bpfrt-badin-XXXXXX");
		fd = mkstemp(im->path);
		if (fd < 0)
			return NULL;
		close(fd);
	}
	f = fopen(im->path, "wb");
	if (!f)
		return NULL;
	fwrite(im->buf, 1, len, f);
	fclose(f);
	return im->path;
}

static Elf64_Ehdr *ehdr(struct img *im)
{
	return (Elf64_Ehdr *)im->buf;
}

static Elf64_Shdr *shdr(struct img *im, unsigned idx)
{
	return (Elf64_Shdr *)(im->buf + ehdr(im)->e_shoff) + idx;
}

static const char *sec_name(struct img *im, unsigned idx)
{
	return im->buf + shdr(im, ehdr(im)->e_shstrndx)->sh_offset + shdr(im, idx)->sh_name;
}

static int find_sec(struct img *im, const char *name)
{
	for (unsigned i = 1; i < ehdr(im)->e_shnum; i++)
		if (!strcmp(sec_name(im, i), name))
			return (int)i;
	return -1;
}

static int find_sec_type(struct img *im, uint32_t type)
{
	for (unsigned i = 1; i < ehdr(im)->e_shnum; i++)
		if (shdr(im, i)->sh_type == type)
			return (int)i;
	return -1;
}

static Elf64_Sym *find_sym(struct img *im, const char *name)
{
	Elf64_Shdr *st = shdr(im, (unsigned)find_sec_type(im, SHT_SYMTAB));
	const char *strs = im->buf + shdr(im, st->sh_link)->sh_offset;
	Elf64_Sym *syms = (Elf64_Sym *)(im->buf + st->sh_offset);

	for (size_t i = 1; i < st->sh_size / sizeof(*syms); i++)
		if (!strcmp(strs + syms[i].st_name, name))
			return &syms[i];
	return NULL;
}

/* The first relocation of section `name` (from its .rel<name>). */
static Elf64_Rel *first_rel(struct img *im, const char *name)
{
	char rel_name[256];
	int idx;

	snprintf(rel_name, sizeof(rel_name), ".rel%s", name);
	idx = find_sec(im, rel_name);
	if (idx < 0 || !shdr(im, (unsigned)idx)->sh_size)
		return NULL;
	return (Elf64_Rel *)(im->buf + shdr(im, (unsigned)idx)->sh_offset);
}

/* ---- expectations ---------------------------------------------------------- */

/* Opens and loads path; returns the first error (0 if both succeed). */
static int open_load(const char *path, bool jit)
{
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(path, NULL, &obj);

	if (!err) {
		err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
			.sz = sizeof(struct bpfrt_object_load_opts), .jit = jit });
		if (err) {
			/* A failed load leaves nothing behind (maps included). */
			CHECK(bpfrt_object_next_map(obj, NULL) == NULL);
		}
	} else {
		CHECK(obj == NULL);
	}
	bpfrt_object_close(obj);
	return err;
}

/* Both engines' loads fail with err and a message holding every one of
 * the (NULL-terminated) fragments. */
#define EXPECT_FAIL(path, err, ...) expect_fail(__LINE__, path, err, __VA_ARGS__, NULL)
static void expect_fail(int line, const char *path, int want, ...)
{
	for (int jit = 0; jit < 2; jit++) {
		int err = open_load(path, jit);
		const char *msg = bpfrt_last_error();
		const char *frag;
		va_list ap;

		CHECK(err == want, "line %d (%s): got %d (%s), want %d", line,
		      jit ? "jit" : "interp", err, msg, want);
		va_start(ap, want);
		while ((frag = va_arg(ap, const char *)))
			CHECK(strstr(msg, frag), "line %d: '%s' not in: %s", line, frag, msg);
		va_end(ap);
	}
}

/* ---- clang-built bad objects --------------------------------------------------- */

TEST(missing_btf_for_maps)
{
	/* tests/progs/maps.bpf.c built without -g (mk/test-objects.mk). */
	EXPECT_FAIL(tl_prog_path("maps_nobtf.bpf.o"), -EINVAL, ".maps needs BTF",
		    "no .BTF section");
}

TEST(unknown_map_type)
{
	EXPECT_FAIL(tl_prog_path("bad_map_type.bpf.o"), -EINVAL, "map weird",
		    "unknown map type 4242");
}

TEST(oversized_key)
{
	EXPECT_FAIL(tl_prog_path("bad_key_size.bpf.o"), -E2BIG, "map too_wide",
		    "key_size 513 larger than 512");
}

TEST(unsupported_program_type_named)
{
	EXPECT_FAIL(tl_prog_path("bad_prog_type.bpf.o"), -EOPNOTSUPP, "in_odd_section",
		    "section 'cgroup/connect4/extra' is not one of libbpf's names for "
		    "BPF_PROG_TYPE_CGROUP_SOCK_ADDR programs");
}

TEST(unknown_section_name)
{
	EXPECT_FAIL(tl_prog_path("bad_section.bpf.o"), -EOPNOTSUPP, "in_unknown_section",
		    "unknown section name 'frobnicate/now'");
}

TEST(missing_map)
{
	EXPECT_FAIL(tl_prog_path("bad_extern_map.bpf.o"), -ENOENT,
		    "section tp/bpfrt/bad_extern_map offset ", "symbol elsewhere_map", "undefined");
}

TEST(missing_variable)
{
	EXPECT_FAIL(tl_prog_path("bad_extern_var.bpf.o"), -ENOENT,
		    "section tp/bpfrt/bad_extern_var offset 0 symbol elsewhere_var", "undefined");
}

/* ---- patched good objects -------------------------------------------------- */

TEST(btf_renamed_away_or_broken)
{
	struct img im;
	int btf;

	REQUIRE(img_read(&im, "maps.bpf.o"));
	btf = find_sec(&im, ".BTF");
	REQUIRE(btf > 0);
	/* ".BTF" -> "BTF.ext" (the tail of ".BTF.ext" in the same table). */
	shdr(&im, (unsigned)btf)->sh_name = shdr(&im, (unsigned)find_sec(&im, ".BTF.ext"))->sh_name + 1;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, ".maps needs BTF", "no .BTF section");
	img_free(&im);

	REQUIRE(img_read(&im, "maps.bpf.o"));
	memset(im.buf + shdr(&im, (unsigned)btf)->sh_offset, 0xa5, 4); /* magic */
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, ".BTF is malformed");
	img_free(&im);
}

/* The raw .BTF section of an image, with each type's place by id. */
struct btf_img {
	char *types, *strs;
	uint32_t n;            /* ids 1..n-1 */
	uint32_t off[4096];
};

static uint32_t btf_extra(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG: return 4;
	case BTF_KIND_ARRAY: return sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC: return vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64: return vlen * 12;
	default: return 0;
	}
}

static bool btf_img_parse(struct img *im, struct btf_img *b)
{
	int sec = find_sec(im, ".BTF");
	struct btf_header *h;
	uint32_t pos = 0;

	if (sec < 0)
		return false;
	h = (struct btf_header *)(im->buf + shdr(im, (unsigned)sec)->sh_offset);
	b->types = (char *)h + h->hdr_len + h->type_off;
	b->strs = (char *)h + h->hdr_len + h->str_off;
	for (b->n = 1; pos < h->type_len && b->n < 4096; b->n++) {
		b->off[b->n] = pos;
		pos += sizeof(struct btf_type) +
		       btf_extra((struct btf_type *)(b->types + pos));
	}
	return pos == h->type_len;
}

static struct btf_type *btf_at(struct btf_img *b, uint32_t id)
{
	return id && id < b->n ? (struct btf_type *)(b->types + b->off[id]) : NULL;
}

/* The definition (struct) of the first map in .maps, its name and its
 * variable. */
static struct btf_type *first_map_def(struct btf_img *b, const char **name,
				      struct btf_type **var_out)
{
	for (uint32_t id = 1; id < b->n; id++) {
		struct btf_type *t = btf_at(b, id), *var;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_DATASEC || strcmp(b->strs + t->name_off, ".maps"))
			continue;
		var = btf_at(b, ((struct btf_var_secinfo *)(t + 1))->type);
		if (!var)
			return NULL;
		*name = b->strs + var->name_off;
		*var_out = var;
		return btf_at(b, var->type);
	}
	return NULL;
}

static uint32_t member_type(struct btf_img *b, struct btf_type *def, const char *name)
{
	struct btf_member *m = (struct btf_member *)(def + 1);

	for (uint32_t i = 0; i < BTF_INFO_VLEN(def->info); i++)
		if (!strcmp(b->strs + m[i].name_off, name))
			return m[i].type;
	return 0;
}

static void set_type(struct btf_type *t, uint32_t kind, uint32_t to)
{
	t->info = kind << 24; /* vlen 0, kind_flag 0 */
	t->type = to;
}

/* A map definition whose BTF type chain comes back to itself: refused
 * quickly (it used to be followed for ever), naming the map and field. */
TEST(btf_type_cycles_in_a_map_definition)
{
	enum { SELF, PAIR, VIA_TYPEDEF, VIA_PTR, DEF } kinds[] = { SELF, PAIR, VIA_TYPEDEF,
								VIA_PTR, DEF };

	alarm(60); /* a hang fails the test instead of stopping the suite */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct btf_img *b = calloc(1, sizeof(*b));
		struct btf_type *def, *var = NULL;
		const char *map = NULL;
		uint32_t type, max, key;
		struct img im;
		char want[64];

		REQUIRE(b && img_read(&im, "maps.bpf.o") && btf_img_parse(&im, b));
		def = first_map_def(b, &map, &var);
		REQUIRE(def && map && var);
		type = member_type(b, def, "type");
		max = member_type(b, def, "max_entries");
		key = member_type(b, def, "key");
		REQUIRE(btf_at(b, type) && btf_at(b, max) && btf_at(b, key));
		snprintf(want, sizeof(want), "map %s: %sfield '%s'", map,
			 kinds[i] == VIA_PTR ? "bad or unknown " : "",
			 kinds[i] == VIA_TYPEDEF ? "key" : "type");
		switch (kinds[i]) {
		case SELF:           /* type: const -> itself */
			set_type(btf_at(b, type), BTF_KIND_CONST, type);
			EXPECT_FAIL(img_write(&im, im.len), -ELOOP, want, "loops");
			break;
		case PAIR:           /* type: volatile -> const -> volatile */
			set_type(btf_at(b, type), BTF_KIND_VOLATILE, max);
			set_type(btf_at(b, max), BTF_KIND_CONST, type);
			EXPECT_FAIL(img_write(&im, im.len), -ELOOP, want, "loops");
			break;
		case VIA_TYPEDEF: {  /* key: pointer to a typedef of itself */
			uint32_t td = btf_at(b, key)->type;

			REQUIRE(BTF_INFO_KIND(btf_at(b, td)->info) == BTF_KIND_TYPEDEF);
			btf_at(b, td)->type = td;
			EXPECT_FAIL(img_write(&im, im.len), -ELOOP, want, "loops");
			break;
		}
		case DEF:            /* the map variable's type: a const of itself */
			set_type(btf_at(b, type), BTF_KIND_CONST, type);
			var->type = type;
			snprintf(want, sizeof(want), "map %s: the BTF type chain of its definition",
				 map);
			EXPECT_FAIL(img_write(&im, im.len), -ELOOP, want, "loops");
			break;
		case VIA_PTR:        /* type: pointer to itself, not to an array */
			btf_at(b, type)->type = type;
			EXPECT_FAIL(img_write(&im, im.len), -EINVAL, want);
			break;
		}
		img_free(&im);
		free(b);
	}
	alarm(0);
}

TEST(unsupported_relocation)
{
	static const unsigned types[] = { 2 /* R_BPF_64_ABS64 */, 3 /* ABS32 */,
					  4 /* NODYLD32 */, 0x7f };
	struct img im;
	char want[96];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		Elf64_Rel *rel;

		REQUIRE(img_read(&im, "globals.bpf.o"));
		rel = first_rel(&im, "tp/bpfrt/test_event");
		REQUIRE(rel);
		rel->r_info = ELF64_R_INFO(ELF64_R_SYM(rel->r_info), types[i]);
		snprintf(want, sizeof(want), "section tp/bpfrt/test_event offset %llu symbol ",
			 (unsigned long long)rel->r_offset);
		register_kfunc("host_add");
		EXPECT_FAIL(img_write(&im, im.len), -EOPNOTSUPP, want,
			    "unsupported relocation type");
		img_free(&im);
	}
}

TEST(bad_relocation_fields)
{
	struct img im;
	Elf64_Rel *rel;

	register_kfunc("host_add");
	/* Symbol index past the symbol table. */
	REQUIRE(img_read(&im, "globals.bpf.o"));
	rel = first_rel(&im, "tp/bpfrt/test_event");
	REQUIRE(rel);
	rel->r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(rel->r_info));
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "section tp/bpfrt/test_event offset",
		    "bad symbol");
	img_free(&im);

	/* Offset between two instructions. */
	REQUIRE(img_read(&im, "globals.bpf.o"));
	rel = first_rel(&im, "tp/bpfrt/test_event");
	rel->r_offset += 4;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "is not on an instruction");
	img_free(&im);

	/* A 64-bit (lddw) relocation moved onto a call, and a call one onto
	 * an lddw. */
	REQUIRE(img_read(&im, "maps.bpf.o"));
	rel = first_rel(&im, "tp/bpfrt/map_errors");
	REQUIRE(rel);
	rel->r_offset = 0; /* the first instruction is no lddw */
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "not lddw");
	img_free(&im);
}

TEST(maps_without_a_definition)
{
	struct img im;
	Elf64_Sym *sym, *lic;

	/* The ELF symbol of map "hash" renamed: BTF still defines "hash"
	 * but nothing in .maps is called that any more. */
	REQUIRE(img_read(&im, "maps.bpf.o"));
	sym = find_sym(&im, "hash");
	lic = find_sym(&im, "LICENSE");
	REQUIRE(sym && lic);
	sym->st_name = lic->st_name;
	EXPECT_FAIL(img_write(&im, im.len), -ENOENT, "map hash", "no ELF symbol");
	img_free(&im);

	/* A map symbol pointing past the end of .maps. */
	REQUIRE(img_read(&im, "maps.bpf.o"));
	sym = find_sym(&im, "lru");
	REQUIRE(sym);
	sym->st_value = 1u << 20;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "map lru", "outside .maps");
	img_free(&im);

	/* Legacy map definition at an offset that wraps around. */
	REQUIRE(img_read(&im, "legacy_maps.bpf.o"));
	sym = find_sym(&im, "legacy_array");
	REQUIRE(sym);
	sym->st_value = ~0ull - 3;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "legacy map legacy_array",
		    "out of section");
	img_free(&im);
}

TEST(program_bounds_that_wrap)
{
	struct img im;
	Elf64_Sym *sym;

	/* st_value + st_size overflows to a small number. */
	REQUIRE(img_read(&im, "globals.bpf.o"));
	sym = find_sym(&im, "count_hits");
	REQUIRE(sym);
	sym->st_value = ~0ull - 7;
	sym->st_size = 16;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "program count_hits", "bad bounds");
	img_free(&im);

	/* A code section whose size is not a whole number of instructions. */
	REQUIRE(img_read(&im, "globals.bpf.o"));
	shdr(&im, (unsigned)find_sec(&im, "tp/bpfrt/test_event"))->sh_size -= 4;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, "tp/bpfrt/test_event",
		    "not a multiple of 8");
	img_free(&im);
}

TEST(global_variable_bounds)
{
	struct img im;
	struct bpfrt_object *obj;
	Elf64_Sym *sym;

	REQUIRE(img_read(&im, "globals.bpf.o"));
	sym = find_sym(&im, "hits");
	REQUIRE(sym);
	sym->st_value = ~0ull - 3; /* + st_size wraps */
	REQUIRE(bpfrt_object_open(img_write(&im, im.len), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	CHECK(bpfrt_object_global(obj, "hits", NULL) == NULL);
	CHECK(strstr(bpfrt_last_error(), "hits"), "%s", bpfrt_last_error());
	CHECK(bpfrt_object_global(obj, "counter", NULL) != NULL);
	bpfrt_object_close(obj);
	img_free(&im);
}

TEST(corrupted_headers)
{
	struct img im;
	int symtab;

	REQUIRE(img_read(&im, "maps.bpf.o"));
	symtab = find_sec_type(&im, SHT_SYMTAB);
	REQUIRE(symtab > 0);
	img_free(&im);

#define PATCHED(what, err, frag)                                                       \
	do {                                                                           \
		REQUIRE(img_read(&im, "maps.bpf.o"));                                 \
		what;                                                                  \
		EXPECT_FAIL(img_write(&im, im.len), err, frag);                        \
		img_free(&im);                                                         \
	} while (0)

	PATCHED(ehdr(&im)->e_machine = EM_X86_64, -EINVAL, "not a 64-bit BPF ELF");
	PATCHED(ehdr(&im)->e_ident[EI_DATA] = ELFDATA2MSB, -EINVAL, "");
	PATCHED(ehdr(&im)->e_ident[EI_CLASS] = ELFCLASS32, -EINVAL, "");
	PATCHED(ehdr(&im)->e_shoff = im.len + 4096, -EINVAL, "");
	PATCHED(ehdr(&im)->e_shstrndx = 0xfff0, -EINVAL, "");
	PATCHED(ehdr(&im)->e_shnum = 0, -EINVAL, "no symbol table");
	PATCHED(shdr(&im, (unsigned)symtab)->sh_entsize = 0, -EINVAL, "bad symbol table");
	PATCHED(shdr(&im, (unsigned)symtab)->sh_link = 0xffff, -EINVAL, "bad symbol table");
	PATCHED(shdr(&im, (unsigned)symtab)->sh_type = SHT_PROGBITS, -EINVAL, "no symbol table");
	PATCHED(shdr(&im, (unsigned)symtab)->sh_offset = ~0ull - 16, -EINVAL, "");
	PATCHED(shdr(&im, (unsigned)find_sec(&im, "tp/bpfrt/map_errors"))->sh_offset = im.len,
		-EINVAL, "tp/bpfrt/map_errors");
	PATCHED(shdr(&im, (unsigned)find_sec(&im, ".maps"))->sh_size = 1ull << 40, -EINVAL, "");
	/* Every symbol of the table moved to a section that does not exist. */
	PATCHED(do {
		Elf64_Shdr *st = shdr(&im, (unsigned)symtab);
		Elf64_Sym *s = (Elf64_Sym *)(im.buf + st->sh_offset);

		for (size_t i = 1; i < st->sh_size / sizeof(*s); i++)
			if (s[i].st_shndx == find_sec(&im, ".maps"))
				s[i].st_shndx = 0xfeff;
	} while (0), -ENOENT, "no ELF symbol");
#undef PATCHED
}

/* What fuzz_loader found (tests/fuzz): each crashed a sanitizer build. */
TEST(fuzzer_findings)
{
	struct img im;
	int idx;

	/* An empty license section: memcpy from libelf's NULL buffer. */
	REQUIRE(img_read(&im, "maps.bpf.o"));
	idx = find_sec(&im, "license");
	REQUIRE(idx > 0);
	shdr(&im, (unsigned)idx)->sh_size = 0;
	CHECK(open_load(img_write(&im, im.len), false) == 0, "%s", bpfrt_last_error());
	img_free(&im);

	/* A .BTF section of type NOBITS: Debian's libbpf 1.1 btf__parse_elf
	 * copied from a NULL buffer. The loader parses the bytes itself. */
	REQUIRE(img_read(&im, "maps.bpf.o"));
	idx = find_sec(&im, ".BTF");
	REQUIRE(idx > 0);
	shdr(&im, (unsigned)idx)->sh_type = SHT_NOBITS;
	EXPECT_FAIL(img_write(&im, im.len), -EINVAL, ".maps needs BTF");
	img_free(&im);

	/* The kfunc's symbol made a nameless section symbol of section 0:
	 * its name was looked up as section 0's, which has none (NULL). */
	REQUIRE(img_read(&im, "globals.bpf.o"));
	{
		Elf64_Sym *sym = find_sym(&im, "host_add");

		REQUIRE(sym);
		sym->st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
		sym->st_name = 0;
	}
	EXPECT_FAIL(img_write(&im, im.len), -ENOENT, "section tp/bpfrt/test_event offset",
		    "is not registered");
	img_free(&im);

	/* A code section at an odd file offset (copied to the end of the
	 * file): instructions were read through a misaligned pointer. */
	register_kfunc("host_add");
	REQUIRE(img_read(&im, "globals.bpf.o"));
	idx = find_sec(&im, ".text");
	REQUIRE(idx > 0 && shdr(&im, (unsigned)idx)->sh_size);
	{
		Elf64_Shdr sh = *shdr(&im, (unsigned)idx);
		char *n = realloc(im.buf, im.len + 3 + sh.sh_size);

		REQUIRE(n);
		im.buf = n;
		memcpy(im.buf + im.len + 3, im.buf + sh.sh_offset, sh.sh_size);
		shdr(&im, (unsigned)idx)->sh_offset = im.len + 3;
		im.len += 3 + sh.sh_size;
	}
	CHECK(open_load(img_write(&im, im.len), true) == 0, "%s", bpfrt_last_error());
	img_free(&im);
}

TEST(truncated_at_every_section_boundary)
{
	const char *objs[] = { "maps.bpf.o", "legacy_maps.bpf.o", "subprogs.bpf.o",
			       "tailcall.bpf.o" };

	for (size_t o = 0; o < sizeof(objs) / sizeof(objs[0]); o++) {
		struct img im;

		REQUIRE(img_read(&im, objs[o]));
		/* Just before, at and after each section's start and end: the
		 * cuts that leave headers pointing at missing bytes. */
		for (unsigned i = 1; i < ehdr(&im)->e_shnum; i++) {
			Elf64_Shdr sh = *shdr(&im, i);
			size_t cuts[] = { sh.sh_offset - 1, sh.sh_offset, sh.sh_offset + 1,
					  sh.sh_offset + sh.sh_size / 2,
					  sh.sh_offset + sh.sh_size - 1 };

			for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
				int err;

				if (cuts[c] >= im.len || sh.sh_type == SHT_NOBITS)
					continue;
				err = open_load(img_write(&im, cuts[c]), c & 1);
				CHECK(err < 0, "%s cut at %zu accepted", objs[o], cuts[c]);
				CHECK(bpfrt_last_error()[0], "%s cut at %zu: no message",
				      objs[o], cuts[c]);
			}
		}
		img_free(&im);
	}
}

/* Random damage confined to one section at a time (code, relocations,
 * symbols, BTF...): any outcome but a crash, a leak or a silent error. */
TEST(damaged_sections)
{
	const char *objs[] = { "maps.bpf.o", "globals.bpf.o", "subprogs.bpf.o" };
	unsigned seed = 3;

	register_kfunc("host_add");
	for (size_t o = 0; o < sizeof(objs) / sizeof(objs[0]); o++) {
		struct img good, im;

		REQUIRE(img_read(&good, objs[o]));
		for (unsigned i = 1; i < ehdr(&good)->e_shnum; i++) {
			Elf64_Shdr sh = *shdr(&good, i);

			if (sh.sh_type == SHT_NOBITS || !sh.sh_size || !strncmp(sec_name(&good, i), ".debug", 6))
				continue;
			for (int round = 0; round < 12; round++) {
				int err;

				REQUIRE(img_read(&im, objs[o]));
				for (int k = 0; k < 1 + round % 4; k++)
					im.buf[sh.sh_offset + rand_r(&seed) % sh.sh_size] =
						(char)rand_r(&seed);
				err = open_load(img_write(&im, im.len), round & 1);
				CHECK(err <= 0);
				CHECK(!err || bpfrt_last_error()[0], "%s section %s: error %d "
				      "without a message", objs[o], sec_name(&good, i), err);
				img_free(&im);
			}
		}
		img_free(&good);
	}
}

/* A failed load is not retried on the same object (one attempt per
 * object, as libbpf): the retry is refused naming the object and creates
 * nothing; the object opened again loads once the cause is gone. */
TEST(load_after_failure_is_refused_and_a_reopened_object_loads)
{
	struct img im;
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	uint64_t r0 = 0;
	char *at;
	const char *path;
	long *hits;

	REQUIRE(img_read(&im, "globals.bpf.o"));
	/* The kfunc renamed to one nobody registered (yet). */
	at = memmem(im.buf, im.len, "host_add", 8);
	REQUIRE(at);
	for (; at; at = memmem(at, im.len - (size_t)(at - im.buf), "host_add", 8))
		memcpy(at, "host_bq3", 8);
	path = img_write(&im, im.len);
	REQUIRE(bpfrt_object_open(path, NULL, &obj) == 0);
	CHECK(bpfrt_object_load(obj, NULL) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "host_bq3"), "%s", bpfrt_last_error());
	CHECK(bpfrt_object_find_map(obj, ".bss") == NULL);
	register_kfunc("host_bq3");
	CHECK(bpfrt_object_load(obj, NULL) == -EINVAL, "a failed load was retried");
	CHECK(strstr(bpfrt_last_error(), "load can't be attempted twice") &&
	      strstr(bpfrt_last_error(), bpfrt_object_name(obj)), "%s", bpfrt_last_error());
	CHECK(bpfrt_object_find_map(obj, ".bss") == NULL);
	bpfrt_object_close(obj);

	REQUIRE(bpfrt_object_open(path, NULL, &obj) == 0);
	REQUIRE(bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = true }) == 0,
		"%s", bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "count_hits");
	REQUIRE(p);
	CHECK(run_zero_ctx(p, BPFRT_EXEC_JIT, &r0) == 0, "%s", bpfrt_last_error());
	hits = bpfrt_object_global(obj, "hits", NULL);
	REQUIRE(hits);
	CHECK(*hits == 1 && r0 == 8, "hits %ld r0 %llu", *hits, (unsigned long long)r0);
	bpfrt_object_close(obj);
	img_free(&im);
}

/* ---- good objects survive bad ones ---------------------------------------- */

TEST(loaded_objects_survive_failed_loads)
{
	static const char *const bad[] = {
		"maps_nobtf.bpf.o", "bad_map_type.bpf.o", "bad_key_size.bpf.o",
		"bad_section.bpf.o", "bad_extern_map.bpf.o", "bad_extern_var.bpf.o",
	};
	struct bpfrt_object *globals, *maps;
	struct bpfrt_prog *count, *write_entry;
	struct bpfrt_map *hash;
	uint32_t key = 3;
	uint64_t r0, val[2] = { 11, 22 }, got[2];
	long *hits;

	register_kfunc("host_add");
	REQUIRE(bpfrt_object_open(tl_prog_path("globals.bpf.o"), NULL, &globals) == 0);
	REQUIRE(bpfrt_object_load(globals, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = true }) == 0,
		"%s", bpfrt_last_error());
	REQUIRE(bpfrt_object_open(tl_prog_path("maps.bpf.o"), NULL, &maps) == 0);
	REQUIRE(bpfrt_object_load(maps, NULL) == 0, "%s", bpfrt_last_error());
	count = bpfrt_object_find_prog(globals, "count_hits");
	write_entry = bpfrt_object_find_prog(maps, "write_entry");
	hash = bpfrt_object_find_map(maps, "hash");
	hits = bpfrt_object_global(globals, "hits", NULL);
	REQUIRE(count && write_entry && hash && hits);
	CHECK(run_zero_ctx(count, BPFRT_EXEC_JIT, &r0) == 0);
	CHECK(bpfrt_map_update_elem(hash, &key, val, BPF_ANY) == 0, "%s", bpfrt_last_error());

	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK(open_load(tl_prog_path(bad[i]), round & 1) < 0, "%s", bad[i]);

	CHECK(run_zero_ctx(count, BPFRT_EXEC_JIT, &r0) == 0, "%s", bpfrt_last_error());
	CHECK(run_zero_ctx(count, BPFRT_EXEC_INTERP, &r0) == 0, "%s", bpfrt_last_error());
	CHECK(*hits == 3, "hits %ld", *hits);
	CHECK(run_zero_ctx(write_entry, BPFRT_EXEC_INTERP, &r0) == 0, "%s",
	      bpfrt_last_error());
	CHECK(bpfrt_map_lookup_elem(hash, &key, got) == 0 && got[0] == 11 && got[1] == 22);
	bpfrt_object_close(maps);
	bpfrt_object_close(globals);
}
