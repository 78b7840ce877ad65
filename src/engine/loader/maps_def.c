/* Map definitions: BTF-defined maps in .maps (the __uint/__type
 * convention of bpf_helpers.h), legacy struct bpf_map_def in "maps", and
 * one array map per global-data section. */
#include "loader/object.h"
#include "core/error.h"
#include "loader/value_fields.h"
#include "maps/map.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Longest typedef/modifier chain followed, as libbpf's MAX_RESOLVE_DEPTH:
 * BTF is not checked for cycles when parsed, and a chain that loops
 * would be followed for ever. */
#define BTF_CHAIN_MAX 32

/* The type id refers to with typedefs and modifiers (const, volatile,
 * restrict, type tags) skipped; NULL if a type is missing, NULL with
 * *loops set if the chain is longer than BTF_CHAIN_MAX (a cycle). */
static const struct btf_type *skip_mods(const struct btf *btf, uint32_t id, bool *loops)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	for (int depth = 0; t && (btf_is_mod(t) || btf_is_typedef(t)); depth++) {
		if (depth == BTF_CHAIN_MAX) {
			*loops = true;
			return NULL;
		}
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	return t;
}

/* __uint(name, N) is `int (*name)[N]`: N is the array's element count. */
static int member_uint(const struct btf *btf, const struct btf_member *m, uint32_t *val)
{
	bool loops = false;
	const struct btf_type *t = skip_mods(btf, m->type, &loops);
	const struct btf_type *arr;

	if (!t || !btf_is_ptr(t))
		return loops ? -ELOOP : -EINVAL;
	arr = skip_mods(btf, t->type, &loops);
	if (!arr || !btf_is_array(arr))
		return loops ? -ELOOP : -EINVAL;
	*val = btf_array(arr)->nelems;
	return 0;
}

/* __ulong(name, N) is an anonymous one-value enum `enum { x = N } name`
 * (libbpf's 64-bit fields: map_extra); __uint works there too. */
static int member_u64(const struct btf *btf, const struct btf_member *m, uint64_t *val)
{
	bool loops = false;
	const struct btf_type *t = skip_mods(btf, m->type, &loops);
	uint32_t v32;
	int err;

	if (t && btf_is_enum(t) && btf_vlen(t) == 1) {
		*val = (uint32_t)btf_enum(t)->val;
		return 0;
	}
	if (t && btf_is_enum64(t) && btf_vlen(t) == 1) {
		*val = btf_enum64_value(btf_enum64(t));
		return 0;
	}
	err = member_uint(btf, m, &v32);
	if (!err)
		*val = v32;
	return err;
}

/* __type(name, T) is `T *name`: the size of T. */
static int member_type_size(const struct btf *btf, const struct btf_member *m, uint32_t *size)
{
	bool loops = false;
	const struct btf_type *t = skip_mods(btf, m->type, &loops);
	int64_t sz;

	if (!t || !btf_is_ptr(t))
		return loops ? -ELOOP : -EINVAL;
	/* libbpf gives up on longer chains too, but says only -EINVAL */
	if (!skip_mods(btf, t->type, &loops) && loops)
		return -ELOOP;
	sz = btf__resolve_size(btf, t->type);
	if (sz < 0 || sz > UINT32_MAX)
		return -EINVAL;
	*size = (uint32_t)sz;
	return 0;
}

static int parse_btf_map(struct bpfrt_object *obj, const char *name, uint32_t type_id,
			 struct obj_map *m);

/* __array(values, struct inner) is `struct inner *values[]`: the inner
 * map's definition is a template, parsed as a map of its own. A prog
 * array's `__array(values, void (void))` is an array of function
 * pointers: its initial slots name programs (.values = { [i] = &prog }),
 * filled once the programs are loaded (obj_init_prog_slots). */
