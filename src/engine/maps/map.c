/* The map ops table, creation with Linux's common checks, and the
 * user-space API that dispatches to each kind. */
#define _GNU_SOURCE
#include "maps/map.h"
#include "core/config.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/rcu.h"
#include "isa/linux_names.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct bpfrt_map_ops *const map_ops[] = {
	[BPF_MAP_TYPE_ARRAY]        = &bpfrt_array_map_ops,
	[BPF_MAP_TYPE_PERCPU_ARRAY] = &bpfrt_percpu_array_map_ops,
	[BPF_MAP_TYPE_PROG_ARRAY]   = &bpfrt_prog_array_map_ops,
	[BPF_MAP_TYPE_HASH]         = &bpfrt_htab_map_ops,
	[BPF_MAP_TYPE_PERCPU_HASH]  = &bpfrt_percpu_htab_map_ops,
	[BPF_MAP_TYPE_LRU_HASH]     = &bpfrt_lru_htab_map_ops,
	[BPF_MAP_TYPE_RINGBUF]      = &bpfrt_ringbuf_map_ops,
	[BPF_MAP_TYPE_USER_RINGBUF] = &bpfrt_user_ringbuf_map_ops,
	[BPF_MAP_TYPE_LRU_PERCPU_HASH] = &bpfrt_lru_percpu_htab_map_ops,
	[BPF_MAP_TYPE_QUEUE]        = &bpfrt_queue_map_ops,
	[BPF_MAP_TYPE_STACK]        = &bpfrt_stack_map_ops,
	[BPF_MAP_TYPE_BLOOM_FILTER] = &bpfrt_bloom_map_ops,
	[BPF_MAP_TYPE_LPM_TRIE]     = &bpfrt_lpm_trie_map_ops,
	[BPF_MAP_TYPE_ARRAY_OF_MAPS] = &bpfrt_array_of_maps_ops,
	[BPF_MAP_TYPE_HASH_OF_MAPS] = &bpfrt_hash_of_maps_ops,
	[BPF_MAP_TYPE_PERF_EVENT_ARRAY] = &bpfrt_perf_event_array_map_ops,
	[BPF_MAP_TYPE_CGROUP_ARRAY] = &bpfrt_cgroup_array_map_ops,
	[BPF_MAP_TYPE_STACK_TRACE]  = &bpfrt_stack_trace_map_ops,
	[BPF_MAP_TYPE_CGROUP_STORAGE] = &bpfrt_cgroup_storage_map_ops,
	[BPF_MAP_TYPE_SOCKMAP]      = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_SOCKHASH]     = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_REUSEPORT_SOCKARRAY] = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_XSKMAP]       = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_DEVMAP]       = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_DEVMAP_HASH]  = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_CPUMAP]       = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_SK_STORAGE]   = &bpfrt_kernel_object_map_ops,
	[BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE] = &bpfrt_percpu_cgroup_storage_map_ops,
};

bool bpfrt_map_type_supported(uint32_t type)
{
	return type < sizeof(map_ops) / sizeof(map_ops[0]) && map_ops[type];
}

bool bpfrt_map_type_shareable(uint32_t type)
{
	return bpfrt_map_type_supported(type) && map_ops[type]->shm;
}

/* ---- shared memory --------------------------------------------------------- */

