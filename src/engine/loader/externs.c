/* Extern variables, as libbpf resolves them, with what they mean in a
 * user-space process:
 *  - __kconfig (section .kconfig): one read-only, frozen ".kconfig" map
 *    holding every such extern. LINUX_KERNEL_VERSION is the running
 *    kernel's (uname), LINUX_HAS_BPF_COOKIE is 1 (bpf_get_attach_cookie
 *    exists), LINUX_HAS_SYSCALL_WRAPPER 0 (a process calls no kernel
 *    syscall wrappers); CONFIG_* come from the object open's
 *    kconfig lines, then the running kernel's config where readable
 *    (/boot/config-RELEASE, /proc/config.gz). A value found nowhere is 0
 *    for a __weak extern and an error naming the extern for a strong one.
 *    Being frozen and read-only, the values fold into constants in the
 *    verifier, so `if (LINUX_KERNEL_VERSION >= ...)` prunes as in Linux.
 *  - __ksym variables (section .ksyms): kernel variables, which a process
 *    does not have: a __weak one reads as address 0 (bpf_ksym_exists()
 *    is false), a strong one is refused at load, naming it. kfunc
 *    references by address (bpf_ksym_exists(kfunc)) are 1 for a kfunc
 *    the environment registers, 0 for a __weak one it does not. */
#include "loader/object.h"
#include "core/error.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>

#define KCONFIG_MAX (1u << 20) /* a kernel config is ~300 KiB */

/* The ELF symbol of an extern: weak or not. */
static bool sym_is_weak(const struct bpfrt_object *obj, const char *name)
{
	for (size_t i = 1; i < obj->sym_cnt; i++) {
		GElf_Sym sym;

		if (obj_sym(obj, i, &sym))
			break;
		if (sym.st_shndx == SHN_UNDEF && !strcmp(obj_sym_name(obj, &sym), name))
			return GELF_ST_BIND(sym.st_info) == STB_WEAK;
	}
	return false;
}

/* The running kernel's config text, NUL-terminated (NULL: unreadable). */
static char *read_kernel_config(char *where, size_t where_size)
{
	struct utsname u;
	char path[300];
	char *buf = malloc(KCONFIG_MAX + 1);
	size_t n = 0;
	gzFile gz;

	if (!buf || uname(&u)) {
		free(buf);
		return NULL;
	}
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	/* gzread reads plain files as they are */
	gz = gzopen(path, "rb");
	if (!gz) {
		snprintf(path, sizeof(path), "/proc/config.gz");
		gz = gzopen(path, "rb");
	}
	if (gz) {
		int r;

		while (n < KCONFIG_MAX && (r = gzread(gz, buf + n, (unsigned)(KCONFIG_MAX - n))) > 0)
			n += (size_t)r;
		gzclose(gz);
		buf[n] = '\0';
		snprintf(where, where_size, "%s", path);
		return buf;
	}
	free(buf);
	return NULL;
}

/* The value text of NAME in config-format text ("NAME=VALUE" lines;
 * "# NAME is not set" is n), into val; false if absent. */
static bool config_lookup(const char *text, const char *name, char *val, size_t size)
{
	size_t len = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t ll = e ? (size_t)(e - l) : strlen(l);

		if (ll > len + 1 && !strncmp(l, name, len) && l[len] == '=') {
			size_t vl = ll - len - 1;

			if (vl >= size)
				vl = size - 1;
			memcpy(val, l + len + 1, vl);
			val[vl] = '\0';
			return true;
		}
		if (ll > len + 2 && !strncmp(l, "# ", 2) && !strncmp(l + 2, name, len) &&
		    !strncmp(l + 2 + len, " is not set", 11)) {
			snprintf(val, size, "n");
			return true;
		}
	}
	return false;
}

/* Writes a config value of the extern's type (libbpf's rules: y/n/m for
 * bool, tristate enums and char; numbers for integers; a quoted string
 * for char arrays). */
