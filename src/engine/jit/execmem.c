/* Executable memory with W^X: code lives either in memfd pages mapped
 * twice, a writable alias that is never executable and an executable view
 * that is never writable, or (prog packs, where the system gives one) in a
 * private anonymous transparent huge page mapped r-x only and written
 * through /proc/self/mem, whose FOLL_FORCE write fills the page without
 * ever making the mapping writable (what text_poke does to host text).
 * Code reaches the executable view only through bpfrt_execmem_copy, the
 * userspace counterpart of text_poke. Small images share 2 MiB prog packs
 * (prog_pack.c); large ones, or every image when packing is off, get a
 * view of their own.
 *
 * Instruction fetch must see what is written through the alias. Real CPUs
 * do once the caches are synchronised (__builtin___clear_cache); qemu-user
 * does not: it drops translated code only for writes to the executing
 * virtual page, or when the page is mapped again. A self-test at the first
 * allocation finds out, and where it is needed every write is followed by
 * re-mapping the pages it touched from the same memfd offset (MAP_FIXED
 * replaces the pages atomically for threads running other code there).
 *
 * memfd views are MAP_SHARED, so a forked child would share them with its
 * parent and each side's frees and new images would rewrite the other's
 * code; the child therefore swaps every view for a private copy at fork
 * (one copy of all code memory per fork; posix_spawn and vfork do not pay
 * it). Anonymous views are private already, but until one side copies, a
 * write by the parent would break copy-on-write into 4 KiB pages: the
 * child takes its own copy so that the parent keeps its huge page. */
#define _GNU_SOURCE
#include "jit/execmem.h"
#include "jit/backend.h"
#include "jit/prog_pack.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"
#include "core/opts.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004u
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008u
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26)
#endif

/* PAGEMAP_SCAN (Linux 6.7) from linux/fs.h, which older headers lack. */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PAGE_IS_HUGE (1 << 6)
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

#define IMAGE_ALIGN 16 /* a randomized start keeps instruction-fetch alignment */

struct bpfrt_execmem {
	char *exec;              /* image start in the executable view */
	size_t size;             /* bytes the caller asked for */
	struct prog_pack *pack;  /* NULL: the image has `own` to itself */
	uint32_t first_chunk, nchunks;
	struct execmem_view own;
	struct bpfrt_execmem *own_prev, *own_next; /* own_list links */
};

/* Own mappings, listed and counted under execmem_lock. */
static struct bpfrt_execmem *own_list;
static uint32_t own_cnt;
static uint64_t own_bytes;
static uint64_t image_cnt;

/* ---- traps and randomness --------------------------------------------- */

void execmem_fill_traps(void *dst, size_t len)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();

	if (be && be->fill_traps) {
		be->fill_traps(dst, len);
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	memset(dst, 0xcc, len); /* int3, until the backend provides its own */
#else
	memset(dst, 0, len);    /* an all-zero word is undefined on arm64/riscv */
#endif
}

/* splitmix64 seeded per thread from getrandom: offsets must be hard to
 * guess but need not be cryptographic, and a syscall per image is waste. */
