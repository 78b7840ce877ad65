/* Linux helpers, trace buffer, bpf_loop callbacks and tail calls, run
 * through programs in the interpreter and (where it supports the feature)
 * the JIT. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"
#include "core/extable.h"
#include "core/run.h"
#include "helpers/callback.h"
#include "helpers/helpers.h"
#include "helpers/probe.h"
#include "helpers/trace.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LDDW_FUNC(DST, REL) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, DST, BPF_PSEUDO_FUNC, 0, REL), INSN(0, 0, 0, 0, 0)

static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT };
static const char *const mode_names[] = { "interp", "jit" };
#define FOR_EACH_MODE(m) for (size_t m = 0; m < ARRAY_LEN(modes); m++)

static int load(const struct bpf_insn *insns, size_t cnt, enum bpfrt_exec_mode mode,
		struct bpfrt_prog **prog)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "helpers", .jit = mode == BPFRT_EXEC_JIT);

	return bpfrt_prog_load(insns, cnt, &opts, prog);
}

/* Loads, runs once, frees. Returns the load or run error. */
static int run(const struct bpf_insn *insns, size_t cnt, enum bpfrt_exec_mode mode,
	       uint64_t arg1, uint64_t arg2, uint64_t *r0)
{
	struct bpfrt_prog *prog;
	int err = load(insns, cnt, mode, &prog);

	if (err)
		return err;
	err = bpfrt_prog_run(prog, mode, arg1, arg2, r0);
	bpfrt_prog_free(prog);
	return err;
}

#define CALL(m, id, ...) call_helper(modes[m], id, __VA_ARGS__)

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- registration ---------------------------------------------------------- */

/* The conformance runner registers its own helper 5 (ktime_get_ns's id)
 * before any load: the defaults must leave it alone. A child process
 * starts from a registry without defaults (unless this binary already
 * loaded something before forking, then the case is skipped). */
static uint64_t return_r1_plus_1(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5)
{
	return r1 + 1;
}

TEST(defaults_leave_registered_ids_alone)
{
	pid_t pid = fork();
	int status;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		static const struct bpfrt_helper mine = {
			.name = "mine", .fn = return_r1_plus_1, .args = { BPFRT_ARG_ANYTHING },
		};
		const struct bpf_insn insns[] = { CALL_HELPER(5), EXIT() };
		BPFRT_OPTS(bpfrt_helper_info, h);
		uint64_t r0 = 0;

		if (!bpfrt_helper_info(BPF_FUNC_map_lookup_elem, &h))
			_exit(77);
		if (bpfrt_helper_register(5, &mine))
			_exit(1);
		if (run(insns, ARRAY_LEN(insns), BPFRT_EXEC_INTERP, 41, 0, &r0) || r0 != 42)
			_exit(2);
		if (bpfrt_helper_info(BPF_FUNC_trace_printk, &h) || strcmp(h.name, "trace_printk"))
			_exit(3);
		if (bpfrt_helper_info(5, &h) || strcmp(h.name, "mine"))
			_exit(4);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(WIFEXITED(status), "child died: status %#x", status);
	if (WEXITSTATUS(status) == 77)
		SKIP("defaults were registered before the fork");
	CHECK(WEXITSTATUS(status) == 0, "child failed step %d", WEXITSTATUS(status));
}

TEST(defaults_registered_with_linux_ids_and_prototypes)
{
	static const struct { int id; const char *name; } expect[] = {
		{ 1, "map_lookup_elem" }, { 2, "map_update_elem" }, { 3, "map_delete_elem" },
		{ 4, "probe_read" }, { 5, "ktime_get_ns" }, { 6, "trace_printk" },
		{ 7, "get_prandom_u32" }, { 8, "get_smp_processor_id" }, { 12, "tail_call" },
		{ 14, "get_current_pid_tgid" }, { 16, "get_current_comm" },
		{ 45, "probe_read_str" }, { 112, "probe_read_user" },
		{ 113, "probe_read_kernel" }, { 114, "probe_read_user_str" },
		{ 115, "probe_read_kernel_str" }, { 125, "ktime_get_boot_ns" },
		{ 130, "ringbuf_output" }, { 131, "ringbuf_reserve" }, { 132, "ringbuf_submit" },
		{ 133, "ringbuf_discard" }, { 134, "ringbuf_query" }, { 181, "loop" },
	};
	BPFRT_OPTS(bpfrt_helper_info, h);

	bpfrt_helpers_init();
	bpfrt_helpers_init(); /* idempotent */
	for (size_t i = 0; i < ARRAY_LEN(expect); i++) {
		REQUIRE(!bpfrt_helper_info((uint32_t)expect[i].id, &h), "helper %d missing",
			expect[i].id);
		CHECK(!strcmp(h.name, expect[i].name), "id %d is %s", expect[i].id, h.name);
	}
	REQUIRE(!bpfrt_helper_info(BPF_FUNC_map_lookup_elem, &h));
	CHECK(h.ret == BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL);
	CHECK(h.args[0] == BPFRT_ARG_CONST_MAP_PTR && h.args[1] == BPFRT_ARG_PTR_TO_MAP_KEY &&
	      h.args[2] == BPFRT_ARG_NONE);
	REQUIRE(!bpfrt_helper_info(BPF_FUNC_ktime_get_ns, &h));
	CHECK(h.args[0] == BPFRT_ARG_NONE);
	/* trace_printk's optional arguments are not declared (as Linux) */
	REQUIRE(!bpfrt_helper_info(BPF_FUNC_trace_printk, &h));
	CHECK(h.args[1] == BPFRT_ARG_CONST_SIZE && h.args[2] == BPFRT_ARG_NONE);
	REQUIRE(!bpfrt_helper_info(BPF_FUNC_loop, &h));
	CHECK(h.args[1] == BPFRT_ARG_PTR_TO_FUNC);
	REQUIRE(!bpfrt_helper_info(BPF_FUNC_tail_call, &h));
	CHECK(h.fn == bpfrt_helper_tail_call);
	/* the deprecated live-entry form still answers the same */
	CHECK(bpfrt_helper_get(BPF_FUNC_tail_call)->fn == bpfrt_helper_tail_call);
	CHECK(!bpfrt_helper_get(BPFRT_MAX_HELPER_ID));
}

static uint64_t not_a_tracing_helper(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5)
{
	return 1;
}

/* The host's tracing helpers are defaults of the engine's registry, added
 * before main: a program calling one loads and runs before anything was
 * ever attached (get_attach_cookie is 0 outside an attached run), and the
 * registry takes no second set. */
TEST(tracing_helpers_are_defaults_before_any_attach)
{
	static const struct bpfrt_helper_default other[] = {
		{ BPF_FUNC_get_attach_cookie, { "other", not_a_tracing_helper } },
	};
	const struct bpf_insn insns[] = { CALL_HELPER(BPF_FUNC_get_attach_cookie), EXIT() };
	BPFRT_OPTS(bpfrt_helper_info, h);
	uint64_t r0 = 1;

	CHECK(run(insns, ARRAY_LEN(insns), BPFRT_EXEC_INTERP, 0, 0, &r0) == 0, "%s",
	      bpfrt_last_error());
	CHECK(r0 == 0, "cookie %llu outside an attached run", (unsigned long long)r0);
	CHECK(!bpfrt_helper_info(BPF_FUNC_get_func_ip, &h) && !strcmp(h.name, "get_func_ip"));
	CHECK(bpfrt_helpers_add_defaults(other, ARRAY_LEN(other)) == -EBUSY);
	CHECK(strstr(bpfrt_last_error(), "another set"), "%s", bpfrt_last_error());
	CHECK(!bpfrt_helper_info(BPF_FUNC_get_attach_cookie, &h) && h.fn != not_a_tracing_helper);
}

static uint64_t helper_a(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return 'a';
}

static uint64_t helper_b(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return 'b';
}

#define REREGISTERED_ID (BPFRT_KFUNC_ID_BASE - 1)

static void *reregister_loop(void *stop)
{
	static const struct bpfrt_helper a = { .name = "a", .fn = helper_a,
					       .args = { BPFRT_ARG_ANYTHING } };
	static const struct bpfrt_helper b = { .name = "b", .fn = helper_b,
					       .ret = BPFRT_RET_VOID };

	for (unsigned i = 0; !__atomic_load_n((bool *)stop, __ATOMIC_RELAXED); i++)
		bpfrt_helper_register(REREGISTERED_ID, i & 1 ? &b : &a);
	return NULL;
}

/* bpfrt_helper_info copies an entry under the registry's lock: while the
 * id is registered again and again as one helper or another, every copy
 * is one of the two whole, never a mix of them. */
TEST(helper_info_copy_is_never_torn_by_reregistration)
{
	static const struct bpfrt_helper first = { .name = "a", .fn = helper_a,
						   .args = { BPFRT_ARG_ANYTHING } };
	BPFRT_OPTS(bpfrt_helper_info, h);
	bool stop = false;
	unsigned torn = 0, seen_b = 0;
	pthread_t thread;

	REQUIRE(bpfrt_helper_register(REREGISTERED_ID, &first) == 0, "%s", bpfrt_last_error());
	REQUIRE(pthread_create(&thread, NULL, reregister_loop, &stop) == 0);
	for (int i = 0; i < 200000; i++) {
		bool is_a, is_b;

		if (bpfrt_helper_info(REREGISTERED_ID, &h))
			continue;
		is_a = h.fn == helper_a && !strcmp(h.name, "a") && h.ret == BPFRT_RET_INTEGER &&
		       h.args[0] == BPFRT_ARG_ANYTHING;
		is_b = h.fn == helper_b && !strcmp(h.name, "b") && h.ret == BPFRT_RET_VOID &&
		       h.args[0] == BPFRT_ARG_NONE;
		torn += !is_a && !is_b;
		seen_b += is_b;
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	CHECK(torn == 0, "%u copies mixed two registrations", torn);
	CHECK(bpfrt_helper_unregister(REREGISTERED_ID) == 0);
	CHECK(bpfrt_helper_info(REREGISTERED_ID, &h) == -ENOENT);
	if (!seen_b)
		SKIP("the registering thread never ran during the copies");
}

/* A program that calls ktime_get_ns with only r1/r2 defined must load:
 * helpers without arguments read none. */
TEST(argumentless_helpers_read_no_registers)
{
	const struct bpf_insn insns[] = { CALL_HELPER(BPF_FUNC_get_prandom_u32),
					  CALL_HELPER(BPF_FUNC_ktime_get_ns), EXIT() };
	uint64_t r0;

	CHECK(run(insns, ARRAY_LEN(insns), BPFRT_EXEC_INTERP, 0, 0, &r0) == 0, "%s",
	      bpfrt_last_error());
}

/* ---- time, identity, randomness ------------------------------------------ */

TEST(ktime_helpers)
{
	FOR_EACH_MODE(m) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		uint64_t t = CALL(m, BPF_FUNC_ktime_get_ns, 0, 0, 0, 0, 0);
		uint64_t t1 = now_ns(CLOCK_MONOTONIC);
		uint64_t b0, b, b1;

		CHECK(t0 <= t && t <= t1, "%s: %llu not in [%llu, %llu]", mode_names[m],
		      (unsigned long long)t, (unsigned long long)t0, (unsigned long long)t1);
		b0 = now_ns(CLOCK_BOOTTIME);
		b = CALL(m, BPF_FUNC_ktime_get_boot_ns, 0, 0, 0, 0, 0);
		b1 = now_ns(CLOCK_BOOTTIME);
		CHECK(b0 <= b && b <= b1, "%s: boot %llu", mode_names[m], (unsigned long long)b);
	}
}

