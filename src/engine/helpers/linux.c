/* Linux's BPF helpers, under their Linux ids (enum bpf_func_id) with the
 * kernel's semantics, prototypes and error codes.
 *
 * Registration: bpfrt_helpers_init() runs once, from the first program
 * load in the default environment (bpfrt_prog_prepare; a new environment
 * gets them at creation), and fills only ids that are still empty, so
 * an embedder's helper under a Linux id is never overwritten and
 * registering one later replaces the default. (The conformance runner's
 * helper 5, "return r1", and ktime_get_ns both use id 5 this way.) The
 * host adds its own defaults for the default environment (the tracing
 * helpers) before main (bpfrt_helpers_add_defaults): the engine never
 * calls it.
 *
 * Pointers programs pass (maps, keys, buffers) are trusted as the Linux
 * verifier would have checked them; only the probe_read family and
 * trace_printk's %s accept arbitrary addresses, and never fault. */
#define _GNU_SOURCE
#include "helpers/helpers.h"
#include "core/env.h"
#include "core/error.h"
#include "helpers/callback.h"
#include "helpers/clock.h"
#include "helpers/current.h"
#include "helpers/dynptr.h"
#include "helpers/for_each.h"
#include "helpers/iter.h"
#include "helpers/kernel_kfuncs.h"
#include "helpers/local_storage.h"
#include "helpers/probe.h"
#include "helpers/skb.h"
#include "helpers/sock.h"
#include "helpers/stack.h"
#include "helpers/spin_lock.h"
#include "helpers/string.h"
#include "helpers/trace.h"
#include "maps/map.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define BPFRT_MAX_LOOPS (1u << 23) /* BPF_MAX_LOOPS */

#define PTR(x) ((void *)(uintptr_t)(x))

/* ---- maps -------------------------------------------------------------- */

static uint64_t bpf_map_lookup_elem(uint64_t map, uint64_t key, uint64_t r3,
				    uint64_t r4, uint64_t r5)
{
	if (!map)
		return 0;
	return (uint64_t)(uintptr_t)bpfrt_map_prog_lookup(PTR(map), PTR(key));
}

static uint64_t bpf_map_update_elem(uint64_t map, uint64_t key, uint64_t value,
				    uint64_t flags, uint64_t r5)
{
	if (!map)
		return (uint64_t)-EINVAL;
	return (uint64_t)bpfrt_map_prog_update(PTR(map), PTR(key), PTR(value), flags);
}

static uint64_t bpf_map_delete_elem(uint64_t map, uint64_t key, uint64_t r3,
				    uint64_t r4, uint64_t r5)
{
	if (!map)
		return (uint64_t)-EINVAL;
	return (uint64_t)bpfrt_map_prog_delete(PTR(map), PTR(key));
}

/* Queue, stack, bloom filter (the verifier admits only those kinds). */
static uint64_t bpf_map_push_elem(uint64_t map, uint64_t value, uint64_t flags, uint64_t r4,
				  uint64_t r5)
{
	return (uint64_t)bpfrt_map_prog_push(PTR(map), PTR(value), flags);
}

/* The verifier counts the value as written either way: an empty queue
 * leaves zeros there, never the stale stack bytes that were there. */
static uint64_t bpf_map_pop_elem(uint64_t map, uint64_t value, uint64_t r3, uint64_t r4,
				 uint64_t r5)
{
	long err = bpfrt_map_prog_pop(PTR(map), PTR(value));

	if (err)
		memset(PTR(value), 0, bpfrt_map_value_size(PTR(map)));
	return (uint64_t)err;
}

/* As pop; a bloom filter's value is the one tested, left as it is. */
static uint64_t bpf_map_peek_elem(uint64_t map, uint64_t value, uint64_t r3, uint64_t r4,
				  uint64_t r5)
{
	long err = bpfrt_map_prog_peek(PTR(map), PTR(value));

	if (err && bpfrt_map_type(PTR(map)) != BPF_MAP_TYPE_BLOOM_FILTER)
		memset(PTR(value), 0, bpfrt_map_value_size(PTR(map)));
	return (uint64_t)err;
}

/* Into this CPU's perf buffer ring (maps/perf_event_array.c). */
static uint64_t bpf_perf_event_output(uint64_t ctx, uint64_t map, uint64_t flags, uint64_t data,
				      uint64_t size)
{
	return (uint64_t)bpfrt_perf_event_output(PTR(map), flags, PTR(data), size);
}

