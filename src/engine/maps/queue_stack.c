/* BPF_MAP_TYPE_QUEUE and BPF_MAP_TYPE_STACK: keyless maps of up to
 * max_entries values, FIFO (queue) or LIFO (stack), with Linux's
 * semantics and error codes.
 *
 * Layout: a ring of max_entries + 1 slots of round_up(value_size, 8)
 * bytes; head is where the next push goes, tail the oldest value, and
 * head == tail means empty (the spare slot tells full from empty). One
 * spinlock guards the ring, as Linux's one raw spinlock per map: every
 * operation copies at most one value under it. Programs and user space
 * use the same operations:
 *   push (update_elem with a NULL key): -E2BIG when full, unless
 *     BPF_EXIST, which drops the oldest value to make room; BPF_NOEXIST
 *     or any other flag is -EINVAL.
 *   pop (lookup_and_delete_elem): the oldest (queue) or newest (stack)
 *     value, removed; -ENOENT when empty.
 *   peek (lookup_elem with a NULL key): the same value, left in place.
 *   delete_elem and get_next_key are -EINVAL, as in Linux. */
#include "maps/map.h"
#include "maps/spinlock.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>

#define QS_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)

struct queue_stack {
	struct bpfrt_map map;
	struct bpfrt_spinlock lock;
	bool lifo;             /* stack */
	uint32_t head, tail;   /* slot indexes in [0, size), under lock */
	uint32_t size;         /* max_entries + 1 */
	uint32_t stride;       /* round_up(value_size, 8) */
	char *slots;
};

static struct queue_stack *to_qs(struct bpfrt_map *map)
{
	return (struct queue_stack *)map;
}

static uint32_t next_slot(const struct queue_stack *qs, uint32_t i)
{
	return i + 1 == qs->size ? 0 : i + 1;
}

static uint32_t prev_slot(const struct queue_stack *qs, uint32_t i)
{
	return i == 0 ? qs->size - 1 : i - 1;
}

static void *slot(struct queue_stack *qs, uint32_t i)
{
	return qs->slots + (size_t)i * qs->stride;
}

static long qs_push(struct bpfrt_map *map, const void *value, uint64_t flags)
{
	struct queue_stack *qs = to_qs(map);

	if ((flags & BPF_NOEXIST) || flags > BPF_EXIST)
		return -EINVAL;
	bpfrt_spin_lock(&qs->lock);
	if (next_slot(qs, qs->head) == qs->tail) {
		if (!(flags & BPF_EXIST)) {
			bpfrt_spin_unlock(&qs->lock);
			return -E2BIG;
		}
		qs->tail = next_slot(qs, qs->tail);  /* the oldest value goes */
	}
	bpfrt_map_copy_in(slot(qs, qs->head), value, map->value_size);
	qs->head = next_slot(qs, qs->head);
	bpfrt_spin_unlock(&qs->lock);
	return 0;
}

/* The value pop and peek return, copied out; removed when take. */
static long qs_get(struct queue_stack *qs, void *value, bool take)
{
	uint32_t i;

	bpfrt_spin_lock(&qs->lock);
	if (qs->head == qs->tail) {
		bpfrt_spin_unlock(&qs->lock);
		return -ENOENT;
	}
	i = qs->lifo ? prev_slot(qs, qs->head) : qs->tail;
	bpfrt_map_copy_out(value, slot(qs, i), qs->map.value_size);
	if (take) {
		if (qs->lifo)
			qs->head = i;
		else
			qs->tail = next_slot(qs, i);
	}
	bpfrt_spin_unlock(&qs->lock);
	return 0;
}

static long qs_pop(struct bpfrt_map *map, void *value)
{
	return qs_get(to_qs(map), value, true);
}

static long qs_peek(struct bpfrt_map *map, void *value)
{
	return qs_get(to_qs(map), value, false);
}

/* ---- user space (bpf(2) semantics) ---------------------------------------- */

static int qs_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return (int)qs_peek(map, value);
}

