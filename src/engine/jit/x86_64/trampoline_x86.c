/* x86-64 trampolines for fentry/fexit/fmod_ret and fentry.multi (the
 * userspace counterpart of the kernel's arch_prepare_bpf_trampoline).
 *
 * Five kinds (jit/trampoline_backend.h): the fentry STUB and its IMAGEs, the
 * fentry.multi global trampoline (MULTI) and a kprobe/uprobe site's run
 * function (PROBE) generate the run path itself (RCU read lock inline,
 * recursion guard inline, calls of the JIT images; C only off the fast
 * path), see prepare_stub/prepare_image/prepare_multi/prepare_probe below.
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
#include "core/prog.h"
#include "core/rcu.h"
#include "jit/backend.h"
#include "jit/trampoline_backend.h"
#include "jit/x86_64/emit.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The SysV argument registers, in order. */
static const int arg_regs[6] = { RDI, RSI, RDX, RCX, R8, R9 };

#define OFF(field) ((int32_t)offsetof(struct bpfrt_tramp_frame, field))

/* Frame accesses keep at least a disp8 ([rsp + 0] too): the layout of
 * this code does not depend on the frame's. */
static void store64(struct x86_buf *b, int reg, int32_t off)
{
	emit_rm_min(b, false, true, 0x89, reg, RSP, off, false, 1);
}

static void load64(struct x86_buf *b, int reg, int32_t off)
{
	emit_rm_min(b, false, true, 0x8b, reg, RSP, off, false, 1);
}

static void xmm_store(struct x86_buf *b, int x, int32_t off)
{
	emit_sse_mov(b, SSE_MOVUPS_STORE, x, RSP, off, 1);
}

static void xmm_load(struct x86_buf *b, int x, int32_t off)
{
	emit_sse_mov(b, SSE_MOVUPS_LOAD, x, RSP, off, 1);
}

/* call or jmp target: rel32 when it reaches from here, else through r11
 * (free at a function entry: not an argument register, caller-saved). */
static void call_abs(struct x86_buf *b, uintptr_t image, uintptr_t target)
{
	emit_branch_abs(b, image, target, true, R11);
}

static void jmp_abs(struct x86_buf *b, uintptr_t image, uintptr_t target)
{
	emit_branch_abs(b, image, target, false, R11);
}

static void save_regs(struct x86_buf *b, bool fp)
{
	for (int i = 0; i < 6; i++)
		store64(b, arg_regs[i], OFF(args) + 8 * i);
	store64(b, RAX, OFF(rax));
	for (int i = 0; i < (fp ? 8 : 0); i++)
		xmm_store(b, i, OFF(xmm) + 16 * i);
}

static void restore_regs(struct x86_buf *b, bool fp)
{
	for (int i = 0; i < (fp ? 8 : 0); i++)
		xmm_load(b, i, OFF(xmm) + 16 * i);
	for (int i = 0; i < 6; i++)
		load64(b, arg_regs[i], OFF(args) + 8 * i);
	load64(b, RAX, OFF(rax));
}

/* fn(frame, md) */
static void call_c(struct x86_buf *b, uintptr_t image, const void *md, uintptr_t fn)
{
	emit_mov_rr(b, true, RDI, RSP);
	emit_movabs(b, RSI, (uint64_t)(uintptr_t)md);
	call_abs(b, image, fn);
}

static void save_xmm(struct x86_buf *b)
{
	for (int i = 0; i < 8; i++)
		xmm_store(b, i, OFF(xmm) + 16 * i);
}

static void restore_xmm(struct x86_buf *b)
{
	for (int i = 0; i < 8; i++)
		xmm_load(b, i, OFF(xmm) + 16 * i);
}

/* ---- thread-local accesses (fs-relative, initial-exec) --------------------
 *
 * bpfrt_rcu_self and the host's attach TLS are initial-exec TLS: the same
 * offset from the thread pointer (fs base) in every thread, so a generated
 * instruction reaches them as fs:[disp32]. */

static int32_t tp_off(const void *tls_var)
{
	uintptr_t addr = (uintptr_t)tls_var;

	/* Opaque to GCC, which otherwise folds the difference into a 32-bit
	 * load of the GOT's TP offset that ld cannot relax. */
	__asm__("" : "+r"(addr));
	return (int32_t)(intptr_t)(addr - (uintptr_t)__builtin_thread_pointer());
}

/* cmp dword fs:[disp], imm8 */
static void fs_cmp32_imm8(struct x86_buf *b, int32_t disp, int8_t imm)
{
	emit_fs_rm(b, false, false, 0x83, ALU_CMP, disp);
	emit1(b, (uint8_t)imm);
}

