/* BPF_MAP_TYPE_HASH, PERCPU_HASH, LRU_HASH and LRU_PERCPU_HASH.
 *
 * Layout: a power-of-2 array of buckets, each a spinlock (writers) and a
 * singly linked chain that readers walk without locks. Elements come from a
 * pool preallocated at creation (max_entries plus a little slack, as Linux
 * preallocates by default), so memory is bounded and an element is never
 * returned to malloc while the map lives.
 *
 * Accounting (as Linux, which keeps max_entries elements for keys and one
 * extra element per CPU for replacing a present key): an update decides
 * under its bucket lock whether the key is present, and only then takes an
 * element, under pool_lock nested inside. A new key needs a slot: it fails
 * with -E2BIG exactly when the map holds max_entries keys (count, which
 * changes in the same critical sections that link and unlink). A present
 * key takes a spare element only if the pool keeps one for every key still
 * allowed: free + limbo > max_entries - count. Every pool_lock section
 * keeps free + limbo >= max_entries - count (an insert lowers both sides
 * by one, a delete raises both, a replacement takes a spare and gives the
 * old element back), so an insert into a map that is not full always
 * finds an element, however many threads replace keys meanwhile. With no
 * spare (more replacers at once than the slack), the value is overwritten
 * in place; a present key's update never fails. Per-CPU maps always
 * update present keys in place.
 *
 * Reuse: an unlinked element goes to a FIFO "limbo" tagged with an RCU
 * cookie and moves to the free list once a grace period has passed, so
 * readers that still hold it see its old contents. When no element is free
 * and the caller may not wait for a grace period (a program, which runs
 * inside a read section), the oldest limbo element is reused at once, which
 * is what Linux does with every preallocated element. (User space outside
 * read sections waits for a grace period instead, before it takes the
 * bucket lock: readers spin on that lock.) That is memory-safe
 * because chains end in a "nulls" marker naming their bucket (Linux's
 * hlist_nulls): a reader carried into another chain by a reused element
 * notices the wrong marker and restarts.
 *
 * PERCPU_HASH values live in per-CPU regions indexed by the element's pool
 * index and are updated in place when the key exists. LRU_HASH evicts with
 * a clock (second-chance) sweep over the pool: program lookups set a
 * reference bit, the sweep clears it, and an element found unreferenced is
 * evicted: an approximate LRU, like Linux's.
 *
 * Shared memory (BPFRT_MAP_F_SHARED): buckets, the pool and the per-CPU
 * values lie in one memfd (bpfrt_map_shm describes where) that another
 * process maps to read the entries as they are, walking chains with its
 * own bounds checks: links are addresses in this process's mapping, which
 * the reader translates. Only this process writes (the reader takes no
 * lock, so nothing it leaves behind can block us); the pool's lists and
 * counters stay in private memory. A fork child gets a private copy of the
 * storage at once (an atfork handler), since its pool lists are copies too
 * and two processes allocating from one pool would corrupt it. */
#define _GNU_SOURCE
#include "maps/map.h"
#include "maps/spinlock.h"
#include "core/error.h"
#include "core/rcu.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define HTAB_CREATE_FLAGS (BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | \
			   BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | \
			   BPF_F_WRONLY_PROG | BPF_F_ZERO_SEED)
/* Extra pool elements per CPU, so replacing values in a full map works and
 * reuse can usually wait for a grace period. */
#define HTAB_SLACK_PER_CPU 16
/* Evictions an LRU insert tries when it finds the pool dry. */
#define HTAB_LRU_RETRIES 4

struct htab_elem {
	_Atomic uintptr_t next;      /* next element, or the chain's nulls marker */
	struct htab_elem *pool_next; /* free list / limbo link */
	uint64_t cookie;             /* limbo: RCU state when it was unlinked */
	_Atomic uint32_t hash;
	uint32_t index;              /* position in the pool: per-CPU value slots */
	_Atomic uint8_t ref;         /* LRU: looked up since the clock passed */
	_Atomic uint8_t linked;      /* LRU: in the table */
	uint64_t data[];             /* key (rounded to 8), then the value */
};

struct bucket {
	struct bpfrt_spinlock lock;
	_Atomic uintptr_t first;
};
/* the layout bpfrt_map_shm documents for readers in other processes */
_Static_assert(sizeof(struct bucket) == 16 && offsetof(struct bucket, first) == 8,
	       "shared hash bucket layout");

struct htab {
	struct bpfrt_map map;
	struct bucket *buckets;
	uint32_t n_buckets;          /* power of 2 */
	uint32_t key_round;          /* round_up(key_size, 8) */
	uint32_t value_round;        /* round_up(value_size, 8) */
	uint64_t seed;
	bool percpu, lru;
	int nr_cpus;

	char *elems;                 /* the pool */
	size_t elem_size;
	uint32_t n_elems;
	char *pcpu_values;           /* per-CPU maps: n_elems values per CPU */
	size_t pcpu_stride;          /* bytes between two CPUs' regions */

	/* Keys in the map: linked elements. Changed under pool_lock (plain
	 * load + store, no locked instruction) nested in the bucket lock that
	 * links or unlinks, so it moves with the table; read anywhere. */
	_Atomic uint32_t count;

