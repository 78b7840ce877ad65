/* BPF_MAP_TYPE_USER_RINGBUF: user space produces (bpfrt/user_ringbuf.h,
 * libbpf's user_ring_buffer__* design), programs consume with
 * bpf_user_ringbuf_drain (209), Linux's semantics and error codes. The
 * ring is ringbuf.c's (maps/ringbuf.h): the same headers, the data pages
 * mapped twice so a sample is contiguous for the dynptr over it.
 *
 * Ordering, as Linux and libbpf: a producer writes the BUSY header, then
 * publishes producer_pos (release); submit clears BUSY (release) after
 * the sample's bytes. A drain reads producer_pos and the header with
 * acquire, stops at a BUSY sample, and publishes consumer_pos (release)
 * after the callback is done with the sample, so a producer (acquire)
 * reuses the space only then. Drains are one at a time (drain_busy,
 * -EBUSY for a second, as Linux's busy bit); producers reserve under the
 * ring's spinlock. A producer waiting for space sleeps on a futex over
 * consumed_seq, which every drain that moved consumer_pos bumps before
 * waking the waiters (unless BPF_RB_NO_WAKEUP): a drain between the
 * producer's failed attempt and its sleep changes the word, so the sleep
 * returns at once and no wakeup is lost. */
#define _GNU_SOURCE
#include "maps/ringbuf.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/run.h"
#include "helpers/callback.h"
#include "helpers/dynptr.h"
#include "interp/check.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_DRAIN_SAMPLES (128 * 1024) /* BPF_MAX_USER_RINGBUF_SAMPLES */

struct bpfrt_user_ring_buffer {
	struct ringbuf *rb;
};

static uint32_t record_len(uint32_t size)
{
	return (uint32_t)BPFRT_ROUND_UP((uint64_t)size + BPF_RINGBUF_HDR_SZ, 8);
}

/* ---- program side: the drain --------------------------------------------- */

/* The next sample: 0 and it, -ENODATA (none yet), -EAGAIN (a discarded
 * one, skipped), or -EINVAL/-E2BIG for a ring whose positions or header
 * are not what a producer writes (user memory: anything may be there). */
