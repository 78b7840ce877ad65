/* x86-64 trampolines for fentry/fexit/fmod_ret and fentry.multi (the
 * userspace counterpart of the kernel's arch_prepare_bpf_trampoline).
 *
 * A patched function entry is `call tramp`, so on entry [rsp] is the
 * address after that call (entry + 5, the function body) and [rsp+8] the
 * function's own return address. The image:
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
#include "attach/trampoline.h"
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

/* call target: rel32 when it reaches from here, else through r11 (free at
 * a function entry: not an argument register, caller-saved). */
static void call_abs(struct tbuf *b, uintptr_t image, uintptr_t target)
{
	int64_t rel = (int64_t)(target - (image + b->len + 5));

	if (rel == (int32_t)rel) {
		put1(b, 0xe8);
		put32(b, (uint32_t)(int32_t)rel);
		return;
	}
	movabs(b, 11, target);
	put(b, "\x41\xff\xd3", 3); /* call r11 */
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

int bpfrt_x86_prepare_trampoline(void *buf, size_t cap, uintptr_t image,
				 const struct bpfrt_tramp_desc *d)
{
	struct tbuf b = { .p = buf, .cap = cap };
	size_t to_orig = 0, to_skip = 0;

	_Static_assert(sizeof(struct bpfrt_tramp_frame) + 8 == BPFRT_TRAMP_FRAME_SIZE,
		       "frame size");
	_Static_assert(offsetof(struct bpfrt_tramp_frame, xmm) % 16 == 0, "xmm alignment");
	if (!d || !d->enter || (d->body && !d->exit))
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
