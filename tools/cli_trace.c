/* bpfrt trace [OPTIONS] OBJ -- CMD ARGS...: runs CMD with libbpfrt-agent.so
 * preloaded, hands the agent the object over the control socket
 * (src/agent/proto.h), streams trace_printk lines while CMD runs, prints
 * the maps and globals BTF-formatted when it ends (or on Ctrl-C, after
 * which the agent detaches) and exits with CMD's status. */
#define _GNU_SOURCE
#include "agent/proto.h"  /* -Isrc (mk/agent.mk) */
#include "bpfrt/bpfrt.h"
#include "cli.h"
#include "cli_trace.h"

#include <linux/bpf.h>

#include <bpf/btf.h>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define START_TIMEOUT_MS 30000

struct trace_opts {
	const char *obj;
	const char *agent;
	char **cmd;
	pid_t pid;              /* -p: a running process, else 0 */
	bool no_dump, interp, follow_fork;
	uint32_t log_level;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bpfrt trace [--no-dump] [--interp] [--follow-fork] [--log-level 1|2] [--agent LIB] OBJ -- CMD [ARGS...]\n"
		"       bpfrt trace [OPTIONS] OBJ -p PID   (a running process; Ctrl-C detaches)\n"
		"       bpfrt trace --detach PID           (every bpfrt trace of PID detached)\n"
		"  runs CMD with the bpfrt agent inside it, attaches the programs of OBJ there,\n"
		"  prints trace_printk lines as they come and the maps and globals at the end;\n"
		"  exits with CMD's status. --follow-fork: fork children keep the programs (their\n"
		"  counts add to the shared maps'; their hash maps and trace_printk lines are their own)\n");
}

/* ---- finding things -------------------------------------------------------- */

/* The agent next to this binary (the build tree) or in ../lib (installed). */
static int find_agent(const char *given, char *out, size_t cap)
{
	static const char *rel[] = { "libbpfrt-agent.so", "../lib/libbpfrt-agent.so" };
	char self[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;

	if (given)
		return realpath(given, out) ? 0 : -errno;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = 0;
	*strrchr(self, '/') = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]);
		if (!access(cand, R_OK) && realpath(cand, out) && strlen(out) < cap)
			return 0;
	}
	return -ENOENT;
}

/* CMD as execvp would find it. */
static int find_cmd(const char *cmd, char *out, size_t cap)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return realpath(cmd, out) ? 0 : -errno;
	for (const char *p = path ? path : "/usr/bin:/bin"; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);

		snprintf(out, cap, "%.*s/%s", (int)len, p, cmd);
		if (!access(out, X_OK))
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -ENOENT;
}

/* LD_PRELOAD needs a dynamic loader: a static executable (no PT_INTERP)
 * would run untraced. 1 if it has one, 0 if not, -errno. */
static int has_interp(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return 1;   /* a script: its interpreter is what runs (checked by exec) */
	}
	for (int i = 0; i < eh.e_phnum && !found; i++)
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) ==
		    sizeof(ph) && ph.p_type == PT_INTERP)
			found = 1;
	close(fd);
	return found;
}

/* ---- the session ----------------------------------------------------------- */

struct session {
	int sock;
	pid_t child;
	struct dumper dp;
	uint8_t *buf;
	bool exiting;           /* the agent said the target is exiting */
	bool detached;          /* another bpfrt detached everything (trace --detach) */
	struct shm_set *shm;    /* the object's maps in shared memory */
};

static void dispatch(struct session *s, const struct agent_msg *h);

static void dispatch_cb(void *ctx, const struct agent_msg *h, uint8_t *buf)
{
	dispatch(ctx, h);
}

/* The object's maps mapped here; its ring buffers consumed here from now
 * on. Without them (an old agent, no memory), everything still comes
 * through the channel. */
static void take_maps(struct session *s)
{
	s->shm = calloc(1, sizeof(*s->shm));
	if (s->shm && shm_collect(s->sock, AGENT_MAPS_TAKE_RINGS, s->shm, s->buf, START_TIMEOUT_MS,
				  dispatch_cb, s)) {
		shm_release(s->shm);
		free(s->shm);
		s->shm = NULL;
	}
}

static bool has_shared_rings(const struct session *s)
{
	for (int i = 0; s->shm && i < s->shm->cnt; i++)
		if (s->shm->maps[i].base && s->shm->maps[i].d.shm.layout == BPFRT_MAP_SHM_RINGBUF)
			return true;
	return false;
}

