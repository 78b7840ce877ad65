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
 * The walk never faults: a frame record inside the mapping that holds the
 * starting stack pointer, above it (the stack in use: mapped), is read
 * directly; any other address goes through the fault-safe probe read (a
 * system call; an unreadable record ends the walk). The mapping is learnt
 * once per thread and stack from /proc/self/maps, with system calls only
 * (pthread_getattr_np would allocate, and walks run in signal handlers
 * and in probes on malloc), so later walks need no system call at all. */
#define _GNU_SOURCE
#include "helpers/stack.h"
#include "helpers/probe.h"
#include "maps/map.h"
#include "maps/stackmap.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define PTR(x) ((void *)(uintptr_t)(x))

static bpfrt_stack_regs_fn regs_source;

void bpfrt_stack_set_regs_source(bpfrt_stack_regs_fn fn)
{
	__atomic_store_n(&regs_source, fn, __ATOMIC_RELEASE);
}

/* ---- the thread's stacks ---------------------------------------------------------- */

/* The mappings this thread's walks started in (its stack, a nest stack),
 * each learnt once from /proc/self/maps: the one mapping that holds the
 * starting stack pointer, read with plain system calls (open, read,
 * close: no allocation, async-signal-safe, so a walk may learn it inside
 * a signal handler or a probe on malloc). A thread's stack stays mapped
 * while the thread lives. initial-exec TLS: a first access in a signal
 * handler must not allocate. */
#define KNOWN_STACKS 2

static __thread struct known_stack {
	uintptr_t lo, hi;
} known_stacks[KNOWN_STACKS] __attribute__((tls_model("initial-exec")));
static __thread uint32_t known_next __attribute__((tls_model("initial-exec")));

static bool parse_hex(const char **p, const char *end, uintptr_t *v)
{
	const char *s = *p;
	uintptr_t x = 0;

	while (s < end) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			break;
		x = x << 4 | (uintptr_t)d;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*v = x;
	return true;
}

/* The mapping of /proc/self/maps holding addr, or false. */
static bool mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	char buf[4096];
	size_t have = 0;
	bool found = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - have);
		const char *line = buf, *end, *nl;

		if (got <= 0)
			break;
		end = buf + have + got;
		while (!found && (nl = memchr(line, '\n', (size_t)(end - line)))) {
			const char *p = line;
			uintptr_t a, b;

			if (parse_hex(&p, nl, &a) && p < nl && *p++ == '-' && parse_hex(&p, nl, &b) &&
			    addr >= a && addr < b) {
				*lo = a;
				*hi = b;
				found = true;
			}
			line = nl + 1;
		}
		if (found)
			break;
		have = (size_t)(end - line);
		if (have == sizeof(buf))  /* no line is that long */
			break;
		memmove(buf, line, have);
	}
	close(fd);
	return found;
}

/* The known stack mapping holding sp, learnt now if need be; false if
 * none does (then every record goes through the probe read). */
static bool stack_window(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	struct known_stack *k;

	for (int i = 0; i < KNOWN_STACKS; i++)
		if (known_stacks[i].hi && sp >= known_stacks[i].lo && sp < known_stacks[i].hi) {
			*lo = known_stacks[i].lo;
			*hi = known_stacks[i].hi;
			return true;
		}
	k = &known_stacks[known_next++ % KNOWN_STACKS];
	if (!mapping_of(sp, &k->lo, &k->hi)) {
		k->lo = k->hi = 0;
		return false;
	}
	*lo = k->lo;
	*hi = k->hi;
	return true;
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
	if (regs->sp && stack_window(regs->sp, &w.lo, &w.hi))
		w.lo = regs->sp;  /* the stack in use: above the stack pointer */
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
