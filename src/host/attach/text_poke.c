/* Breakpoint-first cross-modification of host code (see text_poke.h). */
#define _GNU_SOURCE
#include "attach/text_poke.h"
#include "attach/trap.h"
#include "core/error.h"
#include "jit/x86_64/emit.h"
#include "signal/ucontext.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096ul

static pthread_mutex_t poke_lock = PTHREAD_MUTEX_INITIALIZER;
static int mem_fd = -1;
static pid_t mem_fd_pid;
static int sync_mode = -1;           /* enum sync_mode once probed */
static void *ipi_page;
static uint64_t stat_writes, stat_syncs;

enum sync_mode { SYNC_CORE, SYNC_EXPEDITED, SYNC_MPROTECT };

/* The pokes in progress, sorted by address, for the trap handler. */
static struct bpfrt_poke *_Atomic live_pokes;
static _Atomic size_t live_cnt;
static _Atomic uint32_t live_readers;
/* Bumped after a batch is published and before it is unpublished: a trap
 * handler that read the same value before and after looking at the pokes
 * and at the byte knows no poke started or ended in between (trap.c). */
static _Atomic uint64_t live_gen;

/* rel32 from the end of a 5-byte branch at from to target, or -ERANGE. */
static int branch_rel32(uintptr_t from, uintptr_t target, int32_t *rel32)
{
	int64_t rel = (int64_t)(target - (from + X86_REL32_BRANCH_LEN));

	*rel32 = (int32_t)rel;
	return rel == *rel32 ? 0 : -ERANGE;
}

int bpfrt_encode_call(uint8_t insn[5], uintptr_t from, uintptr_t target)
{
	struct x86_buf b = { .p = insn, .cap = X86_REL32_BRANCH_LEN };
	int32_t rel32;
	int err = branch_rel32(from, target, &rel32);

	if (err)
		return err;
	emit_call_rel32(&b, rel32);
	return 0;
}

int bpfrt_encode_jmp(uint8_t insn[5], uintptr_t from, uintptr_t target)
{
	struct x86_buf b = { .p = insn, .cap = X86_REL32_BRANCH_LEN };
	int32_t rel32;
	int err = branch_rel32(from, target, &rel32);

	if (err)
		return err;
	emit_jmp_rel32(&b, rel32);
	return 0;
}

/* ---- trap side (signal context) ---------------------------------------- */

static bool is_nop(const uint8_t *b, size_t len)
{
	size_t i = 0;

	while (i < len && b[i] == 0x66)
		i++;
	if (i < len && b[i] == 0x90)
		return i + 1 == len;
	if (i + 1 < len && b[i] == 0x0f && b[i + 1] == 0x1f)
		return true; /* nopw/nopl with whatever ModRM: the length is len */
	return false;
}

/* What a patched site may become: exactly one call/jmp rel32, jmp rel8 or nop. */
static bool is_one_branch_or_nop(const uint8_t *b, size_t len)
{
	switch (b[0]) {
	case X86_CALL_REL32:
	case X86_JMP_REL32:
		return len == X86_REL32_BRANCH_LEN;
	case X86_JMP_REL8:
		return len == 2;
	default:
		return is_nop(b, len);
	}
}

/* Sets the registers as if the thread had executed p's new instruction. */
static bool poke_emulate(const struct bpfrt_poke *p, ucontext_t *uc)
{
#if !defined(__x86_64__)
	(void)p; (void)uc; (void)is_nop;
	return false; /* patched sites are x86-64 code (arm64 builds: make test-arm64) */
#else
	uintptr_t next = p->addr + p->len;
	int32_t rel32;

	switch (p->bytes[0]) {
	case X86_CALL_REL32:
		memcpy(&rel32, p->bytes + 1, 4);
		bpfrt_uc_set_sp(uc, bpfrt_uc_sp(uc) - 8);
		*(uint64_t *)bpfrt_uc_sp(uc) = next;
		bpfrt_uc_set_pc(uc, next + (intptr_t)rel32);
		return true;
	case X86_JMP_REL32:
		memcpy(&rel32, p->bytes + 1, 4);
		bpfrt_uc_set_pc(uc, next + (intptr_t)rel32);
		return true;
	case X86_JMP_REL8:
		bpfrt_uc_set_pc(uc, next + (intptr_t)(int8_t)p->bytes[1]);
		return true;
	default:
		if (is_nop(p->bytes, p->len)) {
			bpfrt_uc_set_pc(uc, next);
			return true;
		}
		return false; /* a kprobe's bytes: its trap handler decides */
	}
#endif
}

