/* BPF_MAP_TYPE_PROG_ARRAY: slots holding programs for bpf_tail_call.
 * Linux stores program fds; bpfrt has none, so user space fills slots with
 * bpfrt_map_update_prog(). Slots are read by the tail-call helper inside
 * RCU read sections; replacing or clearing a slot from user space waits for
 * a grace period so the caller may free the old program afterwards. */
#include "maps/map.h"
#include "core/error.h"
#include "core/rcu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct prog_array {
	struct bpfrt_map map;
	_Atomic(struct bpfrt_prog *) *slots;
};

static struct prog_array *to_prog_array(struct bpfrt_map *map)
{
	return (struct prog_array *)map;
}

static int prog_array_alloc_check(const struct bpfrt_map *attr)
{
	/* Linux's fd_array_map_alloc_check: the value is a 4-byte fd. */
	if (attr->value_size != 4)
		return bpfrt_err(-EINVAL, "prog array '%s': value_size %u, must be 4",
				 attr->name, attr->value_size);
	if (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG))
		return bpfrt_err(-EINVAL, "prog array '%s': invalid map_flags 0x%x",
				 attr->name, attr->map_flags);
	return bpfrt_array_alloc_check(attr);
}

static int prog_array_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct prog_array *array = calloc(1, sizeof(*array));

	if (!array)
		return -ENOMEM;
	array->map = *attr;
	array->slots = calloc(attr->max_entries, sizeof(*array->slots));
	if (!array->slots) {
		free(array);
		return -ENOMEM;
	}
	*out = &array->map;
	return 0;
}

static void prog_array_free(struct bpfrt_map *map)
{
	struct prog_array *array = to_prog_array(map);

	free(array->slots);
	free(array);
}

/* Swaps a slot; waits out running tail calls through the old program. */
static int prog_array_swap(struct bpfrt_map *map, uint32_t idx, struct bpfrt_prog *prog,
			   struct bpfrt_prog **old_out)
{
	struct prog_array *array = to_prog_array(map);
	struct bpfrt_prog *old;

	if (idx >= map->max_entries)
		return -E2BIG;
	old = atomic_exchange_explicit(&array->slots[idx], prog, memory_order_acq_rel);
	if (old && !bpfrt_rcu_in_read_section())
		bpfrt_rcu_synchronize();
	*old_out = old;
	return 0;
}

static int check_prog_array(struct bpfrt_map *map, const char *op)
{
	if (!map)
		return bpfrt_err(-EINVAL, "%s: NULL map", op);
	if (map->type != BPF_MAP_TYPE_PROG_ARRAY)
		return bpfrt_err(-EINVAL, "%s: map '%s' is not a PROG_ARRAY", op, map->name);
	return 0;
}

int bpfrt_map_update_prog(struct bpfrt_map *map, uint32_t idx, struct bpfrt_prog *prog)
{
	struct bpfrt_prog *old;
	int err = check_prog_array(map, "bpfrt_map_update_prog");

	if (err)
		return err;
	if (!prog)
		return bpfrt_err(-EINVAL, "prog array '%s': NULL program for slot %u",
				 map->name, idx);
	err = prog_array_swap(map, idx, prog, &old);
	if (err)
		return bpfrt_err(err, "prog array '%s': index %u out of range (max_entries %u)",
				 map->name, idx, map->max_entries);
	return 0;
}

static int prog_array_delete_slot(struct bpfrt_map *map, uint32_t idx)
{
	struct bpfrt_prog *old;
	int err = prog_array_swap(map, idx, NULL, &old);

	if (err)
		return err;
	return old ? 0 : -ENOENT;
}

int bpfrt_map_delete_prog(struct bpfrt_map *map, uint32_t idx)
{
	int err = check_prog_array(map, "bpfrt_map_delete_prog");

	if (err)
		return err;
	err = prog_array_delete_slot(map, idx);
	if (err == -E2BIG)
		return bpfrt_err(err, "prog array '%s': index %u out of range (max_entries %u)",
				 map->name, idx, map->max_entries);
	if (err == -ENOENT)
		return bpfrt_err(err, "prog array '%s': slot %u is empty", map->name, idx);
	return err;
}

struct bpfrt_prog *bpfrt_prog_array_get(struct bpfrt_map *map, uint32_t idx)
{
	if (!map || map->type != BPF_MAP_TYPE_PROG_ARRAY || idx >= map->max_entries)
		return NULL;
	return atomic_load_explicit(&to_prog_array(map)->slots[idx], memory_order_acquire);
}

static int prog_array_sys_delete(struct bpfrt_map *map, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	return prog_array_delete_slot(map, idx);
}

/* Linux reads back program ids and writes program fds; bpfrt has neither. */
static int prog_array_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

static int prog_array_sys_update(struct bpfrt_map *map, const void *key, const void *value,
				 uint64_t flags)
{
	return -EOPNOTSUPP;
}

/* Programs may only tail-call through a PROG_ARRAY (Linux's verifier
 * rejects the element helpers on it). */
static void *prog_array_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long prog_array_update(struct bpfrt_map *map, const void *key, const void *value,
			      uint64_t flags)
{
	return -EOPNOTSUPP;
}

static long prog_array_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

const struct bpfrt_map_ops bpfrt_prog_array_map_ops = {
	.alloc_check = prog_array_alloc_check,
	.alloc = prog_array_alloc,
	.free = prog_array_free,
	.sys_lookup = prog_array_sys_lookup,
	.sys_update = prog_array_sys_update,
	.sys_delete = prog_array_sys_delete,
	.get_next_key = bpfrt_array_get_next_key,
	.lookup = prog_array_lookup,
	.update = prog_array_update,
	.delete = prog_array_delete,
};
