/* The current task's identity, answered from memory as the kernel does
 * (it reads `current`): bpf_get_current_pid_tgid, _uid_gid, _comm and
 * _cgroup_id each read a per-thread cache filled by system calls on the
 * first call in a thread and again after the cache is invalidated.
 *
 * What invalidates it (one process-wide generation, every cache entry
 * stamped with the generation it was read in):
 *  - fork: a pthread_atfork child handler, registered at the first fill,
 *    bumps the generation; the forking thread is the child's only thread,
 *    so its new pid and tid are read at its next call. Other threads' TLS
 *    does not exist in the child.
 *  - bpfrt_identity_changed() (bpfrt/helpers.h), for what a library
 *    cannot see without interposing libc (it exports only bpfrt_*): the
 *    setuid/setgid family, prctl(PR_SET_NAME), pthread_setname_np,
 *    writes to /proc/self/task/TID/comm, moves between cgroups.
 * Not tracked: a child made by the raw clone system call rather than
 * fork() (no atfork handlers run), and vfork children (they may only exec
 * or _exit). exec needs nothing: the image and its TLS are new.
 *
 * A signal handler running a program on a thread mid-fill refills the
 * entry itself: each entry's data is written before its stamp, and the
 * stamp is stale for the whole fill. */
#define _GNU_SOURCE
#include "helpers/current.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define COMM_LEN 16 /* TASK_COMM_LEN */

/* Starts at 1: a thread's zero-initialised stamps are never current. */
static _Atomic uint64_t identity_gen = 1;

struct current_cache {
	uint64_t pid_gen, cred_gen, comm_gen, cgroup_gen;
	uint64_t pid_tgid;
	uint64_t uid_gid;
	uint64_t cgroup_id;
	char comm[COMM_LEN];
};

static __thread struct current_cache cur;

static void identity_fork_child(void)
{
	atomic_fetch_add_explicit(&identity_gen, 1, memory_order_relaxed);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void)
{
	/* Fails only with ENOMEM; the caches then stay right until a fork,
	 * which is the most that can be had. */
	pthread_atfork(NULL, NULL, identity_fork_child);
}

void bpfrt_identity_changed(void)
{
	atomic_fetch_add_explicit(&identity_gen, 1, memory_order_release);
}

static inline uint64_t gen_now(void)
{
	return atomic_load_explicit(&identity_gen, memory_order_acquire);
}

/* The generation a fill is stamped with: read before the system calls,
 * so a change during the fill leaves the entry stale, never wrong. */
static uint64_t fill_begin(void)
{
	pthread_once(&atfork_once, register_atfork);
	return gen_now();
}

static inline void stamp(uint64_t *slot, uint64_t gen)
{
	atomic_signal_fence(memory_order_release); /* data before the stamp */
	*slot = gen;
}

uint64_t bpfrt_bpf_get_current_pid_tgid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5)
{
	uint64_t gen = gen_now();

	if (__builtin_expect(cur.pid_gen != gen, 0)) {
		gen = fill_begin();
		cur.pid_tgid = (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)gettid();
		stamp(&cur.pid_gen, gen);
	}
	return cur.pid_tgid;
}

/* gid << 32 | uid: the real ids (Linux's cred->uid and gid), as this
 * process's user namespace sees them (Linux maps them to the initial
 * namespace; the two differ only inside a user namespace). */
uint64_t bpfrt_bpf_get_current_uid_gid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	uint64_t gen = gen_now();

	if (__builtin_expect(cur.cred_gen != gen, 0)) {
		gen = fill_begin();
		cur.uid_gid = (uint64_t)(uint32_t)getgid() << 32 | (uint32_t)getuid();
		stamp(&cur.cred_gen, gen);
	}
	return cur.uid_gid;
}

/* The thread's name, NUL-padded to size, as strscpy_pad(buf, comm). */
uint64_t bpfrt_bpf_get_current_comm(uint64_t buf, uint64_t size, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	char *out = (char *)(uintptr_t)buf;
	uint64_t gen = gen_now();

	if (!size)
		return (uint64_t)-EINVAL;
	if (__builtin_expect(cur.comm_gen != gen, 0)) {
		char comm[COMM_LEN + 1] = { 0 };

		gen = fill_begin();
		prctl(PR_GET_NAME, comm);
		/* NUL-padded after the name, whatever prctl left there */
		memset(comm + strnlen(comm, COMM_LEN - 1), 0, COMM_LEN - strnlen(comm, COMM_LEN - 1));
		memcpy(cur.comm, comm, COMM_LEN);
		stamp(&cur.comm_gen, gen);
	}
	/* cur.comm is NUL-padded: copying it whole is strscpy_pad */
	if (size >= COMM_LEN) {
		memcpy(out, cur.comm, COMM_LEN);
		if (size > COMM_LEN)
			memset(out + COMM_LEN, 0, size - COMM_LEN);
	} else {
		memcpy(out, cur.comm, size - 1);
		out[size - 1] = 0;
	}
	return 0;
}

/* ---- cgroup id ------------------------------------------------------------ */

/* The cgroup v2 mount point and the root it shows (mountinfo fields 4
 * and 5); false when cgroup2 is not mounted. */
static bool cgroup2_mount(char *mnt, size_t mnt_len, char *root, size_t root_len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char r[1024], m[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2)
			continue;
		snprintf(mnt, mnt_len, "%s", m);
		snprintf(root, root_len, "%s", r);
		found = true;
	}
	fclose(f);
	return found;
}

/* The process's cgroup v2 path ("0::PATH" in /proc/self/cgroup). */
static bool cgroup2_path(char *path, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, len, "%s", line + 3);
		found = true;
	}
	fclose(f);
	return found;
}

/* Linux's cgroup id is the kernfs node id, which is the inode number of
 * the cgroup's directory in a cgroup2 mount. 0 when it cannot be read
 * (no cgroup2 mount, or the process's cgroup lies outside the mount). */
static uint64_t read_cgroup_id(void)
{
	char mnt[1024], root[1024], path[4096], dir[5200];
	size_t root_len;
	struct stat st;
	const char *rel;

	if (!cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)) ||
	    !cgroup2_path(path, sizeof(path)))
		return 0;
	root_len = strcmp(root, "/") ? strlen(root) : 0;
	if (strncmp(path, root, root_len) || (path[root_len] && path[root_len] != '/'))
		return 0;
	rel = path + root_len;
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	if (stat(dir, &st))
		return 0;
	return (uint64_t)st.st_ino;
}

uint64_t bpfrt_bpf_get_current_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5)
{
	uint64_t gen = gen_now();

	if (__builtin_expect(cur.cgroup_gen != gen, 0)) {
		gen = fill_begin();
		cur.cgroup_id = read_cgroup_id();
		stamp(&cur.cgroup_gen, gen);
	}
	return cur.cgroup_id;
}

/* ---- NUMA node -------------------------------------------------------------- */

/* The node of the CPU the thread runs on now (getcpu, a vDSO call), as
 * numa_node_id(); 0 where the kernel does not say. */
uint64_t bpfrt_bpf_get_numa_node_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5)
{
	unsigned int cpu, node = 0;

	if (getcpu(&cpu, &node))
		return 0;
	return node;
}
