/* User ring buffers: the user side of BPF_MAP_TYPE_USER_RINGBUF, shaped
 * like libbpf's user_ring_buffer__new/reserve/reserve_blocking/submit/
 * discard/free. Included by bpfrt/bpfrt.h.
 *
 * User space produces, programs consume: a program calls
 * bpf_user_ringbuf_drain(&map, callback, ctx, flags), which hands each
 * submitted sample to callback(const struct bpf_dynptr *sample, ctx) as
 * a read-only dynptr (bpf_dynptr_read copies out of it) until the
 * callback returns 1 or the ring is empty, and returns the number of
 * samples drained, discarded ones not counted (or -EBUSY while another
 * drain runs, -EINVAL for flags other than BPF_RB_NO_WAKEUP and
 * BPF_RB_FORCE_WAKEUP, as Linux). The map is created as a RINGBUF is
 * (key and value size 0, max_entries a power of two and a multiple of
 * the page size). Records are Linux's: an 8-byte header with the BUSY and
 * DISCARD bits, 8-byte aligned.
 *
 * Threads: producers on any number of threads (reservations are
 * serialised under a lock; libbpf asks its callers to serialise them) and
 * programs draining on any others; a sample belongs to its producer from
 * reserve until submit or discard, which may come in any order. A reserve
 * that finds no space fails at once with ENOSPC; reserve_blocking waits
 * for a drain to make room. */
#ifndef BPFRT_PUBLIC_USER_RINGBUF_H
#define BPFRT_PUBLIC_USER_RINGBUF_H

#include "bpfrt/export.h"
#include "bpfrt/opts.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_map;
struct bpfrt_user_ring_buffer;

struct bpfrt_user_ring_buffer_opts {
	size_t sz;   /* sizeof(struct bpfrt_user_ring_buffer_opts) */
};
#define bpfrt_user_ring_buffer_opts__last_field sz

/* user_ring_buffer__new: a producer for map (a USER_RINGBUF). Returns 0
 * and *rb, or -EINVAL (not a USER_RINGBUF, bad opts; bpfrt_last_error()
 * names which) or -ENOMEM. The map must outlive it. */
BPFRT_API int bpfrt_user_ring_buffer_new(struct bpfrt_map *map,
					 const struct bpfrt_user_ring_buffer_opts *opts,
					 struct bpfrt_user_ring_buffer **rb);
/* user_ring_buffer__reserve: size bytes (8-byte aligned) for a sample, to
 * fill and then submit or discard; NULL with errno E2BIG (larger than the
 * ring, or than a dynptr's 16 MiB - 1) or ENOSPC (not enough space now). */
BPFRT_API void *bpfrt_user_ring_buffer_reserve(struct bpfrt_user_ring_buffer *rb, uint32_t size);
/* user_ring_buffer__reserve_blocking: as reserve, waiting up to
 * timeout_ms (-1: forever, 0: not at all) for a drain to make room; NULL
 * with errno ENOSPC once the time is up, EINVAL for a timeout below -1,
 * E2BIG as reserve. */
BPFRT_API void *bpfrt_user_ring_buffer_reserve_blocking(struct bpfrt_user_ring_buffer *rb,
							uint32_t size, int timeout_ms);
/* user_ring_buffer__submit / __discard: the sample becomes visible to
 * drains (discard: is skipped by them). */
BPFRT_API void bpfrt_user_ring_buffer_submit(struct bpfrt_user_ring_buffer *rb, void *sample);
BPFRT_API void bpfrt_user_ring_buffer_discard(struct bpfrt_user_ring_buffer *rb, void *sample);
/* user_ring_buffer__free: samples reserved and not yet submitted stay
 * BUSY (drains stop at them). NULL: no-op. */
BPFRT_API void bpfrt_user_ring_buffer_free(struct bpfrt_user_ring_buffer *rb);

#ifdef __cplusplus
}
#endif
#endif
