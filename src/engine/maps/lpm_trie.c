/* BPF_MAP_TYPE_LPM_TRIE: longest-prefix-match lookups over keys of
 * struct bpf_lpm_trie_key_u8 { __u32 prefixlen; __u8 data[]; } (data in
 * network order, most significant bit first), with Linux's creation rules
 * (BPF_F_NO_PREALLOC required; data 1..256 bytes) and error codes.
 *
 * Layout: a path-compressed binary trie. Each node holds a prefix (the
 * data as the user gave it, and its length); a node's children extend its
 * prefix, child[b] the ones whose next bit is b. Nodes are the stored
 * prefixes plus "intermediate" nodes exactly where two stored prefixes
 * part with no stored prefix there. That shape is the one canonical trie
 * of the stored set, the same Linux keeps, so get_next_key's order (post-
 * order: more specific prefixes before the ones containing them, left
 * before right) is Linux's.
 *
 * Concurrency, as Linux: one spinlock for writers; lookups and
 * get_next_key walk child pointers without it (acquire loads) inside RCU
 * read sections. A node is never changed once published except for the
 * intermediate flag a delete sets on a node with two children; a replaced
 * value gets a new node, and removed nodes are freed after a grace period.
 *
 * Memory: nodes are allocated as prefixes come (Linux: the map is never
 * preallocated); the map memory limit is charged at creation for the most
 * nodes max_entries can need (2 * max_entries - 1). Updates past
 * max_entries prefixes fail with -ENOSPC, as Linux. */
#include "maps/map.h"
#include "maps/spinlock.h"
#include "core/error.h"
#include "core/rcu.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define LPM_DATA_SIZE_MIN 1
#define LPM_DATA_SIZE_MAX 256
#define LPM_KEY_HDR 4           /* offsetof(struct bpf_lpm_trie_key_u8, data) */
#define LPM_CREATE_FLAGS (BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE | BPF_F_RDONLY | \
			  BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)

struct lpm_node {
	struct bpfrt_rcu_head rcu;
	_Atomic(struct lpm_node *) child[2];
	uint32_t prefixlen;
	_Atomic uint8_t im;     /* intermediate: no value, not a stored prefix */
	uint8_t data[];         /* data_size bytes, then the value at value_off */
};

struct lpm_trie {
	struct bpfrt_map map;
	struct bpfrt_spinlock lock;       /* writers */
	_Atomic(struct lpm_node *) root;
	uint32_t data_size, max_prefixlen;
	uint32_t value_off;               /* from data[]: 8-aligned address */
	size_t node_size;
	uint32_t n_entries;               /* stored prefixes, under lock */
};

static struct lpm_trie *to_trie(struct bpfrt_map *map)
{
	return (struct lpm_trie *)map;
}

static void *node_value(const struct lpm_trie *t, struct lpm_node *n)
{
	return n->data + t->value_off;
}

static uint32_t key_prefixlen(const void *key)
{
	uint32_t len;

	memcpy(&len, key, 4);
	return len;
}

static const uint8_t *key_data(const void *key)
{
	return (const uint8_t *)key + LPM_KEY_HDR;
}

static unsigned int bit_at(const uint8_t *data, uint32_t i)
{
	return (data[i / 8] >> (7 - i % 8)) & 1;
}

/* Leading bits node and key share, up to the shorter of their lengths. */
static uint32_t match_len(const struct lpm_node *n, const uint8_t *data, uint32_t prefixlen)
{
	uint32_t limit = n->prefixlen < prefixlen ? n->prefixlen : prefixlen, len = 0;

	for (uint32_t i = 0; len < limit; i++) {
		uint8_t diff = n->data[i] ^ data[i];

		if (diff) {
			len += (uint32_t)__builtin_clz((unsigned int)diff) - 24;
			break;
		}
		len += 8;
	}
	return len < limit ? len : limit;
}

