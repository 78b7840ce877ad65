/* BPF_MAP_TYPE_RINGBUF: a multi-producer, single-consumer byte ring with
 * Linux's record format: an 8-byte header (u32 length with the BUSY and
 * DISCARD bits, u32 page offset back to the ring) before each record, 8-byte
 * aligned. The data pages are mapped twice, back to back, so a record that
 * wraps past the end is still contiguous for the program writing it.
 *
 * Mapping: [ring struct, page-rounded][data N][same data N again]. The
 * header's page offset lets submit/discard find the ring from the record
 * pointer alone, as bpf_ringbuf_submit() takes no map. Producers serialise
 * on a spinlock only to reserve; they fill and commit in parallel, and the
 * consumer stops at the first record still BUSY. */
#define _GNU_SOURCE
#include "maps/ringbuf.h"
#include "core/error.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#define RINGBUF_MAX_DATA_SZ   (1u << 30)
#define RINGBUF_MAX_RECORD_SZ (UINT32_MAX / 4)

size_t bpfrt_ringbuf_page_size(void)
{
	static size_t cached;  /* racy but idempotent */

	if (!__atomic_load_n(&cached, __ATOMIC_RELAXED))
		__atomic_store_n(&cached, (size_t)sysconf(_SC_PAGESIZE), __ATOMIC_RELAXED);
	return __atomic_load_n(&cached, __ATOMIC_RELAXED);
}

/* RINGBUF and USER_RINGBUF alike (Linux's ringbuf_map_alloc). */
static int ringbuf_alloc_check(const struct bpfrt_map *attr)
{
	const char *what = attr->type == BPF_MAP_TYPE_USER_RINGBUF ? "user_ringbuf" : "ringbuf";
	uint32_t n = attr->max_entries;

	if (attr->map_flags & ~BPF_F_NUMA_NODE)
		return bpfrt_err(-EINVAL, "%s '%s': invalid map_flags 0x%x", what,
				 attr->name, attr->map_flags);
	if (attr->key_size || attr->value_size)
		return bpfrt_err(-EINVAL, "%s '%s': key_size and value_size must be 0", what,
				 attr->name);
	if (n == 0 || (n & (n - 1)) || n % bpfrt_ringbuf_page_size())
		return bpfrt_err(-EINVAL, "%s '%s': max_entries %u must be a power of 2 "
				 "and a multiple of the page size", what, attr->name, n);
	if (n > RINGBUF_MAX_DATA_SZ)
		return bpfrt_err(-E2BIG, "%s '%s': max_entries %u too large", what,
				 attr->name, n);
	return 0;
}

/* Reserves address space, then maps the anonymous meta pages and the memfd
 * data pages twice into it. shared (BPFRT_MAP_F_SHARED): the meta pages
 * come first in the memfd too, so another process mapping it sees the
 * positions, and the fd is kept in *shm_fd. */
static void *map_ring_memory(size_t meta, size_t data, bool shared, int *shm_fd)
{
	size_t total = meta + 2 * data;
	off_t data_off = shared ? (off_t)meta : 0;
	char *base;
	int fd;

	base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	fd = memfd_create("bpfrt-ringbuf", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, data_off + (off_t)data) ||
	    (shared ? mmap(base, meta, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED, fd, 0)
		    : mmap(base, meta, PROT_READ | PROT_WRITE,
			   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED ||
	    mmap(base + meta, data, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED,
		 fd, data_off) == MAP_FAILED ||
	    mmap(base + meta + data, data, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED,
		 fd, data_off) == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		munmap(base, total);
		return NULL;
	}
	if (shared)
		*shm_fd = fd;
	else
		close(fd);  /* the mappings keep the pages */
	return base;
}

/* The data pages are mapped twice but exist once. */
static int ringbuf_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = BPFRT_ROUND_UP(sizeof(struct ringbuf), bpfrt_ringbuf_page_size()) + (uint64_t)attr->max_entries;
	return 0;
}