/* mov dword fs:[disp], imm32 */
static void fs_mov32_imm(struct x86_buf *b, int32_t disp, uint32_t imm)
{
	emit_fs_rm(b, false, false, 0xc7, 0, disp);
	emit_u32(b, imm);
}

/* Loads 8 bytes at addr: rip-relative when in reach, else through reg. */
static void load64_abs(struct x86_buf *b, uintptr_t image, int reg, uintptr_t addr)
{
	int64_t rel = (int64_t)(addr - (image + b->len + rip_rm_len(true, reg)));

	if (is_simm32(rel)) {
		emit_rip_rm(b, true, 0x8b, reg, (int32_t)rel);
		return;
	}
	emit_movabs(b, reg, addr);
	emit_rm(b, false, true, 0x8b, reg, reg, 0, false); /* mov reg, [reg] */
}

/* ---- the RCU read side, inline ---------------------------------------------
 *
 * Exactly bpfrt_rcu_read_lock()/unlock() of core/rcu.h (keep them in step:
 * tests/test_trampoline.c rcu_inline_matches_c runs both on fresh threads
 * in both modes and compares the reader state after every step):
 *
 *   lock:   if (self.nesting++) done; if (!self.fast) read_lock_slow();
 *           else self.ctr = gp_ctr (a plain mov: release on x86)
 *   unlock: if (--self.nesting) done; self.run_cpu = 0; self.ctr = 0
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
_Static_assert(sizeof(((struct bpfrt_rcu_reader *)0)->run_cpu) == 4, "run_cpu is an i32");

#define RCU_OFF(field) (tp_off(&bpfrt_rcu_self) + \
			(int32_t)offsetof(struct bpfrt_rcu_reader, field))

struct slow_block {
	size_t jcc, back;       /* the branch to patch, where to resume */
	size_t nested_jcc;      /* the nested case, also out of line */
};

static void emit_rcu_lock(struct x86_buf *b, uintptr_t image, struct slow_block *slow)
{
	size_t to_nested;

	/* nesting++, with the outermost case a store of 1 that does not wait
	 * for the load */
	fs_cmp32_imm8(b, RCU_OFF(nesting), 0);
	to_nested = emit_jcc_fwd(b, CC_NE);
	fs_mov32_imm(b, RCU_OFF(nesting), 1);
	emit_fs_rm(b, false, false, 0x80, ALU_CMP, RCU_OFF(fast));  /* cmp byte fast, 0 */
	emit1(b, 0);
	slow->jcc = emit_jcc_fwd(b, CC_E);
	load64_abs(b, image, RAX, (uintptr_t)&bpfrt_rcu_gp_ctr);
	emit_fs_rm(b, false, true, 0x89, RAX, RCU_OFF(ctr));       /* mov ctr, rax */
	slow->back = b->len;
	slow->nested_jcc = to_nested;
}

static void emit_rcu_lock_slow(struct x86_buf *b, uintptr_t image, struct slow_block *slow)
{
	emit_label_here(b, slow->jcc);
	save_xmm(b);
	call_abs(b, image, (uintptr_t)bpfrt_rcu_read_lock_slow);
	restore_xmm(b);
	emit_jcc_back(b, -1, slow->back);
	emit_label_here(b, slow->nested_jcc);
	emit_fs_rm(b, false, false, 0xff, 0, RCU_OFF(nesting));    /* inc dword nesting */
	emit_jcc_back(b, -1, slow->back);
}

/* The nested case goes out of line to *nested, which
 * emit_rcu_unlock_nested() emits. */
/* Leaving the outermost section. */
static void emit_rcu_unlock_outermost(struct x86_buf *b)
{
	fs_mov32_imm(b, RCU_OFF(nesting), 0);
	fs_mov32_imm(b, RCU_OFF(run_cpu), 0);
	emit_fs_rm(b, false, true, 0xc7, 0, RCU_OFF(ctr));         /* mov qword ctr, 0 */
	emit_u32(b, 0);
}

static void emit_rcu_unlock(struct x86_buf *b, struct slow_block *nested)
{
	fs_cmp32_imm8(b, RCU_OFF(nesting), 1);
	nested->jcc = emit_jcc_fwd(b, CC_NE);
	emit_rcu_unlock_outermost(b);
	nested->back = b->len;
}

static void emit_rcu_unlock_nested(struct x86_buf *b, struct slow_block *nested)
{
	emit_label_here(b, nested->jcc);
	emit_fs_rm(b, false, false, 0xff, 1, RCU_OFF(nesting));    /* dec dword nesting */
	emit_jcc_back(b, -1, nested->back);
}

