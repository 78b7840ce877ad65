/* ELF objects with libbpf conventions: open (sections, programs, map
 * definitions), load (maps created, programs linked and prepared), and
 * skeleton-style access to programs, maps and global variables. */
#include "loader/object.h"
#include "core/env.h"
#include "core/error.h"
#include "core/opts.h"
#include "isa/linux_names.h"
#include "maps/map.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *obj_push(void **arr, size_t *cnt, size_t elem)
{
	char *n = realloc(*arr, (*cnt + 1) * elem);

	if (!n)
		return NULL;
	*arr = n;
	memset(n + *cnt * elem, 0, elem);
	return n + (*cnt)++ * elem;
}

int obj_err_wrap(int err, const char *fmt, ...)
{
	char cause[512], prefix[512];
	va_list ap;

	/* The cause is bpfrt_err()'s own buffer: copy it before formatting. */
	snprintf(cause, sizeof(cause), "%s", bpfrt_last_error());
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	return bpfrt_err(err, "%s: %s", prefix, cause);
}

int obj_sym(const struct bpfrt_object *obj, size_t idx, GElf_Sym *sym)
{
	if (!obj->symtab || idx >= obj->sym_cnt || !gelf_getsym(obj->symtab, (int)idx, sym))
		return bpfrt_err(-EINVAL, "%s: bad symbol index %zu", obj->name, idx);
	return 0;
}

const char *obj_sym_name(const struct bpfrt_object *obj, const GElf_Sym *sym)
{
	const char *n = elf_strptr(obj->elf, obj->strtab_idx, sym->st_name);

	if (n && *n)
		return n;
	/* Section symbols are nameless; use the section's name. */
	if (GELF_ST_TYPE(sym->st_info) == STT_SECTION && sym->st_shndx < obj->sec_cnt &&
	    obj->secs[sym->st_shndx].name) /* section 0 has no name */
		return obj->secs[sym->st_shndx].name;
	return n ? n : "?";
}

static enum sec_kind classify(const char *name, const GElf_Shdr *sh)
{
	if (sh->sh_type == SHT_SYMTAB)
		return SEC_SYMTAB;
	if (sh->sh_type == SHT_REL)
		return SEC_REL;
	if (!strcmp(name, "license"))
		return SEC_LICENSE;
	if (!strcmp(name, ".maps"))
		return SEC_MAPS;
	if (!strcmp(name, "maps"))
		return SEC_LEGACY_MAPS;
	if (sh->sh_type == SHT_PROGBITS && (sh->sh_flags & SHF_EXECINSTR))
		return strcmp(name, ".text") ? SEC_PROG : SEC_TEXT;
	if (!strcmp(name, ".data") || !strcmp(name, ".bss") || !strcmp(name, ".rodata") ||
	    !strncmp(name, ".rodata.", 8) || !strncmp(name, ".data.", 6))
		return SEC_DATA;
	return SEC_OTHER;
}

