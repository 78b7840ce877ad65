/* Executable memory with W^X: all code lives in memfd pages mapped twice, a
 * writable alias that is never executable and an executable view that is
 * never writable. Code reaches the executable view only through the alias
 * (bpfrt_execmem_copy), the userspace counterpart of text_poke. Small
 * images share 2 MiB prog packs (prog_pack.c); large ones, or every image
 * when packing is off, get a view of their own.
 *
 * Views are MAP_SHARED, so a forked child would share them with its parent
 * and each side's frees and new images would rewrite the other's code; the
 * child therefore swaps every view for a private copy at fork (one copy of
 * all code memory per fork; posix_spawn and vfork do not pay it). */
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
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004u
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008u
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26)
#endif

#define IMAGE_ALIGN 16 /* a randomized start keeps instruction-fetch alignment */

struct bpfrt_execmem {
	char *exec;              /* image start in the executable view */
	char *alias;             /* the same bytes in the writable alias */
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

static atomic_int packing_state; /* 0: not decided yet, 1: on, 2: off */

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

/* ---- double-mapped memfd views ------------------------------------------ */

static size_t page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

/* Where bpfrt_execmem_alloc_near wants the executable view (a hint). */
static __thread char *exec_hint;

/* Maps fd at an address aligned to align (a power of two), by reserving
 * len + align bytes and mapping over the aligned part. */
static char *map_aligned(int fd, size_t len, size_t align, int prot)
{
	char *res, *start;
	size_t extra;

	if (align <= page_size()) {
		res = mmap(prot & PROT_EXEC ? exec_hint : NULL, len, prot, MAP_SHARED, fd, 0);
		return res == MAP_FAILED ? NULL : res;
	}
	extra = align;
	res = mmap(NULL, len + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return NULL;
	start = (char *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
	if (mmap(start, len, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
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

static int map_both(struct execmem_view *view, size_t len, unsigned int mfd_flags, size_t align)
{
	int fd, err = 0;

	fd = code_memfd(mfd_flags & MFD_HUGETLB ? "bpfrt-jit-hugetlb" : "bpfrt-jit", mfd_flags);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		err = -errno;
		goto out;
	}
	view->alias = map_aligned(fd, len, align, PROT_READ | PROT_WRITE);
	if (!view->alias) {
		err = -errno;
		goto out;
	}
	view->exec = map_aligned(fd, len, align, PROT_READ | PROT_EXEC);
	if (!view->exec) {
		err = -errno;
		munmap(view->alias, len);
		view->alias = NULL;
		goto out;
	}
	view->len = len;
out:
	close(fd); /* the mappings keep the memory */
	return err;
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

/* True if a memfd may get 2 MiB shmem THP (with MADV_HUGEPAGE). The
 * per-size knob of newer kernels wins unless it says "inherit". */
static bool shmem_thp_allowed(void)
{
	char word[32] = "";

	if (!read_thp_setting("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/shmem_enabled",
			      word, sizeof(word)) || !strcmp(word, "inherit"))
		if (!read_thp_setting("/sys/kernel/mm/transparent_hugepage/shmem_enabled",
				      word, sizeof(word)))
			return false;
	return !strcmp(word, "always") || !strcmp(word, "within_size") ||
	       !strcmp(word, "advise") || !strcmp(word, "force");
}

int execmem_view_map(struct execmem_view *view, size_t len, bool huge)
{
	int err;

	memset(view, 0, sizeof(*view));
	len = (len + page_size() - 1) & ~(page_size() - 1);
	if (huge && len % PROG_PACK_SIZE == 0 &&
	    map_both(view, len, MFD_HUGETLB | MFD_HUGE_2MB, PROG_PACK_SIZE) == 0) {
		view->backing = BPFRT_EXECMEM_BACKING_HUGETLB;
	} else if (huge && shmem_thp_allowed()) {
		err = map_both(view, len, 0, PROG_PACK_SIZE);
		if (err)
			return err;
		/* Before the first touch, so the trap fill faults in huge pages. */
		madvise(view->alias, len, MADV_HUGEPAGE);
		madvise(view->exec, len, MADV_HUGEPAGE);
		view->backing = BPFRT_EXECMEM_BACKING_THP_SHMEM;
	} else {
		err = map_both(view, len, 0, huge ? PROG_PACK_SIZE : page_size());
		if (err)
			return err;
		view->backing = BPFRT_EXECMEM_BACKING_4K;
	}
	execmem_fill_traps(view->alias, len);
	__builtin___clear_cache(view->exec, view->exec + len);
	return 0;
}

void execmem_view_unmap(struct execmem_view *view)
{
	if (!view->len)
		return;
	munmap(view->exec, view->len);
	munmap(view->alias, view->len);
	view->len = 0;
}

/* ---- packing switch ------------------------------------------------------ */

bool bpfrt_execmem_packing(void)
{
	int state = atomic_load_explicit(&packing_state, memory_order_relaxed);

	if (!state) {
		const char *env = getenv("BPFRT_NO_PACK");
		int from_env = env && *env && strcmp(env, "0") ? 2 : 1;

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
out:
	close(fd);
	return err;
}

static void privatize_or_seal(struct execmem_view *view)
{
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
	mem->alias = view->alias + off;
	return 0;
}

static int alloc_own(struct bpfrt_execmem *mem)
{
	size_t off;
	int err;

	err = execmem_view_map(&mem->own, mem->size, false);
	if (err)
		return err;
	off = random_start(mem->own.len - mem->size);
	mem->exec = mem->own.exec + off;
	mem->alias = mem->own.alias + off;
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
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return NULL;
	mem->size = size;
	if (size <= PROG_PACK_SIZE && bpfrt_execmem_packing())
		err = alloc_in_pack(mem);
	else
		err = alloc_own(mem);
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
	uintptr_t base = (uintptr_t)near & ~(uintptr_t)(page_size() - 1);

	if (size == 0 || size > (64u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&fork_once, register_fork_handlers);
	for (size_t i = 0; i < sizeof(deltas_mb) / sizeof(deltas_mb[0]); i++) {
		struct bpfrt_execmem *mem = calloc(1, sizeof(*mem));
		int err;

		if (!mem)
			return NULL;
		mem->size = size;
		exec_hint = (char *)(base + (uintptr_t)(deltas_mb[i] * (1ll << 20)));
		err = alloc_own(mem);
		exec_hint = NULL;
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

int bpfrt_execmem_copy(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len)
{
	if (!mem || (!src && len))
		return -EINVAL;
	if (off > mem->size || len > mem->size - off)
		return -ERANGE;
	if (!len)
		return 0;
	memcpy(mem->alias + off, src, len);
	__builtin___clear_cache(mem->exec + off, mem->exec + off + len);
	return 0;
}

int bpfrt_execmem_patch(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len)
{
	char *dst;

	if (!mem || !src || (len != 1 && len != 2 && len != 4 && len != 8))
		return -EINVAL;
	if (off > mem->size || len > mem->size - off)
		return -ERANGE;
	/* Alias and executable view differ by whole pages, so alignment of
	 * one is alignment of the other. */
	if ((uintptr_t)(mem->exec + off) & (len - 1))
		return -EINVAL;
	dst = mem->alias + off;
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
	__builtin___clear_cache(mem->exec + off, mem->exec + off + len);
	return 0;
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

		/* The chunks are still ours, so no lock is needed to refill. */
		execmem_fill_traps(view->alias + start, len);
		__builtin___clear_cache(view->exec + start, view->exec + start + len);
		prog_pack_free(mem->pack, mem->first_chunk, mem->nchunks);
	} else {
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
	if (!stats)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	stats->packing = bpfrt_execmem_packing();
	pthread_mutex_lock(&execmem_lock);
	prog_pack_stats_locked(stats);
	stats->own_cnt = own_cnt;
	stats->bytes_used += own_bytes;
	stats->bytes_mapped += own_bytes;
	pthread_mutex_unlock(&execmem_lock);
	stats->image_cnt = __atomic_load_n(&image_cnt, __ATOMIC_RELAXED);
	return 0;
}

int bpfrt_execmem_dump(FILE *out)
{
	struct bpfrt_execmem_stats st;

	if (!out)
		return -EINVAL;
	bpfrt_execmem_stats(&st);
	fprintf(out, "packing: %s\n", st.packing ? "on" : "off");
	fprintf(out, "packs: %u (4k %u, thp-shmem %u, hugetlb %u), spare %u\n", st.pack_cnt,
		st.packs_by_backing[BPFRT_EXECMEM_BACKING_4K],
		st.packs_by_backing[BPFRT_EXECMEM_BACKING_THP_SHMEM],
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
	default:
		return "unknown";
	}
}

void bpfrt_execmem_trim(void)
{
	prog_pack_trim();
}