/* A frame at rsp; extra = 8 when the code is called normally (rsp 8 mod
 * 16 on entry) rather than from a patched entry (0 mod 16). */
static void prologue(struct x86_buf *b, uint32_t extra)
{
	emit_push(b, RBP);
	emit_mov_rr(b, true, RBP, RSP);
	emit_alu_ri32(b, true, ALU_SUB, RSP, (int32_t)(BPFRT_TRAMP_FRAME_SIZE + extra));
}

static int finish(const struct x86_buf *b)
{
	return b->overflow ? -E2BIG : (int)b->len;
}

/* Tests: void f(void) doing just the lock or the unlock. */
static int prepare_rcu_fn(struct x86_buf *b, uintptr_t image, bool lock)
{
	struct slow_block slow, nested;

	prologue(b, 8);
	if (lock)
		emit_rcu_lock(b, image, &slow);
	else
		emit_rcu_unlock(b, &nested);
	emit1(b, X86_LEAVE);
	emit1(b, X86_RET);
	if (lock)
		emit_rcu_lock_slow(b, image, &slow);
	else
		emit_rcu_unlock_nested(b, &nested);
	return finish(b);
}

/* ---- fentry fast path: stub and image ------------------------------------ */

static void save_args(struct x86_buf *b)
{
	for (int i = 0; i < 6; i++)
		store64(b, arg_regs[i], OFF(args) + 8 * i);
	store64(b, RAX, OFF(rax));
}

static void restore_args(struct x86_buf *b)
{
	for (int i = 0; i < 6; i++)
		load64(b, arg_regs[i], OFF(args) + 8 * i);
	load64(b, RAX, OFF(rax));
}

/* The stub keeps no frame pointer (nothing in it walks frames, and the
 * traced function sets up its own): sub/add instead of push/mov/leave.
 * It ends with its slot, 8 aligned bytes read by `jmp [rip + slot]`:
 * the current IMAGE, or the stub's own C path when there is none. */
#define STUB_FRAME (BPFRT_TRAMP_FRAME_SIZE + 8)

static int prepare_stub(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	struct slow_block slow, nested;
	size_t jmp_disp, tail, c_path, slot;

	if (!d->enter || !d->tail_off || !d->slot_off)
		return -EINVAL;
	emit_alu_ri32(b, true, ALU_SUB, RSP, STUB_FRAME);
	save_args(b);
	emit_rcu_lock(b, image, &slow);
	emit_rip_rm(b, false, 0xff, 4, 0);          /* jmp [rip + slot] */
	jmp_disp = b->len - 4;
	tail = b->len;
	emit_rcu_unlock(b, &nested);
	restore_args(b);
	emit_alu_ri32(b, true, ALU_ADD, RSP, STUB_FRAME);
	emit1(b, X86_RET);                          /* into the body */
	c_path = b->len;
	save_xmm(b);
	call_c(b, image, d->md, (uintptr_t)d->enter);
	restore_xmm(b);
	emit_jcc_back(b, -1, tail);
	emit_rcu_lock_slow(b, image, &slow);
	emit_rcu_unlock_nested(b, &nested);
	while (b->len % 8 && !b->overflow)
		emit1(b, X86_INT3);
	slot = b->len;
	emit_u64(b, image + c_path);
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

static void call_run_item(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			  const struct bpfrt_tramp_item *it)
{
	emit_mov_rr(b, true, RDI, RSP);
	emit_movabs(b, RSI, (uint64_t)(uintptr_t)d->md);
	emit_movabs(b, RDX, (uint64_t)(uintptr_t)it->prog);
	emit_movabs(b, RCX, it->cookie);
	call_abs(b, image, (uintptr_t)d->run_item);
}

/* rdi = the frame's argument array, esi = 0: a program's (r1, r2). */
static void program_args(struct x86_buf *b)
{
	_Static_assert(offsetof(struct bpfrt_tramp_frame, args) < 128, "disp8");
	emit_rm_min(b, false, true, 0x8d, RDI, RSP, OFF(args), false, 1); /* lea */
	emit_alu_rr(b, false, ALU_XOR, RSI, RSI);
}

/* Inline run of a program that calls nothing (the common, fast case):
 *
 *   if (attach depth) goto slow;          another attached run is active
 *   active[0] = prog; attach depth = 1;
 *   prog->jit_func(frame->args, 0);
 *   attach depth = 0;
 *
 * which is the host's attach run for an empty stack: such a program can
 * neither abort nor tail call, so the run state needs no saving, and it
 * never looks at the cookie or the frame pointer in the run state. With
 * a non-empty stack the full check runs in C (run_item). */
static void emit_inline_item(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			     const struct bpfrt_tramp_item *it, struct slow_block *slow)
{
	const struct bpfrt_tramp_layout *l = d->layout;

	fs_cmp32_imm8(b, l->tls_depth, 0);
	slow->jcc = emit_jcc_fwd(b, CC_NE);
	emit_movabs(b, RAX, (uint64_t)(uintptr_t)it->prog);
	emit_fs_rm(b, false, true, 0x89, RAX, l->tls_active);    /* active[0] = prog */
	fs_mov32_imm(b, l->tls_depth, 1);
	program_args(b);
	call_abs(b, image, (uintptr_t)it->prog->jit_func);
	fs_mov32_imm(b, l->tls_depth, 0);
	slow->back = b->len;
}

static int prepare_image(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	struct slow_block slow[d->item_cnt ? d->item_cnt : 1];
	bool c_items = false;

	if (!d->tail || !d->run_item || (d->item_cnt && !d->items) || !d->layout)
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
			emit_inline_item(b, image, d, &d->items[i], &slow[i]);
		else
			call_run_item(b, image, d, &d->items[i]);
	}
	if (c_items)
		restore_xmm(b);
	jmp_abs(b, image, d->tail);
	for (uint32_t i = 0; i < d->item_cnt; i++) {
		if (!d->items[i].inline_run)
			continue;
		emit_label_here(b, slow[i].jcc);
		save_xmm(b);
		call_run_item(b, image, d, &d->items[i]);
		restore_xmm(b);
		emit_jcc_back(b, -1, slow[i].back);
	}
	return finish(b);
}

