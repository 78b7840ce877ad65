/* Object internals shared by the loader's files: what an ELF file holds
 * after open (sections, symbols, programs, map definitions). */
#ifndef BPFRT_LOADER_OBJECT_H
#define BPFRT_LOADER_OBJECT_H

#include "bpfrt/object.h"
#include "core/prog.h"

#include <gelf.h>
#include <libelf.h>

struct btf;

enum sec_kind {
	SEC_OTHER = 0,
	SEC_TEXT,      /* .text: subprograms */
	SEC_PROG,      /* an executable section holding programs */
	SEC_DATA,      /* .data, .rodata*, .bss: global data maps */
	SEC_MAPS,      /* .maps (BTF-defined) */
	SEC_LEGACY_MAPS, /* maps (struct bpf_map_def) */
	SEC_LICENSE,
	SEC_REL,
	SEC_SYMTAB,
};

struct obj_sec {
	const char *name;
	enum sec_kind kind;
	GElf_Shdr shdr;
	Elf_Data *data;      /* NULL for SHT_NOBITS */
	int map_idx;         /* SEC_DATA: the global-data map, else -1 */
};

struct obj_map {
	char *name;
	uint32_t type, key_size, value_size, max_entries, map_flags;
	uint64_t map_extra;  /* __uint(map_extra, N): a bloom filter's hash count */
	/* map-in-map: the inner map template from __array(values, struct X)
	 * (created before this map, freed once it is made), and the offset of
	 * the values array in the definition, where .rel.maps gives the
	 * initial slots (.values = { [i] = &m }) */
	struct obj_map *inner;
	size_t values_off;
	bool prog_values;    /* a prog array's __array(values, void (void)): its
			      * .values name programs, filled at load */
	/* why bpfrt cannot make this map (a definition or map type it does
	 * not support), or NULL: such a map is left out of the load, and a
	 * program that references it fails with this message and errno */
	char *unusable;
	int unusable_err;
	uint32_t pinning;    /* LIBBPF_PIN_NONE or _BY_NAME: accepted, no effect (maps_def.c) */
	size_t sec_idx;      /* section of the definition */
	size_t sec_off;      /* offset of the definition (or 0 for data maps) */
	void *init;          /* SEC_DATA: initial image (value_size bytes) */
	bool freeze;         /* read-only data: frozen at load, after init */
	bool has_spin_lock;  /* a struct bpf_spin_lock in the BTF value type, at: */
	uint32_t spin_lock_off;
	struct bpfrt_map *map; /* created at load */
};

/* An extern variable or kfunc the object names (loader/externs.c). */
struct obj_extern {
	char *name;
	bool kconfig;        /* .kconfig: a value in the ".kconfig" map at off */
	bool weak;
	bool func;           /* .ksyms: a kfunc (else a typed kernel variable) */
	uint32_t off, size;
	uint32_t type_id;    /* its BTF type */
};

struct obj_prog {
	struct bpfrt_prog *prog;
	size_t sec;          /* section holding it */
	size_t off;          /* first instruction within the section */
	size_t len;          /* instructions */
};

struct bpfrt_object {
	char *name;
	char *path;
	char license[128];
	int fd;
	char *image;         /* bpfrt_object_open_mem: the ELF bytes libelf reads */
	Elf *elf;
	struct btf *btf;
	bool has_btf_sec;    /* a .BTF section exists (btf NULL: unparsable) */
	Elf_Data *btf_data;  /* its contents, if it has any */
	Elf_Data *btf_ext_data; /* .BTF.ext (func/line info, CO-RE relocations) */
	struct btf *core_btf;     /* CO-RE target: the open's btf_custom_path, or NULL */
	struct btf *core_builtin; /* CO-RE target: the kernel-layout types bpfrt provides */
	int btf_err;         /* why btf__parse_elf failed (negative errno) */
	size_t shstrndx;
	struct obj_sec *secs;
	size_t sec_cnt;
	Elf_Data *symtab;
	size_t sym_cnt;
	size_t strtab_idx;
	struct obj_prog *progs;
	size_t prog_cnt;
	struct obj_map *maps;
	size_t map_cnt;
	struct obj_extern *externs;
	size_t extern_cnt;
	int kconfig_map;     /* index of the ".kconfig" map, -1 if none */
	bool loaded;
	bool load_attempted; /* set (atomically) by the first bpfrt_object_load */
	/* Lifetime of the maps (and of this struct): 1 for the caller's
	 * handle, dropped by bpfrt_object_close, plus 1 per program not yet
	 * freed (dropped by bpfrt_object_prog_gone). The last drop frees the
	 * maps: no program can use them any more. */
	uint32_t refs;
};

