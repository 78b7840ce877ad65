/* The exception tables of fault-safe loads (see extable.h).
 *
 * Registry: a list of blocks of slots, appended and never freed, each
 * slot a table's image range and entries under a sequence count (odd
 * while a writer changes it). A reader skips a slot being changed: it is
 * either being registered (no code of it runs yet) or withdrawn (its code
 * no longer runs), so a fault in it cannot be the one being looked up. */
#include "core/extable.h"
#include "helpers/probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SLOTS_PER_BLOCK 64

struct slot {
	_Atomic uint32_t seq;
	_Atomic uintptr_t start, end;
	_Atomic(const struct bpfrt_extable_entry *) entries;
	_Atomic uint32_t cnt;
};

struct block {
	struct slot slots[SLOTS_PER_BLOCK];
	_Atomic(struct block *) next;
};

static _Atomic(struct block *) blocks;
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static int32_t slot_cnt;                /* slots in all blocks (writers) */

static struct slot *slot_at(int32_t idx)
{
	struct block *b = atomic_load_explicit(&blocks, memory_order_acquire);

	for (; idx >= SLOTS_PER_BLOCK; idx -= SLOTS_PER_BLOCK)
		b = atomic_load_explicit(&b->next, memory_order_acquire);
	return &b->slots[idx];
}

static void slot_write(struct slot *s, uintptr_t start, uintptr_t end,
		       const struct bpfrt_extable_entry *entries, uint32_t cnt)
{
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->start, start, memory_order_relaxed);
	atomic_store_explicit(&s->end, end, memory_order_relaxed);
	atomic_store_explicit(&s->entries, entries, memory_order_relaxed);
	atomic_store_explicit(&s->cnt, cnt, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
}

/* A free slot's index, a new block's first if every one is taken; -1
 * without memory. Under writer_lock. */
static int32_t free_slot(void)
{
	struct block *b, **tail;

	for (int32_t i = 0; i < slot_cnt; i++)
		if (!atomic_load_explicit(&slot_at(i)->end, memory_order_relaxed))
			return i;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -1;
	tail = (struct block **)&blocks;
	while (atomic_load_explicit((_Atomic(struct block *) *)tail, memory_order_relaxed))
		tail = (struct block **)&(*tail)->next;
	atomic_store_explicit((_Atomic(struct block *) *)tail, b, memory_order_release);
	slot_cnt += SLOTS_PER_BLOCK;
	return slot_cnt - SLOTS_PER_BLOCK;
}

int bpfrt_extable_register(struct bpfrt_extable *tab)
{
	int32_t idx;

	if (!tab->cnt) {
		tab->slot = -1;
		return 0;
	}
	pthread_mutex_lock(&writer_lock);
	idx = free_slot();
	if (idx >= 0)
		slot_write(slot_at(idx), tab->start, tab->start + tab->len, tab->entries, tab->cnt);
	pthread_mutex_unlock(&writer_lock);
	tab->slot = idx;
	return idx < 0 ? -ENOMEM : 0;
}

void bpfrt_extable_unregister(struct bpfrt_extable *tab)
{
	if (tab->slot < 0)
		return;
	pthread_mutex_lock(&writer_lock);
	slot_write(slot_at(tab->slot), 0, 0, NULL, 0);
	pthread_mutex_unlock(&writer_lock);
	tab->slot = -1;
}

void bpfrt_extable_free(struct bpfrt_extable *tab)
{
	if (!tab)
		return;
	bpfrt_extable_unregister(tab);
	free(tab->entries);
	free(tab);
}