TEST(prandom_is_32_bit_and_varies)
{
	FOR_EACH_MODE(m) {
		uint64_t seen[64];
		unsigned distinct = 0;
		uint64_t or_all = 0;

		for (int i = 0; i < 64; i++) {
			uint64_t v = CALL(m, BPF_FUNC_get_prandom_u32, 0, 0, 0, 0, 0);
			bool dup = false;

			CHECK(v <= UINT32_MAX, "%s: %#llx", mode_names[m], (unsigned long long)v);
			for (int j = 0; j < i; j++)
				dup |= seen[j] == v;
			distinct += !dup;
			seen[i] = v;
			or_all |= v;
		}
		CHECK(distinct >= 60, "%s: only %u distinct", mode_names[m], distinct);
		CHECK(or_all >> 31, "%s: top bit never set", mode_names[m]);
	}
}

TEST(smp_processor_id_pid_tgid)
{
	FOR_EACH_MODE(m) {
		uint64_t cpu = CALL(m, BPF_FUNC_get_smp_processor_id, 0, 0, 0, 0, 0);
		uint64_t id = CALL(m, BPF_FUNC_get_current_pid_tgid, 0, 0, 0, 0, 0);

		CHECK(cpu < (uint64_t)bpfrt_num_possible_cpus(), "%s: cpu %llu", mode_names[m],
		      (unsigned long long)cpu);
		CHECK(id == ((uint64_t)getpid() << 32 | (uint32_t)gettid()), "%s: %#llx",
		      mode_names[m], (unsigned long long)id);
	}
}

TEST(current_comm_padded_and_cut)
{
	char old[16] = { 0 };

	prctl(PR_GET_NAME, old);
	prctl(PR_SET_NAME, "bpfrt-comm");
	FOR_EACH_MODE(m) {
		char buf[24];

		memset(buf, 0x55, sizeof(buf));
		CHECK(CALL(m, BPF_FUNC_get_current_comm, (uintptr_t)buf, 16, 0, 0, 0) == 0);
		CHECK(!strcmp(buf, "bpfrt-comm"), "%s: '%s'", mode_names[m], buf);
		CHECK(buf[15] == 0 && buf[11] == 0, "%s: not zero-padded", mode_names[m]);
		CHECK((uint8_t)buf[16] == 0x55, "%s: wrote past size", mode_names[m]);
		memset(buf, 0x55, sizeof(buf));
		CHECK(CALL(m, BPF_FUNC_get_current_comm, (uintptr_t)buf, 4, 0, 0, 0) == 0);
		CHECK(!memcmp(buf, "bpf", 4) && (uint8_t)buf[4] == 0x55, "%s: cut", mode_names[m]);
	}
	prctl(PR_SET_NAME, old);
}

/* ---- probe_read ----------------------------------------------------------- */

/* A readable page followed by an unmapped one. */
static char *guarded_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p + pg, (size_t)pg);
	return p;
}

TEST(probe_read_copies_or_faults_with_zeroed_destination)
{
	static const int ids[] = { BPF_FUNC_probe_read, BPF_FUNC_probe_read_user,
				   BPF_FUNC_probe_read_kernel };
	long pg = sysconf(_SC_PAGESIZE);
	char *page = guarded_page();
	const char src[16] = "0123456789abcde";

	REQUIRE(page);
	memset(page, 'x', (size_t)pg);
	FOR_EACH_MODE(m) {
		for (size_t k = 0; k < ARRAY_LEN(ids); k++) {
			char dst[16];
			int id = ids[k];

			memset(dst, 0xaa, sizeof(dst));
			CHECK(CALL(m, id, (uintptr_t)dst, 16, (uintptr_t)src, 0, 0) == 0);
			CHECK(!memcmp(dst, src, 16), "%s id %d", mode_names[m], id);

			static const uintptr_t bad[] = { 0, 8, 0xffff800000000000ull };
			for (size_t b = 0; b < ARRAY_LEN(bad); b++) {
				memset(dst, 0xaa, sizeof(dst));
				CHECK((int64_t)CALL(m, id, (uintptr_t)dst, 16, bad[b], 0, 0) == -EFAULT,
				      "%s id %d addr %#lx", mode_names[m], id, (unsigned long)bad[b]);
				for (int i = 0; i < 16; i++)
					CHECK(dst[i] == 0, "%s id %d: byte %d not zeroed",
					      mode_names[m], id, i);
			}
			/* the last 8 bytes of the page are readable, the rest not */
			memset(dst, 0xaa, sizeof(dst));
			CHECK((int64_t)CALL(m, id, (uintptr_t)dst, 16, (uintptr_t)(page + pg - 8),
					    0, 0) == -EFAULT, "%s id %d straddling", mode_names[m], id);
			CHECK(dst[0] == 0 && dst[7] == 0 && dst[15] == 0);
			memset(dst, 0xaa, sizeof(dst));
			CHECK(CALL(m, id, (uintptr_t)dst, 8, (uintptr_t)(page + pg - 8), 0, 0) == 0);
			CHECK(!memcmp(dst, "xxxxxxxx", 8) && (uint8_t)dst[8] == 0xaa);
			/* size 0: nothing read, even from NULL */
			CHECK(CALL(m, id, (uintptr_t)dst, 0, 0, 0, 0) == 0);
		}
	}
	munmap(page, (size_t)pg);
}

TEST(probe_read_str_lengths_and_faults)
{
	static const int ids[] = { BPF_FUNC_probe_read_str, BPF_FUNC_probe_read_user_str,
				   BPF_FUNC_probe_read_kernel_str };
	long pg = sysconf(_SC_PAGESIZE);
	char *page = guarded_page();

	REQUIRE(page);
	memset(page, 'y', (size_t)pg);
	/* "end" ends exactly at the page end; "run" runs into the hole */
	memcpy(page + pg - 4, "end", 4);
	FOR_EACH_MODE(m) {
		for (size_t k = 0; k < ARRAY_LEN(ids); k++) {
			int id = ids[k];
			char dst[16];

			memset(dst, 0xaa, sizeof(dst));
			CHECK(CALL(m, id, (uintptr_t)dst, 16, (uintptr_t)"hello", 0, 0) == 6,
			      "%s id %d", mode_names[m], id);
			/* NUL-padded to size: the verifier counts all 16 as written */
			CHECK(!strcmp(dst, "hello"));
			for (int i = 5; i < 16; i++)
				CHECK(dst[i] == 0, "%s id %d: byte %d after the string", mode_names[m],
				      id, i);
			/* cut: size - 1 bytes and a NUL, returns size */
			memset(dst, 0xaa, sizeof(dst));
			CHECK(CALL(m, id, (uintptr_t)dst, 4, (uintptr_t)"hello", 0, 0) == 4);
			CHECK(!strcmp(dst, "hel") && (uint8_t)dst[4] == 0xaa);
			/* empty string */
			CHECK(CALL(m, id, (uintptr_t)dst, 16, (uintptr_t)"", 0, 0) == 1 && !dst[0]);
			/* bad address: -EFAULT, destination zeroed */
			memset(dst, 0xaa, sizeof(dst));
			CHECK((int64_t)CALL(m, id, (uintptr_t)dst, 16, 16, 0, 0) == -EFAULT);
			for (int i = 0; i < 16; i++)
				CHECK(dst[i] == 0, "%s id %d: byte %d", mode_names[m], id, i);
			/* a string ending right before the hole is fine */
			CHECK(CALL(m, id, (uintptr_t)dst, 16, (uintptr_t)(page + pg - 4), 0, 0) == 4);
			CHECK(!strcmp(dst, "end"));
			/* one without a NUL before the hole faults */
			page[pg - 1] = 'z';
			memset(dst, 0xaa, sizeof(dst));
			CHECK((int64_t)CALL(m, id, (uintptr_t)dst, 16, (uintptr_t)(page + pg - 8),
					    0, 0) == -EFAULT, "%s id %d into hole", mode_names[m], id);
			CHECK(dst[0] == 0 && dst[15] == 0);
			/* ... unless the size limit comes first */
			CHECK(CALL(m, id, (uintptr_t)dst, 3, (uintptr_t)(page + pg - 8), 0, 0) == 3);
			CHECK(!strcmp(dst, "yy"));
			CHECK(CALL(m, id, (uintptr_t)dst, 0, 0, 0, 0) == 0);
			page[pg - 1] = 0;
		}
	}
	munmap(page, (size_t)pg);
}

/* The two read paths side by side, called directly: the plain copy with
 * fault-safe loads (bpfrt_probe_read, once the host's fault handler is in
 * place, as it is in this binary) and the kernel-copy fallback
 * (process_vm_readv or a pipe). Each case is checked against both. */
struct read_path {
	const char *name;
	long (*read)(void *dst, const void *src, size_t n);
	long (*read_str)(void *dst, const void *src, size_t size);
};

static const struct read_path read_paths[] = {
	{ "copy", bpfrt_probe_read, bpfrt_probe_read_str },
	{ "syscall", bpfrt_probe_read_syscall, bpfrt_probe_read_str_syscall },
};

