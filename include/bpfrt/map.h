/* bpfrt maps: the same kinds, limits and error codes as Linux's BPF maps,
 * in process memory. Included by bpfrt/bpfrt.h.
 *
 * Kinds: BPF_MAP_TYPE_ARRAY, PERCPU_ARRAY, HASH, PERCPU_HASH, LRU_HASH,
 * LRU_PERCPU_HASH, RINGBUF, PROG_ARRAY, QUEUE, STACK, BLOOM_FILTER, LPM_TRIE,
 * ARRAY_OF_MAPS, HASH_OF_MAPS, PERF_EVENT_ARRAY (read with bpfrt/perf_buffer.h),
 * CGROUP_ARRAY
 * (docs/MAPS.md says what each means in user space). All functions return 0 or a negative errno, as the
 * bpf(2) commands they mirror (-ENOENT, -EEXIST, -E2BIG, -EINVAL...), and
 * set bpfrt_last_error() on failure.
 *
 * Thread safety: every call may run concurrently with programs using the
 * same map on other threads, except bpfrt_map_free (no program may still
 * use the map) and bpfrt_ringbuf_consume/poll (one consumer at a time).
 *
 * Lifetime: a map created here is the caller's to free. The maps of an
 * object (bpfrt/object.h) are the object's: they live as long as any of
 * its programs does (a program closed with its object but still attached
 * or in another object's prog array keeps them), and are freed with the
 * last one; never bpfrt_map_free them.
 *
 * Per-CPU maps: user-space lookups and updates take a buffer with one value
 * per possible CPU, each at a stride of round_up(value_size, 8) bytes
 * (bpfrt_map_value_buf_size() gives the total). Programs see the slot of the
 * CPU their thread ran on at the run's first per-CPU access (sched_getcpu());
 * the run keeps that slot to its end even if the thread migrates, as a
 * kernel run does with migration disabled. Unlike the kernel, a thread can
 * be preempted between reading and writing its slot and another thread can
 * then run on that CPU, so programs must update per-CPU values with atomic
 * instructions (__sync_fetch_and_add) when several threads run them. */
#ifndef BPFRT_PUBLIC_MAP_H
#define BPFRT_PUBLIC_MAP_H

#include "bpfrt/export.h"

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_map;
struct bpfrt_prog;

#define BPFRT_MAP_KEY_SIZE_MAX   512             /* MAX_BPF_STACK, as Linux */
#define BPFRT_MAP_VALUE_SIZE_MAX (4u << 20)      /* KMALLOC_MAX_SIZE, x86-64 */
#define BPFRT_PERCPU_VALUE_MAX   (32u << 10)     /* PCPU_MIN_UNIT_SIZE */

struct bpfrt_map_create_opts {
	size_t sz;             /* sizeof(struct bpfrt_map_create_opts) */
	uint32_t map_flags;    /* BPF_F_NO_PREALLOC, BPF_F_ZERO_SEED, BPF_F_RDONLY_PROG... */
	uint32_t numa_node;    /* accepted with BPF_F_NUMA_NODE, otherwise unused */
	/* BPF_MAP_CREATE's map_extra: a bloom filter's number of hash
	 * functions (low 4 bits, 0 = 5); must be 0 for other kinds (-EINVAL) */
	uint64_t map_extra;
	/* ARRAY_OF_MAPS / HASH_OF_MAPS (Linux's inner_map_fd): the template
	 * every inner map must match (type, key and value size, flags, and
	 * max_entries unless it has BPF_F_INNER_MAP). Only its shape is kept:
	 * the caller may free it after the call. */
	struct bpfrt_map *inner_map;
	/* bpfrt's own flags, BPFRT_MAP_F_* below (no Linux counterpart) */
	uint64_t bpfrt_flags;
	/* A struct bpf_spin_lock (4 bytes) in every value at spin_lock_off,
	 * when has_spin_lock is set (Linux finds it in the value's BTF; the
	 * object loader finds it in the object's). HASH and ARRAY only, the
	 * offset 4-aligned and inside the value, not with BPF_F_RDONLY_PROG
	 * or BPF_F_WRONLY_PROG (Linux: -EOPNOTSUPP, -EINVAL, -EACCES). The
	 * lock's bytes are the programs' (bpf_spin_lock/unlock): user-space
	 * lookups return them as 0, updates leave them alone, and BPF_F_LOCK
	 * copies the rest of the value under the lock. */
	uint32_t has_spin_lock;
	uint32_t spin_lock_off;
};
#define bpfrt_map_create_opts__last_field spin_lock_off

