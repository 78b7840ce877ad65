/* fentry / fexit / fmod_ret on host functions (see trampoline.h for the
 * object lifetimes and jit/x86_64/trampoline_x86.c for the image).
 *
 * Attach: find the function, get its permanent state, build its image once,
 * add the program to the kind's RCU-published array, then make the entry
 * call the image (text_poke). Detach: remove the program, point the entry
 * at what is left (the image, the fentry.multi global trampoline, or the
 * nop5 back), and wait a grace period so no thread still runs the program.
 *
 * Programs see ctx = frame->args: the six argument registers as u64, then
 * for fexit the return value at ctx[nr_args], for fmod_ret the return value
 * so far (0, or the last fmod_ret program's). nr_args (<= 6) is the count
 * of integer argument registers the function's debug info gives
 * (sym/debuginfo.h: DWARF, else BTF); bpfrt_attach_opts.nr_args must agree
 * with it, and is needed only where there is no such information: a wrong
 * count would have fexit read an argument register as the return value,
 * so nothing is guessed. The first attach to a function fixes its
 * nr_args; a later one that asks for a different count is refused. */
#define _GNU_SOURCE
#include "attach/text_poke.h"
#include "attach/trampoline.h"
#include "core/config.h"
#include "core/error.h"
#include "isa/isa.h"
#include "jit/backend.h"
#include "jit/execmem.h"
#include "sym/debuginfo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TRAMP_IMAGE_MAX 2048

pthread_mutex_t bpfrt_tramp_lock = PTHREAD_MUTEX_INITIALIZER;

struct tramp_link {
	struct bpfrt_link link;
	struct bpfrt_tramp_func *tf;
	enum bpfrt_prog_kind kind;
};

/* ---- the run path's layout, for generated code ------------------------------ */

/* Offset of an initial-exec TLS variable from the thread pointer: the same
 * in every thread. */
int32_t bpfrt_tramp_tls_offset(const void *var)
{
	uintptr_t addr = (uintptr_t)var;

	/* Opaque to GCC, which otherwise folds the difference into a 32-bit
	 * load of the GOT's TP offset that ld cannot relax. */
	__asm__("" : "+r"(addr));
	return (int32_t)(intptr_t)(addr - (uintptr_t)__builtin_thread_pointer());
}

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)
_Static_assert(FIELD_SIZE(struct bpfrt_attach_tls, depth) == 4, "depth is a u32");
_Static_assert(FIELD_SIZE(struct bpfrt_attach_tls, active[0]) == 8, "active[] holds pointers");
_Static_assert(FIELD_SIZE(struct bpfrt_prog_array, cnt) == 4, "cnt is a u32");
_Static_assert(FIELD_SIZE(struct bpfrt_prog_array_item, prog) == 8, "item prog is a pointer");
_Static_assert(FIELD_SIZE(struct bpfrt_prog_array_item, cookie) == 8, "item cookie is a u64");
_Static_assert(FIELD_SIZE(struct bpfrt_prog_array_item, flags) == 4, "item flags is a u32");
_Static_assert((sizeof(struct bpfrt_prog_array_item) & (sizeof(struct bpfrt_prog_array_item) - 1)) == 0,
	       "item stride is a power of two");
_Static_assert(FIELD_SIZE(struct bpfrt_tramp_func, ip) == 8, "func ip is a u64");
_Static_assert(FIELD_SIZE(struct bpfrt_md_hash, shift) == 4 &&
	       FIELD_SIZE(struct bpfrt_md_hash, mask) == 4, "hash shift and mask are u32");
_Static_assert((sizeof(struct bpfrt_md_slot) & (sizeof(struct bpfrt_md_slot) - 1)) == 0,
	       "slot stride is a power of two");

static struct bpfrt_tramp_layout layout;