static bool zeroed(const char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Counts failed checks (the seccomp child has no CHECK output of its own
 * to give, only an exit status). */
#define READ_CHECK(cond, ...) \
	do { if (!(cond)) { bad++; tl_fail(__FILE__, __LINE__, __VA_ARGS__); } } while (0)

static int check_read_path(const struct read_path *rp)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *page = guarded_page();
	char src[200], dst[200];
	int bad = 0;

	if (!page)
		return 1;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)(i * 7 + 1);
	/* every alignment of source and destination, lengths around a word */
	for (size_t so = 0; so < 8; so++)
		for (size_t d = 0; d < 8; d++)
			for (size_t n = 0; n <= 40; n++) {
				memset(dst, 0x55, sizeof(dst));
				READ_CHECK(rp->read(dst + d, src + so, n) == 0, "%s so %zu d %zu n %zu",
					   rp->name, so, d, n);
				READ_CHECK(!memcmp(dst + d, src + so, n) && (uint8_t)dst[d + n] == 0x55 &&
					   (d == 0 || (uint8_t)dst[d - 1] == 0x55),
					   "%s so %zu d %zu n %zu: copy", rp->name, so, d, n);
			}
	memset(page, 'x', (size_t)pg);
	/* NULL, a low address, unmapped, non-canonical or kernel: -EFAULT,
	 * all of dst zeroed */
	static const uintptr_t bad_src[] = { 0, 8, 4095, 0xffff800000000000ull, ~(uintptr_t)7 };
	for (size_t b = 0; b < ARRAY_LEN(bad_src); b++)
		for (size_t n = 1; n <= 17; n += 8) {
			memset(dst, 0x55, sizeof(dst));
			READ_CHECK(rp->read(dst, (const void *)bad_src[b], n) == -EFAULT,
				   "%s %#lx n %zu", rp->name, (unsigned long)bad_src[b], n);
			READ_CHECK(zeroed(dst, n) && (uint8_t)dst[n] == 0x55, "%s %#lx n %zu: dst",
				   rp->name, (unsigned long)bad_src[b], n);
		}
	READ_CHECK(rp->read(dst, page + pg, 8) == -EFAULT, "%s unmapped", rp->name);
	/* a page boundary with the second page unmapped: the bytes before it
	 * are readable, the read as a whole is not: -EFAULT, dst zeroed */
	for (size_t before = 1; before <= 9; before++) {
		memset(dst, 0x55, sizeof(dst));
		READ_CHECK(rp->read(dst, page + pg - before, 24) == -EFAULT, "%s straddle %zu",
			   rp->name, before);
		READ_CHECK(zeroed(dst, 24) && (uint8_t)dst[24] == 0x55, "%s straddle %zu: dst",
			   rp->name, before);
		/* up to the boundary exactly: fine */
		READ_CHECK(rp->read(dst, page + pg - before, before) == 0 &&
			   !memcmp(dst, "xxxxxxxxx", before), "%s to the edge %zu", rp->name, before);
	}
	READ_CHECK(rp->read(dst, NULL, 0) == 0, "%s size 0", rp->name);

	/* strings */
	memset(dst, 0x55, sizeof(dst));
	READ_CHECK(rp->read_str(dst, "hello", 16) == 6 && !strcmp(dst, "hello") &&
		   zeroed(dst + 5, 11) && (uint8_t)dst[16] == 0x55, "%s str", rp->name);
	/* cut: size - 1 bytes and a NUL, returns size; nothing written past */
	memset(dst, 0x55, sizeof(dst));
	READ_CHECK(rp->read_str(dst, "hello", 5) == 5 && !strcmp(dst, "hell") &&
		   (uint8_t)dst[5] == 0x55, "%s str cut", rp->name);
	/* a string of exactly size - 1 characters: its NUL fits */
	READ_CHECK(rp->read_str(dst, "hello", 6) == 6 && !strcmp(dst, "hello"), "%s fits", rp->name);
	READ_CHECK(rp->read_str(dst, "hello", 1) == 1 && dst[0] == 0, "%s size 1", rp->name);
	READ_CHECK(rp->read_str(dst, "", 16) == 1 && zeroed(dst, 16), "%s empty", rp->name);
	/* bytes after the NUL are not copied (dst is padded with zeros) */
	READ_CHECK(rp->read_str(dst, "ab\0cd", 8) == 3 && zeroed(dst + 2, 6), "%s after NUL",
		   rp->name);
	READ_CHECK(rp->read_str(dst, NULL, 0) == 0, "%s str size 0", rp->name);
	for (size_t b = 0; b < ARRAY_LEN(bad_src); b++) {
		memset(dst, 0x55, sizeof(dst));
		READ_CHECK(rp->read_str(dst, (const void *)bad_src[b], 16) == -EFAULT &&
			   zeroed(dst, 16) && (uint8_t)dst[16] == 0x55, "%s str %#lx", rp->name,
			   (unsigned long)bad_src[b]);
	}
	/* a string ending right before the hole, at every distance */
	for (size_t len = 0; len < 9; len++) {
		memset(page + pg - 9, 'y', 9);
		page[pg - 1] = 0;
		memset(dst, 0x55, sizeof(dst));
		READ_CHECK(rp->read_str(dst, page + pg - 1 - len, 32) == (long)len + 1 &&
			   strlen(dst) == len && zeroed(dst + len, 32 - len), "%s str end %zu",
			   rp->name, len);
	}
	/* one that runs into the hole faults, unless the size limit comes
	 * first; as Linux, the size-th byte is read (a cut string's last
	 * byte, then replaced by the NUL) */
	page[pg - 1] = 'z';
	memset(dst, 0x55, sizeof(dst));
	READ_CHECK(rp->read_str(dst, page + pg - 8, 16) == -EFAULT && zeroed(dst, 16) &&
		   (uint8_t)dst[16] == 0x55, "%s str into the hole", rp->name);
	READ_CHECK(rp->read_str(dst, page + pg - 8, 8) == 8 && !memcmp(dst, "yyyyyyy", 8),
		   "%s str cut at the hole", rp->name);
	READ_CHECK(rp->read_str(dst, page + pg - 8, 9) == -EFAULT && zeroed(dst, 9),
		   "%s str cut one past the hole", rp->name);
	munmap(page, (size_t)pg);
	return bad;
}

TEST(probe_read_paths_agree)
{
	REQUIRE(bpfrt_extable_ready(), "the host's fault handler is not installed");
	for (size_t i = 0; i < ARRAY_LEN(read_paths); i++)
		CHECK_EQ(check_read_path(&read_paths[i]), 0, "%s", read_paths[i].name);
}

/* With process_vm_readv and pipe2 refused by a seccomp filter, the
 * kernel-copy path cannot read anything: the copy path still reads good
 * memory and gets -EFAULT for bad memory, from the interpreter and the
 * JIT too, so it makes no system call (the fault's signal and sigreturn
 * aside). The child's exit status: 0, 77 no seccomp here (qemu-user has
 * none), else the failed checks. */
static int reads_under_seccomp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pipe2, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog fp = { .len = ARRAY_LEN(f), .filter = f };
	char src[16] = "0123456789abcde", dst[16];
	int bad = 0;

	if (!bpfrt_extable_ready())
		return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
		return 77;
	if (bpfrt_probe_read_syscall(dst, src, 16) != -EFAULT)
		return 2; /* the filter did not take */
	bad += check_read_path(&read_paths[0]);
	FOR_EACH_MODE(m) {
		memset(dst, 0x55, sizeof(dst));
		READ_CHECK(CALL(m, BPF_FUNC_probe_read_kernel, (uintptr_t)dst, 16, (uintptr_t)src, 0,
				0) == 0 && !memcmp(dst, src, 16), "%s", mode_names[m]);
		READ_CHECK((int64_t)CALL(m, BPF_FUNC_probe_read_user, (uintptr_t)dst, 16, 0, 0, 0) ==
			   -EFAULT && zeroed(dst, 16), "%s NULL", mode_names[m]);
		READ_CHECK(CALL(m, BPF_FUNC_probe_read_user_str, (uintptr_t)dst, 16,
				(uintptr_t)"hi", 0, 0) == 3 && !strcmp(dst, "hi"), "%s str",
			   mode_names[m]);
	}
	return bad > 60 ? 60 : bad + (bad ? 3 : 0);
}

TEST(probe_read_makes_no_system_call)
{
	int status, code = tl_exit_code_in_child(reads_under_seccomp, &status);

	REQUIRE(code >= 0, "child status %#x", status);
	if (code == 77)
		SKIP("no seccomp filters here");
	CHECK_EQ(code, 0, "child: 1 no handler, 2 filter not in force, else 3 + failed checks");
}

/* A host whose fault handler is not installed (here: none handed down,
 * in a fresh process of this binary, before anything asked for it): the
 * reads go through the kernel and still pass every case, from C and from
 * programs in the interpreter and the JIT. */
TEST(probe_read_without_fault_handler_child)
{
	char src[16] = "0123456789abcde", dst[16];

	if (!getenv("BPFRT_TEST_NO_FAULT_HANDLER"))
		SKIP("run by probe_read_falls_back_without_the_fault_handler");
	bpfrt_extable_set_host(NULL);
	REQUIRE(!bpfrt_extable_ready(), "a handler is installed");
	CHECK_EQ(check_read_path(&read_paths[0]), 0);
	FOR_EACH_MODE(m) {
		memset(dst, 0x55, sizeof(dst));
		CHECK(CALL(m, BPF_FUNC_probe_read_kernel, (uintptr_t)dst, 16, (uintptr_t)src, 0, 0) ==
		      0 && !memcmp(dst, src, 16), "%s", mode_names[m]);
		CHECK((int64_t)CALL(m, BPF_FUNC_probe_read_user, (uintptr_t)dst, 16, 8, 0, 0) ==
		      -EFAULT && zeroed(dst, 16), "%s bad", mode_names[m]);
		CHECK(CALL(m, BPF_FUNC_probe_read_user_str, (uintptr_t)dst, 16, (uintptr_t)"hi", 0,
			   0) == 3 && !strcmp(dst, "hi"), "%s str", mode_names[m]);
	}
}

