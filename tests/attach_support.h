/* Shared by the attach tests (fentry, fentry.multi, tracepoints): the
 * x86 nop5 of patchable entries and tracepoint sites, and attach/detach
 * churn: the attaching thread advances churn_phase around each attach and
 * detach (%4: 0 attaching, 1 on, 2 detaching, 3 off) while two callers
 * call the target; a call that starts and ends in one "on" phase must be
 * seen, one that starts and ends in one "off" phase must not be (no
 * phantom events), and calls across a change are not judged. */
#ifndef BPFRT_TEST_ATTACH_SUPPORT_H
#define BPFRT_TEST_ATTACH_SUPPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern const uint8_t nop5[5];

/* True if the 5 bytes at addr are the nop5. */
bool is_nop5(const void *addr);

struct churn_stats {
	long thread;    /* the caller's index, 0 or 1 */
	long calls, must_see, missed, must_not, phantom, wrong;
};

extern _Atomic unsigned long churn_phase;
extern volatile int churn_stop;

/* Starts caller(&st[i]) on two threads, in the "off" phase. */
void churn_start(pthread_t t[2], void *(*caller)(void *), struct churn_stats st[2]);
/* Stops and joins them. */
void churn_finish(pthread_t t[2]);
/* Busy-waits n iterations (a phase's length). */
void churn_spin(int n);
/* Judges one call begun in phase p1, ended in p2, seen by `seen` of the
 * `want` programs attached in an "on" phase. */
void churn_note(struct churn_stats *st, unsigned long p1, unsigned long p2, int seen, int want);
/* One second of churn from start, longer (up to 10 s) while no call has
 * yet fallen wholly inside an attached phase: a loaded machine can starve
 * them. */
bool churn_more(const struct timespec *start, const struct churn_stats st[2]);

#endif