/* The target ended without its exit handlers (killed by a signal): what
 * its shared maps held then is still in the mapping here. */
static void dump_left_behind(struct session *s, const char *what)
{
	bool others = false;

	if (!s->shm || s->dp.quiet)
		return;
	fprintf(stderr, "bpfrt trace: %s ended without its exit handlers: the maps in shared "
		"memory as it left them\n", what);
	fflush(stderr);
	for (int i = 0; i < s->shm->cnt; i++) {
		struct shm_map *m = &s->shm->maps[i];

		if (shm_dumpable(m))
			shm_dump(m, &s->dp);
		else if (m->d.map.type != BPF_MAP_TYPE_RINGBUF &&
			 m->d.map.type != BPF_MAP_TYPE_PROG_ARRAY)
			others = true;
	}
	fflush(stdout);
	if (others)
		fprintf(stderr, "bpfrt trace: maps not in shared memory (queues, tries...) are "
			"lost with it\n");
}

static void session_free(struct session *s)
{
	if (s->shm) {
		shm_release(s->shm);
		free(s->shm);
		s->shm = NULL;
	}
}

/* Handles one message. Returns its type, 0 for one without effect here,
 * or -errno (-ENOTCONN: the agent is gone). */
static int handle(struct session *s, int timeout_ms)
{
	struct pollfd p = { .fd = s->sock, .events = POLLIN };
	struct agent_msg h;
	int n = poll(&p, 1, timeout_ms), err;

	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	err = agent_recv(s->sock, &h, s->buf, AGENT_MAX_PAYLOAD, NULL);
	if (err)
		return err;
	dispatch(s, &h);
	return (int)h.type;
}

static void dispatch(struct session *s, const struct agent_msg *hp)
{
	struct agent_msg h = *hp;

	switch (h.type) {
	case AGENT_PRINTK:
		fwrite(s->buf, 1, h.len, stdout);
		if (h.len && s->buf[h.len - 1] != '\n')
			putchar('\n');
		fflush(stdout);
		break;
	case AGENT_NOTE:
		fprintf(stderr, "bpfrt trace: %.*s\n", (int)h.len, (const char *)s->buf);
		break;
	case AGENT_RINGBUF:
		/* records have no BTF type of their own: bytes, as bpftool
		 * prints them */
		if (h.len >= 64) {
			printf("%.64s:", (const char *)s->buf);
			for (uint32_t i = 64; i < h.len; i++)
				printf(" %02x", s->buf[i]);
			printf("\n");
			fflush(stdout);
		}
		break;
	case AGENT_MAP:
		if (h.len >= sizeof(struct agent_map))
			dump_begin(&s->dp, (const struct agent_map *)s->buf);
		break;
	case AGENT_ENTRY:
		dump_entry(&s->dp, s->buf, h.len);
		break;
	case AGENT_EXIT:
		s->exiting = true;
		break;
	case AGENT_DONE:
		fflush(stdout);
		break;
	case AGENT_DETACHED:
		s->detached = true;
		break;
	}
}

/* Waits for a message of type want, handling the others. */
static int wait_for(struct session *s, int want, int timeout_ms, struct agent_msg *res,
		    char *text, size_t cap)
{
	for (;;) {
		struct pollfd p = { .fd = s->sock, .events = POLLIN };
		struct agent_msg h;
		int n = poll(&p, 1, timeout_ms), err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (want != AGENT_RESULT) {
			err = handle(s, 0);
			if (err < 0)
				return err;
			if (err == want)
				return 0;
			continue;
		}
		err = agent_recv(s->sock, &h, s->buf, AGENT_MAX_PAYLOAD, NULL);
		if (err)
			return err;
		if (h.type == AGENT_NOTE) {
			fprintf(stderr, "bpfrt trace: %.*s\n", (int)h.len, (const char *)s->buf);
		} else if (h.type == AGENT_RESULT) {
			*res = h;
			size_t l = h.len < cap - 1 ? h.len : cap - 1;

			memcpy(text, s->buf, l);
			text[l] = 0;
			return 0;
		}
	}
}

static int exit_status(int status, const char *cmd)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "bpfrt trace: %s killed by signal %d (%s)\n", cmd, WTERMSIG(status),
			strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return 1;
}

