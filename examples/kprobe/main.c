/* kprobes on a function built without special flags: the skeleton
 * attaches both programs by their SEC() names; the host calls
 * parse_number() and reads what the programs saw from .bss. */
#include <stdio.h>

#include <bpfrt/bpfrt.h>
#include "parse.h"
#include "probe.skel.h"

int main(void)
{
	static const char *inputs[] = { "12", "30", "x7", "100" };
	BPFRT_OPTS(bpfrt_object_load_opts, load_opts, .jit = true);
	struct probe *skel = probe__open();
	long host_sum = 0;
	int err;

	if (!skel) {
		fprintf(stderr, "open: %s\n", bpfrt_last_error());
		return 1;
	}
	err = probe__load_opts(skel, &load_opts);
	if (!err)
		err = probe__attach(skel);
	if (err) {
		fprintf(stderr, "load/attach: %s\n", bpfrt_last_error());
		probe__destroy(skel);
		return 1;
	}
	for (int i = 0; i < 4; i++) {
		long v = parse_number(inputs[i]);

		host_sum += v > 0 ? v : 0;
	}
	printf("parse_number called %llu times, last with \"%s\"\n",
	       (unsigned long long)skel->bss->calls, skel->bss->last);
	printf("sum of results %lld (host: %ld), %llu failed\n", (long long)skel->bss->sum,
	       host_sum, (unsigned long long)skel->bss->failures);
	probe__destroy(skel);
	return 0;
}
