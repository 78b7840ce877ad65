/* BPF_MAP_TYPE_PROG_ARRAY: slots holding programs for bpf_tail_call.
 * Linux stores program fds; bpfrt has none, so user space fills slots with
 * bpfrt_map_update_prog(). Slots are read by the tail-call helper inside
 * RCU read sections; replacing or clearing a slot from user space waits for
 * a grace period so the caller may free the old program afterwards.
 *
 * A tail call hands the target the caller's r1, so every program reached
 * through the array must have been verified for the context its callers
 * get (Linux's bpf_prog_map_compatible). The first program that uses the
 * array (loaded referencing it, or put in a slot) makes it its owner: the
 * owner's kind and verified context size fix what the array is for. Then
 *  - a slot takes only a program of a kind with the same context whose
 *    verified reach (max_ctx_access) fits the owner's context;
 *  - a program referencing the array loads only if it has such a kind
 *    and its own verified context holds the owner's, and its reach is
 *    raised to the owner's context: its attach points (and runs) must
 *    supply that much, since its targets may read it.
 * A trusted (unverified) owner promises no context: verified programs in
 * its slots may read none. Linux also compares JIT mode (bpfrt's tail
 * calls from JIT code to an interpreted target only fail) and, for tracing
 * kinds, the attach function's BTF (bpfrt's tracing contexts are u64
 * arrays whose size the check above covers). */
#include "maps/map.h"
#include "core/error.h"
#include "core/prog.h"
#include "core/rcu.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct prog_array {
	struct bpfrt_map map;
	pthread_mutex_t owner_lock;
	bool owned;                     /* set once, under owner_lock */
	bool owner_verified;
	int owner_kind;                 /* enum bpfrt_prog_kind */
	uint32_t owner_ctx;             /* context bytes its callers give */
	char owner[BPFRT_NAME_LEN];
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

/* A slot per entry, capped as arrays are (Linux allocates prog arrays
 * as arrays of pointers). */
static int prog_array_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	uint64_t slots = (uint64_t)attr->max_entries * sizeof(struct bpfrt_prog *);

	if (slots >= UINT32_MAX)
		return bpfrt_err(-ENOMEM, "prog array '%s': %u entries is too large",
				 attr->name, attr->max_entries);
	*bytes = sizeof(struct prog_array) + slots;
	return 0;
}

static int prog_array_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct prog_array *array = calloc(1, sizeof(*array));

	if (!array)
		return -ENOMEM;
	array->map = *attr;
	pthread_mutex_init(&array->owner_lock, NULL);
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

	pthread_mutex_destroy(&array->owner_lock);
	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct bpfrt_prog *p = atomic_load_explicit(&array->slots[i],
							    memory_order_acquire);

		if (p)
			bpfrt_prog_release(p);
	}
	free(array->slots);
	free(array);
}

/* Under owner_lock: the first user becomes the owner. */
static void take_owner(struct prog_array *array, const struct bpfrt_prog *prog)
{
	if (array->owned)
		return;
	array->owned = true;
	array->owner_verified = prog->verified;
	array->owner_kind = prog->kind;
	array->owner_ctx = prog->verified ? prog->ctx_size : 0;
	snprintf(array->owner, sizeof(array->owner), "%s", prog->name);
}

/* Under owner_lock, owned: can prog's context be the owner's? */
static int check_kind(const struct prog_array *array, const struct bpfrt_prog *prog)
{
	if (bpfrt_prog_kinds_share_ctx(array->owner_kind, prog->kind))
		return 0;
	return bpfrt_err(-EINVAL, "prog array '%s' holds %s programs (owner %s): %s is %s",
			 array->map.name, bpfrt_prog_kind_str(array->owner_kind), array->owner,
			 prog->name, bpfrt_prog_kind_str(prog->kind));
}

int bpfrt_prog_array_use(struct bpfrt_map *map, struct bpfrt_prog *caller)
{
	struct prog_array *array = to_prog_array(map);
	int err;

	pthread_mutex_lock(&array->owner_lock);
	take_owner(array, caller);
	err = check_kind(array, caller);
	if (!err && caller->verified) {
		if (caller->ctx_size < array->owner_ctx)
			err = bpfrt_err(-EINVAL, "%s: tail calls through prog array '%s' (owner %s) "
					"need %u bytes of context, %s is verified for %u",
					caller->name, map->name, array->owner, array->owner_ctx,
					caller->name, caller->ctx_size);
		else if (caller->max_ctx_access < array->owner_ctx)
			caller->max_ctx_access = array->owner_ctx;
	}
	pthread_mutex_unlock(&array->owner_lock);
	return err;
}

