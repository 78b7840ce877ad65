/* Perf buffers: the user side of BPF_MAP_TYPE_PERF_EVENT_ARRAY, shaped
 * like libbpf's perf_buffer__new/poll/consume/free. Included by
 * bpfrt/bpfrt.h.
 *
 * A perf event array (key and value size 4, max_entries slots; the loader
 * makes max_entries the number of possible CPUs when .maps leaves it 0,
 * as libbpf does) carries records from programs' bpf_perf_event_output to
 * user space. In Linux each slot holds a perf event of one CPU; in bpfrt
 * bpfrt_perf_buffer_new gives slot i a ring of page_cnt pages for "CPU"
 * i, CPU meaning the number the producing thread runs on
 * (sched_getcpu(), as for per-CPU maps: docs/MAPS.md). A program writes
 * with BPF_F_CURRENT_CPU (its thread's CPU's ring) or an explicit index,
 * which must be that same CPU (-EOPNOTSUPP otherwise, as Linux); an index
 * past max_entries is -E2BIG, a slot without a ring (no perf buffer, or a
 * CPU past the buffer's) -ENOENT, a full ring -ENOSPC and a lost record,
 * reported to lost_cb before that ring's next samples.
 *
 * Samples reach sample_cb in the order each ring got them; size is the
 * raw record size as Linux reports it (the output size rounded up so that
 * it and its 4-byte header fill whole 8-byte words; the padding is zero).
 * One consumer at a time; producers on any number of threads. */
#ifndef BPFRT_PUBLIC_PERF_BUFFER_H
#define BPFRT_PUBLIC_PERF_BUFFER_H

#include "bpfrt/export.h"

#include <stddef.h>
#include <stdint.h>

#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_map;
struct bpfrt_perf_buffer;

typedef void (*bpfrt_perf_buffer_sample_fn)(void *ctx, int cpu, void *data, uint32_t size);
typedef void (*bpfrt_perf_buffer_lost_fn)(void *ctx, int cpu, uint64_t cnt);

struct bpfrt_perf_buffer_opts {
	size_t sz;   /* sizeof(struct bpfrt_perf_buffer_opts) */
};
#define bpfrt_perf_buffer_opts__last_field sz

/* perf_buffer__new: a ring of page_cnt pages (a power of two) for each
 * CPU slot of map (a PERF_EVENT_ARRAY; slots past the possible CPUs get
 * none). sample_cb is required, lost_cb may be NULL. Returns 0 and *pb,
 * or -EINVAL (bad arguments, naming which), -EBUSY (the map has a perf
 * buffer already), -ENOMEM. */
BPFRT_API int bpfrt_perf_buffer_new(struct bpfrt_map *map, size_t page_cnt,
				    bpfrt_perf_buffer_sample_fn sample_cb,
				    bpfrt_perf_buffer_lost_fn lost_cb, void *ctx,
				    const struct bpfrt_perf_buffer_opts *opts,
				    struct bpfrt_perf_buffer **pb);
/* perf_buffer__poll: waits up to timeout_ms (-1: forever) for a record,
 * then consumes every ring. Returns the records handled (samples and lost
 * reports; 0 on timeout) or -errno. */
BPFRT_API int bpfrt_perf_buffer_poll(struct bpfrt_perf_buffer *pb, int timeout_ms);
/* perf_buffer__consume: every ring, without waiting. */
BPFRT_API int bpfrt_perf_buffer_consume(struct bpfrt_perf_buffer *pb);
/* An fd (eventfd) readable when a record may be waiting; for epoll. */
BPFRT_API int bpfrt_perf_buffer_fd(const struct bpfrt_perf_buffer *pb);
/* perf_buffer__free: takes the rings out of the map's slots (programs
 * then get -ENOENT), waits for outputs in flight, frees. NULL: no-op. */
BPFRT_API void bpfrt_perf_buffer_free(struct bpfrt_perf_buffer *pb);

#ifdef __cplusplus
}
#endif
#endif