	struct bpfrt_spinlock pool_lock;
	struct htab_elem *free_list; /* LIFO: safe to reuse */
	struct htab_elem *limbo_head, *limbo_tail; /* FIFO: waiting for a grace period */
	_Atomic uint32_t n_free;     /* on free_list; written under pool_lock */
	uint32_t n_limbo;            /* in limbo; under pool_lock */

	struct bpfrt_spinlock lru_lock;
	uint32_t clock_hand;

	/* BPFRT_MAP_F_SHARED: the memfd all storage is in (else -1), its
	 * mapping, and the storage's offsets in it; shm_next: the list of
	 * shared maps the fork handler privatises */
	int shm_fd;
	void *shm_base;
	size_t shm_len;
	size_t elems_off, pcpu_off;
	struct htab *shm_next;
};

static struct htab *to_htab(struct bpfrt_map *map)
{
	return (struct htab *)map;
}

/* ---- chains with nulls markers ------------------------------------------- */

static uintptr_t nulls_marker(uint32_t bucket)
{
	return ((uintptr_t)bucket << 1) | 1;
}

static bool is_nulls(uintptr_t v)
{
	return v & 1;
}

static struct htab_elem *elem_at(struct htab *htab, uint32_t index)
{
	return (struct htab_elem *)(htab->elems + (size_t)index * htab->elem_size);
}

static void *elem_key(struct htab_elem *e)
{
	return e->data;
}

/* This CPU's value (or the only one). */
static void *elem_value(struct htab *htab, struct htab_elem *e, int cpu)
{
	if (htab->percpu)
		return htab->pcpu_values + cpu * htab->pcpu_stride +
		       (size_t)e->index * htab->value_round;
	return (char *)e->data + htab->key_round;
}

/* ---- hashing ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t a, uint64_t b)
{
	__uint128_t p = (__uint128_t)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static uint32_t htab_hash(const struct htab *htab, const void *key)
{
	const uint8_t *p = key;
	uint32_t len = htab->map.key_size;
	uint64_t h = htab->seed ^ (len * 0x9e3779b97f4a7c15ull);
	uint64_t w;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = mix64(h ^ w, 0xbf58476d1ce4e5b9ull);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = mix64(h ^ w, 0x94d049bb133111ebull);
	}
	h = mix64(h ^ (h >> 29), 0x9e3779b97f4a7c15ull);
	return (uint32_t)(h ^ (h >> 32));
}

/* Word-wise with relaxed atomic loads: a lock-free reader may compare
 * against an element being refilled for another key (early reuse), and
 * must then get a mismatch or a stale match, not undefined behaviour. */
static bool key_equal(const void *elem_key, const void *key, uint32_t size)
{
	const uint64_t *ek = elem_key;
	const char *k = key;
	uint64_t a, b;

	for (; size >= 8; size -= 8, ek++, k += 8) {
		a = __atomic_load_n(ek, __ATOMIC_RELAXED);
		memcpy(&b, k, 8);
		if (a != b)
			return false;
	}
	if (!size)
		return true;
	a = 0;
	b = 0;
	bpfrt_map_copy_out(&a, ek, size);
	memcpy(&b, k, size);
	return a == b;
}

static bool elem_matches(struct htab *htab, struct htab_elem *e, uint32_t hash,
			 const void *key)
{
	return atomic_load_explicit(&e->hash, memory_order_relaxed) == hash &&
	       key_equal(elem_key(e), key, htab->map.key_size);
}

/* Lock-free lookup; the caller is in a read section. */
static struct htab_elem *lookup_rcu(struct htab *htab, uint32_t hash, const void *key)
{
	uint32_t b = hash & (htab->n_buckets - 1);
	uintptr_t v;

again:
	v = atomic_load_explicit(&htab->buckets[b].first, memory_order_acquire);
	while (!is_nulls(v)) {
		struct htab_elem *e = (struct htab_elem *)v;

		if (elem_matches(htab, e, hash, key))
			return e;
		v = atomic_load_explicit(&e->next, memory_order_acquire);
	}
	/* Ended in another bucket's chain: an element we walked through was
	 * reused meanwhile. */
	if (v != nulls_marker(b))
		goto again;
	return NULL;
}

/* Under the bucket lock: the link pointing at the element for key, or NULL. */
static _Atomic uintptr_t *find_link_locked(struct htab *htab, struct bucket *bucket,
					   uint32_t hash, const void *key)
{
	_Atomic uintptr_t *link = &bucket->first;
	uintptr_t v;

	while (!is_nulls(v = atomic_load_explicit(link, memory_order_relaxed))) {
		struct htab_elem *e = (struct htab_elem *)v;

		if (elem_matches(htab, e, hash, key))
			return link;
		link = &e->next;
	}
	return NULL;
}

static struct htab_elem *link_target(_Atomic uintptr_t *link)
{
	return (struct htab_elem *)atomic_load_explicit(link, memory_order_relaxed);
}

/* ---- the element pool ---------------------------------------------------------- */

static void free_list_push_locked(struct htab *htab, struct htab_elem *e)
{
	e->pool_next = htab->free_list;
	htab->free_list = e;
	atomic_store_explicit(&htab->n_free, atomic_load_explicit(&htab->n_free,
			      memory_order_relaxed) + 1, memory_order_relaxed);
}