static uintptr_t search(const struct bpfrt_extable_entry *e, uint32_t cnt, uintptr_t start,
			uintptr_t pc)
{
	uint32_t lo = 0, hi = cnt;
	uintptr_t off = pc - start;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (e[mid].insn_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cnt && e[lo].insn_off == off ? start + e[lo].fixup_off : 0;
}

/* ---- the interpreter's loads ---- */

/* One routine per size whose first instruction is the load; a fault there
 * continues at its fixup, which returns 0 (static_fixup). The labels are
 * global and hidden: a GOT reference to a local label would be made
 * relative to its section, and aarch64's linker gives every such
 * reference the section's one GOT entry. */
#define PROBE_SYMS                                                             \
	".globl bpfrt_probe_ld1, bpfrt_probe_fx1, bpfrt_probe_ld2, bpfrt_probe_fx2\n" \
	".globl bpfrt_probe_ld4, bpfrt_probe_fx4, bpfrt_probe_ld8, bpfrt_probe_fx8\n" \
	".hidden bpfrt_probe_ld1, bpfrt_probe_fx1, bpfrt_probe_ld2, bpfrt_probe_fx2\n" \
	".hidden bpfrt_probe_ld4, bpfrt_probe_fx4, bpfrt_probe_ld8, bpfrt_probe_fx8\n"
#if defined(__x86_64__)
__asm__(PROBE_SYMS ".text\n.p2align 4\n"
	"bpfrt_probe_ld1: movzbl (%rdi), %eax\n ret\nbpfrt_probe_fx1: xorl %eax, %eax\n ret\n"
	"bpfrt_probe_ld2: movzwl (%rdi), %eax\n ret\nbpfrt_probe_fx2: xorl %eax, %eax\n ret\n"
	"bpfrt_probe_ld4: movl (%rdi), %eax\n ret\nbpfrt_probe_fx4: xorl %eax, %eax\n ret\n"
	"bpfrt_probe_ld8: movq (%rdi), %rax\n ret\nbpfrt_probe_fx8: xorl %eax, %eax\n ret\n"
	);
#define HAVE_PROBE_ASM 1
#elif defined(__aarch64__)
__asm__(PROBE_SYMS ".text\n.p2align 4\n"
	"bpfrt_probe_ld1: ldrb w0, [x0]\n ret\nbpfrt_probe_fx1: mov x0, #0\n ret\n"
	"bpfrt_probe_ld2: ldrh w0, [x0]\n ret\nbpfrt_probe_fx2: mov x0, #0\n ret\n"
	"bpfrt_probe_ld4: ldr w0, [x0]\n ret\nbpfrt_probe_fx4: mov x0, #0\n ret\n"
	"bpfrt_probe_ld8: ldr x0, [x0]\n ret\nbpfrt_probe_fx8: mov x0, #0\n ret\n"
	);
#define HAVE_PROBE_ASM 1
#elif defined(__riscv) && __riscv_xlen == 64
__asm__(PROBE_SYMS ".text\n.p2align 4\n.option push\n.option norvc\n"
	"bpfrt_probe_ld1: lbu a0, 0(a0)\n ret\nbpfrt_probe_fx1: li a0, 0\n ret\n"
	"bpfrt_probe_ld2: lhu a0, 0(a0)\n ret\nbpfrt_probe_fx2: li a0, 0\n ret\n"
	"bpfrt_probe_ld4: lwu a0, 0(a0)\n ret\nbpfrt_probe_fx4: li a0, 0\n ret\n"
	"bpfrt_probe_ld8: ld a0, 0(a0)\n ret\nbpfrt_probe_fx8: li a0, 0\n ret\n"
	".option pop\n");
#define HAVE_PROBE_ASM 1
#endif

#ifdef HAVE_PROBE_ASM
#define HIDDEN __attribute__((visibility("hidden")))
extern char bpfrt_probe_ld1[] HIDDEN, bpfrt_probe_fx1[] HIDDEN, bpfrt_probe_ld2[] HIDDEN,
	bpfrt_probe_fx2[] HIDDEN, bpfrt_probe_ld4[] HIDDEN, bpfrt_probe_fx4[] HIDDEN,
	bpfrt_probe_ld8[] HIDDEN, bpfrt_probe_fx8[] HIDDEN;
#endif

static uintptr_t static_fixup(uintptr_t pc)
{
#ifdef HAVE_PROBE_ASM
	if (pc == (uintptr_t)bpfrt_probe_ld1)
		return (uintptr_t)bpfrt_probe_fx1;
	if (pc == (uintptr_t)bpfrt_probe_ld2)
		return (uintptr_t)bpfrt_probe_fx2;
	if (pc == (uintptr_t)bpfrt_probe_ld4)
		return (uintptr_t)bpfrt_probe_fx4;
	if (pc == (uintptr_t)bpfrt_probe_ld8)
		return (uintptr_t)bpfrt_probe_fx8;
#endif
	return bpfrt_extable_copy_fixup(pc);
}

uintptr_t bpfrt_extable_fixup(uintptr_t pc)
{
	uintptr_t fix = static_fixup(pc);

	if (fix)
		return fix;
	for (struct block *b = atomic_load_explicit(&blocks, memory_order_acquire); b;
	     b = atomic_load_explicit(&b->next, memory_order_acquire)) {
		for (int i = 0; i < SLOTS_PER_BLOCK; i++) {
			struct slot *s = &b->slots[i];
			uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
			uintptr_t start, end, hit;
			const struct bpfrt_extable_entry *e;
			uint32_t cnt;

			if (seq & 1)
				continue;
			start = atomic_load_explicit(&s->start, memory_order_relaxed);
			end = atomic_load_explicit(&s->end, memory_order_relaxed);
			if (pc < start || pc >= end)
				continue;
			e = atomic_load_explicit(&s->entries, memory_order_relaxed);
			cnt = atomic_load_explicit(&s->cnt, memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
				continue;
			/* pc is in this image: it is running, so e is live */
			hit = search(e, cnt, start, pc);
			if (hit)
				return hit;
		}
	}
	return 0;
}

/* ---- the host's handler ---- */

static _Atomic(int (*)(void)) host_install;
static _Atomic int handler_state;       /* 0 not tried, 1 installed, -1 failed */

void bpfrt_extable_set_host(int (*install)(void))
{
	atomic_store_explicit(&host_install, install, memory_order_release);
}

bool bpfrt_extable_ready(void)
{
	int state = atomic_load_explicit(&handler_state, memory_order_acquire);
	int (*install)(void);

	if (state)
		return state > 0;
	install = atomic_load_explicit(&host_install, memory_order_acquire);
#ifdef HAVE_PROBE_ASM
	if (install) {
		int err = install();

		/* -EAGAIN: asked from a signal handler that interrupted this
		 * thread's own installation of the handler: not a refusal, a
		 * later call (the probe reads' next) gets it */
		if (err == -EAGAIN)
			return false;
		state = err ? -1 : 1;
	} else {
		state = -1;
	}
#else
	state = -1;
#endif
	atomic_store_explicit(&handler_state, state, memory_order_release);
	return state > 0;
}

uint64_t bpfrt_probe_load(uintptr_t addr, unsigned size)
{
#ifdef HAVE_PROBE_ASM
	typedef uint64_t (*load_fn)(uintptr_t);

	if (bpfrt_extable_ready()) {
		switch (size) {
		case 1: return ((load_fn)(void *)bpfrt_probe_ld1)(addr);
		case 2: return ((load_fn)(void *)bpfrt_probe_ld2)(addr);
		case 4: return ((load_fn)(void *)bpfrt_probe_ld4)(addr);
		default: return ((load_fn)(void *)bpfrt_probe_ld8)(addr);
		}
	}
#endif
	{
		uint64_t v = 0;

		bpfrt_probe_read(&v, (const void *)addr, size); /* zeroed on a fault */
		return v; /* little-endian: the low bytes */
	}
}
