/* x86-64 trampolines for fentry/fexit/fmod_ret and fentry.multi (the
 * userspace counterpart of the kernel's arch_prepare_bpf_trampoline).
 *
 * Four kinds (attach/trampoline.h): the fentry STUB and its IMAGEs and the
 * fentry.multi global trampoline (MULTI) generate the run path itself (RCU
 * read lock inline, recursion guard inline, calls of the JIT images; C only
 * off the fast path), see prepare_stub/prepare_image/prepare_multi below.
 * The CLASSIC trampoline (fexit, fmod_ret, BPFRT_TRAMP_NO_FAST=1) calls C
 * for the run path; it is described here.
 *
 * A patched function entry is `call tramp`, so on entry [rsp] is the
 * address after that call (entry + 5, the function body) and [rsp+8] the
 * function's own return address. The CLASSIC image:
 *
 *   push rbp; mov rbp, rsp; sub rsp, FRAME     struct bpfrt_tramp_frame at rsp
 *   save rdi, rsi, rdx, rcx, r8, r9 -> args[0..5], rax, xmm0-7
 *   frame->ip = [rbp+8] - 5
 *   eax = enter(frame, md)                     fentry (+ fmod_ret) programs
 *   BODY:      restore everything; leave; ret  -> the function body runs as if
 *                                                 nothing happened
 *   CALL_ORIG: restore; call body; save rax, rdx, xmm0-1
 *   SKIP_ORIG: (frame->rax set by enter)
 *              exit(frame, md)                 fexit programs
 *              rax, rdx, xmm0-1 = saved; leave; add rsp, 8; ret
 *                                              -> straight to the caller
 *
 * xmm0-7 are saved because enter/exit are C and may use them, and host
 * functions take float arguments there. Without a body address (global
 * trampolines of fentry.multi) only the BODY path is emitted. Calling the
 * body from the trampoline means stack-passed arguments would be at the
 * wrong place: fexit/fmod_ret support register arguments only (<= 6). */
#include "attach/run.h"
#include "attach/trampoline.h"
#include "core/rcu.h"
#include "jit/backend.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

enum { RAX_ = 0, RCX_ = 1, RDX_ = 2, RSP_ = 4, RSI_ = 6, RDI_ = 7, R8_ = 8, R9_ = 9 };