static int member_values(struct bpfrt_object *obj, const char *name,
			 const struct btf_member *mem, struct obj_map *m)
{
	bool loops = false;
	const struct btf_type *arr = skip_mods(obj->btf, mem->type, &loops), *ptr, *def;
	char inner_name[BPFRT_NAME_LEN + 8];

	if (!arr || !btf_is_array(arr))
		return loops ? -ELOOP : -EINVAL;
	ptr = skip_mods(obj->btf, btf_array(arr)->type, &loops);
	if (!ptr || !btf_is_ptr(ptr))
		return loops ? -ELOOP : -EINVAL;
	def = skip_mods(obj->btf, ptr->type, &loops);
	if (!def)
		return loops ? -ELOOP : -EINVAL;
	if (btf_is_func_proto(def)) {
		if (m->prog_values || m->inner)
			return -EINVAL;
		m->prog_values = true;
		return 0;
	}
	if (!btf_is_struct(def))
		return -EOPNOTSUPP;
	if (m->inner || m->prog_values)
		return -EINVAL;
	m->inner = calloc(1, sizeof(*m->inner));
	snprintf(inner_name, sizeof(inner_name), "%.11s.inner", name);
	if (!m->inner || !(m->inner->name = strdup(inner_name)))
		return -ENOMEM;
	return parse_btf_map(obj, inner_name, ptr->type, m->inner);
}

/* __type(value, T): where T's struct bpf_spin_lock is, if it has one
 * (value_fields.c); 0 or -errno with the message. */
static int value_spin_lock(struct bpfrt_object *obj, const char *name,
			   const struct btf_member *mem, struct obj_map *m)
{
	bool loops = false;
	const struct btf_type *ptr = skip_mods(obj->btf, mem->type, &loops);
	int32_t off;
	int err;

	if (!ptr || !btf_is_ptr(ptr))
		return 0;
	err = bpfrt_btf_find_spin_lock(obj->btf, ptr->type, obj->name, name, &off);
	if (err)
		return err;
	m->has_spin_lock = off >= 0;
	m->spin_lock_off = off >= 0 ? (uint32_t)off : 0;
	return 0;
}

static int parse_btf_map(struct bpfrt_object *obj, const char *name, uint32_t type_id,
			 struct obj_map *m)
{
	bool loops = false;
	const struct btf_type *t = skip_mods(obj->btf, type_id, &loops);
	const struct btf_member *mem;

