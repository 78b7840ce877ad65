/* Functions the uprobe tests probe, built with plain `gcc -O2` (no bpfrt
 * flags, no attributes): what a program nobody built for tracing has. */
long up_add(long a, long b)
{
	return a + b;
}

long up_fib(long n)
{
	return n < 2 ? n : up_fib(n - 1) + up_fib(n - 2);
}

long up_sum3(long a, long b, long c)
{
	long s = 0;

	for (long i = 0; i < a; i++)
		s += b * i + c;
	return s;
}