struct tbuf {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void put(struct tbuf *b, const void *bytes, size_t n)
{
	if (b->len + n > b->cap) {
		b->overflow = true;
		return;
	}
	memcpy(b->p + b->len, bytes, n);
	b->len += n;
}

static void put1(struct tbuf *b, uint8_t v) { put(b, &v, 1); }
static void put32(struct tbuf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct tbuf *b, uint64_t v) { put(b, &v, 8); }

/* modrm + SIB + displacement for [rsp + off], reg field r. */
static void rsp_mem(struct tbuf *b, int r, int32_t off)
{
	if (off >= -128 && off <= 127) {
		put1(b, (uint8_t)(0x40 | ((r & 7) << 3) | 4));
		put1(b, 0x24);
		put1(b, (uint8_t)off);
	} else {
		put1(b, (uint8_t)(0x80 | ((r & 7) << 3) | 4));
		put1(b, 0x24);
		put32(b, (uint32_t)off);
	}
}

static void store64(struct tbuf *b, int reg, int32_t off)
{
	put1(b, (uint8_t)(0x48 | (reg >= 8 ? 4 : 0)));
	put1(b, 0x89);
	rsp_mem(b, reg, off);
}

static void load64(struct tbuf *b, int reg, int32_t off)
{
	put1(b, (uint8_t)(0x48 | (reg >= 8 ? 4 : 0)));
	put1(b, 0x8b);
	rsp_mem(b, reg, off);
}

static void xmm_store(struct tbuf *b, int x, int32_t off) /* movups [rsp+off], xmmX */
{
	put1(b, 0x0f);
	put1(b, 0x11);
	rsp_mem(b, x, off);
}

static void xmm_load(struct tbuf *b, int x, int32_t off)
{
	put1(b, 0x0f);
	put1(b, 0x10);
	rsp_mem(b, x, off);
}

static void movabs(struct tbuf *b, int reg, uint64_t imm)
{
	put1(b, (uint8_t)(0x48 | (reg >= 8 ? 1 : 0)));
	put1(b, (uint8_t)(0xb8 | (reg & 7)));
	put64(b, imm);
}

/* call or jmp target: rel32 when it reaches from here, else through r11
 * (free at a function entry: not an argument register, caller-saved). */
static void branch_abs(struct tbuf *b, uintptr_t image, uintptr_t target, bool call)
{
	int64_t rel = (int64_t)(target - (image + b->len + 5));

	if (rel == (int32_t)rel) {
		put1(b, call ? 0xe8 : 0xe9);
		put32(b, (uint32_t)(int32_t)rel);
		return;
	}
	movabs(b, 11, target);
	put(b, call ? "\x41\xff\xd3" : "\x41\xff\xe3", 3); /* call/jmp r11 */
}

static void call_abs(struct tbuf *b, uintptr_t image, uintptr_t target)
{
	branch_abs(b, image, target, true);
}

static const int arg_regs[6] = { RDI_, RSI_, RDX_, RCX_, R8_, R9_ };

#define OFF(field) ((int32_t)offsetof(struct bpfrt_tramp_frame, field))

static void save_regs(struct tbuf *b, bool fp)
{
	for (int i = 0; i < 6; i++)
		store64(b, arg_regs[i], OFF(args) + 8 * i);
	store64(b, RAX_, OFF(rax));
	for (int i = 0; i < (fp ? 8 : 0); i++)
		xmm_store(b, i, OFF(xmm) + 16 * i);
}

static void restore_regs(struct tbuf *b, bool fp)
{
	for (int i = 0; i < (fp ? 8 : 0); i++)
		xmm_load(b, i, OFF(xmm) + 16 * i);
	for (int i = 0; i < 6; i++)
		load64(b, arg_regs[i], OFF(args) + 8 * i);
	load64(b, RAX_, OFF(rax));
}

static void call_c(struct tbuf *b, uintptr_t image, const void *md, uintptr_t fn)
{
	put(b, "\x48\x89\xe7", 3);          /* mov rdi, rsp */
	movabs(b, RSI_, (uint64_t)(uintptr_t)md);
	call_abs(b, image, fn);
}

/* jcc rel32 placeholder; returns the offset of its rel32. */
static size_t jcc32(struct tbuf *b, uint8_t cc)
{
	put1(b, 0x0f);
	put1(b, (uint8_t)(0x80 | cc));
	put32(b, 0);
	return b->len - 4;
}

static void fix32(struct tbuf *b, size_t at)
{
	int32_t rel = (int32_t)(b->len - (at + 4));

	if (!b->overflow)
		memcpy(b->p + at, &rel, 4);
}

static void jmp_abs(struct tbuf *b, uintptr_t image, uintptr_t target)
{
	branch_abs(b, image, target, false);
}

/* jmp rel32 back to an earlier offset of the same code. */
static void jmp_back(struct tbuf *b, size_t to)
{
	put1(b, 0xe9);
	put32(b, (uint32_t)(int32_t)((int64_t)to - (int64_t)(b->len + 4)));
}

static void save_xmm(struct tbuf *b)
{
	for (int i = 0; i < 8; i++)
		xmm_store(b, i, OFF(xmm) + 16 * i);
}

static void restore_xmm(struct tbuf *b)
{
	for (int i = 0; i < 8; i++)
		xmm_load(b, i, OFF(xmm) + 16 * i);
}

/* ---- thread-local accesses (fs-relative, initial-exec) --------------------
 *
 * bpfrt_rcu_self, bpfrt_attach_tls and bpfrt_run_state are initial-exec TLS:
 * the same offset from the thread pointer (fs base) in every thread, so a
 * generated instruction reaches them as fs:[disp32]. */

static int32_t tp_off(const void *tls_var)
{
	uintptr_t addr = (uintptr_t)tls_var;

	/* Opaque to GCC, which otherwise folds the difference into a 32-bit
	 * load of the GOT's TP offset that ld cannot relax. */
	__asm__("" : "+r"(addr));
	return (int32_t)(intptr_t)(addr - (uintptr_t)__builtin_thread_pointer());
}

/* fs prefix, optional REX, opcode, modrm(00, r, 100) SIB 0x25 disp32. */
static void fs_op(struct tbuf *b, uint8_t rex, uint8_t op, int r, int32_t disp)
{
	put1(b, 0x64);
	if (rex)
		put1(b, rex);
	put1(b, op);
	put1(b, (uint8_t)(((r & 7) << 3) | 4));
	put1(b, 0x25);
	put32(b, (uint32_t)disp);
}

/* Loads 8 bytes at addr: rip-relative when in reach, else through reg. */
static void load64_abs(struct tbuf *b, uintptr_t image, int reg, uintptr_t addr)
{
	int64_t rel = (int64_t)(addr - (image + b->len + 7));

	if (rel == (int32_t)rel) {
		put1(b, (uint8_t)(0x48 | (reg >= 8 ? 4 : 0)));
		put1(b, 0x8b);
		put1(b, (uint8_t)(((reg & 7) << 3) | 5));
		put32(b, (uint32_t)(int32_t)rel);
		return;
	}
	movabs(b, reg, addr);
	put1(b, (uint8_t)(0x48 | (reg >= 8 ? 5 : 0)));
	put1(b, 0x8b);
	put1(b, (uint8_t)(((reg & 7) << 3) | (reg & 7))); /* mov reg, [reg] */
}

/* ---- the RCU read side, inline ---------------------------------------------
 *
 * Exactly bpfrt_rcu_read_lock()/unlock() of core/rcu.h (keep them in step:
 * tests/test_trampoline.c rcu_inline_matches_c runs both on fresh threads
 * in both modes and compares the reader state after every step):
 *
 *   lock:   if (self.nesting++) done; if (!self.fast) read_lock_slow();
 *           else self.ctr = gp_ctr (a plain mov: release on x86)
 *   unlock: if (--self.nesting) done; self.ctr = 0
 *
 * read_lock_slow() registers the thread and publishes with a fence in
 * fenced mode; self.fast is 1 only for a registered thread in fence-free
 * mode. The layout comes from struct bpfrt_rcu_reader itself (offsetof);
 * the sizes are asserted below. Clobbers rax, rcx (and the C registers on
 * the slow path, which saves xmm0-7 in the frame at rsp). rsp must be
 * 16-aligned. */

_Static_assert(sizeof(((struct bpfrt_rcu_reader *)0)->nesting) == 4, "nesting is a u32");
_Static_assert(sizeof(((struct bpfrt_rcu_reader *)0)->fast) == 1, "fast is a byte");
_Static_assert(sizeof(((struct bpfrt_rcu_reader *)0)->ctr) == 8, "ctr is a u64");

#define RCU_OFF(field) (tp_off(&bpfrt_rcu_self) + \
			(int32_t)offsetof(struct bpfrt_rcu_reader, field))