/* fentry.multi's global trampoline, run path generated:
 *
 *   sub rsp, FRAME; save arguments; RCU lock; ip = the patched call's return - 5
 *   state = padding index lookup, else the address hash (both inline)
 *   arr = state->multi; one item (the usual case): the guard and the call as
 *           in an IMAGE, through item->prog->jit_func, or run_item() in C
 *   several: out of line, a loop kept in rbx/r12 (saved in the frame)
 *   RCU unlock; restore; ret into the body
 *
 * No frame pointer; frame->ip is left to the C paths (run_item sets it from
 * the function state). Frame words the C runs leave alone hold the loop's
 * state: rdx (rbx), unused (r12), cookie (the state). */

/* Branches (rel32 offsets) still to be pointed at a later label. */
struct fixups {
	size_t at[8];
	size_t n;
};

static void fixups_point(struct x86_buf *b, const struct fixups *f, size_t target)
{
	for (size_t i = 0; i < f->n; i++) {
		int32_t rel = (int32_t)((int64_t)target - (int64_t)(f->at[i] + 4));

		if (!b->overflow)
			memcpy(b->p + f->at[i], &rel, 4);
	}
}

/* The hash lookup (rdi = ip): leaves the state in rdx, or branches to what
 * `none` is later pointed at. Inline, as the host's lookup; in C when no
 * table address is given. Clobbers rax, rcx, rdx, rsi, r10, r11. */
static void emit_hash_lookup(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			     struct fixups *none)
{
	const struct bpfrt_tramp_layout *l = d->layout;
	size_t probe, to_hit;

	if (!d->md_table) {
		save_xmm(b);
		call_abs(b, image, (uintptr_t)d->lookup);
		restore_xmm(b);
		emit_mov_rr(b, true, RDX, RAX);
		emit_test_rr(b, true, RDX, RDX);
		none->at[none->n++] = emit_jcc_fwd(b, CC_E); /* detached meanwhile */
		return;
	}
	load64_abs(b, image, RAX, (uintptr_t)d->md_table);     /* t (acquire: a mov) */
	emit_test_rr(b, true, RAX, RAX);
	none->at[none->n++] = emit_jcc_fwd(b, CC_E);
	emit_rm_min(b, false, false, 0x8b, RCX, RAX, (int32_t)l->hash_shift, false, 1);
	emit_movabs(b, RDX, l->hash_mul);
	emit_rr(b, true, 0x0faf, RDX, RDI);                     /* imul rdx, rdi */
	emit_shift_cl(b, true, SH_SHR, RDX);
	emit_rm_min(b, false, false, 0x8b, R11, RAX, (int32_t)l->hash_mask, false, 1);
	probe = b->len;
	emit_mov_rr(b, true, RSI, RDX);
	emit_shift_ri(b, true, SH_SHL, RSI, (uint8_t)l->slot_shift);
	emit_alu_rr(b, true, ALU_ADD, RSI, RAX);                /* the slot */
	emit_rm_min(b, false, true, 0x8b, R10, RSI, (int32_t)(l->hash_slots + l->slot_ip), false, 1);
	emit_alu_rr(b, true, ALU_CMP, R10, RDI);
	to_hit = emit_jcc_fwd(b, CC_E);
	emit_test_rr(b, true, R10, R10);
	none->at[none->n++] = emit_jcc_fwd(b, CC_E);           /* not there */
	emit_op_digit_r(b, false, 0xff, 0, RDX);                /* inc edx */
	emit_alu_rr(b, false, ALU_AND, RDX, R11);
	emit_jcc_back(b, -1, probe);
	emit_label_here(b, to_hit);
	emit_rm_min(b, false, true, 0x8b, RDX, RSI, (int32_t)(l->hash_slots + l->slot_func), false, 1);
	emit_test_rr(b, true, RDX, RDX);
	none->at[none->n++] = emit_jcc_fwd(b, CC_E);
}