static struct lpm_node *load(_Atomic(struct lpm_node *) *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

static void publish(_Atomic(struct lpm_node *) *p, struct lpm_node *n)
{
	atomic_store_explicit(p, n, memory_order_release);
}

static void node_free_rcu(struct bpfrt_rcu_head *head)
{
	free(head);  /* rcu is the first member */
}

static void node_retire(struct lpm_node *n)
{
	bpfrt_rcu_call_head(&n->rcu, node_free_rcu);
}

/* ---- lookup -------------------------------------------------------------------- */

/* The longest stored prefix of key's first prefixlen bits, or NULL. */
static struct lpm_node *trie_match(struct lpm_trie *t, const void *key)
{
	uint32_t plen = key_prefixlen(key);
	const uint8_t *data = key_data(key);
	struct lpm_node *found = NULL;

	for (struct lpm_node *n = load(&t->root); n;) {
		uint32_t m = match_len(n, data, plen);

		if (m < n->prefixlen)
			break;
		if (!atomic_load_explicit(&n->im, memory_order_relaxed))
			found = n;
		if (m == t->max_prefixlen)
			break;
		n = load(&n->child[bit_at(data, n->prefixlen)]);
	}
	return found;
}

static void *trie_lookup(struct bpfrt_map *map, const void *key)
{
	struct lpm_trie *t = to_trie(map);
	struct lpm_node *n = trie_match(t, key);

	return n ? node_value(t, n) : NULL;
}

static int trie_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	void *v = trie_lookup(map, key);

	if (!v)
		return -ENOENT;
	bpfrt_map_copy_out(value, v, map->value_size);
	return 0;
}

/* ---- update ---------------------------------------------------------------------- */

static struct lpm_node *node_new(struct lpm_trie *t, uint32_t prefixlen, const uint8_t *data,
				 const void *value)
{
	struct lpm_node *n = calloc(1, t->node_size);

	if (!n)
		return NULL;
	n->prefixlen = prefixlen;
	memcpy(n->data, data, t->data_size);
	if (value)
		bpfrt_map_copy_in(node_value(t, n), value, t->map.value_size);
	else
		n->im = 1;
	return n;
}

/* A new stored prefix: -ENOENT for BPF_EXIST, -ENOSPC when full. */
static long take_entry(struct lpm_trie *t, uint64_t flags)
{
	if (flags == BPF_EXIST)
		return -ENOENT;
	if (t->n_entries == t->map.max_entries)
		return -ENOSPC;
	t->n_entries++;
	return 0;
}

static long update_locked(struct lpm_trie *t, struct lpm_node *nn, uint64_t flags)
{
	_Atomic(struct lpm_node *) *slot = &t->root;
	uint32_t plen = nn->prefixlen, m = 0;
	struct lpm_node *n, *im;
	long err;

	while ((n = load(slot))) {
		m = match_len(n, nn->data, plen);
		if (n->prefixlen != m || n->prefixlen == plen || n->prefixlen == t->max_prefixlen)
			break;
		slot = &n->child[bit_at(nn->data, n->prefixlen)];
	}
	if (!n) {
		if ((err = take_entry(t, flags)))
			return err;
		publish(slot, nn);
		return 0;
	}
	if (n->prefixlen == m) {  /* the same prefix: replace the node */
		if (!n->im && flags == BPF_NOEXIST)
			return -EEXIST;
		if (n->im && (err = take_entry(t, flags)))
			return err;
		atomic_init(&nn->child[0], load(&n->child[0]));
		atomic_init(&nn->child[1], load(&n->child[1]));
		publish(slot, nn);
		node_retire(n);
		return 0;
	}
	if ((err = take_entry(t, flags)))
		return err;
	if (m == plen) {          /* the new prefix contains n's */
		atomic_init(&nn->child[bit_at(n->data, m)], n);
		publish(slot, nn);
		return 0;
	}
	/* they part after m bits: an intermediate node there */
	im = node_new(t, m, n->data, NULL);
	if (!im) {
		t->n_entries--;
		return -ENOMEM;
	}
	atomic_init(&im->child[bit_at(n->data, m)], n);
	atomic_init(&im->child[bit_at(nn->data, m)], nn);
	publish(slot, im);
	return 0;
}

