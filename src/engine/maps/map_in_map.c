/* BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS: maps whose
 * values are other maps, with Linux's rules.
 *
 * Every outer map is created from an inner map template (Linux's
 * inner_map_fd; bpfrt_map_create_opts.inner_map): the verifier types what
 * a program's lookup returns by the template's shape (the "meta": type,
 * key and value sizes, flags, and max_entries unless the template has
 * BPF_F_INNER_MAP), and a slot takes only maps of that shape (-EINVAL).
 * A map-in-map cannot be an inner map, nor can a prog array.
 *
 * bpfrt has no file descriptors: slots are filled with map objects
 * (bpfrt_map_update_inner, and the loader's `.values = { [i] = &m }`).
 * A slot holds a reference: the inner map outlives bpfrt_map_free (or its
 * object) while a slot has it, and a map that leaves its last slot is
 * freed after a grace period, since a program may still be using the
 * pointer its lookup returned. Programs may only look up (the verifier
 * refuses the other helpers, as Linux): the lookup returns the inner map
 * itself, which the program passes to the map helpers.
 *
 * Writers (user space only) are serialised by one mutex per outer map;
 * program lookups read the slot with an acquire load (arrays) or through
 * the hash table's lock-free lookup (a HASH with 8-byte values holding
 * the pointer). */
#include "maps/map.h"
#include "core/error.h"
#include "core/rcu.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct map_of_maps {
	struct bpfrt_map map;
	struct bpfrt_map meta;          /* the template's shape, for the verifier */
	pthread_mutex_t write_lock;
	_Atomic(struct bpfrt_map *) *slots; /* ARRAY_OF_MAPS: max_entries slots */
	struct bpfrt_map *table;        /* HASH_OF_MAPS: key -> (struct bpfrt_map *) */
};

static struct map_of_maps *to_mom(struct bpfrt_map *map)
{
	return (struct map_of_maps *)map;
}

bool bpfrt_map_is_map_in_map(const struct bpfrt_map *map)
{
	return map->type == BPF_MAP_TYPE_ARRAY_OF_MAPS || map->type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

struct bpfrt_map *bpfrt_map_inner_meta(struct bpfrt_map *outer)
{
	return bpfrt_map_is_map_in_map(outer) ? &to_mom(outer)->meta : NULL;
}

/* Linux's bpf_map_meta_equal. */
static bool meta_equal(const struct bpfrt_map *meta, const struct bpfrt_map *m)
{
	return meta->type == m->type && meta->key_size == m->key_size &&
	       meta->value_size == m->value_size && meta->map_flags == m->map_flags &&
	       meta->spin_lock_off == m->spin_lock_off && /* the verifier's view of the lock */
	       ((meta->map_flags & BPF_F_INNER_MAP) || meta->max_entries == m->max_entries);
}

/* ---- slots -------------------------------------------------------------------- */

static uint32_t array_index(const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, 4);
	return idx;
}

/* The inner map under key, or NULL; in a read section. */
static struct bpfrt_map *slot_get(struct map_of_maps *m, const void *key)
{
	if (m->slots) {
		uint32_t idx = array_index(key);

		return idx < m->map.max_entries ?
		       atomic_load_explicit(&m->slots[idx], memory_order_acquire) : NULL;
	}
	{
		struct bpfrt_map **p = bpfrt_map_prog_lookup(m->table, key);

		return p ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : NULL;
	}
}

static void *mom_lookup(struct bpfrt_map *map, const void *key)
{
	return slot_get(to_mom(map), key);
}

/* Under write_lock: puts inner (NULL: empties) under key; *old gets what
 * was there. */
static int slot_set_locked(struct map_of_maps *m, const void *key, struct bpfrt_map *inner,
			   uint64_t flags, struct bpfrt_map **old)
{
	int err;

	*old = NULL;
	if (m->slots) {
		uint32_t idx = array_index(key);

		if (idx >= m->map.max_entries)
			return -E2BIG;
		*old = atomic_exchange_explicit(&m->slots[idx], inner, memory_order_acq_rel);
		return inner || *old ? 0 : -ENOENT;
	}
	bpfrt_rcu_read_lock();
	*old = slot_get(m, key);
	bpfrt_rcu_read_unlock();
	if (!inner) {
		err = bpfrt_map_prog_delete(m->table, key) ? -ENOENT : 0;
		if (err)
			*old = NULL;
		return err;
	}
	err = (int)bpfrt_map_prog_update(m->table, key, &inner, flags);
	if (err)
		*old = NULL;
	return err;
}

/* A reference a slot dropped: the map may still be in use by a program
 * that looked it up, so the last one frees it after a grace period. */
static void slot_release(struct bpfrt_map *inner)
{
	if (inner)
		bpfrt_map_put_deferred(inner);
}

