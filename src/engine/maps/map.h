/* Map internals: the common map object, one ops table per kind, and the
 * program-side entry points the helpers call.
 *
 * Program-side ops (lookup/update/delete, ringbuf reserve...) run on many
 * threads at once, concurrently with the user-space API. They expect the
 * caller to be inside bpfrt_rcu_read_lock() (the run glue wraps every
 * program run): a pointer returned by lookup stays valid memory until the
 * section ends. Hash elements are preallocated and only reused, never given
 * back to malloc while the map lives, so even a stale pointer never points
 * at freed memory. */
#ifndef BPFRT_MAPS_MAP_H
#define BPFRT_MAPS_MAP_H

#include "bpfrt/bpfrt.h"
#include "bpfrt/map.h"

#include <stdbool.h>

struct bpfrt_map;

struct bpfrt_map_ops {
	/* Checks sizes and flags (after the common checks); -errno. */
	int (*alloc_check)(const struct bpfrt_map *attr);
	/* Bytes the map will hold (charged against the process's map memory
	 * limit before alloc); -errno with a message naming the map when the
	 * size cannot be had at all. */
	int (*mem_size)(const struct bpfrt_map *attr, uint64_t *bytes);
	/* Allocates the kind's object, copying the common part from attr. */
	int (*alloc)(const struct bpfrt_map *attr, struct bpfrt_map **map);
	void (*free)(struct bpfrt_map *map);

	/* User space: copy in/out, per-CPU values for all CPUs. */
	int (*sys_lookup)(struct bpfrt_map *map, const void *key, void *value);
	int (*sys_update)(struct bpfrt_map *map, const void *key, const void *value,
			  uint64_t flags);
	int (*sys_delete)(struct bpfrt_map *map, const void *key);
	int (*get_next_key)(struct bpfrt_map *map, const void *key, void *next_key);

	/* Optional: makes the value storage read-only once the map is frozen
	 * and programs cannot write it (BPF_F_RDONLY_PROG); -errno. */
	int (*freeze)(struct bpfrt_map *map);

	/* Programs: pointer into the map (this CPU's slot), no messages. */
	void *(*lookup)(struct bpfrt_map *map, const void *key);
	/* Optional, per-CPU kinds (bpf_map_lookup_percpu_elem): cpu's slot,
	 * NULL for a missing key or cpu >= the number of possible CPUs. */
	void *(*lookup_percpu)(struct bpfrt_map *map, const void *key, uint32_t cpu);
	long (*update)(struct bpfrt_map *map, const void *key, const void *value,
		       uint64_t flags);
	long (*delete)(struct bpfrt_map *map, const void *key);

	/* Optional, for programs and user space alike (Linux's map_push_elem,
	 * map_pop_elem, map_peek_elem): queue, stack and bloom filter. The
	 * helpers of a kind without them are refused by the verifier. */
	long (*push)(struct bpfrt_map *map, const void *value, uint64_t flags);
	long (*pop)(struct bpfrt_map *map, void *value);
	long (*peek)(struct bpfrt_map *map, void *value);
	/* Optional: BPF_MAP_LOOKUP_AND_DELETE_ELEM (user space); without it
	 * the command is -EOPNOTSUPP. */
	int (*sys_lookup_and_delete)(struct bpfrt_map *map, const void *key, void *value,
				     uint64_t flags);
	/* Optional: the kinds that can live in shared memory
	 * (BPFRT_MAP_F_SHARED) fill in where; called only for a map made
	 * with the flag. */
	void (*shm)(struct bpfrt_map *map, struct bpfrt_map_shm *out);
};

enum { BPFRT_MAP_UNFROZEN, BPFRT_MAP_FREEZING, BPFRT_MAP_FROZEN };

