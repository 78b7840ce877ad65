/* BPF_MAP_TYPE_CGROUP_ARRAY: loads, with Linux's creation rules (key and
 * value size 4), so tools that declare one work; in user space it lists
 * no cgroup.
 *
 * In Linux its slots hold cgroups (user space stores cgroup directory
 * fds) and bpf_current_task_under_cgroup(map, i) says whether the current
 * task is in slot i's cgroup. bpfrt runs inside one process and attaches
 * nothing to cgroups, so no cgroup can be listed: user-space updates are
 * -EOPNOTSUPP, and the helper answers as for a process outside every
 * listed cgroup: 0, or -E2BIG for an index past max_entries (as Linux).
 * Lookups and deletes find nothing (-ENOENT); keys iterate as an array's. */
#include "maps/map.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CGA_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			  BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)

long bpfrt_cgroup_array_under(struct bpfrt_map *map, uint32_t idx)
{
	if (map->type != BPF_MAP_TYPE_CGROUP_ARRAY)
		return -EINVAL;
	return idx >= map->max_entries ? -E2BIG : 0;
}

static int cga_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return -ENOENT;
}

static int cga_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			  uint64_t flags)
{
	return -EOPNOTSUPP;
}

static int cga_sys_delete(struct bpfrt_map *map, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, 4);
	return idx >= map->max_entries ? -E2BIG : -ENOENT;
}

static void *cga_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long cga_update(struct bpfrt_map *map, const void *key, const void *value,
		       uint64_t flags)
{
	return -EOPNOTSUPP;
}

static long cga_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

static int cga_alloc_check(const struct bpfrt_map *attr)
{
	if (attr->key_size != 4 || attr->value_size != 4 || attr->max_entries == 0 ||
	    (attr->map_flags & ~CGA_CREATE_FLAGS))
		return bpfrt_err(-EINVAL, "cgroup array '%s': key_size and value_size must be 4, "
				 "max_entries non-zero, flags known (got %u, %u, %u, 0x%x)",
				 attr->name, attr->key_size, attr->value_size, attr->max_entries,
				 attr->map_flags);
	return 0;
}

static int cga_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct bpfrt_map);
	return 0;
}

static int cga_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct bpfrt_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	*m = *attr;
	*out = m;
	return 0;
}

static void cga_free(struct bpfrt_map *map)
{
	free(map);
}

const struct bpfrt_map_ops bpfrt_cgroup_array_map_ops = {
	.alloc_check = cga_alloc_check,
	.mem_size = cga_mem_size,
	.alloc = cga_alloc,
	.free = cga_free,
	.sys_lookup = cga_sys_lookup,
	.sys_update = cga_sys_update,
	.sys_delete = cga_sys_delete,
	.get_next_key = bpfrt_array_get_next_key,
	.lookup = cga_lookup,
	.update = cga_update,
	.delete = cga_delete,
};