TEST(probe_read_falls_back_without_the_fault_handler)
{
	char out[4096];
	int status;

	if (getenv("BPFRT_TEST_NO_FAULT_HANDLER"))
		SKIP("already the child");
	status = tl_run_self_with_env("BPFRT_TEST_NO_FAULT_HANDLER", "1",
				      "probe_read_without_fault_handler_child", out, sizeof(out));
	CHECK(tl_child_passed(status, out, "probe_read_without_fault_handler_child"),
	      "status %#x: %s", status, out);
}

/* bpf_snprintf's buffer is an uninitialised-memory argument: every byte
 * of it is written, the string NUL-padded and the whole buffer zeroed on
 * an error, so nothing the stack held before stays readable. */
TEST(snprintf_pads_buffer_and_zeroes_it_on_error)
{
	FOR_EACH_MODE(m) {
		char dst[16];

		memset(dst, 0xaa, sizeof(dst));
		CHECK(CALL(m, BPF_FUNC_snprintf, (uintptr_t)dst, 16, (uintptr_t)"hi", 0, 0) == 3,
		      "%s", mode_names[m]);
		CHECK(!strcmp(dst, "hi"));
		for (int i = 2; i < 16; i++)
			CHECK(dst[i] == 0, "%s: byte %d after the string", mode_names[m], i);
		/* data_len not a multiple of 8: -EINVAL */
		memset(dst, 0xaa, sizeof(dst));
		CHECK((int64_t)CALL(m, BPF_FUNC_snprintf, (uintptr_t)dst, 16, (uintptr_t)"hi",
				    (uintptr_t)dst, 3) == -EINVAL, "%s", mode_names[m]);
		for (int i = 0; i < 16; i++)
			CHECK(dst[i] == 0, "%s: byte %d after an error", mode_names[m], i);
	}
}

/* ---- trace_printk --------------------------------------------------------- */

static long fmt3(char *out, size_t size, const char *fmt, uint64_t a, uint64_t b, uint64_t c)
{
	const uint64_t args[3] = { a, b, c };

	return bpfrt_trace_format(out, size, fmt, (uint32_t)strlen(fmt) + 1, args, 3);
}

#define CHECK_FMT(expect, fmt, a, b, c) do {                                   \
	char out_[BPFRT_TRACE_MSG_MAX];                                        \
	long n_ = fmt3(out_, sizeof(out_), fmt, a, b, c);                      \
	CHECK(n_ == (long)strlen(expect) && !strcmp(out_, expect),             \
	      "format '%s': got %ld '%s', want '%s'", fmt, n_, out_, expect);  \
} while (0)

#define CHECK_FMT_INVALID(fmt) do {                                            \
	char out_[64];                                                         \
	long n_ = fmt3(out_, sizeof(out_), fmt, 1, 2, 3);                      \
	CHECK(n_ == -EINVAL, "format '%s': %ld '%s'", fmt, n_, out_);          \
} while (0)

TEST(trace_format_linux_subset)
{
	const char *str = "str";
	char pbuf[64];

	CHECK_FMT("plain", "plain", 0, 0, 0);
	CHECK_FMT("-1 -1 4294967295", "%d %i %u", (uint64_t)-1, 0xffffffffull, (uint64_t)-1);
	CHECK_FMT("7 ff FF", "%d %x %X", 0x100000007ull, 255, 255);
	CHECK_FMT("-1 18446744073709551615 ffffffffffffffff", "%ld %lu %lx", (uint64_t)-1,
		  (uint64_t)-1, (uint64_t)-1);
	CHECK_FMT("-2 18446744073709551614 fffffffffffffffe", "%lld %llu %llx", (uint64_t)-2,
		  (uint64_t)-2, (uint64_t)-2);
	CHECK_FMT("a=str c=A 100%", "a=%s c=%c 100%%", (uintptr_t)str, 'A', 0);
	CHECK_FMT("[   42][42   ][00042]", "[%5d][%-5d][%05d]", 42, 42, 42);
	CHECK_FMT("[+42][ 42][-42   ]", "[%+d][% d][%-6d]", 42, 42, (uint64_t)-42);
	CHECK_FMT("[  str]", "[%5s]", (uintptr_t)str, 0, 0);
	/* an unreadable string prints empty, as Linux */
	CHECK_FMT("<>", "<%s>", 8, 0, 0);
	snprintf(pbuf, sizeof(pbuf), "%016lx %016lx", (unsigned long)0x1234, (unsigned long)0x1234);
	CHECK_FMT(pbuf, "%p %px", 0x1234, 0x1234, 0);
	{
		uint8_t ip4[4] = { 10, 0, 0, 1 };
		uint8_t ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

		CHECK_FMT("10.0.0.1", "%pI4", (uintptr_t)ip4, 0, 0);
		CHECK_FMT("2001:0db8:0000:0000:0000:0000:0000:0001", "%pI6", (uintptr_t)ip6, 0, 0);
		CHECK_FMT("str-ks", "%pks-ks", (uintptr_t)str, 0, 0);
	}
	CHECK_FMT_INVALID("%d %d %d %d");   /* four conversions, three args */
	CHECK_FMT_INVALID("%q");
	CHECK_FMT_INVALID("%lq");
	CHECK_FMT_INVALID("%lf");
	CHECK_FMT_INVALID("%pZ");
	CHECK_FMT_INVALID("tab\x01");       /* non-printable */
	CHECK_FMT_INVALID("high\x80");
	CHECK_FMT_INVALID("%");
	{
		/* no NUL within fmt_size */
		char out[16];
		uint64_t args[3] = { 0 };

		CHECK(bpfrt_trace_format(out, sizeof(out), "abc", 3, args, 3) == -EINVAL);
		CHECK(bpfrt_trace_format(out, sizeof(out), "abc", 0, args, 3) == -EINVAL);
		CHECK(bpfrt_trace_format(out, sizeof(out), (void *)8, 4, args, 3) == -EFAULT);
		/* output cut at the buffer */
		CHECK(bpfrt_trace_format(out, 6, "abcdefgh", 9, args, 3) == 5 &&
		      !strcmp(out, "abcde"));
	}
}

struct lines {
	int n;
	char text[4][BPFRT_TRACE_MSG_MAX + 128];
};

static int collect_line(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	if (l->n < 4)
		snprintf(l->text[l->n], sizeof(l->text[0]), "%.*s", (int)len, line);
	l->n++;
	return 0;
}

TEST(trace_printk_through_programs_into_trace_buffer)
{
	static const char fmt[] = "value=%d hex=%x s=%s\n";
	char comm[16] = { 0 };
	char want_tid[32];

	prctl(PR_GET_NAME, comm);
	snprintf(want_tid, sizeof(want_tid), "-%d ", (int)gettid());
	bpfrt_trace_clear();
	FOR_EACH_MODE(m) {
		struct lines l = { 0 };
		const char *msg;

		CHECK(CALL(m, BPF_FUNC_trace_printk, (uintptr_t)fmt, sizeof(fmt), (uint64_t)-5,
			   0xbeef, (uintptr_t)"ok") == strlen("value=-5 hex=beef s=ok\n"));
		CHECK((int64_t)CALL(m, BPF_FUNC_trace_printk, (uintptr_t)"%y", 3, 0, 0, 0) == -EINVAL);
		CHECK(bpfrt_trace_drain(collect_line, &l) == 1, "%s: %d lines", mode_names[m], l.n);
		REQUIRE(l.n == 1);
		msg = strstr(l.text[0], ": bpf_trace_printk: ");
		REQUIRE(msg, "line '%s'", l.text[0]);
		CHECK(!strcmp(msg + strlen(": bpf_trace_printk: "), "value=-5 hex=beef s=ok\n"),
		      "line '%s'", l.text[0]);
		CHECK(strstr(l.text[0], comm) && strstr(l.text[0], want_tid), "line '%s'", l.text[0]);
		CHECK(bpfrt_trace_drain(collect_line, &l) == 0); /* consumed */
	}
}

TEST(trace_read_pipe_and_overflow)
{
	char buf[8192];
	char *mem = NULL;
	size_t mem_len = 0;
	FILE *f;
	int n;

	bpfrt_trace_clear();
	CHECK(bpfrt_trace_read(buf, sizeof(buf)) == 0 && buf[0] == 0);
	bpfrt_trace_emit("one", 3);
	bpfrt_trace_emit("two\n", 4);
	CHECK(bpfrt_trace_read(buf, 16) == -ENOSPC); /* a line does not fit */
	n = bpfrt_trace_read(buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf));
	CHECK(strstr(buf, "bpf_trace_printk: one\n") &&
	      strstr(buf, "bpf_trace_printk: two\n"), "'%s'", buf);
	CHECK(!strstr(buf, "two\n\n"), "newline doubled");
	CHECK(bpfrt_trace_read(buf, sizeof(buf)) == 0);

	/* 1024 lines are kept, the oldest dropped */
	for (int i = 0; i < 1100; i++) {
		char msg[16];

		bpfrt_trace_emit(msg, (size_t)snprintf(msg, sizeof(msg), "line %d", i));
	}
	CHECK(bpfrt_trace_dropped() == 76, "dropped %llu",
	      (unsigned long long)bpfrt_trace_dropped());
	f = open_memstream(&mem, &mem_len);
	REQUIRE(f);
	CHECK(bpfrt_trace_pipe(f) == 1024);
	fclose(f);
	CHECK(mem && strstr(mem, ": line 76\n") && !strstr(mem, ": line 75\n") &&
	      strstr(mem, ": line 1099\n"));
	free(mem);
	bpfrt_trace_clear();
	CHECK(bpfrt_trace_dropped() == 0);
}

/* ---- map helpers -------------------------------------------------------- */

/* counter[7]++ with lookup, update(BPF_NOEXIST) when missing, atomic add
 * otherwise; returns the lookup/update path taken (1 = created). */
static void build_counter(struct bpf_insn *out, struct bpfrt_map *map)
{
	const struct bpf_insn insns[] = {
		ST(BPF_W, BPF_R10, -4, 7),
		LDDW(BPF_R1, (uintptr_t)map),
		MOV64_REG(BPF_R2, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R2, -4),
		CALL_HELPER(BPF_FUNC_map_lookup_elem),
		JMP_IMM(BPF_JNE, BPF_R0, 0, 11),
		ST(BPF_DW, BPF_R10, -16, 1),
		LDDW(BPF_R1, (uintptr_t)map),
		MOV64_REG(BPF_R2, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R2, -4),
		MOV64_REG(BPF_R3, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R3, -16),
		MOV64_IMM(BPF_R4, BPF_NOEXIST),
		CALL_HELPER(BPF_FUNC_map_update_elem),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
		MOV64_IMM(BPF_R1, 1),
		ATOMIC(BPF_DW, BPF_ADD, BPF_R0, BPF_R1, 0),
		MOV64_IMM(BPF_R0, 0),
		EXIT(),
	};

	memcpy(out, insns, sizeof(insns));
}
#define COUNTER_LEN 22

