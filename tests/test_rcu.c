/* Userspace RCU in both read-side modes: fence-free readers paired with
 * the writers' membarrier, and the fenced fallback. Stress: readers walk a
 * linked list while writers unlink and free its nodes through every
 * reclamation path (synchronize, call, call_head, polled cookies); a node
 * freed too early is a use-after-free under ASan (SAN=1 builds) and a
 * poisoned node otherwise. Also a micro-benchmark of read_lock/unlock. */
#define _GNU_SOURCE
#include "testlib.h"
#include "core/rcu.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define NODE_ALIVE 0x5afe5afe5afe5afeull
#define NODE_DEAD  0xdeaddeaddeaddeadull

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Switches to the wanted read-side mode (no reader threads running yet);
 * false if unavailable. *was: the mode to restore afterwards. */
static bool enter_mode(bool membarrier, bool *was)
{
	*was = bpfrt_rcu_uses_membarrier();
	return bpfrt_rcu_set_membarrier(membarrier);
}

/* ---- the list ----------------------------------------------------------- */

struct node {
	_Atomic(struct node *) next;
	_Atomic uint64_t magic;
	uint64_t payload;       /* plain: TSan checks it against the free */
	struct bpfrt_rcu_head rcu;
	struct node *pending;   /* writer-private: waiting for a cookie */
	uint64_t cookie;
};

#define LIST_LEN 64

static struct {
	struct node head;       /* sentinel, never freed */
	pthread_mutex_t lock;   /* writers */
	_Atomic bool stop;
	_Atomic uint64_t traversals, nodes_seen, dead_seen, bad_payload;
	_Atomic uint64_t ops[4];
	_Atomic unsigned int freed, allocated;
} list = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct node *node_new(uint64_t payload)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		abort();
	n->payload = payload;
	atomic_store_explicit(&n->magic, NODE_ALIVE, memory_order_relaxed);
	atomic_fetch_add(&list.allocated, 1);
	return n;
}

/* Poison first: without ASan a reader that still holds the node sees it. */
static void node_free(struct node *n)
{
	atomic_store_explicit(&n->magic, NODE_DEAD, memory_order_relaxed);
	n->payload = ~n->payload;
	atomic_fetch_add(&list.freed, 1);
	free(n);
}

static void node_free_ptr(void *p)
{
	node_free(p);
}

static void node_free_head(struct bpfrt_rcu_head *h)
{
	node_free((struct node *)((char *)h - offsetof(struct node, rcu)));
}

static void list_init(void)
{
	struct node *prev = &list.head;

	atomic_store(&list.head.next, NULL);
	for (int i = 0; i < LIST_LEN; i++) {
		struct node *n = node_new((uint64_t)i * 3);

		atomic_store_explicit(&prev->next, n, memory_order_release);
		prev = n;
	}
}

static void list_destroy(void)
{
	struct node *n = atomic_load(&list.head.next);

	while (n) {
		struct node *next = atomic_load(&n->next);

		node_free(n);
		n = next;
	}
	atomic_store(&list.head.next, NULL);
}

/* The payload is 3 * something, flipped when freed. */
static void visit(struct node *n)
{
	uint64_t magic = atomic_load_explicit(&n->magic, memory_order_relaxed);

	if (magic != NODE_ALIVE)
		atomic_fetch_add(&list.dead_seen, 1);
	if (n->payload % 3)
		atomic_fetch_add(&list.bad_payload, 1);
}

static void *list_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	uint64_t traversals = 0, seen = 0;

	while (!atomic_load_explicit(&list.stop, memory_order_relaxed)) {
		unsigned int r = rand_r(&seed);

		bpfrt_rcu_read_lock();
		for (struct node *n = atomic_load_explicit(&list.head.next, memory_order_acquire);
		     n; n = atomic_load_explicit(&n->next, memory_order_acquire)) {
			visit(n);
			seen++;
			if (r % 64 == 0) {
				/* Hold a node across a nested section and a
				 * yield: writers must wait for us. */
				bpfrt_rcu_read_lock();
				sched_yield();
				visit(n);
				bpfrt_rcu_read_unlock();
				r = 1;
			}
		}
		bpfrt_rcu_read_unlock();
		traversals++;
	}
	atomic_fetch_add(&list.traversals, traversals);
	atomic_fetch_add(&list.nodes_seen, seen);
	return NULL;
}

