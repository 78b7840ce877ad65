/* SIGTRAP dispatch (see trap.h for the order and the chaining rules).
 *
 * The handler runs in signal context on any thread, so the address table
 * is lock free for readers: a fixed open-addressing array whose slots are
 * never freed. Each slot has a reference count that a handler holds while
 * it calls the slot's function; unregistering empties the slot first and
 * then waits for the count to drop, after which nothing uses its ctx.
 * Writers (register/unregister) take a mutex and bump a sequence count so
 * a reader that missed an address while the table changed looks again. */
#define _GNU_SOURCE
#include "attach/trap.h"
#include "attach/text_poke.h"
#include "core/error.h"
#include "signal/chain.h"
#include "signal/ucontext.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#define TRAP_SLOTS 4096u             /* power of two */
#define SLOT_EMPTY 0u
#define SLOT_TOMBSTONE 1u            /* never a code address */

struct trap_slot {
	_Atomic uintptr_t addr;
	_Atomic uint32_t refs;
	bpfrt_trap_fn fn;
	void *ctx;
};

static struct trap_slot trap_table[TRAP_SLOTS];
static _Atomic uint32_t trap_seq;    /* odd while the table changes */
static _Atomic uint64_t trap_hits;
static pthread_mutex_t trap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t trap_once = PTHREAD_ONCE_INIT;
static int trap_init_err;

static uint32_t trap_hash(uintptr_t addr)
{
	uint64_t h = (uint64_t)addr * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 40) & (TRAP_SLOTS - 1);
}

/* Finds addr's slot and takes a reference, or returns NULL. */
static struct trap_slot *trap_get(uintptr_t addr)
{
	for (;;) {
		uint32_t seq = atomic_load(&trap_seq);
		uint32_t i = trap_hash(addr);

		for (uint32_t n = 0; n < TRAP_SLOTS; n++, i = (i + 1) & (TRAP_SLOTS - 1)) {
			struct trap_slot *s = &trap_table[i];
			uintptr_t a = atomic_load(&s->addr);

			if (a == SLOT_EMPTY)
				break;
			if (a != addr)
				continue;
			atomic_fetch_add(&s->refs, 1);
			/* The slot may have been emptied (and refilled) between
			 * the load and the reference: check it is still ours. */
			if (atomic_load(&s->addr) == addr)
				return s;
			atomic_fetch_sub(&s->refs, 1);
			break;
		}
		if (!(seq & 1) && atomic_load(&trap_seq) == seq)
			return NULL;
	}
}

/* bpfrt's SIGTRAP handler (signal/chain.c calls it and passes on what it
 * declines: step 4). */
static bool trap_signal(int sig, siginfo_t *info, ucontext_t *uc)
{
	/* int3 traps only: single-step, kill(), raise() are the host's */
	if (info->si_code != SI_KERNEL)
		return false;
#if !defined(__x86_64__)
	(void)uc; (void)trap_get;
	return false;   /* bpfrt writes breakpoints on x86-64 only */
#else
	uintptr_t addr = bpfrt_uc_breakpoint_addr(uc);

	/* The signal may arrive long after the int3 that raised it (the
	 * thread was preempted in between), when the int3 is gone and a
	 * later poke, or a kprobe armed again, has put a new one at addr.
	 * Steps 1-3 must see one state: if a poke started or ended, or the
	 * table changed, while they looked, they look again (a handler that
	 * declined may be asked again), rather than take a bpfrt int3 whose
	 * owner they missed for the host's. Each retry means a writer made
	 * progress; writers never wait for a trapped thread. */
	for (;;) {
		uint64_t gen = bpfrt_text_poke_gen();
		uint32_t seq = atomic_load(&trap_seq);

		if (bpfrt_text_poke_trap(uc, addr))
			goto handled;

		struct trap_slot *s = trap_get(addr);

		if (s) {
			bool done = s->fn(s->ctx, uc, addr);

			atomic_fetch_sub(&s->refs, 1);
			if (done)
				goto handled;
		}
		/* The int3 went away after this thread hit it: run what is
		 * there (whatever the snapshot, that int3 is gone). */
		if (*(volatile uint8_t *)addr != 0xcc) {
			bpfrt_uc_set_pc(uc, addr);
			goto handled;
		}
		atomic_thread_fence(memory_order_acquire);
		if (!(seq & 1) && atomic_load(&trap_seq) == seq &&
		    bpfrt_text_poke_gen() == gen)
			return false;
	}
handled:
	atomic_fetch_add_explicit(&trap_hits, 1, memory_order_relaxed);
	return true;
#endif
}

