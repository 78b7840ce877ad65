/* Userspace RCU: grace periods for data that readers reach without locks.
 *
 * Readers (program runs, map lookups) bracket their accesses with
 * bpfrt_rcu_read_lock()/unlock(). A writer unlinks an object, then either
 * waits with bpfrt_rcu_synchronize() or hands it to bpfrt_rcu_call*() and
 * the object is reclaimed once every read section that might still see it
 * has ended.
 *
 * Scheme (epoch based, like liburcu's "memb" flavour): a global grace-period
 * counter; each thread publishes the counter value it saw when entering its
 * outermost read section, or 0 when outside. synchronize() advances the
 * counter and waits for every thread whose published value is older. The
 * read side is one TLS increment, one store and one full fence (on x86 a
 * single xchg to the thread's own cache line); unlock is one release store.
 *
 * Threads register on their first read_lock and unregister when they exit
 * (pthread key destructor). A thread must not exit inside a read section,
 * and must not call synchronize()/barrier() inside one (that would wait for
 * itself: the process is aborted with a message). Read sections nest.
 * A thread's first read_lock registers it under the lock a grace period
 * holds while it waits, so a read section must not wait for a thread that
 * has never entered one (it would wait for the grace period it blocks).
 * Deferred callbacks run on a background thread started on first use. */
#ifndef BPFRT_RCU_H
#define BPFRT_RCU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct bpfrt_rcu_reader {
	/* 0 outside a read section, else the grace-period counter seen on
	 * entry. Written by the owner, read by synchronize(). */
	_Atomic uint64_t ctr;
	uint32_t nesting;
	bool registered;
	struct bpfrt_rcu_reader *next, *prev; /* registry, under its lock */
};

extern __thread struct bpfrt_rcu_reader bpfrt_rcu_self
	__attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t bpfrt_rcu_gp_ctr;

void bpfrt_rcu_register_thread(void);

/* The TLS variable is used by name, not through a pointer: GCC's UBSan
 * pointer-overflow check misfires on the address of an initial-exec TLS
 * variable (fs base + negative offset). */
static inline void bpfrt_rcu_read_lock(void)
{
	if (bpfrt_rcu_self.nesting++)
		return;
	if (__builtin_expect(!bpfrt_rcu_self.registered, 0))
		bpfrt_rcu_register_thread();
	/* acquire: a reader that sees the counter a writer advanced also sees
	 * everything the writer unlinked before advancing it. Then a store
	 * ordered before the section's loads by a full fence: either
	 * synchronize() sees us inside, or we see its writer's unlinking. */
	uint64_t gp = atomic_load_explicit(&bpfrt_rcu_gp_ctr, memory_order_acquire);
#if defined(__x86_64__) || defined(__i386__) || defined(__SANITIZE_THREAD__)
	/* xchg is that store and fence in one instruction, cheaper than
	 * mov+mfence, and TSan understands it (it ignores fences). */
	atomic_exchange_explicit(&bpfrt_rcu_self.ctr, gp, memory_order_seq_cst);
#else
	atomic_store_explicit(&bpfrt_rcu_self.ctr, gp, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

static inline void bpfrt_rcu_read_unlock(void)
{
	if (--bpfrt_rcu_self.nesting)
		return;
	/* release: the section's accesses happen before a writer that sees
	 * us outside reclaims anything. */
	atomic_store_explicit(&bpfrt_rcu_self.ctr, 0, memory_order_release);
}

static inline bool bpfrt_rcu_in_read_section(void)
{
	return bpfrt_rcu_self.nesting != 0;
}

/* Waits until every read section that was in progress when called has
 * ended. Must be called outside a read section. */
void bpfrt_rcu_synchronize(void);

/* Polled grace periods (as Linux's get_state/poll_state_synchronize_rcu):
 * take a cookie after unlinking; once poll_state(cookie) is true a full
 * grace period has elapsed since. Both are cheap and never block. */
uint64_t bpfrt_rcu_get_state(void);
bool bpfrt_rcu_poll_state(uint64_t cookie);

/* get_state() for a caller that has just executed a full barrier after
 * unlinking (e.g. took a spinlock with a locked instruction on x86): a
 * plain load, no read-modify-write on the shared counter. */
static inline uint64_t bpfrt_rcu_get_state_after_barrier(void)
{
	return atomic_load_explicit(&bpfrt_rcu_gp_ctr, memory_order_relaxed) + 1;
}

/* Asks the background reclaimer to run a grace period soon. Never blocks
 * for a grace period, so it may be called inside a read section. */
void bpfrt_rcu_start_gp(void);

/* Deferred reclamation. The head is embedded in the object; func runs on
 * the background reclaimer thread (or in bpfrt_rcu_barrier()) after a grace
 * period. Never blocks; callable inside read sections. */
struct bpfrt_rcu_head {
	struct bpfrt_rcu_head *next;
	void (*func)(struct bpfrt_rcu_head *head);
};
void bpfrt_rcu_call_head(struct bpfrt_rcu_head *head,
			 void (*func)(struct bpfrt_rcu_head *head));

/* Same for an object without an embedded head: free_fn(ptr) runs after a
 * grace period. Returns 0, or -ENOMEM inside a read section when no memory
 * for the bookkeeping is left (outside one it then waits and frees now). */
int bpfrt_rcu_call(void *ptr, void (*free_fn)(void *ptr));

/* Runs every callback queued before the call (and any they queue) after a
 * grace period; returns when they have all run. Call before unloading code
 * or data the callbacks use, and at exit so nothing is left pending. Must be
 * called outside a read section. */
void bpfrt_rcu_barrier(void);

#endif
