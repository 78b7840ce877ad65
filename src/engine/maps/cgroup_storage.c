/* BPF_MAP_TYPE_CGROUP_STORAGE and BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
 * the storage bpf_get_local_storage(map, 0) hands a cgroup program.
 *
 * In Linux a program attached to a cgroup gets one value of the map per
 * (cgroup, attach type), or per cgroup with the 8-byte key, created at
 * attach. bpfrt attaches nothing to cgroups: the process counts as the one
 * cgroup every program of the map runs in, so the map holds exactly one
 * storage (one value, or one value per CPU), zeroed at creation, which all
 * its programs share. User space finds it under the all-zero key
 * (cgroup_inode_id 0, attach_type 0: get_next_key names it); any other key
 * is -ENOENT, as a cgroup without the program is in Linux.
 *
 * Creation follows Linux's cgroup_storage_map_alloc: key_size 16 (struct
 * bpf_cgroup_storage_key) or 8 (the cgroup id alone), value_size from 1
 * to the local-storage limit (-E2BIG above; per-CPU: 32 KiB), max_entries
 * 0, flags BPF_F_NUMA_NODE and the access flags only. Deletes are
 * -EINVAL (storage goes with the cgroup in Linux); programs reach the
 * value only through bpf_get_local_storage (verifier/map_compat.c). */
#include "maps/map.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CGS_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			  BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)
/* Linux's BPF_LOCAL_STORAGE_MAX_VALUE_SIZE: U16_MAX less the storage
 * element's size (128 bytes on 64-bit kernels: its data is cache-line
 * aligned), so 65407 */
#define CGS_VALUE_MAX (65535u - 128u)
#define CGS_KEY_SIZE 16 /* sizeof(struct bpf_cgroup_storage_key), padding included */

struct cgroup_storage_map {
	struct bpfrt_map map;
	uint32_t elem_size; /* round_up(value_size, 8): one CPU's value */
	int nr_cpus;        /* 1 for the shared kind */
	char *values;       /* nr_cpus values, 8-aligned */
};

static struct cgroup_storage_map *to_cgs(struct bpfrt_map *map)
{
	return (struct cgroup_storage_map *)map;
}

static bool is_percpu(const struct bpfrt_map *map)
{
	return map->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

/* The one storage's key is all zeros. */
static bool key_is_ours(const struct bpfrt_map *map, const void *key)
{
	static const char zero[CGS_KEY_SIZE];

	return !memcmp(key, zero, map->key_size);
}

void *bpfrt_cgroup_storage_get(struct bpfrt_map *map)
{
	struct cgroup_storage_map *cgs = to_cgs(map);

	if (is_percpu(map))
		return cgs->values + (size_t)bpfrt_map_this_cpu() * cgs->elem_size;
	return cgs->values;
}

static int cgs_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	struct cgroup_storage_map *cgs = to_cgs(map);

	if (!key_is_ours(map, key))
		return -ENOENT;
	if (!is_percpu(map)) {
		bpfrt_map_copy_out(value, cgs->values, map->value_size);
		return 0;
	}
	/* every CPU's value, each in round_up(value_size, 8) bytes */
	for (int cpu = 0; cpu < cgs->nr_cpus; cpu++)
		bpfrt_map_copy_out((char *)value + (size_t)cpu * cgs->elem_size,
				   cgs->values + (size_t)cpu * cgs->elem_size, map->value_size);
	return 0;
}

static int cgs_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			  uint64_t flags)
{
	struct cgroup_storage_map *cgs = to_cgs(map);

	/* Linux: the per-CPU kind takes BPF_ANY and BPF_EXIST only; the
	 * storage exists, so BPF_NOEXIST updates it on the shared kind */
	if (is_percpu(map) && flags != BPF_ANY && flags != BPF_EXIST)
		return -EINVAL;
	if (!key_is_ours(map, key))
		return -ENOENT;
	if (!is_percpu(map)) {
		bpfrt_map_copy_in(cgs->values, value, map->value_size);
		return 0;
	}
	for (int cpu = 0; cpu < cgs->nr_cpus; cpu++)
		bpfrt_map_copy_in(cgs->values + (size_t)cpu * cgs->elem_size,
				  (const char *)value + (size_t)cpu * cgs->elem_size,
				  map->value_size);
	return 0;
}