static void layout_init(void)
{
	layout = (struct bpfrt_tramp_layout){
		.tls_depth = bpfrt_tramp_tls_offset(&bpfrt_attach_tls.depth),
		.tls_active = bpfrt_tramp_tls_offset(&bpfrt_attach_tls.active[0]),
		.arr_cnt = offsetof(struct bpfrt_prog_array, cnt),
		.arr_items = offsetof(struct bpfrt_prog_array, items),
		.item_shift = (uint32_t)__builtin_ctz(sizeof(struct bpfrt_prog_array_item)),
		.item_prog = offsetof(struct bpfrt_prog_array_item, prog),
		.item_cookie = offsetof(struct bpfrt_prog_array_item, cookie),
		.item_flags = offsetof(struct bpfrt_prog_array_item, flags),
		.prog_jit_func = offsetof(struct bpfrt_prog, jit_func),
		.func_ip = offsetof(struct bpfrt_tramp_func, ip),
		.func_multi = offsetof(struct bpfrt_tramp_func, multi),
		.hash_shift = offsetof(struct bpfrt_md_hash, shift),
		.hash_mask = offsetof(struct bpfrt_md_hash, mask),
		.hash_slots = offsetof(struct bpfrt_md_hash, slots),
		.slot_shift = (uint32_t)__builtin_ctz(sizeof(struct bpfrt_md_slot)),
		.slot_ip = offsetof(struct bpfrt_md_slot, ip),
		.slot_func = offsetof(struct bpfrt_md_slot, tf),
		.hash_mul = BPFRT_MD_HASH_MUL,
	};
}

const struct bpfrt_tramp_layout *bpfrt_tramp_layout(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, layout_init);
	return &layout;
}

/* ---- run time (called from the images) ------------------------------------ */

static inline void run_array(const struct bpfrt_prog_array *arr, struct bpfrt_tramp_frame *f)
{
	uint64_t r0;

	for (uint32_t i = 0; i < arr->cnt; i++)
		bpfrt_attach_run(arr->items[i].prog, f->args, arr->items[i].cookie, &r0);
}

uint64_t bpfrt_tramp_enter(struct bpfrt_tramp_frame *f, void *md)
{
	struct bpfrt_tramp_func *tf = md;
	const struct bpfrt_prog_array *arr;
	uint64_t action = BPFRT_TRAMP_BODY;
	void *prev = bpfrt_run_state.tramp_frame;

	f->nr_args = tf->nr_args;
	f->md = NULL;           /* no return value for get_func_ret yet */
	bpfrt_run_state.tramp_frame = f;
	bpfrt_attach_enter();
	arr = bpfrt_prog_array_load(&tf->fentry);
	if (arr)
		run_array(arr, f);
	arr = bpfrt_prog_array_load(&tf->multi);
	if (arr)
		run_array(arr, f);
	if (atomic_load_explicit(&tf->fexit, memory_order_relaxed))
		action = BPFRT_TRAMP_CALL_ORIG;
	arr = bpfrt_prog_array_load(&tf->fmod_ret);
	if (arr) {
		uint32_t nr = tf->nr_args;
		uint64_t saved = f->args[nr], r0;

		action = BPFRT_TRAMP_CALL_ORIG;
		f->md = tf;
		/* Linux: each program sees the return value so far; the first
		 * non-zero one skips the rest and the original function. */
		f->args[nr] = 0;
		for (uint32_t i = 0; i < arr->cnt; i++) {
			if (!bpfrt_attach_run(arr->items[i].prog, f->args, arr->items[i].cookie, &r0))
				continue;
			f->args[nr] = r0;
			if (r0) {
				f->rax = r0;
				f->rdx = 0;
				action = BPFRT_TRAMP_SKIP_ORIG;
				break;
			}
		}
		if (action != BPFRT_TRAMP_SKIP_ORIG)
			f->args[nr] = saved;
	}
	bpfrt_attach_exit();
	bpfrt_run_state.tramp_frame = prev;
	return action;
}

void bpfrt_tramp_exit(struct bpfrt_tramp_frame *f, void *md)
{
	struct bpfrt_tramp_func *tf = md;
	const struct bpfrt_prog_array *arr;
	void *prev = bpfrt_run_state.tramp_frame;

	f->args[tf->nr_args] = f->rax;
	f->md = tf;
	bpfrt_run_state.tramp_frame = f;
	bpfrt_attach_enter();
	arr = bpfrt_prog_array_load(&tf->fexit);
	if (arr)
		run_array(arr, f);
	bpfrt_attach_exit();
	bpfrt_run_state.tramp_frame = prev;
}

