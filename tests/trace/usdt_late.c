/* A library test_usdt loads with dlopen after attaching to its USDT
 * probes (plain `gcc -O2 -fPIC -shared`): a site that fires always and a
 * guarded one that fires only while its semaphore (the library's own) is
 * raised. With _SDT_HAS_SEMAPHORES every probe names one. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short bpfrt_late_fire_semaphore __attribute__((section(".probes")));
unsigned short bpfrt_late_guarded_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) long usdt_late_fire(long a, int b)
{
	STAP_PROBE2(bpfrt_late, fire, a, b);
	return a + b;
}

__attribute__((noinline)) int usdt_late_guarded(int x)
{
	if (bpfrt_late_guarded_semaphore) {
		STAP_PROBE1(bpfrt_late, guarded, x * 5);
		return 1;
	}
	return 0;
}