static struct htab_elem *free_list_pop_locked(struct htab *htab)
{
	struct htab_elem *e = htab->free_list;

	if (!e)
		return NULL;
	htab->free_list = e->pool_next;
	atomic_store_explicit(&htab->n_free, atomic_load_explicit(&htab->n_free,
			      memory_order_relaxed) - 1, memory_order_relaxed);
	return e;
}

static struct htab_elem *limbo_pop_locked(struct htab *htab)
{
	struct htab_elem *e = htab->limbo_head;

	htab->limbo_head = e->pool_next;
	if (!htab->limbo_head)
		htab->limbo_tail = NULL;
	htab->n_limbo--;
	return e;
}

/* Moves limbo elements whose grace period is over to the free list. */
static void reclaim_limbo_locked(struct htab *htab)
{
	while (htab->limbo_head && bpfrt_rcu_poll_state(htab->limbo_head->cookie))
		free_list_push_locked(htab, limbo_pop_locked(htab));
}

/* A free element, else the oldest limbo one reused at once (early reuse,
 * as Linux's preallocated maps always do; readers are safe by the nulls
 * markers). NULL only when every element is linked or being filled. */
static struct htab_elem *pool_take_locked(struct htab *htab)
{
	struct htab_elem *e = free_list_pop_locked(htab);

	if (e)
		return e;
	reclaim_limbo_locked(htab);
	e = free_list_pop_locked(htab);
	if (!e && htab->limbo_head)
		e = limbo_pop_locked(htab);
	return e;
}

static uint32_t count_read(struct htab *htab)
{
	return atomic_load_explicit(&htab->count, memory_order_relaxed);
}

static void count_add_locked(struct htab *htab, int delta)
{
	atomic_store_explicit(&htab->count, count_read(htab) + delta, memory_order_relaxed);
}

/* Elements the pool keeps for keys not yet in the map: each of the
 * max_entries - count keys still allowed needs one. */
static uint32_t pool_reserved_locked(struct htab *htab)
{
	uint32_t count = count_read(htab);

	return count < htab->map.max_entries ? htab->map.max_entries - count : 0;
}

static uint32_t pool_avail_locked(struct htab *htab)
{
	return atomic_load_explicit(&htab->n_free, memory_order_relaxed) + htab->n_limbo;
}

/* Under the bucket lock, the key absent: an element and the slot for it,
 * or NULL when the map is full (LRU maps take the slot anyway and trim
 * afterwards). Never NULL for a non-full non-LRU map: see "Accounting". */
static struct htab_elem *pool_get_for_insert(struct htab *htab, bool *kick_gp)
{
	struct htab_elem *e = NULL;

	bpfrt_spin_lock(&htab->pool_lock);
	if (htab->lru || count_read(htab) < htab->map.max_entries)
		e = pool_take_locked(htab);
	if (e)
		count_add_locked(htab, 1);
	*kick_gp |= htab->limbo_head != NULL;
	bpfrt_spin_unlock(&htab->pool_lock);
	return e;
}

/* Under the bucket lock, the key present: an element to replace it with,
 * if the pool has one beyond those it keeps for new keys; else NULL and
 * the caller overwrites the value in place. */
static struct htab_elem *pool_get_spare(struct htab *htab, bool *kick_gp)
{
	struct htab_elem *e = NULL;

	bpfrt_spin_lock(&htab->pool_lock);
	if (pool_avail_locked(htab) > pool_reserved_locked(htab))
		e = pool_take_locked(htab);
	*kick_gp |= htab->limbo_head != NULL;
	bpfrt_spin_unlock(&htab->pool_lock);
	return e;
}

/* User space outside read sections, before taking a bucket lock: when the
 * free list is empty, wait for a grace period rather than have the update
 * reuse a limbo element early. Not under the bucket lock: a reader
 * spinning on it would hold the grace period up. */
static void pool_wait_for_free(struct htab *htab)
{
	bool waiting;

	if (atomic_load_explicit(&htab->n_free, memory_order_relaxed))
		return;
	bpfrt_spin_lock(&htab->pool_lock);
	reclaim_limbo_locked(htab);
	waiting = !htab->free_list && htab->limbo_head;
	bpfrt_spin_unlock(&htab->pool_lock);
	if (!waiting)
		return;
	bpfrt_rcu_synchronize();
	bpfrt_spin_lock(&htab->pool_lock);
	reclaim_limbo_locked(htab);
	bpfrt_spin_unlock(&htab->pool_lock);
}

/* An element just unlinked, under the bucket lock that unlinked it (so
 * count and the table change together): readers may still hold it, so it
 * waits in limbo. release_slot: its key left the map (delete, eviction);
 * not when a replacement took the key over. The caller kicks a grace
 * period once it has dropped the bucket lock. */
static void pool_retire(struct htab *htab, struct htab_elem *e, bool release_slot)
{
	uint64_t cookie;

	bpfrt_spin_lock(&htab->pool_lock);
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__SANITIZE_THREAD__)
	/* Taking the lock (xchg) was the full barrier that orders our
	 * unlinking before the counter read. */
	cookie = bpfrt_rcu_get_state_after_barrier();
#else
	cookie = bpfrt_rcu_get_state();
