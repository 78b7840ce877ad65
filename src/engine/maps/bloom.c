/* BPF_MAP_TYPE_BLOOM_FILTER: a keyless set of values that answers
 * "maybe present" or "certainly absent", with Linux's sizing, flags and
 * error codes.
 *
 * map_extra (its low 4 bits) is the number of hash functions k, 0 meaning
 * 5 as in Linux. The bit array has max_entries * k * 7/5 bits (about
 * n*k/ln 2, the size that minimises false positives for n values) rounded
 * up to a power of two and at least 64; past 2^31 bits it is 2^32 bits.
 * The k bit positions of a value come from one 128-bit hash of it (seeded
 * at random unless BPF_F_ZERO_SEED) by double hashing, h1 + i*h2: the
 * same false-positive rate as k independent hashes for these sizes.
 *
 * push (update_elem with a NULL key) sets the bits with atomic ORs, peek
 * (lookup_elem with a NULL key and the value to test) reads them: no
 * lock, as Linux (set_bit/test_bit). push takes only BPF_ANY (-EINVAL).
 * peek is 0 (maybe present) or -ENOENT (absent). pop, delete_elem and
 * get_next_key are -EOPNOTSUPP. */
#define _GNU_SOURCE
#include "maps/map.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define BLOOM_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_ZERO_SEED | BPF_F_RDONLY | \
			    BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)
#define BLOOM_DEFAULT_HASHES 5

struct bloom {
	struct bpfrt_map map;
	uint64_t seed;
	uint32_t nr_hashes;
	uint64_t bit_mask;     /* bits - 1 (bits a power of two, up to 2^32) */
	uint64_t *bits;
};

static struct bloom *to_bloom(struct bpfrt_map *map)
{
	return (struct bloom *)map;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t p = (__uint128_t)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* Two independent 64-bit hashes of the value (h2 odd, so h1 + i*h2
 * visits distinct positions for i < bits). */
static void bloom_hash(const struct bloom *b, const void *value, uint64_t *h1, uint64_t *h2)
{
	const uint8_t *p = value;
	uint32_t len = b->map.value_size;
	uint64_t x = b->seed ^ (len * 0x9e3779b97f4a7c15ull), y = ~b->seed, w;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		x = mix(x ^ w, 0xbf58476d1ce4e5b9ull);
		y = mix(y + w, 0x94d049bb133111ebull);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		x = mix(x ^ w, 0xbf58476d1ce4e5b9ull);
		y = mix(y + w, 0x94d049bb133111ebull);
	}
	*h1 = mix(x ^ (x >> 31), 0x9e3779b97f4a7c15ull);
	*h2 = mix(y ^ (y >> 29), 0xd6e8feb86659fd93ull) | 1;
}

static long bloom_push(struct bpfrt_map *map, const void *value, uint64_t flags)
{
	struct bloom *b = to_bloom(map);
	uint64_t h1, h2;

	if (flags != BPF_ANY)
		return -EINVAL;
	bloom_hash(b, value, &h1, &h2);
	for (uint32_t i = 0; i < b->nr_hashes; i++) {
		uint64_t bit = (h1 + i * h2) & b->bit_mask;

		__atomic_fetch_or(&b->bits[bit / 64], 1ull << (bit % 64), __ATOMIC_RELAXED);
	}
	return 0;
}

static long bloom_peek(struct bpfrt_map *map, void *value)
{
	struct bloom *b = to_bloom(map);
	uint64_t h1, h2;

	bloom_hash(b, value, &h1, &h2);
	for (uint32_t i = 0; i < b->nr_hashes; i++) {
		uint64_t bit = (h1 + i * h2) & b->bit_mask;

		if (!(__atomic_load_n(&b->bits[bit / 64], __ATOMIC_RELAXED) & (1ull << (bit % 64))))
			return -ENOENT;
	}
	return 0;
}

static long bloom_pop(struct bpfrt_map *map, void *value)
{
	return -EOPNOTSUPP;
}

/* ---- user space ------------------------------------------------------------------ */

/* Linux copies the caller's value in and peeks with it. */
static int bloom_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return (int)bloom_peek(map, value);
}