/* The stub's C path (no IMAGE published): inside the stub's read section. */
uint64_t bpfrt_tramp_stub_run(struct bpfrt_tramp_frame *f, void *md)
{
	struct bpfrt_tramp_func *tf = md;
	const struct bpfrt_prog_array *arr;
	void *prev = bpfrt_run_state.tramp_frame;

	f->ip = tf->ip;
	f->nr_args = tf->nr_args;
	f->md = NULL;
	bpfrt_run_state.tramp_frame = f;
	arr = bpfrt_prog_array_load(&tf->fentry);
	if (arr)
		run_array(arr, f);
	arr = bpfrt_prog_array_load(&tf->multi);
	if (arr)
		run_array(arr, f);
	bpfrt_run_state.tramp_frame = prev;
	return BPFRT_TRAMP_BODY;
}

/* One program of an IMAGE that is not run inline (see emit_inline_item). */
void bpfrt_tramp_run_item(struct bpfrt_tramp_frame *f, void *md,
			  struct bpfrt_prog *prog, uint64_t cookie)
{
	struct bpfrt_tramp_func *tf = md;
	void *prev = bpfrt_run_state.tramp_frame;
	uint64_t r0;

	f->ip = tf->ip;
	f->nr_args = tf->nr_args;
	f->md = NULL;
	bpfrt_run_state.tramp_frame = f;
	bpfrt_attach_run(prog, f->args, cookie, &r0);
	bpfrt_run_state.tramp_frame = prev;
}

/* JIT'ed and calling nothing outside its own code: no helper or kfunc
 * (tail calls are a helper), no callx. Such a run cannot abort or reach a
 * helper that reads the run state, the cookie, the frame or xmm. A
 * private stack can fault and unwind (an abort): those run in C. */
bool bpfrt_tramp_prog_inlinable(const struct bpfrt_prog *prog)
{
	if (!prog->jit_func || !prog->insns || prog->privstack)
		return false;
	for (uint32_t i = 0; i < prog->insn_cnt; i++) {
		const struct bpf_insn *in = &prog->insns[i];
		uint8_t cls = in->code & 0x07;

		/* the inline run sets no may_goto budget (run state untouched) */
		if (insn_is_may_goto(in))
			return false;
		if ((cls == BPF_JMP || cls == BPF_JMP32) && (in->code & 0xf0) == BPF_CALL &&
		    !(cls == BPF_JMP && (in->code & 0x08) == BPF_K &&
		      in->src_reg == BPF_PSEUDO_CALL))
			return false;
	}
	return true;
}

/* ---- function state -------------------------------------------------------- */

/* Function states are permanent: carved from slabs (fentry.multi creates
 * tens of thousands at once). Under bpfrt_tramp_lock. */
static struct bpfrt_tramp_func *tramp_func_alloc(void)
{
	static struct bpfrt_tramp_func *slab;
	static size_t slab_left;

	if (!slab_left) {
		slab = calloc(256, sizeof(*slab));
		if (!slab)
			return NULL;
		slab_left = 256;
	}
	slab_left--;
	return slab++;
}

int bpfrt_tramp_nr_args(const char *kind, const struct bpfrt_patchable_func *pf,
			uint32_t asked, bool required, uint32_t *nr_args)
{
	struct bpfrt_func_proto proto;
	char why[400];
	int err = bpfrt_func_proto_get(pf->mod, pf->entry, pf->name, &proto);

	if (!err) {
		if (asked && asked != proto.nr_args)
			return bpfrt_err(-EINVAL, "%s: %s takes %u integer argument register%s "
					 "(its %s), not nr_args %u", kind, pf->name, proto.nr_args,
					 proto.nr_args == 1 ? "" : "s", proto.source, asked);
		/* fexit reads and fmod_ret sets rax: a value returned in xmm0
		 * would be read wrong, silently. Linux refuses such functions
		 * for every tracing kind; fentry here sees only the integer
		 * registers and keeps the xmm ones, so it may go on. */
		if (proto.ret_float && (!strcmp(kind, "fexit") || !strcmp(kind, "fmod_ret")))
			return bpfrt_err(-EOPNOTSUPP, "%s: %s returns a floating-point value "
					 "(xmm0, its %s): %s programs read and set integer and "
					 "pointer returns only", kind, pf->name, proto.source, kind);
		*nr_args = proto.nr_args;
		return 0;
	}
	if ((err == -ENODATA || err == -EOPNOTSUPP) && asked) {
		*nr_args = asked;
		return 0;
	}
	if ((err == -ENODATA || err == -EOPNOTSUPP) && !required) {
		*nr_args = 0;
		return 0;
	}
	snprintf(why, sizeof(why), "%s", bpfrt_last_error());
	return bpfrt_err(err, "%s: %s", kind, why);
}