#endif
	e->cookie = cookie;
	e->pool_next = NULL;
	if (htab->limbo_tail)
		htab->limbo_tail->pool_next = e;
	else
		htab->limbo_head = e;
	htab->limbo_tail = e;
	htab->n_limbo++;
	if (release_slot)
		count_add_locked(htab, -1);
	bpfrt_spin_unlock(&htab->pool_lock);
}

/* ---- LRU ------------------------------------------------------------------------ */

/* Unlinks e if it is still in its chain, and retires it. */
static bool unlink_elem(struct htab *htab, struct htab_elem *e)
{
	uint32_t hash = atomic_load_explicit(&e->hash, memory_order_relaxed);
	struct bucket *bucket = &htab->buckets[hash & (htab->n_buckets - 1)];
	_Atomic uintptr_t *link = &bucket->first;
	bool found = false;
	uintptr_t v;

	bpfrt_spin_lock(&bucket->lock);
	while (!is_nulls(v = atomic_load_explicit(link, memory_order_relaxed))) {
		if ((struct htab_elem *)v == e) {
			atomic_store_explicit(link, atomic_load_explicit(&e->next,
					      memory_order_relaxed), memory_order_release);
			atomic_store_explicit(&e->linked, 0, memory_order_relaxed);
			pool_retire(htab, e, true);
			found = true;
			break;
		}
		link = &((struct htab_elem *)v)->next;
	}
	bpfrt_spin_unlock(&bucket->lock);
	return found;
}

/* Clock sweep: evicts one unreferenced element. Lock order: lru_lock, then
 * a bucket lock, then pool_lock; callers hold no bucket lock. */
static bool lru_evict_one(struct htab *htab)
{
	bool evicted = false;

	bpfrt_spin_lock(&htab->lru_lock);
	for (uint64_t scanned = 0; scanned < 2ull * htab->n_elems + 1; scanned++) {
		struct htab_elem *e = elem_at(htab, htab->clock_hand);

		htab->clock_hand = htab->clock_hand + 1 == htab->n_elems ? 0 : htab->clock_hand + 1;
		if (!atomic_load_explicit(&e->linked, memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&e->ref, memory_order_relaxed)) {
			atomic_store_explicit(&e->ref, 0, memory_order_relaxed);
			continue;
		}
		if (unlink_elem(htab, e)) {
			evicted = true;
			break;
		}
	}
	bpfrt_spin_unlock(&htab->lru_lock);
	if (evicted)
		bpfrt_rcu_start_gp();
	return evicted;
}

/* A full LRU map makes room before a new key goes in (Linux's LRU also
 * evicts before taking the bucket lock). A key already present needs no
 * room: its update evicts nothing. */
static void lru_make_room(struct htab *htab, uint32_t hash, const void *key)
{
	bool present;

	if (count_read(htab) < htab->map.max_entries)
		return;
	bpfrt_rcu_read_lock();
	present = lookup_rcu(htab, hash, key) != NULL;
	bpfrt_rcu_read_unlock();
	if (!present)
		lru_evict_one(htab);
}

/* ---- update / delete ---------------------------------------------------------- */

static const char zero_value[BPFRT_PERCPU_VALUE_MAX];

/* Values for an element: from a user buffer with every CPU's value, or a
 * program's value for this CPU (other CPUs start at zero). */
static void fill_values(struct htab *htab, struct htab_elem *e, const void *value,
			bool all_cpus, bool zero_others)
{
	uint32_t vsize = htab->map.value_size;

	if (!htab->percpu) {
		bpfrt_map_copy_in(elem_value(htab, e, 0), value, vsize);
		return;
	}
	if (all_cpus) {
		for (int cpu = 0; cpu < htab->nr_cpus; cpu++)
			bpfrt_map_copy_in(elem_value(htab, e, cpu),
					  (const char *)value + (size_t)cpu * htab->value_round,
					  vsize);
		return;
	}
	int this_cpu = bpfrt_map_this_cpu();

	for (int cpu = 0; cpu < htab->nr_cpus; cpu++) {
		if (cpu == this_cpu)
			bpfrt_map_copy_in(elem_value(htab, e, cpu), value, vsize);
		else if (zero_others)
			bpfrt_map_copy_in(elem_value(htab, e, cpu), zero_value, htab->value_round);
	}
}

static void fill_elem(struct htab *htab, struct htab_elem *e, uint32_t hash,
		      const void *key, const void *value, bool user)
{
	atomic_store_explicit(&e->hash, hash, memory_order_relaxed);
	atomic_store_explicit(&e->ref, 0, memory_order_relaxed);
	bpfrt_map_copy_in(elem_key(e), key, htab->map.key_size);
	fill_values(htab, e, value, user, true);
}

/* Under the bucket lock, the key present (not per-CPU): a new element
 * takes the old one's place and slot, so readers holding the old one keep
 * its value. Without a spare element (more updaters at once than the
 * pool's slack) the value is overwritten in place, and a reader may see a
 * mix of the two, as after early reuse. Never fails. */