struct slow_block {
	size_t jcc, back;       /* the branch to patch, where to resume */
	size_t nested_jcc;      /* the nested case, also out of line */
};

static void emit_rcu_lock(struct tbuf *b, uintptr_t image, struct slow_block *slow)
{
	size_t to_nested;

	/* nesting++, with the outermost case a store of 1 that does not wait
	 * for the load */
	put(b, "\x64\x83\x3c\x25", 4);                      /* cmp dword nesting, 0 */
	put32(b, (uint32_t)RCU_OFF(nesting));
	put1(b, 0);
	to_nested = jcc32(b, 0x5);                            /* jnz: nested */
	put(b, "\x64\xc7\x04\x25", 4);                      /* mov dword nesting, 1 */
	put32(b, (uint32_t)RCU_OFF(nesting));
	put32(b, 1);
	put(b, "\x64\x80\x3c\x25", 4);                      /* cmp byte fast, 0 */
	put32(b, (uint32_t)RCU_OFF(fast));
	put1(b, 0);
	slow->jcc = jcc32(b, 0x4);                            /* je: slow */
	load64_abs(b, image, RAX_, (uintptr_t)&bpfrt_rcu_gp_ctr);
	fs_op(b, 0x48, 0x89, RAX_, RCU_OFF(ctr));            /* mov ctr, rax */
	slow->back = b->len;
	slow->nested_jcc = to_nested;
}

static void emit_rcu_lock_slow(struct tbuf *b, uintptr_t image, struct slow_block *slow)
{
	fix32(b, slow->jcc);
	save_xmm(b);
	call_abs(b, image, (uintptr_t)bpfrt_rcu_read_lock_slow);
	restore_xmm(b);
	jmp_back(b, slow->back);
	fix32(b, slow->nested_jcc);
	put(b, "\x64\xff\x04\x25", 4);                      /* inc dword nesting */
	put32(b, (uint32_t)RCU_OFF(nesting));
	jmp_back(b, slow->back);
}

/* The nested case goes out of line to *nested, which
 * emit_rcu_unlock_nested() emits. */
static void emit_rcu_unlock(struct tbuf *b, struct slow_block *nested)
{
	put(b, "\x64\x83\x3c\x25", 4);                      /* cmp dword nesting, 1 */
	put32(b, (uint32_t)RCU_OFF(nesting));
	put1(b, 1);
	nested->jcc = jcc32(b, 0x5);                          /* jne: nested */
	put(b, "\x64\xc7\x04\x25", 4);                      /* mov dword nesting, 0 */
	put32(b, (uint32_t)RCU_OFF(nesting));
	put32(b, 0);
	put(b, "\x64\x48\xc7\x04\x25", 5);                   /* mov qword ctr, 0 */
	put32(b, (uint32_t)RCU_OFF(ctr));
	put32(b, 0);
	nested->back = b->len;
}

static void emit_rcu_unlock_nested(struct tbuf *b, struct slow_block *nested)
{
	fix32(b, nested->jcc);
	put(b, "\x64\xff\x0c\x25", 4);                      /* dec dword nesting */
	put32(b, (uint32_t)RCU_OFF(nesting));
	jmp_back(b, nested->back);
}

/* A frame at rsp; extra = 8 when the code is called normally (rsp 8 mod
 * 16 on entry) rather than from a patched entry (0 mod 16). */
static void prologue(struct tbuf *b, uint32_t extra)
{
	put1(b, 0x55);                              /* push rbp */
	put(b, "\x48\x89\xe5", 3);                  /* mov rbp, rsp */
	put(b, "\x48\x81\xec", 3);                  /* sub rsp, FRAME */
	put32(b, BPFRT_TRAMP_FRAME_SIZE + extra);
}