#define MULTI_FRAME (BPFRT_TRAMP_FRAME_SIZE + 8)     /* rsp 16-aligned */

static int32_t item_off(const struct bpfrt_tramp_layout *l, uint32_t field)
{
	return (int32_t)(l->arr_items + field);
}

/* The inline run of the item at rsi (prog in rax): as emit_inline_item. */
static void emit_multi_item_call(struct x86_buf *b, const struct bpfrt_tramp_layout *l,
				 size_t *to_c)
{
	emit_test_mi(b, false, RSI, item_off(l, l->item_flags), BPFRT_TRAMP_ITEM_INLINE, 4);
	to_c[0] = emit_jcc_fwd(b, CC_E);                        /* not inline: C */
	fs_cmp32_imm8(b, l->tls_depth, 0);
	to_c[1] = emit_jcc_fwd(b, CC_NE);                       /* guard busy: C */
	emit_rm_min(b, false, true, 0x8b, RAX, RSI, item_off(l, l->item_prog), false, 4);
	emit_fs_rm(b, false, true, 0x89, RAX, l->tls_active);
	fs_mov32_imm(b, l->tls_depth, 1);
	program_args(b);
	/* call [rax + jit_func] */
	emit_rm_min(b, false, false, 0xff, 2, RAX, (int32_t)l->prog_jit_func, false, 4);
	fs_mov32_imm(b, l->tls_depth, 0);
}

/* The C run of the item at rsi, the state in rdx or in frame->cookie. */
static void emit_multi_item_c(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d,
			      bool tf_in_rdx)
{
	const struct bpfrt_tramp_layout *l = d->layout;

	save_xmm(b);
	emit_rm_min(b, false, true, 0x8b, RCX, RSI, item_off(l, l->item_cookie), false, 4);
	if (tf_in_rdx)
		emit_mov_rr(b, true, RAX, RDX);
	else
		load64(b, RAX, OFF(cookie));
	emit_rm_min(b, false, true, 0x8b, RDX, RSI, item_off(l, l->item_prog), false, 4);
	emit_mov_rr(b, true, RSI, RAX);                         /* the state */
	emit_mov_rr(b, true, RDI, RSP);
	call_abs(b, image, (uintptr_t)d->run_item);
	restore_xmm(b);
}

/* The layout's 8-bit displacements fit. */
static bool multi_layout_ok(const struct bpfrt_tramp_layout *l)
{
	return l && l->arr_cnt < 128 && l->func_ip < 128 && l->hash_shift < 128 &&
	       l->hash_mask < 128 && l->hash_slots + l->slot_ip < 128 &&
	       l->hash_slots + l->slot_func < 128 && l->item_shift < 32 && l->slot_shift < 32;
}