static pid_t launch(const struct trace_opts *o, const char *agent, int child_sock)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	char fdtxt[16], *preload;
	const char *old = getenv("LD_PRELOAD");

	if (fcntl(child_sock, F_SETFD, 0) < 0)
		_exit(127);
	snprintf(fdtxt, sizeof(fdtxt), "%d", child_sock);
	if (asprintf(&preload, "%s%s%s", agent, old && *old ? ":" : "", old ? old : "") < 0)
		_exit(127);
	setenv("LD_PRELOAD", preload, 1);
	setenv("BPFRT_AGENT_FD", fdtxt, 1);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "bpfrt trace: %s: %s\n", o->cmd[0], strerror(errno));
	_exit(127);
}

static int run_trace(const struct trace_opts *o)
{
	char agent[PATH_MAX], cmdpath[PATH_MAX], text[AGENT_MAX_PAYLOAD + 1];
	struct session s = { .sock = -1, .child = -1 };
	struct agent_msg res;
	int sv[2], objfd, status, err, rc = 1;
	const char *name = strrchr(o->obj, '/') ? strrchr(o->obj, '/') + 1 : o->obj;

	if ((err = find_agent(o->agent, agent, sizeof(agent)))) {
		fprintf(stderr, "bpfrt trace: no agent library%s%s (%s); give it with --agent\n",
			o->agent ? " " : "", o->agent ? o->agent : "", strerror(-err));
		return 1;
	}
	if (find_cmd(o->cmd[0], cmdpath, sizeof(cmdpath))) {
		fprintf(stderr, "bpfrt trace: %s: command not found\n", o->cmd[0]);
		return 127;
	}
	if (has_interp(cmdpath) == 0) {
		fprintf(stderr, "bpfrt trace: %s is a static executable: it has no dynamic loader "
			"to load the agent with (LD_PRELOAD)\n", cmdpath);
		return 1;
	}
	objfd = open(o->obj, O_RDONLY | O_CLOEXEC);
	if (objfd < 0) {
		fprintf(stderr, "bpfrt trace: %s: %s\n", o->obj, strerror(errno));
		return 1;
	}
	dumper_open(&s.dp, o->obj, o->no_dump);
	s.buf = malloc(AGENT_MAX_PAYLOAD);
	if (!s.buf || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		fprintf(stderr, "bpfrt trace: %s\n", strerror(errno));
		goto out;
	}
	s.sock = sv[0];
	fflush(stdout);
	s.child = launch(o, agent, sv[1]);
	close(sv[1]);
	if (s.child < 0) {
		fprintf(stderr, "bpfrt trace: fork: %s\n", strerror(errno));
		goto out;
	}
	struct { struct agent_load l; char name[256]; } load = {
		.l = { .flags = (o->interp ? AGENT_LOAD_INTERP : 0) |
		       (o->follow_fork ? AGENT_LOAD_FOLLOW_FORK : 0), .log_level = o->log_level },
	};
	snprintf(load.name, sizeof(load.name), "%s", name);
	err = agent_send(s.sock, AGENT_LOAD, 0, &load, sizeof(load.l) + strlen(load.name) + 1,
			 NULL, 0, objfd);
	if (!err)
		err = wait_for(&s, AGENT_RESULT, START_TIMEOUT_MS, &res, text, sizeof(text));
	if (err) {
		/* the command ended (or exec failed) before the agent answered,
		 * or it never loaded the agent */
		if (err == -ETIMEDOUT) {
			fprintf(stderr, "bpfrt trace: the agent did not answer in %d s; stopping %s\n",
				START_TIMEOUT_MS / 1000, o->cmd[0]);
			kill(s.child, SIGKILL);
		} else {
			fprintf(stderr, "bpfrt trace: %s ended before the agent started in it\n",
				o->cmd[0]);
		}
		waitpid(s.child, &status, 0);
		rc = err == -ETIMEDOUT ? 1 : exit_status(status, o->cmd[0]);
		goto out;
	}
	if (res.err) {
		fprintf(stderr, "bpfrt trace: %s: %s\n%s", o->obj, strerror(-res.err), text);
		if (*text && text[strlen(text) - 1] != '\n')
			fputc('\n', stderr);
		kill(s.child, SIGKILL);
		waitpid(s.child, &status, 0);
		goto out;
	}
	if (*text)
		fprintf(stderr, "%s%s", text, text[strlen(text) - 1] == '\n' ? "" : "\n");
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	take_maps(&s);
	agent_send(s.sock, AGENT_GO, 0, NULL, 0, NULL, 0, -1);
	for (int wait_ms = has_shared_rings(&s) ? 100 : 1000;;) {
		if (interrupted) {
			/* stop tracing: the maps as they are, then every
			 * patched byte back; the command goes on untraced
			 * (unless the same Ctrl-C reached it) */
			if (s.shm)
				shm_drain_rings(s.shm);
			if (!agent_send(s.sock, AGENT_DUMP, 0, NULL, 0, NULL, 0, -1) &&
			    !wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0) &&
			    !agent_send(s.sock, AGENT_DETACH, 0, NULL, 0, NULL, 0, -1))
				wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0);
			close(s.sock);
			s.sock = -1;
			break;
		}
		err = handle(&s, wait_ms);
		/* records in the shared rings, after the messages before them */
		if (s.shm)
			shm_drain_rings(s.shm);
		/* nothing follows EXIT or DETACHED (the socket may stay open
		 * longer: --follow-fork children hold it) */
		if (err == -ENOTCONN || err == -ECONNRESET || s.exiting || s.detached)
			break;
	}
	/* the hang-up that tells --follow-fork children to detach too */
	if (s.sock >= 0) {
		close(s.sock);
		s.sock = -1;
	}
	if (s.detached)
		fprintf(stderr, "bpfrt trace: detached by another bpfrt (trace --detach); %s runs "
			"on untraced\n", o->cmd[0]);
	while (waitpid(s.child, &status, 0) < 0 && errno == EINTR)
		;
	rc = exit_status(status, o->cmd[0]);
	if (!s.exiting && !interrupted && !s.detached)
		dump_left_behind(&s, o->cmd[0]);
