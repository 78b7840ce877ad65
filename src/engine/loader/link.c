/* Static linking of one program, as libbpf does it: copy the program's
 * instructions, append each .text function it reaches (calls and callback
 * references, transitively) once, and resolve relocations: lddw of maps
 * and global data become immediates (recorded as map references), calls
 * become pc-relative BPF-to-BPF calls or, for __ksym externs, calls of
 * host kfuncs by id. */
#include "loader/object.h"
#include "core/error.h"
#include "core/env.h"
#include "isa/isa.h"
#include "maps/map.h"

#include <stdlib.h>
#include <string.h>

#ifndef R_BPF_64_64
#define R_BPF_64_64 1
#endif
#ifndef R_BPF_64_32
#define R_BPF_64_32 10
#endif

struct linker {
	struct bpfrt_object *obj;
	struct bpfrt_env *env;   /* where kfuncs are found by name */
	struct bpf_insn *out;
	size_t cnt, cap;
	uint8_t *relocated;      /* out index -> a relocation fixed this call */
	struct obj_range *ranges;
	size_t range_cnt;
	struct bpfrt_map_ref *refs;
	uint32_t ref_cnt;
};

static int append(struct linker *l, size_t sec, size_t start, size_t len, size_t *pos)
{
	const struct obj_sec *s = &l->obj->secs[sec];
	struct obj_range *r;

	if (!s->data || start > s->data->d_size / 8 || len > s->data->d_size / 8 - start)
		return bpfrt_err(-EINVAL, "%s: section %s: code range out of bounds",
				 l->obj->name, s->name);
	if (l->cnt + len > BPFRT_MAX_INSNS)
		return bpfrt_err(-E2BIG, "%s: linked program exceeds %u instructions",
				 l->obj->name, BPFRT_MAX_INSNS);
	if (l->cnt + len > l->cap) {
		size_t cap = (l->cnt + len) * 2;
		struct bpf_insn *n = realloc(l->out, cap * sizeof(*n));
		uint8_t *f = realloc(l->relocated, cap);

		if (n)
			l->out = n;
		if (f)
			l->relocated = f;
		if (!n || !f)
			return bpfrt_err(-ENOMEM, "%s: out of memory", l->obj->name);
		l->cap = cap;
	}
	/* char arithmetic: a crafted file may leave the section misaligned */
	memcpy(l->out + l->cnt, (const char *)s->data->d_buf + start * 8, len * 8);
	memset(l->relocated + l->cnt, 0, len);
	r = obj_push((void **)&l->ranges, &l->range_cnt, sizeof(*r));
	if (!r)
		return bpfrt_err(-ENOMEM, "%s: out of memory", l->obj->name);
	*r = (struct obj_range){ sec, start, len, l->cnt };
	*pos = l->cnt;
	l->cnt += len;
	return 0;
}

/* Output position of source instruction t of section sec, appending the
 * function that contains it if it is not linked in yet. */
static int resolve_target(struct linker *l, size_t sec, int64_t t, size_t *pos)
{
	struct bpfrt_object *obj = l->obj;

	for (size_t i = 0; i < l->range_cnt; i++) {
		const struct obj_range *r = &l->ranges[i];

		if (r->sec == sec && t >= (int64_t)r->start && t < (int64_t)(r->start + r->len)) {
			*pos = r->pos + (size_t)(t - (int64_t)r->start);
			return 0;
		}
	}
	if (sec >= obj->sec_cnt || (obj->secs[sec].kind != SEC_TEXT && obj->secs[sec].kind != SEC_PROG))
		return bpfrt_err(-EINVAL, "%s: call target in non-code section", obj->name);
	for (size_t i = 1; i < obj->sym_cnt; i++) {
		GElf_Sym sym;
		size_t start, len, base;
		int err;

		if (obj_sym(obj, i, &sym))
			return -EINVAL;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx != sec || sym.st_value % 8)
			continue;
		start = sym.st_value / 8;
		len = sym.st_size / 8;
		if (t < (int64_t)start || t >= (int64_t)(start + len))
			continue;
		err = append(l, sec, start, len, &base);
		if (err)
			return err;
		*pos = base + (size_t)(t - (int64_t)start);
		return 0;
	}
	return bpfrt_err(-EINVAL, "%s: section %s: no function contains instruction %lld",
			 obj->name, obj->secs[sec].name, (long long)t);
}

