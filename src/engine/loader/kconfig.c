/* __kconfig externs (libbpf's `extern const T NAME __kconfig;`): the
 * variables libbpf fills from the running kernel's configuration, which
 * bpfrt answers for itself. Each one the object references gets an
 * 8-byte slot of a read-only, frozen ".kconfig" map, as libbpf lays
 * them out, so programs read them as any global and the verifier sees
 * known values. An extern that is not in the table stays undefined (the
 * linker refuses it, naming it). */
#include "loader/object.h"
#include "core/error.h"

#include <stdlib.h>

#include <string.h>

struct kconfig_var {
	const char *name;
	uint64_t value;
};

/* Slot i is at offset 8 * i. LINUX_HAS_BPF_COOKIE: bpf_get_attach_cookie
 * works in every attachable kind (usdt.bpf.h relies on it). */
static const struct kconfig_var kconfig_vars[] = {
	{ "LINUX_HAS_BPF_COOKIE", 1 },
	{ "LINUX_HAS_SYSCALL_WRAPPER", 0 },
};
#define KCONFIG_CNT (sizeof(kconfig_vars) / sizeof(kconfig_vars[0]))

int obj_kconfig_slot(const char *name)
{
	for (size_t i = 0; i < KCONFIG_CNT; i++)
		if (!strcmp(kconfig_vars[i].name, name))
			return (int)i;
	return -1;
}

int obj_collect_kconfig(struct bpfrt_object *obj)
{
	struct obj_map *m;
	bool used = false;

	obj->kconfig_map = -1;
	for (size_t i = 1; i < obj->sym_cnt && !used; i++) {
		GElf_Sym sym;

		if (obj_sym(obj, i, &sym))
			return -EINVAL;
		used = sym.st_shndx == SHN_UNDEF && GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		       obj_kconfig_slot(obj_sym_name(obj, &sym)) >= 0;
	}
	if (!used)
		return 0;
	m = obj_push((void **)&obj->maps, &obj->map_cnt, sizeof(*m));
	if (!m || !(m->name = strdup(".kconfig")) || !(m->init = calloc(KCONFIG_CNT, 8)))
		return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
	m->type = BPF_MAP_TYPE_ARRAY;
	m->key_size = 4;
	m->value_size = (uint32_t)(KCONFIG_CNT * 8);
	m->max_entries = 1;
	m->sec_idx = SIZE_MAX;   /* no section of the object holds it */
	m->map_flags = BPF_F_RDONLY_PROG;
	m->freeze = true;
	for (size_t i = 0; i < KCONFIG_CNT; i++)   /* little-endian slot, as libbpf writes it */
		memcpy((char *)m->init + 8 * i, &kconfig_vars[i].value, 8);
	obj->kconfig_map = (int)(m - obj->maps);
	return 0;
}
