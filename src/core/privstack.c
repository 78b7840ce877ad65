/* Private stacks (see privstack.h for the layout and the backend
 * contract): ids, per-thread stacks, their life cycle, and the SIGSEGV
 * handler that turns a guard-page hit inside a run into an aborted run.
 *
 * Ownership: every stack is on two lists, its program's and its thread's,
 * both under ps_lock. Whoever comes first frees it: the thread at exit
 * (pthread key destructor) or the program at unload. Unloading clears the
 * slot and record of the program's id in every thread that had a stack,
 * so a reused id starts empty everywhere. A thread's own fast path reads
 * and writes its slots without the lock: only slots of programs that are
 * not being unloaded (a program is unloaded only when no run of it is in
 * progress), so the two never touch the same slot at once. */
#define _GNU_SOURCE
#include "core/privstack.h"
#include "core/error.h"
#include "core/prog.h"
#include "core/rcu.h"
#include "core/run.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define PS_ALTSTACK_SIZE (64u << 10)

__thread void *bpfrt_privstack_slot[BPFRT_PRIVSTACK_MAX_IDS]
	__attribute__((tls_model("initial-exec")));

struct ps_thread;

struct bpfrt_privstack {
	struct bpfrt_prog *prog;
	struct ps_thread *thread;
	struct bpfrt_privstack *pnext, **pprev;  /* program's list */
	struct bpfrt_privstack *tnext, **tprev;  /* thread's list */
	char *map;                               /* whole mapping, guards included */
	size_t map_len;
	char *lo, *hi;                           /* usable pages */
	char *top;                               /* BPF r10 of the main frame */
};

struct ps_thread {
	void **slots;                            /* this thread's bpfrt_privstack_slot */
	struct bpfrt_privstack *stacks;
	/* by id: the signal handler finds a running program's stack without
	 * walking lists that other threads may change */
	struct bpfrt_privstack *_Atomic rec[BPFRT_PRIVSTACK_MAX_IDS];
	struct bpfrt_privstack_interp_run *interp_top;
	void *altstack;                          /* ours, or NULL */
};

static __thread struct ps_thread *ps_self __attribute__((tls_model("initial-exec")));

static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ps_ids[BPFRT_PRIVSTACK_MAX_IDS / 64];   /* under ps_lock */
static pthread_key_t ps_key;
static pthread_once_t ps_once = PTHREAD_ONCE_INIT;
static int ps_init_err;
static _Atomic uint64_t ps_live, ps_bytes, ps_allocs, ps_frees, ps_threads;
static _Atomic uint32_t ps_test_size;
static size_t ps_page;

static struct sigaction ps_prev;                        /* the host's SIGSEGV handler */
static pthread_once_t ps_fault_once = PTHREAD_ONCE_INIT;
static int ps_fault_err;

intptr_t bpfrt_privstack_slot_tp_offset(uint32_t id)
{
	return (intptr_t)((char *)&bpfrt_privstack_slot[id] - (char *)__builtin_thread_pointer());
}

void bpfrt_privstack_test_set_size(uint32_t bytes)
{
	atomic_store(&ps_test_size, bytes);
}

/* ---- policy and ids ---------------------------------------------------- */

static bool kind_is_tracing(int kind)
{
	switch (kind) {
	case BPFRT_PROG_TRACEPOINT:
	case BPFRT_PROG_RAW_TRACEPOINT:
	case BPFRT_PROG_FENTRY:
	case BPFRT_PROG_FEXIT:
	case BPFRT_PROG_FMOD_RET:
	case BPFRT_PROG_FENTRY_MULTI:
	case BPFRT_PROG_KPROBE:
	case BPFRT_PROG_KRETPROBE:
	case BPFRT_PROG_UPROBE:
		return true;
	default:
		return false;
	}
}