/* The map's storage is a memfd another process can map (bpfrt_map_shm):
 * ARRAY, PERCPU_ARRAY, RINGBUF and the four hash kinds (HASH, PERCPU_HASH,
 * LRU_HASH, LRU_PERCPU_HASH; other kinds: -EOPNOTSUPP naming the kind).
 * What is in it is exactly what programs and this process see: no lock
 * guards it against the other process, so a process that dies while
 * writing it leaves at worst one value partly written (as a concurrent
 * update in Linux), never a lock held. Hash maps are written only by the
 * process that made them (their chains and pool are its own); others read
 * them. A fork child gets a private copy of a shared hash map's storage
 * (arrays and ring buffers stay shared with it). */
#define BPFRT_MAP_F_SHARED (1ull << 0)

/* Creates a map. name may be NULL; it may hold [A-Za-z0-9_.] only and is
 * cut to BPFRT_NAME_LEN - 1 characters. Memory is allocated up front from
 * max_entries (hash maps preallocate their elements as Linux does by
 * default). Returns 0 and *map, or -EINVAL (bad sizes or flags), -E2BIG
 * (key or value too large), -ENOMEM (out of memory, or past the map
 * memory limit below). */
BPFRT_API int bpfrt_map_create(enum bpf_map_type type, const char *name,
			       uint32_t key_size, uint32_t value_size, uint32_t max_entries,
			       const struct bpfrt_map_create_opts *opts,
			       struct bpfrt_map **map);
/* Map memory is bounded per process: every map's storage (values, hash
 * elements and buckets, ring pages, prog array slots) counts from
 * creation to bpfrt_map_free, and a creation that would take the total
 * past the limit fails with -ENOMEM and a message naming the map (one
 * whose own size is out of reach fails with -E2BIG or -ENOMEM before).
 * The default limit is half the physical memory (1 GiB if unknown); the
 * environment variable BPFRT_MAP_MEMORY_LIMIT, read at the first map
 * creation, sets it in bytes or with a k/m/g/t suffix (powers of 1024),
 * and bpfrt_set_map_memory_limit() replaces it at any time (maps that
 * already exist stay). 0 means no limit. */
BPFRT_API int bpfrt_set_map_memory_limit(uint64_t bytes);
BPFRT_API uint64_t bpfrt_map_memory_limit(void);
/* Bytes the live maps hold now. */
BPFRT_API uint64_t bpfrt_map_memory_used(void);

/* Waits for RCU read sections in flight, then frees. NULL is a no-op. */
BPFRT_API void bpfrt_map_free(struct bpfrt_map *map);

/* Access flags (map_flags), as Linux: BPF_F_RDONLY_PROG / BPF_F_WRONLY_PROG
 * make the verifier refuse programs that write / read the map's values
 * (stores, atomics, helper arguments; map_update_elem and map_delete_elem
 * on a BPF_F_RDONLY_PROG map). BPF_F_RDONLY / BPF_F_WRONLY do the same for
 * user space: update, delete and freeze (RDONLY) or lookup and
 * get_next_key (WRONLY) fail with -EPERM. */

/* BPF_MAP_LOOKUP_ELEM: copies the value (every CPU's for per-CPU maps).
 * Keyless kinds take a NULL key: queue and stack peek (-ENOENT when
 * empty); a bloom filter tests the value passed in (0: maybe present,
 * -ENOENT: absent). BPF_MAP_UPDATE_ELEM on them pushes. */
BPFRT_API int bpfrt_map_lookup_elem(struct bpfrt_map *map, const void *key, void *value);
/* libbpf's bpf_map_lookup_elem_flags: flags 0 or BPF_F_LOCK (a map with a
 * spin lock only, else -EINVAL): the value copied under its lock. */
BPFRT_API int bpfrt_map_lookup_elem_flags(struct bpfrt_map *map, const void *key, void *value,
					  uint64_t flags);
/* BPF_MAP_UPDATE_ELEM with BPF_ANY, BPF_NOEXIST or BPF_EXIST, plus
 * BPF_F_LOCK for a map with a spin lock (an existing value is written
 * under its lock). */
BPFRT_API int bpfrt_map_update_elem(struct bpfrt_map *map, const void *key,
				    const void *value, uint64_t flags);
/* BPF_MAP_DELETE_ELEM (arrays: -EINVAL, as Linux). */
BPFRT_API int bpfrt_map_delete_elem(struct bpfrt_map *map, const void *key);
/* BPF_MAP_LOOKUP_AND_DELETE_ELEM (libbpf's bpf_map_lookup_and_delete_elem
 * with flags): copies the value out and removes it in one step. Queue and
 * stack: pops (key NULL; -ENOENT when empty; any flag -EINVAL); hash
 * kinds: the key's element (flags must be 0: BPF_F_LOCK needs a spin
 * lock in the value); other kinds -EOPNOTSUPP. Needs read and write
 * access (-EPERM with BPF_F_RDONLY, BPF_F_WRONLY or once frozen). */
