/* Map values holding a struct bpf_spin_lock (Linux's BPF_SPIN_LOCK
 * field): which maps may have one, the lock itself, and the value copies
 * that leave the lock's bytes alone, as Linux's copy_map_value does (they
 * belong to the programs holding the lock) or take the lock first
 * (BPF_F_LOCK, copy_map_value_locked).
 *
 * The lock is a 4-byte word spinlock in the value (struct bpf_spin_lock's
 * size): taken with an atomic exchange, so it also excludes programs of
 * another process mapping the same memory. Programs hold it for a few
 * instructions only (the verifier allows no call while it is held), so
 * waiters spin, yielding after a while in case the holder was preempted
 * (user space cannot disable preemption as the kernel does). */
#include "maps/map.h"
#include "maps/spinlock.h"
#include "core/error.h"
#include "core/rcu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOCK_SIZE 4       /* sizeof(struct bpf_spin_lock) */
#define STACK_COPY_MAX 512 /* values up to this size are staged on the stack */

_Static_assert(sizeof(struct bpfrt_spinlock) == LOCK_SIZE, "a bpf_spin_lock is one word");

int bpfrt_map_check_spin_lock(const struct bpfrt_map *attr)
{
	int32_t off = attr->spin_lock_off;

	if (off < 0)
		return 0;
	/* a socket storage holds no value in bpfrt (kernel_object_maps.c):
	 * its lock is never taken */
	if (attr->type != BPF_MAP_TYPE_HASH && attr->type != BPF_MAP_TYPE_ARRAY &&
	    attr->type != BPF_MAP_TYPE_SK_STORAGE)
		return bpfrt_err(-EOPNOTSUPP, "map '%s': a bpf_spin_lock in the value needs a hash, "
				 "array or socket storage map (bpfrt keeps the cgroup storages "
				 "lock-free)", attr->name);
	if (off % LOCK_SIZE || (uint64_t)off + LOCK_SIZE > attr->value_size)
		return bpfrt_err(-EINVAL, "map '%s': bpf_spin_lock at offset %d: it must be 4-byte "
				 "aligned and inside the %u-byte value", attr->name, off,
				 attr->value_size);
	if (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG))
		return bpfrt_err(-EACCES, "map '%s': a value with a bpf_spin_lock cannot be "
				 "BPF_F_RDONLY_PROG or BPF_F_WRONLY_PROG", attr->name);
	return 0;
}

void bpfrt_map_value_lock(void *lock)
{
	bpfrt_spin_lock(lock);
}

void bpfrt_map_value_unlock(void *lock)
{
	bpfrt_spin_unlock(lock);
}

/* dst = src except the lock's bytes. A value is 8-aligned and the lock
 * 4-aligned, so the bytes after the lock may start 4 bytes off an 8-byte
 * boundary: they are copied as that 4-byte word, then whole words from
 * the boundary, so every word access on the map side is aligned (riscv64
 * faults on a misaligned 8-byte access). */
static void copy_around_lock(const struct bpfrt_map *map, void *dst, const void *src, bool in)
{
	uint32_t off = (uint32_t)map->spin_lock_off, tail = off + LOCK_SIZE;
	uint32_t head = tail % 8 && map->value_size - tail >= 4 ? 4 : 0;
	void (*copy)(void *, const void *, size_t) = in ? bpfrt_map_copy_in : bpfrt_map_copy_out;

	copy(dst, src, off);
	copy((char *)dst + tail, (const char *)src + tail, head);
	copy((char *)dst + tail + head, (const char *)src + tail + head,
	     map->value_size - tail - head);
	if (!in)
		memset((char *)dst + off, 0, LOCK_SIZE);
}

static void copy_value(struct bpfrt_map *map, void *dst, const void *src, bool in, bool lock)
{
	void *l = (char *)(in ? dst : (void *)src) + map->spin_lock_off;

	if (lock)
		bpfrt_map_value_lock(l);
	copy_around_lock(map, dst, src, in);
	if (lock)
		bpfrt_map_value_unlock(l);
}

/* Update of a map with a lock, programs and user space alike (the caller
 * is in a read section): an existing value is written around its lock
 * (under it with BPF_F_LOCK); a new hash element gets the value with its
 * lock's bytes zeroed, so it is born unlocked. user: a user-space call
 * (outside any read section), through the kind's user-space update, which
 * may wait for free elements. */
long bpfrt_map_update_locked_value(struct bpfrt_map *map, const void *key, const void *value,
				   uint64_t flags, bool user)
{
	bool lock = flags & BPF_F_LOCK;
	uint64_t mode = flags & ~(uint64_t)BPF_F_LOCK;
	char stack_copy[STACK_COPY_MAX];
	char *staged;
	void *cur;
	long err;

	if (mode > BPF_EXIST)
		return -EINVAL;
	if (map->map_flags & BPF_F_RDONLY_PROG)
		return -EPERM;
	if (user)
		bpfrt_rcu_read_lock();
	cur = map->ops->lookup(map, key);
	err = 1; /* not done here */
	if (map->type == BPF_MAP_TYPE_ARRAY || (cur && lock)) {
		if (!cur)
			err = -E2BIG;
		else if (mode == BPF_NOEXIST)
			err = -EEXIST;
		else
			copy_value(map, cur, value, true, lock), err = 0;
	}
	if (user)
		bpfrt_rcu_read_unlock();
	if (err != 1)
		return err;
	/* replaced or inserted: a new element, its lock zero */
	staged = map->value_size <= STACK_COPY_MAX ? stack_copy : malloc(map->value_size);
	if (!staged)
		return -ENOMEM;
	memcpy(staged, value, map->value_size);
	memset(staged + map->spin_lock_off, 0, LOCK_SIZE);
	err = user ? map->ops->sys_update(map, key, staged, mode)
		   : map->ops->update(map, key, staged, mode);
	if (staged != stack_copy)
		free(staged);
	return err;
}

/* User-space lookup of a map with a lock: the value around the lock (read
 * under it with BPF_F_LOCK), the lock's bytes 0. */
int bpfrt_map_lookup_locked_value(struct bpfrt_map *map, const void *key, void *value,
				  uint64_t flags)
{
	void *cur = map->ops->lookup(map, key);

	if (!cur)
		return -ENOENT;
	copy_value(map, value, cur, false, flags & BPF_F_LOCK);
	return 0;
}
