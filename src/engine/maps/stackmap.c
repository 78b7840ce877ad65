/* BPF_MAP_TYPE_STACK_TRACE: stack id (u32 key) -> up to value_size / 8
 * instruction pointers, with Linux's semantics and error codes.
 *
 * Layout, as Linux's: a power-of-two table of bucket pointers (at least
 * max_entries) and max_entries preallocated buckets, each a trace of at
 * most value_size / 8 addresses with its hash and length. A trace's id is
 * its hash masked to the table; bpf_get_stackid (helpers/stack.c) stores
 * a trace by swapping a bucket from the free list into its slot, and the
 * bucket that was there goes back to the free list. Buckets are never
 * given back to malloc while the map lives, so a reader comparing a
 * bucket that is being replaced sees stale bytes at worst (Linux's race:
 * a wrong id for one call), never freed memory.
 *
 *   user lookup (id):   the trace, zero-padded to value_size; -ENOENT if
 *                       the slot is empty or id is past the table
 *   user delete (id):   0, -ENOENT if empty, -E2BIG past the table
 *   get_next_key:       the next occupied slot after key (the first if
 *                       key is NULL or not occupied), -ENOENT at the end
 *   user update:        -EINVAL (only programs store traces)
 *   program lookup/update/delete: refused by the verifier (map_compat.c);
 *                       -EOPNOTSUPP / NULL should a trusted program try
 *
 * The free list is a lock-free stack of bucket indexes whose head carries
 * a generation count (no ABA: a head that was popped and pushed back in
 * between fails the compare-and-swap). Programs may run in signal
 * handlers (int3 kprobes), where a lock held by the interrupted code of
 * the same thread would never be released. */
#include "maps/map.h"
#include "maps/stackmap.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STACK_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			    BPF_F_STACK_BUILD_ID)

struct stack_bucket {
	uint32_t index;                  /* in elems */
	uint32_t next_free;              /* free list: next index + 1, atomic */
	uint32_t hash;
	uint32_t pad;
	uint32_t nr;                     /* addresses in ips */
	uint64_t ips[];
};

struct stack_map {
	struct bpfrt_map map;
	/* free list head: index + 1 of the top bucket (0: empty) in the
	 * low 32 bits, a generation count in the high 32 */
	uint64_t free_head;
	uint32_t n_buckets;              /* power of two >= max_entries */
	size_t bucket_size;
	char *elems;                     /* max_entries buckets */
	struct stack_bucket **buckets;   /* n_buckets slots, atomic accesses */
};

static struct stack_map *to_smap(struct bpfrt_map *map)
{
	return (struct stack_map *)map;
}

static struct stack_bucket *bucket_at(struct stack_map *s, uint32_t index)
{
	return (struct stack_bucket *)(s->elems + (size_t)index * s->bucket_size);
}

static struct stack_bucket *bucket_pop(struct stack_map *s)
{
	uint64_t head = __atomic_load_n(&s->free_head, __ATOMIC_ACQUIRE), next;
	struct stack_bucket *b;

