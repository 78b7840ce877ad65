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
	bool no_dump, interp;
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
		"usage: bpfrt trace [--no-dump] [--interp] [--log-level 1|2] [--agent LIB] OBJ -- CMD [ARGS...]\n"
		"       bpfrt trace [OPTIONS] OBJ -p PID   (a running process; Ctrl-C detaches)\n"
		"  runs CMD with the bpfrt agent inside it, attaches the programs of OBJ there,\n"
		"  prints trace_printk lines as they come and the maps and globals at the end;\n"
		"  exits with CMD's status\n");
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

/* ---- the dump -------------------------------------------------------------- */

struct dumper {
	struct btf *btf;
	struct btf_dump *d;
	char *buf;              /* the value being formatted */
	size_t len, cap;
	struct agent_map map;   /* the map whose entries come now */
	int key_type, value_type;        /* BTF ids, 0: unknown (hex) */
	int datasec;            /* BTF id of a global-data section, else 0 */
	bool quiet;
	const char *obj;        /* the object's path: its symbols place the globals */
};

/* The offset of global var in section sec of the object: clang leaves
 * DATASEC offsets to the loader (libbpf fills them from the symbols), so
 * they are read from .symtab here too. -1 if not found. */
static long var_offset(const char *path, const char *sec, const char *var)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx, secidx = 0;
	long off = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, sec))
			secidx = elf_ndxscn(scn);
	}
	while (secidx && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != secidx)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, var)) {
				off = (long)sym.st_value;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return off;
}

static void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	struct dumper *dp = ctx;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (dp->len + (size_t)n + 1 > dp->cap) {
		size_t cap = (dp->len + (size_t)n + 1) * 2;
		char *nb = realloc(dp->buf, cap);

		if (!nb)
			return;
		dp->buf = nb;
		dp->cap = cap;
	}
	vsnprintf(dp->buf + dp->len, dp->cap - dp->len, fmt, ap);
	dp->len += (size_t)n;
}

static void append(struct dumper *dp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(struct dumper *dp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dump_printf(dp, fmt, ap);
	va_end(ap);
}

/* Formats size bytes of BTF type id (hex without one) into dp->buf. */
static const char *format(struct dumper *dp, int id, const void *data, size_t size)
{
	LIBBPF_OPTS(btf_dump_type_data_opts, o, .compact = true, .emit_zeroes = true);
	int rid = id > 0 && dp->btf ? btf__resolve_type(dp->btf, (__u32)id) : -1;
	const struct btf_type *t = rid > 0 ? btf__type_by_id(dp->btf, (__u32)rid) : NULL;

	/* numbers bare ("42", not "(long)42"); aggregates with their names */
	o.skip_names = t && (btf_is_int(t) || btf_is_enum(t) || btf_is_ptr(t) ||
			     btf_is_float(t) || btf_is_enum64(t));
	dp->len = 0;
	if (dp->buf)
		dp->buf[0] = 0;
	if (id > 0 && dp->d && btf_dump__dump_type_data(dp->d, (__u32)id, data, size, &o) >= 0)
		return dp->buf ? dp->buf : "";
	dp->len = 0;
	for (size_t i = 0; i < size; i++) {
		char hex[4];

		snprintf(hex, sizeof(hex), "%s%02x", i ? " " : "", ((const uint8_t *)data)[i]);
		append(dp, "%s", hex);
	}
	return dp->buf ? dp->buf : "";
}

/* The key and value types of a BTF-defined map: the members "key" and
 * "value" of its variable in .maps (pointers to the types). */
static void map_types(struct dumper *dp, const char *name)
{
	int sec = dp->btf ? btf__find_by_name_kind(dp->btf, ".maps", BTF_KIND_DATASEC) : -1;
	const struct btf_type *t;

	dp->key_type = dp->value_type = dp->datasec = 0;
	if (dp->btf && name[0] == '.') {
		int id = btf__find_by_name_kind(dp->btf, name, BTF_KIND_DATASEC);

		dp->datasec = id > 0 ? id : 0;
		return;
	}
	if (sec <= 0)
		return;
	t = btf__type_by_id(dp->btf, (__u32)sec);
	const struct btf_var_secinfo *vs = btf_var_secinfos(t);

	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(dp->btf, vs->type);

		if (!var || strcmp(btf__name_by_offset(dp->btf, var->name_off), name))
			continue;
		int sid = btf__resolve_type(dp->btf, var->type);
		const struct btf_type *st = sid > 0 ? btf__type_by_id(dp->btf, (__u32)sid) : NULL;

		if (!st || !btf_is_struct(st))
			return;
		const struct btf_member *m = btf_members(st);

		for (int j = 0; j < btf_vlen(st); j++, m++) {
			const char *mn = btf__name_by_offset(dp->btf, m->name_off);
			const struct btf_type *pt = btf__type_by_id(dp->btf, m->type);

			if (!pt || !btf_is_ptr(pt))
				continue;
			if (!strcmp(mn, "key"))
				dp->key_type = (int)pt->type;
			else if (!strcmp(mn, "value"))
				dp->value_type = (int)pt->type;
		}
		return;
	}
}