/* May prog go into a slot? Makes it the owner of an unowned array. */
static int check_target(struct prog_array *array, const struct bpfrt_prog *prog, uint32_t idx)
{
	int err;

	pthread_mutex_lock(&array->owner_lock);
	take_owner(array, prog);
	err = check_kind(array, prog);
	if (!err && prog->verified && prog->max_ctx_access > array->owner_ctx)
		err = bpfrt_err(-EINVAL, "prog array '%s' slot %u: %s reads %u bytes of context, "
				"owner %s%s gives %u", array->map.name, idx, prog->name,
				prog->max_ctx_access, array->owner,
				array->owner_verified ? "" : " (trusted)", array->owner_ctx);
	pthread_mutex_unlock(&array->owner_lock);
	return err;
}

/* Swaps a slot; waits out running tail calls through the old program. */
static void slot_release_rcu(void *prog)
{
	bpfrt_prog_release(prog);
}

static int prog_array_swap(struct bpfrt_map *map, uint32_t idx, struct bpfrt_prog *prog,
			   struct bpfrt_prog **old_out)
{
	struct prog_array *array = to_prog_array(map);
	struct bpfrt_prog *old;

	if (idx >= map->max_entries)
		return -E2BIG;
	/* a slot is a use of its program (bpfrt_prog_hold): a program freed
	 * while in a slot stays until the slot lets it go */
	if (prog)
		bpfrt_prog_hold(prog);
	old = atomic_exchange_explicit(&array->slots[idx], prog, memory_order_acq_rel);
	if (old && !bpfrt_rcu_in_read_section()) {
		bpfrt_rcu_synchronize();
		bpfrt_prog_release(old);
	} else if (old && bpfrt_rcu_call(old, slot_release_rcu)) {
		/* no memory to defer the release: keep the use (a leak)
		 * rather than free a program a run may be in */
	}
	*old_out = old;
	return 0;
}

void bpfrt_prog_array_clear(struct bpfrt_map *map)
{
	struct prog_array *array = to_prog_array(map);
	struct bpfrt_prog **olds = NULL, *old;
	uint32_t n = 0;

	/* one grace period for all the slots where one can be waited for
	 * and memory allows; otherwise slot by slot (prog_array_swap) */
	if (!bpfrt_rcu_in_read_section())
		olds = malloc((size_t)map->max_entries * sizeof(*olds));
	if (!olds) {
		for (uint32_t i = 0; i < map->max_entries; i++)
			if (atomic_load_explicit(&array->slots[i], memory_order_acquire))
				prog_array_swap(map, i, NULL, &old);
		return;
	}
	for (uint32_t i = 0; i < map->max_entries; i++) {
		old = atomic_exchange_explicit(&array->slots[i], NULL, memory_order_acq_rel);
		if (old)
			olds[n++] = old;
	}
	if (n)
		bpfrt_rcu_synchronize();
	for (uint32_t i = 0; i < n; i++)
		bpfrt_prog_release(olds[i]);
	free(olds);
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
	if (idx >= map->max_entries)
		return bpfrt_err(-E2BIG, "prog array '%s': index %u out of range (max_entries %u)",
				 map->name, idx, map->max_entries);
	/* as Linux takes only loaded programs' fds: one not loaded yet (or
	 * still being verified) has no verdict, and would pass for trusted
	 * until its load verifies it */
	if (!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE))
		return bpfrt_err(-EINVAL, "prog array '%s' slot %u: %s is not loaded", map->name,
				 idx, prog->name);
	/* a frozen array refuses before the program could claim it */
	err = bpfrt_map_host_write_begin(map, "update_prog");
	if (err)
		return err;
	err = check_target(to_prog_array(map), prog, idx);
	if (!err)
		err = prog_array_swap(map, idx, prog, &old);
	bpfrt_map_host_write_end(map);
	return err;
}

int bpfrt_prog_array_init_slot(struct bpfrt_map *map, uint32_t idx, struct bpfrt_prog *prog)
{
	struct bpfrt_prog *old;
	int err = check_prog_array(map, "prog array initial value");

	if (err)
		return err;
	if (idx >= map->max_entries)
		return bpfrt_err(-E2BIG, "prog array '%s': index %u out of range (max_entries %u)",
				 map->name, idx, map->max_entries);
	err = check_target(to_prog_array(map), prog, idx);
	if (!err)
		err = prog_array_swap(map, idx, prog, &old);
	return err;
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
	err = bpfrt_map_host_write_begin(map, "delete_prog");
	if (err)
		return err;
	err = prog_array_delete_slot(map, idx);
	bpfrt_map_host_write_end(map);
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
	.mem_size = prog_array_mem_size,
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
