/* bpf_get_local_storage(map, flags): the storage of the one cgroup
 * bpfrt's programs run in (maps/cgroup_storage.c), this CPU's value for a
 * per-CPU map. The verifier admits only a cgroup storage map and flags 0
 * (Linux's rules), so there is nothing to refuse here. */
#include "helpers/local_storage.h"
#include "maps/map.h"

uint64_t bpfrt_bpf_get_local_storage(uint64_t map, uint64_t flags, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	return (uint64_t)(uintptr_t)bpfrt_cgroup_storage_get((struct bpfrt_map *)(uintptr_t)map);
}