static int prepare_multi(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	const struct bpfrt_tramp_layout *l = d->layout;
	struct slow_block slow, nested;
	struct fixups none = { .n = 0 };
	size_t to_hash[4], n_hash = 0, found, to_many, to_c[2], to_c_many[2];
	size_t loop, next, to_empty, done;

	if (!d->lookup || !d->run_item || (d->pad && !d->pad_chunks) || !multi_layout_ok(l))
		return -EINVAL;
	emit_alu_ri32(b, true, ALU_SUB, RSP, MULTI_FRAME);
	save_args(b);
	emit_rcu_lock(b, image, &slow);
	load64(b, RDI, MULTI_FRAME);                /* the patched call's return */
	emit_alu_ri(b, true, ALU_SUB, RDI, 5);      /* the entry */
	if (d->pad) {
		/* The hash, for an index that does not lead back to ip, is
		 * out of line below. */
		emit_rm(b, false, false, 0x8b, RAX, RDI, -4, false);  /* mov eax, [rdi-4] */
		emit_mov_rr(b, false, RCX, RAX);
		emit_shift_ri(b, false, SH_SHR, RCX, (uint8_t)d->pad_chunk_bits);
		emit_alu_ri32(b, false, ALU_CMP, RCX, (int32_t)d->pad_chunk_cnt);
		to_hash[n_hash++] = emit_jcc_fwd(b, CC_AE);
		emit_movabs(b, RDX, (uint64_t)(uintptr_t)d->pad_chunks);
		emit_rm_sib(b, true, 0x8b, RDX, RDX, RCX, 3, 0);      /* mov rdx, [rdx + rcx*8] */
		emit_test_rr(b, true, RDX, RDX);
		to_hash[n_hash++] = emit_jcc_fwd(b, CC_E);
		emit_alu_ri32(b, false, ALU_AND, RAX, (int32_t)((1u << d->pad_chunk_bits) - 1));
		emit_rm_sib(b, true, 0x8b, RDX, RDX, RAX, 3, 0);      /* mov rdx, [rdx + rax*8] */
		emit_test_rr(b, true, RDX, RDX);
		to_hash[n_hash++] = emit_jcc_fwd(b, CC_E);
		/* cmp [rdx + ip], rdi */
		emit_rm_min(b, false, true, 0x39, RDI, RDX, (int32_t)l->func_ip, false, 1);
		to_hash[n_hash++] = emit_jcc_fwd(b, CC_NE);
	} else {
		emit_hash_lookup(b, image, d, &none);
	}
	found = b->len;
	emit_rm_min(b, false, true, 0x8b, RSI, RDX, (int32_t)l->func_multi, false, 4);
	emit_test_rr(b, true, RSI, RSI);
	none.at[none.n++] = emit_jcc_fwd(b, CC_E);             /* nothing attached now */
	emit_alu_mi(b, false, ALU_CMP, RSI, (int32_t)l->arr_cnt, 1, 1);
	to_many = emit_jcc_fwd(b, CC_NE);                       /* several (or none) */
	emit_multi_item_call(b, l, to_c);
	done = b->len;
	emit_rcu_unlock(b, &nested);
	restore_args(b);
	emit_alu_ri32(b, true, ALU_ADD, RSP, MULTI_FRAME);
	emit1(b, X86_RET);                          /* into the body */

	/* out of line: the one item in C */
	emit_label_here(b, to_c[0]);
	emit_label_here(b, to_c[1]);
	emit_multi_item_c(b, image, d, true);
	emit_jcc_back(b, -1, done);

	/* out of line: several items */
	emit_label_here(b, to_many);
	emit_alu_mi(b, false, ALU_CMP, RSI, (int32_t)l->arr_cnt, 0, 1);
	to_empty = emit_jcc_fwd(b, CC_E);
	store64(b, RBX, OFF(rdx));
	store64(b, R12, OFF(unused));
	store64(b, RDX, OFF(cookie));               /* the state */
	emit_mov_rr(b, true, RBX, RSI);
	emit_alu_rr(b, false, ALU_XOR, R12, R12);
	loop = b->len;
	emit_mov_rr(b, true, RSI, R12);
	emit_shift_ri(b, true, SH_SHL, RSI, (uint8_t)l->item_shift);
	emit_alu_rr(b, true, ALU_ADD, RSI, RBX);
	emit_multi_item_call(b, l, to_c_many);
	next = b->len;
	emit_op_digit_r(b, false, 0xff, 0, R12);    /* inc r12d */
	emit_rm_min(b, false, false, 0x3b, R12, RBX, (int32_t)l->arr_cnt, false, 1);
	emit_jcc_back(b, CC_B, loop);
	load64(b, RBX, OFF(rdx));
	load64(b, R12, OFF(unused));
	emit_jcc_back(b, -1, done);
	emit_label_here(b, to_c_many[0]);
	emit_label_here(b, to_c_many[1]);
	emit_multi_item_c(b, image, d, false);
	emit_jcc_back(b, -1, next);
	if (d->pad) {
		for (size_t i = 0; i < n_hash; i++)
			emit_label_here(b, to_hash[i]);
		emit_hash_lookup(b, image, d, &none);
		emit_jcc_back(b, -1, found);
	}
	/* none: no state, or no program, for this ip (detached meanwhile) */
	none.at[none.n++] = to_empty;
	fixups_point(b, &none, done);
	emit_rcu_lock_slow(b, image, &slow);
	emit_rcu_unlock_nested(b, &nested);
	return finish(b);
}