struct bpfrt_tramp_func *bpfrt_tramp_func_get(const struct bpfrt_patchable_func *pf,
					      uint32_t nr_args)
{
	struct bpfrt_tramp_func *tf = bpfrt_multi_lookup_hash(pf->entry);

	if (tf)
		return tf;
	tf = tramp_func_alloc();
	if (!tf) {
		bpfrt_err(-ENOMEM, "trampoline: out of memory");
		return NULL;
	}
	tf->ip = pf->entry;
	tf->pf = pf;
	tf->nr_args = nr_args;
	if (bpfrt_multi_register_func(tf)) {
		memset(tf, 0, sizeof(*tf));     /* lost to the slab: rare */
		return NULL;
	}
	return tf;
}

static int tramp_fast_rebuild(struct bpfrt_tramp_func *tf);

uintptr_t bpfrt_tramp_func_target(struct bpfrt_tramp_func *tf)
{
	if (atomic_load(&tf->fexit) || atomic_load(&tf->fmod_ret))
		return tf->image;
	if (atomic_load(&tf->fentry))
		return tf->stub ? tf->stub : tf->image;
	if (atomic_load(&tf->multi))
		return bpfrt_multi_global_tramp(tf);
	return 0;
}

int bpfrt_tramp_func_pokes(struct bpfrt_tramp_func *tf, struct bpfrt_poke *pokes)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uintptr_t target = bpfrt_tramp_func_target(tf);
	int n = 0;

	/* The stub's IMAGE follows the programs whatever the entry calls now:
	 * a thread may still be on its way into the stub. Published before
	 * the entry changes, so an attach is complete when its poke is. */
	if (tf->stub)
		tramp_fast_rebuild(tf);
	if (!target && (tf->image || tf->stub ? tf->prog_cnt : atomic_load(&tf->multi) != NULL))
		return bpfrt_err(-ENOMEM, "trampoline: no trampoline within reach of %s",
				 tf->pf->name);
	if (target == tf->target)
		return 0;
	/* The index goes into the padding before the entry calls the global
	 * trampoline that reads it; it stays there for good. */
	if (target && target != tf->image && bpfrt_multi_uses_pad(tf) && !tf->pad_written) {
		pokes[n] = (struct bpfrt_poke){ .addr = tf->ip - 4, .len = 4, .data = true };
		memcpy(pokes[n].bytes, &tf->pad_idx, 4);
		tf->pad_written = true;
		n++;
	}
	pokes[n] = (struct bpfrt_poke){ .addr = tf->ip, .len = 5 };
	if (target)
		bpfrt_encode_call(pokes[n].bytes, tf->ip, target);
	else
		memcpy(pokes[n].bytes, nop5, 5);
	tf->target = target;
	return n + 1;
}

/* Trampoline code lives in arenas of JIT memory near the host code that
 * calls it (a rel32 call reaches +-2 GiB). CLASSIC trampolines, stubs and
 * global trampolines are carved in 64-byte slots that are never given back
 * (see trampoline.h); IMAGEs are blocks of 64 << class bytes, returned to
 * their arena's free list a grace period after they are unpublished.
 * Carving and stubs under bpfrt_tramp_lock; the free lists also under
 * arena_lock, since blocks come back from the RCU callback thread. */
#define ARENA_SIZE (64u << 10)
#define BLOCK_CLASSES 9         /* 64 B .. 16 KiB */
#define IMAGE_MAX (64u << (BLOCK_CLASSES - 1))

struct tramp_block {
	struct bpfrt_rcu_head rcu;
	struct tramp_arena *arena;
	uint32_t off;
	uint8_t cls;
	struct tramp_block *next;       /* free list */
};

struct tramp_arena {
	struct bpfrt_execmem *mem;
	size_t used;
	struct tramp_block *free[BLOCK_CLASSES];
	struct tramp_arena *next;
};

static struct tramp_arena *arenas;
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

