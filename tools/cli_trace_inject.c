/* bpfrt trace -p PID: makes a running process load the agent with its own
 * dynamic loader. Every thread is stopped (PTRACE_SEIZE + INTERRUPT) only
 * for the call; one of them runs libc's dlopen(agent, RTLD_NOW) on its own
 * stack with a return address of 0, so the call ends in a fault ptrace
 * sees; then every register of that thread is put back as it was (a
 * syscall it was in restarts as if interrupted by a signal) and all
 * threads are let go. The register layout and the call setup are the
 * architecture's (struct inject_arch, cli_trace_inject_x86_64.c).
 *
 * Refusals name their cause: another user's process, Yama's ptrace_scope,
 * a process without libc's dlopen (a static binary), a PID that is gone. */
#define _GNU_SOURCE
#include "cli_trace.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 4096

static int read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Why ptrace would be refused, or 0. */
static int check_permitted(pid_t pid, char *why, size_t cap)
{
	char path[64], st[4096], *uid;
	unsigned long ruid = 0;
	int scope = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_text(path, st, sizeof(st))) {
		snprintf(why, cap, "no process %d", (int)pid);
		return -ESRCH;
	}
	uid = strstr(st, "\nUid:");
	if (uid)
		ruid = strtoul(uid + 5, NULL, 10);
	if (geteuid() != 0 && ruid != geteuid()) {
		snprintf(why, cap, "process %d belongs to uid %lu, not to you (uid %u): only root "
			 "may trace it", (int)pid, ruid, (unsigned)geteuid());
		return -EPERM;
	}
	if (!read_text("/proc/sys/kernel/yama/ptrace_scope", st, sizeof(st)))
		scope = atoi(st);
	if (scope == 3) {
		snprintf(why, cap, "kernel.yama.ptrace_scope is 3: no process may be traced");
		return -EPERM;
	}
	if (scope >= 1 && geteuid() != 0) {
		snprintf(why, cap, "kernel.yama.ptrace_scope is %d: only root (CAP_SYS_PTRACE) "
			 "may attach to a process that is not its child", scope);
		return -EPERM;
	}
	return 0;
}

/* libc's function name in the target: its libc's base plus the
 * function's offset in our own copy of the same file. 0 if the target
 * maps no libc. */
static uintptr_t remote_libc(pid_t pid, const char *fname, char *why, size_t cap)
{
	char path[64], line[PATH_MAX + 128], mine[PATH_MAX] = "";
	Dl_info info;
	uintptr_t base = 0;
	FILE *f;

	if (!dladdr((void *)dlsym(RTLD_DEFAULT, "dlopen"), &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, mine)) {
		snprintf(why, cap, "cannot find this process's own libc");
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		snprintf(why, cap, "%s: %s", path, strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		char *file = strchr(line, '/'), real[PATH_MAX];

		if (!file || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (off == 0 && realpath(file, real) && !strcmp(real, mine)) {
			base = lo;
			break;
		}
	}
	fclose(f);
	if (!base) {
		snprintf(why, cap, "process %d has no %s mapped: a static binary, or a libc "
			 "other than this one (nothing to load the agent with)", (int)pid, mine);
		return 0;
	}
	return base + ((uintptr_t)dlsym(RTLD_DEFAULT, fname) - (uintptr_t)info.dli_fbase);
}

static int list_threads(pid_t pid, pid_t *tids, int cap)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)) && n < cap)
		if (d->d_name[0] != '.')
			tids[n++] = (pid_t)atoi(d->d_name);
	closedir(dir);
	return n;
}

static bool seized(const pid_t *tids, int n, pid_t t)
{
	for (int i = 0; i < n; i++)
		if (tids[i] == t)
			return true;
	return false;
}

/* Seizes and stops every thread, including ones created meanwhile. */
static int stop_all(pid_t pid, pid_t *tids, int *cnt, char *why, size_t cap)
{
	pid_t now[MAX_THREADS];
	bool more = true;

	*cnt = 0;
	while (more) {
		int n = list_threads(pid, now, MAX_THREADS);

		more = false;
		for (int i = 0; i < n; i++) {
			int st;

			if (seized(tids, *cnt, now[i]) || *cnt == MAX_THREADS)
				continue;
			if (ptrace(PTRACE_SEIZE, now[i], 0, 0) < 0) {
				if (errno == ESRCH)
					continue;       /* exited meanwhile */
				snprintf(why, cap, "ptrace(PTRACE_SEIZE, %d): %s", (int)now[i],
					 strerror(errno));
				return -errno;
			}
			tids[(*cnt)++] = now[i];
			more = true;
			if (ptrace(PTRACE_INTERRUPT, now[i], 0, 0) == 0)
				waitpid(now[i], &st, __WALL);
		}
	}
	return 0;
}

static void release_all(const pid_t *tids, int cnt)
{
	for (int i = 0; i < cnt; i++)
		ptrace(PTRACE_DETACH, tids[i], 0, 0);
}

/* Runs fn(a0, a1) on thread t (stopped) and puts every register back.
 * *ret gets its return value. 0 or -errno (why says what). */