static int add_ref(struct linker *l, size_t insn, uint8_t kind, struct bpfrt_map *map, uint32_t off)
{
	struct bpfrt_map_ref *r;
	size_t n = l->ref_cnt;

	r = obj_push((void **)&l->refs, &n, sizeof(*r));
	if (!r)
		return bpfrt_err(-ENOMEM, "%s: out of memory", l->obj->name);
	*r = (struct bpfrt_map_ref){ (uint32_t)insn, kind, map, off };
	l->ref_cnt = (uint32_t)n;
	return 0;
}

static void set_imm64(struct bpf_insn *insn, uint64_t v)
{
	insn[0].imm = (int32_t)(uint32_t)v;
	insn[1].imm = (int32_t)(uint32_t)(v >> 32);
}

/* lddw of an extern (loader/externs.c says what each one means here). */
static int reloc_extern(struct linker *l, size_t at, const char *name, const char *what)
{
	struct bpfrt_object *obj = l->obj;
	const struct obj_extern *e = obj_find_extern(obj, name);
	struct bpf_insn *insn = &l->out[at];

	if (!e)
		return bpfrt_err(-ENOENT, "%s: %s: undefined (an extern map or variable that "
				 "no section of this object defines)", obj->name, what);
	if (e->kconfig) {
		struct obj_map *m = &obj->maps[obj->kconfig_map];
		uint64_t off = e->off + (uint32_t)insn->imm;
		char *base = bpfrt_map_value_ptr(m->map, 0);

		if (insn->src_reg || insn[1].imm || off >= m->value_size || !base)
			return bpfrt_err(-EINVAL, "%s: %s: bad reference to extern (kconfig) %s",
					 obj->name, what, name);
		set_imm64(insn, (uintptr_t)(base + off));
		return add_ref(l, at, BPF_PSEUDO_MAP_VALUE, m->map, (uint32_t)off);
	}
	/* bpf_ksym_exists(): a registered kfunc is there (1), a __weak one
	 * that is not, or a __weak kernel variable, is not (0) */
	if (e->func && bpfrt_env_kfunc_id(l->env, name) >= 0) {
		set_imm64(insn, 1);
		insn->src_reg = 0;
		return 0;
	}
	if (e->weak) {
		set_imm64(insn, 0);
		insn->src_reg = 0;
		return 0;
	}
	return bpfrt_err(-ENOENT, "%s: %s: extern (ksym) %s: %s", obj->name, what, name,
			 e->func ? "kfunc not registered by the host" :
			 "a kernel variable, which this process does not have (declare it __weak "
			 "to read it as absent)");
}

