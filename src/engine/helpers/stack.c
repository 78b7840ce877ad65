/* bpf_get_stackid (27), bpf_get_stack (67) and bpf_map_lookup_percpu_elem
 * (195), with Linux's prototypes, flags and error codes.
 *
 * What a stack is here: the user stack of the thread the program runs on
 * (there is no kernel stack in user space), walked by frame pointers.
 *   - A probe's programs (kprobe, kretprobe, uprobe, usdt: a pt_regs
 *     context the host says a probe gave them) start at the probed
 *     instruction: ips[0] is its address (a kretprobe's: the return
 *     address), then the return addresses of the frame chain from the
 *     probed code's frame pointer; at a function's entry the return
 *     address on top of the stack comes second, as Linux does for a uprobe
 *     there.
 *   - Every other program starts at its helper call: ips[0] is the return
 *     address into the program (interpreter or JIT code), then bpfrt's own
 *     frames and those of the code that ran the program. bpfrt's code is
 *     built without frame pointers by default, so such a chain may stop
 *     early or pass through frames that keep no pointer (Linux's kernel
 *     stacks of tracing programs also begin with the program's frames:
 *     BPF_F_SKIP_FIELD_MASK skips them).
 *   - A kernel stack (no BPF_F_USER_STACK) is empty, as in Linux for an
 *     event in user mode (a uprobe): get_stackid gives -EFAULT, get_stack
 *     0 bytes. A profiler that asks for both stacks gets its user stacks
 *     and no kernel addresses to symbolize against kallsyms.
 * Code built without frame pointers gives short or wrong chains, as it
 * does for Linux's perf; DWARF unwinding (libunwind's unw_init_local2 on
 * the probe's registers) is left for later (docs/MAPS.md).
 *
 * The walk never faults: a frame record inside the thread's own stack,
 * above the starting stack pointer (mapped: the stack in use), is read
 * directly; any other address goes through the fault-safe probe read (a
 * system call; an unreadable record ends the walk). The thread's stack
 * bounds come from pthread_getattr_np once per thread, not in a signal
 * handler (it allocates): a walk on the alternate signal stack reads every
 * record through the probe read and asks again at the next walk. */
#define _GNU_SOURCE
#include "helpers/stack.h"
#include "helpers/probe.h"
#include "maps/map.h"
#include "maps/stackmap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#define PTR(x) ((void *)(uintptr_t)(x))

static bpfrt_stack_regs_fn regs_source;

void bpfrt_stack_set_regs_source(bpfrt_stack_regs_fn fn)
{
	__atomic_store_n(&regs_source, fn, __ATOMIC_RELEASE);
}

/* ---- the thread's stack ----------------------------------------------------------- */

enum { BOUNDS_UNKNOWN, BOUNDS_KNOWN };

/* initial-exec: a first access in a signal handler must not allocate */
static __thread struct {
	uintptr_t lo, hi;
	int state;
} thread_stack __attribute__((tls_model("initial-exec")));

static bool on_signal_stack(void)
{
	stack_t ss;

	return sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

static void learn_thread_stack(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (thread_stack.state == BOUNDS_KNOWN || on_signal_stack())
		return;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			thread_stack.lo = (uintptr_t)addr;
			thread_stack.hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	thread_stack.state = BOUNDS_KNOWN;
}

/* ---- frame records ---------------------------------------------------------------- */

/* Where a frame pointer's record {caller's frame pointer, return address}
 * is: at fp on x86-64 and aarch64, below it on riscv64 (fp is the frame's
 * top there, ra at fp - 8, the caller's fp at fp - 16). */
#if defined(__riscv)
#define RECORD_OFF (-16)
#else
#define RECORD_OFF 0
#endif

struct walk_window {
	uintptr_t lo, hi;   /* records inside are read directly */
};

static bool read_words(const struct walk_window *w, uintptr_t at, uint64_t *out, size_t n)
{
	if (at & 7)
		return false;
	if (at >= w->lo && at < w->hi && w->hi - at >= n * 8) {
		memcpy(out, PTR(at), n * 8);
		return true;
	}
	return bpfrt_probe_read(out, PTR(at), n * 8) == 0;
}

uint32_t bpfrt_stack_walk(const struct bpfrt_stack_regs *regs, uint64_t *ips, uint32_t max)
{
	struct walk_window w = { 0, 0 };
	uintptr_t fp = regs->fp, prev = 0;
	uint64_t rec[2];
	uint32_t n = 0;

	if (!max)
		return 0;
	learn_thread_stack();
	if (thread_stack.hi && regs->sp >= thread_stack.lo && regs->sp < thread_stack.hi) {
		w.lo = regs->sp;
		w.hi = thread_stack.hi;
	}
	if (regs->ip)
		ips[n++] = regs->ip;
	if (regs->at_entry && n < max && read_words(&w, regs->sp, rec, 1) && rec[0])
		ips[n++] = rec[0];
	/* stacks grow down: each caller's record is above its callee's */
	while (n < max && fp && fp > prev) {
		if (!read_words(&w, fp + RECORD_OFF, rec, 2) || !rec[1])
			break;
		ips[n++] = rec[1];
		prev = fp;
		fp = (uintptr_t)rec[0];
	}
	return n;
}

/* The stack of the run: from the probe's registers for its context, else
 * from caller_frame, the frame of the helper the program called (its
 * record's return address is the program's call). */
static uint32_t collect(uint64_t ctx, void *caller_frame, uint64_t *ips, uint32_t max)
{
	bpfrt_stack_regs_fn src = __atomic_load_n(&regs_source, __ATOMIC_ACQUIRE);
	struct bpfrt_stack_regs regs = { 0 };

	if (!src || !src(ctx, &regs))
		regs = (struct bpfrt_stack_regs){ .fp = (uintptr_t)caller_frame,
						  .sp = (uintptr_t)caller_frame };
	return bpfrt_stack_walk(&regs, ips, max);
}

static uint32_t depth_for(uint32_t frames, uint32_t skip)
{
	uint64_t d = (uint64_t)frames + skip;

	return d > BPFRT_STACK_MAX_DEPTH ? BPFRT_STACK_MAX_DEPTH : (uint32_t)d;
}

/* ---- the helpers --------------------------------------------------------------------- */

#define STACKID_FLAGS (BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_FAST_STACK_CMP | \
		       BPF_F_REUSE_STACKID)

