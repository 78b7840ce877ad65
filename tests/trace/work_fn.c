/* work() of tests/trace/work.c, in its own file so that gcc -O2 keeps the
 * calls. */
long work(long a, long b)
{
	return a * 1000 + b;
}