static int read_sections(struct bpfrt_object *obj)
{
	Elf_Scn *scn = NULL;
	size_t n;

	if (elf_getshdrnum(obj->elf, &n) || elf_getshdrstrndx(obj->elf, &obj->shstrndx))
		return bpfrt_err(-EINVAL, "%s: not a valid ELF file (%s)", obj->path, elf_errmsg(-1));
	obj->secs = calloc(n ? n : 1, sizeof(*obj->secs));
	if (!obj->secs)
		return bpfrt_err(-ENOMEM, "%s: out of memory", obj->path);
	obj->sec_cnt = n;
	while ((scn = elf_nextscn(obj->elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		struct obj_sec *s;

		if (idx >= n)
			return bpfrt_err(-EINVAL, "%s: section index %zu out of range", obj->path, idx);
		s = &obj->secs[idx];
		s->map_idx = -1;
		if (!gelf_getshdr(scn, &s->shdr))
			return bpfrt_err(-EINVAL, "%s: section %zu: bad header", obj->path, idx);
		s->name = elf_strptr(obj->elf, obj->shstrndx, s->shdr.sh_name);
		if (!s->name)
			return bpfrt_err(-EINVAL, "%s: section %zu: bad name", obj->path, idx);
		if (s->shdr.sh_type != SHT_NOBITS) {
			s->data = elf_getdata(scn, NULL);
			if (!s->data && s->shdr.sh_size)
				return bpfrt_err(-EINVAL, "%s: section %s: unreadable data",
						 obj->path, s->name);
			if (s->data && s->data->d_size && !s->data->d_buf)
				return bpfrt_err(-EINVAL, "%s: section %s: no data", obj->path, s->name);
		}
		s->kind = classify(s->name, &s->shdr);
		if (!strcmp(s->name, ".BTF.ext"))
			obj->btf_ext_data = s->data;
		if (!strcmp(s->name, ".BTF")) {
			obj->has_btf_sec = true;
			obj->btf_data = s->data;
		}
		if (s->kind == SEC_SYMTAB) {
			if (obj->symtab)
				return bpfrt_err(-EINVAL, "%s: more than one symbol table", obj->path);
			if (!s->data || !s->shdr.sh_entsize || s->shdr.sh_link >= n)
				return bpfrt_err(-EINVAL, "%s: bad symbol table", obj->path);
			obj->symtab = s->data;
			obj->sym_cnt = s->data->d_size / s->shdr.sh_entsize;
			obj->strtab_idx = s->shdr.sh_link;
		}
		if ((s->kind == SEC_PROG || s->kind == SEC_TEXT) && s->data &&
		    s->data->d_size % sizeof(struct bpf_insn))
			return bpfrt_err(-EINVAL, "%s: section %s: size %zu is not a multiple of 8",
					 obj->path, s->name, s->data->d_size);
		if (s->kind == SEC_LICENSE && s->data && s->data->d_size) {
			size_t len = s->data->d_size < sizeof(obj->license) - 1 ?
				     s->data->d_size : sizeof(obj->license) - 1;
			memcpy(obj->license, s->data->d_buf, len);
			obj->license[len] = '\0';
		}
	}
	if (!obj->symtab)
		return bpfrt_err(-EINVAL, "%s: no symbol table", obj->path);
	return 0;
}

/* Every global function symbol in an executable section (not .text) is a
 * program, as in libbpf. */
static int collect_progs(struct bpfrt_object *obj)
{
	for (size_t i = 1; i < obj->sym_cnt; i++) {
		struct bpfrt_sec_parsed sp;
		const char *name;
		struct obj_prog *op;
		struct obj_sec *sec;
		GElf_Sym sym;

		if (obj_sym(obj, i, &sym))
			return -EINVAL;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx >= obj->sec_cnt ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		sec = &obj->secs[sym.st_shndx];
		if (sec->kind != SEC_PROG || GELF_ST_BIND(sym.st_info) == STB_LOCAL)
			continue;
		name = obj_sym_name(obj, &sym);
		if (bpfrt_prog_sec_parse(sec->name, &sp)) {
			/* a Linux type's prefix in a form libbpf does not
			 * take (a target after an exact name, ...) */
			const char *linux_type = bpfrt_linux_prog_type_of_section(sec->name);

			if (linux_type)
				return bpfrt_err(-EOPNOTSUPP, "%s: program %s: section '%s' is not "
						 "one of libbpf's names for BPF_PROG_TYPE_%s programs",
						 obj->path, name, sec->name, linux_type);
			return bpfrt_err(-EOPNOTSUPP, "%s: program %s: unknown section name '%s'",
					 obj->path, name, sec->name);
		}
		if (sym.st_value % 8 || sym.st_size % 8 || !sec->data || !sym.st_size ||
		    sym.st_value > sec->data->d_size ||
		    sym.st_size > sec->data->d_size - sym.st_value)
			return bpfrt_err(-EINVAL, "%s: program %s: bad bounds in section %s",
					 obj->path, name, sec->name);
		op = obj_push((void **)&obj->progs, &obj->prog_cnt, sizeof(*op));
		if (!op || !(op->prog = calloc(1, sizeof(*op->prog))))
			return bpfrt_err(-ENOMEM, "%s: out of memory", obj->path);
		op->sec = sym.st_shndx;
		op->off = sym.st_value / 8;
		op->len = sym.st_size / 8;
		snprintf(op->prog->name, sizeof(op->prog->name), "%s", name);
		op->prog->obj = obj;
		obj->refs++; /* the program holds the object's maps */
		op->prog->kind = sp.kind;
		op->prog->kind_variant = sp.def->variant;
		op->prog->sec_flags = sp.def->flags;
		op->prog->autoload = sp.autoload;
		op->prog->sec_name = strdup(sec->name);
		op->prog->attach_target = strdup(sp.target);
		if (!op->prog->sec_name || !op->prog->attach_target)
			return bpfrt_err(-ENOMEM, "%s: out of memory", obj->path);
	}
	return 0;
}

/* A new object named opts->name, else default_name; path is what
 * messages call it. */
static int object_new(const char *path, const char *default_name,
		      const struct bpfrt_object_open_opts *opts, struct bpfrt_object **out)
{
	struct bpfrt_object *obj;

	if (!OPTS_VALID(opts, bpfrt_object_open_opts))
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return bpfrt_err(-ENOTSUP, "object_open: libelf too old");
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return bpfrt_err(-ENOMEM, "object_open: out of memory");
	obj->fd = -1;
	obj->kconfig_map = -1;
	obj->refs = 1; /* the caller's, until bpfrt_object_close */
	obj->path = strdup(path);
	obj->name = strdup(OPTS_GET(opts, name, NULL) ? opts->name : default_name);
	if (!obj->path || !obj->name) {
		bpfrt_object_close(obj);
		return bpfrt_err(-ENOMEM, "object_open: out of memory");
	}
	*out = obj;
	return 0;
}

/* Reads what obj->elf holds: sections, BTF, programs, maps. Closes obj on
 * failure. */
static int object_read_elf(struct bpfrt_object *obj, const struct bpfrt_object_open_opts *opts,
			   struct bpfrt_object **out)
{
	const char *path = obj->path;
	int err;

	if (!obj->elf || elf_kind(obj->elf) != ELF_K_ELF) {
		err = bpfrt_err(-EINVAL, "%s: not an ELF file", path);
		goto fail;
	}
	{
		GElf_Ehdr eh;

		if (!gelf_getehdr(obj->elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
		    eh.e_machine != EM_BPF) {
			err = bpfrt_err(-EINVAL, "%s: not a 64-bit BPF ELF object", path);
			goto fail;
		}
		if (eh.e_ident[EI_DATA] != ELFDATA2LSB) {
			err = bpfrt_err(-EINVAL, "%s: big-endian BPF objects are not supported", path);
			goto fail;
		}
	}
	err = read_sections(obj);
	if (err)
		goto fail;
	/* BTF is optional for legacy objects; required for .maps, which
	 * reports its absence. Parsed from the section libelf already read:
	 * btf__parse_elf would reopen the file, and Debian's libbpf 1.1
	 * crashes on some malformed ELF headers (found by fuzz_loader). */
	if (obj->btf_data && obj->btf_data->d_buf && obj->btf_data->d_size &&
	    obj->btf_data->d_size <= UINT32_MAX) {
		libbpf_print_fn_t prev = libbpf_set_print(NULL);

		obj->btf = btf__new(obj->btf_data->d_buf, (uint32_t)obj->btf_data->d_size);
		obj->btf_err = obj->btf ? 0 : -errno;
		libbpf_set_print(prev);
	} else {
		obj->btf_err = -ENODATA;
	}
	err = collect_progs(obj);
	if (!err)
		err = obj_collect_map_defs(obj);
	if (!err)
		err = obj_collect_data_maps(obj);
	if (!err)
		err = obj_collect_externs(obj, OPTS_GET(opts, kconfig, NULL));
	if (!err)
		err = obj_core_open(obj, OPTS_GET(opts, btf_custom_path, NULL));
	if (err)
		goto fail;
	*out = obj;
	return 0;
fail:
	bpfrt_object_close(obj);
	return err;
}

int bpfrt_object_open(const char *path, const struct bpfrt_object_open_opts *opts,
		      struct bpfrt_object **out)
{
	struct bpfrt_object *obj;
	const char *base;
	int err;

	bpfrt_err_clear();
	if (!path || !out)
		return bpfrt_err(-EINVAL, "object_open: NULL argument");
	*out = NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	err = object_new(path, base, opts, &obj);
	if (err)
		return err;
	obj->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (obj->fd < 0) {
		err = bpfrt_err(-errno, "%s: %s", path, strerror(errno));
		bpfrt_object_close(obj);
		return err;
	}
	obj->elf = elf_begin(obj->fd, ELF_C_READ_MMAP, NULL);
	return object_read_elf(obj, opts, out);
}

int bpfrt_object_open_mem(const void *buf, size_t size, const struct bpfrt_object_open_opts *opts,
			  struct bpfrt_object **out)
{
	struct bpfrt_object *obj;
	const char *name;
	int err;

	bpfrt_err_clear();
	if (!buf || !size || !out)
		return bpfrt_err(-EINVAL, "object_open_mem: NULL or empty buffer");
	*out = NULL;
	name = OPTS_VALID(opts, bpfrt_object_open_opts) && OPTS_GET(opts, name, NULL) ?
	       opts->name : "object in memory";
	err = object_new(name, "mem", opts, &obj);
	if (err)
		return err;
	/* libelf reads (and may write) the image it is given, and the
	 * sections point into it until close: the object's own copy. */
	obj->image = malloc(size);
	if (!obj->image) {
		bpfrt_object_close(obj);
		return bpfrt_err(-ENOMEM, "%s: out of memory", name);
	}
	memcpy(obj->image, buf, size);
	obj->elf = elf_memory(obj->image, size);
	return object_read_elf(obj, opts, out);
}

/* A map of a type Linux has and bpfrt does not implement (yet): left out
 * of the load, as a definition bpfrt cannot read (maps_def.c), so that
 * only the programs using it fail. A number no Linux map type has is bad
 * input and fails the load. */
static bool type_left_out(uint32_t type)
{
	return !bpfrt_map_type_supported(type) && bpfrt_linux_map_type_name(type);
}


/* libbpf's adjust_ringbuf_sz: a RINGBUF or USER_RINGBUF size that is not a
 * power-of-two multiple of the page size becomes the smallest such size
 * above it (0 stays 0, refused at creation), as libbpf creates it. */
static uint32_t ringbuf_size_as_libbpf(uint32_t type, uint32_t size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), mul;

	if ((type != BPF_MAP_TYPE_RINGBUF && type != BPF_MAP_TYPE_USER_RINGBUF) || !size)
		return size;
	if (size % page == 0 && !((size / page) & (size / page - 1)))
		return size;
	for (mul = 1; mul * page <= UINT32_MAX; mul <<= 1)
		if (mul * page > size)
			return (uint32_t)(mul * page);
	return 0;
}
static int create_maps(struct bpfrt_object *obj, uint64_t bpfrt_flags)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct obj_map *m = &obj->maps[i];
		struct bpfrt_map *tmpl = NULL;
		int err;

		if (m->unusable)
			continue;
		if (type_left_out(m->type) || (m->inner && type_left_out(m->inner->type))) {
			uint32_t type = type_left_out(m->type) ? m->type : m->inner->type;

			bpfrt_err(-EOPNOTSUPP, "%smap type %s is not supported",
				  type == m->type ? "" : "its inner map's ", bpfrt_linux_map_type_name(type));
			err = obj_map_set_unusable(obj, m, -EOPNOTSUPP);
			bpfrt_err_clear();
			if (err)
				return bpfrt_err(err, "%s: out of memory", obj->name);
			continue;
		}
		/* a map-in-map's template: only its shape outlives the outer's creation */
		if (m->inner) {
			err = bpfrt_map_create(m->inner->type, m->inner->name, m->inner->key_size,
					       m->inner->value_size, m->inner->max_entries,
					       &(struct bpfrt_map_create_opts){
							.sz = sizeof(struct bpfrt_map_create_opts),
							.map_flags = m->inner->map_flags,
							.map_extra = m->inner->map_extra,
							.has_spin_lock = m->inner->has_spin_lock,
							.spin_lock_off = m->inner->spin_lock_off },
					       &tmpl);
			if (err)
				return obj_err_wrap(err, "%s: map %s: inner map template", obj->name,
						    m->name);
		}
		/* the flags go to the kinds that take them (shared memory:
		 * arrays and ring buffers), the others are made without */
		err = bpfrt_map_create(m->type, m->name, m->key_size, m->value_size,
				       ringbuf_size_as_libbpf(m->type, m->max_entries),
				       &(struct bpfrt_map_create_opts){ .sz = sizeof(struct bpfrt_map_create_opts),
									.map_flags = m->map_flags,
									.map_extra = m->map_extra,
									.inner_map = tmpl,
									.bpfrt_flags = bpfrt_map_type_shareable(m->type) ? bpfrt_flags : 0,
									.has_spin_lock = m->has_spin_lock,
									.spin_lock_off = m->spin_lock_off },
				       &m->map);
		bpfrt_map_free(tmpl);
		if (err)
			return obj_err_wrap(err, "%s: map %s", obj->name, m->name);
		if (m->map_extra && m->type != BPF_MAP_TYPE_BLOOM_FILTER)
			return bpfrt_err(-EINVAL, "%s: map %s: map_extra %llu: only bloom filter maps "
					 "take it (Linux's rule)", obj->name, m->name,
					 (unsigned long long)m->map_extra);
		if (m->init) {
			void *v = bpfrt_map_value_ptr(m->map, 0);

			if (!v)
				return bpfrt_err(-EINVAL, "%s: map %s: no value storage", obj->name, m->name);
			memcpy(v, m->init, m->value_size);
		}
		/* before any program is verified: they may fold its values */
		if (m->freeze && (err = bpfrt_map_freeze(m->map)))
			return obj_err_wrap(err, "%s: map %s", obj->name, m->name);
	}
	return 0;
}

