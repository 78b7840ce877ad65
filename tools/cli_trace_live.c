/* Commands that reach a traced process from another CLI, through the
 * agent's own socket (proto.h, AGENT_LISTEN_FMT), while the target runs
 * and its first controller goes on:
 *   bpfrt map dump -p PID [OBJ:]NAME        the live values
 *   bpfrt map update -p PID [OBJ:]NAME KEY VALUE
 *   bpfrt trace --detach PID                every controller's links off
 * Arrays, per-CPU arrays and global data are read and written in the
 * shared mapping; hash maps (pointers inside: not position-independent)
 * and the other kinds through the channel, which the output says. */
#define _GNU_SOURCE
#include "cli_trace.h"

#include <bpf/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define LIVE_TIMEOUT_MS 30000

int agent_dial(pid_t pid)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd, n, err;

	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, AGENT_LISTEN_FMT, (int)pid);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* the name is anyone's to bind: only the target itself is the agent */
	if (cred.pid != pid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

static int dial_or_say(pid_t pid, const char *cmd)
{
	int sock = agent_dial(pid);

	if (sock == -ECONNREFUSED || sock == -ENOENT)
		fprintf(stderr, "bpfrt %s: process %d has no bpfrt agent (not traced by bpfrt trace)\n",
			cmd, (int)pid);
	else if (sock < 0)
		fprintf(stderr, "bpfrt %s: the agent of process %d: %s\n", cmd, (int)pid,
			strerror(-sock));
	return sock;
}

/* Waits for DONE, handing MAP and ENTRY messages to dp (NULL: none
 * expected). Its err (payload in text if given), or -errno. */
static int wait_done(int sock, uint8_t *buf, struct dumper *dp, char *text, size_t cap)
{
	for (;;) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		struct agent_msg h;
		int n = poll(&p, 1, LIVE_TIMEOUT_MS), err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ETIMEDOUT;
		err = agent_recv(sock, &h, buf, AGENT_MAX_PAYLOAD, NULL);
		if (err)
			return err;
		if (h.type == AGENT_MAP && dp && h.len >= sizeof(struct agent_map))
			dump_begin(dp, (const struct agent_map *)buf);
		else if (h.type == AGENT_ENTRY && dp)
			dump_entry(dp, buf, h.len);
		else if (h.type == AGENT_DONE) {
			if (text) {
				size_t l = h.len < cap - 1 ? h.len : cap - 1;

				memcpy(text, buf, l);
				text[l] = 0;
			}
			fflush(stdout);
			return h.err;
		}
	}
}

static void list_maps(const struct shm_set *set)
{
	fprintf(stderr, "  maps there:");
	for (int i = 0; i < set->cnt; i++)
		fprintf(stderr, " %s:%s", set->objs[set->maps[i].obj].name, set->maps[i].d.map.name);
	fprintf(stderr, "%s\n", set->cnt ? "" : " none (no object loaded)");
}

/* "OBJ\0NAME\0" of m into out; its length. */
static size_t names(const struct shm_set *set, const struct shm_map *m, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s%c%s", set->objs[m->obj].name, 0, m->d.map.name);

	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n + 1;
}

/* A number into size little-endian bytes, or "hex:..." of exactly size
 * bytes. 0 or -EINVAL. */
static int parse_bytes(const char *txt, size_t size, uint8_t *out)
{
	if (!strncmp(txt, "hex:", 4)) {
		const char *p = txt + 4;

		for (size_t i = 0; i < size; i++) {
			unsigned int b;

			while (*p == ' ')
				p++;
			if (sscanf(p, "%2x", &b) != 1)
				return -EINVAL;
			out[i] = (uint8_t)b;
			p += 2;
		}
		return *p ? -EINVAL : 0;
	}
	char *end;
	unsigned long long v = *txt == '-' ? (unsigned long long)strtoll(txt, &end, 0)
					   : strtoull(txt, &end, 0);

	if (end == txt || *end || size > 8)
		return -EINVAL;
	memset(out, 0, size);
	for (size_t i = 0; i < size; i++)
		out[i] = (uint8_t)(v >> (8 * i));
	return 0;
}

/* A global variable of section sec: its offset and size, from the BTF
 * and the symbols. -ENOENT if there is none of that name. */
