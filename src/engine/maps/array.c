/* BPF_MAP_TYPE_ARRAY and BPF_MAP_TYPE_PERCPU_ARRAY: max_entries values of
 * round_up(value_size, 8) bytes, zero-initialised, updated in place (a
 * concurrent reader may see a partly written value, as in Linux). Per-CPU
 * arrays keep one region per CPU, each cache-line aligned so CPUs do not
 * share lines. */
#include "maps/map.h"
#include "core/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARRAY_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_MMAPABLE | BPF_F_RDONLY | \
			    BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | \
			    BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP)

struct array_map {
	struct bpfrt_map map;
	uint32_t elem_size;   /* round_up(value_size, 8) */
	int nr_cpus;          /* 1 for plain arrays */
	size_t cpu_stride;    /* bytes between two CPUs' regions */
	char *values;
	size_t mapped;        /* values is an mmap of this many bytes, or 0 (calloc) */
	int shm_fd;           /* BPFRT_MAP_F_SHARED: the memfd values maps, else -1 */
};

static struct array_map *to_array(struct bpfrt_map *map)
{
	return (struct array_map *)map;
}

/* Shared with PROG_ARRAY (Linux's array_map_alloc_check). */
int bpfrt_array_alloc_check(const struct bpfrt_map *attr)
{
	bool percpu = attr->type == BPF_MAP_TYPE_PERCPU_ARRAY;
	uint32_t flags = attr->map_flags;

	if (attr->key_size != 4)
		return bpfrt_err(-EINVAL, "array map '%s': key_size %u, must be 4",
				 attr->name, attr->key_size);
	if (attr->value_size == 0 || attr->max_entries == 0)
		return bpfrt_err(-EINVAL, "array map '%s': value_size and max_entries "
				 "must be non-zero", attr->name);
	if ((flags & ~ARRAY_CREATE_FLAGS) ||
	    (percpu && (flags & (BPF_F_NUMA_NODE | BPF_F_MMAPABLE | BPF_F_INNER_MAP))) ||
	    (attr->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY && (flags & BPF_F_PRESERVE_ELEMS)))
		return bpfrt_err(-EINVAL, "array map '%s': invalid map_flags 0x%x",
				 attr->name, flags);
	if (attr->value_size > (percpu ? BPFRT_PERCPU_VALUE_MAX : BPFRT_MAP_VALUE_SIZE_MAX))
		return bpfrt_err(-E2BIG, "array map '%s': value_size %u too large",
				 attr->name, attr->value_size);
	return 0;
}

/* A plain array that programs may not write: once frozen, nothing may
 * write it, and its storage can be protected (user space has its address
 * through bpfrt_map_value_ptr). */
static bool storage_protectable(const struct bpfrt_map *attr)
{
	return attr->type == BPF_MAP_TYPE_ARRAY && (attr->map_flags & BPF_F_RDONLY_PROG);
}

/* Bytes of one CPU's values (all of them for plain arrays). */
static uint64_t array_region(const struct bpfrt_map *attr)
{
	return (uint64_t)attr->max_entries * BPFRT_ROUND_UP(attr->value_size, 8);
}

static int array_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	uint64_t region = array_region(attr);

	/* Linux refuses arrays of 4 GiB and more the same way. */
	if (region >= UINT32_MAX)
		return bpfrt_err(-ENOMEM, "array map '%s': %u entries of %u bytes is too "
				 "large", attr->name, attr->max_entries,
				 BPFRT_ROUND_UP(attr->value_size, 8));
	if (attr->type == BPF_MAP_TYPE_PERCPU_ARRAY)
		region = BPFRT_ROUND_UP(region, 64) * (uint64_t)bpfrt_map_nr_cpus();
	if (storage_protectable(attr) || (attr->bpfrt_flags & BPFRT_MAP_F_SHARED))
		region = BPFRT_ROUND_UP(region, (uint64_t)sysconf(_SC_PAGESIZE));
	*bytes = sizeof(struct array_map) + region;
	return 0;
}