/* ---- kprobe/uprobe sites: the run path (PROBE) -----------------------------
 *
 *   if (self.nesting || !self.fast) goto c_path;
 *   if (*rprogs_slot && (!kret_enter || !tls[tls_kret])) goto c_path;
 *   self.nesting = 1; self.ctr = gp_ctr;          the outermost lock
 *   arr = *progs_slot;
 *   if (arr) {
 *           if (arr->cnt != 1 || !(item 0 INLINE) || attach depth) {
 *                   unlock; goto c_path;
 *           }
 *           active[0] = prog; attach depth = 1;
 *           prog->jit_func(regs, 0);
 *           attach depth = 0;
 *   }
 *   eax = *rprogs_slot ? kret_enter(md, regs) : 0;
 *   unlock; return eax;
 *
 * rbx keeps regs (pushed: rsp is then 16-aligned for the calls). The
 * slow read-side cases go to C whole rather than to
 * bpfrt_rcu_read_lock_slow(): at a probe inside a function every FP
 * register may be live, and only the C path saves the whole FP state.
 * The kretprobe slot's first test is outside the section (for NULL
 * only); kret_enter reads it again inside. */
static int prepare_probe(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	const struct bpfrt_tramp_layout *l = d->layout;
	size_t to_c[4], to_unlock_c[3], none, no_kret, no_kret2;
	int n_c = 0;

	if (!d->progs_slot || !d->rprogs_slot || !d->c_path || !l || l->arr_cnt >= 128 ||
	    (d->kret_enter && !d->tls_kret))
		return -EINVAL;
	emit_push(b, RBX);
	emit_mov_rr(b, true, RBX, RDI);
	fs_cmp32_imm8(b, RCU_OFF(nesting), 0);
	to_c[n_c++] = emit_jcc_fwd(b, CC_NE);
	emit_fs_rm(b, false, false, 0x80, ALU_CMP, RCU_OFF(fast));  /* cmp byte fast, 0 */
	emit1(b, 0);
	to_c[n_c++] = emit_jcc_fwd(b, CC_E);
	load64_abs(b, image, RAX, (uintptr_t)d->rprogs_slot);
	emit_test_rr(b, true, RAX, RAX);
	if (d->kret_enter) {
		no_kret = emit_jcc_fwd(b, CC_E);
		emit_fs_rm(b, false, true, 0x83, ALU_CMP, d->tls_kret); /* cmp qword fs:[kret], 0 */
		emit1(b, 0);
		to_c[n_c++] = emit_jcc_fwd(b, CC_E);
		emit_label_here(b, no_kret);
	} else {
		to_c[n_c++] = emit_jcc_fwd(b, CC_NE);
	}
	fs_mov32_imm(b, RCU_OFF(nesting), 1);
	load64_abs(b, image, RAX, (uintptr_t)&bpfrt_rcu_gp_ctr);
	emit_fs_rm(b, false, true, 0x89, RAX, RCU_OFF(ctr));       /* mov ctr, rax */
	load64_abs(b, image, RAX, (uintptr_t)d->progs_slot);       /* acquire: a mov */
	emit_test_rr(b, true, RAX, RAX);
	none = emit_jcc_fwd(b, CC_E);
	emit_alu_mi(b, false, ALU_CMP, RAX, (int32_t)l->arr_cnt, 1, 1);
	to_unlock_c[0] = emit_jcc_fwd(b, CC_NE);
	emit_test_mi(b, false, RAX, item_off(l, l->item_flags), BPFRT_TRAMP_ITEM_INLINE, 4);
	to_unlock_c[1] = emit_jcc_fwd(b, CC_E);
	fs_cmp32_imm8(b, l->tls_depth, 0);
	to_unlock_c[2] = emit_jcc_fwd(b, CC_NE);
	emit_rm_min(b, false, true, 0x8b, RAX, RAX, item_off(l, l->item_prog), false, 4);
	emit_fs_rm(b, false, true, 0x89, RAX, l->tls_active);    /* active[0] = prog */
	fs_mov32_imm(b, l->tls_depth, 1);
	emit_mov_rr(b, true, RDI, RBX);
	emit_alu_rr(b, false, ALU_XOR, RSI, RSI);
	/* call [rax + jit_func] */
	emit_rm_min(b, false, false, 0xff, 2, RAX, (int32_t)l->prog_jit_func, false, 4);
	fs_mov32_imm(b, l->tls_depth, 0);
	emit_label_here(b, none);
	emit_alu_rr(b, false, ALU_XOR, RAX, RAX);
	if (d->kret_enter) {
		load64_abs(b, image, RCX, (uintptr_t)d->rprogs_slot);
		emit_test_rr(b, true, RCX, RCX);
		no_kret2 = emit_jcc_fwd(b, CC_E);
		emit_movabs(b, RDI, (uint64_t)(uintptr_t)d->md);
		emit_mov_rr(b, true, RSI, RBX);
		call_abs(b, image, d->kret_enter);
		emit_label_here(b, no_kret2);
	}
	emit_rcu_unlock_outermost(b);
	emit_pop(b, RBX);
	emit1(b, X86_RET);
	for (int i = 0; i < 3; i++)
		emit_label_here(b, to_unlock_c[i]);
	emit_rcu_unlock_outermost(b);
	for (int i = 0; i < n_c; i++)
		emit_label_here(b, to_c[i]);
	emit_mov_rr(b, true, RDI, RBX);
	emit_pop(b, RBX);
	jmp_abs(b, image, d->c_path);
	return finish(b);
}