static int reloc_lddw(struct linker *l, size_t at, const GElf_Sym *sym, const char *what)
{
	struct bpfrt_object *obj = l->obj;
	struct bpf_insn *insn = &l->out[at];
	const struct obj_sec *ts;

	if (!insn_is_lddw(insn) || at + 1 >= l->cnt)
		return bpfrt_err(-EINVAL, "%s: %s: 64-bit relocation on an instruction that is not lddw",
				 obj->name, what);
	if (sym->st_shndx == SHN_UNDEF)
		return reloc_extern(l, at, obj_sym_name(obj, sym), what);
	if (sym->st_shndx >= obj->sec_cnt)
		return bpfrt_err(-EINVAL, "%s: %s: symbol in section %u, which does not exist",
				 obj->name, what, (unsigned)sym->st_shndx);
	ts = &obj->secs[sym->st_shndx];
	switch (ts->kind) {
	case SEC_MAPS:
	case SEC_LEGACY_MAPS:
		for (size_t i = 0; i < obj->map_cnt; i++) {
			struct obj_map *m = &obj->maps[i];

			if (m->sec_idx != sym->st_shndx || m->sec_off != sym->st_value)
				continue;
			if (!m->map)
				return bpfrt_err(m->unusable_err ? m->unusable_err : -EINVAL,
						 "%s: %s: map %s: %s", obj->name, what,
						 m->name, m->unusable ? m->unusable : "no map");
			set_imm64(insn, (uintptr_t)m->map);
			insn->src_reg = 0;
			return add_ref(l, at, BPF_PSEUDO_MAP_FD, m->map, 0);
		}
		return bpfrt_err(-EINVAL, "%s: %s: no map at offset %llu of %s", obj->name, what,
				 (unsigned long long)sym->st_value, ts->name);
	case SEC_DATA: {
		struct obj_map *m;
		uint64_t off = sym->st_value + (uint32_t)insn->imm;
		char *base;

		if (ts->map_idx < 0) /* an empty section has no map */
			return bpfrt_err(-EINVAL, "%s: %s: reference into empty section %s",
					 obj->name, what, ts->name);
		m = &obj->maps[ts->map_idx];
		if (insn->src_reg || insn[1].imm || off > m->value_size)
			return bpfrt_err(-EINVAL, "%s: %s: offset %llu outside %s", obj->name, what,
					 (unsigned long long)off, ts->name);
		base = bpfrt_map_value_ptr(m->map, 0);
		if (!base)
			return bpfrt_err(-EINVAL, "%s: %s: %s has no storage", obj->name, what, ts->name);
		set_imm64(insn, (uintptr_t)(base + off));
		return add_ref(l, at, BPF_PSEUDO_MAP_VALUE, m->map, (uint32_t)off);
	}
	case SEC_TEXT:
	case SEC_PROG: {
		/* Address of a function (a callback for bpf_loop and friends). */
		uint64_t byte = sym->st_value + (uint32_t)insn->imm;
		size_t pos;
		int err;

		if (byte % 8)
			return bpfrt_err(-EINVAL, "%s: %s: misaligned function reference", obj->name, what);
		err = resolve_target(l, sym->st_shndx, (int64_t)(byte / 8), &pos);
		if (err)
			return err;
		insn = &l->out[at]; /* resolve_target may have moved the buffer */
		insn->src_reg = BPF_PSEUDO_FUNC;
		insn[0].imm = (int32_t)((int64_t)pos - (int64_t)at - 1);
		insn[1].imm = 0;
		return 0;
	}
	default:
		return bpfrt_err(-EINVAL, "%s: %s: relocation against section %s is not supported",
				 obj->name, what, ts->name);
	}
}

static int reloc_call(struct linker *l, size_t at, const GElf_Sym *sym, const char *symname,
		      const char *what)
{
	struct bpfrt_object *obj = l->obj;
	struct bpf_insn *insn = &l->out[at];
	int64_t target;
	size_t pos;
	int err;

	if (!insn_is_call(insn))
		return bpfrt_err(-EINVAL, "%s: %s: 32-bit relocation on an instruction that is not a call",
				 obj->name, what);
	if (sym->st_shndx == SHN_UNDEF) {
		int id = bpfrt_env_kfunc_id(l->env, symname);

		if (id < 0)
			return bpfrt_err(-ENOENT, "%s: %s: kfunc %s is not registered by the host",
					 obj->name, what, symname);
		insn->src_reg = 0;
		insn->imm = id;
		return 0;
	}
	target = (int64_t)(sym->st_value / 8) + insn->imm + 1;
	err = resolve_target(l, sym->st_shndx, target, &pos);
	if (err)
		return err;
	insn = &l->out[at];
	insn->src_reg = BPF_PSEUDO_CALL;
	insn->imm = (int32_t)((int64_t)pos - (int64_t)at - 1);
	return 0;
}

static const struct obj_sec *rel_section_for(const struct bpfrt_object *obj, size_t sec)
{
	for (size_t i = 0; i < obj->sec_cnt; i++)
		if (obj->secs[i].kind == SEC_REL && obj->secs[i].shdr.sh_info == sec)
			return &obj->secs[i];
	return NULL;
}

