/* A target that loads a library with dlopen after it started (plain gcc
 * -O2): argv[1] is the library, whose plugin_fn it calls 5 times. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	long (*fn)(long);
	long s = 0;

	if (!h || !(fn = (long (*)(long))dlsym(h, "plugin_fn"))) {
		fprintf(stderr, "plugin_host: %s\n", dlerror());
		return 2;
	}
	for (long i = 1; i <= 5; i++)
		s += fn(i);
	printf("plugin sum %ld\n", s);
	return 0;
}