static int ringbuf_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	size_t meta = BPFRT_ROUND_UP(sizeof(struct ringbuf), bpfrt_ringbuf_page_size());
	int shm_fd = -1;
	struct ringbuf *rb = map_ring_memory(meta, attr->max_entries,
					     attr->bpfrt_flags & BPFRT_MAP_F_SHARED, &shm_fd);

	if (!rb)
		return -ENOMEM;
	rb->map = *attr;
	rb->shm_fd = shm_fd;
	rb->meta_size = meta;
	rb->mapping_size = meta + 2 * (size_t)attr->max_entries;
	rb->mask = attr->max_entries - 1;
	rb->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rb->event_fd < 0) {
		if (shm_fd >= 0)
			close(shm_fd);
		munmap(rb, rb->mapping_size);
		return -ENOMEM;
	}
	pthread_mutex_init(&rb->consumer_lock, NULL);
	*out = &rb->map;
	return 0;
}

static void ringbuf_free(struct bpfrt_map *map)
{
	struct ringbuf *rb = to_ringbuf(map);

	close(rb->event_fd);
	if (rb->shm_fd >= 0)
		close(rb->shm_fd);
	pthread_mutex_destroy(&rb->consumer_lock);
	munmap(rb, rb->mapping_size);
}

static void ringbuf_shm(struct bpfrt_map *map, struct bpfrt_map_shm *out)
{
	struct ringbuf *rb = to_ringbuf(map);

	out->fd = rb->shm_fd;
	out->layout = BPFRT_MAP_SHM_RINGBUF;
	out->size = rb->meta_size + rb->mask + 1;
	out->data_off = rb->meta_size;
	out->data_size = rb->mask + 1;
	out->consumer_pos_off = offsetof(struct ringbuf, consumer_pos);
	out->producer_pos_off = offsetof(struct ringbuf, producer_pos);
}

/* ---- producers ---------------------------------------------------------- */

static void notify(struct ringbuf *rb)
{
	uint64_t one = 1;
	ssize_t n = write(rb->event_fd, &one, sizeof(one));

	(void)n;  /* EAGAIN: the counter is already non-zero, consumer will wake */
}

void *bpfrt_ringbuf_reserve(struct bpfrt_map *map, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb;
	struct ringbuf_hdr *hdr;
	uint64_t len, cons, prod;

	if (!map || map->type != BPF_MAP_TYPE_RINGBUF || flags ||
	    size > RINGBUF_MAX_RECORD_SZ)
		return NULL;
	rb = to_ringbuf(map);
	len = BPFRT_ROUND_UP(size + BPF_RINGBUF_HDR_SZ, 8);
	if (len > rb->mask + 1)
		return NULL;
	cons = atomic_load_explicit(&rb->consumer_pos, memory_order_acquire);
	bpfrt_spin_lock(&rb->lock);
	prod = atomic_load_explicit(&rb->producer_pos, memory_order_relaxed);
	/* The producer may get at most size - 1 bytes ahead of the consumer. */
	if (prod + len - cons > rb->mask) {
		bpfrt_spin_unlock(&rb->lock);
		return NULL;
	}
	hdr = (struct ringbuf_hdr *)(ring_data(rb) + (prod & rb->mask));
	atomic_store_explicit(&hdr->len, (uint32_t)size | BPF_RINGBUF_BUSY_BIT,
			      memory_order_relaxed);
	hdr->pg_off = (uint32_t)(((char *)hdr - (char *)rb) / bpfrt_ringbuf_page_size());
	/* release: the BUSY header is visible before the new position. */
	atomic_store_explicit(&rb->producer_pos, prod + len, memory_order_release);
	bpfrt_spin_unlock(&rb->lock);
	return hdr + 1;
}

