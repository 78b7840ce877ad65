/* A long-running target for bpfrt trace -p (plain gcc -O2 -pthread): two
 * threads call work(); the main thread prints one line of results every
 * 10 ms for argv[1] ticks (default 300), so output that changed, stopped
 * or repeated while it was attached and detached shows. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long work(long a, long b);

static volatile int stop;

static void *spin(void *arg)
{
	long s = 0;

	while (!stop)
		for (long i = 0; i < 1000; i++)
			s += work(9, i);
	return (void *)s;
}

int main(int argc, char **argv)
{
	int ticks = argc > 1 ? atoi(argv[1]) : 300;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&t, NULL, spin, NULL);
	for (long i = 0; i < ticks; i++) {
		printf("tick %ld %ld\n", i, work(i, i));
		nanosleep(&ts, NULL);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