static bool reaches(uintptr_t from, uintptr_t start, size_t len)
{
	uint8_t insn[5];

	return !bpfrt_encode_call(insn, from, start) &&
	       !bpfrt_encode_call(insn, from, start + len);
}

static uintptr_t arena_base(const struct tramp_arena *a)
{
	return (uintptr_t)bpfrt_execmem_addr(a->mem);
}

/* An arena within reach of near with len bytes left to carve (or a block
 * of class cls free when cls >= 0); a new one if none. Under arena_lock. */
static struct tramp_arena *arena_for(uintptr_t near, size_t len, int cls)
{
	struct tramp_arena *a;

	for (a = arenas; a; a = a->next)
		if (((cls >= 0 && a->free[cls]) || a->used + len <= ARENA_SIZE) &&
		    reaches(near, arena_base(a), ARENA_SIZE))
			return a;
	a = calloc(1, sizeof(*a));
	if (a)
		a->mem = bpfrt_execmem_alloc_near(ARENA_SIZE, (const void *)near);
	if (!a || !a->mem) {
		free(a);
		bpfrt_err(-ENOMEM, "trampoline: no JIT memory within call range of %#lx",
			  (unsigned long)near);
		return NULL;
	}
	a->next = arenas;
	arenas = a;
	return a;
}

static const struct bpfrt_jit_backend *tramp_backend(void)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();

	if (!be || !be->arch_prepare_trampoline) {
		bpfrt_err(-EOPNOTSUPP, "trampoline: no trampolines on this architecture");
		return NULL;
	}
	return be;
}

uintptr_t bpfrt_tramp_build(const struct bpfrt_tramp_desc *d, uintptr_t near)
{
	const struct bpfrt_jit_backend *be = tramp_backend();
	uint8_t code[TRAMP_IMAGE_MAX];
	struct tramp_arena *a;
	uintptr_t image = 0;
	int len;

	if (!be)
		return 0;
	pthread_mutex_lock(&arena_lock);
	a = arena_for(near, TRAMP_IMAGE_MAX, -1);
	if (!a)
		goto out;
	image = arena_base(a) + a->used;
	len = be->arch_prepare_trampoline(code, sizeof(code), image, d);
	if (len < 0 || bpfrt_execmem_copy(a->mem, a->used, code, (size_t)len)) {
		bpfrt_err(len < 0 ? len : -EFAULT, "trampoline: cannot build an image");
		image = 0;
		goto out;
	}
	a->used += ((size_t)len + 63) & ~(size_t)63;
out:
	pthread_mutex_unlock(&arena_lock);
	return image;
}

static int block_class(size_t len)
{
	int cls = 0;

	while ((64u << cls) < len)
		cls++;
	return cls < BLOCK_CLASSES ? cls : -1;
}

/* A block of class cls within reach of near. *reused: it held code
 * before. Under arena_lock. */
static struct tramp_block *block_alloc(uintptr_t near, int cls, bool *reused)
{
	struct tramp_arena *a = arena_for(near, 64u << cls, cls);
	struct tramp_block *blk;

	if (!a)
		return NULL;
	blk = a->free[cls];
	if (blk) {
		a->free[cls] = blk->next;
		*reused = true;
		return blk;
	}
	blk = calloc(1, sizeof(*blk));
	if (!blk) {
		bpfrt_err(-ENOMEM, "trampoline: out of memory");
		return NULL;
	}
	blk->arena = a;
	blk->off = (uint32_t)a->used;
	blk->cls = (uint8_t)cls;
	a->used += 64u << cls;
	*reused = false;
	return blk;
}

/* Stores value at addr (8-byte aligned, in an arena) atomically. */
static int arena_patch(uintptr_t addr, uint64_t value)
{
	int err = -ENOENT;

	pthread_mutex_lock(&arena_lock);
	for (struct tramp_arena *a = arenas; a; a = a->next)
		if (addr >= arena_base(a) && addr < arena_base(a) + ARENA_SIZE) {
			err = bpfrt_execmem_patch(a->mem, addr - arena_base(a), &value, 8);
			break;
		}
	pthread_mutex_unlock(&arena_lock);
	return err;
}