/* bpfrt's cgroup arrays list no cgroup: "not under" (maps/cgroup_array.c). */
static uint64_t bpf_current_task_under_cgroup(uint64_t map, uint64_t idx, uint64_t r3,
					      uint64_t r4, uint64_t r5)
{
	return (uint64_t)bpfrt_cgroup_array_under(PTR(map), (uint32_t)idx);
}

/* ---- time, randomness, identity ---------------------------------------- */

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t bpf_ktime_get_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t bpf_ktime_get_boot_ns(uint64_t r1, uint64_t r2, uint64_t r3,
				      uint64_t r4, uint64_t r5)
{
	return clock_ns(CLOCK_BOOTTIME);
}

/* Per-thread splitmix64, seeded from getrandom: fast, lock-free, and
 * distinct across threads (Linux's is per-CPU prandom). */
static __thread uint64_t prandom_state;
static __thread bool prandom_seeded;

static uint64_t bpf_get_prandom_u32(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	uint64_t z;

	if (__builtin_expect(!prandom_seeded, 0)) {
		if (getrandom(&prandom_state, sizeof(prandom_state), GRND_NONBLOCK) !=
		    sizeof(prandom_state))
			prandom_state = clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)gettid() << 32);
		prandom_seeded = true;
	}
	z = (prandom_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static uint64_t bpf_get_smp_processor_id(uint64_t r1, uint64_t r2, uint64_t r3,
					 uint64_t r4, uint64_t r5)
{
	/* the same CPU numbering per-CPU maps index by */
	return (uint32_t)bpfrt_map_this_cpu();
}

/* get_current_pid_tgid, _uid_gid, _comm, _cgroup_id: helpers/current.c
 * (a per-thread cache). */

/* ---- probe_read family --------------------------------------------------- */

/* In one process user and kernel memory are the same address space: the
 * _user, _kernel and legacy variants all read the caller's memory. */
static uint64_t bpf_probe_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t r4,
			       uint64_t r5)
{
	return (uint64_t)bpfrt_probe_read(PTR(dst), PTR(src), (uint32_t)size);
}

static uint64_t bpf_probe_read_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t r4,
				   uint64_t r5)
{
	return (uint64_t)bpfrt_probe_read_str(PTR(dst), PTR(src), (uint32_t)size);
}

/* bpf_probe_write_user(dst, src, size): the process's memory is the user
 * memory; fault-safe (-EFAULT for unmapped or read-only dst). Only
 * trusted programs reach it (verifier/calls.c). */
static uint64_t bpf_probe_write_user(uint64_t dst, uint64_t src, uint64_t size, uint64_t r4,
				     uint64_t r5)
{
	return (uint64_t)bpfrt_probe_write(PTR(dst), PTR(src), (uint32_t)size);
}

/* ---- trace_printk -------------------------------------------------------- */

static uint64_t bpf_trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a1,
				 uint64_t a2, uint64_t a3)
{
	const uint64_t args[3] = { a1, a2, a3 };
	char msg[BPFRT_TRACE_MSG_MAX];
	long n = bpfrt_trace_format(msg, sizeof(msg), PTR(fmt), (uint32_t)fmt_size, args, 3);

	if (n < 0)
		return (uint64_t)n;
	bpfrt_trace_emit(msg, (size_t)n);
	return (uint64_t)n;
}

/* bpf_trace_vprintk(fmt, fmt_size, args, args_size): up to 12 u64 args. */
#define MAX_VPRINTK_ARGS 12

/* Formats fmt with the u64 arguments at data (data_len bytes) into msg
 * (BPFRT_TRACE_MSG_MAX bytes); returns the length or -errno. */
static long format_data_args(char *msg, uint64_t fmt, uint32_t fmt_size, uint64_t data,
			     uint64_t data_len)
{
	uint64_t args[MAX_VPRINTK_ARGS];

	if (data_len % 8 || data_len > MAX_VPRINTK_ARGS * 8 || (data_len && !data))
		return -EINVAL;
	if (data_len && bpfrt_probe_read(args, PTR(data), data_len))
		return -EFAULT;
	return bpfrt_trace_format(msg, BPFRT_TRACE_MSG_MAX, PTR(fmt), fmt_size, args,
				  (uint32_t)(data_len / 8));
}