static int prepare_classic(struct x86_buf *b, uintptr_t image, const struct bpfrt_tramp_desc *d)
{
	size_t to_orig = 0, to_skip = 0;

	_Static_assert(sizeof(struct bpfrt_tramp_frame) + 8 == BPFRT_TRAMP_FRAME_SIZE,
		       "frame size");
	_Static_assert(offsetof(struct bpfrt_tramp_frame, xmm) % 16 == 0, "xmm alignment");
	if (!d->enter || (d->body && !d->exit))
		return -EINVAL;
	prologue(b, 0);
	save_regs(b, !d->no_fp);
	emit_rm(b, false, true, 0x8b, RAX, RBP, 8, false);     /* mov rax, [rbp+8] */
	emit_alu_ri(b, true, ALU_SUB, RAX, 5);
	store64(b, RAX, OFF(ip));
	call_c(b, image, d->md, (uintptr_t)d->enter);
	if (d->body) {
		emit_test_rr(b, false, RAX, RAX);
		to_orig = emit_jcc_fwd(b, CC_NE);
	}
	restore_regs(b, !d->no_fp);
	emit1(b, X86_LEAVE);
	emit1(b, X86_RET);                          /* into the body */
	if (d->body) {
		emit_label_here(b, to_orig);
		emit_alu_ri(b, false, ALU_CMP, RAX, BPFRT_TRAMP_SKIP_ORIG);
		to_skip = emit_jcc_fwd(b, CC_E);
		restore_regs(b, !d->no_fp);
		call_abs(b, image, d->body);
		store64(b, RAX, OFF(rax));
		store64(b, RDX, OFF(rdx));
		xmm_store(b, 0, OFF(xmm));
		xmm_store(b, 1, OFF(xmm) + 16);
		emit_label_here(b, to_skip);
		call_c(b, image, d->md, (uintptr_t)d->exit);
		load64(b, RAX, OFF(rax));
		load64(b, RDX, OFF(rdx));
		xmm_load(b, 0, OFF(xmm));
		xmm_load(b, 1, OFF(xmm) + 16);
		emit1(b, X86_LEAVE);
		emit_alu_ri(b, true, ALU_ADD, RSP, 8); /* drop the body address */
		emit1(b, X86_RET);                  /* to the function's caller */
	}
	return finish(b);
}

int bpfrt_x86_prepare_trampoline(void *buf, size_t cap, uintptr_t image,
				 const struct bpfrt_tramp_desc *d)
{
	struct x86_buf b = { .p = buf, .cap = cap };

	/* register arguments only: calling the body from here would put
	 * stack-passed ones at the wrong place */
	if (!d || d->nr_args > 6 || d->ret_size > 16)
		return -EINVAL;
	switch (d->type) {
	case BPFRT_TRAMP_CLASSIC:
		return prepare_classic(&b, image, d);
	case BPFRT_TRAMP_STUB:
		return prepare_stub(&b, image, d);
	case BPFRT_TRAMP_IMAGE:
		return prepare_image(&b, image, d);
	case BPFRT_TRAMP_MULTI:
		return prepare_multi(&b, image, d);
	case BPFRT_TRAMP_PROBE:
		return prepare_probe(&b, image, d);
	case BPFRT_TRAMP_RCU_LOCK_FN:
	case BPFRT_TRAMP_RCU_UNLOCK_FN:
		return prepare_rcu_fn(&b, image, d->type == BPFRT_TRAMP_RCU_LOCK_FN);
	default:
		return -EINVAL;
	}
}