struct bpfrt_map {
	const struct bpfrt_map_ops *ops;
	enum bpf_map_type type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t map_flags;
	uint32_t numa_node;
	/* BPF_MAP_CREATE's map_extra: the bloom filter's number of hash
	 * functions; 0 for every other kind (Linux: -EINVAL otherwise). */
	uint64_t map_extra;
	char name[BPFRT_NAME_LEN];
	/* BPF_MAP_FREEZE, atomic accesses: BPFRT_MAP_FREEZING while freeze
	 * makes the storage read-only (host writes refused, not folded),
	 * then BPFRT_MAP_FROZEN for good, or back to UNFROZEN if it failed. */
	uint32_t frozen;
	/* Host writes in progress; freeze waits until they are done. */
	uint32_t host_writers;
	/* Bytes charged against the map memory limit (given back at free). */
	uint64_t mem_charged;
	/* Users: 1 for the creator (bpfrt_map_free drops it), 1 per
	 * map-in-map slot holding the map. The last drop frees it. */
	uint32_t refs;
	/* BPFRT_MAP_F_* of the creation (BPFRT_MAP_F_SHARED: the kind's
	 * alloc put the storage in a memfd it keeps open). */
	uint64_t bpfrt_flags;
	/* Creation only (map-in-map): the inner map template; NULL after. */
	const struct bpfrt_map *inner_template;
	/* Offset of the struct bpf_spin_lock in each value, -1 without one
	 * (value_lock.c). */
	int32_t spin_lock_off;
};

/* Frozen and not writable by programs: nothing can change the map any
 * more (Linux's bpf_map_is_rdonly). */
static inline bool bpfrt_map_is_rdonly(const struct bpfrt_map *map)
{
	return (map->map_flags & BPF_F_RDONLY_PROG) &&
	       __atomic_load_n(&map->frozen, __ATOMIC_ACQUIRE) == BPFRT_MAP_FROZEN;
}

/* Brackets every host-side write (update, delete, prog array slots):
 * refused with -EPERM and a message once the map is frozen. */
int bpfrt_map_host_write_begin(struct bpfrt_map *map, const char *op);
void bpfrt_map_host_write_end(struct bpfrt_map *map);

extern const struct bpfrt_map_ops bpfrt_array_map_ops;
extern const struct bpfrt_map_ops bpfrt_percpu_array_map_ops;
extern const struct bpfrt_map_ops bpfrt_prog_array_map_ops;
extern const struct bpfrt_map_ops bpfrt_htab_map_ops;
extern const struct bpfrt_map_ops bpfrt_percpu_htab_map_ops;
extern const struct bpfrt_map_ops bpfrt_lru_htab_map_ops;
extern const struct bpfrt_map_ops bpfrt_ringbuf_map_ops;
extern const struct bpfrt_map_ops bpfrt_user_ringbuf_map_ops;
extern const struct bpfrt_map_ops bpfrt_lru_percpu_htab_map_ops;
extern const struct bpfrt_map_ops bpfrt_queue_map_ops;
extern const struct bpfrt_map_ops bpfrt_stack_map_ops;
extern const struct bpfrt_map_ops bpfrt_bloom_map_ops;
extern const struct bpfrt_map_ops bpfrt_lpm_trie_map_ops;
extern const struct bpfrt_map_ops bpfrt_array_of_maps_ops;
extern const struct bpfrt_map_ops bpfrt_hash_of_maps_ops;
extern const struct bpfrt_map_ops bpfrt_perf_event_array_map_ops;
extern const struct bpfrt_map_ops bpfrt_cgroup_array_map_ops;
extern const struct bpfrt_map_ops bpfrt_stack_trace_map_ops;
extern const struct bpfrt_map_ops bpfrt_cgroup_storage_map_ops;
/* sockets, devices, CPU queues, socket storage: always empty
 * (kernel_object_maps.c) */
extern const struct bpfrt_map_ops bpfrt_kernel_object_map_ops;
extern const struct bpfrt_map_ops bpfrt_percpu_cgroup_storage_map_ops;
/* bpf_get_local_storage's value (cgroup_storage.c): the map's one
 * storage, this CPU's for the per-CPU kind; never NULL. */
void *bpfrt_cgroup_storage_get(struct bpfrt_map *map);
/* bpf_current_task_under_cgroup on a cgroup array, which lists no cgroup
 * in bpfrt (cgroup_array.c): 0, or -E2BIG past max_entries. */
long bpfrt_cgroup_array_under(struct bpfrt_map *map, uint32_t idx);

/* bpf_perf_event_output's work (perf_event_array.c): 0, or -EINVAL
 * (flags), -E2BIG (index), -ENOENT (no ring), -EOPNOTSUPP (another
 * CPU's ring), -ENOSPC (full: counted lost). */
long bpfrt_perf_event_output(struct bpfrt_map *map, uint64_t flags, const void *data,
			     uint64_t size);

