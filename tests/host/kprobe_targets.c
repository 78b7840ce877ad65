/* Host functions for tests/test_kprobe.c, built with the ordinary flags
 * (no patchable entries: kprobes need none). The assembly ones have known
 * first instructions: rip-relative load and lea, a call, a jcc, a jmp, a
 * loop whose branch lands right after the entry. */
#include <setjmp.h>

#if defined(__x86_64__)
volatile long kp_rip_data = 1000;

__attribute__((noinline)) long kp_args6(long a, long b, long c, long d, long e, long f)
{
	__asm__ volatile("" ::: "memory");
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

/* Real recursion: the barrier on the result keeps gcc from turning it
 * into a loop. */
__attribute__((noinline)) long kp_fact(long n)
{
	long r;

	if (n <= 1)
		return 1;
	r = kp_fact(n - 1);
	__asm__ volatile("" : "+r"(r));
	return n * r;
}

static jmp_buf kp_jb;

__attribute__((noinline)) void kp_jump_out(long v)
{
	__asm__ volatile("" ::: "memory");
	longjmp(kp_jb, (int)v);
}

/* Calls kp_jump_out (which longjmps back here) and then kp_args6. */
__attribute__((noinline)) long kp_setjmp_then(long v)
{
	if (setjmp(kp_jb))
		return kp_args6(v, 0, 0, 0, 0, 0);
	kp_jump_out(v);
	return -1;
}

/* Leaves 128 bytes of red zone in use across the probed instruction. */
__attribute__((noinline)) double kp_float(double x, long k)
{
	__asm__ volatile("" ::: "memory");
	return x * (double)k + 0.5;
}

__asm__(".text\n"
	/* long kp_rip_load(long x): kp_rip_data + x */
	".globl kp_rip_load\n.type kp_rip_load, @function\n.p2align 4\n"
	"kp_rip_load:\n"
	"	mov kp_rip_data(%rip), %rax\n"      /* 7 bytes, rip-relative */
	"	add %rdi, %rax\n"                   /* +7 */
	"	ret\n"
	".size kp_rip_load, .-kp_rip_load\n"
	/* long kp_rip_lea(long x): kp_rip_data + x, through lea */
	".globl kp_rip_lea\n.type kp_rip_lea, @function\n.p2align 4\n"
	"kp_rip_lea:\n"
	"	lea kp_rip_data(%rip), %rax\n"
	"	mov (%rax), %rax\n"
	"	add %rdi, %rax\n"
	"	ret\n"
	".size kp_rip_lea, .-kp_rip_lea\n"
	/* long kp_leaf(void): 40 */
	".globl kp_leaf\n.type kp_leaf, @function\n.p2align 4\n"
	"kp_leaf:\n"
	"	mov $40, %eax\n"
	"	ret\n"
	".size kp_leaf, .-kp_leaf\n"
	/* long kp_call_first(long x): kp_leaf() + x (first insn: call rel32) */
	".globl kp_call_first\n.type kp_call_first, @function\n.p2align 4\n"
	"kp_call_first:\n"
	"	call kp_leaf\n"
	"	add %rdi, %rax\n"
	"	ret\n"
	".size kp_call_first, .-kp_call_first\n"
	/* long kp_jcc(long x): x ? 1 : 2; the jz at +3 */
	".globl kp_jcc\n.type kp_jcc, @function\n.p2align 4\n"
	"kp_jcc:\n"
	"	test %rdi, %rdi\n"
	"	jz 1f\n"
	"	mov $1, %eax\n"
	"	ret\n"
	"1:	mov $2, %eax\n"
	"	ret\n"
	".size kp_jcc, .-kp_jcc\n"
	/* long kp_jmp_first(long x): x + 1 (first insn: jmp rel8) */
	".globl kp_jmp_first\n.type kp_jmp_first, @function\n.p2align 4\n"
	"kp_jmp_first:\n"
	"	jmp 1f\n"
	"	ud2\n"
	"1:	lea 1(%rdi), %rax\n"
	"	ret\n"
	".size kp_jmp_first, .-kp_jmp_first\n"
	/* long kp_tail_a(long x): a tail call of kp_tail_b (its one
	 * instruction: jmp rel32) */
	".globl kp_tail_a\n.type kp_tail_a, @function\n.p2align 4\n"
	"kp_tail_a:\n"
	"	.byte 0xe9\n"
	"	.long kp_tail_b - . - 4\n"
	".size kp_tail_a, .-kp_tail_a\n"
	/* long kp_tail_b(long x): x + 1 */
	".globl kp_tail_b\n.type kp_tail_b, @function\n.p2align 4\n"
	"kp_tail_b:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	lea 1(%rdi), %rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size kp_tail_b, .-kp_tail_b\n"
	/* void kp_keep_caller(uint64_t out[21]): calls kp_tail_b(0x77) with
	 * known values in the registers the ABI lets a callee clobber but
	 * kp_tail_b leaves alone (rcx, rsi, r8-r11, rdi, xmm2-xmm15), as a
	 * caller built with GCC's -fipa-ra keeps values there across a call
	 * of a function it knows; then stores them in out: rcx rsi r8 r9 r10
	 * r11 rdi xmm2..xmm15 (low 64 bits) */
	".globl kp_keep_caller\n.type kp_keep_caller, @function\n.p2align 4\n"
	"kp_keep_caller:\n"
	"	push %rbx\n"
	"	mov %rdi, %rbx\n"
	"	mov $0x1111, %ecx\n"
	"	mov $0x2222, %esi\n"
	"	mov $0x8888, %r8d\n"
	"	mov $0x9999, %r9d\n"
	"	mov $0xaaaa, %r10d\n"
	"	mov $0xbbbb, %r11d\n"
	"	mov $4098, %eax\n	movq %rax, %xmm2\n"
	"	mov $4099, %eax\n	movq %rax, %xmm3\n"
	"	mov $4100, %eax\n	movq %rax, %xmm4\n"
	"	mov $4101, %eax\n	movq %rax, %xmm5\n"
	"	mov $4102, %eax\n	movq %rax, %xmm6\n"
	"	mov $4103, %eax\n	movq %rax, %xmm7\n"
	"	mov $4104, %eax\n	movq %rax, %xmm8\n"
	"	mov $4105, %eax\n	movq %rax, %xmm9\n"
	"	mov $4106, %eax\n	movq %rax, %xmm10\n"
	"	mov $4107, %eax\n	movq %rax, %xmm11\n"
	"	mov $4108, %eax\n	movq %rax, %xmm12\n"
	"	mov $4109, %eax\n	movq %rax, %xmm13\n"
	"	mov $4110, %eax\n	movq %rax, %xmm14\n"
	"	mov $4111, %eax\n	movq %rax, %xmm15\n"
	"	mov $0x77, %edi\n"
	"	call kp_tail_b\n"
	"	mov %rcx, 0(%rbx)\n"
	"	mov %rsi, 8(%rbx)\n"
	"	mov %r8, 16(%rbx)\n"
	"	mov %r9, 24(%rbx)\n"
	"	mov %r10, 32(%rbx)\n"
	"	mov %r11, 40(%rbx)\n"
	"	mov %rdi, 48(%rbx)\n"
	"	movq %xmm2, 56(%rbx)\n"
	"	movq %xmm3, 64(%rbx)\n"
	"	movq %xmm4, 72(%rbx)\n"
	"	movq %xmm5, 80(%rbx)\n"
	"	movq %xmm6, 88(%rbx)\n"
	"	movq %xmm7, 96(%rbx)\n"
	"	movq %xmm8, 104(%rbx)\n"
	"	movq %xmm9, 112(%rbx)\n"
	"	movq %xmm10, 120(%rbx)\n"
	"	movq %xmm11, 128(%rbx)\n"
	"	movq %xmm12, 136(%rbx)\n"
	"	movq %xmm13, 144(%rbx)\n"
	"	movq %xmm14, 152(%rbx)\n"
	"	movq %xmm15, 160(%rbx)\n"
	"	pop %rbx\n"
	"	ret\n"
	".size kp_keep_caller, .-kp_keep_caller\n"
	/* long kp_loop(long x, long n): x * n (n >= 1); the loop branches
	 * back to +2, inside the first 5 bytes: int3 mode only */
	".globl kp_loop\n.type kp_loop, @function\n.p2align 4\n"
	"kp_loop:\n"
	"	xor %eax, %eax\n"
	"1:	add %rdi, %rax\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"	ret\n"
	".size kp_loop, .-kp_loop\n"
	/* long kp_stress(unsigned char *p): ++*p; push first */
	".globl kp_stress\n.type kp_stress, @function\n.p2align 4\n"
	"kp_stress:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	movzbl (%rdi), %eax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size kp_stress, .-kp_stress\n"
	/* double kp_xmm_mid(double x): 2 * x * x; xmm1 live across +4 */
	".globl kp_xmm_mid\n.type kp_xmm_mid, @function\n.p2align 4\n"
	"kp_xmm_mid:\n"
	"	movapd %xmm0, %xmm1\n"
	"	addsd %xmm0, %xmm1\n"              /* +4 */
	"	mulsd %xmm1, %xmm0\n"              /* +8 */
	"	ret\n"
	".size kp_xmm_mid, .-kp_xmm_mid\n"
	/* long kp_indirect(long (*fn)(void)): fn() + 1, call *%rdi first */
	".globl kp_indirect\n.type kp_indirect, @function\n.p2align 4\n"
	"kp_indirect:\n"
	"	call *%rdi\n"
	"	add $1, %rax\n"
	"	ret\n"
	".size kp_indirect, .-kp_indirect\n");
#endif
