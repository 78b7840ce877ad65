/* A target for `bpfrt trace` (plain gcc -O2 -pthread): THREADS threads
 * (argv[1], default 4) each call work() CALLS times (argv[2], default
 * 10000); also mallocs 777 bytes 100 times; prints the total and exits
 * with argv[3] (default 0). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

long work(long a, long b);

static long calls = 10000;

static void *run(void *arg)
{
	long id = (long)arg, s = 0;

	for (long i = 0; i < calls; i++)
		s += work(id, i);
	return (void *)s;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];
	long total = 0;

	if (argc > 2)
		calls = atol(argv[2]);
	if (threads > 64)
		threads = 64;
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < threads; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (long)r;
	}
	for (int i = 0; i < 100; i++) {
		char *volatile p = malloc(777);

		free(p);
	}
	printf("total %ld\n", total);
	return argc > 3 ? atoi(argv[3]) : 0;
}