static int id_alloc(uint32_t *id)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&ps_lock);
	for (uint32_t w = 0; w < BPFRT_PRIVSTACK_MAX_IDS / 64; w++)
		if (~ps_ids[w]) {
			uint32_t b = (uint32_t)__builtin_ctzll(~ps_ids[w]);

			ps_ids[w] |= 1ull << b;
			*id = w * 64 + b;
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&ps_lock);
	return ret;
}

static void ps_global_init(void)
{
	ps_page = (size_t)sysconf(_SC_PAGESIZE);
	ps_init_err = -pthread_key_create(&ps_key, NULL);
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

int bpfrt_privstack_prog_need_id(struct bpfrt_prog *prog)
{
	int err;

	if (prog->privstack_has_id)
		return 0;
	if ((err = ps_init()))
		return err;
	if ((err = id_alloc(&prog->privstack_id)))
		return err;
	prog->privstack_size = round_up(prog->stack_depth ? prog->stack_depth : 16, 16);
	prog->privstack_has_id = true;
	return 0;
}

int bpfrt_privstack_prog_init(struct bpfrt_prog *prog)
{
	bool on;
	int err;

	if (prog->load_flags & BPFRT_F_DISABLE_PRIVATE_STACK)
		on = false;
	else if (prog->load_flags & BPFRT_F_PRIVATE_STACK)
		on = true;
	else
		on = kind_is_tracing(prog->kind) && prog->stack_depth > 64;
	prog->privstack = false;
	if (!on)
		return 0;
	err = bpfrt_privstack_prog_need_id(prog);
	if (err == -ENOSPC && !(prog->load_flags & BPFRT_F_PRIVATE_STACK))
		return 0; /* the default policy falls back to the native stack */
	if (err)
		return bpfrt_err(err, "%s: no private stack: %s", prog->name,
				 err == -ENOSPC ? "all program ids are taken" : "cannot set up");
	prog->privstack = true;
	return 0;
}

/* ---- stacks ------------------------------------------------------------- */

static void stack_unmap(struct bpfrt_privstack *ps)
{
	munmap(ps->map, ps->map_len);
	atomic_fetch_sub(&ps_live, 1);
	atomic_fetch_sub(&ps_bytes, ps->map_len);
	atomic_fetch_add(&ps_frees, 1);
	free(ps);
}

/* Caller holds ps_lock. Forgets ps in both lists and in its thread. */
static void stack_unlink(struct bpfrt_privstack *ps)
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
}

void bpfrt_privstack_prog_fini(struct bpfrt_prog *prog)
{
	if (!prog->privstack_has_id)
		return;
	pthread_mutex_lock(&ps_lock);
	while (prog->privstack_list) {
		struct bpfrt_privstack *ps = prog->privstack_list;

		stack_unlink(ps);
		stack_unmap(ps);
	}
	ps_ids[prog->privstack_id / 64] &= ~(1ull << (prog->privstack_id % 64));
	pthread_mutex_unlock(&ps_lock);
	prog->privstack_has_id = false;
	prog->privstack = false;
}

