/* A target (plain gcc -O2) with a SIGSEGV handler of its own, installed
 * in main without chaining to what was there, as runtimes do, after a
 * first peek() (probed: its program's first read puts bpfrt's fault
 * handler in place); then peek() of a bad pointer, which the program reads
 * through, and a NULL dereference of its own, which its handler must get. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) long peek(const long *p)
{
	__asm__ volatile("" ::: "memory");
	return p != NULL;
}

static void own_handler(int sig)
{
	static const char msg[] = "own handler\n";

	(void)sig;
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(3);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	volatile long *null = (volatile long *)(argc > 5 ? (long *)argv : NULL);

	long fine = 7;

	printf("peek %ld\n", peek(&fine));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = own_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		return 1;
	printf("peek %ld\n", peek((const long *)16));
	fflush(stdout);
	return (int)*null;
}
