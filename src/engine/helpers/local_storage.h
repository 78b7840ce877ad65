/* bpf_get_local_storage: a cgroup program's cgroup storage. */
#ifndef BPFRT_HELPERS_LOCAL_STORAGE_H
#define BPFRT_HELPERS_LOCAL_STORAGE_H

#include <stdint.h>

uint64_t bpfrt_bpf_get_local_storage(uint64_t map, uint64_t flags, uint64_t r3, uint64_t r4,
				     uint64_t r5);

#endif