int bpfrt_map_update_inner(struct bpfrt_map *outer, const void *key, struct bpfrt_map *inner,
			   uint64_t flags)
{
	struct map_of_maps *m;
	struct bpfrt_map *old;
	int err;

	if (!outer || !key || !inner)
		return bpfrt_err(-EINVAL, "map update_inner: NULL argument");
	if (!bpfrt_map_is_map_in_map(outer))
		return bpfrt_err(-EINVAL, "map '%s': update_inner: not a map-in-map (type %d)",
				 outer->name, (int)outer->type);
	m = to_mom(outer);
	/* Linux: fd arrays take BPF_ANY only; the hash kind every flag */
	if (m->slots ? flags != BPF_ANY : flags > BPF_EXIST)
		return bpfrt_err(-EINVAL, "map '%s': update_inner: invalid flags 0x%llx",
				 outer->name, (unsigned long long)flags);
	if (!meta_equal(&m->meta, inner))
		return bpfrt_err(-EINVAL, "map '%s': update_inner: map '%s' (type %d, key %u, "
				 "value %u, max_entries %u, flags 0x%x) does not match the inner "
				 "map template (type %d, key %u, value %u, max_entries %u%s, "
				 "flags 0x%x)", outer->name, inner->name, (int)inner->type,
				 inner->key_size, inner->value_size, inner->max_entries,
				 inner->map_flags, (int)m->meta.type, m->meta.key_size,
				 m->meta.value_size, m->meta.max_entries,
				 (m->meta.map_flags & BPF_F_INNER_MAP) ? " (any)" : "",
				 m->meta.map_flags);
	err = bpfrt_map_host_write_begin(outer, "update_inner");
	if (err)
		return err;
	bpfrt_map_get(inner);
	pthread_mutex_lock(&m->write_lock);
	err = slot_set_locked(m, key, inner, flags, &old);
	pthread_mutex_unlock(&m->write_lock);
	bpfrt_map_host_write_end(outer);
	if (err) {
		bpfrt_map_put_deferred(inner);
		return bpfrt_err(err, "map '%s': update_inner with map '%s': %s", outer->name,
				 inner->name, err == -E2BIG ? "index out of range or map full" :
				 err == -EEXIST ? "key exists (BPF_NOEXIST)" :
				 err == -ENOENT ? "no such key (BPF_EXIST)" : "failed");
	}
	slot_release(old);
	return 0;
}

int bpfrt_map_lookup_inner(struct bpfrt_map *outer, const void *key, struct bpfrt_map **inner)
{
	if (!outer || !key || !inner)
		return bpfrt_err(-EINVAL, "map lookup_inner: NULL argument");
	if (!bpfrt_map_is_map_in_map(outer))
		return bpfrt_err(-EINVAL, "map '%s': lookup_inner: not a map-in-map (type %d)",
				 outer->name, (int)outer->type);
	bpfrt_rcu_read_lock();
	*inner = slot_get(to_mom(outer), key);
	bpfrt_rcu_read_unlock();
	return *inner ? 0 : bpfrt_err(-ENOENT, "map '%s': lookup_inner: empty slot", outer->name);
}

/* ---- user-space element ops ------------------------------------------------------ */

/* Linux hands user space the inner map's id; bpfrt maps have none: use
 * bpfrt_map_lookup_inner. */
static int mom_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

/* Values are maps: bpfrt_map_update_inner. */
static int mom_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			  uint64_t flags)
{
	return -EOPNOTSUPP;
}

static int mom_sys_delete(struct bpfrt_map *map, const void *key)
{
	struct map_of_maps *m = to_mom(map);
	struct bpfrt_map *old;
	int err;

	pthread_mutex_lock(&m->write_lock);
	err = slot_set_locked(m, key, NULL, BPF_ANY, &old);
	pthread_mutex_unlock(&m->write_lock);
	slot_release(old);
	return err;
}

static int mom_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	struct map_of_maps *m = to_mom(map);

	if (m->slots)
		return bpfrt_array_get_next_key(map, key, next_key);
	return m->table->ops->get_next_key(m->table, key, next_key);
}

/* Programs cannot write a map-in-map (the verifier allows lookups only). */
static long mom_update(struct bpfrt_map *map, const void *key, const void *value,
		       uint64_t flags)
{
	return -EOPNOTSUPP;
}

static long mom_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

/* ---- creation -------------------------------------------------------------------- */

#define MOM_ARRAY_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)
#define MOM_HASH_FLAGS  (MOM_ARRAY_FLAGS | BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED)

