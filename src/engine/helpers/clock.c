/* The coarse clocks and TAI: bpf_ktime_get_coarse_ns and bpf_jiffies64, from
 * CLOCK_MONOTONIC_COARSE (a vDSO read of the time at the last tick, as
 * Linux's ktime_get_coarse_ns).
 *
 * Jiffies: the tick length is the coarse clock's resolution (Linux reports
 * TICK_NSEC, 1/CONFIG_HZ, there), and the count starts at Linux's
 * INITIAL_JIFFIES, (u32)(-300 * HZ), so that a value is near what the
 * kernel's bpf_jiffies64 returns at the same moment and wraps its low 32
 * bits five minutes after boot as the kernel's does. */
#define _GNU_SOURCE
#include "helpers/clock.h"

#include <pthread.h>
#include <time.h>

static uint64_t tick_ns;
static uint64_t initial_jiffies;
static pthread_once_t tick_once = PTHREAD_ONCE_INIT;

static void tick_init(void)
{
	struct timespec res;
	uint64_t hz;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec ||
	    res.tv_nsec < 1000000 || res.tv_nsec > 10000000)
		res.tv_nsec = 4000000; /* HZ=250, Debian's */
	tick_ns = (uint64_t)res.tv_nsec;
	hz = (1000000000ull + tick_ns / 2) / tick_ns;
	initial_jiffies = (uint32_t)-(int32_t)(300 * hz);
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bpfrt_bpf_ktime_get_coarse_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	return coarse_ns();
}

/* CLOCK_TAI, as Linux's ktime_get_tai_ns: CLOCK_REALTIME plus the TAI
 * offset the system's time daemon set (0 where none did). */
uint64_t bpfrt_bpf_ktime_get_tai_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	struct timespec ts;

	clock_gettime(CLOCK_TAI, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bpfrt_jiffies_tick_ns(void)
{
	pthread_once(&tick_once, tick_init);
	return tick_ns;
}

uint64_t bpfrt_bpf_jiffies64(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t tick = bpfrt_jiffies_tick_ns();

	return initial_jiffies + coarse_ns() / tick;
}