static uint64_t bpf_trace_vprintk(uint64_t fmt, uint64_t fmt_size, uint64_t data,
				  uint64_t data_len, uint64_t r5)
{
	char msg[BPFRT_TRACE_MSG_MAX];
	long n = format_data_args(msg, fmt, (uint32_t)fmt_size, data, data_len);

	if (n < 0)
		return (uint64_t)n;
	bpfrt_trace_emit(msg, (size_t)n);
	return (uint64_t)n;
}

/* bpf_snprintf(str, str_size, fmt, data, data_len): returns the length
 * including the NUL, as Linux. str is NUL-padded to str_size (zeroed on
 * an error): the verifier counts all of it as written. */
static uint64_t bpf_snprintf(uint64_t str, uint64_t str_size, uint64_t fmt,
			     uint64_t data, uint64_t data_len)
{
	char msg[BPFRT_TRACE_MSG_MAX];
	/* fmt is a read-only string constant: read up to its NUL */
	long n = format_data_args(msg, fmt, BPFRT_TRACE_FMT_STRING, data, data_len);

	if (str_size) {
		size_t cp = n < 0 ? 0 : (size_t)n < str_size - 1 ? (size_t)n : str_size - 1;

		memcpy(PTR(str), msg, cp);
		memset((char *)PTR(str) + cp, 0, str_size - cp);
	}
	if (n < 0)
		return (uint64_t)n;
	return (uint64_t)n + 1;
}

/* ---- ring buffer ----------------------------------------------------------- */

static uint64_t bpf_ringbuf_output(uint64_t map, uint64_t data, uint64_t size,
				   uint64_t flags, uint64_t r5)
{
	return (uint64_t)bpfrt_ringbuf_output(PTR(map), PTR(data), size, flags);
}

static uint64_t bpf_ringbuf_reserve(uint64_t map, uint64_t size, uint64_t flags,
				    uint64_t r4, uint64_t r5)
{
	return (uint64_t)(uintptr_t)bpfrt_ringbuf_reserve(PTR(map), size, flags);
}

static uint64_t bpf_ringbuf_submit(uint64_t data, uint64_t flags, uint64_t r3,
				   uint64_t r4, uint64_t r5)
{
	if (data) /* the verifier would insist on a non-NULL record */
		bpfrt_ringbuf_submit(PTR(data), flags);
	return 0;
}

static uint64_t bpf_ringbuf_discard(uint64_t data, uint64_t flags, uint64_t r3,
				    uint64_t r4, uint64_t r5)
{
	if (data)
		bpfrt_ringbuf_discard(PTR(data), flags);
	return 0;
}

static uint64_t bpf_ringbuf_query(uint64_t map, uint64_t flags, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	return bpfrt_ringbuf_query(PTR(map), flags);
}

/* ---- bpf_loop ------------------------------------------------------------- */

static uint64_t bpf_loop(uint64_t nr_loops, uint64_t callback, uint64_t ctx,
			 uint64_t flags, uint64_t r5)
{
	uint32_t n = (uint32_t)nr_loops;
	uint32_t i;

	if (flags)
		return (uint64_t)-EINVAL;
	if (n > BPFRT_MAX_LOOPS)
		return (uint64_t)-E2BIG;
	for (i = 0; i < n; i++) {
		uint64_t ret = bpfrt_callback_invoke(callback, i, ctx, 0, 0, 0);

		if (ret || bpfrt_run_aborted())
			return (uint64_t)i + 1;
	}
	return i;
}

/* ---- table ------------------------------------------------------------------ */

#define A(t) BPFRT_ARG_##t

/* Prototypes follow the kernel's bpf_func_proto for each helper. Only the
 * arguments Linux declares are listed: the validator treats the others as
 * unread (trace_printk's optional arguments, like Linux). */
