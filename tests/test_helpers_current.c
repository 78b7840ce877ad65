/* The identity helpers' per-thread cache (helpers/current.c) and the
 * clock, NUMA and string helpers, run through programs in the interpreter
 * and the JIT: each cached answer is right in a new thread, in a fork
 * child, and after bpfrt_identity_changed(); what the cache does not track
 * by itself (credential changes, renames) is as documented. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"
#include "helpers/clock.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT };
static const char *const mode_names[] = { "interp", "jit" };
#define FOR_EACH_MODE(m) for (size_t m = 0; m < ARRAY_LEN(modes); m++)

/* Calls helper id with r1-r3 from an array in memory (a trusted raw load,
 * so plain pointers may stand for verified ones). */
static uint64_t call3(enum bpfrt_exec_mode mode, int32_t id, uint64_t a1, uint64_t a2,
		      uint64_t a3)
{
	const struct bpf_insn insns[] = {
		MOV64_REG(BPF_R6, BPF_R1),
		LDX(BPF_DW, BPF_R1, BPF_R6, 0),
		LDX(BPF_DW, BPF_R2, BPF_R6, 8),
		LDX(BPF_DW, BPF_R3, BPF_R6, 16),
		CALL_HELPER(id),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "current", .jit = mode == BPFRT_EXEC_JIT);
	uint64_t args[3] = { a1, a2, a3 };
	uint64_t r0 = 0xdeadbeef;
	struct bpfrt_prog *prog;
	int err = bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog);

	if (!err) {
		err = bpfrt_prog_run(prog, mode, (uintptr_t)args, sizeof(args), &r0);
		bpfrt_prog_free(prog);
	}
	if (err)
		tl_fail(__FILE__, __LINE__, "helper %d: %d %s", id, err, bpfrt_last_error());
	return r0;
}

#define CALL0(m, id) call3(modes[m], id, 0, 0, 0)

static uint64_t want_pid_tgid(void)
{
	return (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)gettid();
}

static uint64_t want_uid_gid(void)
{
	return (uint64_t)(uint32_t)getgid() << 32 | (uint32_t)getuid();
}

static void comm_of(size_t m, char out[16])
{
	memset(out, 0x55, 16);
	CHECK(call3(modes[m], BPF_FUNC_get_current_comm, (uintptr_t)out, 16, 0) == 0);
}

/* ---- pid/tgid -------------------------------------------------------------- */

TEST(pid_tgid_repeats_the_same_answer)
{
	FOR_EACH_MODE(m) {
		CHECK_EQ(CALL0(m, BPF_FUNC_get_current_pid_tgid), want_pid_tgid());
		CHECK_EQ(CALL0(m, BPF_FUNC_get_current_pid_tgid), want_pid_tgid());
	}
}

static void *thread_ids(void *arg)
{
	uint64_t *out = arg;

	out[0] = CALL0(0, BPF_FUNC_get_current_pid_tgid);
	out[1] = CALL0(1, BPF_FUNC_get_current_pid_tgid);
	out[2] = want_pid_tgid();
	return NULL;
}

TEST(a_thread_sees_its_own_tid)
{
	uint64_t ids[3] = { 0 };
	pthread_t t;

	CHECK_EQ(CALL0(1, BPF_FUNC_get_current_pid_tgid), want_pid_tgid()); /* cache filled */
	REQUIRE(pthread_create(&t, NULL, thread_ids, ids) == 0);
	pthread_join(t, NULL);
	CHECK_EQ(ids[0], ids[2]);
	CHECK_EQ(ids[1], ids[2]);
	CHECK_EQ(ids[2] >> 32, (uint64_t)getpid());
	CHECK((uint32_t)ids[2] != (uint32_t)gettid(), "thread tid %u is the main thread's",
	      (uint32_t)ids[2]);
	/* and the main thread's own answer is untouched */
	CHECK_EQ(CALL0(0, BPF_FUNC_get_current_pid_tgid), want_pid_tgid());
}