static void replace_locked(struct htab *htab, _Atomic uintptr_t *link, uint32_t hash,
			   const void *key, const void *value, bool user, bool *kick_gp)
{
	struct htab_elem *old = link_target(link);
	struct htab_elem *e = pool_get_spare(htab, kick_gp);

	if (!e) {
		fill_values(htab, old, value, user, false);
		return;
	}
	fill_elem(htab, e, hash, key, value, user);
	atomic_store_explicit(&e->next, atomic_load_explicit(&old->next, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&e->linked, 1, memory_order_relaxed);
	atomic_store_explicit(&old->linked, 0, memory_order_relaxed);
	atomic_store_explicit(link, (uintptr_t)e, memory_order_release);
	pool_retire(htab, old, false);
	*kick_gp = true;
}

/* Under the bucket lock, the key absent: a new element at the chain's
 * head. -E2BIG when the map holds max_entries keys; -EAGAIN when an LRU
 * map's pool is dry (the caller evicts and retries). */
static long insert_locked(struct htab *htab, struct bucket *bucket, uint32_t hash,
			  const void *key, const void *value, bool user, bool *kick_gp)
{
	struct htab_elem *e = pool_get_for_insert(htab, kick_gp);

	if (!e)
		return htab->lru ? -EAGAIN : -E2BIG;
	fill_elem(htab, e, hash, key, value, user);
	atomic_store_explicit(&e->next, atomic_load_explicit(&bucket->first, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&e->linked, 1, memory_order_relaxed);
	atomic_store_explicit(&bucket->first, (uintptr_t)e, memory_order_release);
	return 0;
}

static long update_locked(struct htab *htab, struct bucket *bucket, uint32_t hash,
			  const void *key, const void *value, uint64_t flags, bool user,
			  bool *kick_gp)
{
	_Atomic uintptr_t *link = find_link_locked(htab, bucket, hash, key);

	if (link && flags == BPF_NOEXIST)
		return -EEXIST;
	if (!link && flags == BPF_EXIST)
		return -ENOENT;
	if (!link)
		return insert_locked(htab, bucket, hash, key, value, user, kick_gp);
	if (htab->percpu)  /* in place, as Linux */
		fill_values(htab, link_target(link), value, user, false);
	else
		replace_locked(htab, link, hash, key, value, user, kick_gp);
	return 0;
}

/* Whether the key is present is decided under the bucket lock, and the
 * element is taken and filled there (as Linux does): only an insert of a
 * new key needs a slot, so concurrent updaters of present keys can never
 * make it, or each other, fail. */
static long htab_update_common(struct htab *htab, const void *key, const void *value,
			       uint64_t flags, bool user)
{
	uint32_t hash = htab_hash(htab, key);
	struct bucket *bucket = &htab->buckets[hash & (htab->n_buckets - 1)];
	bool kick_gp = false;
	long err;

	if (flags > BPF_EXIST)
		return -EINVAL;
	/* What may wait or take other bucket locks happens first, unlocked. */
	if (user && !bpfrt_rcu_in_read_section())
		pool_wait_for_free(htab);
	if (htab->lru)
		lru_make_room(htab, hash, key);
	for (int attempt = 0;; attempt++) {
		bpfrt_spin_lock(&bucket->lock);
		err = update_locked(htab, bucket, hash, key, value, flags, user, &kick_gp);
		bpfrt_spin_unlock(&bucket->lock);
		if (err != -EAGAIN)
			break;
		if (attempt == HTAB_LRU_RETRIES || !lru_evict_one(htab)) {
			err = -ENOMEM;
			break;
		}
	}
	if (kick_gp)
		bpfrt_rcu_start_gp();
	/* Concurrent LRU inserts can overshoot by one each; trim back. */
	if (htab->lru && count_read(htab) > htab->map.max_entries)
		lru_evict_one(htab);
	return err;
}

static void copy_values_out(struct htab *htab, struct htab_elem *e, void *value);

/* value: BPF_MAP_LOOKUP_AND_DELETE_ELEM's buffer, filled under the bucket
 * lock from the element it unlinks (NULL: a plain delete). */
static long htab_delete_common(struct htab *htab, const void *key, void *value)
{
	uint32_t hash = htab_hash(htab, key);
	struct bucket *bucket = &htab->buckets[hash & (htab->n_buckets - 1)];
	struct htab_elem *e = NULL;
	_Atomic uintptr_t *link;

	bpfrt_spin_lock(&bucket->lock);
	link = find_link_locked(htab, bucket, hash, key);
	if (link) {
		e = link_target(link);
		if (value)
			copy_values_out(htab, e, value);
		/* e->next stays intact: readers standing on e go on. */
		atomic_store_explicit(link, atomic_load_explicit(&e->next,
				      memory_order_relaxed), memory_order_release);
		atomic_store_explicit(&e->linked, 0, memory_order_relaxed);
		pool_retire(htab, e, true);
	}
	bpfrt_spin_unlock(&bucket->lock);
	if (!e)
		return -ENOENT;
	bpfrt_rcu_start_gp();
	return 0;
}

/* ---- ops ---------------------------------------------------------------------- */

static void *htab_lookup(struct bpfrt_map *map, const void *key)
{
	struct htab *htab = to_htab(map);
	struct htab_elem *e = lookup_rcu(htab, htab_hash(htab, key), key);

	if (!e)
		return NULL;
	if (htab->lru && !atomic_load_explicit(&e->ref, memory_order_relaxed))
		atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
	return elem_value(htab, e, htab->percpu ? bpfrt_map_this_cpu() : 0);
}

/* bpf_map_lookup_percpu_elem on the per-CPU kinds: cpu's value (an LRU
 * element is marked referenced, as a lookup marks it); NULL past the
 * possible CPUs, as Linux past nr_cpu_ids. */
static void *htab_lookup_percpu(struct bpfrt_map *map, const void *key, uint32_t cpu)
{
	struct htab *htab = to_htab(map);
	struct htab_elem *e;

	if (!htab->percpu || cpu >= (uint32_t)htab->nr_cpus)
		return NULL;
	e = lookup_rcu(htab, htab_hash(htab, key), key);
	if (!e)
		return NULL;
	if (htab->lru && !atomic_load_explicit(&e->ref, memory_order_relaxed))
		atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
	return elem_value(htab, e, (int)cpu);
}

static long htab_update(struct bpfrt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	return htab_update_common(to_htab(map), key, value, flags, false);
}

static long htab_delete(struct bpfrt_map *map, const void *key)
{
	return htab_delete_common(to_htab(map), key, NULL);
}

/* The element's value, every CPU's for per-CPU maps (user-space layout). */
static void copy_values_out(struct htab *htab, struct htab_elem *e, void *value)
{
	if (!htab->percpu) {
		bpfrt_map_copy_out(value, elem_value(htab, e, 0), htab->map.value_size);
		return;
	}
	for (int cpu = 0; cpu < htab->nr_cpus; cpu++)
		bpfrt_map_copy_out((char *)value + (size_t)cpu * htab->value_round,
				   elem_value(htab, e, cpu), htab->value_round);
}

static int htab_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	struct htab *htab = to_htab(map);
	struct htab_elem *e = lookup_rcu(htab, htab_hash(htab, key), key);

	if (!e)
		return -ENOENT;
	copy_values_out(htab, e, value);
	return 0;
}

/* Linux takes only BPF_F_LOCK here, which needs a bpf_spin_lock in the
 * value (bpfrt's never have one): any flag is -EINVAL. */
static int htab_sys_lookup_and_delete(struct bpfrt_map *map, const void *key, void *value,
				      uint64_t flags)
{
	if (flags)
		return -EINVAL;
	return (int)htab_delete_common(to_htab(map), key, value);
}

static int htab_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			   uint64_t flags)
{
	return (int)htab_update_common(to_htab(map), key, value, flags, true);
}

