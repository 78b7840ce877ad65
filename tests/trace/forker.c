/* A target that forks (plain gcc -O2): the child calls work() 3 times
 * and prints its sum, the parent waits, calls it 5 times, prints. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

long work(long a, long b);

int main(void)
{
	long s = 0;
	pid_t pid = fork();

	if (pid == 0) {
		for (long i = 0; i < 3; i++)
			s += work(1, i);
		printf("child %ld\n", s);
		return 0;
	}
	waitpid(pid, NULL, 0);
	for (long i = 0; i < 5; i++)
		s += work(2, i);
	printf("parent %ld\n", s);
	return 0;
}