static uint64_t random_u64(void)
{
	static __thread uint64_t state;
	uint64_t z;

	if (!state) {
		if (getrandom(&state, sizeof(state), GRND_NONBLOCK) != sizeof(state))
			state = (uint64_t)time(NULL) ^ (uintptr_t)&state;
		state |= 1;
	}
	z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A random IMAGE_ALIGN-aligned start in [0, slack]. */
static size_t random_start(size_t slack)
{
	if (slack < IMAGE_ALIGN)
		return 0;
	return (size_t)(random_u64() % (slack + 1)) & ~(size_t)(IMAGE_ALIGN - 1);
}

/* ---- mappings ------------------------------------------------------------ */

static size_t page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

/* Maps fd (or anonymous memory: fd -1, MAP_ANONYMOUS in flags) at an
 * address aligned to align (a power of two), by reserving len + align
 * bytes and mapping over the aligned part. hint: where the caller would
 * like page-aligned mappings (bpfrt_execmem_alloc_near), or NULL. */
static char *map_aligned(int fd, size_t len, size_t align, int prot, int flags, void *hint)
{
	char *res, *start;
	size_t extra;

	if (align <= page_size()) {
		res = mmap(hint, len, prot, flags, fd, 0);
		return res == MAP_FAILED ? NULL : res;
	}
	extra = align;
	res = mmap(NULL, len + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return NULL;
	start = (char *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
	if (mmap(start, len, prot, flags | MAP_FIXED, fd, 0) == MAP_FAILED) {
		int err = errno;

		munmap(res, len + extra);
		errno = err;
		return NULL;
	}
	if (start > res)
		munmap(res, (size_t)(start - res));
	if (start + len < res + len + extra)
		munmap(start + len, (size_t)(res + len + extra - (start + len)));
	return start;
}

/* A memfd for code. Where vm.memfd_noexec=2 demands MFD_NOEXEC_SEAL, that
 * flag is given: it only clears the file's exec mode bits, which execve
 * checks and mmap(PROT_EXEC) does not. */
static int code_memfd(const char *name, unsigned int flags)
{
	int fd = memfd_create(name, MFD_CLOEXEC | flags);

	if (fd < 0 && (errno == EACCES || errno == EINVAL))
		fd = memfd_create(name, MFD_CLOEXEC | MFD_NOEXEC_SEAL | flags);
	return fd;
}

/* Maps a memfd twice; keep_fd leaves it open in view->fd for re-mapping;
 * exec_hint: where the executable view should go, or NULL. */
static int map_both(struct execmem_view *view, size_t len, unsigned int mfd_flags, size_t align,
		    bool keep_fd, void *exec_hint)
{
	int fd, err = 0;

	fd = code_memfd(mfd_flags & MFD_HUGETLB ? "bpfrt-jit-hugetlb" : "bpfrt-jit", mfd_flags);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		err = -errno;
		goto out;
	}
	view->alias = map_aligned(fd, len, align, PROT_READ | PROT_WRITE, MAP_SHARED, NULL);
	if (!view->alias) {
		err = -errno;
		goto out;
	}
	view->exec = map_aligned(fd, len, align, PROT_READ | PROT_EXEC, MAP_SHARED, exec_hint);
	if (!view->exec) {
		err = -errno;
		munmap(view->alias, len);
		view->alias = NULL;
		goto out;
	}
	view->len = len;
	if (keep_fd) {
		view->fd = fd;
		return 0;
	}
out:
	close(fd); /* the mappings keep the memory */
	return err;
}

/* ---- writes through /proc/self/mem ----------------------------------------- */

/* Opened at the first anonymous-THP pack and reopened in a forked child
 * (the fd names the mm of the process that opened it). text_poke.c has its
 * own, serialised by its poke lock; this one is used without a lock by
 * threads copying images, and pwrite needs none. */
static _Atomic int proc_mem_fd = -1;

static int proc_mem(void)
{
	int fd = atomic_load_explicit(&proc_mem_fd, memory_order_acquire), none = -1;

	if (fd >= 0)
		return fd;
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return bpfrt_err(-errno, "execmem: cannot open /proc/self/mem: %s", strerror(errno));
	if (!atomic_compare_exchange_strong(&proc_mem_fd, &none, fd)) {
		close(fd); /* another thread opened it first */
		fd = none;
	}
	return fd;
}

/* Writes len bytes at dst through /proc/self/mem. The kernel writes a
 * read-only private mapping by FOLL_FORCE and copies no page that is this
 * process's alone, so a huge page stays one. */
static int proc_mem_write(char *dst, const void *src, size_t len)
{
	int fd = proc_mem();

	if (fd < 0)
		return fd;
	while (len) {
		ssize_t n = pwrite(fd, src, len, (off_t)(uintptr_t)dst);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return bpfrt_err(n < 0 ? -errno : -EIO,
					 "execmem: write of %zu bytes at %p through /proc/self/mem failed: %s",
					 len, (void *)dst, n < 0 ? strerror(errno) : "nothing written");
		dst += n;
		src = (const char *)src + n;
		len -= (size_t)n;
	}
	return 0;
}

#define TRAP_BUF 4096 /* a multiple of every trap instruction's length */
static uint8_t trap_buf[TRAP_BUF];
static pthread_once_t trap_buf_once = PTHREAD_ONCE_INIT;

static void trap_buf_init(void)
{
	execmem_fill_traps(trap_buf, sizeof(trap_buf));
}

/* Trap-fills len bytes at dst (4-byte aligned) through /proc/self/mem, up
 * to 64 pages per system call. */
static int proc_mem_fill_traps(char *dst, size_t len)
{
	struct iovec iov[64];
	size_t done = 0;
	int fd = proc_mem();

	if (fd < 0)
		return fd;
	pthread_once(&trap_buf_once, trap_buf_init);
	while (done < len) {
		size_t at = done, phase = done % TRAP_BUF; /* after a short write */
		int cnt = 0;
		ssize_t n;

		while (cnt < 64 && at < len) {
			size_t piece = TRAP_BUF - phase < len - at ? TRAP_BUF - phase : len - at;

			iov[cnt].iov_base = trap_buf + phase;
			iov[cnt++].iov_len = piece;
			at += piece;
			phase = 0;
		}
		n = pwritev(fd, iov, cnt, (off_t)(uintptr_t)(dst + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return bpfrt_err(n < 0 ? -errno : -EIO,
					 "execmem: trap fill at %p through /proc/self/mem failed: %s",
					 (void *)(dst + done), n < 0 ? strerror(errno) : "nothing written");
		done += (size_t)n;
	}
	return 0;
}

/* ---- making writes visible to instruction fetch ----------------------------- */

enum code_sync {
	SYNC_CACHE,  /* clearing the caches is enough (real CPUs) */
	SYNC_REMAP,  /* the executable pages must be mapped again (qemu-user) */
	SYNC_BROKEN, /* not even that helps: packing defaults to off */
};

static int code_sync = SYNC_CACHE;
static pthread_once_t code_sync_once = PTHREAD_ONCE_INIT;
static atomic_int packing_state; /* 0: not decided yet, 1: on, 2: off */

/* Writes code that returns n (< 2048) into buf; false if this architecture
 * has no encoding here. */
static bool encode_ret(uint8_t buf[8], uint32_t n)
{
#if defined(__x86_64__) || defined(__i386__)
	buf[0] = 0xb8; /* mov eax, n; ret */
	memcpy(buf + 1, &n, 4);
	buf[5] = 0xc3;
	buf[6] = buf[7] = 0xcc;
	return true;
#elif defined(__aarch64__)
	uint32_t insn[2] = { 0x52800000u | n << 5, 0xd65f03c0u }; /* movz w0, #n; ret */

	memcpy(buf, insn, 8);
	return true;
#elif defined(__riscv)
	uint32_t insn[2] = { 0x00000513u | n << 20, 0x00008067u }; /* li a0, n; ret */

	memcpy(buf, insn, 8);
	return true;
#else
	(void)buf; (void)n;
	return false;
#endif
}

static int remap_exec(const struct execmem_view *view, uintptr_t lo, uintptr_t hi)
{
	size_t off = lo - (uintptr_t)view->exec;

	if (mmap((void *)lo, hi - lo, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, view->fd,
		 (off_t)off) == MAP_FAILED)
		return bpfrt_err(-errno, "execmem: re-mapping code at %#lx..%#lx failed: %s",
				 (unsigned long)lo, (unsigned long)hi, strerror(errno));
	/* The new mapping must carry the hint, or it would not merge with
	 * its neighbours and the pack would splinter. */
	if (view->backing == BPFRT_EXECMEM_BACKING_THP_SHMEM)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	return 0;
}

/* Makes instruction fetch see the len bytes just written at exec. */
static int view_sync(const struct execmem_view *view, char *exec, size_t len)
{
	size_t unit = view->backing == BPFRT_EXECMEM_BACKING_HUGETLB ? view->len : page_size();
	uintptr_t lo, hi;

	__builtin___clear_cache(exec, exec + len);
	if (view->fd < 0 || !len)
		return 0;
	lo = ((uintptr_t)exec - (uintptr_t)view->exec) / unit * unit + (uintptr_t)view->exec;
	hi = (uintptr_t)exec + len;
	hi = lo + (hi - lo + unit - 1) / unit * unit;
	return remap_exec(view, lo, hi);
}

/* The self-test: runs code written through an alias, rewrites it, runs it
 * again. Real CPUs run the new code; qemu-user runs its stale translation
 * until the page is mapped again. */
static void probe_code_sync(void)
{
	struct execmem_view v = { .fd = -1 };
	uint8_t code[8];
	int (*fn)(void);

	if (!encode_ret(code, 1) || map_both(&v, page_size(), 0, page_size(), true, NULL))
		return; /* nothing to test with: trust the caches */
	fn = (int (*)(void))(void *)v.exec;
	memcpy(v.alias, code, sizeof(code));
	__builtin___clear_cache(v.exec, v.exec + sizeof(code));
	if (fn() == 1) {
		encode_ret(code, 2);
		memcpy(v.alias, code, sizeof(code));
		__builtin___clear_cache(v.exec, v.exec + sizeof(code));
		if (fn() != 2) {
			code_sync = SYNC_REMAP;
			if (remap_exec(&v, (uintptr_t)v.exec, (uintptr_t)v.exec + v.len) || fn() != 2)
				code_sync = SYNC_BROKEN;
		}
	}
	munmap(v.exec, v.len);
	munmap(v.alias, v.len);
	close(v.fd);
	if (code_sync == SYNC_BROKEN) {
		int undecided = 0;

		/* Images in their own mappings are written before anything
		 * runs there; reused pack chunks would run stale code. */
		atomic_compare_exchange_strong(&packing_state, &undecided, 2);
	}
}

static void execmem_init(void)
{
	pthread_once(&code_sync_once, probe_code_sync);
}

/* ---- views ----------------------------------------------------------------- */

static int view_write(const struct execmem_view *view, char *exec, const void *src, size_t len)
{
	if (!view->alias)
		return proc_mem_write(exec, src, len);
	memcpy(view->alias + (exec - view->exec), src, len);
	return 0;
}

static int view_fill_traps(const struct execmem_view *view, char *exec, size_t len)
{
	if (!view->alias)
		return proc_mem_fill_traps(exec, len);
	execmem_fill_traps(view->alias + (exec - view->exec), len);
	return 0;
}

/* The bracketed word of a sysfs THP setting, e.g. "advise" from
 * "always within_size [advise] never deny force". */
static bool read_thp_setting(const char *path, char *word, size_t len)
{
	char buf[256], *open, *close_br;
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok || !(open = strchr(buf, '[')) || !(close_br = strchr(open, ']')))
		return false;
	*close_br = '\0';
	snprintf(word, len, "%s", open + 1);
	return true;
}

/* The THP setting for 2 MiB pages: the per-size knob of newer kernels wins
 * unless it says "inherit". */
static bool thp_setting(const char *file, char *word, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/%s", file);
	if (read_thp_setting(path, word, len) && strcmp(word, "inherit"))
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s", file);
	return read_thp_setting(path, word, len);
}

/* True if a memfd may get 2 MiB shmem THP (with MADV_HUGEPAGE). */
static bool shmem_thp_allowed(void)
{
	char word[32] = "";

	if (!thp_setting("shmem_enabled", word, sizeof(word)))
		return false;
	return !strcmp(word, "always") || !strcmp(word, "within_size") ||
	       !strcmp(word, "advise") || !strcmp(word, "force");
}

/* True if anonymous memory may get 2 MiB THP (with MADV_HUGEPAGE). */
static bool anon_thp_allowed(void)
{
	char word[32] = "";

	if (!thp_setting("enabled", word, sizeof(word)))
		return false;
	return !strcmp(word, "always") || !strcmp(word, "madvise");
}

/* AnonHugePages of the mapping holding addr, from /proc/self/smaps (kernels
 * before PAGEMAP_SCAN). */
static size_t smaps_anon_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false, line_start = true;
	size_t bytes = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, kb;
		bool whole = strchr(line, '\n') != NULL;

		if (line_start && sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (in)
				break;
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		} else if (line_start && in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
			bytes = (size_t)kb << 10;
			break;
		}
		line_start = whole; /* the rest of a long path is no header */
	}
	fclose(f);
	return bytes;
}

/* True if all of [addr, addr + len) is mapped by huge pages. */
static bool range_is_huge(const void *addr, size_t len)
{
	struct page_region reg[4];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = (uintptr_t)addr,
		.end = (uintptr_t)addr + len,
		.vec = (uintptr_t)reg,
		.vec_len = 4,
		.category_mask = PAGE_IS_HUGE,
		.return_mask = PAGE_IS_HUGE,
	};
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	long n = fd < 0 ? -1 : ioctl(fd, PAGEMAP_SCAN, &arg);
	uint64_t huge = 0;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return smaps_anon_huge(addr) >= len;
	for (long i = 0; i < n && i < 4; i++)
		huge += reg[i].end - reg[i].start;
	return huge == len;
}