	if (loops)
		return bpfrt_err(-ELOOP, "%s: map %s: the BTF type chain of its definition "
				 "(type id %u) loops or is longer than %d", obj->name, name,
				 type_id, BTF_CHAIN_MAX);
	if (!t || !btf_is_struct(t))
		return bpfrt_err(-EINVAL, "%s: map %s: definition in .maps is not a struct",
				 obj->name, name);
	mem = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, mem++) {
		const char *mn = btf__name_by_offset(obj->btf, mem->name_off);
		int err = 0;

		if (!mn)
			continue;
		if (!strcmp(mn, "type"))
			err = member_uint(obj->btf, mem, &m->type);
		else if (!strcmp(mn, "max_entries"))
			err = member_uint(obj->btf, mem, &m->max_entries);
		else if (!strcmp(mn, "map_flags"))
			err = member_uint(obj->btf, mem, &m->map_flags);
		else if (!strcmp(mn, "key_size"))
			err = member_uint(obj->btf, mem, &m->key_size);
		else if (!strcmp(mn, "value_size"))
			err = member_uint(obj->btf, mem, &m->value_size);
		else if (!strcmp(mn, "map_extra"))
			err = member_u64(obj->btf, mem, &m->map_extra);
		else if (!strcmp(mn, "key"))
			err = member_type_size(obj->btf, mem, &m->key_size);
		else if (!strcmp(mn, "value")) {
			err = member_type_size(obj->btf, mem, &m->value_size);
			if (!err && (err = value_spin_lock(obj, name, mem, m)))
				return err;
		}
		else if (!strcmp(mn, "values")) {
			err = member_values(obj, name, mem, m);
			m->values_off = btf_member_bit_offset(t, (uint32_t)i) / 8;
			/* libbpf: a map-in-map's (and a prog array's) value is
			 * the inner map's (program's) fd */
			if (!err && !m->value_size)
				m->value_size = 4;
		} else if (!strcmp(mn, "pinning"))
			err = member_uint(obj->btf, mem, &m->pinning);
		else if (!strcmp(mn, "inner_map") || !strcmp(mn, "numa_node"))
			err = !strcmp(mn, "numa_node") ? 0 : -EOPNOTSUPP;
		else
			err = -EINVAL;
		if (err == -ELOOP)
			return bpfrt_err(err, "%s: map %s: field '%s': its BTF type chain (type "
					 "id %u) loops or is longer than %d", obj->name, name, mn,
					 mem->type, BTF_CHAIN_MAX);
		if (err == -EOPNOTSUPP)
			return bpfrt_err(err, "%s: map %s: field '%s' is not supported yet",
					 obj->name, name, mn);
		if (err)
			return bpfrt_err(err, "%s: map %s: bad or unknown field '%s'",
					 obj->name, name, mn);
	}
	/* libbpf's defaults for a perf event array: an fd per CPU */
	if (m->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY) {
		if (!m->key_size)
			m->key_size = 4;
		if (!m->value_size)
			m->value_size = 4;
		if (!m->max_entries)
			m->max_entries = (uint32_t)bpfrt_num_possible_cpus();
	}
	/* libbpf's LIBBPF_PIN_NONE and LIBBPF_PIN_BY_NAME; anything else it
	 * refuses. Pinning shares a map through bpffs with other processes;
	 * bpfrt's maps live in this process only, so a pinned map is an
	 * ordinary one here (nothing is written to or reused from a
	 * filesystem). */
	if (m->pinning > 1)
		return bpfrt_err(-EINVAL, "%s: map %s: unknown pinning value %u (0: none, "
				 "1: by name)", obj->name, name, m->pinning);
	/* libbpf: function pointers are a prog array's values only */
	if (m->prog_values && m->type != BPF_MAP_TYPE_PROG_ARRAY)
		return bpfrt_err(-EINVAL, "%s: map %s: values of function type are for prog "
				 "arrays only", obj->name, name);
	return 0;
}

/* clang leaves DATASEC offsets 0 (libbpf fixes them up at open): a map's
 * place in .maps is its ELF symbol's value. A definition without a symbol
 * could not be referenced, and one outside the section was not made by
 * clang: both are refused, as libbpf refuses them. */
static int map_sym_offset(const struct bpfrt_object *obj, size_t sec_idx,
			  const char *name, size_t *off)
{
	const struct obj_sec *sec = &obj->secs[sec_idx];

	for (size_t i = 1; i < obj->sym_cnt; i++) {
		GElf_Sym sym;

		if (obj_sym(obj, i, &sym))
			return -EINVAL;
		if (sym.st_shndx != sec_idx || GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
		    strcmp(obj_sym_name(obj, &sym), name))
			continue;
		if (sym.st_value >= sec->shdr.sh_size)
			return bpfrt_err(-EINVAL, "%s: map %s: symbol offset %llu outside %s "
					 "(%llu bytes)", obj->name, name,
					 (unsigned long long)sym.st_value, sec->name,
					 (unsigned long long)sec->shdr.sh_size);
		*off = sym.st_value;
		return 0;
	}
	return bpfrt_err(-ENOENT, "%s: map %s: no ELF symbol for it in %s", obj->name,
			 name, sec->name);
}