static void dump_begin(struct dumper *dp, const struct agent_map *m)
{
	dp->map = *m;
	dp->map.name[sizeof(dp->map.name) - 1] = 0;
	map_types(dp, dp->map.name);
	if (dp->quiet)
		return;
	if (m->type == BPF_MAP_TYPE_RINGBUF || m->type == BPF_MAP_TYPE_PROG_ARRAY)
		return;
	if (m->skipped)
		printf("%s: entries of %u + %u bytes not shown\n", dp->map.name, m->key_size,
		       m->value_buf_size);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Global data: one line per variable of its section. */
static void dump_globals(struct dumper *dp, const uint8_t *val, size_t size)
{
	const struct btf_type *t = btf__type_by_id(dp->btf, (__u32)dp->datasec);
	const struct btf_var_secinfo *vs = btf_var_secinfos(t);

	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(dp->btf, vs->type);
		const char *name = var ? btf__name_by_offset(dp->btf, var->name_off) : NULL;
		long sz = var ? btf__resolve_size(dp->btf, var->type) : -1;
		long off;

		/* function-local statics (bpf_printk's format: "fn.fmt") are
		 * no globals of the program's */
		if (!name || strchr(name, '.') || sz <= 0)
			continue;
		off = var_offset(dp->obj, dp->map.name, name);
		if (off < 0 || (size_t)(off + sz) > size)
			continue;
		printf("%s = %s\n", name, format(dp, (int)var->type, val + off, (size_t)sz));
	}
}

static void dump_entry(struct dumper *dp, const uint8_t *data, size_t len)
{
	const struct agent_map *m = &dp->map;
	const uint8_t *key = data, *val = data + m->key_size;
	bool array = m->type == BPF_MAP_TYPE_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_ARRAY;
	bool percpu = m->type == BPF_MAP_TYPE_PERCPU_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_HASH;
	char keytxt[512];

	if (dp->quiet || len != (size_t)m->key_size + m->value_buf_size)
		return;
	if (dp->datasec) {
		dump_globals(dp, val, m->value_size);
		return;
	}
	/* arrays: the slots a program wrote (the others hold zeros) */
	if (array && all_zero(val, m->value_buf_size))
		return;
	if (array && m->key_size == 4) {
		uint32_t idx;

		memcpy(&idx, key, 4);
		snprintf(keytxt, sizeof(keytxt), "%u", idx);
	} else {
		snprintf(keytxt, sizeof(keytxt), "%s", format(dp, dp->key_type, key, m->key_size));
	}
	if (!percpu) {
		printf("%s[%s] = %s\n", m->name, keytxt, format(dp, dp->value_type, val,
								   m->value_size));
		return;
	}
	size_t stride = (m->value_size + 7) & ~7u;

	printf("%s[%s] = [", m->name, keytxt);
	for (size_t off = 0, cpu = 0; off + m->value_size <= m->value_buf_size; off += stride, cpu++)
		printf("%s%s", cpu ? ", " : "", format(dp, dp->value_type, val + off, m->value_size));
	printf("]\n");
}

