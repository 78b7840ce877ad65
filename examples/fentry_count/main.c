/* fentry/fexit on work(): the skeleton opens the embedded object, the knob
 * is set before load, the programs attach, the host calls work() 100
 * times, and the counts come back from the hash map and .bss. */
#include <stdio.h>

#include <bpfrt/bpfrt.h>
#include "count.skel.h"
#include "work.h"

int main(void)
{
	BPFRT_OPTS(bpfrt_object_load_opts, load_opts, .jit = true);
	struct count *skel;
	int err;
	long total = 0;

	skel = count__open();
	if (!skel) {
		fprintf(stderr, "open: %s\n", bpfrt_last_error());
		return 1;
	}
	skel->rodata->min_arg = 7;   /* the knob: before load */
	err = count__load_opts(skel, &load_opts);
	if (err) {
		fprintf(stderr, "load: %s\n", bpfrt_last_error());
		goto out;
	}
	/* both programs, by their SEC() names; fexit finds work()'s return
	 * value after its arguments, counted from work.o's debug info (-g) */
	err = count__attach(skel);
	if (err) {
		fprintf(stderr, "attach: %s\n", bpfrt_last_error());
		goto out;
	}

	for (int i = 0; i < 100; i++)
		total += work(i % 10);

	printf("calls of work(x) for x >= %d:\n", skel->rodata->min_arg);
	for (int key = 0; key < 10; key++) {
		unsigned long long n;

		if (bpfrt_map_lookup_elem(skel->maps.calls, &key, &n) == 0)
			printf("  x=%d: %llu\n", key, n);
	}
	printf("sum of work's return values: %llu (the host counted %ld)\n",
	       (unsigned long long)skel->bss->ret_sum, total);
out:
	count__destroy(skel);
	return err ? 1 : 0;
}
