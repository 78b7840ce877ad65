/* Executable memory: W^X double mapping or anonymous THP written through
 * /proc/self/mem, prog packs (full pack, first fit reuse, large images,
 * empty packs returned), trap refill, random image start, rewritten code
 * reaching instruction fetch (qemu-user too), concurrency and the no-pack
 * switch. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "jit/execmem.h"
#include "jit/prog_pack.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PACK   BPFRT_EXECMEM_PACK_SIZE
#define CHUNK  BPFRT_EXECMEM_CHUNK_SIZE
#define CHUNKS (PACK / CHUNK)

static const uint8_t ret42[] = { 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 }; /* mov eax, 42; ret */

typedef int (*int_fn)(void);

/* Every test starts with packing on, no live image and no spare pack. */
static void fresh_state(void)
{
	bpfrt_execmem_set_packing(true);
	bpfrt_execmem_trim();
}

static struct bpfrt_execmem_stats stats_now(void)
{
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };

	if (bpfrt_execmem_stats(&st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* Permissions ("r-xs") of the mapping holding addr, or "" if unmapped;
 * with want_wx, instead reports the first writable+executable mapping. */
static bool scan_maps(uintptr_t addr, bool want_wx, char *out, size_t out_len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool found = false;

	out[0] = '\0';
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (want_wx && perms[1] == 'w' && perms[2] == 'x') {
			snprintf(out, out_len, "%s", line);
			found = true;
		} else if (!want_wx && addr >= lo && addr < hi) {
			snprintf(out, out_len, "%s", perms);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static bool have_wx_mapping(char *line, size_t len)
{
	return scan_maps(0, true, line, len);
}

static bool is_mapped(const void *addr)
{
	char perms[512];

	return scan_maps((uintptr_t)addr, false, perms, sizeof(perms));
}

/* The exec address of the chunk an image starts in (images start less
 * than one chunk into their allocation). */
static uintptr_t chunk_of(const struct bpfrt_execmem *mem)
{
	return (uintptr_t)bpfrt_execmem_addr(mem) & ~(uintptr_t)(CHUNK - 1);
}

static bool aligned_to(uintptr_t v, uintptr_t align)
{
	return (v & (align - 1)) == 0;
}

/* The architecture's trap fill (int3, brk, ebreak) over len bytes at p,
 * which starts a chunk or within one at a 16-byte boundary. */
static bool all_traps(const void *p, size_t len)
{
	static _Alignas(64) uint8_t want[4096];
	const uint8_t *b = p;

	if (!want[0])
		execmem_fill_traps(want, sizeof(want));
	for (size_t i = 0; i < len; i++)
		if (b[i] != want[((uintptr_t)p + i) % sizeof(want)])
			return false;
	return true;
}

static int run_image(struct bpfrt_execmem *mem, size_t off)
{
	return ((int_fn)((char *)bpfrt_execmem_addr(mem) + off))();
}

/* Code that returns n (< 2048) on every architecture bpfrt tests: 8 bytes. */
static void ret_code(uint8_t buf[8], uint32_t n)
{
#if defined(__aarch64__)
	uint32_t insn[2] = { 0x52800000u | n << 5, 0xd65f03c0u }; /* movz w0, #n; ret */

	memcpy(buf, insn, 8);
#elif defined(__riscv)
	uint32_t insn[2] = { 0x00000513u | n << 20, 0x00008067u }; /* li a0, n; ret */

	memcpy(buf, insn, 8);
#else
	buf[0] = 0xb8; /* mov eax, n; ret */
	memcpy(buf + 1, &n, 4);
	buf[5] = 0xc3;
	buf[6] = buf[7] = 0xcc;
#endif
}

/* The backing a new pack gets on this system. */
static uint32_t pack_backing(void)
{
	struct bpfrt_execmem *mem = bpfrt_execmem_alloc(1);
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	uint32_t backing = BPFRT_EXECMEM_BACKING_CNT;

	if (mem && !bpfrt_execmem_stats(&st) && st.pack_info_cnt)
		backing = st.packs[0].backing;
	bpfrt_execmem_free(mem);
	return backing;
}

/* A field ("AnonHugePages") of the /proc/self/smaps entry holding addr, in
 * kB, or -1. */
static long smaps_field(const void *addr, const char *field)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[4096];
	bool in = false;
	long kb = -1;
	size_t flen = strlen(field);

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (in)
				break;
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		} else if (in && !strncmp(line, field, flen) && line[flen] == ':') {
			kb = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return kb;
}

/* The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled. */
static bool anon_thp_possible(void)
{
	char buf[256] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled", "re");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	if (!strstr(buf, "[inherit]") && buf[0])
		return strstr(buf, "[always]") || strstr(buf, "[madvise]");
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

TEST(execmem_alloc_copy_execute)
{
	struct bpfrt_execmem *mem;
	char perms[512];

	fresh_state();
	mem = bpfrt_execmem_alloc(sizeof(ret42));
	REQUIRE(mem != NULL, "errno %d", errno);
	CHECK(bpfrt_execmem_size(mem) == sizeof(ret42));
	REQUIRE(bpfrt_execmem_copy(mem, 0, ret42, sizeof(ret42)) == 0);
	CHECK(memcmp(bpfrt_execmem_addr(mem), ret42, sizeof(ret42)) == 0);
#if defined(__x86_64__)
	CHECK(run_image(mem, 0) == 42);
#endif
	/* The address code runs at is read+exec, never writable: a shared
	 * memfd view, or private anonymous memory for an anonymous-THP pack. */
	CHECK(scan_maps((uintptr_t)bpfrt_execmem_addr(mem), false, perms, sizeof(perms)));
	CHECK(!strcmp(perms, stats_now().packs[0].backing == BPFRT_EXECMEM_BACKING_THP_ANON ?
			     "r-xp" : "r-xs"), "perms %s", perms);
	bpfrt_execmem_free(mem);
}

TEST(execmem_new_memory_is_trap_filled)
{
	struct bpfrt_execmem *mem;

	fresh_state();
	mem = bpfrt_execmem_alloc(100);
	REQUIRE(mem != NULL);
	CHECK(all_traps(bpfrt_execmem_addr(mem), 100));
	bpfrt_execmem_free(mem);
}

TEST(execmem_bad_arguments)
{
	struct bpfrt_execmem *mem;

	fresh_state();
	errno = 0;
	CHECK(bpfrt_execmem_alloc(0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(bpfrt_execmem_alloc(SIZE_MAX) == NULL && errno == EINVAL);
	mem = bpfrt_execmem_alloc(16);
	REQUIRE(mem != NULL);
	CHECK(bpfrt_execmem_copy(mem, 10, ret42, sizeof(ret42)) == 0);
	CHECK(bpfrt_execmem_copy(mem, 11, ret42, sizeof(ret42)) == -ERANGE);
	CHECK(bpfrt_execmem_copy(mem, SIZE_MAX, ret42, 1) == -ERANGE);
	CHECK(bpfrt_execmem_copy(mem, 16, NULL, 0) == 0);
	CHECK(bpfrt_execmem_copy(mem, 0, NULL, 1) == -EINVAL);
	CHECK(bpfrt_execmem_copy(NULL, 0, ret42, 1) == -EINVAL);
	CHECK(memcmp((const uint8_t *)bpfrt_execmem_addr(mem) + 10, ret42, sizeof(ret42)) == 0);
	CHECK(bpfrt_execmem_addr(NULL) == NULL && bpfrt_execmem_size(NULL) == 0);
	CHECK(bpfrt_execmem_stats(NULL) == -EINVAL);
	bpfrt_execmem_free(mem);
	bpfrt_execmem_free(NULL);
}

TEST(execmem_random_start_within_slack)
{
	unsigned seen = 0; /* bit i: an image started at 16 * i in its chunk */
	struct bpfrt_execmem *mem;

	fresh_state();
	for (int i = 0; i < 200; i++) {
		uintptr_t off;

		mem = bpfrt_execmem_alloc(1);
		REQUIRE(mem != NULL);
		off = (uintptr_t)bpfrt_execmem_addr(mem) % CHUNK;
		CHECK(aligned_to(off, 16) && off + 1 <= CHUNK, "offset %lu", (unsigned long)off);
		seen |= 1u << (off / 16);
		bpfrt_execmem_free(mem);
	}
	/* 200 draws from 4 starts: all four appear unless randomness is broken. */
	CHECK(seen == 0xf, "starts seen %#x", seen);
	/* A whole chunk leaves no slack. */
	mem = bpfrt_execmem_alloc(CHUNK);
	REQUIRE(mem != NULL);
	CHECK(aligned_to((uintptr_t)bpfrt_execmem_addr(mem), CHUNK));
	bpfrt_execmem_free(mem);
	/* An own mapping randomizes within its page. */
	bpfrt_execmem_set_packing(false);
	seen = 0;
	for (int i = 0; i < 20; i++) {
		mem = bpfrt_execmem_alloc(100);
		REQUIRE(mem != NULL);
		uintptr_t off = (uintptr_t)bpfrt_execmem_addr(mem) % 4096;
		CHECK(aligned_to(off, 16) && off + 100 <= 4096);
		seen |= off != 0;
		bpfrt_execmem_free(mem);
	}
	CHECK(seen, "20 own mappings all started at offset 0");
	bpfrt_execmem_set_packing(true);
}

TEST(execmem_full_pack_spills_to_new_pack)
{
	static struct bpfrt_execmem *mems[CHUNKS];
	struct bpfrt_execmem *extra;
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	uintptr_t base;

	fresh_state();
	REQUIRE(stats_now().pack_cnt == 0, "leftover packs");
	for (size_t i = 0; i < CHUNKS; i++) {
		mems[i] = bpfrt_execmem_alloc(CHUNK);
		REQUIRE(mems[i] != NULL, "alloc %zu errno %d", i, errno);
	}
	st = stats_now();
	CHECK(st.pack_cnt == 1 && st.packs[0].chunks_used == CHUNKS,
	      "packs %u used %u", st.pack_cnt, st.packs[0].chunks_used);
	CHECK(st.bytes_used == PACK && st.image_cnt == CHUNKS);
	base = st.packs[0].addr;
	CHECK(aligned_to(base, PACK), "pack not 2 MiB aligned");
	/* First fit in a fresh pack hands chunks out in address order. */
	for (size_t i = 0; i < CHUNKS && !tl_failed(); i++)
		CHECK(chunk_of(mems[i]) == base + i * CHUNK, "image %zu", i);

	extra = bpfrt_execmem_alloc(1);
	REQUIRE(extra != NULL);
	st = stats_now();
	CHECK(st.pack_cnt == 2, "packs %u", st.pack_cnt);
	CHECK(chunk_of(extra) < base || chunk_of(extra) >= base + PACK);

	for (size_t i = 0; i < CHUNKS; i++)
		bpfrt_execmem_free(mems[i]);
	bpfrt_execmem_free(extra);
	st = stats_now();
	CHECK(st.image_cnt == 0 && st.pack_cnt == 1 && st.spare_cnt == 1,
	      "images %lu packs %u spare %u", (unsigned long)st.image_cnt, st.pack_cnt, st.spare_cnt);
}

TEST(execmem_first_fit_reuses_freed_chunks)
{
	struct bpfrt_execmem *mems[64], *wide, *again[32];
	uintptr_t base;

	fresh_state();
	for (int i = 0; i < 64; i++) {
		mems[i] = bpfrt_execmem_alloc(40);
		REQUIRE(mems[i] != NULL);
	}
	base = chunk_of(mems[0]);
	for (int i = 0; i < 64; i++)
		CHECK(chunk_of(mems[i]) == base + (uintptr_t)i * CHUNK);
	for (int i = 0; i < 64; i += 2)
		bpfrt_execmem_free(mems[i]);
	/* Two chunks fit in no one-chunk hole: first fit goes past the end. */
	wide = bpfrt_execmem_alloc(CHUNK + 1);
	REQUIRE(wide != NULL);
	CHECK(chunk_of(wide) == base + 64 * CHUNK, "wide at chunk %ld",
	      (long)((chunk_of(wide) - base) / CHUNK));
	/* One-chunk images refill the holes lowest first. */
	for (int i = 0; i < 32; i++) {
		again[i] = bpfrt_execmem_alloc(CHUNK);
		REQUIRE(again[i] != NULL);
		CHECK(chunk_of(again[i]) == base + (uintptr_t)(2 * i) * CHUNK, "image %d", i);
	}
	CHECK(stats_now().pack_cnt == 1);
	CHECK(stats_now().bytes_used == (64 + 2) * CHUNK);
	for (int i = 0; i < 32; i++) {
		bpfrt_execmem_free(again[i]);
		bpfrt_execmem_free(mems[2 * i + 1]);
	}
	bpfrt_execmem_free(wide);
}

TEST(execmem_large_image_gets_own_mapping)
{
	struct bpfrt_execmem *large, *exact;
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	size_t size = PACK + 1;

	fresh_state();
	large = bpfrt_execmem_alloc(size);
	REQUIRE(large != NULL);
	st = stats_now();
	CHECK(st.pack_cnt == 0 && st.own_cnt == 1, "packs %u own %u", st.pack_cnt, st.own_cnt);
	CHECK(st.bytes_mapped >= size);
	CHECK(all_traps(bpfrt_execmem_addr(large), size));
	REQUIRE(bpfrt_execmem_copy(large, size - sizeof(ret42), ret42, sizeof(ret42)) == 0);
	CHECK(bpfrt_execmem_copy(large, size - sizeof(ret42) + 1, ret42, sizeof(ret42)) == -ERANGE);
#if defined(__x86_64__)
	CHECK(run_image(large, size - sizeof(ret42)) == 42);
#endif
	/* Exactly one pack's worth still fits a pack. */
	exact = bpfrt_execmem_alloc(PACK);
	REQUIRE(exact != NULL);
	st = stats_now();
	CHECK(st.pack_cnt == 1 && st.own_cnt == 1 && st.packs[0].chunks_used == CHUNKS);
	CHECK((uintptr_t)bpfrt_execmem_addr(exact) == st.packs[0].addr);
	bpfrt_execmem_free(exact);
	bpfrt_execmem_free(large);
	st = stats_now();
	CHECK(st.own_cnt == 0 && st.image_cnt == 0);
}

TEST(execmem_empty_packs_returned)
{
	struct bpfrt_execmem *a1, *a2, *b;
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	void *pack_a, *pack_b;

	fresh_state();
	a1 = bpfrt_execmem_alloc(PACK / 2);
	a2 = bpfrt_execmem_alloc(PACK / 2);
	b = bpfrt_execmem_alloc(PACK / 2);
	REQUIRE(a1 && a2 && b);
	pack_a = bpfrt_execmem_addr(a1);
	pack_b = bpfrt_execmem_addr(b);
	st = stats_now();
	REQUIRE(st.pack_cnt == 2 && st.spare_cnt == 0, "packs %u", st.pack_cnt);
	/* The first pack to empty is kept as the one spare... */
	bpfrt_execmem_free(b);
	st = stats_now();
	CHECK(st.pack_cnt == 2 && st.spare_cnt == 1);
	CHECK(is_mapped(pack_b));
	/* ...a second empty pack goes back to the system at once... */
	bpfrt_execmem_free(a1);
	bpfrt_execmem_free(a2);
	st = stats_now();
	CHECK(st.pack_cnt == 1 && st.spare_cnt == 1 && st.bytes_used == 0,
	      "packs %u spare %u", st.pack_cnt, st.spare_cnt);
	CHECK(!is_mapped(pack_a), "emptied pack still mapped");
	/* ...and trim returns the spare. */
	bpfrt_execmem_trim();
	st = stats_now();
	CHECK(st.pack_cnt == 0 && st.spare_cnt == 0 && st.bytes_mapped == 0);
	CHECK(!is_mapped(pack_b), "trimmed pack still mapped");
}

TEST(execmem_spare_pack_is_reused)
{
	struct bpfrt_execmem *mem;
	uintptr_t first;

	fresh_state();
	mem = bpfrt_execmem_alloc(200);
	REQUIRE(mem != NULL);
	first = chunk_of(mem) & ~(uintptr_t)(PACK - 1);
	bpfrt_execmem_free(mem);
	mem = bpfrt_execmem_alloc(200);
	REQUIRE(mem != NULL);
	CHECK((chunk_of(mem) & ~(uintptr_t)(PACK - 1)) == first);
	CHECK(stats_now().pack_cnt == 1 && stats_now().spare_cnt == 0);
	bpfrt_execmem_free(mem);
}

TEST(execmem_freed_chunks_are_traps)
{
	uint8_t code[300];
	struct bpfrt_execmem *pin, *mem;
	uint8_t *start;
	uintptr_t chunk;
	pid_t pid;
	int status;

	fresh_state();
	pin = bpfrt_execmem_alloc(8); /* keeps the pack mapped after the free */
	mem = bpfrt_execmem_alloc(sizeof(code));
	REQUIRE(pin && mem);
	memset(code, 0x90, sizeof(code)); /* nop sled... */
	memcpy(code + sizeof(code) - sizeof(ret42), ret42, sizeof(ret42)); /* ...into ret 42 */
	REQUIRE(bpfrt_execmem_copy(mem, 0, code, sizeof(code)) == 0);
	start = bpfrt_execmem_addr(mem);
	chunk = chunk_of(mem);
#if defined(__x86_64__)
	CHECK(run_image(mem, 0) == 42);
#endif
	bpfrt_execmem_free(mem);
	CHECK(all_traps((void *)chunk, 5 * CHUNK), "freed chunks not refilled");
#if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv)
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		((int_fn)(void *)start)();
		_exit(0); /* the freed code ran: the parent sees status 0 */
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP, "child status %#x", status);
#else
	(void)start; (void)pid; (void)status;
#endif
	bpfrt_execmem_free(pin);
}

TEST(execmem_no_pack_switch)
{
	struct bpfrt_execmem *mems[10], *packed;
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };

	fresh_state();
	packed = bpfrt_execmem_alloc(64);
	REQUIRE(packed != NULL);
	bpfrt_execmem_set_packing(false);
	CHECK(!bpfrt_execmem_packing() && !stats_now().packing);
	for (int i = 0; i < 10; i++) {
		mems[i] = bpfrt_execmem_alloc(sizeof(ret42));
		REQUIRE(mems[i] != NULL);
		REQUIRE(bpfrt_execmem_copy(mems[i], 0, ret42, sizeof(ret42)) == 0);
#if defined(__x86_64__)
		CHECK(run_image(mems[i], 0) == 42);
#endif
	}
	st = stats_now();
	CHECK(st.own_cnt == 10 && st.pack_cnt == 1 && st.packs[0].chunks_used == 1,
	      "own %u packs %u", st.own_cnt, st.pack_cnt);
	for (int i = 0; i < 10; i++)
		for (int j = 0; j < i; j++)
			CHECK(((uintptr_t)bpfrt_execmem_addr(mems[i]) >> 12) !=
			      ((uintptr_t)bpfrt_execmem_addr(mems[j]) >> 12), "share a page");
	bpfrt_execmem_set_packing(true);
	/* Images keep the kind they were made with. */
	for (int i = 0; i < 10; i++)
		bpfrt_execmem_free(mems[i]);
	bpfrt_execmem_free(packed);
	st = stats_now();
	CHECK(st.own_cnt == 0 && st.image_cnt == 0 && st.bytes_used == 0);
}

/* Runs in a child started by execmem_no_pack_env with BPFRT_NO_PACK=1. */
TEST(execmem_env_child)
{
	struct bpfrt_execmem *mem;

	if (!getenv("BPFRT_NO_PACK"))
		SKIP("runs in the child of execmem_no_pack_env");
	CHECK(!bpfrt_execmem_packing());
	mem = bpfrt_execmem_alloc(10);
	REQUIRE(mem != NULL);
	CHECK(stats_now().own_cnt == 1 && stats_now().pack_cnt == 0);
	bpfrt_execmem_free(mem);
}

TEST(execmem_no_pack_env)
{
	char out[4096];
	int status;

	if (getenv("BPFRT_NO_PACK"))
		SKIP("already the child");
	status = tl_run_self_with_env("BPFRT_NO_PACK", "1", "execmem_env_child", out, sizeof(out));
	CHECK(tl_child_passed(status, out, "execmem_env_child"), "status %#x: %s", status, out);
}

/* Pack backing matches what the system offers; prints it for the log. */
TEST(execmem_reports_backing)
{
	struct bpfrt_execmem *mem;
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	char line[256];
	long huge_free = 0;
	FILE *f;

	fresh_state();
	mem = bpfrt_execmem_alloc(64);
	REQUIRE(mem != NULL);
	st = stats_now();
	REQUIRE(st.pack_cnt == 1 && st.pack_info_cnt == 1);
	f = fopen("/proc/meminfo", "re");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "HugePages_Free: %ld", &huge_free);
	if (f)
		fclose(f);
	printf("# pack backing: %s (HugePages_Free %ld)\n",
	       bpfrt_execmem_backing_name(st.packs[0].backing), huge_free);
	CHECK(st.packs_by_backing[st.packs[0].backing] == 1);
	if (huge_free > 0)
		CHECK(st.packs[0].backing == BPFRT_EXECMEM_BACKING_HUGETLB);
	else
		CHECK(st.packs[0].backing != BPFRT_EXECMEM_BACKING_HUGETLB);
	CHECK(!strcmp(bpfrt_execmem_backing_name(99), "unknown"));
	{
		char *text = NULL, want[128];
		size_t text_len = 0;
		FILE *mf = open_memstream(&text, &text_len);

		REQUIRE(mf != NULL);
		CHECK(bpfrt_execmem_dump(mf) == 0);
		fclose(mf);
		snprintf(want, sizeof(want), "pack %#llx: %s, 1/%u chunks used\n",
			 (unsigned long long)st.packs[0].addr,
			 bpfrt_execmem_backing_name(st.packs[0].backing), (unsigned)CHUNKS);
		CHECK(strstr(text, "packs: 1 (") && strstr(text, want), "%s", text);
		free(text);
	}
	bpfrt_execmem_free(mem);
}

/* A forked child gets private copies: its frees and new images must not
 * touch the parent's code, nor the parent's the child's. */
static int fork_child_work(struct bpfrt_execmem *a, struct bpfrt_execmem *own)
{
	static const uint8_t ret99[] = { 0xb8, 0x63, 0x00, 0x00, 0x00, 0xc3 };
	struct bpfrt_execmem *c;

#if defined(__x86_64__)
	if (run_image(a, 0) != 42 || run_image(own, 0) != 42)
		return 1;
#endif
	bpfrt_execmem_free(a);
	bpfrt_execmem_free(own);
	c = bpfrt_execmem_alloc(sizeof(ret99)); /* likely a's old chunk */
	if (!c || bpfrt_execmem_copy(c, 0, ret99, sizeof(ret99)))
		return 2;
#if defined(__x86_64__)
	if (run_image(c, 0) != 99)
		return 3;
#endif
	return 0;
}

TEST(execmem_fork_child_gets_private_copy)
{
	struct bpfrt_execmem *a, *own;
	pid_t pid;
	int status;

	fresh_state();
	a = bpfrt_execmem_alloc(sizeof(ret42));
	bpfrt_execmem_set_packing(false);
	own = bpfrt_execmem_alloc(sizeof(ret42));
	bpfrt_execmem_set_packing(true);
	REQUIRE(a && own);
	REQUIRE(bpfrt_execmem_copy(a, 0, ret42, sizeof(ret42)) == 0);
	REQUIRE(bpfrt_execmem_copy(own, 0, ret42, sizeof(ret42)) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(fork_child_work(a, own));
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	CHECK(memcmp(bpfrt_execmem_addr(a), ret42, sizeof(ret42)) == 0, "child's free hit the parent");
	CHECK(memcmp(bpfrt_execmem_addr(own), ret42, sizeof(ret42)) == 0, "child's free hit the parent");
#if defined(__x86_64__)
	CHECK(run_image(a, 0) == 42 && run_image(own, 0) == 42);
#endif
	bpfrt_execmem_free(a);
	bpfrt_execmem_free(own);
}

TEST(execmem_patch_live_code)
{
	/* mov eax, imm32; ret, placed so the imm32 is 4-byte aligned. */
	static const uint8_t code[] = { 0x90, 0x90, 0x90, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3 };
	struct bpfrt_execmem *mem, *packed;
	uint32_t imm = 1234;
	uint64_t wide = 0;
	size_t base;

	fresh_state();
	/* An anonymous-THP pack has no alias to store through atomically:
	 * patching its images is refused, other packs patch as own maps. */
	packed = bpfrt_execmem_alloc(64);
	REQUIRE(packed != NULL);
	if (stats_now().packs[0].backing == BPFRT_EXECMEM_BACKING_THP_ANON)
		CHECK(bpfrt_execmem_patch(packed, 0, &imm, 4) == -EOPNOTSUPP);
	else
		CHECK(bpfrt_execmem_patch(packed, 0, &imm, 4) == 0);
	bpfrt_execmem_free(packed);
	/* Patched code (trampolines) lives in mappings of its own. */
	bpfrt_execmem_set_packing(false);
	mem = bpfrt_execmem_alloc(64);
	bpfrt_execmem_set_packing(true);
	REQUIRE(mem != NULL);
	base = (16 - (uintptr_t)bpfrt_execmem_addr(mem) % 16) % 16; /* addr is 16-aligned: 0 */
	REQUIRE(bpfrt_execmem_copy(mem, base, code, sizeof(code)) == 0);
#if defined(__x86_64__)
	CHECK(run_image(mem, base) == 1);
#endif
	CHECK(bpfrt_execmem_patch(mem, base + 4, &imm, 4) == 0);
#if defined(__x86_64__)
	CHECK(run_image(mem, base) == 1234);
#endif
	CHECK(bpfrt_execmem_patch(mem, base + 5, &imm, 4) == -EINVAL, "misaligned");
	CHECK(bpfrt_execmem_patch(mem, base + 4, &imm, 3) == -EINVAL, "odd length");
	CHECK(bpfrt_execmem_patch(mem, 64, &imm, 4) == -ERANGE);
	CHECK(bpfrt_execmem_patch(mem, 56, &wide, 8) == 0);
	CHECK(bpfrt_execmem_patch(NULL, 0, &imm, 4) == -EINVAL);
	bpfrt_execmem_free(mem);
}

/* A chunk freed and handed to a new image runs the new image's code, not
 * what ran there before: on real CPUs by the cache flush, under qemu-user
 * (which keeps translations of the old code) by re-mapping the pages. */
TEST(execmem_rewritten_chunk_runs_new_code)
{
	uint8_t code[8];
	struct bpfrt_execmem *pin, *mem;
	uintptr_t chunk = 0;

	fresh_state();
	pin = bpfrt_execmem_alloc(8); /* keeps the pack */
	REQUIRE(pin != NULL);
	for (uint32_t round = 1; round <= 3; round++) {
		/* A whole chunk: no random start, so the same address each round. */
		mem = bpfrt_execmem_alloc(CHUNK);
		REQUIRE(mem != NULL);
		if (round == 1)
			chunk = chunk_of(mem);
		CHECK(chunk_of(mem) == chunk, "round %u: another chunk", round);
		ret_code(code, 100 + round);
		REQUIRE(bpfrt_execmem_copy(mem, 0, code, sizeof(code)) == 0);
		CHECK(run_image(mem, 0) == (int)(100 + round), "round %u ran %d", round,
		      run_image(mem, 0));
		/* Rewritten in place while allocated, too. */
		ret_code(code, 200 + round);
		REQUIRE(bpfrt_execmem_copy(mem, 0, code, sizeof(code)) == 0);
		CHECK(run_image(mem, 0) == (int)(200 + round), "round %u rewrite ran %d", round,
		      run_image(mem, 0));
		bpfrt_execmem_free(mem);
	}
	bpfrt_execmem_free(pin);
	/* Re-mapping pages must not splinter the pack into many mappings. */
	{
		char line[512];
		int vmas = 0;
		FILE *f = fopen("/proc/self/maps", "re");

		while (f && fgets(line, sizeof(line), f))
			vmas += strstr(line, "bpfrt-jit") != NULL;
		if (f)
			fclose(f);
		CHECK(vmas <= 2, "%d bpfrt-jit mappings", vmas);
	}
}

/* Where anonymous THP is enabled (always or madvise) and no hugetlb page is
 * reserved, packs are one PMD-mapped huge page of private anonymous memory,
 * never writable, written through /proc/self/mem, and stay huge across
 * writes, frees and a fork. */
TEST(execmem_anon_thp_pack)
{
	static struct bpfrt_execmem *mems[1000];
	uint8_t code[8];
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };
	char perms[512];
	void *pack;
	int pipefd[2], readyfd[2], status;
	pid_t pid;

	fresh_state();
	if (!anon_thp_possible())
		SKIP("transparent_hugepage/enabled is never");
	if (pack_backing() == BPFRT_EXECMEM_BACKING_HUGETLB)
		SKIP("hugetlb pages are reserved: packs take them first");
	bpfrt_execmem_trim();
	for (int i = 0; i < 1000; i++) {
		mems[i] = bpfrt_execmem_alloc(40 + (size_t)i % 200);
		REQUIRE(mems[i] != NULL);
		ret_code(code, (uint32_t)i);
		REQUIRE(bpfrt_execmem_copy(mems[i], 0, code, sizeof(code)) == 0);
	}
	st = stats_now();
	REQUIRE(st.pack_cnt == 1, "packs %u", st.pack_cnt);
	/* The huge page may fail to materialise (fragmented memory): then
	 * the pack falls back to a memfd and says so. */
	if (st.packs[0].backing != BPFRT_EXECMEM_BACKING_THP_ANON) {
		printf("# no huge page for the pack: backing %s\n",
		       bpfrt_execmem_backing_name(st.packs[0].backing));
		CHECK(st.packs[0].backing != BPFRT_EXECMEM_BACKING_HUGETLB);
		for (int i = 0; i < 1000; i++)
			bpfrt_execmem_free(mems[i]);
		return;
	}
	CHECK(st.packs_by_backing[BPFRT_EXECMEM_BACKING_THP_ANON] == 1);
	pack = (void *)(uintptr_t)st.packs[0].addr;
	/* One private r-x mapping; no alias anywhere. */
	CHECK(scan_maps((uintptr_t)pack, false, perms, sizeof(perms)) && !strcmp(perms, "r-xp"),
	      "perms %s", perms);
	CHECK(smaps_field(pack, "AnonHugePages") == 2048, "AnonHugePages %ld kB",
	      smaps_field(pack, "AnonHugePages"));
	CHECK(smaps_field(pack, "Size") == 2048, "mapping %ld kB", smaps_field(pack, "Size"));
	/* Writes through /proc/self/mem landed and run. */
	for (int i = 0; i < 1000 && !tl_failed(); i++) {
		ret_code(code, (uint32_t)i);
		CHECK(memcmp(bpfrt_execmem_addr(mems[i]), code, sizeof(code)) == 0, "image %d", i);
		CHECK(run_image(mems[i], 0) == i, "image %d", i);
	}
	/* Freed chunks are traps, and executing one traps. */
	{
		uintptr_t chunk = chunk_of(mems[500]);
		size_t len = (bpfrt_execmem_size(mems[500]) + CHUNK - 1) / CHUNK * CHUNK;

		bpfrt_execmem_free(mems[500]);
		mems[500] = NULL;
		CHECK(all_traps((void *)chunk, len), "freed chunk not refilled");
		fflush(NULL);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			((int_fn)chunk)();
			_exit(0);
		}
		REQUIRE(waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP, "child status %#x", status);
	}
	/* A live child does not cost the parent its huge page: the child
	 * takes its own copy at fork (before fork returns in the child), so
	 * the parent's later writes copy nothing. */
	REQUIRE(pipe(pipefd) == 0);
	REQUIRE(pipe(readyfd) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		char c = 0;

		close(pipefd[1]);
		close(readyfd[0]);
		ret_code(code, 7);
		/* The child's own writes and runs work as well. */
		if (bpfrt_execmem_copy(mems[7], 0, code, sizeof(code)) || run_image(mems[7], 0) != 7 ||
		    run_image(mems[8], 0) != 8)
			_exit(2);
		(void)!write(readyfd[1], &c, 1);
		(void)!read(pipefd[0], &c, 1);
		_exit(0);
	}
	close(pipefd[0]);
	close(readyfd[1]);
	{
		char c;

		(void)!read(readyfd[0], &c, 1);
		close(readyfd[0]);
	}
	ret_code(code, 999);
	CHECK(bpfrt_execmem_copy(mems[9], 0, code, sizeof(code)) == 0);
	CHECK(run_image(mems[9], 0) == 999);
	CHECK(smaps_field(pack, "AnonHugePages") == 2048, "after a write with a child alive: %ld kB",
	      smaps_field(pack, "AnonHugePages"));
	close(pipefd[1]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	for (int i = 0; i < 1000; i++)
		bpfrt_execmem_free(mems[i]);
	st = stats_now();
	CHECK(st.image_cnt == 0 && st.pack_cnt == 1 && st.spare_cnt == 1);
	CHECK(smaps_field(pack, "AnonHugePages") == 2048, "after frees: %ld kB",
	      smaps_field(pack, "AnonHugePages"));
	bpfrt_execmem_trim();
	CHECK(!is_mapped(pack), "trimmed pack still mapped");
}

/* ---- concurrency ------------------------------------------------------------ */

#define CHURN_ITERS 200000
#define CHURN_LIVE  32

struct churn {
	int id;
	int errors;
};

static atomic_bool churn_done;
static atomic_int wx_seen;

static size_t churn_size(uint32_t *rng)
{
	*rng = *rng * 1103515245u + 12345u;
	return 6 + (*rng >> 8) % 250; /* 1 to 4 chunks: many allocations per second */
}

/* An image of `size` bytes: mov eax, tag; ret; then bytes derived from tag. */
static void churn_image(uint8_t *buf, size_t size, uint32_t tag)
{
	buf[0] = 0xb8;
	memcpy(buf + 1, &tag, 4);
	buf[5] = 0xc3;
	for (size_t i = 6; i < size; i++)
		buf[i] = (uint8_t)(tag * 31 + i);
}

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	struct bpfrt_execmem *live[CHURN_LIVE] = { 0 };
	uint32_t tags[CHURN_LIVE], rng = 0x9e37u * (uint32_t)(c->id + 1);
	uint8_t buf[256];

	for (uint32_t it = 0; it < CHURN_ITERS; it++) {
		int slot = (int)(it % CHURN_LIVE);
		uint32_t tag = ((uint32_t)c->id << 24) | it;
		size_t size;

		if (live[slot]) {
			struct bpfrt_execmem *old = live[slot];

			churn_image(buf, bpfrt_execmem_size(old), tags[slot]);
			if (memcmp(bpfrt_execmem_addr(old), buf, bpfrt_execmem_size(old)))
				c->errors++; /* someone else wrote into our chunks */
			bpfrt_execmem_free(old);
		}
		size = churn_size(&rng);
		live[slot] = bpfrt_execmem_alloc(size);
		if (!live[slot]) {
			c->errors++;
			continue;
		}
		tags[slot] = tag;
		churn_image(buf, size, tag);
		if (bpfrt_execmem_copy(live[slot], 0, buf, size))
			c->errors++;
#if defined(__x86_64__)
		if ((uint32_t)run_image(live[slot], 0) != tag)
			c->errors++;
#endif
	}
	for (int i = 0; i < CHURN_LIVE; i++)
		bpfrt_execmem_free(live[i]);
	return NULL;
}

static void *wx_scanner(void *arg)
{
	char line[512];

	(void)arg;
	/* Sleeps between scans to leave the two cores to the churners. */
	while (!atomic_load(&churn_done)) {
		if (have_wx_mapping(line, sizeof(line)))
			atomic_store(&wx_seen, 1);
		usleep(2000);
	}
	return NULL;
}

TEST(execmem_concurrent_alloc_free)
{
	pthread_t th[2], scanner;
	struct churn c[2] = { { .id = 1 }, { .id = 2 } };
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };

	fresh_state();
	atomic_store(&churn_done, false);
	atomic_store(&wx_seen, 0);
	REQUIRE(pthread_create(&scanner, NULL, wx_scanner, NULL) == 0);
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&th[i], NULL, churn_thread, &c[i]) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	atomic_store(&churn_done, true);
	pthread_join(scanner, NULL);
	CHECK(c[0].errors == 0 && c[1].errors == 0, "errors %d %d", c[0].errors, c[1].errors);
	CHECK(!atomic_load(&wx_seen), "writable+executable mapping seen during churn");
	st = stats_now();
	CHECK(st.image_cnt == 0 && st.bytes_used == 0 && st.pack_cnt <= 1,
	      "images %lu bytes %lu packs %u", (unsigned long)st.image_cnt,
	      (unsigned long)st.bytes_used, st.pack_cnt);
}

/* Last: nothing the whole run made is writable and executable. */
TEST(execmem_no_wx_mapping)
{
	struct bpfrt_execmem *small, *large;
	char line[512];

	fresh_state();
	small = bpfrt_execmem_alloc(100);
	large = bpfrt_execmem_alloc(PACK * 2);
	bpfrt_execmem_set_packing(false);
	struct bpfrt_execmem *own = bpfrt_execmem_alloc(100);
	bpfrt_execmem_set_packing(true);
	REQUIRE(small && large && own);
	CHECK(!have_wx_mapping(line, sizeof(line)), "w+x mapping: %s", line);
	bpfrt_execmem_free(small);
	bpfrt_execmem_free(large);
	bpfrt_execmem_free(own);
	bpfrt_execmem_trim();
}
