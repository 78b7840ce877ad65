/* Userspace RCU: registry of reader threads, grace periods, and a lazily
 * started background thread that runs deferred callbacks. See rcu.h. */
#define _GNU_SOURCE
#include "core/rcu.h"
#include "core/config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __NR_membarrier
#include <linux/membarrier.h>
#endif

__thread struct bpfrt_rcu_reader bpfrt_rcu_self
	__attribute__((tls_model("initial-exec")));

/* Starts at 1 so that a reader's published 0 always means "outside". */
_Atomic uint64_t bpfrt_rcu_gp_ctr = 1;

/* Highest grace-period number known complete (see bpfrt_rcu_get_state). */
static _Atomic uint64_t gp_completed = 1;

/* Fenced until the first registration chooses (see choose_mode). */
_Atomic bool bpfrt_rcu_fenced_readers = true;

/* Guards the reader list and serialises grace periods; the read-side mode
 * only changes under it, so one grace period sees one mode. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bpfrt_rcu_reader *readers;
static pthread_key_t reader_key;
static pthread_once_t reader_key_once = PTHREAD_ONCE_INIT;

/* ---- read-side mode: membarrier or fenced readers ------------------------ */

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static bool membarrier_registered;

#ifdef __NR_membarrier
static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

/* Registration is per process (per mm), once; a test call makes sure a
 * seccomp filter does not refuse the command itself. */
static bool register_membarrier(void)
{
	int cmds = membarrier(MEMBARRIER_CMD_QUERY);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return false;
	return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
	       membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
}

/* A full barrier on every running thread of the process (a thread that is
 * not running gets one from the context switch). */
static void barrier_on_all_threads(void)
{
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
		return;
	/* Defensive: registration survives fork(); should a child have lost
	 * it anyway, register again. */
	if (errno == EPERM && register_membarrier())
		return;
	/* Readers in fence-free sections are running now: there is no safe
	 * way to carry on without the barrier (e.g. a seccomp filter
	 * installed later refused membarrier). */
	fprintf(stderr, "bpfrt: rcu: membarrier failed (%s) with fence-free readers "
		"running; set BPFRT_RCU_MEMBARRIER=0 to use fenced readers\n",
		strerror(errno));
	abort();
}
#else
static bool register_membarrier(void)
{
	return false;
}

static void barrier_on_all_threads(void)
{
	abort(); /* unreachable: readers stay fenced without membarrier */
}
#endif

/* The global flag and every registered thread's copy of it. */
static void set_fenced_locked(bool fenced)
{
	atomic_store_explicit(&bpfrt_rcu_fenced_readers, fenced, memory_order_relaxed);
	for (struct bpfrt_rcu_reader *r = readers; r; r = r->next)
		atomic_store_explicit(&r->fast, !fenced, memory_order_relaxed);
}

/* Before the first read section of any thread (registration calls it):
 * readers read the flag only after that, and pthread_once orders it. */
static void choose_mode(void)
{
	bool want = bpfrt_config()->rcu_membarrier;

	membarrier_registered = want && register_membarrier();
	pthread_mutex_lock(&registry_lock);
	set_fenced_locked(!membarrier_registered);
	pthread_mutex_unlock(&registry_lock);
}

bool bpfrt_rcu_uses_membarrier(void)
{
	pthread_once(&mode_once, choose_mode);
	return !atomic_load_explicit(&bpfrt_rcu_fenced_readers, memory_order_relaxed);
}

bool bpfrt_rcu_set_membarrier(bool want)
{
	pthread_once(&mode_once, choose_mode);
	pthread_mutex_lock(&registry_lock);
	if (want && !membarrier_registered)
		membarrier_registered = register_membarrier();
	if (!want || membarrier_registered)
		set_fenced_locked(!want);
	pthread_mutex_unlock(&registry_lock);
	return !want || membarrier_registered;
}

/* ---- reader registry ------------------------------------------------------ */