static long global_var(struct dumper *dp, const char *sec, const char *var, size_t *size)
{
	int id = dp->btf ? btf__find_by_name_kind(dp->btf, sec, BTF_KIND_DATASEC) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(dp->btf, (__u32)id) : NULL;
	const struct btf_var_secinfo *vs = t ? btf_var_secinfos(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(dp->btf, vs->type);
		long sz;

		if (!v || strcmp(btf__name_by_offset(dp->btf, v->name_off), var))
			continue;
		sz = btf__resolve_size(dp->btf, v->type);
		if (sz <= 0)
			return -ENOENT;
		*size = (size_t)sz;
		return var_offset(dp->obj, sec, var);
	}
	return -ENOENT;
}

static int live_update(int sock, struct shm_set *set, struct shm_map *m, struct dumper *dp,
		       const char *ktxt, const char *vtxt, uint8_t *buf)
{
	const struct agent_map *am = &m->d.map;
	uint8_t key[512], *val = calloc(1, am->value_buf_size + 8);
	int err = 0;

	if (!val)
		return 1;
	if (!strncmp(am->name, ".rodata", 7)) {
		fprintf(stderr, "bpfrt map update: %s is frozen: the programs were verified with "
			"its values\n", am->name);
		goto fail;
	}
	if (m->base && m->d.shm.layout == BPFRT_MAP_SHM_ARRAY && am->name[0] == '.') {
		/* global data: KEY names the variable */
		size_t size;
		long off = global_var(dp, am->name, ktxt, &size);

		if (off < 0 || size > am->value_size || (size_t)off + size > am->value_size) {
			fprintf(stderr, "bpfrt map update: %s has no variable '%s'\n", am->name, ktxt);
			goto fail;
		}
		if (parse_bytes(vtxt, size, val)) {
			fprintf(stderr, "bpfrt map update: '%s' is not a value of %zu bytes (a number "
				"or hex:BYTES)\n", vtxt, size);
			goto fail;
		}
		err = shm_write(m, 0, val, (size_t)off, size);
	} else if (m->base && m->d.shm.layout == BPFRT_MAP_SHM_ARRAY) {
		uint32_t idx;

		if (parse_bytes(ktxt, 4, (uint8_t *)&idx) || idx >= am->max_entries) {
			fprintf(stderr, "bpfrt map update: %s: index '%s' out of range (max_entries "
				"%u)\n", am->name, ktxt, am->max_entries);
			goto fail;
		}
		if (parse_bytes(vtxt, am->value_size, val)) {
			fprintf(stderr, "bpfrt map update: '%s' is not a value of %u bytes (a number "
				"or hex:BYTES)\n", vtxt, am->value_size);
			goto fail;
		}
		err = shm_write(m, idx, val, 0, am->value_size);
	} else {
		/* through the agent: a per-CPU value goes to every CPU */
		size_t stride = (am->value_size + 7) & ~7u, nl;
		char nm[160], text[512] = "";
		struct agent_update u = { .key_size = am->key_size, .value_size = am->value_buf_size };

		if (am->key_size > sizeof(key) || parse_bytes(ktxt, am->key_size, key) ||
		    parse_bytes(vtxt, am->value_size, val)) {
			fprintf(stderr, "bpfrt map update: %s: key of %u and value of %u bytes "
				"expected (numbers or hex:BYTES)\n", am->name, am->key_size,
				am->value_size);
			goto fail;
		}
		for (size_t off = stride; off + am->value_size <= am->value_buf_size; off += stride)
			memcpy(val + off, val, am->value_size);
		nl = names(set, m, nm, sizeof(nm));
		uint8_t *msg = malloc(sizeof(u) + nl + am->key_size + am->value_buf_size);

		if (!msg)
			goto fail;
		memcpy(msg, &u, sizeof(u));
		memcpy(msg + sizeof(u), nm, nl);
		memcpy(msg + sizeof(u) + nl, key, am->key_size);
		memcpy(msg + sizeof(u) + nl + am->key_size, val, am->value_buf_size);
		err = agent_send(sock, AGENT_UPDATE, 0, msg,
				 sizeof(u) + nl + am->key_size + am->value_buf_size, NULL, 0, -1);
		free(msg);
		if (!err)
			err = wait_done(sock, buf, NULL, text, sizeof(text));
		if (err) {
			fprintf(stderr, "bpfrt map update: %s: %s\n", am->name,
				*text ? text : strerror(-err));
			goto fail;
		}
		fprintf(stderr, "bpfrt map update: %s updated through the agent (%s)\n", am->name,
			m->base && m->d.shm.layout == BPFRT_MAP_SHM_HASH ?
			"a hash map is written only by its process, "
			"whose pool it is" : "not in shared memory");
	}
	if (err) {
		fprintf(stderr, "bpfrt map update: %s: %s\n", am->name, strerror(-err));
		goto fail;
	}
	free(val);
	return 0;
fail:
	free(val);
	return 1;
}