static int htab_sys_delete(struct bpfrt_map *map, const void *key)
{
	return (int)htab_delete_common(to_htab(map), key, NULL);
}

/* Bucket order, as Linux: the key after `key` in its chain, else the first
 * key of the next non-empty bucket; a missing key restarts from the top. */
static int htab_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	struct htab *htab = to_htab(map);
	uint32_t b = 0;

	if (key) {
		uint32_t hash = htab_hash(htab, key);
		struct htab_elem *e = lookup_rcu(htab, hash, key);

		if (e) {
			uintptr_t v = atomic_load_explicit(&e->next, memory_order_acquire);

			if (!is_nulls(v)) {
				bpfrt_map_copy_out(next_key, elem_key((struct htab_elem *)v),
						   map->key_size);
				return 0;
			}
			b = (hash & (htab->n_buckets - 1)) + 1;
		}
	}
	for (; b < htab->n_buckets; b++) {
		uintptr_t v = atomic_load_explicit(&htab->buckets[b].first, memory_order_acquire);

		if (!is_nulls(v)) {
			bpfrt_map_copy_out(next_key, elem_key((struct htab_elem *)v), map->key_size);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- creation -------------------------------------------------------------------- */

static int htab_alloc_check(const struct bpfrt_map *attr)
{
	bool percpu = bpfrt_map_is_percpu(attr->type);
	bool lru = attr->type == BPF_MAP_TYPE_LRU_HASH ||
		   attr->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	uint32_t flags = attr->map_flags;

	if (flags & ~HTAB_CREATE_FLAGS)
		return bpfrt_err(-EINVAL, "hash map '%s': invalid map_flags 0x%x",
				 attr->name, flags);
	if (!lru && (flags & BPF_F_NO_COMMON_LRU))
		return bpfrt_err(-EINVAL, "hash map '%s': BPF_F_NO_COMMON_LRU needs an LRU map",
				 attr->name);
	/* Linux: -ENOTSUPP; bpfrt reports the user-space equivalent. */
	if (lru && (flags & BPF_F_NO_PREALLOC))
		return bpfrt_err(-EOPNOTSUPP, "LRU hash map '%s': BPF_F_NO_PREALLOC not "
				 "supported", attr->name);
	if (attr->max_entries == 0 || attr->key_size == 0 || attr->value_size == 0)
		return bpfrt_err(-EINVAL, "hash map '%s': key_size, value_size and "
				 "max_entries must be non-zero", attr->name);
	if (attr->key_size > BPFRT_MAP_KEY_SIZE_MAX)
		return bpfrt_err(-E2BIG, "hash map '%s': key_size %u larger than %u",
				 attr->name, attr->key_size, BPFRT_MAP_KEY_SIZE_MAX);
	if ((uint64_t)attr->key_size + attr->value_size >=
	    BPFRT_MAP_VALUE_SIZE_MAX - sizeof(struct htab_elem) ||
	    (percpu && BPFRT_ROUND_UP(attr->value_size, 8) > BPFRT_PERCPU_VALUE_MAX))
		return bpfrt_err(-E2BIG, "hash map '%s': value_size %u too large",
				 attr->name, attr->value_size);
	if (attr->max_entries > (1u << 31))
		return bpfrt_err(-E2BIG, "hash map '%s': max_entries %u too large",
				 attr->name, attr->max_entries);
	return 0;
}

static uint64_t random_seed(void)
{
	uint64_t seed;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32),
		     (uintptr_t)&seed | 1);
}

