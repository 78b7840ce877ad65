/* Per-thread memory outside static TLS (thread_mem.h). Each block starts
 * with a header linking it into the thread's list, which the thread's
 * pthread key destructor walks at exit. */
#include "core/thread_mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

struct thread_block {
	struct thread_block *next;
	void **slot;       /* the owner's TLS pointer, cleared at exit */
	size_t map_len;
	uint64_t pad;      /* keeps the payload 16-aligned */
};

static __thread struct thread_block *thread_blocks __attribute__((tls_model("initial-exec")));
static pthread_key_t blocks_key;
static bool blocks_key_ok;

/* Made in a constructor, so the key is among the process's first and
 * glibc keeps its value in the thread descriptor: pthread_setspecific
 * allocates nothing then (async-signal-safe in practice). */
static void __attribute__((constructor)) blocks_key_init(void);

static void blocks_free(void *arg)
{
	struct thread_block *b = thread_blocks;

	(void)arg;  /* the list head, maybe older than thread_blocks */
	thread_blocks = NULL;
	while (b) {
		struct thread_block *next = b->next;

		*b->slot = NULL;
		munmap(b, b->map_len);
		b = next;
	}
}

static void blocks_key_init(void)
{
	blocks_key_ok = !pthread_key_create(&blocks_key, blocks_free);
}

void *bpfrt_thread_mem(void **slot, size_t size)
{
	struct thread_block *b, *head;
	void *cur = NULL;
	size_t len = (sizeof(*b) + size + 4095) & ~(size_t)4095;

	if (__builtin_expect(*slot != NULL, 1))
		return *slot;
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	b->slot = slot;
	b->map_len = len;
	/* A signal handler on this thread may have made one meanwhile; the
	 * compare-and-swap is atomic with respect to it. */
	if (!__atomic_compare_exchange_n(slot, &cur, (void *)(b + 1), false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		munmap(b, len);
		return cur;
	}
	do {
		head = thread_blocks;
		b->next = head;
	} while (!__atomic_compare_exchange_n(&thread_blocks, &head, b, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	/* the destructor runs again when a later destructor of the exiting
	 * thread made a block */
	if (blocks_key_ok)
		pthread_setspecific(blocks_key, thread_blocks);
	return b + 1;
}