TEST(map_helpers_through_a_program)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map;
		struct bpf_insn insns[COUNTER_LEN];
		struct bpfrt_prog *prog;
		uint32_t key = 7;
		uint64_t val = 0, r0 = 0;

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_HASH, "counter", 4, 8, 16, NULL, &map) == 0);
		build_counter(insns, map);
		REQUIRE(load(insns, COUNTER_LEN, modes[m], &prog) == 0, "%s: %s", mode_names[m],
			bpfrt_last_error());
		for (int i = 0; i < 5; i++) {
			CHECK(bpfrt_prog_run(prog, modes[m], 0, 0, &r0) == 0);
			CHECK(r0 == (i == 0), "%s: run %d took path %llu", mode_names[m], i,
			      (unsigned long long)r0);
		}
		CHECK(bpfrt_map_lookup_elem(map, &key, &val) == 0 && val == 5, "%s: %llu",
		      mode_names[m], (unsigned long long)val);
		bpfrt_prog_free(prog);

		/* error codes, helper by helper */
		val = 9;
		key = 8;
		CHECK((int64_t)CALL(m, BPF_FUNC_map_update_elem, (uintptr_t)map, (uintptr_t)&key,
				    (uintptr_t)&val, BPF_EXIST, 0) == -ENOENT);
		CHECK(CALL(m, BPF_FUNC_map_update_elem, (uintptr_t)map, (uintptr_t)&key,
			   (uintptr_t)&val, BPF_NOEXIST, 0) == 0);
		CHECK((int64_t)CALL(m, BPF_FUNC_map_update_elem, (uintptr_t)map, (uintptr_t)&key,
				    (uintptr_t)&val, BPF_NOEXIST, 0) == -EEXIST);
		CHECK((int64_t)CALL(m, BPF_FUNC_map_update_elem, (uintptr_t)map, (uintptr_t)&key,
				    (uintptr_t)&val, 99, 0) == -EINVAL);
		{
			uint64_t *p = (uint64_t *)(uintptr_t)CALL(m, BPF_FUNC_map_lookup_elem,
								 (uintptr_t)map, (uintptr_t)&key,
								 0, 0, 0);

			CHECK(p && *p == 9, "%s: lookup gives a pointer into the map", mode_names[m]);
		}
		CHECK(CALL(m, BPF_FUNC_map_delete_elem, (uintptr_t)map, (uintptr_t)&key, 0, 0, 0) == 0);
		CHECK((int64_t)CALL(m, BPF_FUNC_map_delete_elem, (uintptr_t)map, (uintptr_t)&key,
				    0, 0, 0) == -ENOENT);
		CHECK(CALL(m, BPF_FUNC_map_lookup_elem, (uintptr_t)map, (uintptr_t)&key,
			   0, 0, 0) == 0);
		bpfrt_map_free(map);

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "arr", 4, 8, 4, NULL, &map) == 0);
		key = 4;
		CHECK(CALL(m, BPF_FUNC_map_lookup_elem, (uintptr_t)map, (uintptr_t)&key,
			   0, 0, 0) == 0, "out-of-range index gives NULL");
		CHECK((int64_t)CALL(m, BPF_FUNC_map_update_elem, (uintptr_t)map, (uintptr_t)&key,
				    (uintptr_t)&val, BPF_ANY, 0) == -E2BIG);
		key = 1;
		CHECK((int64_t)CALL(m, BPF_FUNC_map_delete_elem, (uintptr_t)map, (uintptr_t)&key,
				    0, 0, 0) == -EINVAL);
		bpfrt_map_free(map);
	}
}

/* ---- ring buffer ------------------------------------------------------------ */

struct records {
	int n;
	uint64_t first[64];
	size_t len[64];
};

static int collect_record(void *ctx, void *data, size_t len)
{
	struct records *r = ctx;

	if (r->n < 64) {
		memcpy(&r->first[r->n], data, sizeof(uint64_t));
		r->len[r->n] = len;
	}
	r->n++;
	return 0;
}

/* reserve(16); fill with {arg1, ~arg1}; discard if arg2 else submit */
static void build_reserve(struct bpf_insn *out, struct bpfrt_map *rb)
{
	const struct bpf_insn insns[] = {
		MOV64_REG(BPF_R7, BPF_R1),
		MOV64_REG(BPF_R8, BPF_R2),
		LDDW(BPF_R1, (uintptr_t)rb),
		MOV64_IMM(BPF_R2, 16),
		MOV64_IMM(BPF_R3, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_reserve),
		JMP_IMM(BPF_JNE, BPF_R0, 0, 1),
		EXIT(),
		STX(BPF_DW, BPF_R0, BPF_R7, 0),
		MOV64_REG(BPF_R1, BPF_R7),
		ALU64_IMM(BPF_XOR, BPF_R1, -1),
		STX(BPF_DW, BPF_R0, BPF_R1, 8),
		MOV64_REG(BPF_R1, BPF_R0),
		MOV64_IMM(BPF_R2, 0),
		JMP_IMM(BPF_JNE, BPF_R8, 0, 3),
		CALL_HELPER(BPF_FUNC_ringbuf_submit),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
		CALL_HELPER(BPF_FUNC_ringbuf_discard),
		MOV64_IMM(BPF_R0, 2),
		EXIT(),
	};

	memcpy(out, insns, sizeof(insns));
}
#define RESERVE_LEN 22

TEST(ringbuf_helpers_with_a_consumer)
{
	long pg = sysconf(_SC_PAGESIZE);

	FOR_EACH_MODE(m) {
		struct bpfrt_map *rb;
		struct bpf_insn insns[RESERVE_LEN];
		struct bpfrt_prog *prog;
		struct records got = { 0 };
		uint64_t r0, data = 0x1234;
		int full = 0;

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_RINGBUF, "rb", 0, 0, (uint32_t)pg, NULL,
					 &rb) == 0, "%s", bpfrt_last_error());
		CHECK(CALL(m, BPF_FUNC_ringbuf_query, (uintptr_t)rb, BPF_RB_RING_SIZE, 0, 0, 0) ==
		      (uint64_t)pg);
		CHECK(CALL(m, BPF_FUNC_ringbuf_query, (uintptr_t)rb, BPF_RB_AVAIL_DATA, 0, 0, 0) == 0);
		build_reserve(insns, rb);
		REQUIRE(load(insns, RESERVE_LEN, modes[m], &prog) == 0, "%s: %s", mode_names[m],
			bpfrt_last_error());
		for (uint64_t i = 0; i < 10; i++) {
			CHECK(bpfrt_prog_run(prog, modes[m], 100 + i, i % 3 == 1, &r0) == 0);
			CHECK(r0 == (i % 3 == 1 ? 2u : 1u));
		}
		/* output: 8 bytes, then invalid flags */
		CHECK(CALL(m, BPF_FUNC_ringbuf_output, (uintptr_t)rb, (uintptr_t)&data, 8, 0, 0) == 0);
		CHECK((int64_t)CALL(m, BPF_FUNC_ringbuf_output, (uintptr_t)rb, (uintptr_t)&data, 8,
				    4, 0) == -EINVAL);
		/* 10 records of 16 + 8 header, one of 8 + 8 */
		CHECK(CALL(m, BPF_FUNC_ringbuf_query, (uintptr_t)rb, BPF_RB_AVAIL_DATA, 0, 0, 0) ==
		      10 * 24 + 16);
		CHECK(CALL(m, BPF_FUNC_ringbuf_query, (uintptr_t)rb, BPF_RB_PROD_POS, 0, 0, 0) ==
		      10 * 24 + 16);
		/* reserve with flags, or larger than the ring: NULL */
		CHECK(CALL(m, BPF_FUNC_ringbuf_reserve, (uintptr_t)rb, 8, 1, 0, 0) == 0);
		CHECK(CALL(m, BPF_FUNC_ringbuf_reserve, (uintptr_t)rb, (uint64_t)pg, 0, 0, 0) == 0);

		CHECK(bpfrt_ringbuf_consume(rb, collect_record, &got) == 8, "%s: consumed %d",
		      mode_names[m], got.n);
		for (int i = 0, k = 0; i < 10; i++) {
			if (i % 3 == 1)
				continue; /* discarded */
			CHECK(got.first[k] == 100u + (unsigned)i && got.len[k] == 16,
			      "%s: record %d: %llu", mode_names[m], k,
			      (unsigned long long)got.first[k]);
			k++;
		}
		CHECK(got.first[7] == 0x1234 && got.len[7] == 8);
		CHECK(CALL(m, BPF_FUNC_ringbuf_query, (uintptr_t)rb, BPF_RB_AVAIL_DATA, 0, 0, 0) == 0);
		CHECK(CALL(m, BPF_FUNC_ringbuf_query, (uintptr_t)rb, BPF_RB_CONS_POS, 0, 0, 0) ==
		      10 * 24 + 16);
		/* fill until -EAGAIN */
		for (int i = 0; i < 1000; i++) {
			if ((int64_t)CALL(m, BPF_FUNC_ringbuf_output, (uintptr_t)rb, (uintptr_t)&data,
					  8, 0, 0) == -EAGAIN) {
				full = 1;
				break;
			}
		}
		CHECK(full, "%s: ring never full", mode_names[m]);
		bpfrt_prog_free(prog);
		bpfrt_map_free(rb);
	}
}

/* ---- bpf_loop -------------------------------------------------------------- */

struct loop_ctx {
	uint64_t count;
	uint64_t break_at;
	uint64_t sum;
	uint64_t flags;
};

/* bpf_loop(arg1, cb, ctx = arg2, ctx->flags); cb counts, sums i and stops
 * at ctx->break_at. */