static void trap_install(void)
{
	/* NODEFER: a program run from a trap handler may hit another int3. */
	trap_init_err = bpfrt_signal_handle(SIGTRAP, trap_signal, BPFRT_SIGNAL_NODEFER);
}

int bpfrt_trap_init(void)
{
	pthread_once(&trap_once, trap_install);
	return trap_init_err;  /* with bpfrt_signal_handle's message */
}

int bpfrt_trap_register(uintptr_t addr, bpfrt_trap_fn fn, void *ctx)
{
	struct trap_slot *free_slot = NULL;
	int err;

	if (addr <= SLOT_TOMBSTONE || !fn)
		return bpfrt_err(-EINVAL, "trap_register: bad address or handler");
	err = bpfrt_trap_init();
	if (err)
		return err;
	pthread_mutex_lock(&trap_lock);
	uint32_t i = trap_hash(addr);

	for (uint32_t n = 0; n < TRAP_SLOTS; n++, i = (i + 1) & (TRAP_SLOTS - 1)) {
		struct trap_slot *s = &trap_table[i];
		uintptr_t a = atomic_load(&s->addr);

		if (a == addr) {
			pthread_mutex_unlock(&trap_lock);
			return bpfrt_err(-EEXIST, "trap_register: %#lx already has a handler",
					 (unsigned long)addr);
		}
		if (!free_slot && (a == SLOT_EMPTY || a == SLOT_TOMBSTONE) &&
		    atomic_load(&s->refs) == 0)
			free_slot = s;
		if (a == SLOT_EMPTY)
			break;
	}
	if (!free_slot) {
		pthread_mutex_unlock(&trap_lock);
		return bpfrt_err(-ENOSPC, "trap_register: table full (%u addresses)", TRAP_SLOTS);
	}
	atomic_fetch_add(&trap_seq, 1);
	free_slot->fn = fn;
	free_slot->ctx = ctx;
	atomic_store(&free_slot->addr, addr);
	atomic_fetch_add(&trap_seq, 1);
	pthread_mutex_unlock(&trap_lock);
	return 0;
}

int bpfrt_trap_unregister(uintptr_t addr)
{
	struct trap_slot *found = NULL;

	pthread_mutex_lock(&trap_lock);
	uint32_t i = trap_hash(addr);

	for (uint32_t n = 0; n < TRAP_SLOTS; n++, i = (i + 1) & (TRAP_SLOTS - 1)) {
		struct trap_slot *s = &trap_table[i];
		uintptr_t a = atomic_load(&s->addr);

		if (a == SLOT_EMPTY)
			break;
		if (a == addr) {
			found = s;
			break;
		}
	}
	if (!found) {
		pthread_mutex_unlock(&trap_lock);
		return bpfrt_err(-ENOENT, "trap_unregister: no handler at %#lx",
				 (unsigned long)addr);
	}
	atomic_fetch_add(&trap_seq, 1);
	atomic_store(&found->addr, SLOT_TOMBSTONE);
	atomic_fetch_add(&trap_seq, 1);
	/* Handlers that took a reference before the slot emptied finish. */
	while (atomic_load(&found->refs))
		sched_yield();
	pthread_mutex_unlock(&trap_lock);
	return 0;
}

uint64_t bpfrt_trap_hits(void)
{
	return atomic_load_explicit(&trap_hits, memory_order_relaxed);
}