static int kconfig_store(struct bpfrt_object *obj, const char *name, const struct btf_type *t,
			 uint32_t size, const char *val, uint8_t *dst)
{
	bool tri = strlen(val) == 1 && strchr("ynm", val[0]);

	if (btf_is_array(t)) {
		size_t vl = strlen(val);

		if (vl < 2 || val[0] != '"' || val[vl - 1] != '"')
			return bpfrt_err(-EINVAL, "%s: extern (kconfig) %s: '%s' is not a string",
					 obj->name, name, val);
		vl -= 2;
		if (vl >= size)
			vl = size - 1; /* cut, NUL-terminated, as libbpf */
		memcpy(dst, val + 1, vl);
		return 0;
	}
	if (btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_BOOL)) {
		if (!tri || val[0] == 'm')
			return bpfrt_err(-EINVAL, "%s: extern (kconfig) %s: '%s' is no bool value",
					 obj->name, name, val);
		*dst = val[0] == 'y';
		return 0;
	}
	if (btf_is_int(t) && size == 1 && (btf_int_encoding(t) & BTF_INT_CHAR) && tri) {
		*dst = (uint8_t)val[0];
		return 0;
	}
	if (btf_is_enum(t) && tri) { /* enum libbpf_tristate { NO, YES, MODULE } */
		uint32_t v = val[0] == 'y' ? 1 : val[0] == 'm' ? 2 : 0;

		memcpy(dst, &v, size < 4 ? size : 4);
		return 0;
	}
	if (btf_is_int(t) || btf_is_enum(t)) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(val, &end, 0);
		if (tri)
			v = val[0] == 'y';
		else if (errno || *end || end == val)
			return bpfrt_err(-EINVAL, "%s: extern (kconfig) %s: '%s' is not a number",
					 obj->name, name, val);
		memcpy(dst, &v, size <= 8 ? size : 8); /* little-endian objects only */
		return 0;
	}
	return bpfrt_err(-EINVAL, "%s: extern (kconfig) %s: unsupported type", obj->name, name);
}

static uint32_t kernel_version(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0, c = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u.%u", &a, &b, &c) < 2)
		return 0;
	return (a << 16) + (b << 8) + (c > 255 ? 255 : c);
}

/* The value of one .kconfig extern into dst (size bytes, zeroed). */
static int kconfig_value(struct bpfrt_object *obj, const char *name, const struct btf_type *t,
			 uint32_t size, bool weak, const char *user, const char *sys,
			 const char *sys_where, uint8_t *dst)
{
	char val[256];
	uint32_t v;

	if (!strcmp(name, "LINUX_KERNEL_VERSION") || !strcmp(name, "LINUX_HAS_BPF_COOKIE") ||
	    !strcmp(name, "LINUX_HAS_SYSCALL_WRAPPER")) {
		v = name[6] == 'K' ? kernel_version() : !strcmp(name, "LINUX_HAS_BPF_COOKIE");
		memcpy(dst, &v, size < 4 ? size : 4);
		return 0;
	}
	if (strncmp(name, "CONFIG_", 7))
		return bpfrt_err(-EINVAL, "%s: extern (kconfig) %s: not a CONFIG_ name or one "
				 "of libbpf's LINUX_* values", obj->name, name);
	if ((user && config_lookup(user, name, val, sizeof(val))) ||
	    (sys && config_lookup(sys, name, val, sizeof(val))))
		return kconfig_store(obj, name, t, size, val, dst);
	if (weak)
		return 0;
	return bpfrt_err(-ESRCH, "%s: extern (kconfig) %s: not set (%s%s%s) and not __weak",
			 obj->name, name, user ? "not in the open's kconfig, " : "",
			 sys ? "not in " : "the kernel's config is unreadable",
			 sys ? sys_where : "");
}

static int add_extern(struct bpfrt_object *obj, const char *name, bool kconfig, uint32_t off,
		      bool weak)
{
	struct obj_extern *e = obj_push((void **)&obj->externs, &obj->extern_cnt, sizeof(*e));

	if (!e || !(e->name = strdup(name)))
		return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
	e->kconfig = kconfig;
	e->off = off;
	e->weak = weak;
	return 0;
}