int bpfrt_map_shm_create(const char *name, size_t size, void **addr)
{
	char mname[BPFRT_NAME_LEN + 16];
	int fd, err;
	void *p;

	snprintf(mname, sizeof(mname), "bpfrt-map:%s", name);
	fd = memfd_create(mname, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	*addr = p;
	return fd;
}

int bpfrt_map_shm(const struct bpfrt_map *map, struct bpfrt_map_shm *out)
{
	struct bpfrt_map_shm info = { .sz = sizeof(info), .fd = -1 };

	if (!map)
		return bpfrt_err(-EINVAL, "map shm: NULL map");
	if (!OUT_VALID(out, bpfrt_map_shm))
		return -EINVAL;
	if (!(map->bpfrt_flags & BPFRT_MAP_F_SHARED) || !map->ops->shm)
		return bpfrt_err(-EINVAL, "map '%s': not in shared memory (made without "
				 "BPFRT_MAP_F_SHARED)", map->name);
	map->ops->shm((struct bpfrt_map *)map, &info);
	OUT_COPY(out, &info, fd);
	OUT_COPY(out, &info, layout);
	OUT_COPY(out, &info, size);
	OUT_COPY(out, &info, data_off);
	OUT_COPY(out, &info, elem_size);
	OUT_COPY(out, &info, cpu_stride);
	OUT_COPY(out, &info, nr_cpus);
	OUT_COPY(out, &info, value_size);
	OUT_COPY(out, &info, consumer_pos_off);
	OUT_COPY(out, &info, producer_pos_off);
	OUT_COPY(out, &info, data_size);
	OUT_COPY(out, &info, buckets_off);
	OUT_COPY(out, &info, n_buckets);
	OUT_COPY(out, &info, n_elems);
	OUT_COPY(out, &info, pcpu_off);
	OUT_COPY(out, &info, addr);
	OUT_COPY(out, &info, next_off);
	OUT_COPY(out, &info, index_off);
	OUT_COPY(out, &info, key_off);
	OUT_COPY(out, &info, value_off);
	return 0;
}

/* ---- CPUs ------------------------------------------------------------- */

static int nr_cpus;
static pthread_once_t nr_cpus_once = PTHREAD_ONCE_INIT;

/* "0-3,5,7-8" -> highest CPU number + 1, or -1 if unparsable. */
static int parse_cpu_list(const char *s)
{
	int highest = -1;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		if (b > highest)
			highest = (int)b;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return highest + 1;
}

static void compute_nr_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char buf[256];
	int n = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			n = parse_cpu_list(buf);
		fclose(f);
	}
	if (n <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_CONF);
	nr_cpus = n > 0 ? n : 1;
}

int bpfrt_map_nr_cpus(void)
{
	pthread_once(&nr_cpus_once, compute_nr_cpus);
	return nr_cpus;
}

int bpfrt_num_possible_cpus(void)
{
	return bpfrt_map_nr_cpus();
}

static int current_cpu(void)
{
	int cpu = sched_getcpu();  /* rseq-backed in glibc >= 2.35: no syscall */
	int n = bpfrt_map_nr_cpus();

	if (cpu < 0)
		return 0;
	return cpu < n ? cpu : cpu % n;
}

/* Inside a read section (a program run), the CPU the section first asked
 * for (core/rcu.h, run_cpu); outside (user-space map calls), the CPU now. */
int bpfrt_map_this_cpu(void)
{
	if (!bpfrt_rcu_in_read_section())
		return current_cpu();
	if (!bpfrt_rcu_self.run_cpu)
		bpfrt_rcu_self.run_cpu = current_cpu() + 1;
	return bpfrt_rcu_self.run_cpu - 1;
}