int bpfrt_object_load(struct bpfrt_object *obj, const struct bpfrt_object_load_opts *opts)
{
	int err = 0;

	bpfrt_err_clear();
	if (!obj)
		return bpfrt_err(-EINVAL, "object_load: NULL object");
	if (!OPTS_VALID(opts, bpfrt_object_load_opts))
		return -EINVAL;
	/* One attempt per object, as libbpf's bpf_object__load: after a
	 * failure, programs loaded before the failing one may already sit in
	 * prog array slots or be attached by another thread, and a retry would
	 * re-verify and re-link them under those users. The exchange also
	 * refuses a second, concurrent call. */
	if (__atomic_exchange_n(&obj->load_attempted, true, __ATOMIC_ACQ_REL))
		return bpfrt_err(-EINVAL, "object '%s': load can't be attempted twice (the first "
				 "attempt %s; open the object again to retry)", obj->name,
				 __atomic_load_n(&obj->loaded, __ATOMIC_ACQUIRE) ? "succeeded"
										 : "failed or is under way");
	err = create_maps(obj, OPTS_GET(opts, map_bpfrt_flags, 0));
	if (!err)
		err = obj_init_map_slots(obj, OBJ_SLOTS_MAPS);
	if (!err)
		err = obj_init_map_slots(obj, OBJ_SLOTS_PROGS_CHECK);
	for (size_t i = 0; !err && i < obj->prog_cnt; i++) {
		struct bpfrt_prog *prog = obj->progs[i].prog;
		struct bpf_insn *insns = NULL;
		size_t cnt = 0;

		if (!prog->autoload) /* libbpf's '?' or bpfrt_prog_set_autoload(false) */
			continue;
		err = obj_link_prog(obj, i, OPTS_GET(opts, env, NULL), &insns, &cnt,
				    &prog->map_refs, &prog->map_ref_cnt);
		if (err)
			err = obj_err_wrap(err, "program %s (section %s)", prog->name,
					   prog->sec_name);
		if (!err)
			err = bpfrt_prog_set_flags(prog, prog->load_flags |
						   OPTS_GET(opts, prog_flags, 0));
		if (!err) {
			struct bpfrt_verify_opts vopts = {
				.sz = sizeof(vopts), .log_buf = OPTS_GET(opts, log_buf, NULL),
				.log_size = OPTS_GET(opts, log_size, 0),
				.log_level = OPTS_GET(opts, log_level, 0),
			};
			/* every program is verified unless the caller trusts them */
			const struct bpfrt_prepare how = {
				.jit = OPTS_GET(opts, jit, false),
				.verify = OPTS_GET(opts, trusted, false) ? NULL : &vopts,
				.env = OPTS_GET(opts, env, NULL),
			};

			/* the target BTF of typed arguments, as of CO-RE */
			prog->attach_btf = obj->core_btf;
			prog->obj_btf = obj->btf;
			err = bpfrt_prog_prepare_unpublished(prog, insns, cnt, &how);
			if (err)
				err = obj_err_wrap(err, "%s: program %s (section %s)", obj->name,
						   prog->name, prog->sec_name);
		}
		free(insns);
	}
	/* tail-call slots last: a program goes into a slot prepared */
	if (!err)
		err = obj_init_map_slots(obj, OBJ_SLOTS_PROGS);
	if (err) {
		/* Nothing half-loaded survives: drop programs' code and maps. */
		for (size_t i = 0; i < obj->prog_cnt; i++)
			bpfrt_prog_unprepare(obj->progs[i].prog);
		for (size_t i = 0; i < obj->map_cnt; i++) {
			bpfrt_map_free(obj->maps[i].map);
			obj->maps[i].map = NULL;
		}
		return bpfrt_env_log_failure(OPTS_GET(opts, env, NULL), err);
	}
	/* Only now may the programs be run, attached or slotted: until every
	 * one of them is prepared, a failure above strips them all. */
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (obj->progs[i].prog->autoload)
			bpfrt_prog_set_loaded(obj->progs[i].prog);
	__atomic_store_n(&obj->loaded, true, __ATOMIC_RELEASE);
	return 0;
}