/* Tests: void f(void) doing just the lock or the unlock. */
static int prepare_rcu_fn(struct tbuf *b, uintptr_t image, bool lock)
{
	struct slow_block slow, nested;

	prologue(b, 8);
	if (lock)
		emit_rcu_lock(b, image, &slow);
	else
		emit_rcu_unlock(b, &nested);
	put1(b, 0xc9);                              /* leave */
	put1(b, 0xc3);
	if (lock)
		emit_rcu_lock_slow(b, image, &slow);
	else
		emit_rcu_unlock_nested(b, &nested);
	return b->overflow ? -E2BIG : (int)b->len;
}

/* ---- fentry fast path: stub and image ------------------------------------ */

static void save_args(struct tbuf *b)
{
	for (int i = 0; i < 6; i++)
		store64(b, arg_regs[i], OFF(args) + 8 * i);
	store64(b, RAX_, OFF(rax));
}

static void restore_args(struct tbuf *b)
{
	for (int i = 0; i < 6; i++)
		load64(b, arg_regs[i], OFF(args) + 8 * i);
	load64(b, RAX_, OFF(rax));
}

/* The stub keeps no frame pointer (nothing in it walks frames, and the
 * traced function sets up its own): sub/add instead of push/mov/leave.
 * It ends with its slot, 8 aligned bytes read by `jmp [rip + slot]`:
 * the current IMAGE, or the stub's own C path when there is none. */
#define STUB_FRAME (BPFRT_TRAMP_FRAME_SIZE + 8)

static int prepare_stub(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	struct slow_block slow, nested;
	size_t jmp_disp, tail, c_path, slot;
	uint64_t c_path_addr;

	if (!d->enter || !d->tail_off || !d->slot_off)
		return -EINVAL;
	put(b, "\x48\x81\xec", 3);                  /* sub rsp, FRAME */
	put32(b, STUB_FRAME);
	save_args(b);
	emit_rcu_lock(b, image, &slow);
	put(b, "\xff\x25", 2);                      /* jmp [rip + slot] */
	put32(b, 0);
	jmp_disp = b->len - 4;
	tail = b->len;
	emit_rcu_unlock(b, &nested);
	restore_args(b);
	put(b, "\x48\x81\xc4", 3);                  /* add rsp, FRAME */
	put32(b, STUB_FRAME);
	put1(b, 0xc3);                              /* ret: into the body */
	c_path = b->len;
	save_xmm(b);
	call_c(b, image, d->md, (uintptr_t)d->enter);
	restore_xmm(b);
	jmp_back(b, tail);
	emit_rcu_lock_slow(b, image, &slow);
	emit_rcu_unlock_nested(b, &nested);
	while (b->len % 8)
		put1(b, 0xcc);
	slot = b->len;
	c_path_addr = image + c_path;
	put64(b, c_path_addr);
	if (b->overflow)
		return -E2BIG;
	int32_t disp = (int32_t)(slot - (jmp_disp + 4));

	memcpy(b->p + jmp_disp, &disp, 4);
	*d->tail_off = (uint32_t)tail;
	*d->slot_off = (uint32_t)slot;
	if (d->c_path_off)
		*d->c_path_off = (uint32_t)c_path;
	return (int)b->len;
}

#define ATTACH_OFF(field) (tp_off(&bpfrt_attach_tls) + \
			   (int32_t)offsetof(struct bpfrt_attach_tls, field))

static void call_run_item(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			  const struct bpfrt_tramp_item *it)
{
	put(b, "\x48\x89\xe7", 3);                  /* mov rdi, rsp */
	movabs(b, RSI_, (uint64_t)(uintptr_t)d->md);
	movabs(b, RDX_, (uint64_t)(uintptr_t)it->prog);
	movabs(b, RCX_, it->cookie);
	call_abs(b, image, (uintptr_t)d->run_item);
}

/* Inline run of a program that calls nothing (the common, fast case):
 *
 *   if (attach_tls.depth) goto slow;      another attached run is active
 *   attach_tls.active[0] = prog; attach_tls.depth = 1;
 *   prog->jit_func(frame->args, 0);
 *   attach_tls.depth = 0;
 *
 * which is bpfrt_attach_run() for an empty stack: such a program can
 * neither abort nor tail call, so the run state needs no saving, and it
 * never looks at the cookie or the frame pointer in the run state. With
 * a non-empty stack the full check runs in C (run_item). */
static void emit_inline_item(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_item *it,
			     struct slow_block *slow)
{
	_Static_assert(sizeof(((struct bpfrt_attach_tls *)0)->depth) == 4, "depth is a u32");

