#include "attach_support.h"

#include <string.h>
#include <time.h>

const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

bool is_nop5(const void *addr)
{
	return !memcmp(addr, nop5, sizeof(nop5));
}

_Atomic unsigned long churn_phase;
volatile int churn_stop;

void churn_start(pthread_t t[2], void *(*caller)(void *), struct churn_stats st[2])
{
	churn_stop = 0;
	atomic_store(&churn_phase, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, caller, &st[i]);
}

void churn_finish(pthread_t t[2])
{
	churn_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

void churn_spin(int n)
{
	for (volatile int spin = 0; spin < n; spin++)
		;
}

void churn_note(struct churn_stats *st, unsigned long p1, unsigned long p2, int seen, int want)
{
	st->calls++;
	if (p1 == p2 && p1 % 4 == 1) {
		st->must_see++;
		st->missed += want - seen;
	} else if (p1 == p2 && p1 % 4 == 3) {
		st->must_not++;
		st->phantom += seen;
	}
}

bool churn_more(const struct timespec *start, const struct churn_stats st[2])
{
	struct timespec now;
	long ns, seen;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (now.tv_sec - start->tv_sec) * 1000000000l + (now.tv_nsec - start->tv_nsec);
	seen = __atomic_load_n(&st[0].must_see, __ATOMIC_RELAXED) +
	       __atomic_load_n(&st[1].must_see, __ATOMIC_RELAXED);
	return ns < 1000000000l || (seen == 0 && ns < 10000000000l);
}