static int remote_call(pid_t pid, pid_t t, uintptr_t fn, uintptr_t a0, uintptr_t a1,
		       uintptr_t scratch, uintptr_t *ret, char *why, size_t cap)
{
	struct inject_regs saved, call, after;
	uintptr_t ret_slot = ((scratch - 256) & ~(uintptr_t)15) - 8, zero = 0;
	struct iovec zl = { &zero, sizeof(zero) }, zr = { (void *)ret_slot, sizeof(zero) };
	int err, st;

	if ((err = inject_arch.get(t, &saved))) {
		snprintf(why, cap, "reading the registers of thread %d: %s", (int)t, strerror(-err));
		return err;
	}
	/* the return address: 0, in a slot below the scratch data (the
	 * stack's alignment at a call is the architecture's: it adjusts) */
	if (process_vm_writev(pid, &zl, 1, &zr, 1, 0) != sizeof(zero)) {
		err = -errno;
		snprintf(why, cap, "writing into %d's stack: %s", (int)pid, strerror(errno));
		return err;
	}
	call = saved;
	inject_arch.setup_call(&call, fn, a0, a1, ret_slot);
	if ((err = inject_arch.set(t, &call))) {
		snprintf(why, cap, "setting the registers of thread %d: %s", (int)t, strerror(-err));
		return err;
	}
	err = ptrace(PTRACE_CONT, t, 0, 0) < 0 ? -errno : 0;
	/* the call returns to address 0: a SIGSEGV stop (other signals that
	 * arrive meanwhile are not passed on: the kernel keeps them pending
	 * in the other threads, a stop here is a group stop) */
	while (!err) {
		if (waitpid(t, &st, __WALL) < 0) {
			err = -errno;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			snprintf(why, cap, "process %d ended during the injection", (int)pid);
			return -ESRCH;
		}
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSEGV)
			break;
		err = ptrace(PTRACE_CONT, t, 0, 0) < 0 ? -errno : 0;
	}
	if (!err && !(err = inject_arch.get(t, &after)))
		*ret = inject_arch.result(&after);
	if (inject_arch.set(t, &saved) && !err)
		err = -EIO;
	if (err && !*why)
		snprintf(why, cap, "the call in thread %d: %s", (int)t, strerror(-err));
	return err;
}

/* The address of the agent's exported sym in process pid: where the
 * agent is mapped there plus the symbol's offset in the file. */
static uintptr_t remote_sym(pid_t pid, const char *agent, uintptr_t off)
{
	char path[64], line[PATH_MAX + 128];
	uintptr_t base = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, foff;
		char *file = strchr(line, '/');

		if (!file || sscanf(line, "%lx-%*x %*s %lx", &lo, &foff) != 2)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (foff == 0 && !strcmp(file, agent)) {
			base = lo;
			break;
		}
	}
	fclose(f);
	return base ? base + off : 0;
}

int trace_inject(pid_t pid, const char *agent, uintptr_t connect_off, char *why, size_t cap)
{
	pid_t tids[MAX_THREADS];
	struct inject_regs regs;
	uintptr_t fn, str, handle = 0, ok = 0;
	int cnt = 0, err;
	size_t len = strlen(agent) + 1;

	*why = 0;
	if (!inject_arch.supported) {
		snprintf(why, cap, "attaching to a running process is implemented for x86-64 only");
		return -EOPNOTSUPP;
	}
	if ((err = check_permitted(pid, why, cap)))
		return err;
	if (!(fn = remote_libc(pid, "dlopen", why, cap)))
		return -ENOEXEC;
	err = stop_all(pid, tids, &cnt, why, cap);
	if (err)
		goto out;
	/* the thread group leader runs the calls (any stopped thread would) */
	pid_t t = tids[0];

	for (int i = 0; i < cnt; i++)
		if (tids[i] == pid)
			t = pid;
	if ((err = inject_arch.get(t, &regs))) {
		snprintf(why, cap, "reading the registers of thread %d: %s", (int)t, strerror(-err));
		goto out;
	}
	/* the path below the stack pointer, past the red zone */
	str = (inject_arch.sp(&regs) - 4096 - len) & ~(uintptr_t)15;
	struct iovec local = { (void *)agent, len }, remote = { (void *)str, len };

	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		err = -errno;
		snprintf(why, cap, "writing the agent's path into %d: %s", (int)pid, strerror(errno));
		goto out;
	}
	err = remote_call(pid, t, fn, str, RTLD_NOW, str, &handle, why, cap);
	if (!err && !handle) {
		/* the target's own dlerror() says why */
		uintptr_t efn = remote_libc(pid, "dlerror", why, cap), msg = 0;
		char text[256] = "";

		if (efn && !remote_call(pid, t, efn, 0, 0, str, &msg, why, cap) && msg) {
			struct iovec l = { text, sizeof(text) - 1 }, r = { (void *)msg, sizeof(text) - 1 };

			if (process_vm_readv(pid, &l, 1, &r, 1, 0) < 0)
				text[0] = 0;
		}
		snprintf(why, cap, "dlopen failed inside process %d: %s%s", (int)pid,
			 *text ? text : "(no dlerror text)",
			 strstr(text, "static TLS") ? " (the agent needs more static TLS than glibc "
			 "keeps for dlopen: start the target with GLIBC_TUNABLES="
			 "glibc.rtld.optional_static_tls=16384)" : "");
		err = -ENOEXEC;
	}
	if (!err) {
		uintptr_t cfn = remote_sym(pid, agent, connect_off);

		if (!cfn) {
			snprintf(why, cap, "the agent is not mapped in %d after dlopen", (int)pid);
			err = -ENOEXEC;
		} else {
			err = remote_call(pid, t, cfn, 0, 0, str, &ok, why, cap);
			if (!err && (int)ok != 0) {
				snprintf(why, cap, "the agent in %d could not connect back: %s",
					 (int)pid, strerror(-(int)ok));
				err = (int)ok;
			}
		}
	}
out:
	release_all(tids, cnt);
	return err;
}