	put(b, "\x64\x83\x3c\x25", 4);              /* cmp dword depth, 0 */
	put32(b, (uint32_t)ATTACH_OFF(depth));
	put1(b, 0);
	slow->jcc = jcc32(b, 0x5);                   /* jnz slow */
	movabs(b, RAX_, (uint64_t)(uintptr_t)it->prog);
	fs_op(b, 0x48, 0x89, RAX_, ATTACH_OFF(active));      /* active[0] = prog */
	put(b, "\x64\xc7\x04\x25", 4);              /* mov dword depth, 1 */
	put32(b, (uint32_t)ATTACH_OFF(depth));
	put32(b, 1);
	put(b, "\x48\x8d\x7c\x24", 4);              /* lea rdi, [rsp + args] */
	put1(b, (uint8_t)OFF(args));
	put(b, "\x31\xf6", 2);                        /* xor esi, esi */
	call_abs(b, image, (uintptr_t)it->prog->jit_func);
	put(b, "\x64\xc7\x04\x25", 4);              /* mov dword depth, 0 */
	put32(b, (uint32_t)ATTACH_OFF(depth));
	put32(b, 0);
	slow->back = b->len;
}

static int prepare_image(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	struct slow_block slow[d->item_cnt ? d->item_cnt : 1];
	bool c_items = false;

	_Static_assert(offsetof(struct bpfrt_tramp_frame, args) < 128, "disp8");
	if (!d->tail || !d->run_item || (d->item_cnt && !d->items))
		return -EINVAL;
	for (uint32_t i = 0; i < d->item_cnt; i++) {
		if (d->items[i].inline_run && !d->items[i].prog->jit_func)
			return -EINVAL;
		c_items |= !d->items[i].inline_run;
	}
	/* C runs may use xmm0-7, which hold the function's float arguments. */
	if (c_items)
		save_xmm(b);
	for (uint32_t i = 0; i < d->item_cnt; i++) {
		if (d->items[i].inline_run)
			emit_inline_item(b, image, &d->items[i], &slow[i]);
		else
			call_run_item(b, image, d, &d->items[i]);
	}
	if (c_items)
		restore_xmm(b);
	jmp_abs(b, image, d->tail);
	for (uint32_t i = 0; i < d->item_cnt; i++) {
		if (!d->items[i].inline_run)
			continue;
		fix32(b, slow[i].jcc);
		save_xmm(b);
		call_run_item(b, image, d, &d->items[i]);
		restore_xmm(b);
		jmp_back(b, slow[i].back);
	}
	return b->overflow ? -E2BIG : (int)b->len;
}

/* fentry.multi's global trampoline, run path generated (see trampoline.h):
 *
 *   sub rsp, FRAME; save arguments; RCU lock; ip = the patched call's return - 5
 *   tf = padding index lookup, else the address hash (both inline)
 *   arr = tf->multi; one item (the usual case): the guard and the call as
 *           in an IMAGE, through item->prog->jit_func, or run_item() in C
 *   several: out of line, a loop kept in rbx/r12 (saved in the frame)
 *   RCU unlock; restore; ret into the body
 *
 * No frame pointer; frame->ip is left to the C paths (run_item sets it from
 * the function state). Frame words the C runs leave alone hold the loop's
 * state: rdx (rbx), unused (r12), cookie (tf). */
#define ITEM_OFF(field) ((int32_t)offsetof(struct bpfrt_prog_array, items) + \
			 (int32_t)offsetof(struct bpfrt_prog_array_item, field))

/* Branches (rel32 offsets) still to be pointed at a later label. */
struct fixups {
	size_t at[8];
	size_t n;
};

static void fixups_point(struct tbuf *b, const struct fixups *f, size_t target)
{
	for (size_t i = 0; i < f->n; i++) {
		int32_t rel = (int32_t)((int64_t)target - (int64_t)(f->at[i] + 4));

		if (!b->overflow)
			memcpy(b->p + f->at[i], &rel, 4);
	}
}

/* The hash lookup (rdi = ip): leaves tf in rdx, or branches to what
 * `none` is later pointed at. Inline, as multi.c's md_lookup (struct
 * bpfrt_md_hash); in C when no table address is given. Clobbers rax,
 * rcx, rdx, rsi, r10, r11. */