static const struct bpf_insn loop_prog[] = {
	MOV64_REG(BPF_R6, BPF_R2),
	LDDW_FUNC(BPF_R2, 5),                   /* -> 7 */
	MOV64_REG(BPF_R3, BPF_R6),
	LDX(BPF_DW, BPF_R4, BPF_R6, 24),
	CALL_HELPER(BPF_FUNC_loop),
	EXIT(),
	/* 7: callback(i, ctx) */
	LDX(BPF_DW, BPF_R3, BPF_R2, 0),
	ALU64_IMM(BPF_ADD, BPF_R3, 1),
	STX(BPF_DW, BPF_R2, BPF_R3, 0),
	LDX(BPF_DW, BPF_R3, BPF_R2, 16),
	ALU64_REG(BPF_ADD, BPF_R3, BPF_R1),
	STX(BPF_DW, BPF_R2, BPF_R3, 16),
	LDX(BPF_DW, BPF_R3, BPF_R2, 8),
	MOV64_IMM(BPF_R0, 0),
	JMP_REG(BPF_JNE, BPF_R1, BPF_R3, 1),
	MOV64_IMM(BPF_R0, 1),
	EXIT(),
};

TEST(bpf_loop_counts_breaks_and_limits)
{
	static const struct {
		uint64_t nr, break_at, flags;
		int64_t ret;
		uint64_t count, sum;
	} cases[] = {
		{ 10, ~0ull, 0, 10, 10, 45 },
		{ 10, 3, 0, 4, 4, 6 },                   /* callback returned 1 at i = 3 */
		{ 0, ~0ull, 0, 0, 0, 0 },
		{ 1, 0, 0, 1, 1, 0 },
		{ (1u << 23) + 1, ~0ull, 0, -E2BIG, 0, 0 },
		{ 0xffffffffull, ~0ull, 0, -E2BIG, 0, 0 },
		{ (1ull << 32) | 3, ~0ull, 0, 3, 3, 3 }, /* nr_loops is a u32 */
		{ 5, ~0ull, 1, -EINVAL, 0, 0 },          /* flags must be 0 */
		{ 1u << 23, 2, 0, 3, 3, 3 },             /* the limit itself is allowed */
	};

	FOR_EACH_MODE(m) {
		for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
			struct loop_ctx ctx = { 0, cases[i].break_at, 0, cases[i].flags };
			uint64_t r0 = 0;
			int err = run(loop_prog, ARRAY_LEN(loop_prog), modes[m], cases[i].nr,
				      (uintptr_t)&ctx, &r0);

			CHECK(err == 0, "%s case %zu: %d %s", mode_names[m], i, err,
			      bpfrt_last_error());
			CHECK((int64_t)r0 == cases[i].ret && ctx.count == cases[i].count &&
			      ctx.sum == cases[i].sum,
			      "%s case %zu: ret %lld count %llu sum %llu", mode_names[m], i,
			      (long long)r0, (unsigned long long)ctx.count,
			      (unsigned long long)ctx.sum);
		}
	}
}

/* bpf_loop(4, outer) where outer runs bpf_loop(3, inner): callbacks nest. */
TEST(bpf_loop_nested)
{
	static const struct bpf_insn prog[] = {
		/* 0: main */
		ST(BPF_DW, BPF_R10, -8, 0),
		MOV64_IMM(BPF_R1, 4),
		LDDW_FUNC(BPF_R2, 7),                   /* -> 10 */
		MOV64_REG(BPF_R3, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R3, -8),
		MOV64_IMM(BPF_R4, 0),
		CALL_HELPER(BPF_FUNC_loop),
		LDX(BPF_DW, BPF_R0, BPF_R10, -8),
		EXIT(),
		/* 10: outer(i, ctx): bpf_loop(3, inner, ctx) */
		MOV64_REG(BPF_R3, BPF_R2),
		MOV64_IMM(BPF_R1, 3),
		LDDW_FUNC(BPF_R2, 5),                   /* -> 18 */
		MOV64_IMM(BPF_R4, 0),
		CALL_HELPER(BPF_FUNC_loop),
		MOV64_IMM(BPF_R0, 0),
		EXIT(),
		/* 18: inner(j, ctx): (*ctx)++ */
		LDX(BPF_DW, BPF_R3, BPF_R2, 0),
		ALU64_IMM(BPF_ADD, BPF_R3, 1),
		STX(BPF_DW, BPF_R2, BPF_R3, 0),
		MOV64_IMM(BPF_R0, 0),
		EXIT(),
	};

	FOR_EACH_MODE(m) {
		uint64_t r0 = 0;
		int err = run(prog, ARRAY_LEN(prog), modes[m], 0, 0, &r0);

		CHECK(err == 0 && r0 == 12, "%s: err %d (%s) r0 %llu", mode_names[m], err,
		      bpfrt_last_error(), (unsigned long long)r0);
	}
}

/* An interpreter callback handle naming no subprogram aborts the run. */
TEST(bpf_loop_forged_callback_aborts)
{
	static const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R1, 5),
		LDDW(BPF_R2, BPFRT_CALLBACK_INTERP_TAG | 3), /* insn 3 starts no subprogram */
		MOV64_IMM(BPF_R3, 0),
		MOV64_IMM(BPF_R4, 0),
		CALL_HELPER(BPF_FUNC_loop),
		EXIT(),
	};
	uint64_t r0 = 0;

	CHECK(run(insns, ARRAY_LEN(insns), BPFRT_EXEC_INTERP, 0, 0, &r0) == -EINVAL,
	      "%s", bpfrt_last_error());
	/* directly: returns 1 ("stop") and records the abort */
	bpfrt_run_state.abort_err = 0;
	CHECK(bpfrt_callback_invoke(BPFRT_CALLBACK_INTERP_TAG | 3, 0, 0, 0, 0, 0) == 1);
	CHECK(bpfrt_run_state.abort_err == EINVAL);
	bpfrt_run_state.abort_err = 0;
}

/* A callback that aborts (callx to an unregistered helper) aborts the run
 * and stops the loop; in the JIT the abort unwinds through bpf_loop's C
 * frame, and later runs must still be able to nest callbacks. */
TEST(bpf_loop_stops_when_the_callback_aborts)
{
	static const struct bpf_insn insns[] = {
		MOV64_REG(BPF_R3, BPF_R1),
		MOV64_IMM(BPF_R1, 1000),
		LDDW_FUNC(BPF_R2, 4),                   /* -> 7 */
		MOV64_IMM(BPF_R4, 0),
		CALL_HELPER(BPF_FUNC_loop),
		EXIT(),
		/* 7: callback(i, ctx): (*ctx)++, then callx 499 aborts */
		LDX(BPF_DW, BPF_R3, BPF_R2, 0),
		ALU64_IMM(BPF_ADD, BPF_R3, 1),
		STX(BPF_DW, BPF_R2, BPF_R3, 0),
		MOV64_IMM(BPF_R0, 499),
		CALLX(BPF_R0),
		EXIT(),
	};

	bpfrt_helper_unregister(499);
	FOR_EACH_MODE(m) {
		for (int i = 0; i < BPFRT_MAX_CALLBACK_DEPTH + 2; i++) {
			uint64_t calls = 0, r0 = 0;
			int err = run(insns, ARRAY_LEN(insns), modes[m], (uintptr_t)&calls, 0, &r0);

			CHECK(err == -EINVAL && calls == 1, "%s: err %d calls %llu: %s",
			      mode_names[m], err, (unsigned long long)calls, bpfrt_last_error());
		}
		{
			struct loop_ctx ctx = { 0, ~0ull, 0, 0 };
			uint64_t r0 = 0;

			CHECK(run(loop_prog, ARRAY_LEN(loop_prog), modes[m], 3, (uintptr_t)&ctx,
				  &r0) == 0 && r0 == 3 && ctx.count == 3,
			      "%s: callbacks broken after aborts: %s", mode_names[m],
			      bpfrt_last_error());
		}
	}
}

/* ---- tail calls -------------------------------------------------------------- */

/* tail_call(ctx, map, idx); then return r0 (-ENOENT after a failure) */
static void build_tail_caller(struct bpf_insn *out, struct bpfrt_map *map, int32_t idx)
{
	const struct bpf_insn insns[] = {
		LDDW(BPF_R2, (uintptr_t)map),
		MOV64_IMM(BPF_R3, idx),
		CALL_HELPER(BPF_FUNC_tail_call),
		EXIT(),
	};

	memcpy(out, insns, sizeof(insns));
}
#define TAIL_CALLER_LEN 5

/* *(u64 *)ctx + k */
static void build_ctx_plus(struct bpf_insn *out, int32_t k)
{
	const struct bpf_insn insns[] = {
		LDX(BPF_DW, BPF_R0, BPF_R1, 0),
		ALU64_IMM(BPF_ADD, BPF_R0, k),
		EXIT(),
	};

	memcpy(out, insns, sizeof(insns));
}

/* JIT code that calls helper 12 as a plain function has no tail calls. */
static bool jit_lacks_tail_calls(size_t m, uint64_t fallbacks_before)
{
	return modes[m] == BPFRT_EXEC_JIT && bpfrt_tail_call_fallbacks != fallbacks_before;
}

#define JIT_TAIL_SKIP "the JIT calls helper 12 as a plain function (no tail-call emission yet)"

TEST(tail_call_chain_keeps_ctx)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map;
		struct bpf_insn a[TAIL_CALLER_LEN], b[TAIL_CALLER_LEN], c[3];
		struct bpfrt_prog *pa, *pb, *pc;
		uint64_t ctx = 1000, r0 = 0, before = bpfrt_tail_call_fallbacks;

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 8, NULL, &map) == 0);
		build_tail_caller(a, map, 1);
		build_tail_caller(b, map, 2);
		build_ctx_plus(c, 2);
		REQUIRE(load(a, ARRAY_LEN(a), modes[m], &pa) == 0, "%s", bpfrt_last_error());
		REQUIRE(load(b, ARRAY_LEN(b), modes[m], &pb) == 0);
		REQUIRE(load(c, ARRAY_LEN(c), modes[m], &pc) == 0);
		REQUIRE(bpfrt_map_update_prog(map, 1, pb) == 0);
		REQUIRE(bpfrt_map_update_prog(map, 2, pc) == 0);
		CHECK(bpfrt_prog_run(pa, modes[m], (uintptr_t)&ctx, 0, &r0) == 0);
		if (jit_lacks_tail_calls(m, before)) {
			bpfrt_map_free(map);
			bpfrt_prog_free(pa), bpfrt_prog_free(pb), bpfrt_prog_free(pc);
			SKIP(JIT_TAIL_SKIP);
		}
		CHECK(r0 == 1002, "%s: r0 %lld", mode_names[m], (long long)r0);

		/* missing slot, out of range: fall through with r0 = -ENOENT */
		REQUIRE(bpfrt_map_delete_prog(map, 2) == 0);
		CHECK(bpfrt_prog_run(pa, modes[m], (uintptr_t)&ctx, 0, &r0) == 0);
		CHECK((int64_t)r0 == -ENOENT, "%s: empty slot: r0 %lld", mode_names[m],
		      (long long)r0);
		bpfrt_map_free(map);
		bpfrt_prog_free(pa), bpfrt_prog_free(pb), bpfrt_prog_free(pc);
	}
}