static void block_put(struct tramp_block *blk)
{
	pthread_mutex_lock(&arena_lock);
	blk->next = blk->arena->free[blk->cls];
	blk->arena->free[blk->cls] = blk;
	pthread_mutex_unlock(&arena_lock);
}

static void block_free_cb(struct bpfrt_rcu_head *head)
{
	block_put((struct tramp_block *)((char *)head - offsetof(struct tramp_block, rcu)));
}

/* Builds an IMAGE near `near` into a block; NULL on failure (error set). */
static struct tramp_block *image_build(const struct bpfrt_tramp_desc *d, uintptr_t near)
{
	const struct bpfrt_jit_backend *be = tramp_backend();
	static uint8_t code[IMAGE_MAX]; /* under bpfrt_tramp_lock */
	struct tramp_block *blk = NULL;
	bool reused = false;
	int len, cls;

	if (!be)
		return NULL;
	/* Sized at a guessed address, then built where it goes; calls that
	 * are rel32 here may need movabs there: a bigger class if so. */
	len = be->arch_prepare_trampoline(code, sizeof(code), near, d);
	for (cls = len < 0 ? -1 : block_class((size_t)len); cls >= 0 && cls < BLOCK_CLASSES; cls++) {
		pthread_mutex_lock(&arena_lock);
		blk = block_alloc(near, cls, &reused);
		pthread_mutex_unlock(&arena_lock);
		if (!blk)
			return NULL;
		uintptr_t addr = arena_base(blk->arena) + blk->off;

		len = be->arch_prepare_trampoline(code, 64u << cls, addr, d);
		if (len >= 0)
			break;
		block_put(blk);
		blk = NULL;
		if (len != -E2BIG)
			break;
	}
	if (!blk) {
		bpfrt_err(len < 0 ? len : -E2BIG, "trampoline: cannot build an image");
		return NULL;
	}
	if (bpfrt_execmem_copy(blk->arena->mem, blk->off, code, (size_t)len)) {
		block_put(blk);
		bpfrt_err(-EFAULT, "trampoline: cannot write an image");
		return NULL;
	}
	/* A reused block held an older image: make sure no CPU runs stale
	 * instructions from it (none can be inside it: a grace period has
	 * passed since it was unpublished). */
	if (reused)
		bpfrt_text_sync_cores();
	return blk;
}

/* Most programs one IMAGE compiles in; more run through the stub's C path. */
#define IMAGE_MAX_ITEMS 64

/* Compiles tf's fentry and fentry.multi programs into a new IMAGE,
 * publishes it in the stub's slot and frees the old one after a grace
 * period. Without programs, or when the image cannot be built, the slot
 * holds 0 and the stub runs the arrays in C: always correct. Under
 * bpfrt_tramp_lock. */
static int tramp_fast_rebuild(struct bpfrt_tramp_func *tf)
{
	const struct bpfrt_prog_array *fe = atomic_load(&tf->fentry);
	const struct bpfrt_prog_array *mu = atomic_load(&tf->multi);
	struct bpfrt_tramp_item items[IMAGE_MAX_ITEMS];
	struct tramp_block *blk = NULL, *old;
	uint32_t n = 0, total = (fe ? fe->cnt : 0) + (mu ? mu->cnt : 0);
	int err = 0;

	if (fe == tf->fast_fentry && mu == tf->fast_multi)
		return 0;
	if (total && total <= IMAGE_MAX_ITEMS) {
		for (int k = 0; k < 2; k++) {
			const struct bpfrt_prog_array *arr = k ? mu : fe;

			for (uint32_t i = 0; arr && i < arr->cnt; i++)
				items[n++] = (struct bpfrt_tramp_item){
					.prog = arr->items[i].prog,
					.cookie = arr->items[i].cookie,
					.inline_run = bpfrt_tramp_prog_inlinable(arr->items[i].prog),
				};
		}
		struct bpfrt_tramp_desc d = {
			.type = BPFRT_TRAMP_IMAGE, .flags = BPFRT_TRAMP_F_FENTRY,
			.func = tf->ip, .nr_args = (uint8_t)tf->nr_args,
			.md = tf, .tail = tf->stub + tf->stub_tail,
			.items = items, .item_cnt = n, .run_item = bpfrt_tramp_run_item,
			.layout = bpfrt_tramp_layout(),
		};

		blk = image_build(&d, tf->stub);
		if (!blk)
			err = -ENOMEM;
	}
	old = tf->fast_block;
	uintptr_t img = blk ? arena_base(blk->arena) + blk->off : 0;
	uint64_t slot = img ? img : tf->stub + tf->stub_c_path;

	/* One atomic store through the writable alias; the image's code was
	 * written before it (x86 keeps stores in order). */
	if (arena_patch(tf->stub + tf->stub_slot, slot)) {
		if (blk)
			block_put(blk);
		return bpfrt_err(-EFAULT, "trampoline: cannot switch the image");
	}
	atomic_store_explicit(&tf->fast_image, img, memory_order_release);
	tf->fast_block = blk;
	tf->fast_fentry = fe;
	tf->fast_multi = mu;
	if (old)
		bpfrt_rcu_call_head(&old->rcu, block_free_cb);
	return err;
}

