/* BPF_MAP_TYPE_PERF_EVENT_ARRAY and its perf buffers (bpfrt/perf_buffer.h).
 *
 * The map is max_entries slots, each empty or a ring that one perf buffer
 * gave it. A ring is a power-of-two byte array of records, each a u32
 * size (the raw size, as Linux pads it) then the data, 8-byte aligned.
 * Producers (programs on any thread that claim this CPU) are serialised
 * by the ring's spinlock: in user space two threads can run as one CPU.
 * The single consumer reads between tail and head without the lock: a
 * producer reads tail (acquire) under its lock before it writes, and
 * publishes head (release) after; the consumer publishes tail (release)
 * once a record is handled, so a producer never writes over a record not
 * yet read. A record that does not fit is lost: counted, and reported
 * before the ring's next samples (Linux puts a PERF_RECORD_LOST in the
 * stream at that point).
 *
 * Programs reach rings inside RCU read sections: bpfrt_perf_buffer_free
 * empties the slots, waits a grace period, then frees. */
#define _GNU_SOURCE
#include "maps/map.h"
#include "maps/spinlock.h"
#include "bpfrt/perf_buffer.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/rcu.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct pb_ring {
	struct bpfrt_spinlock lock;      /* producers */
	_Atomic uint64_t head;           /* bytes produced; written under lock */
	_Atomic uint64_t tail;           /* bytes consumed; written by the consumer */
	_Atomic uint64_t lost;           /* records that did not fit, not yet reported */
	uint64_t mask;                   /* size - 1 */
	int cpu;
	struct bpfrt_perf_buffer *pb;
	uint8_t *data;
};

struct bpfrt_perf_buffer {
	struct bpfrt_map *map;
	bpfrt_perf_buffer_sample_fn sample_cb;
	bpfrt_perf_buffer_lost_fn lost_cb;
	void *ctx;
	int efd;
	_Atomic int sleeping;            /* the consumer waits: producers notify */
	int ring_cnt;
	struct pb_ring *rings;
	uint8_t *scratch;                /* a record that wraps, made contiguous */
};

struct perf_event_array {
	struct bpfrt_map map;
	_Atomic(struct pb_ring *) *slots;
	_Atomic(struct bpfrt_perf_buffer *) owner;
};

static struct perf_event_array *to_pea(struct bpfrt_map *map)
{
	return (struct perf_event_array *)map;
}

/* ---- the producer: bpf_perf_event_output --------------------------------------- */

static void ring_copy_in(struct pb_ring *r, uint64_t pos, const void *src, size_t len)
{
	size_t off = (size_t)(pos & r->mask), first = r->mask + 1 - off;

	if (!len)
		return; /* src may be NULL (a zero-sized sample) */
	if (first > len)
		first = len;
	memcpy(r->data + off, src, first);
	memcpy(r->data, (const uint8_t *)src + first, len - first);
}

static const uint8_t zero_pad[8];

long bpfrt_perf_event_output(struct bpfrt_map *map, uint64_t flags, const void *data,
			     uint64_t size)
{
	struct perf_event_array *pea = to_pea(map);
	uint64_t index = flags & BPF_F_INDEX_MASK, head, rec;
	int cpu = bpfrt_map_this_cpu();
	struct pb_ring *r;
	uint32_t raw;

	if (map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY || (flags & ~BPF_F_INDEX_MASK))
		return -EINVAL;
	if (index == BPF_F_CURRENT_CPU)
		index = (uint64_t)cpu;
	if (index >= map->max_entries)
		return -E2BIG;
	r = atomic_load_explicit(&pea->slots[index], memory_order_acquire);
	if (!r)
		return -ENOENT;
	if (index != (uint64_t)cpu)
		return -EOPNOTSUPP;  /* Linux: the event is on another CPU */
	if (size > UINT32_MAX - 16)
		return -E2BIG;
	/* Linux's raw record: size + data padded to whole 8-byte words */
	raw = (uint32_t)(BPFRT_ROUND_UP(size + 4, 8) - 4);
	rec = 4 + (uint64_t)raw;
	bpfrt_spin_lock(&r->lock);
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (head + rec - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask + 1) {
		bpfrt_spin_unlock(&r->lock);
		atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	ring_copy_in(r, head, &raw, 4);
	ring_copy_in(r, head + 4, data, (size_t)size);
	ring_copy_in(r, head + 4 + size, zero_pad, (size_t)(raw - size));
	atomic_store_explicit(&r->head, head + rec, memory_order_release);
	bpfrt_spin_unlock(&r->lock);
	/* seq_cst pairs with the consumer's: it sees the record, or we see it
	 * sleeping and wake it */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->pb->sleeping, memory_order_relaxed)) {
		uint64_t one = 1;

		if (write(r->pb->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the consumer is awake anyway */
		}
	}
	return 0;
}