static int cgs_sys_delete(struct bpfrt_map *map, const void *key)
{
	return -EINVAL;
}

static int cgs_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	if (key && key_is_ours(map, key))
		return -ENOENT;
	memset(next_key, 0, map->key_size);
	return 0;
}

/* Programs never look up, update or delete (the verifier allows only
 * bpf_get_local_storage): the run-time backstops answer as Linux's ops
 * would for them. */
static void *cgs_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long cgs_update(struct bpfrt_map *map, const void *key, const void *value,
		       uint64_t flags)
{
	return -EINVAL;
}

static long cgs_delete(struct bpfrt_map *map, const void *key)
{
	return -EINVAL;
}

static int cgs_alloc_check(const struct bpfrt_map *attr)
{
	uint32_t max = is_percpu(attr) ? BPFRT_PERCPU_VALUE_MAX : CGS_VALUE_MAX;

	if (attr->key_size != CGS_KEY_SIZE && attr->key_size != 8)
		return bpfrt_err(-EINVAL, "cgroup storage '%s': key_size %u, must be 16 (struct "
				 "bpf_cgroup_storage_key) or 8", attr->name, attr->key_size);
	if (attr->value_size == 0)
		return bpfrt_err(-EINVAL, "cgroup storage '%s': value_size 0", attr->name);
	if (attr->value_size > max)
		return bpfrt_err(-E2BIG, "cgroup storage '%s': value_size %u, at most %u",
				 attr->name, attr->value_size, max);
	if (attr->map_flags & ~CGS_CREATE_FLAGS)
		return bpfrt_err(-EINVAL, "cgroup storage '%s': invalid map_flags 0x%x",
				 attr->name, attr->map_flags);
	if (attr->max_entries)
		return bpfrt_err(-EINVAL, "cgroup storage '%s': max_entries %u, must be 0 (one "
				 "storage per cgroup)", attr->name, attr->max_entries);
	return 0;
}

static int cgs_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	uint64_t cpus = is_percpu(attr) ? (uint64_t)bpfrt_map_nr_cpus() : 1;

	*bytes = sizeof(struct cgroup_storage_map) + cpus * BPFRT_ROUND_UP(attr->value_size, 8);
	return 0;
}

static int cgs_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct cgroup_storage_map *cgs = calloc(1, sizeof(*cgs));

	if (!cgs)
		return -ENOMEM;
	cgs->map = *attr;
	cgs->elem_size = BPFRT_ROUND_UP(attr->value_size, 8);
	cgs->nr_cpus = is_percpu(attr) ? bpfrt_map_nr_cpus() : 1;
	/* calloc's memory is 16-aligned: every value is 8-aligned */
	cgs->values = calloc((size_t)cgs->nr_cpus, cgs->elem_size);
	if (!cgs->values) {
		free(cgs);
		return -ENOMEM;
	}
	*out = &cgs->map;
	return 0;
}

static void cgs_free(struct bpfrt_map *map)
{
	free(to_cgs(map)->values);
	free(map);
}

#define CGS_OPS                                 \
	.alloc_check = cgs_alloc_check,         \
	.mem_size = cgs_mem_size,               \
	.alloc = cgs_alloc,                     \
	.free = cgs_free,                       \
	.sys_lookup = cgs_sys_lookup,           \
	.sys_update = cgs_sys_update,           \
	.sys_delete = cgs_sys_delete,           \
	.get_next_key = cgs_get_next_key,       \
	.lookup = cgs_lookup,                   \
	.update = cgs_update,                   \
	.delete = cgs_delete

const struct bpfrt_map_ops bpfrt_cgroup_storage_map_ops = { CGS_OPS };
const struct bpfrt_map_ops bpfrt_percpu_cgroup_storage_map_ops = { CGS_OPS };