TEST(tail_call_missing_or_out_of_range_falls_through)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map;
		struct bpf_insn a[TAIL_CALLER_LEN];
		uint64_t r0 = 0;

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 8, NULL, &map) == 0);
		build_tail_caller(a, map, 5);
		CHECK(run(a, ARRAY_LEN(a), modes[m], 0, 0, &r0) == 0 && r0 != 0);
		build_tail_caller(a, map, 8);
		CHECK(run(a, ARRAY_LEN(a), modes[m], 0, 0, &r0) == 0 && r0 != 0);
		build_tail_caller(a, map, -1);
		CHECK(run(a, ARRAY_LEN(a), modes[m], 0, 0, &r0) == 0 && r0 != 0);
		if (modes[m] == BPFRT_EXEC_INTERP)
			CHECK((int64_t)r0 == -ENOENT);
		/* not a prog array */
		bpfrt_map_free(map);
		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "arr", 4, 8, 8, NULL, &map) == 0);
		build_tail_caller(a, map, 0);
		CHECK(run(a, ARRAY_LEN(a), modes[m], 0, 0, &r0) == 0 && r0 != 0);
		bpfrt_map_free(map);
	}
}

/* As Linux's tailcall3 selftest: entry tail-calls slot 0, which counts and
 * tail-calls itself; 33 tail calls are taken, so slot 0 runs 33 times,
 * then its 34th tail call fails and it returns 1. */
TEST(tail_call_limit_is_33)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map;
		struct bpfrt_prog *entry, *self;
		uint64_t count = 0, r0 = 0, before = bpfrt_tail_call_fallbacks;

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 1, NULL, &map) == 0);
		const struct bpf_insn e[] = {
			LDDW(BPF_R2, (uintptr_t)map),
			MOV64_IMM(BPF_R3, 0),
			CALL_HELPER(BPF_FUNC_tail_call),
			MOV64_IMM(BPF_R0, 0),
			EXIT(),
		};
		const struct bpf_insn s[] = {
			LDX(BPF_DW, BPF_R2, BPF_R1, 0),
			ALU64_IMM(BPF_ADD, BPF_R2, 1),
			STX(BPF_DW, BPF_R1, BPF_R2, 0),
			LDDW(BPF_R2, (uintptr_t)map),
			MOV64_IMM(BPF_R3, 0),
			CALL_HELPER(BPF_FUNC_tail_call),
			MOV64_IMM(BPF_R0, 1),
			EXIT(),
		};

		REQUIRE(load(e, ARRAY_LEN(e), modes[m], &entry) == 0);
		REQUIRE(load(s, ARRAY_LEN(s), modes[m], &self) == 0);
		REQUIRE(bpfrt_map_update_prog(map, 0, self) == 0);
		CHECK(bpfrt_prog_run(entry, modes[m], (uintptr_t)&count, 0, &r0) == 0);
		if (jit_lacks_tail_calls(m, before)) {
			bpfrt_map_free(map);
			bpfrt_prog_free(entry), bpfrt_prog_free(self);
			SKIP(JIT_TAIL_SKIP);
		}
		CHECK(count == 33 && r0 == 1, "%s: count %llu r0 %llu", mode_names[m],
		      (unsigned long long)count, (unsigned long long)r0);
		/* the count starts over with every run */
		count = 0;
		CHECK(bpfrt_prog_run(entry, modes[m], (uintptr_t)&count, 0, &r0) == 0);
		CHECK(count == 33, "%s: second run %llu", mode_names[m], (unsigned long long)count);
		bpfrt_map_free(map);
		bpfrt_prog_free(entry), bpfrt_prog_free(self);
	}
}

/* A tail call from a subprogram replaces the subprogram only: the target's
 * result comes back to the subprogram's caller. */
TEST(tail_call_from_subprogram_returns_to_caller)
{
	struct bpfrt_map *map;
	struct bpfrt_prog *main_prog, *target;
	struct bpf_insn t[3];
	uint64_t ctx = 5, r0 = 0;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 1, NULL, &map) == 0);
	const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R6, 1000),
		CALL_LOCAL(3),                           /* -> 5 */
		ALU64_REG(BPF_ADD, BPF_R0, BPF_R6),      /* r6 survives the tail call */
		ST(BPF_DW, BPF_R10, -8, 0),
		EXIT(),
		/* 5: subprogram */
		MOV64_IMM(BPF_R6, 7),
		LDDW(BPF_R2, (uintptr_t)map),
		MOV64_IMM(BPF_R3, 0),
		CALL_HELPER(BPF_FUNC_tail_call),
		MOV64_IMM(BPF_R0, 99),
		EXIT(),
	};

	build_ctx_plus(t, 20);
	REQUIRE(load(insns, ARRAY_LEN(insns), BPFRT_EXEC_INTERP, &main_prog) == 0, "%s",
		bpfrt_last_error());
	REQUIRE(load(t, ARRAY_LEN(t), BPFRT_EXEC_INTERP, &target) == 0);
	REQUIRE(bpfrt_map_update_prog(map, 0, target) == 0);
	CHECK(bpfrt_prog_run(main_prog, BPFRT_EXEC_INTERP, (uintptr_t)&ctx, 0, &r0) == 0);
	CHECK(r0 == 1025, "r0 %llu", (unsigned long long)r0);
	bpfrt_map_delete_prog(map, 0);
	CHECK(bpfrt_prog_run(main_prog, BPFRT_EXEC_INTERP, (uintptr_t)&ctx, 0, &r0) == 0);
	CHECK(r0 == 1099, "r0 %llu", (unsigned long long)r0);
	bpfrt_map_free(map);
	bpfrt_prog_free(main_prog);
	bpfrt_prog_free(target);
}

/* A tail-called program runs its own callbacks: the callback handle is
 * resolved in the program running now. */
TEST(tail_call_target_uses_bpf_loop)
{
	struct bpfrt_map *map;
	struct bpfrt_prog *entry, *target;
	struct bpf_insn e[TAIL_CALLER_LEN];
	struct loop_ctx ctx = { 0, ~0ull, 0, 0 };
	uint64_t r0 = 0;
	/* the loop program reads nr from r1 and ctx from r2; a tail call
	 * passes ctx in r1 only, so wrap: r2 = r1, r1 = 6 */
	struct bpf_insn t[ARRAY_LEN(loop_prog) + 2];

	t[0] = (struct bpf_insn)MOV64_REG(BPF_R2, BPF_R1);
	t[1] = (struct bpf_insn)MOV64_IMM(BPF_R1, 6);
	memcpy(t + 2, loop_prog, sizeof(loop_prog));
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "jmp", 4, 4, 1, NULL, &map) == 0);
	build_tail_caller(e, map, 0);
	REQUIRE(load(e, ARRAY_LEN(e), BPFRT_EXEC_INTERP, &entry) == 0);
	REQUIRE(load(t, ARRAY_LEN(t), BPFRT_EXEC_INTERP, &target) == 0, "%s", bpfrt_last_error());
	REQUIRE(bpfrt_map_update_prog(map, 0, target) == 0);
	CHECK(bpfrt_prog_run(entry, BPFRT_EXEC_INTERP, (uintptr_t)&ctx, 0, &r0) == 0, "%s",
	      bpfrt_last_error());
	CHECK(r0 == 6 && ctx.count == 6 && ctx.sum == 15, "r0 %llu count %llu",
	      (unsigned long long)r0, (unsigned long long)ctx.count);
	bpfrt_map_free(map);
	bpfrt_prog_free(entry);
	bpfrt_prog_free(target);
}

/* ---- helper snapshots and environments ---------------------------------- */
/* A program calls the helpers and kfuncs registered when it was loaded,
 * in every engine: registering an id again changes later loads only. */
#define SNAP_ID 400 /* no Linux helper here */

static uint64_t snap_a(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return r1 + 100;
}

static uint64_t snap_b(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return r1 + 200;
}

static const struct bpfrt_helper snap_helper_a = {
	.name = "snap_a", .fn = snap_a, .args = { BPFRT_ARG_ANYTHING },
};
static const struct bpfrt_helper snap_helper_b = {
	.name = "snap_b", .fn = snap_b, .args = { BPFRT_ARG_ANYTHING },
};

/* r0 of prog in the interpreter and, if compiled, the JIT; both must agree. */
static uint64_t run_engines(const struct bpfrt_prog *prog)
{
	uint64_t r0 = 0, jit_r0 = 0;

	CHECK(bpfrt_prog_run(prog, BPFRT_EXEC_INTERP, 0, 0, &r0) == 0, "%s", bpfrt_last_error());
	if (bpfrt_prog_jited(prog, NULL)) {
		CHECK(bpfrt_prog_run(prog, BPFRT_EXEC_JIT, 0, 0, &jit_r0) == 0, "%s",
		      bpfrt_last_error());
		CHECK(jit_r0 == r0, "interpreter %llu, JIT %llu", (unsigned long long)r0,
		      (unsigned long long)jit_r0);
	}
	return r0;
}

static void check_snapshot(const struct bpf_insn *insns, size_t cnt,
			   int (*reg)(const struct bpfrt_helper *h))
{
	FOR_EACH_MODE(m) {
		struct bpfrt_prog *old, *new;

		REQUIRE(reg(&snap_helper_a) >= 0, "%s", bpfrt_last_error());
		REQUIRE(load(insns, cnt, modes[m], &old) == 0, "%s", bpfrt_last_error());
		CHECK(run_engines(old) == 107, "%s: before", mode_names[m]);
		REQUIRE(reg(&snap_helper_b) >= 0, "%s", bpfrt_last_error());
		CHECK(run_engines(old) == 107, "%s: loaded before the change", mode_names[m]);
		REQUIRE(load(insns, cnt, modes[m], &new) == 0, "%s", bpfrt_last_error());
		CHECK(run_engines(new) == 207, "%s: loaded after the change", mode_names[m]);
		bpfrt_prog_free(old);
		bpfrt_prog_free(new);
	}
}