static int collect_btf_maps(struct bpfrt_object *obj, size_t sec_idx)
{
	const struct btf_type *ds;
	const struct btf_var_secinfo *vs;
	int32_t id;

	if (!obj->btf && !obj->has_btf_sec)
		return bpfrt_err(-EINVAL, "%s: .maps needs BTF, and there is no .BTF section "
				 "(build with clang -g)", obj->name);
	if (!obj->btf)
		return bpfrt_err(-EINVAL, "%s: .maps needs BTF, and section .BTF is malformed "
				 "(libbpf: %s)", obj->name, strerror(-obj->btf_err));
	id = btf__find_by_name_kind(obj->btf, ".maps", BTF_KIND_DATASEC);
	if (id < 0)
		return bpfrt_err(-EINVAL, "%s: no BTF DATASEC for .maps", obj->name);
	ds = btf__type_by_id(obj->btf, id);
	vs = btf_var_secinfos(ds);
	for (int i = 0; i < btf_vlen(ds); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(obj->btf, vs->type);
		struct obj_map *m;
		const char *name;
		int err;

		if (!var || !btf_is_var(var))
			return bpfrt_err(-EINVAL, "%s: .maps entry %d is not a variable", obj->name, i);
		/* An extern map is defined by another object: references to
		 * it fail at load, naming it (link.c). */
		if (btf_var(var)->linkage == BTF_VAR_GLOBAL_EXTERN)
			continue;
		name = btf__name_by_offset(obj->btf, var->name_off);
		m = obj_push((void **)&obj->maps, &obj->map_cnt, sizeof(*m));
		if (!m || !(m->name = strdup(name ? name : "")))
			return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
		m->sec_idx = sec_idx;
		err = map_sym_offset(obj, sec_idx, m->name, &m->sec_off);
		if (err)
			return err;
		err = parse_btf_map(obj, m->name, var->type, m);
		/* a definition bpfrt does not support yet keeps only this map
		 * out: a program that uses it fails to load, naming it, and the
		 * object's other programs load without it */
		if (err == -EOPNOTSUPP) {
			err = obj_map_set_unusable(obj, m, err);
			bpfrt_err_clear();
			if (err)
				return bpfrt_err(err, "%s: out of memory", obj->name);
			continue;
		}
		if (err)
			return err;
	}
	return 0;
}

/* struct bpf_map_def { type, key_size, value_size, max_entries, map_flags } */
static int collect_legacy_maps(struct bpfrt_object *obj, size_t sec_idx)
{
	const struct obj_sec *sec = &obj->secs[sec_idx];

	for (size_t i = 1; i < obj->sym_cnt; i++) {
		struct obj_map *m;
		uint32_t def[5];
		GElf_Sym sym;

		if (obj_sym(obj, i, &sym))
			return -EINVAL;
		if (sym.st_shndx != sec_idx || GELF_ST_TYPE(sym.st_info) == STT_SECTION)
			continue;
		if (!sec->data || sec->data->d_size < sizeof(def) ||
		    sym.st_value > sec->data->d_size - sizeof(def))
			return bpfrt_err(-EINVAL, "%s: legacy map %s: definition out of section",
					 obj->name, obj_sym_name(obj, &sym));
		memcpy(def, (char *)sec->data->d_buf + sym.st_value, sizeof(def));
		m = obj_push((void **)&obj->maps, &obj->map_cnt, sizeof(*m));
		if (!m || !(m->name = strdup(obj_sym_name(obj, &sym))))
			return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
		m->sec_idx = sec_idx;
		m->sec_off = sym.st_value;
		m->type = def[0];
		m->key_size = def[1];
		m->value_size = def[2];
		m->max_entries = def[3];
		m->map_flags = def[4];
	}
	return 0;
}

int obj_collect_map_defs(struct bpfrt_object *obj)
{
	for (size_t i = 0; i < obj->sec_cnt; i++) {
		int err = 0;

		if (obj->secs[i].kind == SEC_MAPS)
			err = collect_btf_maps(obj, i);
		else if (obj->secs[i].kind == SEC_LEGACY_MAPS)
			err = collect_legacy_maps(obj, i);
		if (err)
			return err;
	}
	return 0;
}

static struct obj_map *map_at(struct bpfrt_object *obj, size_t sec_idx, size_t off)
{
	for (size_t i = 0; i < obj->map_cnt; i++)
		if (obj->maps[i].sec_idx == sec_idx && obj->maps[i].sec_off == off)
			return &obj->maps[i];
	return NULL;
}