	do {
		if (!(uint32_t)head)
			return NULL;
		b = bucket_at(s, (uint32_t)head - 1);
		next = ((head >> 32) + 1) << 32 |
		       __atomic_load_n(&b->next_free, __ATOMIC_RELAXED);
	} while (!__atomic_compare_exchange_n(&s->free_head, &head, next, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	return b;
}

static void bucket_push(struct stack_map *s, struct stack_bucket *b)
{
	uint64_t head = __atomic_load_n(&s->free_head, __ATOMIC_RELAXED), next;

	do {
		__atomic_store_n(&b->next_free, (uint32_t)head, __ATOMIC_RELAXED);
		next = ((head >> 32) + 1) << 32 | (b->index + 1);
	} while (!__atomic_compare_exchange_n(&s->free_head, &head, next, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

static struct stack_bucket *slot_xchg(struct stack_map *s, uint32_t id, struct stack_bucket *b)
{
	return __atomic_exchange_n(&s->buckets[id], b, __ATOMIC_ACQ_REL);
}

/* Linux's jhash2 (Bob Jenkins' lookup3 hashword, public domain) over
 * the trace's 32-bit words, initial value 0: the same ids Linux would give the
 * same addresses. */
#define ROL32(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static uint32_t jhash2(const uint32_t *k, uint32_t length, uint32_t initval)
{
	uint32_t a, b, c;

	a = b = c = 0xdeadbeef + (length << 2) + initval;
	while (length > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		a -= c; a ^= ROL32(c, 4);  c += b;
		b -= a; b ^= ROL32(a, 6);  a += c;
		c -= b; c ^= ROL32(b, 8);  b += a;
		a -= c; a ^= ROL32(c, 16); c += b;
		b -= a; b ^= ROL32(a, 19); a += c;
		c -= b; c ^= ROL32(b, 4);  b += a;
		length -= 3;
		k += 3;
	}
	switch (length) {
	case 3: c += k[2]; /* fall through */
	case 2: b += k[1]; /* fall through */
	case 1:
		a += k[0];
		c ^= b; c -= ROL32(b, 14);
		a ^= c; a -= ROL32(c, 11);
		b ^= a; b -= ROL32(a, 25);
		c ^= b; c -= ROL32(b, 16);
		a ^= c; a -= ROL32(c, 4);
		b ^= a; b -= ROL32(a, 14);
		c ^= b; c -= ROL32(b, 24);
		break;
	case 0:
		break;
	}
	return c;
}

/* The bucket's trace equals ips[0, nr): read with relaxed atomics, as a
 * concurrent store may be refilling a bucket that just left the table. */
static bool bucket_equals(const struct stack_bucket *b, const uint64_t *ips, uint32_t nr)
{
	if (__atomic_load_n(&b->nr, __ATOMIC_RELAXED) != nr)
		return false;
	for (uint32_t i = 0; i < nr; i++)
		if (__atomic_load_n(&b->ips[i], __ATOMIC_RELAXED) != ips[i])
			return false;
	return true;
}

long bpfrt_stackmap_store(struct bpfrt_map *map, const uint64_t *ips, uint32_t nr,
			  uint64_t flags)
{
	struct stack_map *s = to_smap(map);
	struct stack_bucket *b, *nb, *old;
	uint32_t hash, id;
	bool hash_matches;

	if (nr > map->value_size / 8)
		nr = map->value_size / 8;
	hash = jhash2((const uint32_t *)ips, nr * 2, 0);
	id = hash & (s->n_buckets - 1);
	b = __atomic_load_n(&s->buckets[id], __ATOMIC_ACQUIRE);
	hash_matches = b && __atomic_load_n(&b->hash, __ATOMIC_RELAXED) == hash;
	if (hash_matches && (flags & BPF_F_FAST_STACK_CMP))
		return id;
	if (hash_matches && bucket_equals(b, ips, nr))
		return id;
	if (b && !(flags & BPF_F_REUSE_STACKID))
		return -EEXIST;
	nb = bucket_pop(s);
	if (!nb)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++)
		__atomic_store_n(&nb->ips[i], ips[i], __ATOMIC_RELAXED);
	__atomic_store_n(&nb->hash, hash, __ATOMIC_RELAXED);
	__atomic_store_n(&nb->nr, nr, __ATOMIC_RELAXED);
	old = slot_xchg(s, id, nb);
	if (old)
		bucket_push(s, old);
	return id;
}

/* ---- user space (bpf(2) semantics) ---------------------------------------- */

/* Linux's bpf_stackmap_copy: the bucket leaves its slot while it is
 * copied, so no store refills it meanwhile; one stored in between loses
 * its place to it (both have this id). */
static int smap_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	struct stack_map *s = to_smap(map);
	struct stack_bucket *b, *old;
	uint32_t id, len;

	memcpy(&id, key, sizeof(id));
	if (id >= s->n_buckets)
		return -ENOENT;
	b = slot_xchg(s, id, NULL);
	if (!b)
		return -ENOENT;
	len = b->nr * 8;
	memcpy(value, b->ips, len);
	memset((char *)value + len, 0, map->value_size - len);
	old = slot_xchg(s, id, b);
	if (old)
		bucket_push(s, old);
	return 0;
}

static int smap_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			   uint64_t flags)
{
	return -EINVAL;
}

static int smap_sys_delete(struct bpfrt_map *map, const void *key)
{
	struct stack_map *s = to_smap(map);
	struct stack_bucket *old;
	uint32_t id;

	memcpy(&id, key, sizeof(id));
	if (id >= s->n_buckets)
		return -E2BIG;
	old = slot_xchg(s, id, NULL);
	if (!old)
		return -ENOENT;
	bucket_push(s, old);
	return 0;
}

static int smap_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	struct stack_map *s = to_smap(map);
	uint32_t id = 0;

	if (key) {
		memcpy(&id, key, sizeof(id));
		if (id >= s->n_buckets || !__atomic_load_n(&s->buckets[id], __ATOMIC_ACQUIRE))
			id = 0;
		else
			id++;
	}
	while (id < s->n_buckets && !__atomic_load_n(&s->buckets[id], __ATOMIC_ACQUIRE))
		id++;
	if (id >= s->n_buckets)
		return -ENOENT;
	memcpy(next_key, &id, sizeof(id));
	return 0;
}

/* ---- programs: the element helpers the verifier refuses ---------------------- */

static void *smap_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long smap_update(struct bpfrt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	return -EINVAL;
}

static long smap_delete(struct bpfrt_map *map, const void *key)
{
	return smap_sys_delete(map, key);
}

/* ---- creation ------------------------------------------------------------------ */

static int smap_alloc_check(const struct bpfrt_map *attr)
{
	if (attr->map_flags & ~STACK_CREATE_FLAGS)
		return bpfrt_err(-EINVAL, "stack trace map '%s': invalid map_flags 0x%x (only "
				 "BPF_F_NUMA_NODE, BPF_F_RDONLY, BPF_F_WRONLY)", attr->name,
				 attr->map_flags);
	if (attr->map_flags & BPF_F_STACK_BUILD_ID)
		return bpfrt_err(-EOPNOTSUPP, "stack trace map '%s': BPF_F_STACK_BUILD_ID is not "
				 "supported (bpfrt stores addresses; symbolize them in the "
				 "process, which has its own modules loaded)", attr->name);
	if (attr->max_entries == 0 || attr->key_size != 4 || attr->value_size < 8 ||
	    attr->value_size % 8)
		return bpfrt_err(-EINVAL, "stack trace map '%s': key_size must be 4, value_size a "
				 "non-zero multiple of 8, max_entries non-zero (got %u, %u, %u)",
				 attr->name, attr->key_size, attr->value_size, attr->max_entries);
	if (attr->value_size / 8 > BPFRT_STACK_MAX_DEPTH)
		return bpfrt_err(-EINVAL, "stack trace map '%s': value_size %u holds more than "
				 "%u frames (Linux's perf_event_max_stack)", attr->name,
				 attr->value_size, BPFRT_STACK_MAX_DEPTH);
	if (attr->max_entries > 1u << 31)
		return bpfrt_err(-E2BIG, "stack trace map '%s': max_entries %u too large",
				 attr->name, attr->max_entries);
	return 0;
}

static uint32_t table_size(uint32_t max_entries)
{
	uint32_t n = 1;

	while (n < max_entries)
		n <<= 1;
	return n;
}

static size_t bucket_bytes(uint32_t value_size)
{
	return BPFRT_ROUND_UP(sizeof(struct stack_bucket) + value_size, 8);
}

static int smap_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct stack_map) +
		 (uint64_t)table_size(attr->max_entries) * sizeof(struct stack_bucket *) +
		 (uint64_t)attr->max_entries * bucket_bytes(attr->value_size);
	return 0;
}