static long trie_update(struct bpfrt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	struct lpm_trie *t = to_trie(map);
	struct lpm_node *nn;
	long err;

	if (flags > BPF_EXIST || key_prefixlen(key) > t->max_prefixlen)
		return -EINVAL;
	nn = node_new(t, key_prefixlen(key), key_data(key), value);
	if (!nn)
		return -ENOMEM;
	bpfrt_spin_lock(&t->lock);
	err = update_locked(t, nn, flags);
	bpfrt_spin_unlock(&t->lock);
	if (err)
		free(nn);  /* never published */
	else
		bpfrt_rcu_start_gp();
	return err;
}

/* ---- delete ------------------------------------------------------------------------ */

static long delete_locked(struct lpm_trie *t, const void *key)
{
	_Atomic(struct lpm_node *) *slot = &t->root, *parent_slot = NULL;
	uint32_t plen = key_prefixlen(key), m = 0;
	const uint8_t *data = key_data(key);
	struct lpm_node *n, *parent = NULL, *c0, *c1;

	while ((n = load(slot))) {
		m = match_len(n, data, plen);
		if (n->prefixlen != m || n->prefixlen == plen)
			break;
		parent = n;
		parent_slot = slot;
		slot = &n->child[bit_at(data, n->prefixlen)];
	}
	if (!n || n->prefixlen != plen || m != plen || n->im)
		return -ENOENT;
	t->n_entries--;
	c0 = load(&n->child[0]);
	c1 = load(&n->child[1]);
	if (c0 && c1) {
		/* still where two prefixes part: it stays, without a value */
		atomic_store_explicit(&n->im, 1, memory_order_relaxed);
		return 0;
	}
	if (!c0 && !c1 && parent && parent->im) {
		/* the intermediate parent no longer parts anything */
		publish(parent_slot, load(&parent->child[load(&parent->child[0]) == n]));
		node_retire(parent);
		node_retire(n);
		return 0;
	}
	publish(slot, c0 ? c0 : c1);
	node_retire(n);
	return 0;
}

static long trie_delete(struct bpfrt_map *map, const void *key)
{
	struct lpm_trie *t = to_trie(map);
	long err;

	if (key_prefixlen(key) > t->max_prefixlen)
		return -EINVAL;
	bpfrt_spin_lock(&t->lock);
	err = delete_locked(t, key);
	bpfrt_spin_unlock(&t->lock);
	if (!err)
		bpfrt_rcu_start_gp();
	return err;
}

static int trie_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			   uint64_t flags)
{
	return (int)trie_update(map, key, value, flags);
}

static int trie_sys_delete(struct bpfrt_map *map, const void *key)
{
	return (int)trie_delete(map, key);
}

/* ---- get_next_key: post-order ------------------------------------------------------ */

/* The first stored node in post-order below root: down the leftmost path,
 * the last stored node on it. Intermediate nodes have two children, so
 * the path ends in a stored node. */
static struct lpm_node *leftmost(struct lpm_node *root)
{
	struct lpm_node *found = NULL;

	for (struct lpm_node *n = root; n;) {
		struct lpm_node *c0 = load(&n->child[0]);

		if (!atomic_load_explicit(&n->im, memory_order_relaxed))
			found = n;
		n = c0 ? c0 : load(&n->child[1]);
	}
	return found;
}

static void copy_key(const struct lpm_trie *t, const struct lpm_node *n, void *next_key)
{
	memcpy(next_key, &n->prefixlen, 4);
	memcpy((uint8_t *)next_key + LPM_KEY_HDR, n->data, t->data_size);
}