/* A private anonymous r-x mapping, 2 MiB aligned, trap-filled through
 * /proc/self/mem: kept only if the fill faulted in huge pages and landed. */
static int map_anon_thp(struct execmem_view *view, size_t len)
{
	char *exec = map_aligned(-1, len, PROG_PACK_SIZE, PROT_READ | PROT_EXEC,
				 MAP_PRIVATE | MAP_ANONYMOUS, NULL);
	int err;

	if (!exec)
		return -errno;
	/* Before the first touch, so the fill faults in huge pages. Traps,
	 * not zeros: the kernel splits huge pages that are mostly zero
	 * (thp shrink_underused). */
	if (madvise(exec, len, MADV_HUGEPAGE))
		err = -errno;
	else if ((err = proc_mem_fill_traps(exec, len)) == 0 &&
		 (!range_is_huge(exec, len) || memcmp(exec, trap_buf, TRAP_BUF) ||
		  memcmp(exec + len - TRAP_BUF, trap_buf, TRAP_BUF)))
		err = -EOPNOTSUPP;
	if (err) {
		munmap(exec, len);
		return err;
	}
	view->exec = exec;
	view->alias = NULL;
	view->len = len;
	view->backing = BPFRT_EXECMEM_BACKING_THP_ANON;
	return 0;
}