static void emit_hash_lookup(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			     struct fixups *none)
{
	size_t probe, to_hit;

	_Static_assert(sizeof(struct bpfrt_md_slot) == 16, "slot stride");
	_Static_assert(offsetof(struct bpfrt_md_hash, slots) < 120, "disp8");
	if (!d->md_table) {
		save_xmm(b);
		call_abs(b, image, (uintptr_t)d->lookup);
		restore_xmm(b);
		put(b, "\x48\x89\xc2", 3);          /* mov rdx, rax */
		put(b, "\x48\x85\xd2", 3);          /* test rdx, rdx */
		none->at[none->n++] = jcc32(b, 0x4); /* jz: detached meanwhile */
		return;
	}
	load64_abs(b, image, RAX_, (uintptr_t)d->md_table);     /* t (acquire: a mov) */
	put(b, "\x48\x85\xc0", 3);                  /* test rax, rax */
	none->at[none->n++] = jcc32(b, 0x4);
	put(b, "\x8b\x48", 2);                      /* mov ecx, [rax + shift] */
	put1(b, (uint8_t)offsetof(struct bpfrt_md_hash, shift));
	movabs(b, RDX_, BPFRT_MD_HASH_MUL);
	put(b, "\x48\x0f\xaf\xd7", 4);              /* imul rdx, rdi */
	put(b, "\x48\xd3\xea", 3);                  /* shr rdx, cl */
	put(b, "\x44\x8b\x58", 3);                  /* mov r11d, [rax + mask] */
	put1(b, (uint8_t)offsetof(struct bpfrt_md_hash, mask));
	probe = b->len;
	put(b, "\x48\x89\xd6", 3);                  /* mov rsi, rdx */
	put(b, "\x48\xc1\xe6\x04", 4);              /* shl rsi, 4 */
	put(b, "\x48\x01\xc6", 3);                  /* add rsi, rax */
	put(b, "\x4c\x8b\x56", 3);                  /* mov r10, [rsi + slots + ip] */
	put1(b, (uint8_t)(offsetof(struct bpfrt_md_hash, slots) +
			  offsetof(struct bpfrt_md_slot, ip)));
	put(b, "\x49\x39\xfa", 3);                  /* cmp r10, rdi */
	to_hit = jcc32(b, 0x4);                      /* je hit */
	put(b, "\x4d\x85\xd2", 3);                  /* test r10, r10 */
	none->at[none->n++] = jcc32(b, 0x4);         /* jz: not there */
	put(b, "\xff\xc2", 2);                      /* inc edx */
	put(b, "\x44\x21\xda", 3);                  /* and edx, r11d */
	jmp_back(b, probe);
	fix32(b, to_hit);
	put(b, "\x48\x8b\x56", 3);                  /* mov rdx, [rsi + slots + tf] */
	put1(b, (uint8_t)(offsetof(struct bpfrt_md_hash, slots) +
			  offsetof(struct bpfrt_md_slot, tf)));
	put(b, "\x48\x85\xd2", 3);                  /* test rdx, rdx */
	none->at[none->n++] = jcc32(b, 0x4);
}

#define MULTI_FRAME (BPFRT_TRAMP_FRAME_SIZE + 8)     /* rsp 16-aligned */

/* The inline run of the item at rsi (prog in rax): as emit_inline_item. */
static void emit_multi_item_call(struct tbuf *b, size_t *to_c)
{
	put(b, "\xf7\x86", 2);                      /* test dword [rsi + flags], INLINE */
	put32(b, (uint32_t)ITEM_OFF(flags));
	put32(b, BPFRT_TRAMP_ITEM_INLINE);
	to_c[0] = jcc32(b, 0x4);                     /* jz: C */
	put(b, "\x64\x83\x3c\x25", 4);              /* cmp dword depth, 0 */
	put32(b, (uint32_t)ATTACH_OFF(depth));
	put1(b, 0);
	to_c[1] = jcc32(b, 0x5);                     /* jnz: C */
	put(b, "\x48\x8b\x86", 3);                  /* mov rax, [rsi + prog] */
	put32(b, (uint32_t)ITEM_OFF(prog));
	fs_op(b, 0x48, 0x89, RAX_, ATTACH_OFF(active));
	put(b, "\x64\xc7\x04\x25", 4);              /* mov dword depth, 1 */
	put32(b, (uint32_t)ATTACH_OFF(depth));
	put32(b, 1);
	put(b, "\x48\x8d\x7c\x24", 4);              /* lea rdi, [rsp + args] */
	put1(b, (uint8_t)OFF(args));
	put(b, "\x31\xf6", 2);                        /* xor esi, esi */
	put(b, "\xff\x90", 2);                        /* call [rax + jit_func] */
	put32(b, (uint32_t)offsetof(struct bpfrt_prog, jit_func));
	put(b, "\x64\xc7\x04\x25", 4);              /* mov dword depth, 0 */
	put32(b, (uint32_t)ATTACH_OFF(depth));
	put32(b, 0);
}

/* The C run of the item at rsi, tf in tf_reg (RDX_) or in frame->cookie. */
static void emit_multi_item_c(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			      bool tf_in_rdx)
{
	save_xmm(b);
	put(b, "\x48\x8b\x8e", 3);                  /* mov rcx, [rsi + cookie] */
	put32(b, (uint32_t)ITEM_OFF(cookie));
	if (tf_in_rdx)
		put(b, "\x48\x89\xd0", 3);          /* mov rax, rdx */
	else
		load64(b, RAX_, OFF(cookie));
	put(b, "\x48\x8b\x96", 3);                  /* mov rdx, [rsi + prog] */
	put32(b, (uint32_t)ITEM_OFF(prog));
	put(b, "\x48\x89\xc6", 3);                  /* mov rsi, rax: tf */
	put(b, "\x48\x89\xe7", 3);                  /* mov rdi, rsp */
	call_abs(b, image, (uintptr_t)d->run_item);
	restore_xmm(b);
}