/* The last user is gone: no program runs with these maps any more. */
static void object_free(struct bpfrt_object *obj)
{
	for (size_t i = 0; i < obj->map_cnt; i++) {
		bpfrt_map_free(obj->maps[i].map);
		free(obj->maps[i].name);
		free(obj->maps[i].init);
		free(obj->maps[i].unusable);
		if (obj->maps[i].inner) {
			free(obj->maps[i].inner->name);
			free(obj->maps[i].inner);
		}
	}
	free(obj->maps);
	obj_free_externs(obj);
	free(obj->name);
	free(obj->path);
	free(obj);
}

static void object_put(struct bpfrt_object *obj)
{
	if (__atomic_sub_fetch(&obj->refs, 1, __ATOMIC_ACQ_REL) == 0)
		object_free(obj);
}

void bpfrt_object_prog_gone(struct bpfrt_object *obj)
{
	object_put(obj);
}

void bpfrt_object_close(struct bpfrt_object *obj)
{
	if (!obj)
		return;
	/* Slots are the only way programs and objects hold each other: with
	 * the object's prog arrays emptied (as Linux's when their last user
	 * reference goes), every object is freed once closed and no longer
	 * used, whatever arrays held whose programs. */
	for (size_t i = 0; i < obj->map_cnt; i++)
		if (obj->maps[i].map && obj->maps[i].map->type == BPF_MAP_TYPE_PROG_ARRAY)
			bpfrt_prog_array_clear(obj->maps[i].map);
	/* A program still attached or in another object's slot lives on
	 * (bpfrt_prog_free) and keeps the maps with it. */
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		/* the BTF goes with the object; a program living on is
		 * verified again (bpfrt_prog_verify) against the host's */
		obj->progs[i].prog->attach_btf = NULL;
		obj->progs[i].prog->obj_btf = NULL;
		bpfrt_prog_free(obj->progs[i].prog);
	}
	free(obj->progs);
	obj->progs = NULL;
	obj->prog_cnt = 0;
	free(obj->secs);
	obj->secs = NULL;
	btf__free(obj->btf);
	obj->btf = NULL;
	obj_core_close(obj);
	if (obj->elf)
		elf_end(obj->elf);
	obj->elf = NULL;
	if (obj->fd >= 0)
		close(obj->fd);
	obj->fd = -1;
	obj->kconfig_map = -1;
	free(obj->image);
	obj->image = NULL;
	object_put(obj); /* the caller's handle */
}