/* Unlinks the node after a random position (NULL when the list is too
 * short) and links a fresh one in at another; under the writers' lock. */
static struct node *list_replace_random(unsigned int *seed)
{
	struct node *prev = &list.head, *victim, *fresh;
	unsigned int skip = rand_r(seed) % (LIST_LEN - 1);

	pthread_mutex_lock(&list.lock);
	for (unsigned int i = 0; i < skip && atomic_load(&prev->next); i++)
		prev = atomic_load(&prev->next);
	victim = atomic_load(&prev->next);
	if (victim)
		atomic_store_explicit(&prev->next, atomic_load(&victim->next),
				      memory_order_release);
	/* The victim keeps its next pointer: readers on it walk on. */
	fresh = node_new((uint64_t)rand_r(seed) * 3);
	prev = &list.head;
	skip = rand_r(seed) % (LIST_LEN - 1);
	for (unsigned int i = 0; i < skip && atomic_load(&prev->next); i++)
		prev = atomic_load(&prev->next);
	atomic_store(&fresh->next, atomic_load(&prev->next));
	atomic_store_explicit(&prev->next, fresh, memory_order_release);
	pthread_mutex_unlock(&list.lock);
	return victim;
}

/* Frees polled nodes whose grace period is over (all with force). */
static void drain_polled(struct node **pending, bool force)
{
	struct node **link = pending;

	if (force && *pending)
		bpfrt_rcu_synchronize();
	while (*link) {
		struct node *n = *link;

		if (force || bpfrt_rcu_poll_state(n->cookie)) {
			*link = n->pending;
			node_free(n);
		} else {
			link = &n->pending;
		}
	}
}

static void *list_writer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	struct node *pending = NULL;
	unsigned int i = 0;

	while (!atomic_load_explicit(&list.stop, memory_order_relaxed)) {
		struct node *victim = list_replace_random(&seed);
		unsigned int how = i++ % 4;

		if (!victim)
			continue;
		atomic_fetch_add(&list.ops[how], 1);
		switch (how) {
		case 0:
			bpfrt_rcu_synchronize();
			node_free(victim);
			break;
		case 1:
			if (bpfrt_rcu_call(victim, node_free_ptr))
				abort();
			break;
		case 2:
			bpfrt_rcu_call_head(&victim->rcu, node_free_head);
			break;
		default:
			victim->cookie = bpfrt_rcu_get_state();
			victim->pending = pending;
			pending = victim;
			bpfrt_rcu_start_gp();
			break;
		}
		drain_polled(&pending, false);
	}
	drain_polled(&pending, true);
	return NULL;
}

#define READERS 3
#define WRITERS 2

