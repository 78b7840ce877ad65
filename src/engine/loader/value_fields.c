/* The special fields of a map's BTF value type that bpfrt knows: a
 * struct bpf_spin_lock, found as libbpf hands the value type to the
 * kernel and the kernel finds it (btf_parse_fields): a member whose type
 * (through typedefs and modifiers) is the struct named bpf_spin_lock,
 * in the value struct or a struct nested in it; at most one, 4-aligned. */
#include "loader/value_fields.h"
#include "core/error.h"

#include <bpf/btf.h>
#include <errno.h>
#include <string.h>

#define NEST_MAX 8 /* structs within structs followed, as a bound on bad BTF */

static const struct btf_type *resolve(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	for (int i = 0; t && (btf_is_mod(t) || btf_is_typedef(t)) && i < 32; i++)
		t = btf__type_by_id(btf, t->type);
	return t;
}

static bool is_spin_lock(const struct btf *btf, const struct btf_type *t)
{
	const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	return t && btf_is_struct(t) && name && !strcmp(name, "bpf_spin_lock");
}

/* Adds the locks inside struct t at base (bits) to *cnt, the first at *off. */
static void scan(const struct btf *btf, const struct btf_type *t, uint64_t base, int depth,
		 int *cnt, uint64_t *off)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const struct btf_type *mt = resolve(btf, m->type);
		uint64_t at = base + btf_member_bit_offset(t, (uint32_t)i);

		if (is_spin_lock(btf, mt)) {
			if (!(*cnt)++)
				*off = at;
		} else if (mt && (btf_is_struct(mt) || btf_is_union(mt)) && depth < NEST_MAX) {
			scan(btf, mt, at, depth + 1, cnt, off);
		}
	}
}

int bpfrt_btf_find_spin_lock(const struct btf *btf, uint32_t value_type, const char *obj,
			     const char *map, int32_t *off)
{
	const struct btf_type *t = resolve(btf, value_type);
	uint64_t bits = 0;
	int cnt = 0;

	*off = -1;
	if (!t)
		return 0;
	if (is_spin_lock(btf, t)) {
		*off = 0; /* the whole value is the lock */
		return 0;
	}
	if (!btf_is_struct(t) && !btf_is_union(t))
		return 0;
	scan(btf, t, 0, 0, &cnt, &bits);
	if (!cnt)
		return 0;
	if (cnt > 1)
		return bpfrt_err(-E2BIG, "%s: map %s: its value has %d struct bpf_spin_lock "
				 "fields: at most one (Linux: -E2BIG)", obj, map, cnt);
	if (bits % 32)
		return bpfrt_err(-EINVAL, "%s: map %s: its struct bpf_spin_lock at bit %llu is not "
				 "4-byte aligned", obj, map, (unsigned long long)bits);
	*off = (int32_t)(bits / 8);
	return 0;
}
