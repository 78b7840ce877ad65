/* USDT trigger benchmark on the harness of bench_trigger.c: bpfrt's USDT
 * (bpfrt/usdt.h, a uprobe at the site placed by the kprobe engine) on a
 * <sys/sdt.h> site of this executable built with plain gcc -O2, read by a
 * program using libbpf's usdt.bpf.h unmodified (BPF_USDT reads the one
 * argument through the spec, as a user's program does). The kernel's
 * trig-usdt row (bench_trigger.c) attaches the same program with libbpf's
 * bpf_program__attach_usdt: a kernel uprobe at the same address.
 *   trig-bpfrt-usdt         bpfrt USDT, the site's nop probed in auto mode (jmp)
 *   trig-bpfrt-usdt-noarg   the same, the program reads no argument */
#define _GNU_SOURCE
#include "bench.h"
#include "bpfrt/attach.h"
#include "bpfrt/object.h"

#include <errno.h>
#include <sys/sdt.h>

volatile long bench_usdt_sink;

/* The site: its argument in a register, as gcc -O2 leaves it, and code
 * after it as a site inside a real function has (a store; volatile, so it
 * stays after the probe's nop). With only the ret after it, the nop and
 * the ret are 2 bytes: too short for the 5-byte jmp, the probe would stay
 * in int3 mode. */
__attribute__((noinline)) void bench_usdt_site(long x)
{
	STAP_PROBE1(bpfrt_bench, site, x);
	bench_usdt_sink = x;
}

static long *usdt_hits;
static struct bpfrt_object *usdt_obj;
static struct bpfrt_link *usdt_link;

static int usdt_setup(void)
{
	return bench_bpfrt_attach("usdt_bench.bpf.o", "bench_usdt", &usdt_hits, &usdt_obj,
				  &usdt_link);
}

static int usdt_noarg_setup(void)
{
	return bench_bpfrt_attach("usdt_bench.bpf.o", "bench_usdt_noarg", &usdt_hits, &usdt_obj,
				  &usdt_link);
}

static void *usdt_producer(void *arg)
{
	for (long i = 0;; i++)
		bench_usdt_site(i);
	return NULL;
}

static void usdt_measure(struct bench_res *res)
{
	res->hits = (uint64_t)__atomic_exchange_n(usdt_hits, 0, __ATOMIC_RELAXED);
}

static void usdt_teardown(void)
{
	bpfrt_link_destroy(usdt_link);
	usdt_link = NULL;
}

static const struct bench_harness h_bpfrt_usdt = {
	.name = "trig-bpfrt-usdt", .setup = usdt_setup, .producer = usdt_producer,
	.measure = usdt_measure, .teardown = usdt_teardown,
};

static const struct bench_harness h_bpfrt_usdt_noarg = {
	.name = "trig-bpfrt-usdt-noarg", .setup = usdt_noarg_setup, .producer = usdt_producer,
	.measure = usdt_measure, .teardown = usdt_teardown,
};

static int bpfrt_usdt_run(int argc, char **argv)
{
	return bench_harness_main(&h_bpfrt_usdt, argc, argv);
}

static int bpfrt_usdt_noarg_run(int argc, char **argv)
{
	return bench_harness_main(&h_bpfrt_usdt_noarg, argc, argv);
}

const struct bench bench_trig_bpfrt_usdt = {
	"trig-bpfrt-usdt", "bpfrt USDT (bpfrt_bench:site, <sys/sdt.h>, gcc -O2), one argument read",
	bpfrt_usdt_run
};
const struct bench bench_trig_bpfrt_usdt_noarg = {
	"trig-bpfrt-usdt-noarg", "bpfrt USDT on the same site, no argument read",
	bpfrt_usdt_noarg_run
};