static void stress(bool membarrier)
{
	pthread_t readers[READERS], writers[WRITERS];
	bool was;
	double until;

	if (!enter_mode(membarrier, &was))
		SKIP("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) unavailable");
	CHECK(bpfrt_rcu_uses_membarrier() == membarrier);
	for (int i = 0; i < 4; i++)
		atomic_store(&list.ops[i], 0);
	atomic_store(&list.stop, false);
	atomic_store(&list.traversals, 0);
	atomic_store(&list.nodes_seen, 0);
	atomic_store(&list.dead_seen, 0);
	atomic_store(&list.bad_payload, 0);
	atomic_store(&list.freed, 0);
	atomic_store(&list.allocated, 0);
	list_init();
	for (int i = 0; i < READERS; i++)
		REQUIRE(pthread_create(&readers[i], NULL, list_reader,
				       (void *)(uintptr_t)(i + 1)) == 0);
	for (int i = 0; i < WRITERS; i++)
		REQUIRE(pthread_create(&writers[i], NULL, list_writer,
				       (void *)(uintptr_t)(100 + i)) == 0);
	/* Long enough for thousands of grace periods, also under ASan. */
	until = now_ns() + 400e6;
	while (now_ns() < until)
		usleep(10000);
	atomic_store(&list.stop, true);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(writers[i], NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	bpfrt_rcu_barrier();
	list_destroy();
	CHECK(atomic_load(&list.dead_seen) == 0, "%llu freed nodes seen by readers",
	      (unsigned long long)atomic_load(&list.dead_seen));
	CHECK(atomic_load(&list.bad_payload) == 0, "%llu corrupt payloads",
	      (unsigned long long)atomic_load(&list.bad_payload));
	CHECK(atomic_load(&list.freed) == atomic_load(&list.allocated),
	      "freed %u of %u nodes", atomic_load(&list.freed), atomic_load(&list.allocated));
	CHECK(atomic_load(&list.traversals) > 0);
	for (int i = 0; i < 4; i++)
		CHECK(atomic_load(&list.ops[i]) > 0, "reclamation path %d never ran", i);
	printf("# %s: %llu traversals (%llu nodes), %llu sync, %llu call, "
	       "%llu call_head, %llu polled\n", membarrier ? "membarrier" : "fenced",
	       (unsigned long long)atomic_load(&list.traversals),
	       (unsigned long long)atomic_load(&list.nodes_seen),
	       (unsigned long long)atomic_load(&list.ops[0]),
	       (unsigned long long)atomic_load(&list.ops[1]),
	       (unsigned long long)atomic_load(&list.ops[2]),
	       (unsigned long long)atomic_load(&list.ops[3]));
	bpfrt_rcu_set_membarrier(was);
}

TEST(rcu_stress_membarrier)
{
	stress(true);
}

TEST(rcu_stress_fenced)
{
	stress(false);
}

/* ---- a reader that holds on: every writer path waits, in both modes ---- */

static struct {
	_Atomic int state;      /* 0 start, 1 inside, 2 leave now, 3 left */
	_Atomic int synced;     /* synchronize() returned */
	_Atomic int called;     /* call_rcu callback ran */
} hold;

static void *holding_reader(void *arg)
{
	bpfrt_rcu_read_lock();
	atomic_store(&hold.state, 1);
	while (atomic_load(&hold.state) != 2)
		usleep(200);
	bpfrt_rcu_read_unlock();
	atomic_store(&hold.state, 3);
	return NULL;
}

static void *syncer(void *arg)
{
	bpfrt_rcu_synchronize();
	/* The main thread sets 2 before the reader may leave. */
	atomic_store(&hold.synced, atomic_load(&hold.state) >= 2 ? 1 : -1);
	return NULL;
}

static void mark_called(void *p)
{
	atomic_store(&hold.called, atomic_load(&hold.state) >= 2 ? 1 : -1);
}

static void held_grace_period(bool membarrier)
{
	pthread_t reader, sync_thread;
	uint64_t cookie;
	bool was;

	if (!enter_mode(membarrier, &was))
		SKIP("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) unavailable");
	atomic_store(&hold.state, 0);
	atomic_store(&hold.synced, 0);
	atomic_store(&hold.called, 0);
	REQUIRE(pthread_create(&reader, NULL, holding_reader, NULL) == 0);
	while (atomic_load(&hold.state) != 1)
		usleep(100);
	cookie = bpfrt_rcu_get_state();
	REQUIRE(bpfrt_rcu_call(NULL, mark_called) == 0);
	REQUIRE(pthread_create(&sync_thread, NULL, syncer, NULL) == 0);
	usleep(30000);
	CHECK(atomic_load(&hold.synced) == 0, "synchronize returned under a reader");
	CHECK(atomic_load(&hold.called) == 0, "callback ran under a reader");
	CHECK(!bpfrt_rcu_poll_state(cookie), "cookie completed under a reader");
	atomic_store(&hold.state, 2);
	pthread_join(sync_thread, NULL);
	pthread_join(reader, NULL);
	CHECK(atomic_load(&hold.synced) == 1);
	bpfrt_rcu_barrier();
	CHECK(atomic_load(&hold.called) == 1);
	CHECK(bpfrt_rcu_poll_state(cookie));
	/* A section that starts after the cookie does not hold it. */
	bpfrt_rcu_read_lock();
	cookie = bpfrt_rcu_get_state();
	bpfrt_rcu_read_unlock();
	bpfrt_rcu_synchronize();
	CHECK(bpfrt_rcu_poll_state(cookie));
	bpfrt_rcu_set_membarrier(was);
}

TEST(rcu_reader_holds_grace_period_membarrier)
{
	held_grace_period(true);
}

TEST(rcu_reader_holds_grace_period_fenced)
{
	held_grace_period(false);
}

TEST(rcu_mode_switch)
{
	bool was = bpfrt_rcu_uses_membarrier();
	const char *env = getenv("BPFRT_RCU_MEMBARRIER");

	/* The environment chooses the initial mode. */
	if (env && !strcmp(env, "0"))
		CHECK(!was, "BPFRT_RCU_MEMBARRIER=0 but readers are fence-free");
	CHECK(bpfrt_rcu_set_membarrier(false));
	CHECK(!bpfrt_rcu_uses_membarrier());
	if (bpfrt_rcu_set_membarrier(true))
		CHECK(bpfrt_rcu_uses_membarrier());
	else
		CHECK(!bpfrt_rcu_uses_membarrier());
	bpfrt_rcu_set_membarrier(was);
	CHECK(bpfrt_rcu_uses_membarrier() == was);
}

/* ---- store-buffering litmus ------------------------------------------------
 * The case the membarrier exists for: a reader publishes its slot (a plain
 * store that can wait in the store buffer) and loads the pointer while a
 * writer replaces the pointer and scans the slots. Without the writer's
 * barrier both can miss the other's store: the reader keeps the old object
 * and the writer does not wait. Each round starts both sides together;
 * "freeing" is setting a flag the reader watches while it holds the object.
 * (With the membarrier call removed from bpfrt_rcu_synchronize this fails
 * within about 10,000 rounds here.) */

static struct {
	_Atomic int dead;
} obj_a, obj_b;

static struct {
	_Atomic(void *) ptr;
	_Atomic long go, done;
	_Atomic bool stop;
	long saw_old, violations;
} sb;

/* Spins (the two sides must meet within nanoseconds), yielding now and
 * then: on a loaded machine the side we wait for may not be running. */
static void spin_pause(unsigned int *iter)
{
	if (++*iter % 1024 == 0) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void *sb_reader(void *arg)
{
	for (long i = 1;; i++) {
		unsigned int iter = 0;

		while (atomic_load_explicit(&sb.go, memory_order_acquire) < i)
			spin_pause(&iter);
		if (atomic_load(&sb.stop))
			return NULL;
		bpfrt_rcu_read_lock();
		if (atomic_load_explicit(&sb.ptr, memory_order_acquire) == &obj_a) {
			sb.saw_old++;
			/* Long enough for the writer's grace period to end if
			 * it wrongly did not wait for us. */
			for (int k = 0; k < 300; k++)
				if (atomic_load_explicit(&obj_a.dead, memory_order_relaxed)) {
					sb.violations++;
					break;
				}
		}
		bpfrt_rcu_read_unlock();
		atomic_store_explicit(&sb.done, i, memory_order_release);
	}
}

static void store_buffering(bool membarrier)
{
	double deadline = now_ns() + 500e6;
	pthread_t reader;
	long rounds = 0;
	bool was;

	if (!enter_mode(membarrier, &was))
		SKIP("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) unavailable");
	atomic_store(&sb.go, 0);
	atomic_store(&sb.done, 0);
	atomic_store(&sb.stop, false);
	sb.saw_old = sb.violations = 0;
	REQUIRE(pthread_create(&reader, NULL, sb_reader, NULL) == 0);
	while (rounds < 100000 && now_ns() < deadline) {
		unsigned int iter = 0;

		atomic_store(&sb.ptr, &obj_a);
		atomic_store(&obj_a.dead, 0);
		atomic_store_explicit(&sb.go, ++rounds, memory_order_release);
		/* Vary the start so the two sides meet at every offset. */
		for (volatile unsigned int k = 0; k < rounds % 64; k++)
			;
		atomic_store_explicit(&sb.ptr, &obj_b, memory_order_release);
		bpfrt_rcu_synchronize();
		atomic_store_explicit(&obj_a.dead, 1, memory_order_relaxed);
		while (atomic_load_explicit(&sb.done, memory_order_acquire) < rounds)
			spin_pause(&iter);
	}
	atomic_store(&sb.stop, true);
	atomic_store_explicit(&sb.go, rounds + 1, memory_order_release);
	pthread_join(reader, NULL);
	CHECK(sb.violations == 0, "%ld of %ld rounds: the reader's object was freed under it",
	      sb.violations, rounds);
	printf("# %s: %ld rounds, the reader held the old object in %ld\n",
	       membarrier ? "membarrier" : "fenced", rounds, sb.saw_old);
	bpfrt_rcu_set_membarrier(was);
}

TEST(rcu_store_buffering_membarrier)
{
	store_buffering(true);
}

TEST(rcu_store_buffering_fenced)
{
	store_buffering(false);
}

/* ---- micro-benchmark ------------------------------------------------------ */

static double ns_per_pair(long n)
{
	double start = now_ns();

	for (long i = 0; i < n; i++) {
		bpfrt_rcu_read_lock();
		__asm__ __volatile__("" ::: "memory");
		bpfrt_rcu_read_unlock();
	}
	return (now_ns() - start) / n;
}

/* Best of a few rounds, so a busy machine does not inflate the figure. */
static double bench_mode(long n)
{
	double best = 1e9;

	for (int round = 0; round < 5; round++) {
		double ns = ns_per_pair(n);

		if (ns < best)
			best = ns;
	}
	return best;
}

TEST(rcu_read_side_cost)
{
	long n = getenv("BPFRT_RCU_BENCH_N") ? atol(getenv("BPFRT_RCU_BENCH_N")) : 2000000;
	bool was = bpfrt_rcu_uses_membarrier();
	double fenced, free_ns = 0;

	if (n <= 0)
		n = 2000000;
	bpfrt_rcu_set_membarrier(false);
	fenced = bench_mode(n);
	if (bpfrt_rcu_set_membarrier(true))
		free_ns = bench_mode(n);
	bpfrt_rcu_set_membarrier(was);
	printf("# read_lock+unlock pair: %.2f ns fenced, %.2f ns fence-free (membarrier)\n",
	       fenced, free_ns);
	CHECK(fenced > 0);
	/* Deliberately no speed assertion: sanitizer builds and busy CI
	 * machines would make it flaky. */
}

/* A fork child has only the thread that forked, but the registry it
 * inherits lists the parent's: one inside a read section at fork must
 * not make a grace period in the child wait forever. */
static _Atomic int reader_state;
static _Atomic int fork_freed;

static void fork_count_free(void *p)
{
	free(p);
	atomic_fetch_add(&fork_freed, 1);
}

static void *reader_in_section(void *arg)
{
	bpfrt_rcu_read_lock();
	atomic_store(&reader_state, 1);
	while (atomic_load(&reader_state) == 1)
		sched_yield();
	bpfrt_rcu_read_unlock();
	return NULL;
}

TEST(rcu_fork_child_does_not_wait_for_the_parents_readers)
{
	pthread_t t;
	pid_t pid;
	int st;

	bpfrt_rcu_read_lock();  /* this thread registered too */
	bpfrt_rcu_read_unlock();
	atomic_store(&reader_state, 0);
	REQUIRE(pthread_create(&t, NULL, reader_in_section, NULL) == 0);
	while (atomic_load(&reader_state) != 1)
		sched_yield();
	pid = fork();
	if (pid == 0) {
		alarm(60);      /* a hang fails the test instead of stalling it */
		bpfrt_rcu_synchronize();
		bpfrt_rcu_read_lock();
		bpfrt_rcu_read_unlock();
		bpfrt_rcu_synchronize();
		/* deferred frees: the parent's reclaimer is not here */
		int before = atomic_load(&fork_freed);

		if (bpfrt_rcu_call(malloc(16), fork_count_free))
			_exit(2);
		bpfrt_rcu_barrier();
		_exit(atomic_load(&fork_freed) == before + 1 ? 0 : 3);
	}
	REQUIRE(pid > 0);
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	atomic_store(&reader_state, 2);
	pthread_join(t, NULL);
	bpfrt_rcu_synchronize();  /* the parent's registry is whole */
}