/* Child exit codes: 0 ok, 1+ the failed step. */
static int child_pid_checks(uint64_t parent_id)
{
	for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
		uint64_t id = CALL0(m, BPF_FUNC_get_current_pid_tgid);

		if (id == parent_id)
			return 1;
		if (id != want_pid_tgid())
			return 2;
	}
	return 0;
}

TEST(fork_child_sees_its_own_pid)
{
	uint64_t parent_id = CALL0(0, BPF_FUNC_get_current_pid_tgid);
	int status;
	pid_t pid;

	CHECK_EQ(CALL0(1, BPF_FUNC_get_current_pid_tgid), parent_id);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(child_pid_checks(parent_id));
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child: status %#x (1: the parent's pid/tgid, 2: not getpid/gettid)", status);
	/* a grandchild forked from a thread that never called the helper */
	CHECK_EQ(CALL0(0, BPF_FUNC_get_current_pid_tgid), parent_id);
}

/* ---- uid/gid ----------------------------------------------------------------- */

TEST(uid_gid_is_gid_then_uid)
{
	FOR_EACH_MODE(m) {
		CHECK_EQ(CALL0(m, BPF_FUNC_get_current_uid_gid), want_uid_gid());
		CHECK_EQ(CALL0(m, BPF_FUNC_get_current_uid_gid), want_uid_gid());
	}
}

/* The documented policy: a credential change is not seen until
 * bpfrt_identity_changed() (bpfrt cannot interpose setresuid), then every
 * thread's next call reads the new ids. Run in a child: it drops root. */
static int child_cred_checks(void)
{
	const uint64_t before = want_uid_gid();
	const uint64_t nobody = (uint64_t)65534 << 32 | 65534;

	if (CALL0(1, BPF_FUNC_get_current_uid_gid) != before)
		return 1;
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 2;
	if (CALL0(1, BPF_FUNC_get_current_uid_gid) != before)
		return 3; /* documented: not tracked by itself */
	bpfrt_identity_changed();
	for (size_t m = 0; m < ARRAY_LEN(modes); m++)
		if (CALL0(m, BPF_FUNC_get_current_uid_gid) != nobody)
			return 4;
	return 0;
}

TEST(uid_gid_after_setresuid_and_identity_changed)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP("needs root (the child drops to uid 65534)");
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(child_cred_checks());
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x (failed step)",
	      status);
}

/* ---- comm ----------------------------------------------------------------------- */

struct rename_ctx {
	char first[16], stale[16], renamed[16], other_thread[16];
	pthread_barrier_t named, seen;
};

static void *rename_thread(void *arg)
{
	struct rename_ctx *x = arg;

	prctl(PR_SET_NAME, "hc-first");
	comm_of(1, x->first);
	prctl(PR_SET_NAME, "hc-renamed");
	comm_of(1, x->stale);           /* documented: not seen by itself */
	bpfrt_identity_changed();
	comm_of(0, x->renamed);
	pthread_barrier_wait(&x->named);
	/* the main thread renames us with pthread_setname_np, then says so */
	pthread_barrier_wait(&x->seen);
	comm_of(1, x->other_thread);
	return NULL;
}

TEST(comm_rename_seen_after_identity_changed)
{
	static const char pad[16] = { 0 };
	struct rename_ctx x;
	pthread_t t;

	memset(&x, 0, sizeof(x));
	pthread_barrier_init(&x.named, NULL, 2);
	pthread_barrier_init(&x.seen, NULL, 2);
	REQUIRE(pthread_create(&t, NULL, rename_thread, &x) == 0);
	pthread_barrier_wait(&x.named);
	CHECK(pthread_setname_np(t, "hc-by-main") == 0);
	bpfrt_identity_changed();
	pthread_barrier_wait(&x.seen);
	pthread_join(t, NULL);
	CHECK(!strcmp(x.first, "hc-first"), "first: '%s'", x.first);
	CHECK(!memcmp(x.first + 9, pad, 7), "not NUL-padded");
	CHECK(!strcmp(x.stale, "hc-first"), "before bpfrt_identity_changed: '%s'", x.stale);
	CHECK(!strcmp(x.renamed, "hc-renamed"), "after: '%s'", x.renamed);
	CHECK(!strcmp(x.other_thread, "hc-by-main"), "renamed by another thread: '%s'",
	      x.other_thread);
	pthread_barrier_destroy(&x.named);
	pthread_barrier_destroy(&x.seen);
}