BPFRT_API int bpfrt_map_lookup_and_delete_elem(struct bpfrt_map *map, const void *key,
					       void *value, uint64_t flags);
/* BPF_MAP_FREEZE (libbpf's bpf_map_freeze): from now on user space may not
 * change the map: update and delete (bpfrt_map_update_prog/delete_prog
 * too) fail with -EPERM and a message naming the map. Programs may still
 * write it unless it was created with BPF_F_RDONLY_PROG; a frozen
 * BPF_F_RDONLY_PROG map can no longer change at all, so its value storage
 * becomes read-only memory (a write through bpfrt_map_value_ptr() or
 * bpfrt_object_global() faults at once) and the verifier folds loads from
 * it (a one-entry array) into constants, as Linux does. The loader freezes
 * ".rodata*" after writing their initial values, before verification.
 * Waits for host writes in flight. -EBUSY if already frozen. */
BPFRT_API int bpfrt_map_freeze(struct bpfrt_map *map);
BPFRT_API bool bpfrt_map_is_frozen(const struct bpfrt_map *map);
/* BPF_MAP_GET_NEXT_KEY: key NULL (or not in the map) gives the first key;
 * -ENOENT after the last one. */
BPFRT_API int bpfrt_map_get_next_key(struct bpfrt_map *map, const void *key, void *next_key);