/* ---- the consumer ------------------------------------------------------------------- */

static void ring_copy_out(const struct pb_ring *r, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & r->mask), first = r->mask + 1 - off;

	if (first > len)
		first = len;
	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

static int ring_consume(struct bpfrt_perf_buffer *pb, struct pb_ring *r)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t lost = atomic_exchange_explicit(&r->lost, 0, memory_order_relaxed);
	int n = 0;

	if (lost) {
		if (pb->lost_cb)
			pb->lost_cb(pb->ctx, r->cpu, lost);
		n++;
	}
	while (tail < head) {
		uint32_t raw;
		size_t off;
		void *rec;

		ring_copy_out(r, tail, &raw, 4);
		off = (size_t)((tail + 4) & r->mask);
		if (off + raw <= r->mask + 1) {
			rec = r->data + off;
		} else {
			ring_copy_out(r, tail + 4, pb->scratch, raw);
			rec = pb->scratch;
		}
		pb->sample_cb(pb->ctx, r->cpu, rec, raw);
		tail += 4 + (uint64_t)raw;
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		n++;
	}
	return n;
}

int bpfrt_perf_buffer_consume(struct bpfrt_perf_buffer *pb)
{
	int n = 0;

	if (!pb)
		return bpfrt_err(-EINVAL, "perf buffer consume: NULL perf buffer");
	for (int i = 0; i < pb->ring_cnt; i++)
		n += ring_consume(pb, &pb->rings[i]);
	return n;
}

static bool any_pending(struct bpfrt_perf_buffer *pb)
{
	for (int i = 0; i < pb->ring_cnt; i++) {
		struct pb_ring *r = &pb->rings[i];

		if (atomic_load_explicit(&r->head, memory_order_acquire) !=
		    atomic_load_explicit(&r->tail, memory_order_relaxed) ||
		    atomic_load_explicit(&r->lost, memory_order_relaxed))
			return true;
	}
	return false;
}