bool bpfrt_text_poke_trap(ucontext_t *uc, uintptr_t addr)
{
	bool done = false;

	atomic_fetch_add(&live_readers, 1);
	struct bpfrt_poke *pokes = atomic_load(&live_pokes);
	size_t lo = 0, hi = pokes ? atomic_load(&live_cnt) : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pokes[mid].addr < addr) {
			lo = mid + 1;
		} else if (pokes[mid].addr > addr) {
			hi = mid;
		} else {
			if (!pokes[mid].data)
				done = poke_emulate(&pokes[mid], uc);
			break;
		}
	}
	atomic_fetch_sub(&live_readers, 1);
	return done;
}

uint64_t bpfrt_text_poke_gen(void)
{
	return atomic_load(&live_gen);
}

/* ---- writing ------------------------------------------------------------ */

static int mem_open(void)
{
	pid_t pid = getpid();

	if (mem_fd >= 0 && mem_fd_pid == pid)
		return 0;
	if (mem_fd >= 0)
		close(mem_fd); /* inherited across fork: it names the parent */
	mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem_fd < 0)
		return bpfrt_err(-errno, "text_poke: cannot open /proc/self/mem: %s",
				 strerror(errno));
	mem_fd_pid = pid;
	return 0;
}

static int mem_write(uintptr_t addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(mem_fd, buf, len, (off_t)addr);

	stat_writes++;
	if (n != (ssize_t)len)
		return bpfrt_err(n < 0 ? -errno : -EIO,
				 "text_poke: write of %zu bytes at %#lx through /proc/self/mem failed: %s",
				 len, (unsigned long)addr, n < 0 ? strerror(errno) : "short write");
	return 0;
}

static void sync_probe(void)
{
	ipi_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0))
		sync_mode = SYNC_CORE;
	else if (!syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		sync_mode = SYNC_EXPEDITED;
	else
		sync_mode = SYNC_MPROTECT;
}

/* Registering for membarrier makes the kernel wait for an RCU grace
 * period when the process already has several threads (15 ms and more on
 * a loaded machine, a third of a first fentry.multi attach): register at
 * load time, when a process normally has one thread and it is free. */
__attribute__((constructor)) static void sync_register_early(void)
{
	if (sync_mode < 0)
		sync_probe();
}

void bpfrt_text_sync_cores(void)
{
	if (sync_mode < 0)
		sync_probe();
	stat_syncs++;
	if (sync_mode == SYNC_CORE &&
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0))
		return;
	/* The interrupt that delivers an expedited membarrier returns with
	 * iret, which serialises. */
	if (sync_mode <= SYNC_EXPEDITED &&
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return;
	/* Downgrading a page every CPU of ours may cache makes the kernel
	 * shoot the TLB entry down with an IPI to each of them. */
	if (ipi_page != MAP_FAILED) {
		*(volatile char *)ipi_page = 1;
		mprotect(ipi_page, PAGE, PROT_READ);
		mprotect(ipi_page, PAGE, PROT_READ | PROT_WRITE);
	}
}

/* One byte edit list, applied page by page: every run of edits within a
 * page goes out in one pwrite of the span they cover, the bytes between
 * them rewritten with their current value (only pokes change host text,
 * and they hold poke_lock). */
struct edit {
	uintptr_t addr;
	uint8_t len;
	const uint8_t *bytes;
};

static int write_edits(const struct edit *e, size_t cnt)
{
	static uint8_t buf[PAGE + BPFRT_POKE_MAX_LEN];
	size_t i = 0;

	while (i < cnt) {
		uintptr_t start = e[i].addr, limit = (start & ~(PAGE - 1)) + PAGE;
		uintptr_t end = start + e[i].len;
		size_t j = i + 1;

		/* An edit crossing into the next page goes out alone. */
		if (end <= limit) {
			while (j < cnt && e[j].addr + e[j].len <= limit) {
				end = e[j].addr + e[j].len;
				j++;
			}
		}
		memcpy(buf, (const void *)start, end - start);
		for (size_t k = i; k < j; k++)
			memcpy(buf + (e[k].addr - start), e[k].bytes, e[k].len);
		int err = mem_write(start, buf, end - start);

		if (err)
			return err;
		i = j;
	}
	return 0;
}

static int poke_cmp(const void *a, const void *b)
{
	const struct bpfrt_poke *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const uint8_t int3_byte = X86_INT3;

static int poke_check(const struct bpfrt_poke *p, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++) {
		if (!p[i].addr || !p[i].len || p[i].len > BPFRT_POKE_MAX_LEN)
			return bpfrt_err(-EINVAL, "text_poke: poke %zu: bad address or length", i);
		if (i && p[i - 1].addr + p[i - 1].len > p[i].addr)
			return bpfrt_err(-EINVAL, "text_poke: pokes at %#lx and %#lx overlap",
					 (unsigned long)p[i - 1].addr, (unsigned long)p[i].addr);
	}
	return 0;
}