static int relocate_range(struct linker *l, size_t ri)
{
	struct bpfrt_object *obj = l->obj;
	struct obj_range r = l->ranges[ri];
	const struct obj_sec *rs = rel_section_for(obj, r.sec);
	const char *secname = obj->secs[r.sec].name;
	size_t nrel = rs && rs->data && rs->shdr.sh_entsize ? rs->data->d_size / rs->shdr.sh_entsize : 0;
	int err;

	for (size_t i = 0; i < nrel; i++) {
		char what[256];
		const char *symname;
		GElf_Rel rel;
		GElf_Sym sym;
		size_t at;

		if (!gelf_getrel(rs->data, (int)i, &rel))
			return bpfrt_err(-EINVAL, "%s: %s: bad relocation %zu", obj->name, rs->name, i);
		if (rel.r_offset / 8 < r.start || rel.r_offset / 8 >= r.start + r.len)
			continue;
		if (rel.r_offset % 8)
			return bpfrt_err(-EINVAL, "%s: %s: relocation %zu at offset %llu is not on "
					 "an instruction", obj->name, rs->name, i,
					 (unsigned long long)rel.r_offset);
		at = r.pos + rel.r_offset / 8 - r.start;
		if (obj_sym(obj, GELF_R_SYM(rel.r_info), &sym))
			return bpfrt_err(-EINVAL, "%s: section %s offset %llu: bad symbol",
					 obj->name, secname, (unsigned long long)rel.r_offset);
		symname = obj_sym_name(obj, &sym);
		snprintf(what, sizeof(what), "section %s offset %llu symbol %s", secname,
			 (unsigned long long)rel.r_offset, symname);
		switch (GELF_R_TYPE(rel.r_info)) {
		case R_BPF_64_64:
			err = reloc_lddw(l, at, &sym, what);
			break;
		case R_BPF_64_32:
			err = reloc_call(l, at, &sym, symname, what);
			break;
		default:
			err = bpfrt_err(-EOPNOTSUPP, "%s: %s: unsupported relocation type %u",
					obj->name, what, (unsigned)GELF_R_TYPE(rel.r_info));
		}
		if (err)
			return err;
		l->relocated[at] = 1;
	}
	/* Calls within the same section need no relocation in the ELF, but
	 * their targets move when functions are appended: re-aim them. */
	for (size_t k = 0; k < r.len; k++) {
		size_t at = r.pos + k, pos;
		struct bpf_insn *insn = &l->out[at];
		bool func_ref = insn_is_lddw(insn) && insn->src_reg == BPF_PSEUDO_FUNC;

		if (l->relocated[at] || !(insn_is_local_call(insn) || func_ref))
			continue;
		err = resolve_target(l, r.sec, (int64_t)(r.start + k) + insn->imm + 1, &pos);
		if (err)
			return err;
		l->out[at].imm = (int32_t)((int64_t)pos - (int64_t)at - 1);
		l->relocated[at] = 1;
		if (insn_is_lddw(&l->out[at]))
			k++;
	}
	return 0;
}

int obj_link_prog(struct bpfrt_object *obj, size_t prog_idx, struct bpfrt_env *env,
		  struct bpf_insn **insns, size_t *insn_cnt, struct bpfrt_map_ref **refs,
		  uint32_t *ref_cnt)
{
	const struct obj_prog *op = &obj->progs[prog_idx];
	struct linker l = { .obj = obj, .env = env };
	size_t pos;
	int err;

	/* the default environment's kfuncs (Linux's generic ones) are
	 * registered with its helpers, at its first use */
	if (!env || env == bpfrt_env_default())
		bpfrt_helpers_init();
	err = append(&l, op->sec, op->off, op->len, &pos);
	/* Appending inside the loop grows range_cnt: a worklist. */
	for (size_t i = 0; !err && i < l.range_cnt; i++)
		err = relocate_range(&l, i);
	/* CO-RE last: the ranges are final, and a poisoned lddw must not be
	 * mistaken for a map reference above */
	bpfrt_prog_clear_core_poisons(op->prog);
	for (size_t i = 0; !err && i < l.range_cnt; i++)
		err = obj_core_relocate(obj, l.ranges[i].sec, l.ranges[i].start, l.ranges[i].len,
					l.out, l.ranges[i].pos, l.cnt, op->prog);
	if (!err)
		obj_line_info(obj, l.ranges, l.range_cnt, op->prog);
	free(l.ranges);
	free(l.relocated);
	if (err) {
		free(l.out);
		free(l.refs);
		return err;
	}
	free(*refs);
	*insns = l.out;
	*insn_cnt = l.cnt;
	*refs = l.refs;
	*ref_cnt = l.ref_cnt;
	return 0;
}
