/* A small test-and-test-and-set spinlock for map buckets and ring
 * buffers. Critical sections are a few dozen instructions; the holder may
 * be preempted (we are in user space), so waiters yield after a while
 * instead of burning their whole time slice. */
#ifndef BPFRT_MAPS_SPINLOCK_H
#define BPFRT_MAPS_SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>

struct bpfrt_spinlock {
	_Atomic int locked;
};

static inline void bpfrt_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline void bpfrt_spin_lock(struct bpfrt_spinlock *lock)
{
	unsigned int spins = 0;

	while (atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire)) {
		while (atomic_load_explicit(&lock->locked, memory_order_relaxed)) {
			if (++spins < 128)
				bpfrt_cpu_relax();
			else
				sched_yield();
		}
	}
}

static inline void bpfrt_spin_unlock(struct bpfrt_spinlock *lock)
{
	atomic_store_explicit(&lock->locked, 0, memory_order_release);
}

#endif