static int bloom_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			    uint64_t flags)
{
	return (int)bloom_push(map, value, flags);
}

static int bloom_sys_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

static int bloom_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	return -EOPNOTSUPP;
}

/* ---- programs: the keyed element helpers (refused by the verifier) ---------- */

static void *bloom_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long bloom_update(struct bpfrt_map *map, const void *key, const void *value,
			 uint64_t flags)
{
	return -EINVAL;
}

static long bloom_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

/* ---- creation --------------------------------------------------------------------- */

static int bloom_alloc_check(const struct bpfrt_map *attr)
{
	/* Linux checks the size first (alloc_check), then the rest (alloc) */
	if (attr->value_size > BPFRT_MAP_VALUE_SIZE_MAX)
		return bpfrt_err(-E2BIG, "bloom filter '%s': value_size %u too large",
				 attr->name, attr->value_size);
	if (attr->key_size != 0 || attr->value_size == 0 || attr->max_entries == 0)
		return bpfrt_err(-EINVAL, "bloom filter '%s': key_size must be 0, value_size "
				 "and max_entries non-zero (got %u, %u, %u)", attr->name,
				 attr->key_size, attr->value_size, attr->max_entries);
	if (attr->map_flags & ~BLOOM_CREATE_FLAGS)
		return bpfrt_err(-EINVAL, "bloom filter '%s': invalid map_flags 0x%x",
				 attr->name, attr->map_flags);
	if (attr->map_extra & ~0xfull)
		return bpfrt_err(-EINVAL, "bloom filter '%s': map_extra 0x%llx: only its low 4 "
				 "bits (the number of hash functions) may be set", attr->name,
				 (unsigned long long)attr->map_extra);
	return 0;
}

static uint32_t nr_hashes_of(const struct bpfrt_map *attr)
{
	return attr->map_extra ? (uint32_t)attr->map_extra : BLOOM_DEFAULT_HASHES;
}

static uint64_t bit_count(const struct bpfrt_map *attr)
{
	uint64_t bits = (uint64_t)attr->max_entries * nr_hashes_of(attr);
	uint64_t p = 64;

	/* Linux's u32 arithmetic: an overflow, or past 2^31, is 2^32 bits */
	if (bits > UINT32_MAX || (bits / 5) * 7 > UINT32_MAX)
		return 1ull << 32;
	bits = (bits / 5) * 7;
	if (bits > (1ull << 31))
		return 1ull << 32;
	while (p < bits)
		p <<= 1;
	return p;
}

static int bloom_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct bloom) + bit_count(attr) / 8;
	return 0;
}

static int bloom_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct bloom *b = calloc(1, sizeof(*b));
	uint64_t bits = bit_count(attr);

	if (!b)
		return -ENOMEM;
	b->map = *attr;
	b->nr_hashes = nr_hashes_of(attr);
	b->bit_mask = bits - 1;
	b->bits = calloc(bits / 64, sizeof(uint64_t));
	if (!b->bits) {
		free(b);
		return -ENOMEM;
	}
	if (!(attr->map_flags & BPF_F_ZERO_SEED) &&
	    getrandom(&b->seed, sizeof(b->seed), GRND_NONBLOCK) != sizeof(b->seed))
		b->seed = (uint64_t)(uintptr_t)b * 0x9e3779b97f4a7c15ull;
	*out = &b->map;
	return 0;
}

static void bloom_free(struct bpfrt_map *map)
{
	struct bloom *b = to_bloom(map);

	free(b->bits);
	free(b);
}

const struct bpfrt_map_ops bpfrt_bloom_map_ops = {
	.alloc_check = bloom_alloc_check,
	.mem_size = bloom_mem_size,
	.alloc = bloom_alloc,
	.free = bloom_free,
	.sys_lookup = bloom_sys_lookup,
	.sys_update = bloom_sys_update,
	.sys_delete = bloom_sys_delete,
	.get_next_key = bloom_get_next_key,
	.lookup = bloom_lookup,
	.update = bloom_update,
	.delete = bloom_delete,
	.push = bloom_push,
	.pop = bloom_pop,
	.peek = bloom_peek,
};