static int mom_alloc_check(const struct bpfrt_map *attr)
{
	bool array = attr->type == BPF_MAP_TYPE_ARRAY_OF_MAPS;
	const char *kind = array ? "array of maps" : "hash of maps";

	if (attr->value_size != 4)
		return bpfrt_err(-EINVAL, "%s '%s': value_size %u: must be 4 (the inner map, "
				 "an fd in Linux)", kind, attr->name, attr->value_size);
	if (attr->max_entries == 0 || attr->key_size == 0 || (array && attr->key_size != 4))
		return bpfrt_err(-EINVAL, "%s '%s': key_size %u, max_entries %u", kind,
				 attr->name, attr->key_size, attr->max_entries);
	if (attr->key_size > BPFRT_MAP_KEY_SIZE_MAX)
		return bpfrt_err(-E2BIG, "%s '%s': key_size %u too large", kind, attr->name,
				 attr->key_size);
	if (attr->map_flags & ~(array ? MOM_ARRAY_FLAGS : MOM_HASH_FLAGS))
		return bpfrt_err(-EINVAL, "%s '%s': invalid map_flags 0x%x", kind, attr->name,
				 attr->map_flags);
	if (!attr->inner_template)
		return bpfrt_err(-EINVAL, "%s '%s': no inner map template "
				 "(bpfrt_map_create_opts.inner_map; Linux's inner_map_fd)", kind,
				 attr->name);
	if (bpfrt_map_is_map_in_map(attr->inner_template) ||
	    attr->inner_template->type == BPF_MAP_TYPE_PROG_ARRAY)
		return bpfrt_err(-EINVAL, "%s '%s': inner map template '%s' is of a kind (%d) "
				 "that cannot be an inner map", kind, attr->name,
				 attr->inner_template->name, (int)attr->inner_template->type);
	return 0;
}

static int mom_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	/* the hash kind's table is a map of its own, charged when made */
	*bytes = sizeof(struct map_of_maps) + (attr->type == BPF_MAP_TYPE_ARRAY_OF_MAPS ?
		 (uint64_t)attr->max_entries * sizeof(void *) : 0);
	return 0;
}

static void mom_free(struct bpfrt_map *map)
{
	struct map_of_maps *m = to_mom(map);

	if (m->slots) {
		for (uint32_t i = 0; i < map->max_entries; i++)
			slot_release(atomic_load_explicit(&m->slots[i], memory_order_relaxed));
		free(m->slots);
	}
	if (m->table) {
		uint8_t key[BPFRT_MAP_KEY_SIZE_MAX];
		bool have = !m->table->ops->get_next_key(m->table, NULL, key);

		while (have) {
			struct bpfrt_map *inner = NULL;

			bpfrt_map_copy_out(&inner, m->table->ops->lookup(m->table, key), 8);
			slot_release(inner);
			m->table->ops->delete(m->table, key);
			have = !m->table->ops->get_next_key(m->table, NULL, key);
		}
		bpfrt_map_free(m->table);
	}
	pthread_mutex_destroy(&m->write_lock);
	free(m);
}

static int mom_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct map_of_maps *m = calloc(1, sizeof(*m));
	const struct bpfrt_map *tmpl = attr->inner_template;
	int err = 0;

	if (!m)
		return -ENOMEM;
	m->map = *attr;
	m->map.inner_template = NULL;  /* only its shape is kept */
	m->meta = *tmpl;
	m->meta.inner_template = NULL;
	m->meta.frozen = BPFRT_MAP_UNFROZEN;
	m->meta.host_writers = 0;
	m->meta.mem_charged = 0;
	m->meta.refs = 0;
	pthread_mutex_init(&m->write_lock, NULL);
	if (attr->type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
		m->slots = calloc(attr->max_entries, sizeof(*m->slots));
		err = m->slots ? 0 : -ENOMEM;
	} else {
		BPFRT_OPTS(bpfrt_map_create_opts, o,
			   .map_flags = attr->map_flags & (BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED));

		err = bpfrt_map_create(BPF_MAP_TYPE_HASH, attr->name, attr->key_size, 8,
				       attr->max_entries, &o, &m->table);
	}
	if (err) {
		mom_free(&m->map);
		return err;
	}
	*out = &m->map;
	return 0;
}

#define MOM_OPS									\
	.alloc_check = mom_alloc_check,						\
	.mem_size = mom_mem_size,						\
	.alloc = mom_alloc,							\
	.free = mom_free,							\
	.sys_lookup = mom_sys_lookup,						\
	.sys_update = mom_sys_update,						\
	.sys_delete = mom_sys_delete,						\
	.get_next_key = mom_get_next_key,					\
	.lookup = mom_lookup,							\
	.update = mom_update,							\
	.delete = mom_delete

const struct bpfrt_map_ops bpfrt_array_of_maps_ops = { MOM_OPS };
const struct bpfrt_map_ops bpfrt_hash_of_maps_ops = { MOM_OPS };
