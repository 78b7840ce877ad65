/* The ring both ring buffer kinds share (ringbuf.c): RINGBUF (programs
 * produce, user space consumes) and USER_RINGBUF (user space produces,
 * programs drain: user_ringbuf.c). Linux's record format: an 8-byte
 * header (u32 length with the BUSY and DISCARD bits, u32 page offset back
 * to the ring) before each record, 8-byte aligned; the data pages are
 * mapped twice, back to back, so a record that wraps is contiguous. */
#ifndef BPFRT_MAPS_RINGBUF_H
#define BPFRT_MAPS_RINGBUF_H

#include "maps/map.h"
#include "maps/spinlock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ringbuf {
	struct bpfrt_map map;
	size_t meta_size;          /* bytes before the data pages */
	size_t mapping_size;
	uint64_t mask;             /* data size - 1 */
	int event_fd;
	int shm_fd;                /* BPFRT_MAP_F_SHARED: the memfd of it all, else -1 */
	pthread_mutex_t consumer_lock;
	struct bpfrt_spinlock lock; /* producers, while reserving */
	/* Own cache lines: the consumer writes one, producers the other. */
	_Alignas(64) _Atomic uint64_t consumer_pos;
	/* USER_RINGBUF: one drain at a time (Linux's busy bit), and the
	 * count of drains that moved consumer_pos, which producers blocked
	 * for space wait on (a futex word) */
	_Atomic uint32_t drain_busy;
	_Atomic uint32_t consumed_seq;
	_Alignas(64) _Atomic uint64_t producer_pos;
	_Atomic uint32_t space_waiters; /* USER_RINGBUF producers waiting */
};

struct ringbuf_hdr {
	_Atomic uint32_t len;
	uint32_t pg_off;
};

static inline struct ringbuf *to_ringbuf(struct bpfrt_map *map)
{
	return (struct ringbuf *)map;
}

static inline char *ring_data(struct ringbuf *rb)
{
	return (char *)rb + rb->meta_size;
}

size_t bpfrt_ringbuf_page_size(void);

#endif
