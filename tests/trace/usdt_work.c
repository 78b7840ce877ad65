/* The target of test_trace_usdt.sh: fires the USDT sites of
 * usdt_sites.c and usdt_guarded.c N times and prints how often the
 * guarded site saw its semaphore set. */
#include <stdio.h>
#include <stdlib.h>

void usdt_consts(void);
long usdt_regs(long a, int b, unsigned char c, short d);
void usdt_mem(long a, int b, unsigned short c, signed char d);
int usdt_guarded(int x);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, guarded = 0;
	long sum = 0;

	for (int i = 0; i < n; i++) {
		usdt_consts();
		sum += usdt_regs(-7L * (1L << 40), -100000, 200, -300);
		usdt_mem(1L << 50, -2, 65000, -9);
		guarded += usdt_guarded(i);
	}
	printf("guarded %d sum %ld\n", guarded, sum);
	return 0;
}