static int array_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	bool percpu = attr->type == BPF_MAP_TYPE_PERCPU_ARRAY;
	struct array_map *array;
	uint64_t region = array_region(attr);  /* < 4 GiB: array_mem_size */

	array = calloc(1, sizeof(*array));
	if (!array)
		return -ENOMEM;
	array->map = *attr;
	array->elem_size = BPFRT_ROUND_UP(attr->value_size, 8);
	array->nr_cpus = percpu ? bpfrt_map_nr_cpus() : 1;
	array->cpu_stride = percpu ? BPFRT_ROUND_UP(region, 64) : region;
	array->shm_fd = -1;
	if (attr->bpfrt_flags & BPFRT_MAP_F_SHARED) {
		/* a memfd another process maps too (bpfrt_map_shm); zeroed,
		 * and whole pages, so freezing can protect it as below */
		size_t len = BPFRT_ROUND_UP(array->cpu_stride * (size_t)array->nr_cpus,
					    (size_t)sysconf(_SC_PAGESIZE));
		void *p;
		int fd = bpfrt_map_shm_create(attr->name, len, &p);

		if (fd >= 0) {
			array->values = p;
			array->mapped = len;
			array->shm_fd = fd;
		}
	} else if (storage_protectable(attr)) {
		/* Whole pages of their own, made read-only when frozen. */
		size_t len = BPFRT_ROUND_UP(region, (size_t)sysconf(_SC_PAGESIZE));
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p != MAP_FAILED) {
			array->values = p;
			array->mapped = len;
		}
	} else {
		/* calloc: zeroed pages, mapped lazily for big maps. */
		array->values = calloc(array->nr_cpus, array->cpu_stride);
	}
	if (!array->values) {
		free(array);
		return -ENOMEM;
	}
	*out = &array->map;
	return 0;
}

static void array_free(struct bpfrt_map *map)
{
	struct array_map *array = to_array(map);

	if (array->mapped)
		munmap(array->values, array->mapped);
	else
		free(array->values);
	if (array->shm_fd >= 0)
		close(array->shm_fd);
	free(array);
}

static void array_shm(struct bpfrt_map *map, struct bpfrt_map_shm *out)
{
	struct array_map *array = to_array(map);

	out->fd = array->shm_fd;
	out->layout = BPFRT_MAP_SHM_ARRAY;
	out->size = array->mapped;
	out->data_off = 0;
	out->elem_size = array->elem_size;
	out->cpu_stride = array->cpu_stride;
	out->nr_cpus = (uint32_t)array->nr_cpus;
	out->value_size = map->value_size;
}

static int array_freeze(struct bpfrt_map *map)
{
	struct array_map *array = to_array(map);

	if (array->mapped && mprotect(array->values, array->mapped, PROT_READ))
		return -errno;
	return 0;
}

static uint32_t key_index(const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	return idx;
}

static char *slot(struct array_map *array, int cpu, uint32_t idx)
{
	return array->values + cpu * array->cpu_stride + (size_t)idx * array->elem_size;
}

/* ---- programs ---- */

static void *array_lookup(struct bpfrt_map *map, const void *key)
{
	struct array_map *array = to_array(map);
	uint32_t idx = key_index(key);

	if (idx >= map->max_entries)
		return NULL;
	return slot(array, 0, idx);
}

static void *percpu_array_lookup(struct bpfrt_map *map, const void *key)
{
	struct array_map *array = to_array(map);
	uint32_t idx = key_index(key);

	if (idx >= map->max_entries)
		return NULL;
	return slot(array, bpfrt_map_this_cpu(), idx);
}

/* bpf_map_lookup_percpu_elem: cpu's slot (Linux: NULL past nr_cpu_ids). */
static void *percpu_array_lookup_percpu(struct bpfrt_map *map, const void *key, uint32_t cpu)
{
	struct array_map *array = to_array(map);
	uint32_t idx = key_index(key);

	if (cpu >= (uint32_t)array->nr_cpus || idx >= map->max_entries)
		return NULL;
	return slot(array, (int)cpu, idx);
}

static long check_update(struct bpfrt_map *map, uint32_t idx, uint64_t flags)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	if (idx >= map->max_entries)
		return -E2BIG;
	/* Every index always exists. */
	if (flags == BPF_NOEXIST)
		return -EEXIST;
	return 0;
}