const char *bpfrt_object_name(const struct bpfrt_object *obj)
{
	return obj->name;
}

const char *bpfrt_object_license(const struct bpfrt_object *obj)
{
	return obj->license;
}

struct bpfrt_prog *bpfrt_object_next_prog(const struct bpfrt_object *obj,
					   const struct bpfrt_prog *prev)
{
	size_t i = 0;

	if (prev) {
		while (i < obj->prog_cnt && obj->progs[i].prog != prev)
			i++;
		i++;
	}
	return i < obj->prog_cnt ? obj->progs[i].prog : NULL;
}

struct bpfrt_prog *bpfrt_object_find_prog(const struct bpfrt_object *obj, const char *name)
{
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i].prog->name, name))
			return obj->progs[i].prog;
	bpfrt_err(-ENOENT, "%s: no program named %s", obj->name, name);
	return NULL;
}

const char *bpfrt_prog_section(const struct bpfrt_prog *prog)
{
	return prog->sec_name ? prog->sec_name : "";
}

int bpfrt_prog_set_autoload(struct bpfrt_prog *prog, bool autoload)
{
	if (!prog || !prog->obj)
		return bpfrt_err(-EINVAL, "prog_set_autoload: %s", prog ? "not an object's program"
									 : "NULL program");
	if (__atomic_load_n(&prog->obj->load_attempted, __ATOMIC_ACQUIRE))
		return bpfrt_err(-EBUSY, "prog_set_autoload: %s: the object was loaded already",
				 prog->name);
	prog->autoload = autoload;
	return 0;
}

