/* A library the uprobe tests load with dlopen after attaching to it
 * (plain `gcc -O2 -fPIC -shared`). */
long late_mul(long a, long b)
{
	return a * b;
}