out:
	if (s.sock >= 0)
		close(s.sock);
	close(objfd);
	session_free(&s);
	dumper_close(&s.dp);
	free(s.buf);
	return rc;
}

/* The agent's exported bpfrt_agent_connect: its offset in the file's
 * first mapping (st_value of a shared object's .dynsym). 0 if missing. */
static uintptr_t agent_connect_off(const char *agent)
{
	int fd = open(agent, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	uintptr_t off = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !off && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (n = elf_strptr(e, sh.sh_link, sym.st_name)) &&
			    !strcmp(n, "bpfrt_agent_connect")) {
				off = (uintptr_t)sym.st_value;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return off;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* bpfrt trace OBJ -p PID: inject, load, stream; Ctrl-C (or SIGTERM)
 * dumps and detaches, the target's exit ends it too. */
static int run_attach(const struct trace_opts *o)
{
	char agent[PATH_MAX], why[512], text[AGENT_MAX_PAYLOAD + 1];
	struct session s = { .sock = -1, .child = -1 };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timespec t0;
	struct agent_msg res;
	uintptr_t coff;
	int lsock = -1, objfd = -1, err, rc = 1, n;
	const char *name = strrchr(o->obj, '/') ? strrchr(o->obj, '/') + 1 : o->obj;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = find_agent(o->agent, agent, sizeof(agent)))) {
		fprintf(stderr, "bpfrt trace: no agent library (%s); give it with --agent\n",
			strerror(-err));
		return 1;
	}
	if (!(coff = agent_connect_off(agent))) {
		fprintf(stderr, "bpfrt trace: %s exports no bpfrt_agent_connect\n", agent);
		return 1;
	}
	objfd = open(o->obj, O_RDONLY | O_CLOEXEC);
	if (objfd < 0) {
		fprintf(stderr, "bpfrt trace: %s: %s\n", o->obj, strerror(errno));
		return 1;
	}
	dumper_open(&s.dp, o->obj, o->no_dump);
	s.buf = malloc(AGENT_MAX_PAYLOAD);
	/* an agent there already (another controller's): a session of our
	 * own, no injection */
	s.sock = agent_dial(o->pid);
	if (s.sock >= 0)
		goto connected;
	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, AGENT_SOCKET_FMT, (int)o->pid);
	lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (!s.buf || lsock < 0 ||
	    bind(lsock, (struct sockaddr *)&a,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    listen(lsock, 1) < 0) {
		fprintf(stderr, "bpfrt trace: the control socket for %d: %s%s\n", (int)o->pid,
			strerror(errno), errno == EADDRINUSE ? " (another bpfrt trace has it)" : "");
		goto out;
	}
	err = trace_inject(o->pid, agent, coff, why, sizeof(why));
	if (err) {
		fprintf(stderr, "bpfrt trace: cannot attach to %d: %s\n", (int)o->pid, why);
		goto out;
	}
	struct pollfd p = { .fd = lsock, .events = POLLIN };
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (poll(&p, 1, 10000) != 1 || (s.sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
	    getsockopt(s.sock, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.pid != o->pid) {
		fprintf(stderr, "bpfrt trace: the agent in %d did not connect\n", (int)o->pid);
		goto out;
	}
connected:;
	struct { struct agent_load l; char name[256]; } load = {
		.l = { .flags = (o->interp ? AGENT_LOAD_INTERP : 0) |
		       (o->follow_fork ? AGENT_LOAD_FOLLOW_FORK : 0), .log_level = o->log_level },
	};
	snprintf(load.name, sizeof(load.name), "%s", name);
	err = agent_send(s.sock, AGENT_LOAD, 0, &load, sizeof(load.l) + strlen(load.name) + 1,
			 NULL, 0, objfd);
	if (!err)
		err = wait_for(&s, AGENT_RESULT, START_TIMEOUT_MS, &res, text, sizeof(text));
	if (err) {
		fprintf(stderr, "bpfrt trace: no answer from the agent in %d: %s\n", (int)o->pid,
			strerror(-err));
		goto out;
	}
	if (res.err) {
		fprintf(stderr, "bpfrt trace: %s: %s\n%s", o->obj, strerror(-res.err), text);
		goto out;
	}
	if (*text)
		fprintf(stderr, "%s%s", text, text[strlen(text) - 1] == '\n' ? "" : "\n");
	fprintf(stderr, "bpfrt trace: attached to %d in %ld ms\n", (int)o->pid, ms_since(&t0));
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	take_maps(&s);
	rc = 0;
	for (int wait_ms = has_shared_rings(&s) ? 100 : 1000;;) {
		if (interrupted) {
			if (s.shm)
				shm_drain_rings(s.shm);
			if (!agent_send(s.sock, AGENT_DUMP, 0, NULL, 0, NULL, 0, -1) &&
			    !wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0) &&
			    !agent_send(s.sock, AGENT_DETACH, 0, NULL, 0, NULL, 0, -1))
				wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0);
			fprintf(stderr, "bpfrt trace: detached from %d\n", (int)o->pid);
			break;
		}
		err = handle(&s, wait_ms);
		if (s.shm)
			shm_drain_rings(s.shm);
		if (err == -ENOTCONN || err == -ECONNRESET || s.exiting || s.detached) {
			char what[32];

			snprintf(what, sizeof(what), "%d", (int)o->pid);
			if (s.detached)
				fprintf(stderr, "bpfrt trace: detached from %d by another bpfrt (trace "
					"--detach)\n", (int)o->pid);
			else if (!s.exiting)
				dump_left_behind(&s, what);
			break;
		}
	}
out:
	session_free(&s);
	if (s.sock >= 0)
		close(s.sock);
	if (lsock >= 0)
		close(lsock);
	close(objfd);
	dumper_close(&s.dp);
	free(s.buf);
	return rc;
}