/* A run of section instructions the linker copied into a program. */
struct obj_range {
	size_t sec, start, len;   /* section, first instruction, count */
	size_t pos;               /* where it starts in the program */
};

/* Maps from BTF (.maps) and legacy (maps) sections; loader/maps_def.c. */
int obj_collect_map_defs(struct bpfrt_object *obj);
/* Fills slots from .values initialisers (loader/maps_def.c), in passes:
 * map-in-map slots once every map is created; a check that each prog
 * array slot's program is loaded, before the programs are prepared; the
 * prog array slots once they are, before they are published. */
enum obj_slots { OBJ_SLOTS_MAPS, OBJ_SLOTS_PROGS_CHECK, OBJ_SLOTS_PROGS };
int obj_init_map_slots(struct bpfrt_object *obj, enum obj_slots pass);
/* Marks m as one this load leaves out, with the current error message
 * (bpfrt_last_error) as the reason; 0 or -ENOMEM. */
int obj_map_set_unusable(const struct bpfrt_object *obj, struct obj_map *m, int err);
/* __kconfig and __ksym externs (and the ".kconfig" map); kconfig: the
 * open's config lines or NULL. loader/externs.c. */
int obj_collect_externs(struct bpfrt_object *obj, const char *kconfig);
const struct obj_extern *obj_find_extern(const struct bpfrt_object *obj, const char *name);
void obj_free_externs(struct bpfrt_object *obj);
/* Global-data maps from the .data, .rodata and .bss sections. */
int obj_collect_data_maps(struct bpfrt_object *obj);
/* CO-RE (loader/core_relo.c): the target BTFs (btf_path may be NULL),
 * and the relocations of instructions [start, start + len) of section sec,
 * copied to out at pos; unresolvable ones poison the instruction and
 * record why in prog (for the verifier's message). */
int obj_core_open(struct bpfrt_object *obj, const char *btf_path);
void obj_core_close(struct bpfrt_object *obj);
int obj_core_relocate(struct bpfrt_object *obj, size_t sec, size_t start, size_t len,
		      struct bpf_insn *out, size_t pos, size_t out_cnt, struct bpfrt_prog *prog);
/* Links programs with their .text subprograms and resolves relocations
 * into a fresh instruction array, kfuncs by name in env (NULL: the
 * default environment); loader/link.c. */
int obj_link_prog(struct bpfrt_object *obj, size_t prog_idx, struct bpfrt_env *env,
		  struct bpf_insn **insns, size_t *insn_cnt, struct bpfrt_map_ref **refs,
		  uint32_t *ref_cnt);

/* The program's source lines (prog->lines) from the object's .BTF.ext
 * line info, placed as the linker placed the ranges; none where the object
 * has no usable line info. loader/line_info.c. */
void obj_line_info(const struct bpfrt_object *obj, const struct obj_range *ranges,
		   size_t range_cnt, struct bpfrt_prog *prog);

const char *obj_sym_name(const struct bpfrt_object *obj, const GElf_Sym *sym);
int obj_sym(const struct bpfrt_object *obj, size_t idx, GElf_Sym *sym);
/* Sets the error "<fmt...>: <the current bpfrt_last_error()>" and returns
 * err: context from the loader around a cause from maps or the verifier. */
int obj_err_wrap(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends to a growing array; returns a pointer to the new zeroed slot. */
void *obj_push(void **arr, size_t *cnt, size_t elem);

#endif