static int qs_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			 uint64_t flags)
{
	return (int)qs_push(map, value, flags);
}

static int qs_sys_delete(struct bpfrt_map *map, const void *key)
{
	return -EINVAL;
}

static int qs_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	return -EINVAL;
}

/* Linux: flags (even BPF_F_LOCK) are -EINVAL for these kinds. */
static int qs_sys_lookup_and_delete(struct bpfrt_map *map, const void *key, void *value,
				    uint64_t flags)
{
	if (flags)
		return -EINVAL;
	return (int)qs_pop(map, value);
}

/* ---- programs: the keyed element helpers ------------------------------------- */

/* The verifier refuses map_lookup/update/delete_elem on these kinds;
 * what Linux's ops would answer, should one get here. */
static void *qs_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long qs_update(struct bpfrt_map *map, const void *key, const void *value,
		      uint64_t flags)
{
	return -EINVAL;
}

static long qs_delete(struct bpfrt_map *map, const void *key)
{
	return -EINVAL;
}

/* ---- creation ------------------------------------------------------------------ */

static int qs_alloc_check(const struct bpfrt_map *attr)
{
	if (attr->max_entries == 0 || attr->key_size != 0 || attr->value_size == 0)
		return bpfrt_err(-EINVAL, "%s map '%s': key_size must be 0, value_size and "
				 "max_entries non-zero (got %u, %u, %u)",
				 attr->type == BPF_MAP_TYPE_STACK ? "stack" : "queue", attr->name,
				 attr->key_size, attr->value_size, attr->max_entries);
	if (attr->map_flags & ~QS_CREATE_FLAGS)
		return bpfrt_err(-EINVAL, "queue/stack map '%s': invalid map_flags 0x%x",
				 attr->name, attr->map_flags);
	if (attr->value_size > BPFRT_MAP_VALUE_SIZE_MAX)
		return bpfrt_err(-E2BIG, "queue/stack map '%s': value_size %u too large",
				 attr->name, attr->value_size);
	/* Linux's bound: the ring's bytes fit a u32 */
	if (attr->max_entries >= UINT32_MAX / attr->value_size)
		return bpfrt_err(-E2BIG, "queue/stack map '%s': %u entries of %u bytes too large",
				 attr->name, attr->max_entries, attr->value_size);
	return 0;
}

static int qs_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct queue_stack) +
		 ((uint64_t)attr->max_entries + 1) * BPFRT_ROUND_UP(attr->value_size, 8);
	return 0;
}

static int qs_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct queue_stack *qs = calloc(1, sizeof(*qs));

	if (!qs)
		return -ENOMEM;
	qs->map = *attr;
	qs->lifo = attr->type == BPF_MAP_TYPE_STACK;
	qs->size = attr->max_entries + 1;
	qs->stride = BPFRT_ROUND_UP(attr->value_size, 8);
	qs->slots = calloc(qs->size, qs->stride);
	if (!qs->slots) {
		free(qs);
		return -ENOMEM;
	}
	*out = &qs->map;
	return 0;
}

static void qs_free(struct bpfrt_map *map)
{
	struct queue_stack *qs = to_qs(map);

	free(qs->slots);
	free(qs);
}

#define QS_OPS									\
	.alloc_check = qs_alloc_check,						\
	.mem_size = qs_mem_size,						\
	.alloc = qs_alloc,							\
	.free = qs_free,							\
	.sys_lookup = qs_sys_lookup,						\
	.sys_update = qs_sys_update,						\
	.sys_delete = qs_sys_delete,						\
	.get_next_key = qs_get_next_key,					\
	.sys_lookup_and_delete = qs_sys_lookup_and_delete,			\
	.lookup = qs_lookup,							\
	.update = qs_update,							\
	.delete = qs_delete,							\
	.push = qs_push,							\
	.pop = qs_pop,								\
	.peek = qs_peek

const struct bpfrt_map_ops bpfrt_queue_map_ops = { QS_OPS };
const struct bpfrt_map_ops bpfrt_stack_map_ops = { QS_OPS };