static void unregister_thread(void *arg)
{
	struct bpfrt_rcu_reader *r = arg;

	/* A thread that exits inside a section would block grace periods
	 * forever; treat its exit as leaving the section. */
	r->nesting = 0;
	atomic_store_explicit(&r->ctr, 0, memory_order_release);
	pthread_mutex_lock(&registry_lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		readers = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
	r->registered = false;
	atomic_store_explicit(&r->fast, 0, memory_order_relaxed);
	pthread_mutex_unlock(&registry_lock);
}

/* fork: the child has one thread, the one that forked, but the registry
 * it inherits still lists every thread of the parent, one of which may
 * have been inside a read section (a program running): a grace period in
 * the child (detaching a link there) would wait for it forever. The
 * registry is held across fork, so the child gets a consistent list, and
 * the child keeps only its own thread's entry. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&registry_lock);
}

static void worker_after_fork(void);

static void fork_child(void)
{
	struct bpfrt_rcu_reader *self = &bpfrt_rcu_self;

	worker_after_fork();

	readers = self->registered ? self : NULL;
	if (self->registered)
		self->next = self->prev = NULL;
	pthread_mutex_unlock(&registry_lock);
}

static void create_reader_key(void)
{
	if (pthread_key_create(&reader_key, unregister_thread)) {
		fprintf(stderr, "bpfrt: rcu: cannot create the thread key\n");
		abort();
	}
	/* fails only with ENOMEM: a fork child could then wait for a reader
	 * of the parent's, as before this existed */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void bpfrt_rcu_register_thread(void)
{
	struct bpfrt_rcu_reader *r = &bpfrt_rcu_self;

	pthread_once(&mode_once, choose_mode);
	pthread_once(&reader_key_once, create_reader_key);
	pthread_mutex_lock(&registry_lock);
	r->prev = NULL;
	r->next = readers;
	if (readers)
		readers->prev = r;
	readers = r;
	r->registered = true;
	atomic_store_explicit(&r->fast, !atomic_load_explicit(&bpfrt_rcu_fenced_readers,
							      memory_order_relaxed),
			      memory_order_relaxed);
	pthread_mutex_unlock(&registry_lock);
	/* Non-NULL value so the destructor runs at thread exit. */
	pthread_setspecific(reader_key, r);
}

void bpfrt_rcu_read_lock_slow(void)
{
	uint64_t gp;

	if (!bpfrt_rcu_self.registered)
		bpfrt_rcu_register_thread();
	gp = atomic_load_explicit(&bpfrt_rcu_gp_ctr, memory_order_acquire);
	if (!atomic_load_explicit(&bpfrt_rcu_fenced_readers, memory_order_relaxed)) {
		/* Registered just now, in fence-free mode. */
		atomic_store_explicit(&bpfrt_rcu_self.ctr, gp, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
		return;
	}
	/* Fallback: the store and a full fence, so either a grace period's
	 * scan sees us inside or we see its writer's unlinking. xchg is both
	 * in one instruction on x86, cheaper than mov+mfence, and TSan
	 * understands it (not fences). */
#if defined(__x86_64__) || defined(__i386__) || defined(__SANITIZE_THREAD__)
	atomic_exchange_explicit(&bpfrt_rcu_self.ctr, gp, memory_order_seq_cst);
#else
	atomic_store_explicit(&bpfrt_rcu_self.ctr, gp, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

static void die_in_read_section(const char *what)
{
	fprintf(stderr, "bpfrt: %s called inside an RCU read section "
		"(it would wait for itself)\n", what);
	abort();
}

/* Spins briefly, yields a little, then sleeps longer and longer: readers
 * are usually short, but the one we wait for may be preempted or running a
 * long program, and a yield loop would burn a CPU the readers need. */
static void backoff(unsigned int *iter)
{
	unsigned int i = (*iter)++;
	struct timespec ts = { 0, 0 };

	if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ __volatile__("yield");
#endif
		return;
	}
	if (i < 80) {
		sched_yield();
		return;
	}
	ts.tv_nsec = i < 100 ? 10 * 1000 : i < 200 ? 100 * 1000 : 1000 * 1000;
	nanosleep(&ts, NULL);
}

static void wait_for_reader(struct bpfrt_rcu_reader *r, uint64_t target)
{
	unsigned int iter = 0;

	for (;;) {
		uint64_t v = atomic_load_explicit(&r->ctr, memory_order_acquire);

		/* 0: outside. >= target: entered after the counter moved,
		 * so it cannot see what was unlinked before. */
		if (v == 0 || v >= target)
			return;
		backoff(&iter);
	}
}

/* Why fence-free readers are safe (membarrier mode).
 *
 * A grace period (GP), under registry_lock: (1) target = ++gp_ctr, a
 * seq_cst RMW; (2) membarrier: a full barrier at some point P_t of every
 * thread t's program order, P_t ordered after (1) and before (3); (3) read
 * each registered reader's slot (acquire) until it is 0 or >= target;
 * (4) publish gp_completed = target (release).
 * A reader section S on thread t: load gp_ctr (acquire) = g; store g to
 * the slot (release); compiler barrier; the section's loads; store 0
 * (release). No CPU fence, but program order holds at the compiler level.
 *
 * Claim: once the GP returns (or poll_state() sees its target), no section
 * can still use an object unlinked before the GP's cookie was taken. Let W
 * be the unlinking store, ordered before (1): in synchronize() by program
 * order and the seq_cst RMW; for a polled cookie by the full barrier
 * get_state() issues (or the locked instruction of the spinlock that
 * hashtab.c takes before get_state_after_barrier()) between W and its
 * read of gp_ctr, which read a value below target, so that read came
 * before the RMW (1): W was visible to every CPU before (1) and before
 * every P_t. Take a section S on a thread t:
 *  a) P_t before S's slot store in program order: S's loads come after
 *     P_t, which comes after W reached every CPU, so S reads the new link
 *     and never reaches the object. (S may or may not be waited for.)
 *  b) P_t after S's slot store: the store is visible to (3), which sees g
 *     or a later value of that slot. S's load of gp_ctr came before P_t,
 *     so before the RMW (1) could be seen: g < target, and (3) waits
 *     until the slot holds 0 or a newer section's value, both stored
 *     after S ended.
 *  c) Sections that load gp_ctr >= target are not waited for: their
 *     acquire load read the RMW (1) or later, which comes after W, and
 *     their loads come after that load: they see W.
 * The other direction, S's accesses before the reclaim: every store to
 * a slot is a release (unlock's 0, the next section's value, thread exit),
 * and (3) reads it with acquire, so S's accesses happen before the GP ends
 * and before whatever the caller frees or reuses next. With relaxed slot
 * stores (liburcu) a second membarrier after (3) would be needed instead;
 * on x86 the release store is the same mov.
 *
 * Fenced mode (no membarrier): (2) is skipped; the readers' store+fence
 * and the RMW (1) / get_state()'s fence order W against S's slot store
 * (store buffering: one side must see the other).
 *
 * (2) is also skipped when no thread but the caller is registered: a
 * thread registers under registry_lock before its first section, so its
 * sections start after this GP and see W as in c). The hashtab's early
 * reuse of limbo elements (no GP at all) does not rely on any of this:
 * its readers detect migrated elements with the nulls markers. */
static bool other_readers_registered(void)
{
	return readers && (readers != &bpfrt_rcu_self || readers->next);
}

void bpfrt_rcu_synchronize(void)
{
	uint64_t target;

	if (bpfrt_rcu_in_read_section())
		die_in_read_section("bpfrt_rcu_synchronize");
	pthread_mutex_lock(&registry_lock);
	/* seq_cst RMW: in fenced mode pairs with the readers' fence. */
	target = atomic_fetch_add(&bpfrt_rcu_gp_ctr, 1) + 1;
	if (!atomic_load_explicit(&bpfrt_rcu_fenced_readers, memory_order_relaxed) &&
	    other_readers_registered())
		barrier_on_all_threads();
	for (struct bpfrt_rcu_reader *r = readers; r; r = r->next)
		wait_for_reader(r, target);
	/* Grace periods run one at a time under the lock, so targets rise. */
	atomic_store_explicit(&gp_completed, target, memory_order_release);
	pthread_mutex_unlock(&registry_lock);
}

uint64_t bpfrt_rcu_get_state(void)
{
	/* Orders the caller's unlinking stores before the counter read. A
	 * grace period that starts after the read advances the counter past
	 * the value read: that is the one to wait for (argument above). */
#ifdef __SANITIZE_THREAD__
	return atomic_fetch_add(&bpfrt_rcu_gp_ctr, 0) + 1;  /* TSan ignores fences */
#else
	atomic_thread_fence(memory_order_seq_cst);
	return bpfrt_rcu_get_state_after_barrier();
#endif
}

bool bpfrt_rcu_poll_state(uint64_t cookie)
{
	return atomic_load_explicit(&gp_completed, memory_order_acquire) >= cookie;
}

/* ---- deferred callbacks and the background reclaimer -------------------- */

static struct {
	pthread_mutex_t lock;           /* with cond: worker sleep/wake */
	pthread_cond_t cond;
	pthread_mutex_t reclaim_lock;   /* held while a batch is in flight */
	pthread_once_t once;
	bool running;
	_Atomic bool gp_requested;
	_Atomic(struct bpfrt_rcu_head *) pending; /* LIFO stack of callbacks */
} worker = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.reclaim_lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
};

/* fork: the reclaimer is not in the child, and its locks may have been
 * held by it: a fresh, not yet started worker (callbacks still queued
 * run in the child's, or in a barrier there; a batch the parent's worker
 * had taken is the child's only leak). */
static void worker_after_fork(void)
{
	pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_mutex_init(&worker.lock, NULL);
	pthread_cond_init(&worker.cond, NULL);
	pthread_mutex_init(&worker.reclaim_lock, NULL);
	worker.once = once;
	worker.running = false;
	atomic_store(&worker.gp_requested, false);
}

/* Runs a batch oldest first (the stack gave it newest first). */
static void run_callbacks(struct bpfrt_rcu_head *batch)
{
	struct bpfrt_rcu_head *fifo = NULL;

	while (batch) {
		struct bpfrt_rcu_head *next = batch->next;

		batch->next = fifo;
		fifo = batch;
		batch = next;
	}
	while (fifo) {
		struct bpfrt_rcu_head *next = fifo->next;

		fifo->func(fifo);
		fifo = next;
	}
}

/* One grace period plus the callbacks queued before it. Returns false if
 * there was nothing queued (the grace period still ran: pollers wanted it). */
static bool reclaim_once(void)
{
	struct bpfrt_rcu_head *batch;

	pthread_mutex_lock(&worker.reclaim_lock);
	batch = atomic_exchange(&worker.pending, NULL);
	bpfrt_rcu_synchronize();
	run_callbacks(batch);
	pthread_mutex_unlock(&worker.reclaim_lock);
	return batch != NULL;
}

static void *worker_main(void *arg)
{
	pthread_mutex_lock(&worker.lock);
	for (;;) {
		while (!atomic_load(&worker.gp_requested))
			pthread_cond_wait(&worker.cond, &worker.lock);
		pthread_mutex_unlock(&worker.lock);
		atomic_store(&worker.gp_requested, false);
		reclaim_once();
		pthread_mutex_lock(&worker.lock);
	}
	return NULL;
}

static void start_worker(void)
{
	pthread_attr_t attr;
	pthread_t tid;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Without a worker, callbacks still run in bpfrt_rcu_barrier() and
	 * pollers fall back to synchronising themselves. */
	worker.running = pthread_create(&tid, &attr, worker_main, NULL) == 0;
	pthread_attr_destroy(&attr);
}

void bpfrt_rcu_start_gp(void)
{
	if (atomic_load_explicit(&worker.gp_requested, memory_order_relaxed))
		return;
	if (atomic_exchange(&worker.gp_requested, true))
		return;
	pthread_once(&worker.once, start_worker);
	pthread_mutex_lock(&worker.lock);
	pthread_cond_signal(&worker.cond);
	pthread_mutex_unlock(&worker.lock);
}

void bpfrt_rcu_call_head(struct bpfrt_rcu_head *head,
			 void (*func)(struct bpfrt_rcu_head *head))
{
	struct bpfrt_rcu_head *old = atomic_load_explicit(&worker.pending,
							  memory_order_relaxed);

	head->func = func;
	do {
		head->next = old;
	} while (!atomic_compare_exchange_weak_explicit(&worker.pending, &old, head,
							memory_order_release,
							memory_order_relaxed));
	bpfrt_rcu_start_gp();
}

struct rcu_ptr_node {
	struct bpfrt_rcu_head head;
	void *ptr;
	void (*free_fn)(void *ptr);
};

static void rcu_ptr_node_free(struct bpfrt_rcu_head *head)
{
	struct rcu_ptr_node *node = (struct rcu_ptr_node *)head;

	node->free_fn(node->ptr);
	free(node);
}

int bpfrt_rcu_call(void *ptr, void (*free_fn)(void *ptr))
{
	struct rcu_ptr_node *node = malloc(sizeof(*node));

	if (!node) {
		if (bpfrt_rcu_in_read_section())
			return -ENOMEM;
		bpfrt_rcu_synchronize();
		free_fn(ptr);
		return 0;
	}
	node->ptr = ptr;
	node->free_fn = free_fn;
	bpfrt_rcu_call_head(&node->head, rcu_ptr_node_free);
	return 0;
}

void bpfrt_rcu_barrier(void)
{
	if (bpfrt_rcu_in_read_section())
		die_in_read_section("bpfrt_rcu_barrier");
	/* reclaim_lock also waits out a batch the worker took earlier. */
	while (reclaim_once())
		;
}
