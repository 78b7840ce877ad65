/* Linux's coarse clock and TAI helpers (clock.c). */
#ifndef BPFRT_HELPERS_CLOCK_H
#define BPFRT_HELPERS_CLOCK_H

#include <stdint.h>

uint64_t bpfrt_bpf_ktime_get_coarse_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5);
uint64_t bpfrt_bpf_ktime_get_tai_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5);
uint64_t bpfrt_bpf_jiffies64(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);
/* The length of one jiffy in ns (1/CONFIG_HZ of the running kernel). */
uint64_t bpfrt_jiffies_tick_ns(void);

#endif