/* ---- the session ----------------------------------------------------------- */

struct session {
	int sock;
	pid_t child;
	struct dumper dp;
	uint8_t *buf;
	bool exiting;           /* the agent said the target is exiting */
};

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
	}
	return (int)h.type;
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
	/* libbpf 1.x: NULL (and errno) on failure; without BTF, hex */
	s.dp.btf = btf__parse_elf(o->obj, NULL);
	if (s.dp.btf)
		s.dp.d = btf_dump__new(s.dp.btf, dump_printf, &s.dp, NULL);
	s.dp.quiet = o->no_dump;
	s.dp.obj = o->obj;
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
		.l = { .flags = o->interp ? AGENT_LOAD_INTERP : 0, .log_level = o->log_level },
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
	agent_send(s.sock, AGENT_GO, 0, NULL, 0, NULL, 0, -1);
	for (;;) {
		if (interrupted) {
			/* stop tracing: the maps as they are, then every
			 * patched byte back; the command goes on untraced
			 * (unless the same Ctrl-C reached it) */
			if (!agent_send(s.sock, AGENT_DUMP, 0, NULL, 0, NULL, 0, -1) &&
			    !wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0) &&
			    !agent_send(s.sock, AGENT_DETACH, 0, NULL, 0, NULL, 0, -1))
				wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0);
			close(s.sock);
			s.sock = -1;
			break;
		}
		err = handle(&s, 1000);
		if (err == -ENOTCONN || err == -ECONNRESET)
			break;
	}
	while (waitpid(s.child, &status, 0) < 0 && errno == EINTR)
		;
	rc = exit_status(status, o->cmd[0]);
	if (!s.exiting && !interrupted && !o->no_dump)
		fprintf(stderr, "bpfrt trace: %s ended without its exit handlers: no final dump\n",
			o->cmd[0]);
out:
	if (s.sock >= 0)
		close(s.sock);
	close(objfd);
	btf_dump__free(s.dp.d);
	btf__free(s.dp.btf);
	free(s.dp.buf);
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
	s.dp.btf = btf__parse_elf(o->obj, NULL);
	if (s.dp.btf)
		s.dp.d = btf_dump__new(s.dp.btf, dump_printf, &s.dp, NULL);
	s.dp.quiet = o->no_dump;
	s.dp.obj = o->obj;
	s.buf = malloc(AGENT_MAX_PAYLOAD);
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
	struct { struct agent_load l; char name[256]; } load = {
		.l = { .flags = o->interp ? AGENT_LOAD_INTERP : 0, .log_level = o->log_level },
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
	rc = 0;
	for (;;) {
		if (interrupted) {
			if (!agent_send(s.sock, AGENT_DUMP, 0, NULL, 0, NULL, 0, -1) &&
			    !wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0) &&
			    !agent_send(s.sock, AGENT_DETACH, 0, NULL, 0, NULL, 0, -1))
				wait_for(&s, AGENT_DONE, 5000, NULL, NULL, 0);
			fprintf(stderr, "bpfrt trace: detached from %d\n", (int)o->pid);
			break;
		}
		err = handle(&s, 1000);
		if (err == -ENOTCONN || err == -ECONNRESET) {
			if (!s.exiting)
				fprintf(stderr, "bpfrt trace: %d ended without its exit handlers\n",
					(int)o->pid);
			break;
		}
	}
out:
	if (s.sock >= 0)
		close(s.sock);
	if (lsock >= 0)
		close(lsock);
	close(objfd);
	btf_dump__free(s.dp.d);
	btf__free(s.dp.btf);
	free(s.dp.buf);
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
		} else if (!strcmp(argv[i], "--log-level") && i + 1 < argc) {
			o.log_level = (uint32_t)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			o.pid = (pid_t)atoi(argv[++i]);
			if (o.pid <= 0) {
				fprintf(stderr, "bpfrt trace: bad pid '%s'\n", argv[i]);
				return 2;
			}
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