/* A reference for a map-in-map slot, and its release: the last one frees
 * the map after a grace period (programs may still hold it). */
void bpfrt_map_get(struct bpfrt_map *map);
void bpfrt_map_put_deferred(struct bpfrt_map *map);
bool bpfrt_map_is_map_in_map(const struct bpfrt_map *map);
/* The inner map template's shape, which the verifier types an outer
 * map's lookup result with (a map struct never used for elements); NULL
 * if outer is not a map-in-map. */
struct bpfrt_map *bpfrt_map_inner_meta(struct bpfrt_map *outer);

/* ---- program side (helpers) ---------------------------------------------- */

static inline void *bpfrt_map_prog_lookup(struct bpfrt_map *map, const void *key)
{
	return map->ops->lookup(map, key);
}

/* value_lock.c: a map whose values hold a struct bpf_spin_lock. */
int bpfrt_map_check_spin_lock(const struct bpfrt_map *attr);
long bpfrt_map_update_locked_value(struct bpfrt_map *map, const void *key, const void *value,
				   uint64_t flags, bool user);
int bpfrt_map_lookup_locked_value(struct bpfrt_map *map, const void *key, void *value,
				  uint64_t flags);
/* Takes and gives back the lock at lock (bpf_spin_lock/unlock): a word
 * spinlock, which also works across processes sharing the map's memory. */
void bpfrt_map_value_lock(void *lock);
void bpfrt_map_value_unlock(void *lock);

static inline long bpfrt_map_prog_update(struct bpfrt_map *map, const void *key,
					 const void *value, uint64_t flags)
{
	/* the lock's bytes are never overwritten by a value */
	if (map->spin_lock_off >= 0)
		return bpfrt_map_update_locked_value(map, key, value, flags, false);
	return map->ops->update(map, key, value, flags);
}

static inline long bpfrt_map_prog_delete(struct bpfrt_map *map, const void *key)
{
	return map->ops->delete(map, key);
}

/* push/pop/peek for programs: -EINVAL for a kind without them (the
 * verifier refuses such calls; this is the run-time backstop). */
long bpfrt_map_prog_push(struct bpfrt_map *map, const void *value, uint64_t flags);
long bpfrt_map_prog_pop(struct bpfrt_map *map, void *value);
long bpfrt_map_prog_peek(struct bpfrt_map *map, void *value);

/* Tail calls: the program in slot idx, or NULL (empty, out of range, or
 * map not a PROG_ARRAY). The caller is inside a read section; the program
 * stays valid until it ends. */
struct bpfrt_prog *bpfrt_prog_array_get(struct bpfrt_map *map, uint32_t idx);
/* At load, for each PROG_ARRAY a program references: makes it the
 * array's owner if it has none, refuses it (-EINVAL naming the program,
 * the array and its owner) if its kind or verified context cannot be the
 * owner's, else raises its max_ctx_access to the owner's context (what
 * tail-call targets may read). See prog_array.c. */
int bpfrt_prog_array_use(struct bpfrt_map *map, struct bpfrt_prog *caller);
/* Empties every slot of a PROG_ARRAY and lets their programs go once no
 * tail call can still be going through them (after a grace period, or
 * deferred inside a read section). bpfrt_object_close calls it for the
 * object's arrays, as Linux clears a prog array when its last user
 * reference goes: slots are what can make programs and objects hold each
 * other alive. */
void bpfrt_prog_array_clear(struct bpfrt_map *map);
/* The loader's .values initialiser of a PROG_ARRAY slot: as
 * bpfrt_map_update_prog, for a program of the object being loaded that is
 * prepared but not yet published (loaded), which the update refuses. */
int bpfrt_prog_array_init_slot(struct bpfrt_map *map, uint32_t idx, struct bpfrt_prog *prog);

/* Address of element idx's value in a BPF_MAP_TYPE_ARRAY (global data:
 * the loader fills it and relocates lddw against it), or NULL. Stable for
 * the map's lifetime. */
void *bpfrt_map_value_ptr(struct bpfrt_map *map, uint32_t idx);

/* Ring buffer helpers with Linux's semantics. reserve returns NULL when
 * full, size too large or flags != 0; submit/discard take the pointer
 * reserve returned; output returns 0, -EAGAIN (full) or -EINVAL (flags);
 * query takes BPF_RB_AVAIL_DATA/RING_SIZE/CONS_POS/PROD_POS. */
