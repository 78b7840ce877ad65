/* The map kinds whose values are kernel objects a user-space runtime has
 * none of: sockets (SOCKMAP, SOCKHASH, REUSEPORT_SOCKARRAY, XSKMAP),
 * network devices (DEVMAP, DEVMAP_HASH), CPUs' redirect queues (CPUMAP)
 * and per-socket storage (SK_STORAGE).
 *
 * They load with Linux's creation rules, so objects that declare them
 * load, and they stay empty: bpfrt cannot hold a socket, a device or a
 * kernel queue. Every operation answers as Linux does for an empty map,
 * and an update from user space is refused with the errno Linux gives
 * when the fd (or ifindex, or queue size) names nothing the kind can hold:
 *  - a socket fd: -EBADF for no open fd, -ENOTSOCK for a file that is not
 *    a socket, -EOPNOTSUPP for a socket (bpfrt holds none); XSKMAP: the
 *    last for every socket, which Linux gives for a non-AF_XDP one;
 *  - DEVMAP: ifindex 0 leaves the slot empty (0); any other is
 *    -EOPNOTSUPP (bpfrt has no devices to redirect to; Linux: -EINVAL for
 *    an ifindex naming no device);
 *  - CPUMAP: qsize 0 leaves the slot empty (0); any other -EOPNOTSUPP
 *    (Linux would start a kernel thread for the CPU).
 * Programs reach them only through the helpers Linux allows for each kind
 * (verifier/map_compat.c); lookups from programs find nothing. */
#include "maps/map.h"
#include "core/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ACCESS_FLAGS (BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)
#define SOCK_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY)
#define MAX_BPF_STACK 512
/* Debian's CONFIG_NR_CPUS (x86-64, arm64): the most entries a CPUMAP takes */
#define CPUMAP_MAX_ENTRIES 8192
/* Linux's BPF_LOCAL_STORAGE_MAX_VALUE_SIZE (maps/cgroup_storage.c) */
#define SK_STORAGE_VALUE_MAX (65535u - 128u)

static const char *kind_name(const struct bpfrt_map *m)
{
	switch (m->type) {
	case BPF_MAP_TYPE_SOCKMAP: return "sockmap";
	case BPF_MAP_TYPE_SOCKHASH: return "sockhash";
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY: return "reuseport array";
	case BPF_MAP_TYPE_XSKMAP: return "xskmap";
	case BPF_MAP_TYPE_DEVMAP: return "devmap";
	case BPF_MAP_TYPE_DEVMAP_HASH: return "devmap hash";
	case BPF_MAP_TYPE_CPUMAP: return "cpumap";
	default: return "sk_storage";
	}
}

static bool is_array(const struct bpfrt_map *m)
{
	return m->type == BPF_MAP_TYPE_SOCKMAP || m->type == BPF_MAP_TYPE_REUSEPORT_SOCKARRAY ||
	       m->type == BPF_MAP_TYPE_XSKMAP || m->type == BPF_MAP_TYPE_DEVMAP ||
	       m->type == BPF_MAP_TYPE_CPUMAP;
}

static uint32_t key_index(const void *key)
{
	uint32_t i;

	memcpy(&i, key, 4);
	return i;
}

/* ---- creation ---------------------------------------------------------- */

static int bad(const struct bpfrt_map *a, int err, const char *rule)
{
	return bpfrt_err(err, "%s '%s': %s (key_size %u, value_size %u, max_entries %u, "
			 "flags 0x%x)", kind_name(a), a->name, rule, a->key_size, a->value_size,
			 a->max_entries, a->map_flags);
}