static void usage_live(void)
{
	fprintf(stderr, "usage: bpfrt map dump -p PID [OBJ:]NAME\n"
			"       bpfrt map update -p PID [OBJ:]NAME KEY VALUE\n"
			"  a map of a process traced by bpfrt trace, live (KEY: an index, a global "
			"variable's name\n  for .data/.bss, or a number / hex:BYTES; VALUE: a number "
			"or hex:BYTES)\n");
}

int cli_map_live(int argc, char **argv)
{
	bool update = argc >= 1 && !strcmp(argv[0], "update");
	struct shm_set *set = calloc(1, sizeof(*set));
	uint8_t *buf = malloc(AGENT_MAX_PAYLOAD);
	struct dumper dp;
	struct shm_map *m;
	pid_t pid;
	int sock = -1, rc = 1, err;

	if (argc != (update ? 6 : 4) || strcmp(argv[1], "-p") || (pid = atoi(argv[2])) <= 0 ||
	    !set || !buf) {
		usage_live();
		free(set);
		free(buf);
		return 2;
	}
	sock = dial_or_say(pid, "map");
	if (sock < 0)
		goto out;
	err = shm_collect(sock, AGENT_MAPS_ALL, set, buf, LIVE_TIMEOUT_MS, NULL, NULL);
	if (err) {
		fprintf(stderr, "bpfrt map: the agent of %d: %s\n", (int)pid, strerror(-err));
		goto out;
	}
	m = shm_find(set, argv[3]);
	if (!m) {
		fprintf(stderr, "bpfrt map: process %d has no map '%s'\n", (int)pid, argv[3]);
		list_maps(set);
		goto out;
	}
	dumper_open(&dp, set->objs[m->obj].path, false);
	if (update) {
		rc = live_update(sock, set, m, &dp, argv[4], argv[5], buf);
	} else if (shm_dumpable(m)) {
		shm_dump(m, &dp);
		fflush(stdout);
		rc = 0;
	} else if (m->d.map.type == BPF_MAP_TYPE_RINGBUF) {
		fprintf(stderr, "bpfrt map dump: %s is a ring buffer: its records go to the "
			"bpfrt trace that loaded it\n", m->d.map.name);
	} else {
		char nm[160];
		size_t nl = names(set, m, nm, sizeof(nm));

		err = agent_send(sock, AGENT_DUMP_MAP, 0, nm, nl, NULL, 0, -1);
		if (!err)
			err = wait_done(sock, buf, &dp, NULL, 0);
		if (err)
			fprintf(stderr, "bpfrt map dump: %s: %s\n", m->d.map.name, strerror(-err));
		else
			fprintf(stderr, "bpfrt map dump: %s read through the agent (not in shared "
				"memory: only arrays, hash maps and ring buffers are)\n", m->d.map.name);
		rc = err ? 1 : 0;
	}
	dumper_close(&dp);
out:
	if (sock >= 0)
		close(sock);
	shm_release(set);
	free(set);
	free(buf);
	return rc;
}

int cli_trace_detach(pid_t pid)
{
	uint8_t *buf = malloc(AGENT_MAX_PAYLOAD);
	char text[256] = "";
	int sock, err;

	if (!buf)
		return 1;
	sock = dial_or_say(pid, "trace --detach");
	if (sock < 0) {
		free(buf);
		return 1;
	}
	err = agent_send(sock, AGENT_DETACH_ALL, 0, NULL, 0, NULL, 0, -1);
	if (!err)
		err = wait_done(sock, buf, NULL, text, sizeof(text));
	close(sock);
	free(buf);
	if (err) {
		fprintf(stderr, "bpfrt trace --detach: the agent of %d: %s\n", (int)pid,
			strerror(-err));
		return 1;
	}
	fprintf(stderr, "bpfrt trace: detached from %d (%s); it runs on untraced\n", (int)pid,
		text);
	return 0;
}
