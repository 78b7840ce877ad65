/* Private stacks, the host behind the engine's contract (core/stack_abi.h
 * has the layout and what backends do; privstack.h the nesting rules):
 * ids, per-thread stacks, their life cycle, the stacks of nested runs
 * without a private stack (nest stacks), and the SIGSEGV handler that
 * turns a guard-page hit inside a run into an aborted run. The engine
 * reaches the load, unload, first-run and abort paths only through the
 * struct bpfrt_stack_host registered at the end of this file, before main.
 *
 * Ownership: every private stack is on two lists, its program's and its
 * thread's, both under ps_lock. Whoever comes first frees it: the thread
 * at exit (pthread key destructor) or the program at unload. Unloading
 * clears the slot and record of the program's id in every thread that had
 * a stack, so a reused id starts empty everywhere. A thread's own fast
 * path reads and writes its slots without the lock: only slots of
 * programs that are not being unloaded (a program is unloaded only when
 * no run of it is in progress), so the two never touch the same slot at
 * once. Nest stacks belong to their thread alone (freed at its exit).
 *
 * Async-signal safety: a thread's first run of a program may happen in a
 * signal handler (int3 kprobes run programs from SIGTRAP), interrupting
 * any code, malloc or this file included. So the run-time paths allocate
 * with mmap only (a stack's record lives in its own mapping, a thread's
 * record in a mapping of its own), and ps_lock is a spin lock whose
 * holders only relink lists, never block and never allocate: a handler
 * waits for another thread's holder to finish, and when the holder is the
 * very thread it interrupted (ps_lock_mine) it gives up and the run is
 * skipped as a miss. The pthread key is created in a constructor, so it
 * is among the process's first and glibc keeps its value in the thread
 * descriptor (pthread_setspecific allocates nothing for keys below 32);
 * pthread_once calls on the run-time paths find their work done at load;
 * installing the SIGSEGV handler (for a program whose first private-stack
 * id comes from a nested interpreter run) is async-signal-safe. */
#define _GNU_SOURCE
#include "stack/privstack.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/prog.h"
#include "core/rcu.h"
#include "core/run.h"
#include "signal/chain.h"
#include "signal/ucontext.h"
#include "stack/stack_switch.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define PS_ALTSTACK_SIZE (64u << 10)

struct ps_thread;

/* The record of a stack lives at the top of its own usable pages, above
 * the C area (no malloc on the run-time path). */
struct bpfrt_privstack {
	struct bpfrt_prog *prog;
	struct ps_thread *thread;
	struct bpfrt_privstack *pnext, **pprev;  /* program's list (unlinked: to unmap) */
	struct bpfrt_privstack *tnext, **tprev;  /* thread's list */
	char *map;                               /* whole mapping, guards included */
	size_t map_len;
	char *lo, *hi;                           /* usable pages */
	char *top;                               /* BPF r10 of the main frame */
};

/* One per thread that ran a program needing one of its stacks; a mapping
 * of its own. */
struct ps_thread {
	/* this thread's bpfrt_privstack_slots, by program id */
	void *slots[BPFRT_PRIVSTACK_MAX_IDS];
	struct bpfrt_privstack *stacks;
	/* by id: the signal handler finds a running program's stack without
	 * walking lists that other threads may change */
	struct bpfrt_privstack *_Atomic rec[BPFRT_PRIVSTACK_MAX_IDS];
	void *altstack;                          /* ours, or NULL */
	/* nest stacks by level (their tops, the mapping ends one guard page
	 * above), and how many levels the runs in progress here use */
	char *_Atomic nest_top[BPFRT_NEST_STACK_LEVELS];
	uint32_t nest_level;
};

static __thread struct ps_thread *ps_self __attribute__((tls_model("initial-exec")));

/* See the top of the file: a spin lock a signal handler may take, unless
 * it interrupted this thread's own holder. */
static _Atomic int ps_lock_word;
static __thread bool ps_lock_mine __attribute__((tls_model("initial-exec")));