static int prepare_multi(struct tbuf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	struct slow_block slow, nested;
	struct fixups none = { .n = 0 };
	size_t to_hash[4], n_hash = 0, found, to_many, to_c[2], to_c_many[2];
	size_t loop, next, to_empty, done;

	_Static_assert(sizeof(struct bpfrt_prog_array_item) == 32, "item stride");
	_Static_assert(offsetof(struct bpfrt_tramp_func, ip) < 128, "disp8");
	if (!d->lookup || !d->run_item || (d->pad && !d->pad_chunks))
		return -EINVAL;
	put(b, "\x48\x81\xec", 3);                  /* sub rsp, FRAME */
	put32(b, MULTI_FRAME);
	save_args(b);
	emit_rcu_lock(b, image, &slow);
	load64(b, RDI_, MULTI_FRAME);               /* the patched call's return */
	put(b, "\x48\x83\xef\x05", 4);              /* sub rdi, 5: the entry */
	if (d->pad) {
		/* The hash, for an index that does not lead back to ip, is
		 * out of line below. */
		put(b, "\x8b\x47\xfc", 3);          /* mov eax, [rdi-4] */
		put(b, "\x89\xc1", 2);              /* mov ecx, eax */
		put(b, "\xc1\xe9", 2);              /* shr ecx, bits */
		put1(b, (uint8_t)d->pad_chunk_bits);
		put(b, "\x81\xf9", 2);              /* cmp ecx, chunks */
		put32(b, d->pad_chunk_cnt);
		to_hash[n_hash++] = jcc32(b, 0x3);   /* jae */
		movabs(b, RDX_, (uint64_t)(uintptr_t)d->pad_chunks);
		put(b, "\x48\x8b\x14\xca", 4);      /* mov rdx, [rdx + rcx*8] */
		put(b, "\x48\x85\xd2", 3);          /* test rdx, rdx */
		to_hash[n_hash++] = jcc32(b, 0x4);   /* jz */
		put1(b, 0x25);                       /* and eax, mask */
		put32(b, (1u << d->pad_chunk_bits) - 1);
		put(b, "\x48\x8b\x14\xc2", 4);      /* mov rdx, [rdx + rax*8] */
		put(b, "\x48\x85\xd2", 3);          /* test rdx, rdx */
		to_hash[n_hash++] = jcc32(b, 0x4);   /* jz */
		put(b, "\x48\x39\x7a", 3);          /* cmp [rdx + ip], rdi */
		put1(b, (uint8_t)offsetof(struct bpfrt_tramp_func, ip));
		to_hash[n_hash++] = jcc32(b, 0x5);   /* jne */
	} else {
		emit_hash_lookup(b, image, d, &none);
	}
	found = b->len;
	put(b, "\x48\x8b\xb2", 3);                  /* mov rsi, [rdx + multi] */
	put32(b, (uint32_t)offsetof(struct bpfrt_tramp_func, multi));
	put(b, "\x48\x85\xf6", 3);                  /* test rsi, rsi */
	none.at[none.n++] = jcc32(b, 0x4);           /* jz: nothing attached now */
	put(b, "\x83\x7e", 2);                      /* cmp dword [rsi + cnt], 1 */
	put1(b, (uint8_t)offsetof(struct bpfrt_prog_array, cnt));
	put1(b, 1);
	to_many = jcc32(b, 0x5);                     /* jne: several (or none) */
	emit_multi_item_call(b, to_c);
	done = b->len;
	emit_rcu_unlock(b, &nested);
	restore_args(b);
	put(b, "\x48\x81\xc4", 3);                  /* add rsp, FRAME */
	put32(b, MULTI_FRAME);
	put1(b, 0xc3);                              /* ret: into the body */

	/* out of line: the one item in C */
	fix32(b, to_c[0]);
	fix32(b, to_c[1]);
	emit_multi_item_c(b, image, d, true);
	jmp_back(b, done);

	/* out of line: several items */
	fix32(b, to_many);
	put(b, "\x83\x7e", 2);                      /* cmp dword [rsi + cnt], 0 */
	put1(b, (uint8_t)offsetof(struct bpfrt_prog_array, cnt));
	put1(b, 0);
	to_empty = jcc32(b, 0x4);
	store64(b, 3, OFF(rdx));                    /* rbx */
	store64(b, 12, OFF(unused));                /* r12 */
	store64(b, RDX_, OFF(cookie));              /* tf */
	put(b, "\x48\x89\xf3", 3);                  /* mov rbx, rsi */
	put(b, "\x45\x31\xe4", 3);                  /* xor r12d, r12d */
	loop = b->len;
	put(b, "\x4c\x89\xe6", 3);                  /* mov rsi, r12 */
	put(b, "\x48\xc1\xe6\x05", 4);              /* shl rsi, 5 */
	put(b, "\x48\x01\xde", 3);                  /* add rsi, rbx */
	emit_multi_item_call(b, to_c_many);
	next = b->len;
	put(b, "\x41\xff\xc4", 3);                  /* inc r12d */
	put(b, "\x44\x3b\x63", 3);                  /* cmp r12d, [rbx + cnt] */
	put1(b, (uint8_t)offsetof(struct bpfrt_prog_array, cnt));
	put(b, "\x0f\x82", 2);                      /* jb loop */
	put32(b, (uint32_t)(int32_t)((int64_t)loop - (int64_t)(b->len + 4)));
	load64(b, 3, OFF(rdx));
	load64(b, 12, OFF(unused));
	jmp_back(b, done);
	fix32(b, to_c_many[0]);
	fix32(b, to_c_many[1]);
	emit_multi_item_c(b, image, d, false);
	jmp_back(b, next);
	if (d->pad) {
		for (size_t i = 0; i < n_hash; i++)
			fix32(b, to_hash[i]);
		emit_hash_lookup(b, image, d, &none);
		jmp_back(b, found);
	}
	/* none: no state, or no program, for this ip (detached meanwhile) */
	none.at[none.n++] = to_empty;
	fixups_point(b, &none, done);
	emit_rcu_lock_slow(b, image, &slow);
	emit_rcu_unlock_nested(b, &nested);
	return b->overflow ? -E2BIG : (int)b->len;
}

