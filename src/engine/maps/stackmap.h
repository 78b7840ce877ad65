/* BPF_MAP_TYPE_STACK_TRACE (stackmap.c): what bpf_get_stackid
 * (helpers/stack.c) stores traces with. */
#ifndef BPFRT_MAPS_STACKMAP_H
#define BPFRT_MAPS_STACKMAP_H

#include <stdint.h>

struct bpfrt_map;

/* Linux's perf_event_max_stack default (PERF_MAX_STACK_DEPTH): the most
 * frames a trace or a stack trace map's value holds. */
#define BPFRT_STACK_MAX_DEPTH 127

/* Stores ips[0, nr) (cut to the map's value_size / 8) as bpf_get_stackid
 * does: returns the stack id, the id of an equal trace already stored
 * (with BPF_F_FAST_STACK_CMP: of any trace with the same hash), -EEXIST
 * if another trace holds the id and flags lack BPF_F_REUSE_STACKID, or
 * -ENOMEM with no free bucket. Lock-free: callable from signal handlers. */
long bpfrt_stackmap_store(struct bpfrt_map *map, const uint64_t *ips, uint32_t nr,
			  uint64_t flags);

#endif