static int kom_alloc_check(const struct bpfrt_map *a)
{
	bool v4or8 = a->value_size == 4 || a->value_size == 8;

	switch (a->type) {
	case BPF_MAP_TYPE_SOCKMAP:
		if (!a->max_entries || a->key_size != 4 || !v4or8 || (a->map_flags & ~SOCK_CREATE_FLAGS))
			return bad(a, -EINVAL, "key_size 4, value_size 4 or 8 (a socket fd), "
				   "max_entries non-zero, flags NUMA_NODE, RDONLY, WRONLY");
		return 0;
	case BPF_MAP_TYPE_SOCKHASH:
		if (!a->max_entries || !a->key_size || !v4or8 || (a->map_flags & ~SOCK_CREATE_FLAGS))
			return bad(a, -EINVAL, "a key, value_size 4 or 8 (a socket fd), max_entries "
				   "non-zero, flags NUMA_NODE, RDONLY, WRONLY");
		if (a->key_size > MAX_BPF_STACK)
			return bad(a, -E2BIG, "key_size at most 512");
		return 0;
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		if (!a->max_entries || a->key_size != 4 || !v4or8 ||
		    (a->map_flags & ~(BPF_F_NUMA_NODE | ACCESS_FLAGS)))
			return bad(a, -EINVAL, "key_size 4, value_size 4 or 8 (a socket fd), "
				   "max_entries non-zero, flags NUMA_NODE and the access flags");
		return 0;
	case BPF_MAP_TYPE_XSKMAP:
		if (!a->max_entries || a->key_size != 4 || a->value_size != 4 ||
		    (a->map_flags & ~SOCK_CREATE_FLAGS))
			return bad(a, -EINVAL, "key_size and value_size 4 (an AF_XDP socket fd), "
				   "max_entries non-zero, flags NUMA_NODE, RDONLY, WRONLY");
		return 0;
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
		/* struct bpf_devmap_val up to ifindex or up to bpf_prog.fd */
		if (!a->max_entries || a->key_size != 4 || !v4or8 ||
		    (a->map_flags & ~SOCK_CREATE_FLAGS))
			return bad(a, -EINVAL, "key_size 4, value_size 4 or 8 (struct bpf_devmap_val), "
				   "max_entries non-zero, flags NUMA_NODE, RDONLY, WRONLY");
		return 0;
	case BPF_MAP_TYPE_CPUMAP:
		/* struct bpf_cpumap_val up to qsize or up to bpf_prog.fd */
		if (!a->max_entries || a->key_size != 4 || !v4or8 || (a->map_flags & ~BPF_F_NUMA_NODE))
			return bad(a, -EINVAL, "key_size 4, value_size 4 or 8 (struct bpf_cpumap_val), "
				   "max_entries non-zero, flags NUMA_NODE only");
		if (a->max_entries > CPUMAP_MAX_ENTRIES)
			return bad(a, -E2BIG, "at most NR_CPUS (8192) entries");
		return 0;
	default: /* SK_STORAGE */
		/* Linux also wants BTF for the key and value; bpfrt's maps are
		 * made without (the loader has it for declared maps) */
		if ((a->map_flags & ~(BPF_F_NO_PREALLOC | BPF_F_CLONE)) ||
		    !(a->map_flags & BPF_F_NO_PREALLOC) || a->max_entries || a->key_size != 4 ||
		    !a->value_size)
			return bad(a, -EINVAL, "key_size 4 (a socket fd), a value, max_entries 0, flags "
				   "BPF_F_NO_PREALLOC (required) and BPF_F_CLONE");
		if (a->value_size > SK_STORAGE_VALUE_MAX)
			return bad(a, -E2BIG, "value_size at most 65407");
		return 0;
	}
}

static int kom_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct bpfrt_map);
	return 0;
}

static int kom_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct bpfrt_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	*m = *attr;
	/* Linux: a program's devmap lookup points straight at the device's
	 * ifindex, which programs must not write */
	if (m->type == BPF_MAP_TYPE_DEVMAP || m->type == BPF_MAP_TYPE_DEVMAP_HASH)
		m->map_flags |= BPF_F_RDONLY_PROG;
	*out = m;
	return 0;
}

static void kom_free(struct bpfrt_map *map)
{
	free(map);
}

/* ---- user space -------------------------------------------------------- */

/* Linux's sockfd_lookup on fd, then bpfrt's answer for a socket. */
static int socket_fd_refused(int64_t fd)
{
	struct stat st;

	if (fd < 0 || fd > INT32_MAX || fstat((int)fd, &st))
		return -EBADF;
	return S_ISSOCK(st.st_mode) ? -EOPNOTSUPP : -ENOTSOCK;
}

static int64_t fd_value(const struct bpfrt_map *map, const void *value)
{
	if (map->value_size == 8) {
		uint64_t v;

		memcpy(&v, value, 8);
		return v > INT32_MAX ? -2 : (int64_t)v;
	}
	int32_t v;

	memcpy(&v, value, 4);
	return v;
}

static int kom_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	switch (map->type) {
	case BPF_MAP_TYPE_SOCKMAP:
	case BPF_MAP_TYPE_SOCKHASH:
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		/* the socket's cookie, which only a u64 value holds */
		return map->value_size != 8 ? -ENOSPC : -ENOENT;
	case BPF_MAP_TYPE_XSKMAP:
		return -EOPNOTSUPP;
	case BPF_MAP_TYPE_SK_STORAGE:
		return socket_fd_refused((int64_t)key_index(key));
	default:
		return -ENOENT;
	}
}

