/* bpf_spin_lock (93) and bpf_spin_unlock (94): the lock word of a map
 * value (maps/value_lock.c). The verifier recognises them by these
 * functions (verifier/spin_lock.c), whatever id they are registered
 * under. */
#ifndef BPFRT_HELPERS_SPIN_LOCK_H
#define BPFRT_HELPERS_SPIN_LOCK_H

#include <stdint.h>

uint64_t bpfrt_bpf_spin_lock(uint64_t lock, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);
uint64_t bpfrt_bpf_spin_unlock(uint64_t lock, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5);

#endif