bool bpfrt_prog_autoload(const struct bpfrt_prog *prog)
{
	return prog->autoload;
}

bool bpfrt_prog_sleepable(const struct bpfrt_prog *prog)
{
	return prog->sec_flags & BPFRT_SEC_SLEEPABLE;
}

enum bpfrt_prog_kind bpfrt_prog_kind(const struct bpfrt_prog *prog)
{
	return (enum bpfrt_prog_kind)prog->kind;
}

const char *bpfrt_prog_attach_target(const struct bpfrt_prog *prog)
{
	return prog->attach_target ? prog->attach_target : "";
}

struct bpfrt_map *bpfrt_object_next_map(const struct bpfrt_object *obj,
					const struct bpfrt_map *prev)
{
	size_t i = 0;

	if (prev) {
		while (i < obj->map_cnt && obj->maps[i].map != prev)
			i++;
		i++;
	}
	/* maps the load left out (type_left_out) have none */
	while (i < obj->map_cnt && !obj->maps[i].map)
		i++;
	return i < obj->map_cnt ? obj->maps[i].map : NULL;
}

struct bpfrt_map *bpfrt_object_find_map(const struct bpfrt_object *obj, const char *name)
{
	for (size_t i = 0; i < obj->map_cnt; i++)
		if (!strcmp(obj->maps[i].name, name)) {
			if (!obj->maps[i].map && obj->maps[i].unusable)
				bpfrt_err(obj->maps[i].unusable_err, "%s: map %s is not created: %s",
					  obj->name, name, obj->maps[i].unusable);
			else if (!obj->maps[i].map)
				bpfrt_err(-EAGAIN, "%s: map %s exists after load", obj->name, name);
			return obj->maps[i].map;
		}
	bpfrt_err(-ENOENT, "%s: no map named %s", obj->name, name);
	return NULL;
}

