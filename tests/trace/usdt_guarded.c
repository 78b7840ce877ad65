/* A semaphore-guarded USDT site: the probe's arguments are computed only
 * while a tracer holds the semaphore (in .probes) above zero. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short bpfrt_test_guarded_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) int usdt_guarded(int x)
{
	if (bpfrt_test_guarded_semaphore) {
		STAP_PROBE1(bpfrt_test, guarded, x * 3);
		return 1;
	}
	return 0;
}
