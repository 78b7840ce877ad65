/* Userspace RCU: grace periods for data that readers reach without locks.
 *
 * Readers (program runs, map lookups, attached-program events) bracket
 * their accesses with bpfrt_rcu_read_lock()/unlock(). A writer unlinks an
 * object, then either waits with bpfrt_rcu_synchronize() or hands it to
 * bpfrt_rcu_call*() and the object is reclaimed once every read section
 * that might still see it has ended.
 *
 * Scheme (epoch based, liburcu's "memb" flavour): a global grace-period
 * counter; each thread publishes the counter value it saw when entering its
 * outermost read section, or 0 when outside. synchronize() advances the
 * counter and waits for every thread whose published value is older.
 *
 * The read side has no fence. Entering is a TLS increment, a load of the
 * counter, a plain store of it to the thread's own slot and a compiler
 * barrier; leaving is a plain (release) store of 0. The ordering a fence
 * would give is forced by the writer instead: a grace period calls
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which runs a full barrier
 * on every thread of the process, between advancing the counter and
 * reading the readers' slots. The argument is in rcu.c, above
 * bpfrt_rcu_synchronize(). Where membarrier is missing (old kernel,
 * seccomp) or BPFRT_RCU_MEMBARRIER=0 is set, readers fall back at run time
 * to publishing with a fence (one xchg on x86, out of line), chosen by a
 * per-thread copy of a global flag read with a predictable branch.
 * On x86 the fast path is plain movs; on arm64 the counter load and the
 * store are ldar/stlr (no dmb); GCC 12 on riscv64 maps acquire/release to
 * fences, so that read side is lighter than the fenced one but not free.
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
	/* 1 + the CPU whose per-CPU map slots this read section uses, or 0
	 * until a per-CPU access asks (bpfrt_map_this_cpu). The kernel runs a
	 * program with migration disabled, so one run sees one CPU's slots; a
	 * thread here can migrate mid-run, so the first access of the
	 * outermost section fixes the CPU for the rest of it (an update then
	 * a lookup of a per-CPU map in one run meet the same slot). Reset by
	 * the outermost unlock. Owner-only. */
	int32_t run_cpu;
	/* 1: registered and readers are fence-free, so read_lock takes the
	 * inline fast path; 0: it calls bpfrt_rcu_read_lock_slow() (first
	 * section of the thread, or fenced mode). Set under the registry
	 * lock (by registration and mode switches), read by the owner. */
	_Atomic uint8_t fast;
	bool registered;
	struct bpfrt_rcu_reader *next, *prev; /* registry, under its lock */
};

extern __thread struct bpfrt_rcu_reader bpfrt_rcu_self
	__attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t bpfrt_rcu_gp_ctr;

void bpfrt_rcu_register_thread(void);

/* The mode (see above). True: readers publish with a fence (fallback).
 * False once membarrier is registered: the writer side fences for them.
 * Chosen before the first read section of any thread, then constant but
 * for bpfrt_rcu_set_membarrier(). The C read side tests the thread's own
 * copy (self.fast: one TLS byte, one branch shared with registration), and
 * so do the x86 trampolines, which emit read_lock/unlock inline
 * (jit/x86_64/trampoline_x86.c emit_rcu_lock: change both together;
 * tests/test_trampoline.c rcu_inline_matches_c compares them). */
extern _Atomic bool bpfrt_rcu_fenced_readers;

/* Registration and the fenced publish, out of line so that the inline
 * fast path stays small and branch-light in every caller. */
void bpfrt_rcu_read_lock_slow(void);

/* The TLS variable is used by name, not through a pointer: GCC's UBSan
 * pointer-overflow check misfires on the address of an initial-exec TLS
 * variable (fs base + negative offset). */
static inline void bpfrt_rcu_read_lock(void)
{
	/* Expectations on both branches keep the outermost, registered case
	 * a straight line: with 1,000 programs the branch predictor is full
	 * and every taken branch in the run path costs (2-3 ns per run when
	 * GCC moved the publish out of line). */
	if (__builtin_expect(bpfrt_rcu_self.nesting++, 0))
		return;
	if (__builtin_expect(!atomic_load_explicit(&bpfrt_rcu_self.fast,
						   memory_order_relaxed), 0)) {
		bpfrt_rcu_read_lock_slow();
		return;
	}
	/* acquire (a plain load on x86): a section that sees the counter a
	 * grace period advanced reads everything after that advance, so it
	 * cannot reach what was unlinked before (it is not waited for). */
	uint64_t gp = atomic_load_explicit(&bpfrt_rcu_gp_ctr, memory_order_acquire);

	/* Fence-free publish: a plain mov on x86 (release costs nothing
	 * there; elsewhere it is a one-way barrier that spares grace periods
	 * a second membarrier, see rcu.c). The compiler barrier keeps the
	 * section's accesses after the store in program order, which is all
	 * the writer's membarrier needs. */
	atomic_store_explicit(&bpfrt_rcu_self.ctr, gp, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void bpfrt_rcu_read_unlock(void)
{
	if (__builtin_expect(--bpfrt_rcu_self.nesting, 0))
		return;
	bpfrt_rcu_self.run_cpu = 0;
	/* release (a plain mov on x86): the section's accesses happen before
	 * a writer that sees us outside reclaims anything. Both modes. */
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
 * plain load, no read-modify-write on the shared counter. The barrier is
 * what makes the cookie sound without reader fences: it puts the unlinking
 * before the counter read, so the grace period whose advance the cookie
 * waits for starts (and issues its membarrier) after the unlinking is
 * visible everywhere. See rcu.c. */
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

/* Read-side mode, for tests and benchmarks. bpfrt_rcu_uses_membarrier():
 * readers are fence-free. bpfrt_rcu_set_membarrier(want): switch modes;
 * returns false if membarrier was wanted but is unavailable. Only while no
 * thread is inside a read section (e.g. before starting reader threads):
 * a fence-free section in progress is unsafe once writers stop issuing
 * membarrier. */
bool bpfrt_rcu_uses_membarrier(void);
bool bpfrt_rcu_set_membarrier(bool want);

#endif