static int collect_kconfig(struct bpfrt_object *obj, const char *user)
{
	int32_t id = btf__find_by_name_kind(obj->btf, ".kconfig", BTF_KIND_DATASEC);
	const struct btf_type *ds;
	const struct btf_var_secinfo *vs;
	char where[320] = "";
	char *sys = NULL;
	uint8_t *img = NULL;
	uint32_t total = 0;
	struct obj_map *m;
	int err = 0;

	if (id < 0)
		return 0;
	ds = btf__type_by_id(obj->btf, id);
	/* the layout first: each extern aligned to its size (at most 8) */
	vs = btf_var_secinfos(ds);
	for (int i = 0; i < btf_vlen(ds); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(obj->btf, vs->type);
		int64_t sz = var && btf_is_var(var) ? btf__resolve_size(obj->btf, var->type) : -1;
		uint32_t align;
		const char *name;

		if (sz <= 0 || sz > 4096)
			return bpfrt_err(-EINVAL, "%s: .kconfig entry %d: bad extern", obj->name, i);
		name = btf__name_by_offset(obj->btf, var->name_off);
		align = sz >= 8 ? 8 : sz >= 4 ? 4 : sz >= 2 ? 2 : 1;
		if (btf_is_array(btf__type_by_id(obj->btf, btf__resolve_type(obj->btf, var->type))))
			align = 1;
		total = (total + align - 1) & ~(align - 1);
		err = add_extern(obj, name ? name : "", true, total, sym_is_weak(obj, name ? name : ""));
		if (err)
			return err;
		obj->externs[obj->extern_cnt - 1].size = (uint32_t)sz;
		obj->externs[obj->extern_cnt - 1].type_id = var->type;
		total += (uint32_t)sz;
	}
	if (!total)
		return 0;
	img = calloc(1, total);
	if (!img)
		return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
	for (size_t i = 0; !err && i < obj->extern_cnt; i++) {
		struct obj_extern *e = &obj->externs[i];
		int32_t tid = btf__resolve_type(obj->btf, e->type_id);
		const struct btf_type *t = tid < 0 ? NULL : btf__type_by_id(obj->btf, tid);

		if (!e->kconfig)
			continue;
		if (!t) {
			err = bpfrt_err(-EINVAL, "%s: extern (kconfig) %s: bad type", obj->name, e->name);
			break;
		}
		if (!sys && !strncmp(e->name, "CONFIG_", 7) && !where[0]) {
			sys = read_kernel_config(where, sizeof(where));
			if (!sys)
				snprintf(where, sizeof(where), "-");
		}
		err = kconfig_value(obj, e->name, t, e->size, e->weak, user, sys, where,
				    img + e->off);
	}
	free(sys);
	if (err) {
		free(img);
		return err;
	}
	m = obj_push((void **)&obj->maps, &obj->map_cnt, sizeof(*m));
	if (!m || !(m->name = strdup(".kconfig"))) {
		free(img);
		return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
	}
	m->type = BPF_MAP_TYPE_ARRAY;
	m->key_size = 4;
	m->value_size = total;
	m->max_entries = 1;
	m->map_flags = BPF_F_RDONLY_PROG;
	m->freeze = true;
	m->init = img;
	m->sec_idx = SIZE_MAX; /* no section: references go through the extern table */
	obj->kconfig_map = (int)(m - obj->maps);
	return 0;
}

static int collect_ksyms(struct bpfrt_object *obj)
{
	int32_t id = btf__find_by_name_kind(obj->btf, ".ksyms", BTF_KIND_DATASEC);
	const struct btf_type *ds;
	const struct btf_var_secinfo *vs;

	if (id < 0)
		return 0;
	ds = btf__type_by_id(obj->btf, id);
	vs = btf_var_secinfos(ds);
	for (int i = 0; i < btf_vlen(ds); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(obj->btf, vs->type);
		const char *name = t ? btf__name_by_offset(obj->btf, t->name_off) : NULL;
		int err;

		if (!t || !name)
			return bpfrt_err(-EINVAL, "%s: .ksyms entry %d: bad extern", obj->name, i);
		err = add_extern(obj, name, false, 0, sym_is_weak(obj, name));
		if (err)
			return err;
		obj->externs[obj->extern_cnt - 1].func = btf_is_func(t);
	}
	return 0;
}

int obj_collect_externs(struct bpfrt_object *obj, const char *kconfig)
{
	int err;

	obj->kconfig_map = -1;
	if (!obj->btf)
		return 0; /* an extern without BTF is refused where it is used (link.c) */
	err = collect_kconfig(obj, kconfig);
	if (!err)
		err = collect_ksyms(obj);
	return err;
}

const struct obj_extern *obj_find_extern(const struct bpfrt_object *obj, const char *name)
{
	for (size_t i = 0; i < obj->extern_cnt; i++)
		if (!strcmp(obj->externs[i].name, name))
			return &obj->externs[i];
	return NULL;
}

void obj_free_externs(struct bpfrt_object *obj)
{
	for (size_t i = 0; i < obj->extern_cnt; i++)
		free(obj->externs[i].name);
	free(obj->externs);
	obj->externs = NULL;
	obj->extern_cnt = 0;
}
