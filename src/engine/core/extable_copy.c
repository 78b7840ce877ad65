/* Fault-safe copies (extable.h): the probe_read helpers' copy without a
 * system call. Two small routines per architecture whose loads are
 * fault-safe loads with fixups in the static table bpfrt_extable_fixup
 * consults, so a fault on the source is the host's SIGSEGV/SIGBUS
 * handler setting the pc, as for the interpreter's loads (extable.c).
 *
 * Each routine is a leaf that keeps its state in registers and touches
 * no stack, so at every load the registers say how far it got and the
 * fixup only has to return:
 *   bpfrt_probe_copy_asm(dst, src, n): the bytes not copied (0: all).
 *     Byte loads until src is 8-aligned, then aligned 8-byte loads (one
 *     never spans two pages, so a fault is at the first unreadable page
 *     and the count is exact), bytes for the tail. riscv64 takes words
 *     only where dst is aligned too (a misaligned store may trap there).
 *   bpfrt_probe_copy_str_asm(dst, src, n): the bytes copied up to and
 *     including the first NUL, n when none came in n, all ones on a
 *     fault. One byte at a time: a string that ends right before an
 *     unreadable page must not fault on a load past its NUL.
 * The stores go to the caller's buffer, which is writable memory (the
 * verifier checked it): a fault there is not in the table and stays a
 * crash. */
#include "core/extable.h"

#define COPY_SYMS                                                                       \
	".globl bpfrt_probe_copy_asm, bpfrt_probe_copy_ld1, bpfrt_probe_copy_ld8\n"         \
	".globl bpfrt_probe_copy_fx, bpfrt_probe_copy_str_asm, bpfrt_probe_copy_str_ld1\n"  \
	".globl bpfrt_probe_copy_str_fx\n"                                                  \
	".hidden bpfrt_probe_copy_asm, bpfrt_probe_copy_ld1, bpfrt_probe_copy_ld8\n"        \
	".hidden bpfrt_probe_copy_fx, bpfrt_probe_copy_str_asm, bpfrt_probe_copy_str_ld1\n" \
	".hidden bpfrt_probe_copy_str_fx\n"

#if defined(__x86_64__)
/* rdi dst, rsi src, rdx n; rax the remaining count (copy) or the count
 * so far (str) */
__asm__(COPY_SYMS ".text\n.p2align 4\n"
	"bpfrt_probe_copy_asm:\n"
	"	movq %rdx, %rax\n"
	"1:	testq %rax, %rax\n"
	"	jz bpfrt_probe_copy_fx\n"
	"	testb $7, %sil\n"
	"	jnz 2f\n"
	"	cmpq $8, %rax\n"
	"	jb 2f\n"
	"bpfrt_probe_copy_ld8:\n"
	"	movq (%rsi), %rcx\n"
	"	movq %rcx, (%rdi)\n"
	"	addq $8, %rsi\n"
	"	addq $8, %rdi\n"
	"	subq $8, %rax\n"
	"	jmp 1b\n"
	"2:\n"
	"bpfrt_probe_copy_ld1:\n"
	"	movzbl (%rsi), %ecx\n"
	"	movb %cl, (%rdi)\n"
	"	incq %rsi\n"
	"	incq %rdi\n"
	"	decq %rax\n"
	"	jmp 1b\n"
	"bpfrt_probe_copy_fx:\n"
	"	ret\n"
	".p2align 4\n"
	"bpfrt_probe_copy_str_asm:\n"
	"	xorl %eax, %eax\n"
	"1:	cmpq %rdx, %rax\n"
	"	je 2f\n"
	"bpfrt_probe_copy_str_ld1:\n"
	"	movzbl (%rsi,%rax), %ecx\n"
	"	movb %cl, (%rdi,%rax)\n"
	"	incq %rax\n"
	"	testl %ecx, %ecx\n"
	"	jnz 1b\n"
	"2:	ret\n"
	"bpfrt_probe_copy_str_fx:\n"
	"	movq $-1, %rax\n"
	"	ret\n");