static const struct bpfrt_helper_default defaults[] = {
	{ BPF_FUNC_map_lookup_elem, { "map_lookup_elem", bpf_map_lookup_elem,
	  BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL, { A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY) } } },
	{ BPF_FUNC_map_update_elem, { "map_update_elem", bpf_map_update_elem,
	  BPFRT_RET_INTEGER, { A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY), A(PTR_TO_MAP_VALUE),
			       A(ANYTHING) } } },
	{ BPF_FUNC_map_delete_elem, { "map_delete_elem", bpf_map_delete_elem,
	  BPFRT_RET_INTEGER, { A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY) } } },
	{ BPF_FUNC_probe_read, { "probe_read", bpf_probe_read, BPFRT_RET_INTEGER,
	  { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_ktime_get_ns, { "ktime_get_ns", bpf_ktime_get_ns, BPFRT_RET_INTEGER } },
	{ BPF_FUNC_trace_printk, { "trace_printk", bpf_trace_printk, BPFRT_RET_INTEGER,
	  { A(PTR_TO_MEM), A(CONST_SIZE) } } },
	{ BPF_FUNC_get_prandom_u32, { "get_prandom_u32", bpf_get_prandom_u32,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_get_smp_processor_id, { "get_smp_processor_id", bpf_get_smp_processor_id,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_tail_call, { "tail_call", bpfrt_helper_tail_call, BPFRT_RET_VOID,
	  { A(PTR_TO_CTX), A(CONST_MAP_PTR), A(ANYTHING) } } },
	{ BPF_FUNC_get_current_pid_tgid, { "get_current_pid_tgid", bpfrt_bpf_get_current_pid_tgid,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_get_current_comm, { "get_current_comm", bpfrt_bpf_get_current_comm,
	  BPFRT_RET_INTEGER, { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE) } } },
	{ BPF_FUNC_probe_read_str, { "probe_read_str", bpf_probe_read_str, BPFRT_RET_INTEGER,
	  { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_probe_read_user, { "probe_read_user", bpf_probe_read, BPFRT_RET_INTEGER,
	  { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_probe_read_kernel, { "probe_read_kernel", bpf_probe_read, BPFRT_RET_INTEGER,
	  { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_probe_read_user_str, { "probe_read_user_str", bpf_probe_read_str,
	  BPFRT_RET_INTEGER, { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_probe_read_kernel_str, { "probe_read_kernel_str", bpf_probe_read_str,
	  BPFRT_RET_INTEGER, { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_ktime_get_boot_ns, { "ktime_get_boot_ns", bpf_ktime_get_boot_ns,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_ringbuf_output, { "ringbuf_output", bpf_ringbuf_output, BPFRT_RET_INTEGER,
	  { A(CONST_MAP_PTR), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_ringbuf_reserve, { "ringbuf_reserve", bpf_ringbuf_reserve,
	  BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL,
	  { A(CONST_MAP_PTR), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_ringbuf_submit, { "ringbuf_submit", bpf_ringbuf_submit, BPFRT_RET_VOID,
	  { A(PTR_TO_RINGBUF_MEM), A(ANYTHING) } } },
	{ BPF_FUNC_ringbuf_discard, { "ringbuf_discard", bpf_ringbuf_discard, BPFRT_RET_VOID,
	  { A(PTR_TO_RINGBUF_MEM), A(ANYTHING) } } },
	{ BPF_FUNC_ringbuf_query, { "ringbuf_query", bpf_ringbuf_query, BPFRT_RET_INTEGER,
	  { A(CONST_MAP_PTR), A(ANYTHING) } } },
	{ BPF_FUNC_snprintf, { "snprintf", bpf_snprintf, BPFRT_RET_INTEGER,
	  { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING),
	    A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO) } } },
	{ BPF_FUNC_trace_vprintk, { "trace_vprintk", bpf_trace_vprintk, BPFRT_RET_INTEGER,
	  { A(PTR_TO_MEM), A(CONST_SIZE), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO) } } },
	{ BPF_FUNC_perf_event_output, { "perf_event_output", bpf_perf_event_output,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX), A(CONST_MAP_PTR), A(ANYTHING), A(PTR_TO_MEM),
			       A(CONST_SIZE_OR_ZERO) } } },
	{ BPF_FUNC_current_task_under_cgroup, { "current_task_under_cgroup",
	  bpf_current_task_under_cgroup, BPFRT_RET_INTEGER, { A(CONST_MAP_PTR), A(ANYTHING) } } },
	{ BPF_FUNC_get_local_storage, { "get_local_storage", bpfrt_bpf_get_local_storage,
	  BPFRT_RET_PTR_TO_MAP_VALUE, { A(CONST_MAP_PTR), A(ANYTHING) } } },
	{ BPF_FUNC_map_push_elem, { "map_push_elem", bpf_map_push_elem, BPFRT_RET_INTEGER,
	  { A(CONST_MAP_PTR), A(PTR_TO_MAP_VALUE), A(ANYTHING) } } },
	{ BPF_FUNC_map_pop_elem, { "map_pop_elem", bpf_map_pop_elem, BPFRT_RET_INTEGER,
	  { A(CONST_MAP_PTR), A(PTR_TO_UNINIT_MAP_VALUE) } } },
	{ BPF_FUNC_map_peek_elem, { "map_peek_elem", bpf_map_peek_elem, BPFRT_RET_INTEGER,
	  { A(CONST_MAP_PTR), A(PTR_TO_UNINIT_MAP_VALUE) } } },
	{ BPF_FUNC_loop, { "loop", bpf_loop, BPFRT_RET_INTEGER,
	  { A(ANYTHING), A(PTR_TO_FUNC), A(PTR_TO_STACK_OR_NULL), A(ANYTHING) } } },
	{ BPF_FUNC_get_current_uid_gid, { "get_current_uid_gid", bpfrt_bpf_get_current_uid_gid,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_get_numa_node_id, { "get_numa_node_id", bpfrt_bpf_get_numa_node_id,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_get_current_cgroup_id, { "get_current_cgroup_id",
	  bpfrt_bpf_get_current_cgroup_id, BPFRT_RET_INTEGER } },
	{ BPF_FUNC_jiffies64, { "jiffies64", bpfrt_bpf_jiffies64, BPFRT_RET_INTEGER } },
	{ BPF_FUNC_ktime_get_coarse_ns, { "ktime_get_coarse_ns", bpfrt_bpf_ktime_get_coarse_ns,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_strncmp, { "strncmp", bpfrt_bpf_strncmp, BPFRT_RET_INTEGER,
	  { A(PTR_TO_MEM), A(CONST_SIZE), A(PTR_TO_CONST_STR) } } },
	{ BPF_FUNC_ktime_get_tai_ns, { "ktime_get_tai_ns", bpfrt_bpf_ktime_get_tai_ns,
	  BPFRT_RET_INTEGER } },
	{ BPF_FUNC_probe_write_user, { "probe_write_user", bpf_probe_write_user,
	  BPFRT_RET_INTEGER, { A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE) } } },
	{ BPF_FUNC_get_stackid, { "get_stackid", bpfrt_bpf_get_stackid, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX), A(CONST_MAP_PTR), A(ANYTHING) } } },
	{ BPF_FUNC_get_stack, { "get_stack", bpfrt_bpf_get_stack, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING) } } },
	{ BPF_FUNC_map_lookup_percpu_elem, { "map_lookup_percpu_elem",
	  bpfrt_bpf_map_lookup_percpu_elem, BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL,
	  { A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY), A(ANYTHING) } } },
	{ BPF_FUNC_spin_lock, { "spin_lock", bpfrt_bpf_spin_lock, BPFRT_RET_VOID,
	  { A(PTR_TO_SPIN_LOCK) } } },
	{ BPF_FUNC_spin_unlock, { "spin_unlock", bpfrt_bpf_spin_unlock, BPFRT_RET_VOID,
	  { A(PTR_TO_SPIN_LOCK) } } },
	{ BPF_FUNC_for_each_map_elem, { "for_each_map_elem", bpfrt_bpf_for_each_map_elem,
	  BPFRT_RET_INTEGER, { A(CONST_MAP_PTR), A(PTR_TO_FUNC), A(PTR_TO_STACK_OR_NULL),
			       A(ANYTHING) } } },
	/* dynptrs (helpers/dynptr.c); dynptr_from_mem's memory must be a map
	 * value (the verifier's rule, as Linux) */
	{ BPF_FUNC_dynptr_from_mem, { "dynptr_from_mem", bpfrt_bpf_dynptr_from_mem,
	  BPFRT_RET_INTEGER, { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING),
			       A(PTR_TO_UNINIT_DYNPTR_LOCAL) } } },
	{ BPF_FUNC_ringbuf_reserve_dynptr, { "ringbuf_reserve_dynptr",
	  bpfrt_bpf_ringbuf_reserve_dynptr, BPFRT_RET_INTEGER,
	  { A(CONST_MAP_PTR), A(ANYTHING), A(ANYTHING), A(PTR_TO_UNINIT_DYNPTR_RINGBUF) } } },
	{ BPF_FUNC_ringbuf_submit_dynptr, { "ringbuf_submit_dynptr",
	  bpfrt_bpf_ringbuf_submit_dynptr, BPFRT_RET_VOID,
	  { A(PTR_TO_DYNPTR_RINGBUF_RELEASE), A(ANYTHING) } } },
	{ BPF_FUNC_ringbuf_discard_dynptr, { "ringbuf_discard_dynptr",
	  bpfrt_bpf_ringbuf_discard_dynptr, BPFRT_RET_VOID,
	  { A(PTR_TO_DYNPTR_RINGBUF_RELEASE), A(ANYTHING) } } },
	{ BPF_FUNC_dynptr_read, { "dynptr_read", bpfrt_bpf_dynptr_read, BPFRT_RET_INTEGER,
	  { A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(PTR_TO_DYNPTR), A(ANYTHING),
	    A(ANYTHING) } } },
	{ BPF_FUNC_dynptr_write, { "dynptr_write", bpfrt_bpf_dynptr_write, BPFRT_RET_INTEGER,
	  { A(PTR_TO_DYNPTR), A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO),
	    A(ANYTHING) } } },
	/* callback(const struct bpf_dynptr *sample, void *ctx) (maps/user_ringbuf.c) */
	{ BPF_FUNC_user_ringbuf_drain, { "user_ringbuf_drain", bpfrt_bpf_user_ringbuf_drain,
	  BPFRT_RET_INTEGER, { A(CONST_MAP_PTR), A(PTR_TO_FUNC), A(PTR_TO_STACK_OR_NULL),
			       A(ANYTHING) } } },
	{ BPF_FUNC_dynptr_data, { "dynptr_data", bpfrt_bpf_dynptr_data,
	  BPFRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL,
	  { A(PTR_TO_DYNPTR), A(ANYTHING), A(CONST_SIZE_OR_ZERO) } } },
	{ BPF_FUNC_skb_load_bytes, { "skb_load_bytes", bpfrt_bpf_skb_load_bytes,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE) } } },
	{ BPF_FUNC_skb_load_bytes_relative, { "skb_load_bytes_relative",
	  bpfrt_bpf_skb_load_bytes_relative, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE), A(ANYTHING) } } },
	/* Linux's from and to may be NULL with a zero size: PTR_TO_MEM
	 * takes (NULL, 0) */
	{ BPF_FUNC_csum_diff, { "csum_diff", bpfrt_bpf_csum_diff, BPFRT_RET_INTEGER,
	  { A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO),
	    A(ANYTHING) } } },
	{ BPF_FUNC_strtol, { "strtol", bpfrt_bpf_strtol, BPFRT_RET_INTEGER,
	  { A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING), A(PTR_TO_LONG) } } },
	{ BPF_FUNC_strtoul, { "strtoul", bpfrt_bpf_strtoul, BPFRT_RET_INTEGER,
	  { A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING), A(PTR_TO_LONG) } } },
	/* sockets (helpers/sock.c): lookups find none here */
	{ BPF_FUNC_sk_lookup_tcp, { "sk_lookup_tcp", bpfrt_bpf_sk_lookup,
	  BPFRT_RET_PTR_TO_SOCKET_OR_NULL,
	  { A(PTR_TO_CTX), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING), A(ANYTHING) } } },
	{ BPF_FUNC_sk_lookup_udp, { "sk_lookup_udp", bpfrt_bpf_sk_lookup,
	  BPFRT_RET_PTR_TO_SOCKET_OR_NULL,
	  { A(PTR_TO_CTX), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING), A(ANYTHING) } } },
	{ BPF_FUNC_skc_lookup_tcp, { "skc_lookup_tcp", bpfrt_bpf_sk_lookup,
	  BPFRT_RET_PTR_TO_SOCK_COMMON_OR_NULL,
	  { A(PTR_TO_CTX), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING), A(ANYTHING) } } },
	{ BPF_FUNC_sk_release, { "sk_release", bpfrt_bpf_sk_release, BPFRT_RET_INTEGER,
	  { A(PTR_TO_SOCK_RELEASE) } } },
	{ BPF_FUNC_sk_fullsock, { "sk_fullsock", bpfrt_bpf_sk_cast,
	  BPFRT_RET_PTR_TO_SOCKET_OR_NULL, { A(PTR_TO_SOCK_COMMON) } } },
	{ BPF_FUNC_tcp_sock, { "tcp_sock", bpfrt_bpf_sk_cast, BPFRT_RET_PTR_TO_TCP_SOCK_OR_NULL,
	  { A(PTR_TO_SOCK_COMMON) } } },
	{ BPF_FUNC_get_listener_sock, { "get_listener_sock", bpfrt_bpf_sk_cast,
	  BPFRT_RET_PTR_TO_SOCKET_OR_NULL, { A(PTR_TO_SOCK_COMMON) } } },
	{ BPF_FUNC_get_socket_cookie, { "get_socket_cookie", bpfrt_bpf_get_socket_cookie,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX) } } },
	{ BPF_FUNC_get_netns_cookie, { "get_netns_cookie", bpfrt_bpf_get_netns_cookie,
	  BPFRT_RET_INTEGER, { A(PTR_TO_CTX_OR_NULL) } } },
	{ BPF_FUNC_csum_update, { "csum_update", bpfrt_bpf_csum_update, BPFRT_RET_INTEGER,
	  { A(PTR_TO_CTX), A(ANYTHING) } } },
	/* Linux returns a BTF tcp_sock; bpfrt's view is struct bpf_tcp_sock's */
	{ BPF_FUNC_skc_to_tcp_sock, { "skc_to_tcp_sock", bpfrt_bpf_sk_cast,
	  BPFRT_RET_PTR_TO_TCP_SOCK_OR_NULL, { A(PTR_TO_SOCK_COMMON) } } },
};