static int kom_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			  uint64_t flags)
{
	uint32_t idx = map->key_size == 4 ? key_index(key) : 0;
	int64_t fd;

	switch (map->type) {
	case BPF_MAP_TYPE_SOCKMAP:
	case BPF_MAP_TYPE_SOCKHASH:
		fd = fd_value(map, value);
		if (fd == -2)
			return -EINVAL;
		return socket_fd_refused(fd);
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		if (idx >= map->max_entries)
			return -E2BIG;
		fd = fd_value(map, value);
		return fd == -2 ? -EINVAL : socket_fd_refused(fd);
	case BPF_MAP_TYPE_XSKMAP: {
		int err;

		if (idx >= map->max_entries)
			return -E2BIG;
		err = socket_fd_refused(fd_value(map, value));
		/* a socket, never an AF_XDP one bpfrt could use */
		return err;
	}
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_CPUMAP: {
		uint32_t first;

		if (idx >= map->max_entries)
			return -E2BIG;
		if (flags == BPF_NOEXIST)
			return -EEXIST; /* an array's slot always exists */
		memcpy(&first, value, 4);
		if (map->type == BPF_MAP_TYPE_CPUMAP) {
			if (first > 16384)
				return -EOVERFLOW; /* qsize */
			if (idx >= (uint32_t)bpfrt_map_nr_cpus())
				return -ENODEV;
		}
		if (!first) /* no device / no queue: the slot stays empty */
			return 0;
		return bpfrt_err(-EOPNOTSUPP, "%s '%s': update: bpfrt has no %s to redirect to",
				 kind_name(map), map->name,
				 map->type == BPF_MAP_TYPE_CPUMAP ? "CPU queues" : "network devices");
	}
	case BPF_MAP_TYPE_DEVMAP_HASH: {
		uint32_t ifindex;

		memcpy(&ifindex, value, 4);
		if (!ifindex)
			return -EINVAL; /* Linux: no device has ifindex 0 */
		return bpfrt_err(-EOPNOTSUPP, "%s '%s': update: bpfrt has no network devices to "
				 "redirect to", kind_name(map), map->name);
	}
	default: /* SK_STORAGE: the key is the socket fd */
		return socket_fd_refused((int64_t)idx);
	}
}

static int kom_sys_delete(struct bpfrt_map *map, const void *key)
{
	uint32_t idx = map->key_size == 4 ? key_index(key) : 0;

	switch (map->type) {
	case BPF_MAP_TYPE_SOCKMAP:
		return -EINVAL; /* Linux: an empty slot, or past the end */
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		return idx >= map->max_entries ? -E2BIG : -ENOENT;
	case BPF_MAP_TYPE_XSKMAP:
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_CPUMAP:
		return idx >= map->max_entries ? -EINVAL : 0; /* emptying an empty slot */
	case BPF_MAP_TYPE_SK_STORAGE:
		return socket_fd_refused((int64_t)idx);
	default: /* SOCKHASH, DEVMAP_HASH */
		return -ENOENT;
	}
}

static int kom_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	if (map->type == BPF_MAP_TYPE_SK_STORAGE)
		return -EOPNOTSUPP; /* Linux: ENOTSUPP */
	if (is_array(map))
		return bpfrt_array_get_next_key(map, key, next_key);
	return -ENOENT; /* an empty hash */
}

/* ---- programs ---------------------------------------------------------- */

static void *kom_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long kom_update(struct bpfrt_map *map, const void *key, const void *value,
		       uint64_t flags)
{
	return -EOPNOTSUPP;
}

/* As user space's: an empty slot or key. */
static long kom_delete(struct bpfrt_map *map, const void *key)
{
	return kom_sys_delete(map, key);
}

const struct bpfrt_map_ops bpfrt_kernel_object_map_ops = {
	.alloc_check = kom_alloc_check,
	.mem_size = kom_mem_size,
	.alloc = kom_alloc,
	.free = kom_free,
	.sys_lookup = kom_sys_lookup,
	.sys_update = kom_sys_update,
	.sys_delete = kom_sys_delete,
	.get_next_key = kom_get_next_key,
	.lookup = kom_lookup,
	.update = kom_update,
	.delete = kom_delete,
};
