/* Signal chaining (src/host/signal/chain.c): what bpfrt's handlers do not
 * own goes to the host's previous disposition. Dispositions are process
 * state and bpfrt's handlers stay once installed, so each case runs in a
 * forked child and the parent checks how it ended. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "attach/trap.h"
#include "signal/chain.h"
#include "signal/ucontext.h"
#include "stack/privstack.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn in a child; returns its wait status. The child exits 0 when
 * every check in it passed, 1 otherwise. */
static int in_child(void (*fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		/* children meant to die leave no core file */
		setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
		fn();
		fflush(stdout);
		_exit(tl_failed() ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

#define CHECK_EXITED_OK(child_status) do {                                        \
		int status_ = (child_status);                                      \
		CHECK(WIFEXITED(status_) && WEXITSTATUS(status_) == 0,             \
		      "child status %#x", status_);                                \
	} while (0)
#define CHECK_KILLED_BY(child_status, sig) do {                                   \
		int status_ = (child_status);                                      \
		CHECK(WIFSIGNALED(status_) && WTERMSIG(status_) == (sig),          \
		      "child status %#x, expected death by signal %d", status_, sig); \
	} while (0)

static void set_disposition(int sig, void (*handler)(int), void (*action)(int, siginfo_t *, void *),
			    int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	if (action)
		sa.sa_sigaction = action;
	else
		sa.sa_handler = handler;
	sa.sa_flags = flags | (action ? SA_SIGINFO : 0);
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		tl_fail(__FILE__, __LINE__, "sigaction(%d): %s", sig, strerror(errno));
}

/* ---- SIGTRAP: a breakpoint in host code that is not bpfrt's ---------- */

static volatile int host_traps, host_trap_code;

/* x86-64's int3 leaves the pc after it; brk and ebreak trap with the pc
 * on themselves, so the host's handler steps over (4 bytes each). */
static void host_trap(int sig, siginfo_t *info, void *ucv)
{
	host_traps++;
	host_trap_code = info->si_code;
#if !defined(__x86_64__) && BPFRT_UC_SUPPORTED
	bpfrt_uc_set_pc(ucv, bpfrt_uc_pc(ucv) + 4);
#endif
}

static void host_breakpoint(void)
{
#if defined(__x86_64__)
	__asm__ volatile("int3");
#elif defined(__aarch64__)
	__asm__ volatile("brk #0x7");
#elif defined(__riscv)
	__asm__ volatile(".option push\n.option norvc\nebreak\n.option pop");
#else
	raise(SIGTRAP);
#endif
}

static void trap_chained_child(void)
{
	struct sigaction now;

	set_disposition(SIGTRAP, NULL, host_trap, 0);
	REQUIRE(!bpfrt_trap_init(), "%s", bpfrt_last_error());
	REQUIRE(!sigaction(SIGTRAP, NULL, &now));
	CHECK(now.sa_sigaction != host_trap, "bpfrt's handler is installed over the host's");
	host_breakpoint();
	CHECK(host_traps == 1, "host handler ran %d times", host_traps);
	host_breakpoint();
	CHECK(host_traps == 2, "host handler ran %d times", host_traps);
	CHECK(host_trap_code > 0, "the host sees the kernel's si_code, got %d", host_trap_code);
	CHECK(bpfrt_trap_hits() == 0, "bpfrt counted a host breakpoint as its own");
}

TEST(host_breakpoint_reaches_host_handler)
{
	CHECK_EXITED_OK(in_child(trap_chained_child));
}

static void trap_default_child(void)
{
	set_disposition(SIGTRAP, SIG_DFL, NULL, 0);
	if (bpfrt_trap_init())
		_exit(10);
	host_breakpoint();
	_exit(11);      /* survived the breakpoint */
}

static void trap_ignored_child(void)
{
	set_disposition(SIGTRAP, SIG_IGN, NULL, 0);
	if (bpfrt_trap_init())
		_exit(10);
	host_breakpoint();
	_exit(11);
}

TEST(host_breakpoint_with_default_or_ignored_disposition_kills)
{
	CHECK_KILLED_BY(in_child(trap_default_child), SIGTRAP);
	/* the kernel forces an ignored breakpoint to the default action */
	CHECK_KILLED_BY(in_child(trap_ignored_child), SIGTRAP);
}

/* ---- SIGSEGV: a fault that is not a guard page ------------------------- */

static sigjmp_buf segv_env;
static volatile int host_segvs;
static void *volatile host_segv_addr;

static void host_segv_info(int sig, siginfo_t *info, void *uc)
{
	host_segvs++;
	host_segv_addr = info->si_addr;
	siglongjmp(segv_env, 1);
}

static void host_segv_plain(int sig)
{
	host_segvs++;
	siglongjmp(segv_env, 1);
}

static char *prot_none_page(void)
{
	char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void segv_chained_child(void)
{
	char *page = prot_none_page();

	REQUIRE(page);
	set_disposition(SIGSEGV, NULL, host_segv_info, 0);
	REQUIRE(!bpfrt_privstack_fault_init(), "%s", bpfrt_last_error());
	if (!sigsetjmp(segv_env, 1))
		*(volatile char *)(page + 8) = 1;
	CHECK(host_segvs == 1, "host SA_SIGINFO handler ran %d times", host_segvs);
	CHECK(host_segv_addr == page + 8, "host handler got address %p, fault was at %p",
	      host_segv_addr, (void *)(page + 8));
}

static void segv_plain_chained_child(void)
{
	char *page = prot_none_page();

	REQUIRE(page);
	set_disposition(SIGSEGV, host_segv_plain, NULL, 0);
	REQUIRE(!bpfrt_privstack_fault_init(), "%s", bpfrt_last_error());
	/* volatile: it changes between sigsetjmp and siglongjmp */
	for (volatile int i = 0; i < 3; i++)
		if (!sigsetjmp(segv_env, 1))
			*(volatile char *)page = 1;
	CHECK(host_segvs == 3, "host plain handler ran %d times", host_segvs);
}

TEST(foreign_fault_reaches_host_handler)
{
	CHECK_EXITED_OK(in_child(segv_chained_child));
	CHECK_EXITED_OK(in_child(segv_plain_chained_child));
}

static void segv_default_child(void)
{
	char *page = prot_none_page();

	set_disposition(SIGSEGV, SIG_DFL, NULL, 0);
	if (!page || bpfrt_privstack_fault_init())
		_exit(10);
	*(volatile char *)page = 1;
	_exit(11);
}

TEST(foreign_fault_with_default_disposition_kills)
{
	int status = in_child(segv_default_child);

	if (TL_ASAN) /* ASan may keep its own SIGSEGV handler under ours */
		CHECK(!WIFEXITED(status) || WEXITSTATUS(status) > 11, "child status %#x", status);
	else
		CHECK_KILLED_BY(status, SIGSEGV);
}

/* ---- the policy, on a signal of the test's own ------------------------ */

#define TEST_SIG (SIGRTMAX - 3)
#define TEST_TAG 0x5151

static volatile int owned, host_calls;

/* bpfrt-side handler: owns queued signals carrying the tag */
static bool tagged_only(int sig, siginfo_t *info, ucontext_t *uc)
{
	if (info->si_code != SI_QUEUE || info->si_value.sival_int != TEST_TAG)
		return false;
	owned++;
	errno = EIO;    /* the dispatcher must hide this from the interrupted code */
	return true;
}

static void host_rt(int sig, siginfo_t *info, void *uc)
{
	host_calls++;
}

static void send_tagged(void)
{
	union sigval v = { .sival_int = TEST_TAG };

	sigqueue(getpid(), TEST_SIG, v);
}

static void owned_and_chained_child(void)
{
	set_disposition(TEST_SIG, NULL, host_rt, 0);
	REQUIRE(!bpfrt_signal_handle(TEST_SIG, tagged_only, 0), "%s", bpfrt_last_error());
	CHECK(!bpfrt_signal_handle(TEST_SIG, tagged_only, 0), "adding a handler twice is a no-op");
	errno = 0;
	send_tagged();
	CHECK(errno == 0, "errno changed to %d across an owned signal", errno);
	CHECK(owned == 1 && host_calls == 0, "owned %d host %d", owned, host_calls);
	raise(TEST_SIG);
	CHECK(owned == 1 && host_calls == 1, "owned %d host %d", owned, host_calls);
}

TEST(owned_signals_stay_bpfrts_others_reach_the_host)
{
	CHECK_EXITED_OK(in_child(owned_and_chained_child));
}

static void sent_ignored_child(void)
{
	set_disposition(TEST_SIG, SIG_IGN, NULL, 0);
	REQUIRE(!bpfrt_signal_handle(TEST_SIG, tagged_only, 0), "%s", bpfrt_last_error());
	raise(TEST_SIG);        /* dropped, as the host asked */
	send_tagged();
	CHECK(owned == 1, "owned %d", owned);
}

static void sent_default_child(void)
{
	set_disposition(TEST_SIG, SIG_DFL, NULL, 0);
	if (bpfrt_signal_handle(TEST_SIG, tagged_only, 0))
		_exit(10);
	send_tagged();          /* ours: survives */
	if (owned != 1)
		_exit(12);
	raise(TEST_SIG);        /* not ours: the default action ends the process */
	_exit(11);
}

TEST(declined_signals_take_ignored_and_default_dispositions)
{
	CHECK_EXITED_OK(in_child(sent_ignored_child));
	CHECK_KILLED_BY(in_child(sent_default_child), TEST_SIG);
}

static void resethand_child(void)
{
	set_disposition(TEST_SIG, NULL, host_rt, SA_RESETHAND);
	if (bpfrt_signal_handle(TEST_SIG, tagged_only, 0))
		_exit(10);
	raise(TEST_SIG);        /* the host's one-shot handler */
	if (host_calls != 1)
		_exit(12);
	send_tagged();          /* still bpfrt's */
	if (owned != 1)
		_exit(13);
	raise(TEST_SIG);        /* the one shot is spent: default action */
	_exit(11);
}

TEST(one_shot_host_handler_runs_once)
{
	CHECK_KILLED_BY(in_child(resethand_child), TEST_SIG);
}

TEST(bad_requests_are_refused_with_a_message)
{
	CHECK(bpfrt_signal_handle(SIGCHLD, tagged_only, 0) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "signal 17"), "message: %s", bpfrt_last_error());
	CHECK(bpfrt_signal_handle(0, tagged_only, 0) == -EINVAL);
	CHECK(bpfrt_signal_handle(TEST_SIG, NULL, 0) == -EINVAL);
}

static bool decline_a(int s, siginfo_t *i, ucontext_t *u) { return false; }
static bool decline_b(int s, siginfo_t *i, ucontext_t *u) { return false; }
static bool decline_c(int s, siginfo_t *i, ucontext_t *u) { return false; }
static bool decline_d(int s, siginfo_t *i, ucontext_t *u) { return false; }

static void limits_child(void)
{
	set_disposition(TEST_SIG, NULL, host_rt, 0);
	CHECK(!bpfrt_signal_handle(TEST_SIG, decline_a, 0));
	CHECK(bpfrt_signal_handle(TEST_SIG, decline_b, BPFRT_SIGNAL_NODEFER) == -EINVAL,
	      "flags must match the installed ones");
	CHECK(!bpfrt_signal_handle(TEST_SIG, decline_b, 0));
	CHECK(!bpfrt_signal_handle(TEST_SIG, decline_c, 0));
	CHECK(!bpfrt_signal_handle(TEST_SIG, tagged_only, 0));
	CHECK(bpfrt_signal_handle(TEST_SIG, decline_a, 0) == 0,
	      "a handler already there is not a new one");
	/* the fifth distinct handler does not fit */
	CHECK(bpfrt_signal_handle(TEST_SIG, decline_d, 0) == -ENOSPC);
	send_tagged();          /* the three decliners pass it on to the owner */
	CHECK(owned == 1 && host_calls == 0, "owned %d host %d", owned, host_calls);
	raise(TEST_SIG);
	CHECK(host_calls == 1, "host %d", host_calls);
}

TEST(handlers_are_asked_in_order_up_to_the_limit)
{
	CHECK_EXITED_OK(in_child(limits_child));
}

/* A host that interposes sigaction (bpfrt trace's agent) routes the
 * program's calls through bpfrt_signal_host_sigaction: a held signal's
 * handler changes only what is chained to, and reads back as if bpfrt
 * were not there. */
static volatile int host2_calls;

static void host_rt2(int sig, siginfo_t *info, void *uc)
{
	host2_calls++;
}

static void host_sigaction_child(void)
{
	struct sigaction sa, old, now;

	set_disposition(TEST_SIG, NULL, host_rt, 0);
	CHECK_EQ(bpfrt_signal_host_sigaction(TEST_SIG, NULL, &old), 1, "not held yet: libc's call");
	REQUIRE(!bpfrt_signal_handle(TEST_SIG, tagged_only, 0), "%s", bpfrt_last_error());
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = host_rt2;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(bpfrt_signal_host_sigaction(TEST_SIG, &sa, &old), 0);
	CHECK(old.sa_sigaction == host_rt, "the old action reads as the host's, not bpfrt's");
	CHECK_EQ(bpfrt_signal_host_sigaction(TEST_SIG, NULL, &now), 0);
	CHECK(now.sa_sigaction == host_rt2, "and the new one reads back");
	send_tagged();          /* still bpfrt's */
	raise(TEST_SIG);        /* not bpfrt's: the new host handler, not the old */
	CHECK(owned == 1 && host2_calls == 1 && host_calls == 0, "owned %d new %d old %d", owned,
	      host2_calls, host_calls);
	/* the kernel's disposition is still bpfrt's dispatcher */
	REQUIRE(!sigaction(TEST_SIG, NULL, &now));
	CHECK(now.sa_sigaction != host_rt2 && now.sa_sigaction != host_rt);
	CHECK_EQ(bpfrt_signal_host_sigaction(SIGUSR2, NULL, &now), 1, "a signal bpfrt never held");
}

TEST(interposed_sigaction_changes_what_is_chained_to)
{
	CHECK_EXITED_OK(in_child(host_sigaction_child));
}