static int reg_snap_helper(const struct bpfrt_helper *h)
{
	return bpfrt_helper_register(SNAP_ID, h);
}

static int reg_snap_kfunc(const struct bpfrt_helper *h)
{
	return bpfrt_kfunc_register("snap_kfunc", h);
}

TEST(reregistered_helper_leaves_loaded_programs_alone)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_R1, 7), CALL_HELPER(SNAP_ID), EXIT() };

	check_snapshot(insns, ARRAY_LEN(insns), reg_snap_helper);
	bpfrt_helper_unregister(SNAP_ID);
}

TEST(reregistered_kfunc_leaves_loaded_programs_alone)
{
	int id = bpfrt_kfunc_register("snap_kfunc", &snap_helper_a);

	REQUIRE(id >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_R1, 7), CALL_HELPER(id), EXIT() };

	check_snapshot(insns, ARRAY_LEN(insns), reg_snap_kfunc);
	CHECK(bpfrt_kfunc_id("snap_kfunc") == id, "a replaced kfunc keeps its id");
}

/* callx finds its helper at run time, in the snapshot too: an id
 * registered only after the load is not found (the run aborts). */
TEST(callx_calls_through_the_snapshot)
{
	const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R1, 7), MOV64_IMM(BPF_R6, SNAP_ID), CALLX(BPF_R6), EXIT(),
	};
	const struct bpf_insn late[] = {
		MOV64_IMM(BPF_R1, 7), MOV64_IMM(BPF_R6, SNAP_ID + 1), CALLX(BPF_R6), EXIT(),
	};

	check_snapshot(insns, ARRAY_LEN(insns), reg_snap_helper);
	bpfrt_helper_unregister(SNAP_ID + 1);
	FOR_EACH_MODE(m) {
		struct bpfrt_prog *p;
		uint64_t r0 = 0;

		REQUIRE(load(late, ARRAY_LEN(late), modes[m], &p) == 0, "%s", bpfrt_last_error());
		REQUIRE(bpfrt_helper_register(SNAP_ID + 1, &snap_helper_b) == 0);
		CHECK(bpfrt_prog_run(p, modes[m], 0, 0, &r0) == -EINVAL, "%s: r0 %llu",
		      mode_names[m], (unsigned long long)r0);
		CHECK(strstr(bpfrt_last_error(), "unregistered helper"), "%s", bpfrt_last_error());
		bpfrt_helper_unregister(SNAP_ID + 1);
		bpfrt_prog_free(p);
	}
	bpfrt_helper_unregister(SNAP_ID);
}

/* Registration from several threads while others load and run programs
 * calling the ids being replaced: every program runs one of the functions
 * and both engines agree on which (run under ASan in the SAN build). */
#define RACE_ROUNDS 200

struct race {
	_Atomic int loaders_done;
	_Atomic int failures;
	int kfunc_id;
};

static void *race_registrar(void *arg)
{
	struct race *r = arg;

	for (unsigned i = 0; atomic_load(&r->loaders_done) < 2; i++) {
		const struct bpfrt_helper *h = i & 1 ? &snap_helper_b : &snap_helper_a;

		if (bpfrt_helper_register(SNAP_ID, h) || bpfrt_kfunc_register("snap_race", h) < 0)
			atomic_fetch_add(&r->failures, 1);
		/* an id no program calls comes and goes */
		bpfrt_helper_register(SNAP_ID + 2, h);
		bpfrt_helper_unregister(SNAP_ID + 2);
	}
	return NULL;
}

static void *race_loader(void *arg)
{
	struct race *r = arg;
	const struct bpf_insn insns[] = {
		MOV64_IMM(BPF_R1, 7), CALL_HELPER(SNAP_ID), MOV64_REG(BPF_R6, BPF_R0),
		MOV64_IMM(BPF_R1, 0), CALL_HELPER(r->kfunc_id), ALU64_IMM(BPF_LSH, BPF_R0, 16),
		ALU64_REG(BPF_ADD, BPF_R0, BPF_R6), EXIT(),
	};

	for (int i = 0; i < RACE_ROUNDS; i++) {
		struct bpfrt_prog *p;
		uint64_t r0 = 0, jit_r0 = 0;

		if (load(insns, ARRAY_LEN(insns), BPFRT_EXEC_JIT, &p)) {
			atomic_fetch_add(&r->failures, 1);
			continue;
		}
		/* helper: 107 or 207; kfunc: (100 or 200) << 16 */
		if (bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 0, &r0) ||
		    bpfrt_prog_run(p, BPFRT_EXEC_JIT, 0, 0, &jit_r0) || r0 != jit_r0 ||
		    ((r0 & 0xffff) != 107 && (r0 & 0xffff) != 207) ||
		    (r0 >> 16 != 100 && r0 >> 16 != 200))
			atomic_fetch_add(&r->failures, 1);
		bpfrt_prog_free(p);
	}
	atomic_fetch_add(&r->loaders_done, 1);
	return NULL;
}

TEST(concurrent_registration_and_loads)
{
	struct race r = { 0 };
	pthread_t t[4];

	REQUIRE(bpfrt_helper_register(SNAP_ID, &snap_helper_a) == 0);
	r.kfunc_id = bpfrt_kfunc_register("snap_race", &snap_helper_a);
	REQUIRE(r.kfunc_id >= BPFRT_KFUNC_ID_BASE, "%s", bpfrt_last_error());
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&t[i], NULL, i < 2 ? race_registrar : race_loader, &r) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(atomic_load(&r.failures) == 0, "%d failed loads, runs or registrations",
	      atomic_load(&r.failures));
	bpfrt_helper_unregister(SNAP_ID);
}

/* Two environments: the same id is a different function in each, and
 * neither is the default environment's. */
static void count_failures(void *ctx, const char *msg)
{
	int *n = ctx;

	if (strstr(msg, "too large"))
		++*n;
}

TEST(environments_have_tables_and_limits_of_their_own)
{
	const struct bpf_insn insns[] = { MOV64_IMM(BPF_R1, 7), CALL_HELPER(SNAP_ID), EXIT() };
	struct bpfrt_env *a, *b, *small;
	struct bpfrt_prog *pa, *pb, *pd = NULL;
	int failures = 0;

	REQUIRE(bpfrt_env_new(NULL, &a) == 0 && bpfrt_env_new(NULL, &b) == 0);
	REQUIRE(bpfrt_env_helper_register(a, SNAP_ID, &snap_helper_a) == 0);
	REQUIRE(bpfrt_env_helper_register(b, SNAP_ID, &snap_helper_b) == 0);
	bpfrt_helper_unregister(SNAP_ID);
	FOR_EACH_MODE(m) {
		BPFRT_OPTS(bpfrt_prog_load_opts, oa, .jit = modes[m] == BPFRT_EXEC_JIT, .env = a);
		BPFRT_OPTS(bpfrt_prog_load_opts, ob, .jit = modes[m] == BPFRT_EXEC_JIT, .env = b);
		BPFRT_OPTS(bpfrt_prog_load_opts, od, .jit = modes[m] == BPFRT_EXEC_JIT);

		REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), &oa, &pa) == 0, "%s",
			bpfrt_last_error());
		REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), &ob, &pb) == 0, "%s",
			bpfrt_last_error());
		CHECK(run_engines(pa) == 107 && run_engines(pb) == 207, "%s", mode_names[m]);
		/* the default environment has no such helper */
		CHECK(bpfrt_prog_load(insns, ARRAY_LEN(insns), &od, &pd) == -EINVAL && !pd);
		/* Linux's helpers and the host's (tracing) defaults are in
		 * every new environment */
		{
			const struct bpf_insn pid[] = {
				CALL_HELPER(BPF_FUNC_get_current_pid_tgid), MOV64_IMM(BPF_R1, 0),
				CALL_HELPER(BPF_FUNC_get_func_arg_cnt), EXIT(),
			};
			struct bpfrt_prog *pp;

			CHECK(bpfrt_prog_load(pid, ARRAY_LEN(pid), &oa, &pp) == 0, "%s",
			      bpfrt_last_error());
			bpfrt_prog_free(pp);
		}
		bpfrt_prog_free(pa);
		bpfrt_prog_free(pb);
	}
	/* an environment freed while a program of it lives: the program keeps it */
	{
		BPFRT_OPTS(bpfrt_prog_load_opts, oa, .env = a);

		REQUIRE(bpfrt_prog_load(insns, ARRAY_LEN(insns), &oa, &pa) == 0);
		bpfrt_env_free(a);
		CHECK(run_engines(pa) == 107);
		bpfrt_prog_free(pa);
	}
	bpfrt_env_free(b);

	/* limits and the log sink: a verifier budget of 10 processed insns */
	{
		BPFRT_OPTS(bpfrt_env_opts, eo, .max_processed_insns = 10,
			   .log_fn = count_failures, .log_ctx = &failures);
		struct bpf_insn loop[24];
		size_t n = 0;

		REQUIRE(bpfrt_env_new(&eo, &small) == 0, "%s", bpfrt_last_error());
		for (int i = 0; i < 20; i++)
			loop[n++] = (struct bpf_insn)MOV64_IMM(BPF_R0, i);
		loop[n++] = (struct bpf_insn)EXIT();
		BPFRT_OPTS(bpfrt_prog_load_opts, vs, .verify = true, .ctx_size = 8, .env = small);
		BPFRT_OPTS(bpfrt_prog_load_opts, vd, .verify = true, .ctx_size = 8);

		CHECK(bpfrt_prog_load(loop, n, &vs, &pa) == -E2BIG, "%s", bpfrt_last_error());
		CHECK(failures == 1, "log sink called %d times", failures);
		REQUIRE(bpfrt_prog_load(loop, n, &vd, &pa) == 0, "%s", bpfrt_last_error());
		bpfrt_prog_free(pa);
		CHECK(failures == 1);
		bpfrt_env_free(small);
	}
}