int bpfrt_x86_prepare_trampoline(void *buf, size_t cap, uintptr_t image,
				 const struct bpfrt_tramp_desc *d)
{
	struct tbuf b = { .p = buf, .cap = cap };
	size_t to_orig = 0, to_skip = 0;

	if (!d)
		return -EINVAL;
	switch (d->type) {
	case BPFRT_TRAMP_CLASSIC:
		break;
	case BPFRT_TRAMP_STUB:
		return prepare_stub(&b, image, d);
	case BPFRT_TRAMP_IMAGE:
		return prepare_image(&b, image, d);
	case BPFRT_TRAMP_MULTI:
		return prepare_multi(&b, image, d);
	case BPFRT_TRAMP_RCU_LOCK_FN:
	case BPFRT_TRAMP_RCU_UNLOCK_FN:
		return prepare_rcu_fn(&b, image, d->type == BPFRT_TRAMP_RCU_LOCK_FN);
	default:
		return -EINVAL;
	}

	_Static_assert(sizeof(struct bpfrt_tramp_frame) + 8 == BPFRT_TRAMP_FRAME_SIZE,
		       "frame size");
	_Static_assert(offsetof(struct bpfrt_tramp_frame, xmm) % 16 == 0, "xmm alignment");
	if (!d->enter || (d->body && !d->exit))
		return -EINVAL;
	put1(&b, 0x55);                              /* push rbp */
	put(&b, "\x48\x89\xe5", 3);                  /* mov rbp, rsp */
	put(&b, "\x48\x81\xec", 3);                  /* sub rsp, FRAME */
	put32(&b, BPFRT_TRAMP_FRAME_SIZE);
	save_regs(&b, !d->no_fp);
	put(&b, "\x48\x8b\x45\x08", 4);              /* mov rax, [rbp+8] */
	put(&b, "\x48\x83\xe8\x05", 4);              /* sub rax, 5 */
	store64(&b, RAX_, OFF(ip));
	call_c(&b, image, d->md, (uintptr_t)d->enter);
	if (d->body) {
		put(&b, "\x85\xc0", 2);              /* test eax, eax */
		to_orig = jcc32(&b, 0x5);            /* jnz */
	}
	restore_regs(&b, !d->no_fp);
	put1(&b, 0xc9);                              /* leave */
	put1(&b, 0xc3);                              /* ret: into the body */
	if (d->body) {
		fix32(&b, to_orig);
		put(&b, "\x83\xf8\x02", 3);          /* cmp eax, 2 */
		to_skip = jcc32(&b, 0x4);            /* je */
		restore_regs(&b, !d->no_fp);
		call_abs(&b, image, d->body);
		store64(&b, RAX_, OFF(rax));
		store64(&b, RDX_, OFF(rdx));
		xmm_store(&b, 0, OFF(xmm));
		xmm_store(&b, 1, OFF(xmm) + 16);
		fix32(&b, to_skip);
		call_c(&b, image, d->md, (uintptr_t)d->exit);
		load64(&b, RAX_, OFF(rax));
		load64(&b, RDX_, OFF(rdx));
		xmm_load(&b, 0, OFF(xmm));
		xmm_load(&b, 1, OFF(xmm) + 16);
		put1(&b, 0xc9);                      /* leave */
		put(&b, "\x48\x83\xc4\x08", 4);      /* add rsp, 8: drop the body address */
		put1(&b, 0xc3);                      /* ret: to the function's caller */
	}
	return b.overflow ? -E2BIG : (int)b.len;
}