static int trie_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	struct lpm_trie *t = to_trie(map);
	struct lpm_node *root = load(&t->root), *n, *next = NULL, **stack;
	uint32_t plen, m = 0;
	int sp = -1;

	if (!root)
		return -ENOENT;
	if (!key || key_prefixlen(key) > t->max_prefixlen)
		goto first;
	stack = malloc((t->max_prefixlen + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	plen = key_prefixlen(key);
	for (n = root; n;) {
		stack[++sp] = n;
		m = match_len(n, key_data(key), plen);
		if (n->prefixlen != m || n->prefixlen == plen)
			break;
		n = load(&n->child[bit_at(key_data(key), n->prefixlen)]);
	}
	if (!n || n->prefixlen != m || atomic_load_explicit(&n->im, memory_order_relaxed)) {
		free(stack);
		goto first;  /* not stored: start over, as Linux */
	}
	/* the post-order successor: the right sibling's subtree, else the
	 * first stored ancestor */
	for (n = stack[sp]; sp > 0; sp--) {
		struct lpm_node *parent = stack[sp - 1], *right = load(&parent->child[1]);

		if (load(&parent->child[0]) == n && right) {
			next = leftmost(right);
			break;
		}
		if (!atomic_load_explicit(&parent->im, memory_order_relaxed)) {
			next = parent;
			break;
		}
		n = parent;
	}
	free(stack);
	if (!next)
		return -ENOENT;
	copy_key(t, next, next_key);
	return 0;
first:
	next = leftmost(root);
	if (!next)
		return -ENOENT;
	copy_key(t, next, next_key);
	return 0;
}

/* ---- creation ----------------------------------------------------------------------- */

static uint32_t value_offset(uint32_t data_size)
{
	return (uint32_t)(BPFRT_ROUND_UP(offsetof(struct lpm_node, data) + data_size, 8) -
			  offsetof(struct lpm_node, data));
}

static size_t node_size_of(const struct bpfrt_map *attr)
{
	uint32_t data_size = attr->key_size - LPM_KEY_HDR;

	return offsetof(struct lpm_node, data) + value_offset(data_size) +
	       BPFRT_ROUND_UP(attr->value_size, 8);
}

static int trie_alloc_check(const struct bpfrt_map *attr)
{
	if (attr->max_entries == 0 || !(attr->map_flags & BPF_F_NO_PREALLOC) ||
	    (attr->map_flags & ~LPM_CREATE_FLAGS))
		return bpfrt_err(-EINVAL, "LPM trie '%s': max_entries must be non-zero and "
				 "map_flags include BPF_F_NO_PREALLOC, nothing outside "
				 "NO_PREALLOC|NUMA_NODE|access flags (got %u, 0x%x)", attr->name,
				 attr->max_entries, attr->map_flags);
	if (attr->key_size < LPM_KEY_HDR + LPM_DATA_SIZE_MIN ||
	    attr->key_size > LPM_KEY_HDR + LPM_DATA_SIZE_MAX)
		return bpfrt_err(-EINVAL, "LPM trie '%s': key_size %u: must be 4 (prefixlen) + "
				 "%d..%d data bytes", attr->name, attr->key_size,
				 LPM_DATA_SIZE_MIN, LPM_DATA_SIZE_MAX);
	/* Linux's LPM_VAL_SIZE_MAX: KMALLOC_MAX_SIZE - data max - its node */
	if (attr->value_size < 1 ||
	    attr->value_size > BPFRT_MAP_VALUE_SIZE_MAX - LPM_DATA_SIZE_MAX - 48)
		return bpfrt_err(-EINVAL, "LPM trie '%s': value_size %u out of range",
				 attr->name, attr->value_size);
	return 0;
}

static int trie_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct lpm_trie) + 2ull * attr->max_entries * node_size_of(attr);
	return 0;
}

static int trie_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct lpm_trie *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->map = *attr;
	t->data_size = attr->key_size - LPM_KEY_HDR;
	t->max_prefixlen = t->data_size * 8;
	t->value_off = value_offset(t->data_size);
	t->node_size = node_size_of(attr);
	*out = &t->map;
	return 0;
}

static void free_subtree(struct lpm_node *n)
{
	while (n) {
		struct lpm_node *c1 = load(&n->child[1]);

		free_subtree(load(&n->child[0]));  /* depth <= max_prefixlen + 1 */
		free(n);
		n = c1;
	}
}

static void trie_free(struct bpfrt_map *map)
{
	struct lpm_trie *t = to_trie(map);

	free_subtree(load(&t->root));
	free(t);
}

const struct bpfrt_map_ops bpfrt_lpm_trie_map_ops = {
	.alloc_check = trie_alloc_check,
	.mem_size = trie_mem_size,
	.alloc = trie_alloc,
	.free = trie_free,
	.sys_lookup = trie_sys_lookup,
	.sys_update = trie_sys_update,
	.sys_delete = trie_sys_delete,
	.get_next_key = trie_get_next_key,
	.lookup = trie_lookup,
	.update = trie_update,
	.delete = trie_delete,
};