int cli_trace(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--no-dump")) {
			o.no_dump = true;
		} else if (!strcmp(argv[i], "--interp")) {
			o.interp = true;
		} else if (!strcmp(argv[i], "--follow-fork")) {
			o.follow_fork = true;
		} else if (!strcmp(argv[i], "--log-level") && i + 1 < argc) {
			o.log_level = (uint32_t)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			o.pid = (pid_t)atoi(argv[++i]);
			if (o.pid <= 0) {
				fprintf(stderr, "bpfrt trace: bad pid '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--detach") && i + 1 < argc) {
			pid_t pid = (pid_t)atoi(argv[++i]);

			if (pid <= 0) {
				fprintf(stderr, "bpfrt trace: bad pid '%s'\n", argv[i]);
				return 2;
			}
			return cli_trace_detach(pid);
		} else if (!strcmp(argv[i], "--agent") && i + 1 < argc) {
			o.agent = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "bpfrt trace: unknown option '%s'\n", argv[i]);
			usage();
			return 2;
		} else if (!o.obj) {
			o.obj = argv[i];
		} else {
			fprintf(stderr, "bpfrt trace: one object, then -- CMD\n");
			usage();
			return 2;
		}
	}
	if (o.pid && o.obj && i >= argc)
		return run_attach(&o);
	if (!o.obj || i >= argc || o.pid) {
		usage();
		return 2;
	}
	o.cmd = argv + i;
	return run_trace(&o);
}