/* The program whose code starts at symbol sym, or NULL. */
static struct obj_prog *prog_at(struct bpfrt_object *obj, const GElf_Sym *sym)
{
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_value % 8)
		return NULL;
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (obj->progs[i].sec == sym->st_shndx && obj->progs[i].off == sym->st_value / 8)
			return &obj->progs[i];
	return NULL;
}

/* A map-in-map slot: the map the symbol names. */
static int init_map_slot(struct bpfrt_object *obj, struct obj_map *m, uint32_t slot,
			 size_t sec_idx, const GElf_Sym *sym)
{
	struct obj_map *target = sym->st_shndx == sec_idx ? map_at(obj, sec_idx, sym->st_value) : NULL;
	int err;

	if (!target || target->inner || target->prog_values)
		return bpfrt_err(-EINVAL, "%s: map %s: initial value [%u] is '%s', not a map "
				 "of .maps", obj->name, m->name, slot, obj_sym_name(obj, sym));
	if (!target->map)
		return bpfrt_err(target->unusable_err ? target->unusable_err : -EINVAL,
				 "%s: map %s: initial value [%u] is map %s, which is not created "
				 "here: %s", obj->name, m->name, slot, target->name,
				 target->unusable ? target->unusable : "not created");
	err = bpfrt_map_update_inner(m->map, &slot, target->map, BPF_ANY);
	if (err)
		return obj_err_wrap(err, "%s: map %s: initial value [%u] = %s", obj->name,
				    m->name, slot, target->name);
	return 0;
}

/* A prog array slot: the program the symbol names, which must be one the
 * load includes (libbpf refuses a slot whose program it does not load). */
static int init_prog_slot(struct bpfrt_object *obj, struct obj_map *m, uint32_t slot,
			  const GElf_Sym *sym, enum obj_slots pass)
{
	struct obj_prog *target = prog_at(obj, sym);
	int err;

	if (!target)
		return bpfrt_err(-EINVAL, "%s: map %s: initial value [%u] is '%s', not a program "
				 "of this object", obj->name, m->name, slot, obj_sym_name(obj, sym));
	if (!target->prog->autoload)
		return bpfrt_err(-EINVAL, "%s: map %s: initial value [%u] is program %s, which "
				 "this load leaves out (autoload off)", obj->name, m->name, slot,
				 target->prog->name);
	if (pass == OBJ_SLOTS_PROGS_CHECK)
		return 0;
	err = bpfrt_prog_array_init_slot(m->map, slot, target->prog);
	if (err)
		return obj_err_wrap(err, "%s: map %s: initial value [%u] = %s", obj->name,
				    m->name, slot, target->prog->name);
	return 0;
}

/* One .rel.maps entry: slot (r_offset - values) / 8 of the map-in-map or
 * prog array whose values array it falls in gets the map or program its
 * symbol names, in the pass for its kind. */
static int init_slot(struct bpfrt_object *obj, size_t sec_idx, const GElf_Rel *rel,
		     enum obj_slots pass)
{
	GElf_Sym sym;

	if (obj_sym(obj, GELF_R_SYM(rel->r_info), &sym))
		return bpfrt_err(-EINVAL, "%s: .maps relocation at %llu: bad symbol", obj->name,
				 (unsigned long long)rel->r_offset);
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct obj_map *m = &obj->maps[i];
		size_t start = m->sec_off + m->values_off;
		uint32_t slot;