/* Builds tf's stub once. */
static int tramp_stub(struct bpfrt_tramp_func *tf)
{
	struct bpfrt_tramp_desc d = {
		.type = BPFRT_TRAMP_STUB, .flags = BPFRT_TRAMP_F_FENTRY,
		.func = tf->ip, .nr_args = (uint8_t)tf->nr_args,
		.md = tf, .enter = bpfrt_tramp_stub_run,
		.tail_off = &tf->stub_tail, .slot_off = &tf->stub_slot,
		.c_path_off = &tf->stub_c_path,
	};

	if (tf->stub)
		return 0;
	tf->stub = bpfrt_tramp_build(&d, tf->ip);
	return tf->stub ? 0 : -ENOMEM;
}

/* Builds tf's image once. */
static int tramp_image(struct bpfrt_tramp_func *tf)
{
	/* one per function, whatever kinds attach: it keeps a 16-byte
	 * return value (rax:rdx, xmm0-1), the type being unknown */
	struct bpfrt_tramp_desc d = {
		.type = BPFRT_TRAMP_CLASSIC,
		.flags = BPFRT_TRAMP_F_FENTRY | BPFRT_TRAMP_F_FEXIT | BPFRT_TRAMP_F_FMOD_RET,
		.func = tf->ip, .nr_args = (uint8_t)tf->nr_args, .ret_size = 16,
		.body = tf->ip + 5, .md = tf,
		.enter = bpfrt_tramp_enter, .exit = bpfrt_tramp_exit,
	};

	if (tf->image)
		return 0;
	tf->image = bpfrt_tramp_build(&d, tf->ip);
	return tf->image ? 0 : -ENOMEM;
}

/* Repoints tf's entry at what its programs need now. */
static int tramp_retarget(struct bpfrt_tramp_func *tf)
{
	struct bpfrt_poke pokes[2];
	int n = bpfrt_tramp_func_pokes(tf, pokes);

	return n < 0 ? n : bpfrt_text_poke_batch(pokes, (size_t)n);
}

static struct bpfrt_prog_array *_Atomic *kind_slot(struct bpfrt_tramp_func *tf,
						  enum bpfrt_prog_kind kind)
{
	switch (kind) {
	case BPFRT_PROG_FENTRY:
		return &tf->fentry;
	case BPFRT_PROG_FEXIT:
		return &tf->fexit;
	case BPFRT_PROG_FMOD_RET:
		return &tf->fmod_ret;
	default:
		return &tf->multi;
	}
}

/* ---- links ------------------------------------------------------------------ */

static int tramp_detach(struct bpfrt_link *link)
{
	struct tramp_link *tl = (struct tramp_link *)link;
	struct bpfrt_tramp_func *tf = tl->tf;
	int err;

	pthread_mutex_lock(&bpfrt_tramp_lock);
	err = bpfrt_prog_array_remove(kind_slot(tf, tl->kind), link, false);
	if (!err) {
		tf->prog_cnt--;
		err = tramp_retarget(tf);
	}
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	bpfrt_rcu_synchronize();
	return err;
}

static void tramp_dealloc(struct bpfrt_link *link)
{
	bpfrt_link_release(link);
	free(link);
}

static void tramp_show(const struct bpfrt_link *link, FILE *out)
{
	const struct tramp_link *tl = (const struct tramp_link *)link;

	fprintf(out, "  ip %#lx nr_args %u", (unsigned long)tl->tf->ip, tl->tf->nr_args);
}