#define HAVE_COPY_ASM 1
#elif defined(__aarch64__)
/* x0 dst, x1 src, x2 n; a faulting load does not write back its base */
__asm__(COPY_SYMS ".text\n.p2align 4\n"
	"bpfrt_probe_copy_asm:\n"
	"1:	cbz x2, bpfrt_probe_copy_fx\n"
	"	tst x1, #7\n"
	"	b.ne 2f\n"
	"	cmp x2, #8\n"
	"	b.lo 2f\n"
	"bpfrt_probe_copy_ld8:\n"
	"	ldr x3, [x1], #8\n"
	"	str x3, [x0], #8\n"
	"	sub x2, x2, #8\n"
	"	b 1b\n"
	"2:\n"
	"bpfrt_probe_copy_ld1:\n"
	"	ldrb w3, [x1], #1\n"
	"	strb w3, [x0], #1\n"
	"	sub x2, x2, #1\n"
	"	b 1b\n"
	"bpfrt_probe_copy_fx:\n"
	"	mov x0, x2\n"
	"	ret\n"
	".p2align 4\n"
	"bpfrt_probe_copy_str_asm:\n"
	"	mov x4, #0\n"
	"1:	cmp x4, x2\n"
	"	b.eq 2f\n"
	"bpfrt_probe_copy_str_ld1:\n"
	"	ldrb w3, [x1, x4]\n"
	"	strb w3, [x0, x4]\n"
	"	add x4, x4, #1\n"
	"	cbnz w3, 1b\n"
	"2:	mov x0, x4\n"
	"	ret\n"
	"bpfrt_probe_copy_str_fx:\n"
	"	mov x0, #-1\n"
	"	ret\n");
#define HAVE_COPY_ASM 1
#elif defined(__riscv) && __riscv_xlen == 64
/* a0 dst, a1 src, a2 n */
__asm__(COPY_SYMS ".text\n.p2align 4\n.option push\n.option norvc\n"
	"bpfrt_probe_copy_asm:\n"
	"	li t1, 8\n"
	"1:	beqz a2, bpfrt_probe_copy_fx\n"
	"	or t0, a0, a1\n"
	"	andi t0, t0, 7\n"
	"	bnez t0, 2f\n"
	"	bltu a2, t1, 2f\n"
	"bpfrt_probe_copy_ld8:\n"
	"	ld t2, 0(a1)\n"
	"	sd t2, 0(a0)\n"
	"	addi a1, a1, 8\n"
	"	addi a0, a0, 8\n"
	"	addi a2, a2, -8\n"
	"	j 1b\n"
	"2:\n"
	"bpfrt_probe_copy_ld1:\n"
	"	lbu t2, 0(a1)\n"
	"	sb t2, 0(a0)\n"
	"	addi a1, a1, 1\n"
	"	addi a0, a0, 1\n"
	"	addi a2, a2, -1\n"
	"	j 1b\n"
	"bpfrt_probe_copy_fx:\n"
	"	mv a0, a2\n"
	"	ret\n"
	".p2align 4\n"
	"bpfrt_probe_copy_str_asm:\n"
	"	li t0, 0\n"
	"1:	beq t0, a2, 2f\n"
	"	add t1, a1, t0\n"
	"bpfrt_probe_copy_str_ld1:\n"
	"	lbu t2, 0(t1)\n"
	"	add t3, a0, t0\n"
	"	sb t2, 0(t3)\n"
	"	addi t0, t0, 1\n"
	"	bnez t2, 1b\n"
	"2:	mv a0, t0\n"
	"	ret\n"
	"bpfrt_probe_copy_str_fx:\n"
	"	li a0, -1\n"
	"	ret\n"
	".option pop\n");
#define HAVE_COPY_ASM 1
#endif

#ifdef HAVE_COPY_ASM
#define HIDDEN __attribute__((visibility("hidden")))
extern char bpfrt_probe_copy_ld1[] HIDDEN, bpfrt_probe_copy_ld8[] HIDDEN,
	bpfrt_probe_copy_fx[] HIDDEN, bpfrt_probe_copy_str_ld1[] HIDDEN,
	bpfrt_probe_copy_str_fx[] HIDDEN;
size_t bpfrt_probe_copy_asm(void *dst, const void *src, size_t n) HIDDEN;
size_t bpfrt_probe_copy_str_asm(void *dst, const void *src, size_t n) HIDDEN;
#endif

uintptr_t bpfrt_extable_copy_fixup(uintptr_t pc)
{
#ifdef HAVE_COPY_ASM
	if (pc == (uintptr_t)bpfrt_probe_copy_ld1 || pc == (uintptr_t)bpfrt_probe_copy_ld8)
		return (uintptr_t)bpfrt_probe_copy_fx;
	if (pc == (uintptr_t)bpfrt_probe_copy_str_ld1)
		return (uintptr_t)bpfrt_probe_copy_str_fx;
#endif
	(void)pc;
	return 0;
}

size_t bpfrt_probe_copy(void *dst, const void *src, size_t n)
{
#ifdef HAVE_COPY_ASM
	return bpfrt_probe_copy_asm(dst, src, n);
#else
	(void)dst;
	(void)src;
	return n;
#endif
}

long bpfrt_probe_copy_str(void *dst, const void *src, size_t n)
{
#ifdef HAVE_COPY_ASM
	return (long)bpfrt_probe_copy_str_asm(dst, src, n);
#else
	(void)dst;
	(void)src;
	(void)n;
	return -1;
#endif
}