static int poke_batch_locked(struct bpfrt_poke *p, size_t cnt)
{
	struct edit *e = malloc(cnt * sizeof(*e));
	size_t n;
	int err;

	if (!e)
		return bpfrt_err(-ENOMEM, "text_poke: out of memory");
	err = mem_open();
	if (err)
		goto out;
	err = bpfrt_trap_init();
	if (err)
		goto out;
	atomic_store(&live_cnt, cnt);
	atomic_store(&live_pokes, p);
	atomic_fetch_add(&live_gen, 1);

	/* 1: int3 over the first byte of each multi-byte executed site. */
	n = 0;
	for (size_t i = 0; i < cnt; i++)
		if (!p[i].data && p[i].len > 1)
			e[n++] = (struct edit){ p[i].addr, 1, &int3_byte };
	if (n) {
		err = write_edits(e, n);
		if (err)
			goto out_unpublish;
		bpfrt_text_sync_cores();
	}
	/* 2: the tails, and data pokes whole. */
	n = 0;
	for (size_t i = 0; i < cnt; i++) {
		if (p[i].data)
			e[n++] = (struct edit){ p[i].addr, p[i].len, p[i].bytes };
		else if (p[i].len > 1)
			e[n++] = (struct edit){ p[i].addr + 1, (uint8_t)(p[i].len - 1),
						p[i].bytes + 1 };
	}
	if (n) {
		err = write_edits(e, n);
		if (err)
			goto out_unpublish;
		bpfrt_text_sync_cores();
	}
	/* 3: the first bytes. */
	n = 0;
	for (size_t i = 0; i < cnt; i++)
		if (!p[i].data)
			e[n++] = (struct edit){ p[i].addr, 1, p[i].bytes };
	if (n) {
		err = write_edits(e, n);
		if (err)
			goto out_unpublish;
		bpfrt_text_sync_cores();
	}
out_unpublish:
	/* A thread that trapped but has not reached the handler yet finds
	 * no poke and sees the int3 gone (trap.c step 3), or, if the next
	 * poke already put its own int3 there, sees the generation move and
	 * looks again. */
	atomic_fetch_add(&live_gen, 1);
	atomic_store(&live_pokes, NULL);
	while (atomic_load(&live_readers))
		sched_yield();
out:
	free(e);
	return err;
}

int bpfrt_text_poke_batch(struct bpfrt_poke *pokes, size_t cnt)
{
	int err;

	if (!cnt)
		return 0;
	if (!pokes)
		return bpfrt_err(-EINVAL, "text_poke: NULL pokes");
	/* fentry.multi's batches arrive sorted (patchable.c keeps functions
	 * in address order): sorting 65,536 pokes again was a tenth of an
	 * attach. */
	for (size_t i = 1; i < cnt; i++)
		if (pokes[i - 1].addr > pokes[i].addr) {
			qsort(pokes, cnt, sizeof(*pokes), poke_cmp);
			break;
		}
	err = poke_check(pokes, cnt);
	if (err)
		return err;
	for (size_t i = 0; i < cnt; i++) {
		if (pokes[i].data || pokes[i].len == 1)
			continue;
		if (!is_one_branch_or_nop(pokes[i].bytes, pokes[i].len))
			return bpfrt_err(-EINVAL,
					 "text_poke: %#lx: new bytes are not one call, jmp or nop",
					 (unsigned long)pokes[i].addr);
	}
	pthread_mutex_lock(&poke_lock);
	err = poke_batch_locked(pokes, cnt);
	pthread_mutex_unlock(&poke_lock);
	return err;
}

int bpfrt_text_poke(void *addr, const void *bytes, size_t len)
{
	struct bpfrt_poke p = { .addr = (uintptr_t)addr, .len = (uint8_t)len };

	if (!bytes || len > BPFRT_POKE_MAX_LEN)
		return bpfrt_err(-EINVAL, "text_poke: bad length %zu", len);
	memcpy(p.bytes, bytes, len);
	return bpfrt_text_poke_batch(&p, 1);
}

int bpfrt_text_write(void *addr, const void *bytes, size_t len)
{
	struct bpfrt_poke p = { .addr = (uintptr_t)addr, .len = (uint8_t)len, .data = true };

	if (!bytes || len > BPFRT_POKE_MAX_LEN)
		return bpfrt_err(-EINVAL, "text_write: bad length %zu", len);
	memcpy(p.bytes, bytes, len);
	return bpfrt_text_poke_batch(&p, 1);
}

void bpfrt_text_poke_stats(uint64_t *writes, uint64_t *syncs)
{
	pthread_mutex_lock(&poke_lock);
	if (writes)
		*writes = stat_writes;
	if (syncs)
		*syncs = stat_syncs;
	pthread_mutex_unlock(&poke_lock);
}