		if (!(m->inner || m->prog_values) || m->sec_idx != sec_idx || rel->r_offset < start ||
		    rel->r_offset >= start + 8ull * m->max_entries)
			continue;
		slot = (uint32_t)((rel->r_offset - start) / 8);
		/* a map this load does not create has no slots to fill */
		if (!m->map && pass != OBJ_SLOTS_PROGS_CHECK)
			return 0;
		if (m->inner)
			return pass == OBJ_SLOTS_MAPS ? init_map_slot(obj, m, slot, sec_idx, &sym) : 0;
		if (m->unusable)
			return 0;
		return pass == OBJ_SLOTS_MAPS ? 0 : init_prog_slot(obj, m, slot, &sym, pass);
	}
	return bpfrt_err(-EINVAL, "%s: .maps relocation at offset %llu (symbol %s) is in no "
			 "map-in-map's or prog array's values", obj->name,
			 (unsigned long long)rel->r_offset, obj_sym_name(obj, &sym));
}

int obj_init_map_slots(struct bpfrt_object *obj, enum obj_slots pass)
{
	for (size_t s = 0; s < obj->sec_cnt; s++) {
		const struct obj_sec *rs = &obj->secs[s];
		size_t nrel;

		if (rs->kind != SEC_REL || rs->shdr.sh_info >= obj->sec_cnt ||
		    obj->secs[rs->shdr.sh_info].kind != SEC_MAPS)
			continue;
		nrel = rs->data && rs->shdr.sh_entsize ? rs->data->d_size / rs->shdr.sh_entsize : 0;
		for (size_t i = 0; i < nrel; i++) {
			GElf_Rel rel;
			int err;

			if (!gelf_getrel(rs->data, (int)i, &rel))
				return bpfrt_err(-EINVAL, "%s: %s: bad relocation %zu", obj->name,
						 rs->name, i);
			if ((err = init_slot(obj, rs->shdr.sh_info, &rel, pass)))
				return err;
		}
	}
	return 0;
}

int obj_map_set_unusable(const struct bpfrt_object *obj, struct obj_map *m, int err)
{
	const char *why = bpfrt_last_error();
	size_t n = strlen(obj->name);

	/* the reason without the "OBJECT: map NAME: " a message starts with */
	if (!strncmp(why, obj->name, n) && !strncmp(why + n, ": map ", 6) &&
	    !strncmp(why + n + 6, m->name, strlen(m->name)) &&
	    !strncmp(why + n + 6 + strlen(m->name), ": ", 2))
		why += n + 6 + strlen(m->name) + 2;
	if (!m->unusable && !(m->unusable = strdup(why)))
		return -ENOMEM;
	if (!m->unusable_err)
		m->unusable_err = err;
	return 0;
}

int obj_collect_data_maps(struct bpfrt_object *obj)
{
	for (size_t i = 0; i < obj->sec_cnt; i++) {
		struct obj_sec *sec = &obj->secs[i];
		struct obj_map *m;

		if (sec->kind != SEC_DATA || !sec->shdr.sh_size)
			continue;
		if (sec->shdr.sh_size > UINT32_MAX / 2)
			return bpfrt_err(-E2BIG, "%s: section %s too large", obj->name, sec->name);
		m = obj_push((void **)&obj->maps, &obj->map_cnt, sizeof(*m));
		if (!m || !(m->name = strdup(sec->name)) ||
		    !(m->init = calloc(1, sec->shdr.sh_size)))
			return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
		m->type = BPF_MAP_TYPE_ARRAY;
		m->key_size = 4;
		m->value_size = (uint32_t)sec->shdr.sh_size;
		m->max_entries = 1;
		m->sec_idx = i;
		/* Read-only data, as libbpf makes it: programs may not write
		 * it, and it is frozen once its initial values are in (which
		 * the user may set between open and load). */
		if (!strcmp(sec->name, ".rodata") || !strncmp(sec->name, ".rodata.", 8)) {
			m->map_flags = BPF_F_RDONLY_PROG;
			m->freeze = true;
		}
		if (sec->data && sec->shdr.sh_type != SHT_NOBITS) {
			if (sec->data->d_size != sec->shdr.sh_size)
				return bpfrt_err(-EINVAL, "%s: section %s: short data", obj->name, sec->name);
			memcpy(m->init, sec->data->d_buf, sec->data->d_size);
		}
		sec->map_idx = (int)(m - obj->maps);
	}
	return 0;
}