void *bpfrt_object_global(const struct bpfrt_object *obj, const char *name, size_t *size)
{
	for (size_t i = 1; i < obj->sym_cnt; i++) {
		struct obj_map *m;
		GElf_Sym sym;
		char *base;

		if (obj_sym(obj, i, &sym))
			break;
		if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx >= obj->sec_cnt ||
		    obj->secs[sym.st_shndx].kind != SEC_DATA ||
		    obj->secs[sym.st_shndx].map_idx < 0 ||
		    strcmp(obj_sym_name(obj, &sym), name))
			continue;
		m = &obj->maps[obj->secs[sym.st_shndx].map_idx];
		if (sym.st_value > m->value_size || sym.st_size > m->value_size - sym.st_value)
			break;
		base = obj->loaded ? bpfrt_map_value_ptr(m->map, 0) : m->init;
		if (size)
			*size = sym.st_size;
		return base + sym.st_value;
	}
	bpfrt_err(-ENOENT, "%s: no global variable named %s", obj->name, name);
	return NULL;
}

void *bpfrt_object_global_data(const struct bpfrt_object *obj, const char *section, size_t *size)
{
	if (!obj || !section) {
		bpfrt_err(-EINVAL, "object_global_data: NULL argument");
		return NULL;
	}
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct obj_map *m = &obj->maps[i];

		/* only global-data maps have an initial image */
		if (!m->init || strcmp(m->name, section))
			continue;
		if (size)
			*size = m->value_size;
		return obj->loaded ? bpfrt_map_value_ptr(m->map, 0) : m->init;
	}
	bpfrt_err(-ENOENT, "%s: no global data section %s", obj->name, section);
	return NULL;
}
