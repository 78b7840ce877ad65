/* Force-included (clang -include) into the kernel selftests' pyperf and
 * strobemeta programs by bench/run_bench_verif.sh: the helpers only the
 * kernel has are swapped for ones bpfrt and the kernel both have, so the
 * two verify the same object. The values the swaps return are as unknown
 * to a verifier as the originals' (a scalar; a size-bounded output), so
 * the verification work is the same shape:
 *   bpf_get_stackid       -> bpf_get_prandom_u32 (an unknown int)
 *   bpf_get_current_task  -> bpf_get_current_pid_tgid (an unknown u64)
 *   bpf_perf_event_output -> bpf_ringbuf_output into kswap_events
 * The script also turns the perf-event-array and stack-trace maps into
 * arrays (their only users are the swapped helpers). */
#ifndef BPFRT_BENCH_VERIF_KSWAP_H
#define BPFRT_BENCH_VERIF_KSWAP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} kswap_events SEC(".maps");

#define bpf_get_stackid(ctx, map, flags) ((void)(map), (long)bpf_get_prandom_u32())
#define bpf_get_current_task() bpf_get_current_pid_tgid()
#define bpf_perf_event_output(ctx, map, flags, data, size) \
	((void)(map), bpf_ringbuf_output(&kswap_events, (data), (size), 0))

#endif