static void commit(void *data, uint64_t flags, bool discard)
{
	struct ringbuf_hdr *hdr = (struct ringbuf_hdr *)data - 1;
	uintptr_t page = (uintptr_t)hdr & ~(uintptr_t)(bpfrt_ringbuf_page_size() - 1);
	struct ringbuf *rb = (struct ringbuf *)(page - (uintptr_t)hdr->pg_off * bpfrt_ringbuf_page_size());
	uint32_t len = atomic_load_explicit(&hdr->len, memory_order_relaxed);
	uint64_t rec_pos, cons_pos;

	len &= ~BPF_RINGBUF_BUSY_BIT;
	if (discard)
		len |= BPF_RINGBUF_DISCARD_BIT;
	/* release: the record's contents are visible before it stops being BUSY. */
	atomic_store_explicit(&hdr->len, len, memory_order_release);

	rec_pos = (uint64_t)((char *)hdr - ring_data(rb));
	cons_pos = atomic_load_explicit(&rb->consumer_pos, memory_order_acquire) & rb->mask;
	/* Wake the consumer when it has caught up to this record (it is
	 * probably waiting), unless told otherwise. */
	if (flags & BPF_RB_FORCE_WAKEUP)
		notify(rb);
	else if (cons_pos == rec_pos && !(flags & BPF_RB_NO_WAKEUP))
		notify(rb);
}

void bpfrt_ringbuf_submit(void *data, uint64_t flags)
{
	commit(data, flags, false);
}

void bpfrt_ringbuf_discard(void *data, uint64_t flags)
{
	commit(data, flags, true);
}

long bpfrt_ringbuf_output(struct bpfrt_map *map, const void *data, uint64_t size,
			  uint64_t flags)
{
	void *rec;

	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return -EINVAL;
	rec = bpfrt_ringbuf_reserve(map, size, 0);
	if (!rec)
		return -EAGAIN;
	if (size)	/* data may be NULL with size 0 (ARG_CONST_SIZE_OR_ZERO) */
		memcpy(rec, data, size);
	commit(rec, flags, false);
	return 0;
}

uint64_t bpfrt_ringbuf_query(struct bpfrt_map *map, uint64_t flags)
{
	struct ringbuf *rb;
	uint64_t cons, prod;

	if (!map || map->type != BPF_MAP_TYPE_RINGBUF)
		return 0;
	rb = to_ringbuf(map);
	cons = atomic_load_explicit(&rb->consumer_pos, memory_order_acquire);
	prod = atomic_load_explicit(&rb->producer_pos, memory_order_acquire);
	switch (flags) {
	case BPF_RB_AVAIL_DATA:
		return prod - cons;
	case BPF_RB_RING_SIZE:
		return rb->mask + 1;
	case BPF_RB_CONS_POS:
		return cons;
	case BPF_RB_PROD_POS:
		return prod;
	default:
		return 0;
	}
}

/* ---- consumer ------------------------------------------------------------ */

static int check_ringbuf(const struct bpfrt_map *map, const char *op)
{
	if (!map)
		return bpfrt_err(-EINVAL, "%s: NULL map", op);
	if (map->type != BPF_MAP_TYPE_RINGBUF)
		return bpfrt_err(-EINVAL, "%s: map '%s' is not a RINGBUF", op, map->name);
	return 0;
}

static int consume_locked(struct ringbuf *rb, bpfrt_ringbuf_sample_fn fn, void *ctx)
{
	uint64_t cons = atomic_load_explicit(&rb->consumer_pos, memory_order_relaxed);
	int64_t count = 0;
	bool progress;

	do {
		uint64_t prod = atomic_load_explicit(&rb->producer_pos, memory_order_acquire);

		progress = false;
		while (cons < prod) {
			struct ringbuf_hdr *hdr =
				(struct ringbuf_hdr *)(ring_data(rb) + (cons & rb->mask));
			uint32_t len = atomic_load_explicit(&hdr->len, memory_order_acquire);
			uint32_t size = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			int err;

			if (len & BPF_RINGBUF_BUSY_BIT)
				goto out;  /* records are consumed in order */
			progress = true;
			cons += BPFRT_ROUND_UP((uint64_t)size + BPF_RINGBUF_HDR_SZ, 8);
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				err = fn(ctx, hdr + 1, size);
				if (err < 0) {
					atomic_store_explicit(&rb->consumer_pos, cons,
							      memory_order_release);
					return err;
				}
				count++;
			}
			/* release: done reading before producers reuse the space. */
			atomic_store_explicit(&rb->consumer_pos, cons, memory_order_release);
		}
	} while (progress);