static uint32_t round_up_pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* ---- shared memory -------------------------------------------------------------- */

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct htab *shared_maps;        /* under shared_lock */
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_fork_prepare(void)
{
	pthread_mutex_lock(&shared_lock);
}

static void shared_fork_parent(void)
{
	pthread_mutex_unlock(&shared_lock);
}

/* The child: each shared map's storage becomes a private copy at the same
 * address (copied aside, a private mapping put in its place, copied
 * back; mremap over it would save a copy but crashes qemu-user), and
 * stops being shared. Only system calls and memcpy: the
 * child of a multi-threaded process may call only async-signal-safe
 * functions here. A copy that fails (no memory) leaves the map shared:
 * the child must not write it then, which it cannot be told; so it is
 * made read-only, and a write faults rather than corrupts the parent. */
static void shared_fork_child(void)
{
	for (struct htab *h = shared_maps; h; h = h->shm_next) {
		void *copy = mmap(NULL, h->shm_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (copy != MAP_FAILED) {
			memcpy(copy, h->shm_base, h->shm_len);
			if (mmap(h->shm_base, h->shm_len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
				munmap(copy, h->shm_len);
				copy = MAP_FAILED;
			} else {
				memcpy(h->shm_base, copy, h->shm_len);
				munmap(copy, h->shm_len);
			}
		}
		if (copy == MAP_FAILED)
			mprotect(h->shm_base, h->shm_len, PROT_READ);
		close(h->shm_fd);
		h->shm_fd = -1;
	}
	shared_maps = NULL;
	pthread_mutex_unlock(&shared_lock);
}

static void shared_register_atfork(void)
{
	pthread_atfork(shared_fork_prepare, shared_fork_parent, shared_fork_child);
}

static void shared_add(struct htab *htab)
{
	pthread_once(&shared_once, shared_register_atfork);
	pthread_mutex_lock(&shared_lock);
	htab->shm_next = shared_maps;
	shared_maps = htab;
	pthread_mutex_unlock(&shared_lock);
}

static void shared_remove(struct htab *htab)
{
	pthread_mutex_lock(&shared_lock);
	for (struct htab **pp = &shared_maps; *pp; pp = &(*pp)->shm_next)
		if (*pp == htab) {
			*pp = htab->shm_next;
			break;
		}
	pthread_mutex_unlock(&shared_lock);
}

/* One memfd for buckets, pool and per-CPU values, each part 64-aligned. */
static int shared_storage(struct htab *htab)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t buckets = (size_t)htab->n_buckets * sizeof(struct bucket);
	size_t elems = (size_t)htab->n_elems * htab->elem_size;
	size_t pcpu = htab->percpu ? (size_t)htab->nr_cpus * htab->pcpu_stride : 0;
	void *base;
	int fd;

	htab->elems_off = BPFRT_ROUND_UP(buckets, 64);
	htab->pcpu_off = BPFRT_ROUND_UP(htab->elems_off + elems, 64);
	htab->shm_len = BPFRT_ROUND_UP(htab->pcpu_off + pcpu, page);
	fd = bpfrt_map_shm_create(htab->map.name, htab->shm_len, &base);
	if (fd < 0)
		return fd;
	htab->shm_fd = fd;
	htab->shm_base = base;
	htab->buckets = base;
	htab->elems = (char *)base + htab->elems_off;
	if (htab->percpu)
		htab->pcpu_values = (char *)base + htab->pcpu_off;
	shared_add(htab);
	return 0;
}

static void htab_shm(struct bpfrt_map *map, struct bpfrt_map_shm *out)
{
	struct htab *htab = to_htab(map);

	out->fd = htab->shm_fd;
	out->layout = htab->shm_fd >= 0 ? BPFRT_MAP_SHM_HASH : 0;
	out->size = htab->shm_len;
	out->data_off = htab->elems_off;
	out->elem_size = htab->elem_size;
	out->cpu_stride = htab->pcpu_stride;
	out->nr_cpus = htab->percpu ? (uint32_t)htab->nr_cpus : 1;
	out->value_size = htab->map.value_size;
	out->buckets_off = 0;
	out->n_buckets = htab->n_buckets;
	out->n_elems = htab->n_elems;
	out->pcpu_off = htab->percpu ? htab->pcpu_off : 0;
	out->addr = (uint64_t)(uintptr_t)htab->shm_base;
	out->next_off = offsetof(struct htab_elem, next);
	out->index_off = offsetof(struct htab_elem, index);
	out->key_off = offsetof(struct htab_elem, data);
	out->value_off = htab->percpu ? 0 : offsetof(struct htab_elem, data) + htab->key_round;
}

static void htab_free(struct bpfrt_map *map)
{
	struct htab *htab = to_htab(map);

	if (htab->shm_base) {
		shared_remove(htab);
		munmap(htab->shm_base, htab->shm_len);
		if (htab->shm_fd >= 0)
			close(htab->shm_fd);
	} else {
		free(htab->buckets);
		free(htab->elems);
		free(htab->pcpu_values);
	}
	free(htab);
}

/* The element pool and per-CPU values of a map of attr's shape. */
struct htab_geometry {
	uint64_t n_elems, elem_size, value_round, pcpu_stride;
};

static void htab_geometry(const struct bpfrt_map *attr, struct htab_geometry *g)
{
	bool percpu = bpfrt_map_is_percpu(attr->type);
	uint64_t nr_cpus = (uint64_t)bpfrt_map_nr_cpus();

	g->value_round = BPFRT_ROUND_UP(attr->value_size, 8);
	g->elem_size = sizeof(struct htab_elem) + BPFRT_ROUND_UP(attr->key_size, 8) +
		       (percpu ? 0 : g->value_round);
	g->n_elems = (uint64_t)attr->max_entries + (uint64_t)HTAB_SLACK_PER_CPU * nr_cpus;
	g->pcpu_stride = percpu ? BPFRT_ROUND_UP(g->n_elems * g->value_round, 64) : 0;
}

static int htab_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	uint64_t nr_cpus = (uint64_t)bpfrt_map_nr_cpus();
	struct htab_geometry g;

	htab_geometry(attr, &g);
	if (g.n_elems > UINT32_MAX || g.n_elems * g.elem_size > (1ull << 40) ||
	    g.pcpu_stride * nr_cpus > (1ull << 40))
		return bpfrt_err(-E2BIG, "hash map '%s': %u entries need too much memory",
				 attr->name, attr->max_entries);
	*bytes = sizeof(struct htab) + round_up_pow2(attr->max_entries) * sizeof(struct bucket) +
		 g.n_elems * g.elem_size + g.pcpu_stride * nr_cpus;
	return 0;
}