static void thread_exit(void *arg)
{
	struct ps_thread *t = arg;

	pthread_mutex_lock(&ps_lock);
	while (t->stacks) {
		struct bpfrt_privstack *ps = t->stacks;

		stack_unlink(ps);
		stack_unmap(ps);
	}
	pthread_mutex_unlock(&ps_lock);
	if (t->altstack) {
		stack_t ss = { .ss_flags = SS_DISABLE }, cur;

		/* not while a handler runs on it (exit from a handler) */
		if (!sigaltstack(NULL, &cur) && !(cur.ss_flags & SS_ONSTACK) &&
		    cur.ss_sp == t->altstack && !sigaltstack(&ss, NULL))
			munmap(t->altstack, PS_ALTSTACK_SIZE);
	}
	ps_self = NULL;
	atomic_fetch_sub(&ps_threads, 1);
	free(t);
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

static struct ps_thread *thread_get(void)
{
	struct ps_thread *t = ps_self;

	if (__builtin_expect(t != NULL, 1))
		return t;
	if (ps_init() || bpfrt_privstack_fault_init())
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->slots = bpfrt_privstack_slot;
	if (pthread_setspecific(ps_key, t)) {
		free(t);
		return NULL;
	}
	/* the key's destructor is set here, not at creation: threads that
	 * never had a stack have nothing to free */
	thread_altstack(t);
	ps_self = t;
	atomic_fetch_add(&ps_threads, 1);
	return t;
}

static pthread_once_t ps_dtor_once = PTHREAD_ONCE_INIT;
static pthread_key_t ps_dtor_key;

static void ps_dtor_init(void)
{
	pthread_key_create(&ps_dtor_key, thread_exit);
}

static struct bpfrt_privstack *stack_alloc(struct bpfrt_prog *prog, struct ps_thread *t)
{
	uint32_t test = atomic_load(&ps_test_size);
	uint32_t depth = test ? round_up(test, 16) : prog->privstack_size;
	size_t usable = round_up(depth + BPFRT_PRIVSTACK_C_AREA, (uint32_t)ps_page);
	struct bpfrt_privstack *ps = calloc(1, sizeof(*ps));
	char *map;

	if (!ps)
		return NULL;
	ps->map_len = usable + 2 * ps_page;
	map = mmap(NULL, ps->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (map == MAP_FAILED) {
		free(ps);
		return NULL;
	}
	if (mprotect(map + ps_page, usable, PROT_READ | PROT_WRITE)) {
		munmap(map, ps->map_len);
		free(ps);
		return NULL;
	}
	ps->map = map;
	ps->lo = map + ps_page;
	ps->hi = ps->lo + usable;
	ps->top = ps->lo + depth;
	ps->prog = prog;
	ps->thread = t;
	atomic_fetch_add(&ps_live, 1);
	atomic_fetch_add(&ps_bytes, ps->map_len);
	atomic_fetch_add(&ps_allocs, 1);

	pthread_mutex_lock(&ps_lock);
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
	pthread_mutex_unlock(&ps_lock);
	return ps;
}

void *bpfrt_privstack_enter_slow(struct bpfrt_prog *prog)
{
	struct ps_thread *t;
	struct bpfrt_privstack *ps;

	if (!prog->privstack_has_id)
		goto fail;
	t = thread_get();
	if (!t)
		goto fail;
	pthread_once(&ps_dtor_once, ps_dtor_init);
	if (!pthread_getspecific(ps_dtor_key))
		pthread_setspecific(ps_dtor_key, t);
	ps = atomic_load_explicit(&t->rec[prog->privstack_id], memory_order_relaxed);
	if (ps) {
		/* allocated and its slot empty: in use by a live activation
		 * (a second one would share it) */
		atomic_fetch_add_explicit(&prog->attach_misses, 1, memory_order_relaxed);
		return NULL;
	}
	ps = stack_alloc(prog, t);
	if (!ps)
		goto fail;
	return ps->top; /* claimed: the slot stays empty */
fail:
	bpfrt_run_state.abort_err = ENOMEM;
	bpfrt_run_state.abort_pc = 0;
	bpfrt_run_state.abort_arg = 0;
	return NULL;
}

void *bpfrt_privstack_release(struct bpfrt_prog *prog)
{
	struct ps_thread *t = ps_self;
	struct bpfrt_privstack *ps = t ? atomic_load(&t->rec[prog->privstack_id]) : NULL;

	if (!ps)
		abort(); /* an abort stub ran without a claimed stack */
	bpfrt_privstack_slot[prog->privstack_id] = ps->top;
	return *(void **)(ps->top + BPFRT_PRIVSTACK_ENTRY_SP_OFF);
}

void bpfrt_privstack_set_jit_info(struct bpfrt_prog *prog, uintptr_t abort_addr)
{
	prog->privstack_abort = abort_addr;
}

void bpfrt_privstack_interp_push(struct bpfrt_privstack_interp_run *run)
{
	struct ps_thread *t = ps_self; /* set: the run claimed a stack */

	run->rcu_nesting = bpfrt_rcu_self.nesting;
	run->outer = t->interp_top;
	t->interp_top = run;
}

void bpfrt_privstack_interp_pop(struct bpfrt_privstack_interp_run *run)
{
	ps_self->interp_top = run->outer;
	/* a fault skipped the read sections' unlocks */
	while (bpfrt_rcu_self.nesting > run->rcu_nesting)
		bpfrt_rcu_read_unlock();
}

/* ---- counters ------------------------------------------------------------ */

int bpfrt_prog_privstack_info(const struct bpfrt_prog *prog, struct bpfrt_privstack_info *info)
{
	if (!prog || !info)
		return bpfrt_err(-EINVAL, "privstack_info: NULL argument");
	memset(info, 0, sizeof(*info));
	info->enabled = prog->privstack;
	info->stack_size = prog->privstack_has_id ? prog->privstack_size : 0;
	pthread_mutex_lock(&ps_lock);
	info->thread_cnt = prog->privstack_threads;
	pthread_mutex_unlock(&ps_lock);
	info->faults = atomic_load(&((struct bpfrt_prog *)prog)->privstack_faults);
	info->faulted = info->faults != 0;
	return 0;
}

void bpfrt_privstack_stats(struct bpfrt_privstack_stats *st)
{
	if (!st)
		return;
	st->live = atomic_load(&ps_live);
	st->bytes_mapped = atomic_load(&ps_bytes);
	st->allocs = atomic_load(&ps_allocs);
	st->frees = atomic_load(&ps_frees);
	st->threads = atomic_load(&ps_threads);
}

/* ---- guard-page faults --------------------------------------------------
 *
 * Chaining: the handler is installed once, on the first private stack,
 * with SA_ONSTACK | SA_SIGINFO, and remembers the handler it replaced. A
 * fault it owns (the address is in a guard page of a private stack of a
 * program running now on this thread, and the faulting code is that
 * program's JIT image or an interpreter run of it) is resolved by
 * resuming the thread at an unwind point; anything else goes to the
 * previous handler: its sa_sigaction/sa_handler is called with the same
 * arguments, and if it was SIG_DFL or SIG_IGN the default action is
 * restored and the fault re-executes to kill the process as it would
 * have without bpfrt (ignoring a fault would loop forever). A host that
 * installs its own SIGSEGV handler after bpfrt's should chain to the one
 * it replaced in the same way, or guard hits become its faults. */

static void ps_chain(int sig, siginfo_t *info, void *uc)
{
	if (ps_prev.sa_flags & SA_SIGINFO) {
		if (ps_prev.sa_sigaction) {
			ps_prev.sa_sigaction(sig, info, uc);
			return;
		}
	} else if (ps_prev.sa_handler != SIG_DFL && ps_prev.sa_handler != SIG_IGN) {
		ps_prev.sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL); /* returning re-executes the access: default action */
}

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

/* The registers the handler reads and rewrites in the interrupted
 * context. UC_CALL_BIAS: what a call leaves below a 16-byte aligned sp at
 * a function's first instruction (x86-64 pushes the return address; A64
 * and RISC-V keep it in a register). */
#if defined(__x86_64__)
#define UC_PC(uc)	((uc)->uc_mcontext.gregs[REG_RIP])
#define UC_SP(uc)	((uc)->uc_mcontext.gregs[REG_RSP])
#define UC_ARG0(uc)	((uc)->uc_mcontext.gregs[REG_RDI])
#define UC_CALL_BIAS	8
#elif defined(__aarch64__)
#define UC_PC(uc)	((uc)->uc_mcontext.pc)
#define UC_SP(uc)	((uc)->uc_mcontext.sp)
#define UC_ARG0(uc)	((uc)->uc_mcontext.regs[0])
#define UC_CALL_BIAS	0
#elif defined(__riscv) && __riscv_xlen == 64
#define UC_PC(uc)	((uc)->uc_mcontext.__gregs[REG_PC])
#define UC_SP(uc)	((uc)->uc_mcontext.__gregs[REG_SP])
#define UC_ARG0(uc)	((uc)->uc_mcontext.__gregs[REG_A0])
#define UC_CALL_BIAS	0
#endif
#define UC_SET(reg, v)	((reg) = (__typeof__(reg))(uintptr_t)(v))

#ifdef UC_PC
static __attribute__((noreturn, used)) void ps_interp_unwind(void *jmpbuf)
{
	longjmp(*(jmp_buf *)jmpbuf, 1);
}
#endif

static void ps_segv(int sig, siginfo_t *info, void *ucv)
{
	struct ps_thread *t = ps_self;
	struct bpfrt_privstack *ps;
	int saved_errno = errno;

	if (!t || !(ps = ps_find_guard(t, (uintptr_t)info->si_addr)))
		goto chain;
#ifdef UC_PC
	ucontext_t *uc = ucv;
	struct bpfrt_prog *prog = ps->prog;
	uintptr_t pc = (uintptr_t)UC_PC(uc);
	uintptr_t image = (uintptr_t)prog->jit_func;

	if (prog->privstack_abort && pc >= image && pc < image + prog->jit_len) {
		/* the stub calls bpfrt_privstack_release, which returns the
		 * entry sp the program stored in its C area; the stub's call
		 * runs on that sp */
		UC_SET(UC_SP(uc), *(void **)(ps->top + BPFRT_PRIVSTACK_ENTRY_SP_OFF));
		UC_SET(UC_PC(uc), prog->privstack_abort);
	} else if (t->interp_top && t->interp_top->prog == prog) {
		/* leave signal context (the kernel restores the mask) and
		 * longjmp from there; the native stack is intact, and 256
		 * bytes clear any red zone below sp */
		uintptr_t sp = ((uintptr_t)UC_SP(uc) - 256) & ~(uintptr_t)15;

		UC_SET(UC_SP(uc), sp - UC_CALL_BIAS);
		UC_SET(UC_ARG0(uc), t->interp_top->jmpbuf);
		UC_SET(UC_PC(uc), ps_interp_unwind);
	} else {
		goto chain;
	}
	atomic_fetch_add_explicit(&prog->privstack_faults, 1, memory_order_relaxed);
	bpfrt_run_state.abort_err = EFAULT;
	bpfrt_run_state.abort_pc = 0;
	bpfrt_run_state.abort_arg = (uint64_t)(uintptr_t)info->si_addr;
	errno = saved_errno;
	return;
#endif
chain:
	errno = saved_errno;
	ps_chain(sig, info, ucv);
}

static void ps_fault_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ps_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &ps_prev))
		ps_fault_err = -errno;
}

int bpfrt_privstack_fault_init(void)
{
	pthread_once(&ps_fault_once, ps_fault_setup);
	return ps_fault_err;
}

/* ---- nested execution ----------------------------------------------------
 *
 * The kfunc bpfrt_run_children(list, arg) runs every program of a child
 * list with r1 = arg and returns the sum of their r0 (a child that is
 * refused or aborts adds nothing): the seed's nested scheduler, where the
 * program of a cgroup asks the programs of its children. Lists are
 * immutable once published; replacing one waits for a grace period
 * before freeing the old one, so runs in progress read it safely. */

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
	if (cnt) {
		l = malloc(sizeof(*l) + cnt * sizeof(l->progs[0]));
		if (!l)
			return bpfrt_err(-ENOMEM, "nest: out of memory");
		l->cnt = cnt;
		memcpy(l->progs, progs, cnt * sizeof(l->progs[0]));
	}
	pthread_mutex_lock(&nest_lock);
	old = atomic_exchange_explicit(&nest_lists[list], l, memory_order_acq_rel);
	pthread_mutex_unlock(&nest_lock);
	if (old) {
		bpfrt_rcu_synchronize();
		free(old);
	}
	return 0;
}