int bpfrt_perf_buffer_poll(struct bpfrt_perf_buffer *pb, int timeout_ms)
{
	struct pollfd pfd;
	uint64_t cnt;

	if (!pb)
		return bpfrt_err(-EINVAL, "perf buffer poll: NULL perf buffer");
	pfd = (struct pollfd){ .fd = pb->efd, .events = POLLIN };
	atomic_store_explicit(&pb->sleeping, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (!any_pending(pb) && poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR) {
		atomic_store_explicit(&pb->sleeping, 0, memory_order_relaxed);
		return bpfrt_err(-errno, "perf buffer poll: %s", strerror(errno));
	}
	atomic_store_explicit(&pb->sleeping, 0, memory_order_relaxed);
	if (read(pb->efd, &cnt, sizeof(cnt)) < 0) {
		/* EAGAIN: nobody notified (data was there, or a timeout) */
	}
	return bpfrt_perf_buffer_consume(pb);
}

int bpfrt_perf_buffer_fd(const struct bpfrt_perf_buffer *pb)
{
	return pb ? pb->efd : -EINVAL;
}

static void pb_destroy(struct bpfrt_perf_buffer *pb)
{
	for (int i = 0; pb->rings && i < pb->ring_cnt; i++)
		free(pb->rings[i].data);
	free(pb->rings);
	free(pb->scratch);
	if (pb->efd >= 0)
		close(pb->efd);
	free(pb);
}

int bpfrt_perf_buffer_new(struct bpfrt_map *map, size_t page_cnt,
			  bpfrt_perf_buffer_sample_fn sample_cb, bpfrt_perf_buffer_lost_fn lost_cb,
			  void *ctx, const struct bpfrt_perf_buffer_opts *opts,
			  struct bpfrt_perf_buffer **out)
{
	size_t psize = (size_t)sysconf(_SC_PAGESIZE), bytes;
	struct bpfrt_perf_buffer *pb, *none = NULL;
	struct perf_event_array *pea;

	if (!out)
		return bpfrt_err(-EINVAL, "perf buffer new: NULL result pointer");
	*out = NULL;
	if (!OPTS_VALID(opts, bpfrt_perf_buffer_opts))
		return -EINVAL;
	if (!map || map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return bpfrt_err(-EINVAL, "perf buffer new: map '%s' is not a perf event array",
				 map ? map->name : "(null)");
	if (!sample_cb)
		return bpfrt_err(-EINVAL, "perf buffer new: map '%s': no sample callback",
				 map->name);
	if (!page_cnt || (page_cnt & (page_cnt - 1)) || page_cnt > (1u << 20))
		return bpfrt_err(-EINVAL, "perf buffer new: map '%s': page_cnt %zu must be a "
				 "power of 2", map->name, page_cnt);
	bytes = page_cnt * psize;
	pea = to_pea(map);
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return bpfrt_err(-ENOMEM, "perf buffer new: out of memory");
	pb->map = map;
	pb->sample_cb = sample_cb;
	pb->lost_cb = lost_cb;
	pb->ctx = ctx;
	pb->ring_cnt = bpfrt_map_nr_cpus() < (int)map->max_entries ? bpfrt_map_nr_cpus()
								    : (int)map->max_entries;
	pb->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pb->rings = calloc((size_t)pb->ring_cnt, sizeof(*pb->rings));
	pb->scratch = malloc(bytes);
	if (pb->efd < 0 || !pb->rings || !pb->scratch) {
		pb_destroy(pb);
		return bpfrt_err(-ENOMEM, "perf buffer new: map '%s': out of memory", map->name);
	}
	for (int i = 0; i < pb->ring_cnt; i++) {
		struct pb_ring *r = &pb->rings[i];

		r->mask = bytes - 1;
		r->cpu = i;
		r->pb = pb;
		if (!(r->data = calloc(1, bytes))) {
			pb_destroy(pb);
			return bpfrt_err(-ENOMEM, "perf buffer new: map '%s': out of memory for "
					 "%zu pages per CPU", map->name, page_cnt);
		}
	}
	if (!atomic_compare_exchange_strong(&pea->owner, &none, pb)) {
		pb_destroy(pb);
		return bpfrt_err(-EBUSY, "perf buffer new: map '%s' has a perf buffer already",
				 map->name);
	}
	for (int i = 0; i < pb->ring_cnt; i++)
		atomic_store_explicit(&pea->slots[i], &pb->rings[i], memory_order_release);
	*out = pb;
	return 0;
}

void bpfrt_perf_buffer_free(struct bpfrt_perf_buffer *pb)
{
	struct perf_event_array *pea;

	if (!pb)
		return;
	pea = to_pea(pb->map);
	for (int i = 0; i < pb->ring_cnt; i++)
		atomic_store_explicit(&pea->slots[i], NULL, memory_order_release);
	bpfrt_rcu_synchronize();  /* outputs in flight are done with the rings */
	atomic_store_explicit(&pea->owner, NULL, memory_order_release);
	pb_destroy(pb);
}

/* ---- the map ------------------------------------------------------------------------- */

/* Linux: a slot holds a perf event fd; bpfrt's rings come from
 * bpfrt_perf_buffer_new, so user-space element access is not offered. */
static int pea_sys_lookup(struct bpfrt_map *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

static int pea_sys_update(struct bpfrt_map *map, const void *key, const void *value,
			  uint64_t flags)
{
	return -EOPNOTSUPP;
}

static int pea_sys_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

static void *pea_lookup(struct bpfrt_map *map, const void *key)
{
	return NULL;
}

static long pea_update(struct bpfrt_map *map, const void *key, const void *value,
		       uint64_t flags)
{
	return -EOPNOTSUPP;
}

static long pea_delete(struct bpfrt_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

#define PEA_CREATE_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			  BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | BPF_F_PRESERVE_ELEMS)

static int pea_alloc_check(const struct bpfrt_map *attr)
{
	if (attr->key_size != 4 || attr->value_size != 4 || attr->max_entries == 0 ||
	    (attr->map_flags & ~PEA_CREATE_FLAGS))
		return bpfrt_err(-EINVAL, "perf event array '%s': key_size and value_size must "
				 "be 4, max_entries non-zero, flags known (got %u, %u, %u, 0x%x)",
				 attr->name, attr->key_size, attr->value_size, attr->max_entries,
				 attr->map_flags);
	return 0;
}

static int pea_mem_size(const struct bpfrt_map *attr, uint64_t *bytes)
{
	*bytes = sizeof(struct perf_event_array) + (uint64_t)attr->max_entries * sizeof(void *);
	return 0;
}

static int pea_alloc(const struct bpfrt_map *attr, struct bpfrt_map **out)
{
	struct perf_event_array *pea = calloc(1, sizeof(*pea));

	if (!pea)
		return -ENOMEM;
	pea->map = *attr;
	pea->slots = calloc(attr->max_entries, sizeof(*pea->slots));
	if (!pea->slots) {
		free(pea);
		return -ENOMEM;
	}
	*out = &pea->map;
	return 0;
}

/* A perf buffer must be freed before its map. */
static void pea_free(struct bpfrt_map *map)
{
	struct perf_event_array *pea = to_pea(map);

	free(pea->slots);
	free(pea);
}

const struct bpfrt_map_ops bpfrt_perf_event_array_map_ops = {
	.alloc_check = pea_alloc_check,
	.mem_size = pea_mem_size,
	.alloc = pea_alloc,
	.free = pea_free,
	.sys_lookup = pea_sys_lookup,
	.sys_update = pea_sys_update,
	.sys_delete = pea_sys_delete,
	.get_next_key = bpfrt_array_get_next_key,
	.lookup = pea_lookup,
	.update = pea_update,
	.delete = pea_delete,
};