static int peek(struct ringbuf *rb, void **sample, uint32_t *size)
{
	uint64_t prod = atomic_load_explicit(&rb->producer_pos, memory_order_acquire);
	uint64_t cons = atomic_load_explicit(&rb->consumer_pos, memory_order_relaxed);
	struct ringbuf_hdr *hdr;
	uint32_t len, flags, total;

	if (prod % 8)
		return -EINVAL;
	if (cons >= prod)
		return -ENODATA;
	hdr = (struct ringbuf_hdr *)(ring_data(rb) + (cons & rb->mask));
	len = atomic_load_explicit(&hdr->len, memory_order_acquire);
	flags = len & (BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	len &= ~flags;
	total = record_len(len);
	if (total > prod - cons)
		return -EINVAL;
	if (total > rb->mask + 1 || len > BPFRT_DYNPTR_MAX_SIZE)
		return -E2BIG;
	if (flags & BPF_RINGBUF_DISCARD_BIT) {
		atomic_store_explicit(&rb->consumer_pos, cons + total, memory_order_release);
		return -EAGAIN;
	}
	if (flags & BPF_RINGBUF_BUSY_BIT)
		return -ENODATA;
	*sample = hdr + 1;
	*size = len;
	return 0;
}

static void wake_producers(struct ringbuf *rb)
{
	atomic_fetch_add_explicit(&rb->consumed_seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&rb->space_waiters, memory_order_seq_cst))
		syscall(SYS_futex, &rb->consumed_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The checking interpreter holds the callback to two more regions for
 * the call: the dynptr (on this helper's stack) and the sample, both
 * read-only. */
static bool check_regions(struct bpfrt_map *map, const struct bpfrt_dynptr *d, void *sample,
			  uint32_t size)
{
	struct bpfrt_check_run *cr = bpfrt_run_state.check;

	if (!cr)
		return true;
	return bpfrt_check_add_region(cr, (uintptr_t)d, sizeof(*d), BPFRT_REGION_DYNPTR, false,
				      map) &&
	       bpfrt_check_add_region(cr, (uintptr_t)sample, size, BPFRT_REGION_RINGBUF, false,
				      map);
}

static void release_regions(const struct bpfrt_dynptr *d, void *sample)
{
	struct bpfrt_check_run *cr = bpfrt_run_state.check;

	if (cr) {
		bpfrt_check_release_region(cr, (uintptr_t)d);
		bpfrt_check_release_region(cr, (uintptr_t)sample);
	}
}

uint64_t bpfrt_bpf_user_ringbuf_drain(uint64_t map_arg, uint64_t callback, uint64_t ctx,
				      uint64_t flags, uint64_t r5)
{
	struct bpfrt_map *map = (struct bpfrt_map *)(uintptr_t)map_arg;
	struct ringbuf *rb;
	uint32_t idle = 0;
	int64_t samples, discarded = 0, ret = 0;

	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return (uint64_t)-EINVAL;
	if (!map || map->type != BPF_MAP_TYPE_USER_RINGBUF)
		return (uint64_t)-EINVAL; /* the verifier allows only these */
	rb = to_ringbuf(map);
	if (!atomic_compare_exchange_strong_explicit(&rb->drain_busy, &idle, 1,
						     memory_order_acquire, memory_order_relaxed))
		return (uint64_t)-EBUSY;
	for (samples = 0; samples < MAX_DRAIN_SAMPLES && ret == 0; samples++) {
		struct bpfrt_dynptr dynptr;
		void *sample;
		uint32_t size;
		int err = peek(rb, &sample, &size);

		if (err == -ENODATA)
			break;
		if (err == -EAGAIN) {
			discarded++;
			continue;
		}
		if (err) {
			ret = err;
			goto out;
		}
		bpfrt_dynptr_init(&dynptr, sample, BPFRT_DYNPTR_LOCAL, size, true);
		if (!check_regions(map, &dynptr, sample, size)) {
			ret = -ENOMEM;
			goto out;
		}
		ret = (int64_t)bpfrt_callback_invoke(callback, (uintptr_t)&dynptr, ctx, 0, 0, 0);
		release_regions(&dynptr, sample);
		if (bpfrt_run_aborted())
			ret = 1;
		/* done with the sample: its space goes back to the producers */
		atomic_store_explicit(&rb->consumer_pos,
				      atomic_load_explicit(&rb->consumer_pos, memory_order_relaxed) +
				      record_len(size), memory_order_release);
	}
	ret = samples - discarded;
out:
	atomic_store_explicit(&rb->drain_busy, 0, memory_order_release);
	if ((flags & BPF_RB_FORCE_WAKEUP) || (!(flags & BPF_RB_NO_WAKEUP) && samples > 0))
		wake_producers(rb);
	return (uint64_t)ret;
}

/* ---- user side: producers -------------------------------------------------- */

int bpfrt_user_ring_buffer_new(struct bpfrt_map *map,
			       const struct bpfrt_user_ring_buffer_opts *opts,
			       struct bpfrt_user_ring_buffer **out)
{
	struct bpfrt_user_ring_buffer *urb;

	if (!out)
		return bpfrt_err(-EINVAL, "user ring buffer new: NULL result pointer");
	*out = NULL;
	if (!OPTS_VALID(opts, bpfrt_user_ring_buffer_opts))
		return -EINVAL;
	if (!map || map->type != BPF_MAP_TYPE_USER_RINGBUF)
		return bpfrt_err(-EINVAL, "user ring buffer new: map '%s' is not a USER_RINGBUF",
				 map ? map->name : "(null)");
	urb = calloc(1, sizeof(*urb));
	if (!urb)
		return bpfrt_err(-ENOMEM, "user ring buffer new: map '%s': out of memory",
				 map->name);
	urb->rb = to_ringbuf(map);
	*out = urb;
	return 0;
}

void bpfrt_user_ring_buffer_free(struct bpfrt_user_ring_buffer *urb)
{
	free(urb);
}

void *bpfrt_user_ring_buffer_reserve(struct bpfrt_user_ring_buffer *urb, uint32_t size)
{
	struct ringbuf *rb;
	struct ringbuf_hdr *hdr;
	uint64_t cons, prod, ring;
	uint32_t total;

	if (!urb) {
		errno = EINVAL;
		return NULL;
	}
	rb = urb->rb;
	ring = rb->mask + 1;
	/* the top bits are the header's flags; a drain refuses a sample no
	 * dynptr can hold (-E2BIG): refuse both here */
	if (size > BPFRT_DYNPTR_MAX_SIZE || record_len(size) > ring) {
		errno = E2BIG;
		return NULL;
	}
	total = record_len(size);
	bpfrt_spin_lock(&rb->lock);
	cons = atomic_load_explicit(&rb->consumer_pos, memory_order_acquire);
	prod = atomic_load_explicit(&rb->producer_pos, memory_order_relaxed);
	if (ring - (prod - cons) < total) {
		bpfrt_spin_unlock(&rb->lock);
		errno = ENOSPC;
		return NULL;
	}
	hdr = (struct ringbuf_hdr *)(ring_data(rb) + (prod & rb->mask));
	atomic_store_explicit(&hdr->len, size | BPF_RINGBUF_BUSY_BIT, memory_order_relaxed);
	hdr->pg_off = 0;
	/* release: the BUSY header is visible before the new position */
	atomic_store_explicit(&rb->producer_pos, prod + total, memory_order_release);
	bpfrt_spin_unlock(&rb->lock);
	return hdr + 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void *bpfrt_user_ring_buffer_reserve_blocking(struct bpfrt_user_ring_buffer *urb,
					      uint32_t size, int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	struct ringbuf *rb;
	void *sample;

	if (!urb || timeout_ms < -1) {
		errno = EINVAL;
		return NULL;
	}
	rb = urb->rb;
	atomic_fetch_add_explicit(&rb->space_waiters, 1, memory_order_seq_cst);
	for (;;) {
		uint32_t seq = atomic_load_explicit(&rb->consumed_seq, memory_order_seq_cst);
		struct timespec rel, *tsp = NULL;
		int64_t left = 0;

		sample = bpfrt_user_ring_buffer_reserve(urb, size);
		if (sample || errno != ENOSPC || timeout_ms == 0)
			break;
		if (timeout_ms > 0) {
			left = deadline - now_ms();
			if (left <= 0)
				break;
			rel.tv_sec = left / 1000;
			rel.tv_nsec = (left % 1000) * 1000000;
			tsp = &rel;
		}
		/* returns at once if a drain bumped the word since seq */
		syscall(SYS_futex, &rb->consumed_seq, FUTEX_WAIT_PRIVATE, seq, tsp, NULL, 0);
	}
	atomic_fetch_sub_explicit(&rb->space_waiters, 1, memory_order_seq_cst);
	return sample; /* errno from the last attempt: ENOSPC, E2BIG */
}

static void commit(struct bpfrt_user_ring_buffer *urb, void *sample, bool discard)
{
	struct ringbuf_hdr *hdr = (struct ringbuf_hdr *)sample - 1;
	uint32_t len;

	if (!urb || !sample)
		return;
	len = atomic_load_explicit(&hdr->len, memory_order_relaxed) & ~BPF_RINGBUF_BUSY_BIT;
	if (discard)
		len |= BPF_RINGBUF_DISCARD_BIT;
	/* release: the sample's bytes are visible before it stops being BUSY */
	atomic_store_explicit(&hdr->len, len, memory_order_release);
}

void bpfrt_user_ring_buffer_submit(struct bpfrt_user_ring_buffer *urb, void *sample)
{
	commit(urb, sample, false);
}

void bpfrt_user_ring_buffer_discard(struct bpfrt_user_ring_buffer *urb, void *sample)
{
	commit(urb, sample, true);
}
