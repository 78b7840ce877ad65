/* A target that crashes on its own (plain gcc -O2) after calling work(). */
#include <stdio.h>

long work(long a, long b);

int main(int argc, char **argv)
{
	volatile long *p = (volatile long *)(argc > 5 ? (long *)argv : NULL);

	printf("before %ld\n", work(0, 1));
	fflush(stdout);
	return (int)*p;
}
