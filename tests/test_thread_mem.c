/* Per-thread memory outside static TLS (core/thread_mem.h): made once per
 * thread and pointer, zeroed, private to its thread, unmapped and its
 * pointer cleared when the thread exits; the error text that lives there
 * is per thread. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "core/error.h"
#include "core/thread_mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static __thread void *test_mem;

struct seen {
	void *first, *again;
	int zeroed;
	char error[64];
};

static void *thread_body(void *arg)
{
	struct seen *s = arg;
	unsigned char *p = bpfrt_thread_mem(&test_mem, 6000);

	s->first = p;
	s->zeroed = p && p[0] == 0 && p[5999] == 0;
	if (p)
		memset(p, 0xab, 6000);
	s->again = bpfrt_thread_mem(&test_mem, 6000);
	bpfrt_err(-EINVAL, "thread error %d", 7);
	snprintf(s->error, sizeof(s->error), "%s", bpfrt_last_error());
	return NULL;
}

static bool mapped(const void *p)
{
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);

	return msync((void *)page, 1, MS_ASYNC) == 0 || errno != ENOMEM;
}

TEST(made_once_zeroed_and_unmapped_at_thread_exit)
{
	struct seen a = { 0 }, b = { 0 };
	pthread_t ta, tb;

	/* each checked at once: a later mapping may reuse the address */
	REQUIRE(!pthread_create(&ta, NULL, thread_body, &a));
	REQUIRE(!pthread_join(ta, NULL));
	CHECK(!mapped(a.first), "the exited thread's block is still mapped");
	REQUIRE(!pthread_create(&tb, NULL, thread_body, &b));
	REQUIRE(!pthread_join(tb, NULL));
	CHECK(!mapped(b.first), "the exited thread's block is still mapped");
	CHECK(a.first && a.first == a.again, "a second call returns the same block");
	CHECK(a.zeroed && b.zeroed, "a new block is zeroed (even where a dead thread's was)");
	CHECK(!strcmp(a.error, "thread error 7"), "error text: '%s'", a.error);
}

TEST(error_text_is_per_thread)
{
	struct seen a = { 0 };
	pthread_t t;

	bpfrt_err_clear();
	CHECK(!strcmp(bpfrt_last_error(), ""), "cleared: '%s'", bpfrt_last_error());
	bpfrt_err(-ENOENT, "main thread's error");
	REQUIRE(!pthread_create(&t, NULL, thread_body, &a));
	REQUIRE(!pthread_join(t, NULL));
	CHECK(!strcmp(bpfrt_last_error(), "main thread's error"), "'%s'", bpfrt_last_error());
	CHECK(!test_mem, "another thread's block is not this thread's");
}