static int smap_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct stack_map *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->map = *attr;
	s->n_buckets = table_size(attr->max_entries);
	s->bucket_size = bucket_bytes(attr->value_size);
	s->buckets = calloc(s->n_buckets, sizeof(*s->buckets));
	s->elems = calloc(attr->max_entries, s->bucket_size);
	if (!s->buckets || !s->elems) {
		free(s->buckets);
		free(s->elems);
		free(s);
		return -ENOMEM;
	}
	for (uint32_t i = attr->max_entries; i-- > 0;) {
		bucket_at(s, i)->index = i;
		bucket_push(s, bucket_at(s, i));
	}
	*out = &s->map;
	return 0;
}

static void smap_free(struct bpfrt_map *map)
{
	struct stack_map *s = to_smap(map);

	free(s->buckets);
	free(s->elems);
	free(s);
}

const struct bpfrt_map_ops bpfrt_stack_trace_map_ops = {
	.alloc_check = smap_alloc_check,
	.mem_size = smap_mem_size,
	.alloc = smap_alloc,
	.free = smap_free,
	.sys_lookup = smap_sys_lookup,
	.sys_update = smap_sys_update,
	.sys_delete = smap_sys_delete,
	.get_next_key = smap_get_next_key,
	.lookup = smap_lookup,
	.update = smap_update,
	.delete = smap_delete,
};
