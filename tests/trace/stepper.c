/* A target the trace tests drive one step at a time (plain gcc -O2
 * -pthread): commands on stdin, one line of result each on stdout, so a
 * test sequences target and controllers through pipes, never sleeps.
 *   work N   calls work(7, i) for i < N; prints "did N SUM"
 *   fork N   N children one after the other, each calling work(1, i)
 *            for i < 3 and printing "child SUM CODE"; then "forked N"
 *   code     prints "code CODE": work()'s first 16 bytes as this process
 *            sees them (a probe placed there changes them)
 *   hold     a child that stays: prints "holding PID" here, and in the
 *            child, now and at every SIGUSR1, calls work(1, 0) and prints
 *            "held PID CODE"; SIGTERM ends it
 *   quit     prints "done", exits 0
 * argv[1] "spin": a thread calls work(9, i) all along (programs running
 * on another thread while the main one forks). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static const char *code(char *buf)
{
	const unsigned char *p = (const unsigned char *)(void *)work;

	for (int i = 0; i < 16; i++)
		sprintf(buf + 2 * i, "%02x", p[i]);
	return buf;
}

int main(int argc, char **argv)
{
	char line[128], hex[40];
	pthread_t t;
	int spinning = argc > 1 && !strcmp(argv[1], "spin");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (spinning)
		pthread_create(&t, NULL, spin, NULL);
	printf("pid %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		long n = 0, s = 0;

		if (sscanf(line, "work %ld", &n) == 1) {
			for (long i = 0; i < n; i++)
				s += work(7, i);
			printf("did %ld %ld\n", n, s);
		} else if (sscanf(line, "fork %ld", &n) == 1) {
			for (long k = 0; k < n; k++) {
				pid_t pid = fork();

				if (pid == 0) {
					for (long i = 0; i < 3; i++)
						s += work(1, i);
					printf("child %ld %s\n", s, code(hex));
					_exit(0);
				}
				waitpid(pid, NULL, 0);
			}
			printf("forked %ld\n", n);
		} else if (!strncmp(line, "hold", 4)) {
			sigset_t set, old;
			pid_t pid;

			/* blocked before the fork: a signal never finds the
			 * child without its wait in place */
			sigemptyset(&set);
			sigaddset(&set, SIGUSR1);
			sigaddset(&set, SIGTERM);
			pthread_sigmask(SIG_BLOCK, &set, &old);
			pid = fork();
			if (pid == 0) {
				for (;;) {
					int sig;

					work(1, 0);
					printf("held %d %s\n", (int)getpid(), code(hex));
					if (sigwait(&set, &sig) || sig == SIGTERM)
						_exit(0);
				}
			}
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			printf("holding %d\n", (int)pid);
		} else if (!strncmp(line, "code", 4)) {
			printf("code %s\n", code(hex));
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	stop = 1;
	if (spinning)
		pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