static int htab_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct htab *htab = calloc(1, sizeof(*htab));
	struct htab_geometry g;

	if (!htab)
		return -ENOMEM;
	htab_geometry(attr, &g);  /* bounded: htab_mem_size */
	htab->map = *attr;
	htab->percpu = bpfrt_map_is_percpu(attr->type);
	htab->lru = attr->type == BPF_MAP_TYPE_LRU_HASH ||
		    attr->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	htab->nr_cpus = bpfrt_map_nr_cpus();
	htab->key_round = BPFRT_ROUND_UP(attr->key_size, 8);
	htab->value_round = (uint32_t)g.value_round;
	htab->seed = (attr->map_flags & BPF_F_ZERO_SEED) ? 0 : random_seed();
	htab->n_buckets = round_up_pow2(attr->max_entries);
	htab->elem_size = g.elem_size;
	htab->n_elems = (uint32_t)g.n_elems;
	htab->shm_fd = -1;
	if (htab->percpu)
		htab->pcpu_stride = g.pcpu_stride;
	if (attr->bpfrt_flags & BPFRT_MAP_F_SHARED) {
		int err = shared_storage(htab);

		if (err) {
			free(htab);
			return err;
		}
	} else {
		htab->buckets = calloc(htab->n_buckets, sizeof(*htab->buckets));
		htab->elems = calloc(htab->n_elems, htab->elem_size);
		if (htab->percpu)
			htab->pcpu_values = calloc(htab->nr_cpus, htab->pcpu_stride);
	}
	if (!htab->buckets || !htab->elems || (htab->percpu && !htab->pcpu_values)) {
		htab_free(&htab->map);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < htab->n_buckets; b++)
		atomic_init(&htab->buckets[b].first, nulls_marker(b));
	/* Pushed in reverse so the first element handed out is index 0. */
	for (uint32_t i = htab->n_elems; i-- > 0;) {
		struct htab_elem *e = elem_at(htab, i);

		e->index = i;
		free_list_push_locked(htab, e);
	}
	*out = &htab->map;
	return 0;
}

#define HTAB_OPS								\
	.alloc_check = htab_alloc_check,					\
	.mem_size = htab_mem_size,						\
	.alloc = htab_alloc,							\
	.free = htab_free,							\
	.sys_lookup = htab_sys_lookup,						\
	.sys_update = htab_sys_update,						\
	.sys_delete = htab_sys_delete,						\
	.sys_lookup_and_delete = htab_sys_lookup_and_delete,			\
	.get_next_key = htab_get_next_key,					\
	.lookup = htab_lookup,							\
	.lookup_percpu = htab_lookup_percpu,					\
	.update = htab_update,							\
	.delete = htab_delete,							\
	.shm = htab_shm

const struct bpfrt_map_ops bpfrt_htab_map_ops = { HTAB_OPS };
const struct bpfrt_map_ops bpfrt_percpu_htab_map_ops = { HTAB_OPS };
const struct bpfrt_map_ops bpfrt_lru_htab_map_ops = { HTAB_OPS };
const struct bpfrt_map_ops bpfrt_lru_percpu_htab_map_ops = { HTAB_OPS };