out:
	return count > INT_MAX ? INT_MAX : (int)count;
}

int bpfrt_ringbuf_consume(struct bpfrt_map *map, bpfrt_ringbuf_sample_fn fn, void *ctx)
{
	struct ringbuf *rb;
	int ret;

	ret = check_ringbuf(map, "bpfrt_ringbuf_consume");
	if (ret)
		return ret;
	if (!fn)
		return bpfrt_err(-EINVAL, "bpfrt_ringbuf_consume: NULL callback");
	rb = to_ringbuf(map);
	pthread_mutex_lock(&rb->consumer_lock);
	ret = consume_locked(rb, fn, ctx);
	pthread_mutex_unlock(&rb->consumer_lock);
	return ret;
}

int bpfrt_ringbuf_fd(const struct bpfrt_map *map)
{
	int err = check_ringbuf(map, "bpfrt_ringbuf_fd");

	return err ? err : ((const struct ringbuf *)map)->event_fd;
}

int bpfrt_ringbuf_poll(struct bpfrt_map *map, bpfrt_ringbuf_sample_fn fn, void *ctx,
		       int timeout_ms)
{
	struct pollfd pfd;
	uint64_t counter;
	ssize_t n;
	int ret;

	ret = bpfrt_ringbuf_consume(map, fn, ctx);
	if (ret != 0)
		return ret;
	pfd.fd = to_ringbuf(map)->event_fd;
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : bpfrt_err(-errno, "ringbuf '%s': poll failed",
						       map->name);
	if (ret == 0)
		return 0;
	n = read(pfd.fd, &counter, sizeof(counter));  /* re-arm */
	(void)n;
	return bpfrt_ringbuf_consume(map, fn, ctx);
}

/* ---- element ops: none, as Linux (-ENOTSUPP there) ------------------------ */

static int ringbuf_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

static int ringbuf_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			      uint64_t flags)
{
	return -EOPNOTSUPP;
}

static int ringbuf_sys_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

static int ringbuf_get_next_key(struct bpfrt_map *map, const void *key, void *next_key)
{
	return -EOPNOTSUPP;
}

static void *ringbuf_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long ringbuf_update(struct bpfrt_map *map, const void *key, const void *value,
			   uint64_t flags)
{
	return -EOPNOTSUPP;
}

static long ringbuf_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

/* The ops of both ring kinds; only the ring programs produce into is
 * shareable. */
#define RINGBUF_OPS							\
	.alloc_check = ringbuf_alloc_check,				\
	.mem_size = ringbuf_mem_size,					\
	.alloc = ringbuf_alloc,						\
	.free = ringbuf_free,						\
	.sys_lookup = ringbuf_sys_lookup,				\
	.sys_update = ringbuf_sys_update,				\
	.sys_delete = ringbuf_sys_delete,				\
	.get_next_key = ringbuf_get_next_key,				\
	.lookup = ringbuf_lookup,					\
	.update = ringbuf_update,					\
	.delete = ringbuf_delete

/* BPF_MAP_TYPE_USER_RINGBUF: the same ring, produced by user space
 * (bpfrt/user_ringbuf.h) and drained by programs (user_ringbuf.c). */
const struct bpfrt_map_ops bpfrt_user_ringbuf_map_ops = { RINGBUF_OPS };

const struct bpfrt_map_ops bpfrt_ringbuf_map_ops = { RINGBUF_OPS, .shm = ringbuf_shm };