TEST(comm_cut_to_small_buffers)
{
	char buf[24];

	prctl(PR_SET_NAME, "abcdefghijklmno");
	bpfrt_identity_changed();
	FOR_EACH_MODE(m) {
		memset(buf, 0x55, sizeof(buf));
		CHECK(call3(modes[m], BPF_FUNC_get_current_comm, (uintptr_t)buf, 4, 0) == 0);
		CHECK(!strcmp(buf, "abc") && buf[4] == 0x55, "%s: size 4: '%.4s'",
		      mode_names[m], buf);
		memset(buf, 0x55, sizeof(buf));
		CHECK(call3(modes[m], BPF_FUNC_get_current_comm, (uintptr_t)buf, 24, 0) == 0);
		CHECK(!strcmp(buf, "abcdefghijklmno") && buf[23] == 0 && buf[16] == 0,
		      "%s: size 24", mode_names[m]);
		CHECK_EQ((int64_t)call3(modes[m], BPF_FUNC_get_current_comm, (uintptr_t)buf, 0, 0),
			 (int64_t)-EINVAL);
	}
}

/* ---- cgroup, NUMA node, clocks ------------------------------------------------ */

/* The test's own reading of the cgroup v2 directory: "0::PATH" under the
 * first cgroup2 mount whose root is "/". */
static int cgroup_dir_ino(uint64_t *ino)
{
	char line[4096], mnt[1024] = "", path[4096] = "", dir[5200];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	struct stat st;

	while (f && fgets(line, sizeof(line), f)) {
		char root[1024], m[1024];

		if (strstr(line, " - cgroup2 ") &&
		    sscanf(line, "%*s %*s %*s %1023s %1023s", root, m) == 2 && !strcmp(root, "/")) {
			snprintf(mnt, sizeof(mnt), "%s", m);
			break;
		}
	}
	if (f)
		fclose(f);
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "%s", line + 3);
		}
	if (f)
		fclose(f);
	if (!mnt[0] || !path[0])
		return -1;
	snprintf(dir, sizeof(dir), "%s%s", mnt, path);
	if (stat(dir, &st))
		return -1;
	*ino = st.st_ino;
	return 0;
}

TEST(cgroup_id_is_the_cgroup2_directory_inode)
{
	uint64_t ino;

	if (cgroup_dir_ino(&ino))
		SKIP("no cgroup2 mount with root / holding this process's cgroup");
	FOR_EACH_MODE(m)
		CHECK_EQ(CALL0(m, BPF_FUNC_get_current_cgroup_id), ino);
}