static uint64_t ps_ids[BPFRT_PRIVSTACK_MAX_IDS / 64];   /* under ps_lock */
static pthread_key_t ps_key;
static pthread_once_t ps_once = PTHREAD_ONCE_INIT;
static int ps_init_err;
static _Atomic uint64_t ps_live, ps_bytes, ps_allocs, ps_frees, ps_threads;
static _Atomic uint64_t ps_nest_live, ps_nest_bytes;
static _Atomic uint32_t ps_test_size;
static size_t ps_page;

/* Returns false, without waiting, when this thread already holds the lock
 * (a signal handler that interrupted the holder). */
static bool ps_lock(void)
{
	if (ps_lock_mine)
		return false;
	/* set first: a handler running between the exchange and the store
	 * would wait for itself */
	ps_lock_mine = true;
	atomic_signal_fence(memory_order_seq_cst);
	while (atomic_exchange_explicit(&ps_lock_word, 1, memory_order_acquire))
		sched_yield();
	return true;
}

static void ps_unlock(void)
{
	atomic_store_explicit(&ps_lock_word, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	ps_lock_mine = false;
}

/* Paths that never run in signal context (load, unload, thread exit,
 * counters): the lock cannot be this thread's already. */
static void ps_lock_always(void)
{
	if (!ps_lock())
		abort();
}

static size_t page_round(size_t v)
{
	return (v + ps_page - 1) & ~(ps_page - 1);
}


void bpfrt_privstack_test_set_size(uint32_t bytes)
{
	atomic_store(&ps_test_size, bytes);
}

void bpfrt_privstack_test_locked(void (*fn)(void *), void *arg)
{
	ps_lock_always();
	fn(arg);
	ps_unlock();
}

/* ---- policy and ids ---------------------------------------------------- */

static int id_alloc(uint32_t *id)
{
	int ret = -ENOSPC;

	if (!ps_lock())
		return -EAGAIN; /* a nested interpreter run in a handler */
	for (uint32_t w = 0; w < BPFRT_PRIVSTACK_MAX_IDS / 64; w++)
		if (~ps_ids[w]) {
			uint32_t b = (uint32_t)__builtin_ctzll(~ps_ids[w]);

			ps_ids[w] |= 1ull << b;
			*id = w * 64 + b;
			ret = 0;
			break;
		}
	ps_unlock();
	return ret;
}

static void thread_exit(void *arg);

static void ps_global_init(void)
{
	ps_page = (size_t)sysconf(_SC_PAGESIZE);
	ps_init_err = -pthread_key_create(&ps_key, thread_exit);
}

static int ps_init(void)
{
	pthread_once(&ps_once, ps_global_init);
	return ps_init_err;
}

static uint32_t round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Gives prog an id without turning the policy on (nested interpreter
 * runs), or with it (prog_init). Returns 0 or -errno. */
static int prog_need_id(struct bpfrt_prog *prog)
{
	int err;

	if (prog->privstack_has_id)
		return 0;
	/* the handler goes in now, not on a first run in signal context */
	if ((err = ps_init()) || (err = bpfrt_privstack_fault_init()))
		return err;
	if ((err = id_alloc(&prog->privstack_id)))
		return err;
	prog->privstack_size = round_up(prog->stack_depth ? prog->stack_depth : 16, 16);
	prog->privstack_has_id = true;
	return 0;
}

/* Load time: decides whether prog uses a private stack (policy, flags),
 * and if so gives it an id. */
static int prog_init(struct bpfrt_prog *prog)
{
	bool on;
	int err;

	if (prog->load_flags & BPFRT_F_DISABLE_PRIVATE_STACK)
		on = false;
	else if (prog->load_flags & BPFRT_F_PRIVATE_STACK)
		on = true;
	else
		on = bpfrt_prog_kind_is_tracing(prog->kind) && prog->stack_depth > 64;
	prog->privstack = false;
	if (!on)
		return 0;
	err = prog_need_id(prog);
	if (err == -ENOSPC && !(prog->load_flags & BPFRT_F_PRIVATE_STACK))
		return 0; /* the default policy falls back to the native stack */
	if (err)
		return bpfrt_err(err, "%s: no private stack: %s", prog->name,
				 err == -ENOSPC ? "all program ids are taken" : "cannot set up");
	prog->privstack = true;
	return 0;
}

/* ---- stacks ------------------------------------------------------------- */

/* Unmaps stacks chained through pnext (already unlinked: nothing else
 * reaches them). The record is inside the mapping. */
static void stacks_unmap(struct bpfrt_privstack *ps)
{
	while (ps) {
		struct bpfrt_privstack *next = ps->pnext;
		size_t len = ps->map_len;

		munmap(ps->map, len);
		atomic_fetch_sub(&ps_live, 1);
		atomic_fetch_sub(&ps_bytes, len);
		atomic_fetch_add(&ps_frees, 1);
		ps = next;
	}
}

/* Caller holds ps_lock. Forgets ps in both lists and in its thread, and
 * pushes it on *dead (through pnext) for stacks_unmap after the unlock. */
static void stack_unlink(struct bpfrt_privstack *ps, struct bpfrt_privstack **dead)
{
	struct ps_thread *t = ps->thread;
	uint32_t id = ps->prog->privstack_id;

	atomic_store(&t->rec[id], NULL);
	t->slots[id] = NULL;
	*ps->pprev = ps->pnext;
	if (ps->pnext)
		ps->pnext->pprev = ps->pprev;
	*ps->tprev = ps->tnext;
	if (ps->tnext)
		ps->tnext->tprev = ps->tprev;
	ps->prog->privstack_threads--;
	ps->pnext = *dead;
	*dead = ps;
}

/* Unload: frees every thread's stack of prog and its id. */
static void prog_fini(struct bpfrt_prog *prog)
{
	struct bpfrt_privstack *dead = NULL;

	if (!prog->privstack_has_id)
		return;
	ps_lock_always();
	while (prog->privstack_list)
		stack_unlink(prog->privstack_list, &dead);
	ps_ids[prog->privstack_id / 64] &= ~(1ull << (prog->privstack_id % 64));
	ps_unlock();
	stacks_unmap(dead);
	prog->privstack_has_id = false;
	prog->privstack = false;
}

static size_t nest_map_len(void)
{
	return BPFRT_NEST_STACK_SIZE + 2 * ps_page;
}

static void thread_exit(void *arg)
{
	struct ps_thread *t = arg;
	struct bpfrt_privstack *dead = NULL;

	ps_lock_always();
	while (t->stacks)
		stack_unlink(t->stacks, &dead);
	ps_unlock();
	stacks_unmap(dead);
	for (uint32_t i = 0; i < BPFRT_NEST_STACK_LEVELS; i++) {
		char *top = atomic_load_explicit(&t->nest_top[i], memory_order_relaxed);

		if (!top)
			continue;
		munmap(top - BPFRT_NEST_STACK_SIZE - ps_page, nest_map_len());
		atomic_fetch_sub(&ps_nest_live, 1);
		atomic_fetch_sub(&ps_nest_bytes, nest_map_len());
	}
	if (t->altstack) {
		stack_t ss = { .ss_flags = SS_DISABLE }, cur;

		/* not while a handler runs on it (exit from a handler) */
		if (!sigaltstack(NULL, &cur) && !(cur.ss_flags & SS_ONSTACK) &&
		    cur.ss_sp == t->altstack && !sigaltstack(&ss, NULL))
			munmap(t->altstack, PS_ALTSTACK_SIZE);
	}
	if (ps_self == t) {
		ps_self = NULL;
		bpfrt_privstack_slots = (void **)bpfrt_privstack_no_slots;
	}
	atomic_fetch_sub(&ps_threads, 1);
	munmap(t, page_round(sizeof(*t)));
}

/* A signal stack for threads that have none: a guard-page fault is
 * handled there even if the thread's own stack is what overflowed. */
static void thread_altstack(struct ps_thread *t)
{
	stack_t cur, ss;
	void *p;

	if (sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE))
		return;
	p = mmap(NULL, PS_ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return;
	ss = (stack_t){ .ss_sp = p, .ss_size = PS_ALTSTACK_SIZE };
	if (sigaltstack(&ss, NULL)) {
		munmap(p, PS_ALTSTACK_SIZE);
		return;
	}
	t->altstack = p;
}

/* This thread's record, made on its first need (maybe in a signal handler
 * that interrupted the same function: the compare-and-swap on ps_self
 * keeps one record). */
static struct ps_thread *thread_get(void)
{
	struct ps_thread *t = ps_self, *cur = NULL;

	if (__builtin_expect(t != NULL, 1))
		return t;
	if (ps_init())
		return NULL;
	t = mmap(NULL, page_round(sizeof(*t)), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	/* The slots first: a signal handler that finds ps_self set gives
	 * stacks back to bpfrt_privstack_slots. One that made its own record
	 * before the exchange has set its slots, which the loser restores. */
	bpfrt_privstack_slots = t->slots;
	if (!__atomic_compare_exchange_n(&ps_self, &cur, t, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		bpfrt_privstack_slots = cur->slots;
		munmap(t, page_round(sizeof(*t)));
		return cur;
	}
	/* the destructor frees it at thread exit */
	if (pthread_setspecific(ps_key, t)) {
		bpfrt_privstack_slots = (void **)bpfrt_privstack_no_slots;
		ps_self = NULL;
		munmap(t, page_round(sizeof(*t)));
		return NULL;
	}
	thread_altstack(t);
	atomic_fetch_add(&ps_threads, 1);
	return t;
}

/* NULL with *busy set: ps_lock is held by the code this signal handler
 * interrupted. */
static struct bpfrt_privstack *stack_alloc(struct bpfrt_prog *prog, struct ps_thread *t,
					   bool *busy)
{
	uint32_t test = atomic_load(&ps_test_size);
	uint32_t depth = test ? round_up(test, 16) : prog->privstack_size;
	size_t rec = (sizeof(struct bpfrt_privstack) + 15) & ~(size_t)15;
	size_t usable = page_round(depth + BPFRT_PRIVSTACK_C_AREA + rec);
	size_t map_len = usable + 2 * ps_page;
	struct bpfrt_privstack *ps;
	char *map;

	map = mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (mprotect(map + ps_page, usable, PROT_READ | PROT_WRITE)) {
		munmap(map, map_len);
		return NULL;
	}
	ps = (struct bpfrt_privstack *)(map + ps_page + usable - rec);
	ps->map = map;
	ps->map_len = map_len;
	ps->lo = map + ps_page;
	ps->hi = ps->lo + usable;
	ps->top = ps->lo + depth;
	ps->prog = prog;
	ps->thread = t;

	if (!ps_lock()) {
		munmap(map, map_len);
		*busy = true;
		return NULL;
	}
	ps->pnext = prog->privstack_list;
	if (ps->pnext)
		ps->pnext->pprev = &ps->pnext;
	ps->pprev = &prog->privstack_list;
	prog->privstack_list = ps;
	ps->tnext = t->stacks;
	if (ps->tnext)
		ps->tnext->tprev = &ps->tnext;
	ps->tprev = &t->stacks;
	t->stacks = ps;
	prog->privstack_threads++;
	atomic_store(&t->rec[prog->privstack_id], ps);
	ps_unlock();
	atomic_fetch_add(&ps_live, 1);
	atomic_fetch_add(&ps_bytes, map_len);
	atomic_fetch_add(&ps_allocs, 1);
	return ps;
}

static void *run_refused(struct bpfrt_prog *prog)
{
	atomic_fetch_add_explicit(&prog->attach_misses, 1, memory_order_relaxed);
	return NULL;
}

static void run_abort(int err)
{
	bpfrt_run_state.abort_err = err;
	bpfrt_run_state.abort_pc = 0;
	bpfrt_run_state.abort_arg = 0;
}

/* The slow path of the claim (struct bpfrt_stack_host.claim_slow):
 * an id first for a nested interpreter run of a program that has none
 * (-EAGAIN in a handler that interrupted the lock's holder: no stack). */
static void *claim_slow(struct bpfrt_prog *prog)
{
	struct ps_thread *t;
	struct bpfrt_privstack *ps;
	bool busy = false;

	if ((!prog->privstack_has_id && prog_need_id(prog)) || !(t = thread_get()))
		goto fail;
	ps = atomic_load_explicit(&t->rec[prog->privstack_id], memory_order_relaxed);
	/* allocated and its slot empty: in use by a live activation (a
	 * second one would share it) */
	if (ps)
		return run_refused(prog);
	ps = stack_alloc(prog, t, &busy);
	if (ps)
		return ps->top; /* claimed: the slot stays empty */
	if (busy)
		return run_refused(prog);
fail:
	run_abort(ENOMEM);
	return NULL;
}

static void *release_aborted(struct bpfrt_prog *prog)
{
	struct ps_thread *t = ps_self;
	struct bpfrt_privstack *ps = t ? atomic_load(&t->rec[prog->privstack_id]) : NULL;

	if (!ps)
		abort(); /* an abort stub ran without a claimed stack */
	t->slots[prog->privstack_id] = ps->top;
	return *(void **)(ps->top + BPFRT_PRIVSTACK_ENTRY_SP_OFF);
}

/* ---- nest stacks ---------------------------------------------------------
 *
 * A JIT run nested in another run (bpfrt_prog_run inside a run, an
 * attached program fired inside a run) of a program without a private
 * stack: its BPF frame and everything it calls (helpers, kfuncs, the runs
 * those start) go on this thread's stack for the next nesting level
 * instead of the stack in use. Levels are taken in order and given back in
 * order (a signal handler's runs complete before the code it interrupted
 * goes on), so level n's stack serves one run at a time. */

/* Returns the top of the new stack. */
static __attribute__((noinline, cold)) char *nest_alloc(struct ps_thread *t, uint32_t level)
{
	char *map, *cur = NULL;

	map = mmap(NULL, nest_map_len(), PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (mprotect(map + ps_page, BPFRT_NEST_STACK_SIZE, PROT_READ | PROT_WRITE)) {
		munmap(map, nest_map_len());
		return NULL;
	}
	/* a signal handler on this thread may have mapped it meanwhile */
	if (!atomic_compare_exchange_strong(&t->nest_top[level], &cur,
					    map + ps_page + BPFRT_NEST_STACK_SIZE)) {
		munmap(map, nest_map_len());
		return cur;
	}
	atomic_fetch_add(&ps_nest_live, 1);
	atomic_fetch_add(&ps_nest_bytes, nest_map_len());
	return map + ps_page + BPFRT_NEST_STACK_SIZE;
}

/* Runs prog's image on the nest stack of `level` (its top), one level
 * deeper for anything the run nests. */
static inline __attribute__((always_inline)) uint64_t
nest_call(struct ps_thread *t, uint32_t level, char *top, const struct bpfrt_prog *prog,
	  uint64_t r1, uint64_t r2)
{
	uint64_t r0;

	t->nest_level = level + 1;
	atomic_signal_fence(memory_order_seq_cst);
	r0 = bpfrt_run_on_stack((bpfrt_stack_fn)prog->jit_func, r1, r2, top,
				BPFRT_NEST_STACK_SIZE);
	atomic_signal_fence(memory_order_seq_cst);
	t->nest_level = level;
	return r0;
}

/* The rare outcomes, out of line: no thread record yet, levels
 * exhausted, a level not mapped yet. */
static __attribute__((noinline, cold)) uint64_t
nest_run_slow(const struct bpfrt_prog *prog, uint64_t r1, uint64_t r2)
{
	struct ps_thread *t = thread_get();
	uint32_t level;
	char *top;

	if (!t) {
		run_abort(ENOMEM);
		return 0;
	}
	level = t->nest_level;
	if (level >= BPFRT_NEST_STACK_LEVELS) {
		run_refused((struct bpfrt_prog *)prog);
		run_abort(ELOOP);
		return 0;
	}
	top = atomic_load_explicit(&t->nest_top[level], memory_order_relaxed);
	if (!top && !(top = nest_alloc(t, level))) {
		run_abort(ENOMEM);
		return 0;
	}
	return nest_call(t, level, top, prog, r1, r2);
}

uint64_t bpfrt_nest_stack_run(const struct bpfrt_prog *prog, uint64_t r1, uint64_t r2)
{
	struct ps_thread *t = ps_self;
	uint32_t level;
	char *top;

	if (__builtin_expect(!t, 0))
		return nest_run_slow(prog, r1, r2);
	level = t->nest_level;
	if (__builtin_expect(level >= BPFRT_NEST_STACK_LEVELS, 0))
		return nest_run_slow(prog, r1, r2);
	top = atomic_load_explicit(&t->nest_top[level], memory_order_relaxed);
	if (__builtin_expect(!top, 0))
		return nest_run_slow(prog, r1, r2);
	return nest_call(t, level, top, prog, r1, r2);
}

/* ---- counters ------------------------------------------------------------ */

int bpfrt_prog_privstack_info(const struct bpfrt_prog *prog, struct bpfrt_privstack_info *info)
{
	struct bpfrt_privstack_info now = { .sz = sizeof(now) };

	if (!prog)
		return bpfrt_err(-EINVAL, "privstack_info: NULL program");
	if (!OUT_VALID(info, bpfrt_privstack_info))
		return -EINVAL;
	now.enabled = prog->privstack;
	now.stack_size = prog->privstack_has_id ? prog->privstack_size : 0;
	ps_lock_always();
	now.thread_cnt = prog->privstack_threads;
	ps_unlock();
	now.faults = atomic_load(&((struct bpfrt_prog *)prog)->privstack_faults);
	now.faulted = now.faults != 0;
	OUT_COPY(info, &now, enabled);
	OUT_COPY(info, &now, faulted);
	OUT_COPY(info, &now, stack_size);
	OUT_COPY(info, &now, thread_cnt);
	OUT_COPY(info, &now, faults);
	return 0;
}

int bpfrt_privstack_stats(struct bpfrt_privstack_stats *st)
{
	if (!OUT_VALID(st, bpfrt_privstack_stats))
		return -EINVAL;
	OPTS_SET(st, live, atomic_load(&ps_live));
	OPTS_SET(st, bytes_mapped, atomic_load(&ps_bytes));
	OPTS_SET(st, allocs, atomic_load(&ps_allocs));
	OPTS_SET(st, frees, atomic_load(&ps_frees));
	OPTS_SET(st, threads, atomic_load(&ps_threads));
	OPTS_SET(st, nest_stacks, atomic_load(&ps_nest_live));
	OPTS_SET(st, nest_bytes, atomic_load(&ps_nest_bytes));
	return 0;
}

/* ---- guard-page faults --------------------------------------------------
 *
 * The handler goes in through signal/chain.h (its policy: installed once,
 * SA_ONSTACK, chained to the host's previous disposition) when the first
 * program gets a private-stack id. It owns a fault only when the address
 * is in a guard page of a private stack of a program running now on this
 * thread and the faulting code is that program's JIT image or an
 * interpreter run of it; it then resumes the thread at an unwind point.
 * Every other fault is declined and goes where it would have gone without
 * bpfrt (with SIG_DFL: the process dies of it). */

static struct bpfrt_privstack *ps_find_guard(struct ps_thread *t, uintptr_t addr)
{
	for (uint32_t id = 0; id < BPFRT_PRIVSTACK_MAX_IDS; id++) {
		struct bpfrt_privstack *ps;

		if (t->slots[id]) /* free, so not running */
			continue;
		ps = atomic_load_explicit(&t->rec[id], memory_order_relaxed);
		if (!ps)
			continue;
		if ((addr >= (uintptr_t)ps->map && addr < (uintptr_t)ps->lo) ||
		    (addr >= (uintptr_t)ps->hi && addr < (uintptr_t)ps->map + ps->map_len))
			return ps;
	}
	return NULL;
}

#if BPFRT_UC_SUPPORTED
static __attribute__((noreturn, used)) void ps_interp_unwind(void *jmpbuf)
{
	longjmp(*(jmp_buf *)jmpbuf, 1);
}
#endif

static bool ps_segv(int sig, siginfo_t *info, ucontext_t *uc)
{
	struct ps_thread *t = ps_self;
	struct bpfrt_privstack *ps;

	if (!t || !(ps = ps_find_guard(t, (uintptr_t)info->si_addr)))
		return false;
#if !BPFRT_UC_SUPPORTED
	(void)uc;
	return false;
#else
	struct bpfrt_prog *prog = ps->prog;
	uintptr_t pc = bpfrt_uc_pc(uc);
	uintptr_t image = (uintptr_t)prog->jit_func;

	if (prog->privstack_abort && pc >= image && pc < image + prog->jit_len) {
		/* the stub calls release_aborted, which returns the
		 * entry sp the program stored in its C area; the stub's call
		 * runs on that sp */
		bpfrt_uc_set_sp(uc, *(uintptr_t *)(ps->top + BPFRT_PRIVSTACK_ENTRY_SP_OFF));
		bpfrt_uc_set_pc(uc, prog->privstack_abort);
	} else if (bpfrt_privstack_interp_top && bpfrt_privstack_interp_top->prog == prog) {
		/* leave signal context (the kernel restores the mask) and
		 * longjmp from there; the native stack is intact, and 256
		 * bytes clear any red zone below sp */
		uintptr_t sp = (bpfrt_uc_sp(uc) - 256) & ~(uintptr_t)15;

		bpfrt_uc_set_sp(uc, sp - BPFRT_UC_CALL_BIAS);
		bpfrt_uc_set_arg(uc, 0, (uintptr_t)bpfrt_privstack_interp_top->jmpbuf);
		bpfrt_uc_set_pc(uc, (uintptr_t)ps_interp_unwind);
	} else {
		return false;
	}
	atomic_fetch_add_explicit(&prog->privstack_faults, 1, memory_order_relaxed);
	bpfrt_run_state.abort_err = EFAULT;
	bpfrt_run_state.abort_pc = 0;
	bpfrt_run_state.abort_arg = (uint64_t)(uintptr_t)info->si_addr;
	return true;
#endif
}

int bpfrt_privstack_fault_init(void)
{
	return bpfrt_signal_handle(SIGSEGV, ps_segv, 0);
}

/* ---- nested execution ----------------------------------------------------
 *
 * The kfunc bpfrt_run_children(list, arg) runs every program of a child
 * list with r1 = arg and returns the sum of their r0 (a child that is
 * refused or aborts adds nothing): a nested scheduler, where the
 * program of a cgroup asks the programs of its children. Lists are
 * immutable once published; replacing one waits for a grace period
 * before freeing the old one, so runs in progress read it safely.
 *
 * arg is any number the parent computed (a depth, an index), not a
 * context, so a child gets no context: a verified child must read none
 * (max_ctx_access 0, which also counts what its tail-call targets and the
 * host kfuncs it hands r1 may read). bpfrt_nest_set_children refuses the
 * others. Trusted (unverified) children are the host's to vouch for. */

struct nest_list {
	uint32_t cnt;
	struct bpfrt_prog *progs[];
};

static struct nest_list *_Atomic nest_lists[BPFRT_NEST_MAX_LISTS];
static pthread_mutex_t nest_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t nest_run_children(uint64_t list, uint64_t arg, uint64_t r3, uint64_t r4,
				  uint64_t r5)
{
	const struct nest_list *l;
	uint64_t sum = 0, r0;

	if (list >= BPFRT_NEST_MAX_LISTS)
		return 0;
	l = atomic_load_explicit(&nest_lists[list], memory_order_acquire);
	for (uint32_t i = 0; l && i < l->cnt; i++)
		if (!bpfrt_prog_run(l->progs[i], BPFRT_EXEC_DEFAULT, arg, 0, &r0))
			sum += r0;
	return sum;
}

int bpfrt_nest_kfunc_register(void)
{
	static const struct bpfrt_helper proto = {
		.name = "bpfrt_run_children", .fn = nest_run_children,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};
	int id = bpfrt_kfunc_id(proto.name);

	return id >= 0 ? id : bpfrt_kfunc_register(proto.name, &proto);
}

int bpfrt_nest_set_children(uint32_t list, struct bpfrt_prog *const *progs, uint32_t cnt)
{
	struct nest_list *l = NULL, *old;

	if (list >= BPFRT_NEST_MAX_LISTS || (cnt && !progs))
		return bpfrt_err(-EINVAL, "nest: list %u out of range or no programs", list);
	for (uint32_t i = 0; i < cnt; i++) {
		const struct bpfrt_prog *p = progs[i];

		if (!p)
			return bpfrt_err(-EINVAL, "nest: list %u: program %u is NULL", list, i);
		if (p->verified && p->max_ctx_access)
			return bpfrt_err(-EINVAL, "nest: list %u: %s reads %u bytes of context (%s), "
					 "but bpfrt_run_children gives its children none (r1 = "
					 "the parent's number)", list, p->name, p->max_ctx_access,
					 bpfrt_prog_kind_str(p->kind));
	}
	if (cnt) {
		l = malloc(sizeof(*l) + cnt * sizeof(l->progs[0]));
		if (!l)
			return bpfrt_err(-ENOMEM, "nest: out of memory");
		l->cnt = cnt;
		memcpy(l->progs, progs, cnt * sizeof(l->progs[0]));
		/* a list is a use of each program in it */
		for (uint32_t i = 0; i < cnt; i++)
			bpfrt_prog_hold(l->progs[i]);
	}
	pthread_mutex_lock(&nest_lock);
	old = atomic_exchange_explicit(&nest_lists[list], l, memory_order_acq_rel);
	pthread_mutex_unlock(&nest_lock);
	if (old) {
		bpfrt_rcu_synchronize();
		for (uint32_t i = 0; i < old->cnt; i++)
			bpfrt_prog_release(old->progs[i]);
		free(old);
	}
	return 0;
}

/* ---- registration --------------------------------------------------------- */

static const struct bpfrt_stack_host privstack_host = {
	.prog_init = prog_init,
	.prog_fini = prog_fini,
	.claim_slow = claim_slow,
	.release_aborted = release_aborted,
};

/* Before main, so that every program load (the engine's) finds the host,
 * and early, so the pthread key gets a low index (see the top of the
 * file). This object is in every program that runs programs: the run
 * paths (bpfrt_prog_run, attached runs) call bpfrt_nest_stack_run. */
/* Links the constructors of the fault handler of fault-safe loads and of
 * the host's target BTF wherever programs run (a static archive takes
 * only the objects something refers to). */
void bpfrt_probe_fault_init(void);
void bpfrt_target_btf_init(void);
__attribute__((used)) static void (*const link_probe_fault)(void) = bpfrt_probe_fault_init;
__attribute__((used)) static void (*const link_target_btf)(void) = bpfrt_target_btf_init;

__attribute__((constructor)) static void ps_ctor(void)
{
	ps_init();
	if (bpfrt_stack_host_register(&privstack_host))
		abort(); /* only this file registers one */
}