static const struct bpfrt_link_ops fentry_ops = {
	.kind = "fentry", .detach = tramp_detach, .dealloc = tramp_dealloc, .show = tramp_show,
};
static const struct bpfrt_link_ops fexit_ops = {
	.kind = "fexit", .detach = tramp_detach, .dealloc = tramp_dealloc, .show = tramp_show,
};
static const struct bpfrt_link_ops fmod_ret_ops = {
	.kind = "fmod_ret", .detach = tramp_detach, .dealloc = tramp_dealloc, .show = tramp_show,
};

int bpfrt_trampoline_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
				 const char *target, uint64_t cookie, uint32_t nr_args,
				 struct bpfrt_link **out)
{
	const struct bpfrt_link_ops *ops = kind == BPFRT_PROG_FENTRY ? &fentry_ops :
					   kind == BPFRT_PROG_FEXIT ? &fexit_ops : &fmod_ret_ops;
	const struct bpfrt_patchable_func *pf;
	struct bpfrt_tramp_func *tf;
	struct tramp_link *tl;
	int err;

	if (nr_args > 6)
		return bpfrt_err(-EINVAL, "%s: %s: nr_args %u: only register arguments (<= 6)",
				 ops->kind, target, nr_args);
	tl = calloc(1, sizeof(*tl));
	if (!tl)
		return bpfrt_err(-ENOMEM, "%s: out of memory", ops->kind);
	err = bpfrt_link_init(&tl->link, ops, prog, target, cookie);
	if (err) {
		free(tl);
		return bpfrt_err(err, "%s: out of memory", ops->kind);
	}
	tl->kind = kind;
	pthread_mutex_lock(&bpfrt_tramp_lock);
	pf = bpfrt_patchable_lookup(target);
	if (!pf) {
		err = -ENOENT;
		goto fail;
	}
	if (pf->nops1) {
		err = bpfrt_err(-EOPNOTSUPP,
				"%s: %s starts with five 1-byte nops (gcc -fpatchable-function-entry), "
				"which cannot be patched while threads run them: see mk/bpfrt-host.mk",
				ops->kind, target);
		goto fail;
	}
	err = bpfrt_tramp_nr_args(ops->kind, pf, nr_args, true, &nr_args);
	if (err)
		goto fail;
	tf = bpfrt_tramp_func_get(pf, nr_args);
	if (!tf) {
		err = -ENOMEM;
		goto fail;
	}
	if (tf->nr_args != nr_args) {
		err = bpfrt_err(-EINVAL, "%s: %s was attached with nr_args %u, not %u",
				ops->kind, target, tf->nr_args, nr_args);
		goto fail;
	}
	/* the program's verified context reads must stay within the
	 * arguments (and for fexit and fmod_ret the return value slot) */
	err = bpfrt_prog_check_kind(prog, kind, target);
	if (!err)
		err = bpfrt_prog_check_ctx(prog, 8 * (nr_args + (kind != BPFRT_PROG_FENTRY)),
					   target);
	if (err)
		goto fail;
	tl->tf = tf;
	/* BPFRT_TRAMP_NO_FAST=1: fentry through the CLASSIC trampoline (the
	 * run path in C), for benchmarks to compare. */
	err = kind == BPFRT_PROG_FENTRY && !bpfrt_config()->tramp_no_fast ? tramp_stub(tf) :
	      tramp_image(tf);
	if (err)
		goto fail;
	struct bpfrt_prog_array_item item = { .prog = prog, .cookie = cookie, .link = &tl->link };

	err = bpfrt_prog_array_add(kind_slot(tf, kind), &item);
	if (err) {
		err = bpfrt_err(err, "%s: %s: out of memory", ops->kind, target);
		goto fail;
	}
	tf->prog_cnt++;
	err = tramp_retarget(tf);
	if (err) {
		bpfrt_prog_array_remove(kind_slot(tf, kind), &tl->link, false);
		tf->prog_cnt--;
		goto fail;
	}
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	bpfrt_link_publish(&tl->link);
	*out = &tl->link;
	return 0;
fail:
	pthread_mutex_unlock(&bpfrt_tramp_lock);
	bpfrt_link_release(&tl->link);
	free(tl);
	return err;
}