BPFRT_API const char *bpfrt_map_name(const struct bpfrt_map *map);
BPFRT_API enum bpf_map_type bpfrt_map_type(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map_key_size(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map_value_size(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map_max_entries(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map_flags(const struct bpfrt_map *map);
/* Bytes a user-space lookup writes: value_size, or for per-CPU maps
 * bpfrt_num_possible_cpus() * round_up(value_size, 8). */
BPFRT_API size_t bpfrt_map_value_buf_size(const struct bpfrt_map *map);

/* Number of possible CPUs (/sys/devices/system/cpu/possible). */
BPFRT_API int bpfrt_num_possible_cpus(void);

/* PROG_ARRAY: bpfrt has no file descriptors, so slots are filled with
 * program objects. A slot is a use of its program (see bpfrt_prog_free):
 * a program freed while in a slot lives until the slot lets it go. After
 * delete (or a replacing update) returns, the old program no longer runs
 * through this array on any thread. Closing an object empties its prog
 * arrays (bpfrt_object_close). Index out of range: -E2BIG; delete
 * of an empty slot: -ENOENT. bpfrt_map_delete_elem works as well.
 * A tail call passes the caller's context on, so the first program to use
 * the array (loaded referencing it, or put in a slot) owns it: a slot
 * takes only programs of the owner's kind (kprobe, kretprobe and uprobe
 * count as one) that read no more context than the owner was verified
 * for (a trusted owner: none), else -EINVAL naming both programs and the
 * array; a program referencing an owned array loads only if it is of
 * that kind and verified for at least the owner's context. */
BPFRT_API int bpfrt_map_update_prog(struct bpfrt_map *map, uint32_t idx, struct bpfrt_prog *prog);
BPFRT_API int bpfrt_map_delete_prog(struct bpfrt_map *map, uint32_t idx);

/* ARRAY_OF_MAPS / HASH_OF_MAPS (value_size 4, as Linux): bpfrt has no
 * file descriptors, so slots hold map objects. update_inner puts inner
 * under key (arrays: BPF_ANY only, index past max_entries -E2BIG; hashes:
 * BPF_ANY/NOEXIST/EXIST); a map not of the template's shape is -EINVAL. A
 * slot keeps its map alive: bpfrt_map_free (or closing its object) does
 * not free a map a slot holds; it goes when its last slot lets it go,
 * once no program can be using it. bpfrt_map_delete_elem empties a slot
 * (-ENOENT if empty). lookup_inner gives the map in a slot (valid while
 * it stays there); bpfrt_map_lookup_elem and bpfrt_map_update_elem are
 * -EOPNOTSUPP (Linux passes map fds and ids, which bpfrt maps lack). A
 * program's map_lookup_elem on the outer map returns the inner map, to
 * pass to the map helpers after a NULL check. */
BPFRT_API int bpfrt_map_update_inner(struct bpfrt_map *outer, const void *key,
				     struct bpfrt_map *inner, uint64_t flags);
BPFRT_API int bpfrt_map_lookup_inner(struct bpfrt_map *outer, const void *key,
				     struct bpfrt_map **inner);

/* RINGBUF consumer (max_entries: data size in bytes, a power of 2 and a
 * multiple of the page size). The callback gets each submitted record in
 * order (discarded ones are skipped); a negative return stops consumption
 * and is returned (that record counts as consumed, as libbpf). Returns the
 * number of records consumed, or a negative errno. One consumer at a time. */
typedef int (*bpfrt_ringbuf_sample_fn)(void *ctx, void *data, size_t len);
BPFRT_API int bpfrt_ringbuf_consume(struct bpfrt_map *map, bpfrt_ringbuf_sample_fn fn, void *ctx);
/* An eventfd that becomes readable when producers notify (see the
 * BPF_RB_NO_WAKEUP / BPF_RB_FORCE_WAKEUP flags); usable with epoll. */
BPFRT_API int bpfrt_ringbuf_fd(const struct bpfrt_map *map);
/* Waits up to timeout_ms (-1: forever) for a notification or data, then
 * consumes. Returns records consumed (0 on timeout) or a negative errno. */
BPFRT_API int bpfrt_ringbuf_poll(struct bpfrt_map *map, bpfrt_ringbuf_sample_fn fn, void *ctx,
				 int timeout_ms);

/* Where a BPFRT_MAP_F_SHARED map's storage lies in its memfd, for
 * another process to mmap (MAP_SHARED, offset 0, size bytes) and read or
 * write as programs do. An output struct of the options convention: set
 * sz to sizeof(struct bpfrt_map_shm).
 *  - BPFRT_MAP_SHM_ARRAY: element i of CPU c (c < nr_cpus; 1 for a plain
 *    array) at data_off + c * cpu_stride + i * elem_size, value_size bytes
 *    (elem_size is value_size rounded up to 8). Values are read and
 *    written in place, 8-byte words atomic.
 *  - BPFRT_MAP_SHM_RINGBUF: the u64 consumer and producer positions at
 *    consumer_pos_off and producer_pos_off, data_size bytes of records at
 *    data_off in Linux's format (8-byte header: u32 length with the BUSY
 *    and DISCARD bits, u32 page offset). One consumer at a time: who
 *    consumes from the mapping advances consumer_pos (release), and the
 *    process that made the map must then not consume it itself.
 *  - BPFRT_MAP_SHM_HASH: n_buckets buckets of 16 bytes at buckets_off,
 *    each a u32 lock (the maker's writers only: never take it) and at
 *    offset 8 the u64 link to its chain's first element; n_elems elements
 *    of elem_size bytes at data_off. A link is either an element's address
 *    in the maker's mapping, which lies at addr (the element is at offset
 *    link - addr of the mapping), or, with bit 0 set, the end of a chain: (bucket << 1) | 1. In an
 *    element: the u64 link to the next at next_off, the key at key_off,
 *    the value at value_off; a per-CPU map (value_off 0) keeps the value
 *    of CPU c (c < nr_cpus) at pcpu_off + c * cpu_stride + index *
 *    round_up(value_size, 8), index the u32 at index_off. A reader loads
 *    links atomically, checks every link lies on an element boundary in
 *    the pool, and gives up a chain that is longer than n_elems or ends in
 *    another bucket's marker (an element reused meanwhile): entries being
 *    changed as it reads may be missed or seen twice, as in a Linux dump
 *    racing updates.
 * fd stays the map's: dup it to keep it (it is closed with the map).
 * 0, or -EINVAL (a map made without BPFRT_MAP_F_SHARED, naming it). */
enum bpfrt_map_shm_layout {
	BPFRT_MAP_SHM_ARRAY = 1,
	BPFRT_MAP_SHM_RINGBUF = 2,
	BPFRT_MAP_SHM_HASH = 3,
};

struct bpfrt_map_shm {
	size_t sz;
	int fd;
	uint32_t layout;            /* enum bpfrt_map_shm_layout */
	uint64_t size;
	uint64_t data_off;
	uint64_t elem_size;         /* arrays */
	uint64_t cpu_stride;
	uint32_t nr_cpus;
	uint32_t value_size;
	uint64_t consumer_pos_off;  /* ring buffers */
	uint64_t producer_pos_off;
	uint64_t data_size;
	uint64_t buckets_off;       /* hash maps */
	uint32_t n_buckets;
	uint32_t n_elems;
	uint64_t pcpu_off;
	uint64_t addr;
	uint32_t next_off;
	uint32_t index_off;
	uint32_t key_off;
	uint32_t value_off;
};
#define bpfrt_map_shm__first_field fd
#define bpfrt_map_shm__last_field value_off

BPFRT_API int bpfrt_map_shm(const struct bpfrt_map *map, struct bpfrt_map_shm *out);

#ifdef __cplusplus
}
#endif
#endif