int execmem_view_map(struct execmem_view *view, size_t len, bool huge, void *exec_hint)
{
	bool keep_fd;
	int err;

	execmem_init();
	keep_fd = code_sync != SYNC_CACHE;
	memset(view, 0, sizeof(*view));
	view->fd = -1;
	len = (len + page_size() - 1) & ~(page_size() - 1);
	/* An anonymous view cannot be mapped again without losing its
	 * contents, so it needs coherent instruction fetch. */
	if (huge && len % PROG_PACK_SIZE == 0 &&
	    map_both(view, len, MFD_HUGETLB | MFD_HUGE_2MB, PROG_PACK_SIZE, keep_fd, NULL) == 0) {
		view->backing = BPFRT_EXECMEM_BACKING_HUGETLB;
	} else if (huge && len % PROG_PACK_SIZE == 0 && !keep_fd && anon_thp_allowed() &&
		   map_anon_thp(view, len) == 0) {
		return 0; /* trap-filled already */
	} else if (huge && shmem_thp_allowed()) {
		err = map_both(view, len, 0, PROG_PACK_SIZE, keep_fd, NULL);
		if (err)
			return err;
		/* Before the first touch, so the trap fill faults in huge pages. */
		madvise(view->alias, len, MADV_HUGEPAGE);
		madvise(view->exec, len, MADV_HUGEPAGE);
		view->backing = BPFRT_EXECMEM_BACKING_THP_SHMEM;
	} else {
		err = map_both(view, len, 0, huge ? PROG_PACK_SIZE : page_size(), keep_fd,
			       exec_hint);
		if (err)
			return err;
		view->backing = BPFRT_EXECMEM_BACKING_4K;
	}
	/* Nothing ran in a fresh mapping: no stale code to re-map away. */
	execmem_fill_traps(view->alias, len);
	__builtin___clear_cache(view->exec, view->exec + len);
	return 0;
}

