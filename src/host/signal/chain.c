/* One dispatcher per handled signal, chaining to the host's previous
 * disposition (the policy is in chain.h).
 *
 * Everything here may run in signal context, installation included, so
 * the state is atomics only: a slot per signal number whose handler list
 * is filled by compare-and-swap and never shrinks, and an installation
 * state (none, installing, installed) that one caller moves forward while
 * the others wait. The disposition bpfrt replaced is read before bpfrt's
 * goes in, so a signal delivered right after the install finds it. */
#define _GNU_SOURCE
#include "signal/chain.h"
#include "core/error.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { SLOT_NONE, SLOT_INSTALLING, SLOT_INSTALLED };

struct signal_slot {
	_Atomic int state;
	_Atomic pid_t installer;        /* thread moving state to INSTALLED */
	unsigned flags;
	/* The disposition chained to: prev[cur]. At first the one bpfrt's
	 * replaced; a host sigaction through bpfrt_signal_host_sigaction
	 * writes the other copy and then flips cur, so a dispatcher never
	 * reads a half-written one (writers: one at a time, prev_writer). */
	struct sigaction prev[2];
	_Atomic int cur;
	_Atomic pid_t prev_writer;
	_Atomic bool prev_reset;        /* an SA_RESETHAND prev was called once */
	_Atomic(bpfrt_signal_fn) fns[BPFRT_SIGNAL_HANDLERS_MAX];
};

static struct signal_slot slots[NSIG];

/* The sigaction that really installs: libc's, or what a host that
 * interposes sigaction itself names (bpfrt_signal_use_sigaction). */
static _Atomic(bpfrt_sigaction_fn) real_sigaction;

void bpfrt_signal_use_sigaction(bpfrt_sigaction_fn fn)
{
	atomic_store(&real_sigaction, fn);
}

static int do_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	bpfrt_sigaction_fn fn = atomic_load(&real_sigaction);

	return fn ? fn(sig, act, old) : sigaction(sig, act, old);
}

static bool ends_process_by_default(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
	case SIGKILL:   /* cannot be caught at all */
		return false;
	default:
		return sig > 0 && sig < NSIG;
	}
}

static void signal_dispatch(int sig, siginfo_t *info, void *uc);

static void take_default_action(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	do_sigaction(sig, &dfl, NULL);
	raise(sig);
}

void bpfrt_signal_chain(int sig, siginfo_t *info, void *uc)
{
	struct signal_slot *s = &slots[sig];
	const struct sigaction *p = &s->prev[atomic_load_explicit(&s->cur, memory_order_acquire)];
	void (*handler)(int) = p->sa_handler;   /* shares storage with sa_sigaction */
	bool synchronous = info && info->si_code > 0;

	if ((p->sa_flags & SA_RESETHAND) && handler != SIG_DFL && handler != SIG_IGN &&
	    atomic_exchange(&s->prev_reset, true))
		handler = SIG_DFL;      /* the kernel would have reset it at the first */
	if (p->sa_sigaction == signal_dispatch)
		handler = SIG_DFL;      /* never ourselves: that would loop */
	if (handler == SIG_IGN) {
		if (synchronous)
			take_default_action(sig);
		return;
	}
	if (handler == SIG_DFL) {
		take_default_action(sig);
		return;
	}
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, info, uc);
	else
		handler(sig);
}

static void signal_dispatch(int sig, siginfo_t *info, void *uc)
{
	struct signal_slot *s = &slots[sig];
	int saved_errno = errno;

	for (int i = 0; i < BPFRT_SIGNAL_HANDLERS_MAX; i++) {
		bpfrt_signal_fn fn = atomic_load_explicit(&s->fns[i], memory_order_acquire);

		if (!fn)
			break;
		if (fn(sig, info, uc)) {
			errno = saved_errno;
			return;
		}
	}
	errno = saved_errno;
	bpfrt_signal_chain(sig, info, uc);
	errno = saved_errno;
}

static int install(int sig, struct signal_slot *s, unsigned flags)
{
	pid_t self = (pid_t)syscall(SYS_gettid);

	for (;;) {
		int state = SLOT_NONE;

		if (atomic_compare_exchange_strong(&s->state, &state, SLOT_INSTALLING))
			break;
		if (state == SLOT_INSTALLED)
			return 0;
		/* another installer: wait for it, unless it is the code this
		 * handler interrupted */
		if (atomic_load(&s->installer) == self)
			return bpfrt_err(-EAGAIN, "signal %d: its handler is being installed by "
					 "the code this signal handler interrupted", sig);
		sched_yield();
	}
	atomic_store(&s->installer, self);

	struct sigaction sa, replaced;
	int err = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = signal_dispatch;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART |
		      (flags & BPFRT_SIGNAL_NODEFER ? SA_NODEFER : 0);
	sigemptyset(&sa.sa_mask);
	s->flags = flags;
	if (do_sigaction(sig, NULL, &s->prev[0]) || do_sigaction(sig, &sa, &replaced)) {
		err = -errno;
	} else if (replaced.sa_handler != s->prev[0].sa_handler) {
		s->prev[0] = replaced;  /* the host changed it in between */
	}
	atomic_store(&s->installer, 0);
	atomic_store(&s->state, err ? SLOT_NONE : SLOT_INSTALLED);
	if (err)
		return bpfrt_err(err, "signal %d: cannot install bpfrt's handler", sig);
	return 0;
}

int bpfrt_signal_handle(int sig, bpfrt_signal_fn fn, unsigned flags)
{
	struct signal_slot *s;
	int err;

	if (!fn || !ends_process_by_default(sig))
		return bpfrt_err(-EINVAL, "signal %d: bpfrt handles only signals whose default "
				 "action ends the process", sig);
	s = &slots[sig];
	if ((err = install(sig, s, flags)))
		return err;
	if (s->flags != flags)
		return bpfrt_err(-EINVAL, "signal %d: installed with flags %#x, asked for %#x",
				 sig, s->flags, flags);
	for (int i = 0; i < BPFRT_SIGNAL_HANDLERS_MAX; i++) {
		bpfrt_signal_fn cur = NULL;

		if (atomic_compare_exchange_strong(&s->fns[i], &cur, fn) || cur == fn)
			return 0;
	}
	return bpfrt_err(-ENOSPC, "signal %d: already %d handlers", sig, BPFRT_SIGNAL_HANDLERS_MAX);
}

int bpfrt_signal_host_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	pid_t self, none = 0;
	struct signal_slot *s;
	int c;

	if (sig <= 0 || sig >= NSIG)
		return 1;
	s = &slots[sig];
	if (atomic_load(&s->state) != SLOT_INSTALLED)
		return 1;
	self = (pid_t)syscall(SYS_gettid);
	while (!atomic_compare_exchange_weak(&s->prev_writer, &none, self)) {
		if (none == self)
			return -EAGAIN; /* a handler that interrupted this very write */
		none = 0;
		sched_yield();
	}
	c = atomic_load(&s->cur);
	if (old)
		*old = s->prev[c];
	if (act) {
		s->prev[!c] = *act;
		atomic_store(&s->prev_reset, false);
		atomic_store_explicit(&s->cur, !c, memory_order_release);
	}
	atomic_store(&s->prev_writer, 0);
	return 0;
}