bool bpfrt_map_is_percpu(enum bpf_map_type type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

/* ---- map memory limit ----------------------------------------------------- */

/* Bytes of every live map together, and the most they may take (0: no
 * limit). The limit is BPFRT_MAP_MEMORY_LIMIT (core/config.h) at first use;
 * bpfrt_set_map_memory_limit() replaces it. */
static uint64_t mem_used;
static uint64_t mem_limit;
static pthread_once_t mem_limit_once = PTHREAD_ONCE_INIT;

static void init_mem_limit(void)
{
	const struct bpfrt_config_size *env = &bpfrt_config()->map_memory_limit;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	mem_limit = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 2 : 1ull << 30;
	if (env->set)
		mem_limit = env->bytes;
}

int bpfrt_set_map_memory_limit(uint64_t bytes)
{
	pthread_once(&mem_limit_once, init_mem_limit);
	__atomic_store_n(&mem_limit, bytes, __ATOMIC_RELAXED);
	return 0;
}

uint64_t bpfrt_map_memory_limit(void)
{
	pthread_once(&mem_limit_once, init_mem_limit);
	return __atomic_load_n(&mem_limit, __ATOMIC_RELAXED);
}

uint64_t bpfrt_map_memory_used(void)
{
	return __atomic_load_n(&mem_used, __ATOMIC_RELAXED);
}

static int mem_charge(const char *name, uint64_t bytes)
{
	uint64_t limit = bpfrt_map_memory_limit();
	uint64_t used = __atomic_load_n(&mem_used, __ATOMIC_RELAXED);

	do {
		if (limit && (bytes > limit || used > limit - bytes))
			return bpfrt_err(-ENOMEM, "map '%s': %llu bytes would exceed the map memory "
					 "limit of %llu bytes (%llu in use; raise it with "
					 "BPFRT_MAP_MEMORY_LIMIT or bpfrt_set_map_memory_limit)",
					 name, (unsigned long long)bytes,
					 (unsigned long long)limit, (unsigned long long)used);
	} while (!__atomic_compare_exchange_n(&mem_used, &used, used + bytes, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 0;
}

static void mem_uncharge(uint64_t bytes)
{
	__atomic_sub_fetch(&mem_used, bytes, __ATOMIC_RELAXED);
}

/* ---- creation -------------------------------------------------------------- */

/* Linux's rule (bpf_obj_name_cpy) for the characters; longer names are
 * cut to BPFRT_NAME_LEN - 1, as libbpf cuts them for the kernel. */
static int check_name(const char *name)
{
	size_t len = strnlen(name, BPFRT_NAME_LEN - 1);

	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '.')
			return bpfrt_err(-EINVAL, "map name '%s': character %zu is not "
					 "[A-Za-z0-9_.]", name, i);
	return 0;
}

/* Flag checks every kind shares (Linux's bpf_map_flags_access_ok). */
static int check_common_flags(uint32_t flags)
{
	if ((flags & BPF_F_RDONLY) && (flags & BPF_F_WRONLY))
		return bpfrt_err(-EINVAL, "map flags: BPF_F_RDONLY with BPF_F_WRONLY");
	if ((flags & BPF_F_RDONLY_PROG) && (flags & BPF_F_WRONLY_PROG))
		return bpfrt_err(-EINVAL, "map flags: BPF_F_RDONLY_PROG with BPF_F_WRONLY_PROG");
	return 0;
}

int bpfrt_map_create(enum bpf_map_type type, const char *name,
		     uint32_t key_size, uint32_t value_size, uint32_t max_entries,
		     const struct bpfrt_map_create_opts *opts,
		     struct bpfrt_map **map)
{
	const struct bpfrt_map_ops *ops;
	struct bpfrt_map attr = { 0 };
	int err;

	if (!map)
		return bpfrt_err(-EINVAL, "map create: NULL result pointer");
	*map = NULL;
	if ((unsigned int)type >= sizeof(map_ops) / sizeof(map_ops[0]) || !map_ops[type]) {
		const char *linux_name = bpfrt_linux_map_type_name((uint32_t)type);

		if (linux_name)
			return bpfrt_err(-EINVAL, "map create: map type %s is not supported",
					 linux_name);
		return bpfrt_err(-EINVAL, "map create: unknown map type %d (no Linux map type "
				 "has that number)", (int)type);
	}
	ops = map_ops[type];
	err = OPTS_VALID(opts, bpfrt_map_create_opts) ? 0 : -EINVAL;
	if (!err && name)
		err = check_name(name);
	if (err)
		return err;
	attr.ops = ops;
	attr.type = type;
	attr.key_size = key_size;
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	attr.map_flags = OPTS_GET(opts, map_flags, 0);
	if (attr.map_flags & BPF_F_NUMA_NODE)
		attr.numa_node = OPTS_GET(opts, numa_node, 0);
	attr.map_extra = OPTS_GET(opts, map_extra, 0);
	attr.inner_template = OPTS_GET(opts, inner_map, NULL);
	attr.bpfrt_flags = OPTS_GET(opts, bpfrt_flags, 0);
	if (attr.bpfrt_flags & ~BPFRT_MAP_F_SHARED)
		return bpfrt_err(-EINVAL, "map '%s': unknown bpfrt_flags 0x%llx", name ? name : "",
				 (unsigned long long)attr.bpfrt_flags);
	if ((attr.bpfrt_flags & BPFRT_MAP_F_SHARED) && !ops->shm) {
		const char *tn = bpfrt_linux_map_type_name((uint32_t)type);

		return bpfrt_err(-EOPNOTSUPP, "map '%s': a %s cannot live in shared memory "
				 "(BPFRT_MAP_F_SHARED: arrays, per-CPU arrays and ring buffers)",
				 name ? name : "", tn ? tn : "map of this type");
	}
	attr.spin_lock_off = OPTS_GET(opts, has_spin_lock, 0) ?
			     (int32_t)OPTS_GET(opts, spin_lock_off, 0) : -1;
	if (OPTS_GET(opts, has_spin_lock, 0) && OPTS_GET(opts, spin_lock_off, 0) > INT32_MAX)
		attr.spin_lock_off = INT32_MAX - 3; /* refused below as outside the value */
	if (attr.inner_template && !bpfrt_map_is_map_in_map(&attr))
		return bpfrt_err(-EINVAL, "map '%s': inner_map is for map-in-map kinds only",
				 name ? name : "");
	snprintf(attr.name, sizeof(attr.name), "%s", name ? name : "");
	err = check_common_flags(attr.map_flags);
	/* Linux: only the bloom filter (and arenas) take map_extra */
	if (!err && attr.map_extra && type != BPF_MAP_TYPE_BLOOM_FILTER)
		err = bpfrt_err(-EINVAL, "map '%s': map_extra 0x%llx: only bloom filters take "
				"map_extra", attr.name, (unsigned long long)attr.map_extra);
	if (!err)
		err = bpfrt_map_check_spin_lock(&attr);
	if (!err)
		err = ops->alloc_check(&attr);
	if (!err)
		err = ops->mem_size(&attr, &attr.mem_charged);
	if (!err)
		err = mem_charge(attr.name, attr.mem_charged);
	if (err)
		return err;
	err = ops->alloc(&attr, map);
	if (err) {
		*map = NULL;
		mem_uncharge(attr.mem_charged);
		return err == -ENOMEM ? bpfrt_err(err, "map '%s': out of memory for %u entries",
						 attr.name, max_entries) : err;
	}
	(*map)->inner_template = NULL;
	__atomic_store_n(&(*map)->refs, 1, __ATOMIC_RELEASE);
	return 0;
}

static void map_destroy(struct bpfrt_map *map)
{
	uint64_t charged = map->mem_charged;

	map->ops->free(map);
	mem_uncharge(charged);
}

static void map_destroy_cb(void *map)
{
	map_destroy(map);
}

void bpfrt_map_get(struct bpfrt_map *map)
{
	__atomic_add_fetch(&map->refs, 1, __ATOMIC_RELAXED);
}

void bpfrt_map_put_deferred(struct bpfrt_map *map)
{
	if (__atomic_sub_fetch(&map->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (bpfrt_rcu_call(map, map_destroy_cb)) {
		/* no memory for the bookkeeping inside a read section: leak
		 * rather than free under a reader */
		return;
	}
}

void bpfrt_map_free(struct bpfrt_map *map)
{
	uint64_t charged;

	if (!map)
		return;
	/* still in a map-in-map slot: the slot's release frees it */
	if (__atomic_sub_fetch(&map->refs, 1, __ATOMIC_ACQ_REL))
		return;
	/* A program that finished with the map may still be in its read
	 * section on another thread. */
	if (!bpfrt_rcu_in_read_section())
		bpfrt_rcu_synchronize();
	charged = map->mem_charged;
	map->ops->free(map);
	mem_uncharge(charged);
}

/* ---- user-space element API ----------------------------------------------- */

/* One message per failing element operation, named after the bpf(2)
 * command it mirrors. */
static int report(const struct bpfrt_map *map, const char *op, int err)
{
	const char *why;

	switch (err) {
	case 0:
		return 0;
	case -ENOENT:
		why = "no such key (or no more keys)";
		break;
	case -EEXIST:
		why = "key exists (BPF_NOEXIST)";
		break;
	case -E2BIG:
		why = "index out of range or map full";
		break;
	case -EINVAL:
		why = "invalid argument for this map type";
		break;
	case -EOPNOTSUPP:
		why = "not supported by this map type";
		break;
	case -ENOMEM:
		why = "out of memory";
		break;
	default:
		why = "failed";
		break;
	}
	return bpfrt_err(err, "map '%s' (type %d, max_entries %u): %s: %s",
			 map->name, (int)map->type, map->max_entries, op, why);
}

/* BPF_F_WRONLY: user space may write the map, not read it (Linux: an fd
 * without FMODE_CAN_READ). */
static int check_host_read(const struct bpfrt_map *map, const char *op)
{
	if (map->map_flags & BPF_F_WRONLY)
		return bpfrt_err(-EPERM, "map '%s': %s: the map is write-only for user space "
				 "(BPF_F_WRONLY)", map->name, op);
	return 0;
}

int bpfrt_map_lookup_elem(struct bpfrt_map *map, const void *key, void *value)
{
	return bpfrt_map_lookup_elem_flags(map, key, value, 0);
}

/* BPF_F_LOCK needs a bpf_spin_lock in the value (Linux: -EINVAL). */
static int check_lock_flag(const struct bpfrt_map *map, const char *op, uint64_t flags)
{
	if ((flags & BPF_F_LOCK) && map->spin_lock_off < 0)
		return bpfrt_err(-EINVAL, "map '%s': %s: BPF_F_LOCK needs a bpf_spin_lock in the "
				 "value, which this map has not", map->name, op);
	return 0;
}

int bpfrt_map_lookup_elem_flags(struct bpfrt_map *map, const void *key, void *value,
				uint64_t flags)
{
	int err;

	if (!map || !value || (!key && map->key_size))
		return bpfrt_err(-EINVAL, "map lookup: NULL argument");
	if ((err = check_host_read(map, "lookup")))
		return err;
	if (flags & ~(uint64_t)BPF_F_LOCK)
		return bpfrt_err(-EINVAL, "map '%s': lookup: invalid flags 0x%llx", map->name,
				 (unsigned long long)flags);
	if ((err = check_lock_flag(map, "lookup", flags)))
		return err;
	bpfrt_rcu_read_lock();
	err = map->spin_lock_off >= 0 ? bpfrt_map_lookup_locked_value(map, key, value, flags)
				      : map->ops->sys_lookup(map, key, value);
	bpfrt_rcu_read_unlock();
	return report(map, "lookup", err);
}

int bpfrt_map_update_elem(struct bpfrt_map *map, const void *key,
			  const void *value, uint64_t flags)
{
	if (!map || !value || (!key && map->key_size))
		return bpfrt_err(-EINVAL, "map update: NULL argument");
	int err;

	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST)
		return bpfrt_err(-EINVAL, "map '%s': update: invalid flags 0x%llx",
				 map->name, (unsigned long long)flags);
	if ((err = check_lock_flag(map, "update", flags)))
		return err;
	err = bpfrt_map_host_write_begin(map, "update");
	if (err)
		return err;
	if (map->spin_lock_off >= 0) {
		err = report(map, "update",
			     (int)bpfrt_map_update_locked_value(map, key, value, flags, true));
	} else {
		err = report(map, "update", map->ops->sys_update(map, key, value, flags));
	}
	bpfrt_map_host_write_end(map);
	return err;
}

int bpfrt_map_delete_elem(struct bpfrt_map *map, const void *key)
{
	int err;

	if (!map || (!key && map->key_size))
		return bpfrt_err(-EINVAL, "map delete: NULL argument");
	err = bpfrt_map_host_write_begin(map, "delete");
	if (err)
		return err;
	err = report(map, "delete", map->ops->sys_delete(map, key));
	bpfrt_map_host_write_end(map);
	return err;
}

/* BPF_MAP_LOOKUP_AND_DELETE_ELEM: needs read and write access, as Linux
 * (an fd with both modes; a frozen map has lost write). */
int bpfrt_map_lookup_and_delete_elem(struct bpfrt_map *map, const void *key, void *value,
				     uint64_t flags)
{
	int err;

	if (!map || !value || (!key && map->key_size))
		return bpfrt_err(-EINVAL, "map lookup_and_delete: NULL argument");
	if ((err = check_host_read(map, "lookup_and_delete")))
		return err;
	if (flags & ~(uint64_t)BPF_F_LOCK)
		return bpfrt_err(-EINVAL, "map '%s': lookup_and_delete: invalid flags 0x%llx",
				 map->name, (unsigned long long)flags);
	err = bpfrt_map_host_write_begin(map, "lookup_and_delete");
	if (err)
		return err;
	/* a value with a lock: BPF_F_LOCK is Linux's to take (the value is
	 * copied as the element is unlinked); the lock's bytes read as 0 */
	bpfrt_rcu_read_lock();
	err = map->ops->sys_lookup_and_delete ?
	      map->ops->sys_lookup_and_delete(map, key, value, map->spin_lock_off >= 0 ?
					      flags & ~(uint64_t)BPF_F_LOCK : flags) : -EOPNOTSUPP;
	bpfrt_rcu_read_unlock();
	if (!err && map->spin_lock_off >= 0)
		memset((char *)value + map->spin_lock_off, 0, 4);
	bpfrt_map_host_write_end(map);
	return report(map, "lookup_and_delete", err);
}

/* ---- push, pop, peek for programs ---------------------------------------------- */

long bpfrt_map_prog_push(struct bpfrt_map *map, const void *value, uint64_t flags)
{
	return map->ops->push ? map->ops->push(map, value, flags) : -EINVAL;
}

long bpfrt_map_prog_pop(struct bpfrt_map *map, void *value)
{
	return map->ops->pop ? map->ops->pop(map, value) : -EINVAL;
}

long bpfrt_map_prog_peek(struct bpfrt_map *map, void *value)
{
	return map->ops->peek ? map->ops->peek(map, value) : -EINVAL;
}

/* ---- freezing ------------------------------------------------------------------ */

/* A writer announces itself before it looks at frozen, and freeze sets
 * frozen before it looks at the writers (both sequentially consistent):
 * either the writer sees the map frozen, or freeze waits for it. */
int bpfrt_map_host_write_begin(struct bpfrt_map *map, const char *op)
{
	if (map->map_flags & BPF_F_RDONLY)
		return bpfrt_err(-EPERM, "map '%s': %s: the map is read-only for user space "
				 "(BPF_F_RDONLY)", map->name, op);
	__atomic_add_fetch(&map->host_writers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&map->frozen, __ATOMIC_SEQ_CST)) {
		bpfrt_map_host_write_end(map);
		return bpfrt_err(-EPERM, "map '%s': %s: the map is frozen (read-only for "
				 "user space)", map->name, op);
	}
	return 0;
}

void bpfrt_map_host_write_end(struct bpfrt_map *map)
{
	__atomic_sub_fetch(&map->host_writers, 1, __ATOMIC_RELEASE);
}

int bpfrt_map_freeze(struct bpfrt_map *map)
{
	int err = 0;

	if (!map)
		return bpfrt_err(-EINVAL, "map freeze: NULL map");
	/* Linux: freezing needs write access */
	if (map->map_flags & BPF_F_RDONLY)
		return bpfrt_err(-EPERM, "map '%s': freeze: the map is read-only for user space "
				 "(BPF_F_RDONLY)", map->name);
	/* FREEZING first: host writes are refused from here on, but the map
	 * is not frozen yet (bpfrt_map_is_frozen, bpfrt_map_is_rdonly: the
	 * verifier folds only frozen maps). FROZEN only once the storage is
	 * read-only; if that fails, the map is writable as before. */
	uint32_t unfrozen = BPFRT_MAP_UNFROZEN;

	if (!__atomic_compare_exchange_n(&map->frozen, &unfrozen, BPFRT_MAP_FREEZING, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return bpfrt_err(-EBUSY, "map '%s': freeze: already %s", map->name,
				 unfrozen == BPFRT_MAP_FROZEN ? "frozen" : "being frozen");
	while (__atomic_load_n(&map->host_writers, __ATOMIC_SEQ_CST))
		sched_yield();
	if (map->ops->freeze)
		err = map->ops->freeze(map);
	if (err) {
		__atomic_store_n(&map->frozen, BPFRT_MAP_UNFROZEN, __ATOMIC_SEQ_CST);
		return bpfrt_err(err, "map '%s': freeze: cannot make the storage read-only: %s "
				 "(the map stays unfrozen)", map->name, strerror(-err));
	}
	__atomic_store_n(&map->frozen, BPFRT_MAP_FROZEN, __ATOMIC_SEQ_CST);
	return 0;
}

bool bpfrt_map_is_frozen(const struct bpfrt_map *map)
{
	return __atomic_load_n(&map->frozen, __ATOMIC_ACQUIRE) == BPFRT_MAP_FROZEN;
}

int bpfrt_map_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	int err;

	if (!map || !next_key)
		return bpfrt_err(-EINVAL, "map get_next_key: NULL argument");
	if ((err = check_host_read(map, "get_next_key")))
		return err;
	bpfrt_rcu_read_lock();
	err = map->ops->get_next_key(map, key, next_key);
	bpfrt_rcu_read_unlock();
	return report(map, "get_next_key", err);
}

/* ---- accessors --------------------------------------------------------------- */

const char *bpfrt_map_name(const struct bpfrt_map *map)
{
	return map->name;
}

enum bpf_map_type bpfrt_map_type(const struct bpfrt_map *map)
{
	return map->type;
}

uint32_t bpfrt_map_key_size(const struct bpfrt_map *map)
{
	return map->key_size;
}

uint32_t bpfrt_map_value_size(const struct bpfrt_map *map)
{
	return map->value_size;
}

uint32_t bpfrt_map_max_entries(const struct bpfrt_map *map)
{
	return map->max_entries;
}

uint32_t bpfrt_map_flags(const struct bpfrt_map *map)
{
	return map->map_flags;
}

size_t bpfrt_map_value_buf_size(const struct bpfrt_map *map)
{
	if (bpfrt_map_is_percpu(map->type))
		return (size_t)bpfrt_map_nr_cpus() * BPFRT_ROUND_UP(map->value_size, 8);
	return map->value_size;
}

