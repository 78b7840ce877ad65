/* bpf_spin_lock / bpf_spin_unlock (spin_lock.h). The verifier proved the
 * argument is the lock of a map value, held at most once and given back
 * before the program ends. */
#include "helpers/spin_lock.h"
#include "maps/map.h"

uint64_t bpfrt_bpf_spin_lock(uint64_t lock, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	bpfrt_map_value_lock((void *)(uintptr_t)lock);
	return 0;
}

uint64_t bpfrt_bpf_spin_unlock(uint64_t lock, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5)
{
	bpfrt_map_value_unlock((void *)(uintptr_t)lock);
	return 0;
}