void *bpfrt_ringbuf_reserve(struct bpfrt_map *map, uint64_t size, uint64_t flags);
void bpfrt_ringbuf_submit(void *data, uint64_t flags);
void bpfrt_ringbuf_discard(void *data, uint64_t flags);
long bpfrt_ringbuf_output(struct bpfrt_map *map, const void *data, uint64_t size,
			  uint64_t flags);
uint64_t bpfrt_ringbuf_query(struct bpfrt_map *map, uint64_t flags);
/* bpf_user_ringbuf_drain (user_ringbuf.c): the samples user space
 * submitted to a USER_RINGBUF, each to callback(dynptr, ctx) until it
 * returns 1; the number drained or -errno, as Linux. */
uint64_t bpfrt_bpf_user_ringbuf_drain(uint64_t map, uint64_t callback, uint64_t ctx,
				      uint64_t flags, uint64_t r5);

/* ---- shared by the kinds ----------------------------------------------- */

#define BPFRT_ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

/* Value copies between a map and a caller's buffer, in 8-byte words (then
 * 4, 2, 1 bytes) with relaxed atomic accesses on the map side, like
 * Linux's bpf_long_memcpy: a counter that programs update atomically is
 * never read or written torn, and TSan knows the race is deliberate.
 * The map side must be 8-byte aligned (values always are). */
static inline void bpfrt_map_copy_out(void *dst, const void *map_src, size_t size)
{
	const char *s = map_src;
	char *d = dst;

	for (; size >= 8; size -= 8, s += 8, d += 8) {
		uint64_t w = __atomic_load_n((const uint64_t *)s, __ATOMIC_RELAXED);

		__builtin_memcpy(d, &w, 8);
	}
	if (size >= 4) {
		uint32_t w = __atomic_load_n((const uint32_t *)s, __ATOMIC_RELAXED);

		__builtin_memcpy(d, &w, 4);
		s += 4, d += 4, size -= 4;
	}
	if (size >= 2) {
		uint16_t w = __atomic_load_n((const uint16_t *)s, __ATOMIC_RELAXED);

		__builtin_memcpy(d, &w, 2);
		s += 2, d += 2, size -= 2;
	}
	if (size)
		*d = __atomic_load_n(s, __ATOMIC_RELAXED);
}

static inline void bpfrt_map_copy_in(void *map_dst, const void *src, size_t size)
{
	const char *s = src;
	char *d = map_dst;

	for (; size >= 8; size -= 8, s += 8, d += 8) {
		uint64_t w;

		__builtin_memcpy(&w, s, 8);
		__atomic_store_n((uint64_t *)d, w, __ATOMIC_RELAXED);
	}
	if (size >= 4) {
		uint32_t w;

		__builtin_memcpy(&w, s, 4);
		__atomic_store_n((uint32_t *)d, w, __ATOMIC_RELAXED);
		s += 4, d += 4, size -= 4;
	}
	if (size >= 2) {
		uint16_t w;

		__builtin_memcpy(&w, s, 2);
		__atomic_store_n((uint16_t *)d, w, __ATOMIC_RELAXED);
		s += 2, d += 2, size -= 2;
	}
	if (size)
		__atomic_store_n(d, *s, __ATOMIC_RELAXED);
}

/* Number of possible CPUs, computed once. */
int bpfrt_map_nr_cpus(void);
/* The CPU this thread runs on, in [0, nr_cpus). */
int bpfrt_map_this_cpu(void);

bool bpfrt_map_is_percpu(enum bpf_map_type type);

/* Array checks and key iteration, shared with PROG_ARRAY. */
int bpfrt_array_alloc_check(const struct bpfrt_map *attr);
int bpfrt_array_get_next_key(struct bpfrt_map *map, const void *key, void *next_key);

/* Whether a map of the type can be made with BPFRT_MAP_F_SHARED. */
bool bpfrt_map_type_shareable(uint32_t type);

/* A memfd of size bytes named after the map, mapped MAP_SHARED
 * read-write at *addr: the storage of a shared map. The fd, or -errno. */
int bpfrt_map_shm_create(const char *name, size_t size, void **addr);

/* Whether bpfrt_map_create knows the map type (bpfrt features lists them). */
bool bpfrt_map_type_supported(uint32_t type);

#endif