TEST(numa_node_is_the_current_cpus)
{
	cpu_set_t set, old;

	/* pinned, so the node cannot change between the two reads */
	REQUIRE(sched_getaffinity(0, sizeof(old), &old) == 0);
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
	FOR_EACH_MODE(m) {
		unsigned int cpu, node = 0;

		REQUIRE(getcpu(&cpu, &node) == 0);
		CHECK_EQ(CALL0(m, BPF_FUNC_get_numa_node_id), (uint64_t)node);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

static uint64_t coarse_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TEST(ktime_get_coarse_ns_is_the_coarse_clock)
{
	FOR_EACH_MODE(m) {
		uint64_t lo = coarse_now();
		uint64_t v = CALL0(m, BPF_FUNC_ktime_get_coarse_ns);
		uint64_t hi = coarse_now();

		CHECK(lo <= v && v <= hi, "%s: %llu outside [%llu, %llu]", mode_names[m],
		      (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
	}
}

static uint64_t tai_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_TAI, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TEST(ktime_get_tai_ns_is_clock_tai)
{
	FOR_EACH_MODE(m) {
		uint64_t lo = tai_now();
		uint64_t v = CALL0(m, BPF_FUNC_ktime_get_tai_ns);
		uint64_t hi = tai_now();

		CHECK(lo <= v && v <= hi, "%s: %llu outside [%llu, %llu]", mode_names[m],
		      (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
	}
}

/* A program calling a helper that names a kernel object is refused with
 * the helper's Linux name and why, before anything runs. */
TEST(kernel_only_helpers_refused_with_name_and_reason)
{
	static const struct {
		int32_t id;
		const char *msg;
	} cases[] = {
		{ 35, "bpf_get_current_task (35) is not available: there is no kernel task in "
		      "user space" },
		{ 175, "bpf_task_pt_regs (175) is not available: there is no kernel task" },
		{ 153, "bpf_per_cpu_ptr (153) is not available: there are no kernel objects" },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct bpf_insn insns[] = { MOV64_IMM(BPF_R1, 0), CALL_HELPER(cases[i].id),
						  EXIT() };
		BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "kernel_only",
			   .kind = BPFRT_PROG_RAW_TRACEPOINT);
		struct bpfrt_prog *prog = NULL;
		int err = bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog);

		CHECK_EQ(err, -EINVAL);
		CHECK(strstr(bpfrt_last_error(), cases[i].msg), "helper %d: '%s'", cases[i].id,
		      bpfrt_last_error());
		bpfrt_prog_free(prog);
	}
}

/* get_current_task_btf is verified as Linux's (a trusted task_struct, from
 * the program's BTF: verifier/kfuncs_kernel.c), for privileged loads only;
 * a program without BTF cannot type its result. */
TEST(current_task_btf_privileged_and_typed_only)
{
	const struct bpf_insn insns[] = { CALL_HELPER(158), MOV64_IMM(BPF_R0, 0), EXIT() };
	static const struct {
		uint32_t flags;
		const char *msg;
	} cases[] = {
		{ 0, "calling kernel functions are not allowed in unprivileged mode "
		     "(get_current_task_btf" },
		{ BPFRT_F_ALLOW_PTR_LEAKS, "returns a struct task_struct, which the program's BTF "
					   "does not describe" },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "current_task_btf",
			   .kind = BPFRT_PROG_RAW_TRACEPOINT, .flags = cases[i].flags);
		struct bpfrt_prog *prog = NULL;
		int err = bpfrt_prog_load(insns, ARRAY_LEN(insns), &opts, &prog);

		CHECK_EQ(err, -EACCES);
		CHECK(strstr(bpfrt_last_error(), cases[i].msg), "'%s'", bpfrt_last_error());
		bpfrt_prog_free(prog);
	}
}

TEST(jiffies64_counts_ticks_of_the_coarse_clock)
{
	uint64_t tick = bpfrt_jiffies_tick_ns();
	uint64_t hz = (1000000000ull + tick / 2) / tick;

	CHECK(hz >= 100 && hz <= 1000, "HZ %llu", (unsigned long long)hz);
	FOR_EACH_MODE(m) {
		uint64_t t0 = coarse_now(), j0 = CALL0(m, BPF_FUNC_jiffies64), t0b = coarse_now();
		struct timespec d = { 0, 50 * 1000 * 1000 };
		uint64_t t1, j1;

		nanosleep(&d, NULL);
		j1 = CALL0(m, BPF_FUNC_jiffies64);
		t1 = coarse_now();
		/* Linux's count starts at INITIAL_JIFFIES, 300 s before the
		 * 32-bit wrap */
		uint32_t ticks = (uint32_t)(j0 - (uint32_t)-(int32_t)(300 * hz));

		CHECK(ticks >= (uint32_t)(t0 / tick) && ticks <= (uint32_t)(t0b / tick),
		      "%s: %u jiffies after INITIAL_JIFFIES, the clock says %llu..%llu",
		      mode_names[m], ticks, (unsigned long long)(t0 / tick),
		      (unsigned long long)(t0b / tick));
		CHECK(j1 - j0 >= (t1 - t0) / tick - 1 && j1 - j0 <= (t1 - t0) / tick + 1,
		      "%s: %llu jiffies in %llu ns", mode_names[m],
		      (unsigned long long)(j1 - j0), (unsigned long long)(t1 - t0));
	}
}

/* ---- strncmp ---------------------------------------------------------------------- */

TEST(strncmp_sign_and_bound)
{
	static const struct {
		const char *s1;
		uint32_t n;
		const char *s2;
		int64_t want;
	} cases[] = {
		{ "hello", 6, "hello", 0 },
		{ "hello", 5, "hello", 0 },
		{ "help", 3, "hello", 0 },       /* only s1_sz bytes compared */
		{ "help", 4, "hello", 1 },
		{ "hela", 4, "hello", -1 },
		{ "\xff", 1, "a", 1 },           /* unsigned, and the sign only */
		{ "a", 2, "\xff", -1 },
		{ "", 1, "x", -1 },
		{ "abc", 0, "xyz", 0 },
	};

	FOR_EACH_MODE(m)
		for (size_t i = 0; i < ARRAY_LEN(cases); i++)
			CHECK_EQ((int64_t)call3(modes[m], BPF_FUNC_strncmp,
						(uintptr_t)cases[i].s1, cases[i].n,
						(uintptr_t)cases[i].s2), cases[i].want);
}

TEST(registered_with_linux_ids_and_prototypes)
{
	static const struct { uint32_t id; const char *name; } expect[] = {
		{ 15, "get_current_uid_gid" }, { 42, "get_numa_node_id" },
		{ 80, "get_current_cgroup_id" }, { 118, "jiffies64" },
		{ 160, "ktime_get_coarse_ns" }, { 182, "strncmp" }, { 208, "ktime_get_tai_ns" },
	};
	BPFRT_OPTS(bpfrt_helper_info, h);

	bpfrt_helpers_init();
	for (size_t i = 0; i < ARRAY_LEN(expect); i++) {
		REQUIRE(!bpfrt_helper_info(expect[i].id, &h), "helper %u missing", expect[i].id);
		CHECK(!strcmp(h.name, expect[i].name), "id %u is %s", expect[i].id, h.name);
		CHECK(h.ret == BPFRT_RET_INTEGER);
		if (expect[i].id != BPF_FUNC_strncmp)
			CHECK(h.args[0] == BPFRT_ARG_NONE, "%s takes no arguments", h.name);
	}
	REQUIRE(!bpfrt_helper_info(BPF_FUNC_strncmp, &h));
	CHECK(h.args[0] == BPFRT_ARG_PTR_TO_MEM && h.args[1] == BPFRT_ARG_CONST_SIZE &&
	      h.args[2] == BPFRT_ARG_PTR_TO_CONST_STR && h.args[3] == BPFRT_ARG_NONE);
}

/* probe_write_user writes the process's memory and never faults: an
 * inaccessible or read-only destination is -EFAULT. */
TEST(probe_write_user_writes_or_fails_with_efault)
{
	static const char ro[8] = "rodata!";
	const uint64_t src = 0x1122334455667788ull;
	/* kept mapped but inaccessible: an noaccess range could be mapped
	 * again meanwhile (the sanitizer's allocator does) */
	void *noaccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(noaccess != MAP_FAILED);
	FOR_EACH_MODE(m) {
		uint64_t dst = 0;

		CHECK_EQ(call3(modes[m], BPF_FUNC_probe_write_user, (uintptr_t)&dst,
			       (uintptr_t)&src, 8), 0);
		CHECK_EQ(dst, src);
		CHECK_EQ((int64_t)call3(modes[m], BPF_FUNC_probe_write_user, (uintptr_t)noaccess,
					(uintptr_t)&src, 8), (int64_t)-EFAULT);
		CHECK_EQ((int64_t)call3(modes[m], BPF_FUNC_probe_write_user, (uintptr_t)ro,
					(uintptr_t)&src, 8), (int64_t)-EFAULT);
		CHECK(!memcmp(ro, "rodata!", 8), "read-only memory changed");
	}
	munmap(noaccess, 4096);
}