static long array_update(struct bpfrt_map *map, const void *key, const void *value,
			 uint64_t flags)
{
	uint32_t idx = key_index(key);
	long err = check_update(map, idx, flags);

	/* The verifier refuses this call (Linux's "write into map
	 * forbidden"); a trusted program gets an error instead of a fault. */
	if (map->map_flags & BPF_F_RDONLY_PROG)
		return -EPERM;
	if (err)
		return err;
	bpfrt_map_copy_in(slot(to_array(map), 0, idx), value, map->value_size);
	return 0;
}

static long percpu_array_update(struct bpfrt_map *map, const void *key,
				const void *value, uint64_t flags)
{
	uint32_t idx = key_index(key);
	long err = check_update(map, idx, flags);

	if (err)
		return err;
	bpfrt_map_copy_in(slot(to_array(map), bpfrt_map_this_cpu(), idx), value,
			  map->value_size);
	return 0;
}

static long array_delete(struct bpfrt_map *map, const void *key)
{
	return -EINVAL;
}

/* Global data (.data/.bss/.rodata) lives in arrays the loader fills and
 * relocates lddw against. A frozen BPF_F_RDONLY_PROG array's storage is
 * read-only memory. */
void *bpfrt_map_value_ptr(struct bpfrt_map *map, uint32_t idx)
{
	if (!map || map->type != BPF_MAP_TYPE_ARRAY || idx >= map->max_entries)
		return NULL;
	return slot(to_array(map), 0, idx);
}

/* ---- user space ---- */

static int array_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	struct array_map *array = to_array(map);
	uint32_t idx = key_index(key);

	if (idx >= map->max_entries)
		return -ENOENT;
	if (map->type == BPF_MAP_TYPE_ARRAY) {
		bpfrt_map_copy_out(value, slot(array, 0, idx), map->value_size);
		return 0;
	}
	for (int cpu = 0; cpu < array->nr_cpus; cpu++)
		bpfrt_map_copy_out((char *)value + (size_t)cpu * array->elem_size,
				   slot(array, cpu, idx), array->elem_size);
	return 0;
}

static int array_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			    uint64_t flags)
{
	struct array_map *array = to_array(map);
	uint32_t idx = key_index(key);
	long err = check_update(map, idx, flags);

	if (err)
		return (int)err;
	if (map->type == BPF_MAP_TYPE_ARRAY) {
		bpfrt_map_copy_in(slot(array, 0, idx), value, map->value_size);
		return 0;
	}
	for (int cpu = 0; cpu < array->nr_cpus; cpu++)
		bpfrt_map_copy_in(slot(array, cpu, idx),
				  (const char *)value + (size_t)cpu * array->elem_size,
				  map->value_size);
	return 0;
}

static int array_sys_delete(struct bpfrt_map *map, const void *key)
{
	return -EINVAL;
}

/* Shared with PROG_ARRAY: next index, index 0 for NULL or out of range. */
int bpfrt_array_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	uint32_t idx = key ? key_index(key) : UINT32_MAX;
	uint32_t next;

	if (idx >= map->max_entries)
		next = 0;
	else if (idx == map->max_entries - 1)
		return -ENOENT;
	else
		next = idx + 1;
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

const struct bpfrt_map_ops bpfrt_array_map_ops = {
	.alloc_check = bpfrt_array_alloc_check,
	.mem_size = array_mem_size,
	.alloc = array_alloc,
	.free = array_free,
	.freeze = array_freeze,
	.shm = array_shm,
	.sys_lookup = array_sys_lookup,
	.sys_update = array_sys_update,
	.sys_delete = array_sys_delete,
	.get_next_key = bpfrt_array_get_next_key,
	.lookup = array_lookup,
	.update = array_update,
	.delete = array_delete,
};

const struct bpfrt_map_ops bpfrt_percpu_array_map_ops = {
	.alloc_check = bpfrt_array_alloc_check,
	.mem_size = array_mem_size,
	.alloc = array_alloc,
	.free = array_free,
	.shm = array_shm,
	.sys_lookup = array_sys_lookup,
	.sys_update = array_sys_update,
	.sys_delete = array_sys_delete,
	.get_next_key = bpfrt_array_get_next_key,
	.lookup = percpu_array_lookup,
	.lookup_percpu = percpu_array_lookup_percpu,
	.update = percpu_array_update,
	.delete = array_delete,
};
