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
 * so far (0, or the last fmod_ret program's). Host functions have no BTF,
 * so nr_args (<= 6) comes from bpfrt_attach_opts.nr_args, default 6: with
 * the default an fexit program finds the return value at ctx[6]. The first
 * attach to a function fixes its nr_args; a later one that asks for a
 * different count is refused. */
#define _GNU_SOURCE
#include "attach/text_poke.h"
#include "attach/trampoline.h"
#include "core/error.h"
#include "jit/backend.h"
#include "jit/execmem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TRAMP_IMAGE_MAX 512

pthread_mutex_t bpfrt_tramp_lock = PTHREAD_MUTEX_INITIALIZER;
__thread uint32_t bpfrt_attach_nr_args;

struct tramp_link {
	struct bpfrt_link link;
	struct bpfrt_tramp_func *tf;
	enum bpfrt_prog_kind kind;
};

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

/* ---- function state -------------------------------------------------------- */

struct bpfrt_tramp_func *bpfrt_tramp_func_get(const struct bpfrt_patchable_func *pf,
					      uint32_t nr_args)
{
	struct bpfrt_tramp_func *tf = bpfrt_multi_lookup_hash(pf->entry);

	if (tf)
		return tf;
	tf = calloc(1, sizeof(*tf));
	if (!tf) {
		bpfrt_err(-ENOMEM, "trampoline: out of memory");
		return NULL;
	}
	tf->ip = pf->entry;
	tf->pf = pf;
	tf->nr_args = nr_args;
	if (bpfrt_multi_register_func(tf)) {
		free(tf);
		return NULL;
	}
	return tf;
}

uintptr_t bpfrt_tramp_func_target(struct bpfrt_tramp_func *tf)
{
	if (atomic_load(&tf->fentry) || atomic_load(&tf->fexit) || atomic_load(&tf->fmod_ret))
		return tf->image;
	if (atomic_load(&tf->multi))
		return bpfrt_multi_global_tramp(tf);
	return 0;
}

int bpfrt_tramp_func_pokes(struct bpfrt_tramp_func *tf, struct bpfrt_poke *pokes)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uintptr_t target = bpfrt_tramp_func_target(tf);
	int n = 0;

	if (!target && (tf->image ? tf->prog_cnt : atomic_load(&tf->multi) != NULL))
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
 * calls it (a rel32 call reaches +-2 GiB), carved in 64-byte slots that are
 * never given back (see trampoline.h). Under bpfrt_tramp_lock. */
#define ARENA_SIZE (64u << 10)

struct tramp_arena {
	struct bpfrt_execmem *mem;
	size_t used;
	struct tramp_arena *next;
};

static struct tramp_arena *arenas;

static bool reaches(uintptr_t from, uintptr_t start, size_t len)
{
	uint8_t insn[5];

	return !bpfrt_encode_call(insn, from, start) &&
	       !bpfrt_encode_call(insn, from, start + len);
}

uintptr_t bpfrt_tramp_build(const struct bpfrt_tramp_desc *d, uintptr_t near)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();
	uint8_t code[TRAMP_IMAGE_MAX];
	struct tramp_arena *a;
	int len;

	if (!be || !be->arch_prepare_trampoline) {
		bpfrt_err(-EOPNOTSUPP, "trampoline: no trampolines on this architecture");
		return 0;
	}
	for (a = arenas; a; a = a->next)
		if (a->used + TRAMP_IMAGE_MAX <= ARENA_SIZE &&
		    reaches(near, (uintptr_t)bpfrt_execmem_addr(a->mem), ARENA_SIZE))
			break;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (a)
			a->mem = bpfrt_execmem_alloc_near(ARENA_SIZE, (const void *)near);
		if (!a || !a->mem) {
			free(a);
			bpfrt_err(-ENOMEM, "trampoline: no JIT memory within call range of %#lx",
				  (unsigned long)near);
			return 0;
		}
		a->next = arenas;
		arenas = a;
	}
	uintptr_t image = (uintptr_t)bpfrt_execmem_addr(a->mem) + a->used;

	len = be->arch_prepare_trampoline(code, sizeof(code), image, d);
	if (len < 0 || bpfrt_execmem_copy(a->mem, a->used, code, (size_t)len)) {
		bpfrt_err(len < 0 ? len : -EFAULT, "trampoline: cannot build an image");
		return 0;
	}
	a->used += ((size_t)len + 63) & ~(size_t)63;
	return image;
}

/* Builds tf's image once. */
static int tramp_image(struct bpfrt_tramp_func *tf)
{
	struct bpfrt_tramp_desc d = {
		.body = tf->ip + 5, .md = tf, .enter = bpfrt_tramp_enter, .exit = bpfrt_tramp_exit,
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
				 const char *target, uint64_t cookie,
				 struct bpfrt_link **out)
{
	uint32_t nr_args = bpfrt_attach_nr_args ? bpfrt_attach_nr_args : 6;
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
	tl->tf = tf;
	err = tramp_image(tf);
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