static void add_free_ids(struct bpfrt_env *env, const struct bpfrt_helper_default *set,
			 size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		bpfrt_env_helper_register_default(env, set[i].id, &set[i].h);
}

void bpfrt_env_add_linux_helpers(struct bpfrt_env *env)
{
	add_free_ids(env, defaults, sizeof(defaults) / sizeof(defaults[0]));
	/* and Linux's generic kfuncs, by name */
	bpfrt_env_add_iter_kfuncs(env);
	bpfrt_env_add_kernel_kfuncs(env);
}

/* The host's set (bpfrt_helpers_add_defaults): registered once, under
 * defaults_lock, as is whether the default environment's defaults went
 * in. */
static const struct bpfrt_helper_default *host_defaults;
static size_t host_default_cnt;
static bool defaults_filled;
static pthread_mutex_t defaults_lock = PTHREAD_MUTEX_INITIALIZER;

static void register_defaults(void)
{
	pthread_mutex_lock(&defaults_lock);
	bpfrt_env_add_linux_helpers(bpfrt_env_default());
	if (host_defaults)
		add_free_ids(bpfrt_env_default(), host_defaults, host_default_cnt);
	defaults_filled = true;
	pthread_mutex_unlock(&defaults_lock);
}

static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

void bpfrt_helpers_init(void)
{
	pthread_once(&defaults_once, register_defaults);
}

int bpfrt_helpers_add_defaults(const struct bpfrt_helper_default *set, size_t cnt)
{
	int err = 0;

	if (!set || !cnt)
		return bpfrt_err(-EINVAL, "helper defaults: empty set");
	pthread_mutex_lock(&defaults_lock);
	if (host_defaults && host_defaults != set) {
		err = bpfrt_err(-EBUSY, "helper defaults: another set is registered");
	} else {
		host_defaults = set;
		host_default_cnt = cnt;
		/* a program was loaded already: later loads get them */
		if (defaults_filled)
			add_free_ids(bpfrt_env_default(), set, cnt);
	}
	pthread_mutex_unlock(&defaults_lock);
	return err;
}

void bpfrt_env_add_defaults(struct bpfrt_env *env)
{
	pthread_mutex_lock(&defaults_lock);
	bpfrt_env_add_linux_helpers(env);
	if (host_defaults)
		add_free_ids(env, host_defaults, host_default_cnt);
	pthread_mutex_unlock(&defaults_lock);
}