void execmem_view_unmap(struct execmem_view *view)
{
	if (!view->len)
		return;
	munmap(view->exec, view->len);
	if (view->alias)
		munmap(view->alias, view->len);
	if (view->fd >= 0)
		close(view->fd);
	view->fd = -1;
	view->len = 0;
}

/* ---- packing switch ------------------------------------------------------ */

bool bpfrt_execmem_packing(void)
{
	int state = atomic_load_explicit(&packing_state, memory_order_relaxed);

	if (!state) {
		int from_env = bpfrt_config()->no_pack ? 2 : 1;

		/* A concurrent set_packing wins over the environment. */
		atomic_compare_exchange_strong(&packing_state, &state, from_env);
		state = atomic_load(&packing_state);
	}
	return state == 1;
}

void bpfrt_execmem_set_packing(bool on)
{
	atomic_store(&packing_state, on ? 1 : 2);
}

/* ---- fork ------------------------------------------------------------------ */

/* Replaces the memfd behind a view with a private copy at the same
 * addresses. Runs in the single-threaded child, so nothing else uses the
 * view meanwhile. */
static int view_privatize(struct execmem_view *view)
{
	bool hugetlb = view->backing == BPFRT_EXECMEM_BACKING_HUGETLB;
	int fd, err = 0;
	char *tmp;

	fd = code_memfd("bpfrt-jit", hugetlb ? MFD_HUGETLB | MFD_HUGE_2MB : 0);
	if (fd < 0 && hugetlb) {
		hugetlb = false;
		fd = code_memfd("bpfrt-jit", 0);
	}
	if (fd < 0)
		return -errno;
	tmp = ftruncate(fd, (off_t)view->len) ? MAP_FAILED :
	      mmap(NULL, view->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED && hugetlb) {
		/* The parent holds the reserved huge pages: take small ones. */
		close(fd);
		view->backing = BPFRT_EXECMEM_BACKING_4K;
		return view_privatize(view);
	}
	if (tmp == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	if (view->backing == BPFRT_EXECMEM_BACKING_THP_SHMEM)
		madvise(tmp, view->len, MADV_HUGEPAGE);
	memcpy(tmp, view->alias, view->len);
	munmap(tmp, view->len);
	if (mmap(view->alias, view->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(view->exec, view->len, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		err = -errno;
	if (!err && view->backing == BPFRT_EXECMEM_BACKING_THP_SHMEM) {
		/* MAP_FIXED made new VMAs without the hint of the old ones. */
		madvise(view->alias, view->len, MADV_HUGEPAGE);
		madvise(view->exec, view->len, MADV_HUGEPAGE);
	}
	if (!err && view->fd >= 0) {
		/* Re-mapping for qemu-user must use the child's file now. */
		close(view->fd);
		view->fd = fd;
		return 0;
	}
out:
	close(fd);
	return err;
}

/* Gives the child its own huge page for an anonymous view: a copy moved
 * over the old mapping, which drops the child's reference to the parent's
 * page, so the parent's next write finds the page its own again instead of
 * copying it on write 4 KiB at a time. */
static int view_privatize_anon(struct execmem_view *view)
{
	char *tmp = map_aligned(-1, view->len, PROG_PACK_SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, NULL);
	int err = 0;

	if (!tmp)
		return -errno;
	madvise(tmp, view->len, MADV_HUGEPAGE);
	memcpy(tmp, view->exec, view->len);
	if (mprotect(tmp, view->len, PROT_READ | PROT_EXEC) ||
	    mremap(tmp, view->len, view->len, MREMAP_MAYMOVE | MREMAP_FIXED, view->exec) == MAP_FAILED) {
		err = -errno;
		munmap(tmp, view->len);
	}
	return err;
}

static void privatize_or_seal(struct execmem_view *view)
{
	/* An anonymous view is the child's already (copy on write): the
	 * copy only spares the parent's huge page, so failing is harmless. */
	if (!view->alias) {
		view_privatize_anon(view);
		return;
	}
	/* Without a copy, a write would land in the parent's code: make the
	 * alias read-only so that it faults instead. */
	if (view_privatize(view))
		mprotect(view->alias, view->len, PROT_READ);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&execmem_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&execmem_lock);
}

static void fork_child(void)
{
	struct bpfrt_execmem *mem;
	int fd = atomic_exchange(&proc_mem_fd, -1);

	if (fd >= 0)
		close(fd); /* it writes the parent's memory */
	prog_pack_for_each_view_locked(privatize_or_seal);
	for (mem = own_list; mem; mem = mem->own_next)
		privatize_or_seal(&mem->own);
	pthread_mutex_unlock(&execmem_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- allocation ---------------------------------------------------------- */

static int alloc_in_pack(struct bpfrt_execmem *mem)
{
	size_t alloc_len;
	const struct execmem_view *view;
	size_t off;

	mem->nchunks = (uint32_t)((mem->size + PROG_PACK_CHUNK - 1) / PROG_PACK_CHUNK);
	mem->pack = prog_pack_alloc(mem->nchunks, &mem->first_chunk);
	if (!mem->pack)
		return -errno;
	alloc_len = (size_t)mem->nchunks * PROG_PACK_CHUNK;
	view = prog_pack_view(mem->pack);
	off = (size_t)mem->first_chunk * PROG_PACK_CHUNK + random_start(alloc_len - mem->size);
	mem->exec = view->exec + off;
	return 0;
}

static int alloc_own(struct bpfrt_execmem *mem, void *exec_hint)
{
	size_t off;
	int err;

	err = execmem_view_map(&mem->own, mem->size, false, exec_hint);
	if (err)
		return err;
	off = random_start(mem->own.len - mem->size);
	mem->exec = mem->own.exec + off;
	pthread_mutex_lock(&execmem_lock);
	mem->own_next = own_list;
	if (own_list)
		own_list->own_prev = mem;
	own_list = mem;
	own_cnt++;
	own_bytes += mem->own.len;
	pthread_mutex_unlock(&execmem_lock);
	return 0;
}

struct bpfrt_execmem *bpfrt_execmem_alloc(size_t size)
{
	struct bpfrt_execmem *mem;
	int err;

	if (size == 0 || size > SIZE_MAX / 4) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&fork_once, register_fork_handlers);
	execmem_init(); /* before bpfrt_execmem_packing: it may turn packing off */
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return NULL;
	mem->size = size;
	if (size <= PROG_PACK_SIZE && bpfrt_execmem_packing())
		err = alloc_in_pack(mem);
	else
		err = alloc_own(mem, NULL);
	if (err) {
		free(mem);
		errno = -err;
		return NULL;
	}
	__atomic_fetch_add(&image_cnt, 1, __ATOMIC_RELAXED);
	return mem;
}

struct bpfrt_execmem *bpfrt_execmem_alloc_near(size_t size, const void *near)
{
	/* Below first: above a PIE executable is its brk heap. */
	static const int64_t deltas_mb[] = { -64, -256, -768, -1280, 256, 768, 1280 };
	const int64_t reach = 1536ll << 20;
	/* Not an exact power-of-two distance from near: the image would share
	 * its low address bits (up to bit 25 at 64 MiB) with the code it is
	 * near, and the CPU's branch predictors, indexed by those bits, then
	 * confuse the hooked function's branches with the trampoline's
	 * (fentry.multi measured 55 ns per event against 13 ns with this
	 * offset: docs/PERFORMANCE.md). An odd number of pages breaks it. */
	const uintptr_t skew = 7 * (uintptr_t)page_size();
	uintptr_t base = ((uintptr_t)near & ~(uintptr_t)(page_size() - 1)) + skew;

	if (size == 0 || size > (64u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&fork_once, register_fork_handlers);
	execmem_init();
	for (size_t i = 0; i < sizeof(deltas_mb) / sizeof(deltas_mb[0]); i++) {
		struct bpfrt_execmem *mem = calloc(1, sizeof(*mem));
		int err;

		if (!mem)
			return NULL;
		mem->size = size;
		err = alloc_own(mem, (void *)(base + (uintptr_t)(deltas_mb[i] * (1ll << 20))));
		if (err) {
			free(mem);
			continue;
		}
		__atomic_fetch_add(&image_cnt, 1, __ATOMIC_RELAXED);
		int64_t dist = (int64_t)((uintptr_t)mem->exec - (uintptr_t)near);

		if (dist > -reach && dist < reach)
			return mem;
		bpfrt_execmem_free(mem);
	}
	errno = ERANGE;
	return NULL;
}

void *bpfrt_execmem_addr(const struct bpfrt_execmem *mem)
{
	return mem ? mem->exec : NULL;
}

size_t bpfrt_execmem_size(const struct bpfrt_execmem *mem)
{
	return mem ? mem->size : 0;
}

static const struct execmem_view *mem_view(const struct bpfrt_execmem *mem)
{
	return mem->pack ? prog_pack_view(mem->pack) : &mem->own;
}

int bpfrt_execmem_copy(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len)
{
	const struct execmem_view *view;
	int err;

	if (!mem || (!src && len))
		return -EINVAL;
	if (off > mem->size || len > mem->size - off)
		return -ERANGE;
	if (!len)
		return 0;
	view = mem_view(mem);
	err = view_write(view, mem->exec + off, src, len);
	return err ? err : view_sync(view, mem->exec + off, len);
}

int bpfrt_execmem_patch(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len)
{
	const struct execmem_view *view;
	char *dst;

	if (!mem || !src || (len != 1 && len != 2 && len != 4 && len != 8))
		return -EINVAL;
	if (off > mem->size || len > mem->size - off)
		return -ERANGE;
	/* Alias and executable view differ by whole pages, so alignment of
	 * one is alignment of the other. */
	if ((uintptr_t)(mem->exec + off) & (len - 1))
		return -EINVAL;
	view = mem_view(mem);
	/* The kernel copies a /proc/self/mem write with memcpy, which may
	 * store a word piecewise: no atomic store without an alias. */
	if (!view->alias)
		return bpfrt_err(-EOPNOTSUPP,
				 "execmem: %p is in an anonymous-THP pack, which has no alias for atomic patching (patched code comes from bpfrt_execmem_alloc_near)",
				 (void *)(mem->exec + off));
	dst = view->alias + (mem->exec + off - view->exec);
	switch (len) {
	case 1: {
		uint8_t v;

		memcpy(&v, src, 1);
		__atomic_store_n((uint8_t *)dst, v, __ATOMIC_RELEASE);
		break;
	}
	case 2: {
		uint16_t v;

		memcpy(&v, src, 2);
		__atomic_store_n((uint16_t *)dst, v, __ATOMIC_RELEASE);
		break;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, src, 4);
		__atomic_store_n((uint32_t *)dst, v, __ATOMIC_RELEASE);
		break;
	}
	default: {
		uint64_t v;

		memcpy(&v, src, 8);
		__atomic_store_n((uint64_t *)dst, v, __ATOMIC_RELEASE);
		break;
	}
	}
	return view_sync(view, mem->exec + off, len);
}

void bpfrt_execmem_free(struct bpfrt_execmem *mem)
{
	if (!mem)
		return;
	__atomic_fetch_sub(&image_cnt, 1, __ATOMIC_RELAXED);
	if (mem->pack) {
		const struct execmem_view *view = prog_pack_view(mem->pack);
		size_t start = (size_t)mem->first_chunk * PROG_PACK_CHUNK;
		size_t len = (size_t)mem->nchunks * PROG_PACK_CHUNK;

		/* The chunks are still ours, so no lock is needed to refill.
		 * A failure (no /proc/self/mem, no re-mapping) leaves the old
		 * code, never a writable page: nothing better to do. */
		if (!view_fill_traps(view, view->exec + start, len))
			view_sync(view, view->exec + start, len);
		prog_pack_free(mem->pack, mem->first_chunk, mem->nchunks);
	} else {
		/* munmap drops translations too: no view_sync. */
		execmem_fill_traps(mem->own.alias, mem->own.len);
		pthread_mutex_lock(&execmem_lock);
		if (mem->own_prev)
			mem->own_prev->own_next = mem->own_next;
		else
			own_list = mem->own_next;
		if (mem->own_next)
			mem->own_next->own_prev = mem->own_prev;
		own_cnt--;
		own_bytes -= mem->own.len;
		pthread_mutex_unlock(&execmem_lock);
		execmem_view_unmap(&mem->own);
	}
	free(mem);
}

/* ---- statistics ----------------------------------------------------------- */

int bpfrt_execmem_stats(struct bpfrt_execmem_stats *stats)
{
	struct bpfrt_execmem_stats now = { .sz = sizeof(now) };

	if (!OUT_VALID(stats, bpfrt_execmem_stats))
		return -EINVAL;
	now.packing = bpfrt_execmem_packing();
	pthread_mutex_lock(&execmem_lock);
	prog_pack_stats_locked(&now);
	now.own_cnt = own_cnt;
	now.bytes_used += own_bytes;
	now.bytes_mapped += own_bytes;
	pthread_mutex_unlock(&execmem_lock);
	now.image_cnt = __atomic_load_n(&image_cnt, __ATOMIC_RELAXED);
	OUT_COPY(stats, &now, packing);
	OUT_COPY(stats, &now, pack_cnt);
	OUT_COPY(stats, &now, spare_cnt);
	OUT_COPY(stats, &now, packs_by_backing);
	OUT_COPY(stats, &now, own_cnt);
	OUT_COPY(stats, &now, image_cnt);
	OUT_COPY(stats, &now, bytes_used);
	OUT_COPY(stats, &now, bytes_mapped);
	OUT_COPY(stats, &now, pack_info_cnt);
	OUT_COPY(stats, &now, packs);
	return 0;
}

int bpfrt_execmem_dump(FILE *out)
{
	struct bpfrt_execmem_stats st = { .sz = sizeof(st) };

	if (!out)
		return -EINVAL;
	bpfrt_execmem_stats(&st);
	fprintf(out, "packing: %s\n", st.packing ? "on" : "off");
	fprintf(out, "packs: %u (4k %u, thp-shmem %u, thp-anon %u, hugetlb %u), spare %u\n",
		st.pack_cnt, st.packs_by_backing[BPFRT_EXECMEM_BACKING_4K],
		st.packs_by_backing[BPFRT_EXECMEM_BACKING_THP_SHMEM],
		st.packs_by_backing[BPFRT_EXECMEM_BACKING_THP_ANON],
		st.packs_by_backing[BPFRT_EXECMEM_BACKING_HUGETLB], st.spare_cnt);
	fprintf(out, "own mappings: %u\n", st.own_cnt);
	fprintf(out, "images: %llu, bytes used %llu, bytes mapped %llu\n",
		(unsigned long long)st.image_cnt, (unsigned long long)st.bytes_used,
		(unsigned long long)st.bytes_mapped);
	for (uint32_t i = 0; i < st.pack_info_cnt; i++)
		fprintf(out, "pack %#llx: %s, %u/%u chunks used\n",
			(unsigned long long)st.packs[i].addr,
			bpfrt_execmem_backing_name(st.packs[i].backing),
			st.packs[i].chunks_used, PROG_PACK_CHUNKS);
	if (st.pack_cnt > st.pack_info_cnt)
		fprintf(out, "(%u more packs)\n", st.pack_cnt - st.pack_info_cnt);
	return ferror(out) ? -EIO : 0;
}

const char *bpfrt_execmem_backing_name(uint32_t backing)
{
	switch (backing) {
	case BPFRT_EXECMEM_BACKING_4K:
		return "4k";
	case BPFRT_EXECMEM_BACKING_THP_SHMEM:
		return "thp-shmem";
	case BPFRT_EXECMEM_BACKING_HUGETLB:
		return "hugetlb";
	case BPFRT_EXECMEM_BACKING_THP_ANON:
		return "thp-anon";
	default:
		return "unknown";
	}
}

void bpfrt_execmem_trim(void)
{
	prog_pack_trim();
}