/* noinline with a frame of its own: __builtin_frame_address(0) makes the
 * compiler keep one, which is where a walk without a probe starts. */
__attribute__((noinline)) uint64_t bpfrt_bpf_get_stackid(uint64_t ctx, uint64_t map_arg,
							   uint64_t flags, uint64_t r4, uint64_t r5)
{
	struct bpfrt_map *map = PTR(map_arg);
	uint32_t skip = (uint32_t)(flags & BPF_F_SKIP_FIELD_MASK), nr;
	uint64_t ips[BPFRT_STACK_MAX_DEPTH];

	if (flags & ~(uint64_t)STACKID_FLAGS)
		return (uint64_t)-EINVAL;
	if (!map || map->type != BPF_MAP_TYPE_STACK_TRACE)
		return (uint64_t)-EINVAL;  /* the verifier admits only stack trace maps */
	if (!(flags & BPF_F_USER_STACK))
		return (uint64_t)-EFAULT;  /* no kernel stack in user space */
	nr = collect(ctx, __builtin_frame_address(0), ips,
		     depth_for(map->value_size / 8, skip));
	if (nr <= skip)
		return (uint64_t)-EFAULT;  /* skipping more than the stack has */
	return (uint64_t)bpfrt_stackmap_store(map, ips + skip, nr - skip, flags);
}

#define STACK_FLAGS (BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID)

/* Linux's semantics: the bytes written (a multiple of 8), the rest of buf
 * zeroed; on an error all of buf zeroed. BPF_F_USER_BUILD_ID (build-id +
 * offset records) is -EINVAL: bpfrt reports addresses only. */
__attribute__((noinline)) uint64_t bpfrt_bpf_get_stack(uint64_t ctx, uint64_t buf_arg,
							 uint64_t size_arg, uint64_t flags,
							 uint64_t r5)
{
	uint32_t size = (uint32_t)size_arg, skip = (uint32_t)(flags & BPF_F_SKIP_FIELD_MASK);
	uint64_t ips[BPFRT_STACK_MAX_DEPTH];
	char *buf = PTR(buf_arg);
	uint32_t nr = 0, copied;
	long err;

	if ((flags & ~(uint64_t)STACK_FLAGS) || (flags & BPF_F_USER_BUILD_ID) || size % 8) {
		err = -EINVAL;
		goto clear;
	}
	if (flags & BPF_F_USER_STACK)
		nr = collect(ctx, __builtin_frame_address(0), ips, depth_for(size / 8, skip));
	if (nr < skip) {
		err = -EFAULT;
		goto clear;
	}
	copied = nr - skip < size / 8 ? nr - skip : size / 8;
	memcpy(buf, ips + skip, (size_t)copied * 8);
	memset(buf + (size_t)copied * 8, 0, size - (size_t)copied * 8);
	return (uint64_t)copied * 8;
clear:
	if (size)
		memset(buf, 0, size);
	return (uint64_t)err;
}

/* cpu's value of a per-CPU array or hash (the verifier admits no other
 * kind); NULL for a missing key or cpu >= bpfrt_num_possible_cpus(). */
uint64_t bpfrt_bpf_map_lookup_percpu_elem(uint64_t map_arg, uint64_t key, uint64_t cpu,
					  uint64_t r4, uint64_t r5)
{
	struct bpfrt_map *map = PTR(map_arg);

	if (!map || !map->ops->lookup_percpu)
		return 0;
	return (uint64_t)(uintptr_t)map->ops->lookup_percpu(map, PTR(key), (uint32_t)cpu);
}
