/* bpfrt_call_on_stack(fn, a1, a2, top) for each architecture (see
 * stack_switch.h). Each thunk saves the frame-pointer register and the
 * return address the usual way, keeps the caller's stack pointer in the
 * frame-pointer register (callee-saved, so fn preserves it), moves the
 * stack pointer to top and calls fn(a1, a2); back from fn it restores the
 * stack pointer from the frame pointer and returns. The CFI defines the
 * canonical frame address through the frame pointer from the moment the
 * stack changes, which is what lets an unwinder cross from the new stack
 * to the old one. */
#include "stack/stack_switch.h"

#if defined(__x86_64__)
/* rdi = fn, rsi = a1, rdx = a2, rcx = top */
__asm__(".text\n"
	".globl bpfrt_call_on_stack\n"
	".hidden bpfrt_call_on_stack\n"
	".type bpfrt_call_on_stack, @function\n"
	".p2align 4\n"
	"bpfrt_call_on_stack:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbp, 0\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov %rcx, %rsp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	call *%rax\n"
	"	mov %rbp, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size bpfrt_call_on_stack, .-bpfrt_call_on_stack\n");
#elif defined(__aarch64__)
/* x0 = fn, x1 = a1, x2 = a2, x3 = top; x29 keeps the caller's sp (the
 * frame record x29/x30 stays on the caller's stack) */
__asm__(".text\n"
	".globl bpfrt_call_on_stack\n"
	".hidden bpfrt_call_on_stack\n"
	".type bpfrt_call_on_stack, %function\n"
	".p2align 4\n"
	"bpfrt_call_on_stack:\n"
	"	.cfi_startproc\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset x29, -16\n"
	"	.cfi_offset x30, -8\n"
	"	mov x29, sp\n"
	"	.cfi_def_cfa_register x29\n"
	"	mov sp, x3\n"
	"	mov x16, x0\n"
	"	mov x0, x1\n"
	"	mov x1, x2\n"
	"	blr x16\n"
	"	mov sp, x29\n"
	"	.cfi_def_cfa_register sp\n"
	"	ldp x29, x30, [sp], #16\n"
	"	.cfi_def_cfa_offset 0\n"
	"	.cfi_restore x29\n"
	"	.cfi_restore x30\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size bpfrt_call_on_stack, .-bpfrt_call_on_stack\n");
#elif defined(__riscv) && __riscv_xlen == 64
/* a0 = fn, a1 = a1, a2 = a2, a3 = top; s0 = the caller's sp + 16 (the
 * CFA, as the frame-pointer convention has it) */
__asm__(".text\n"
	".globl bpfrt_call_on_stack\n"
	".hidden bpfrt_call_on_stack\n"
	".type bpfrt_call_on_stack, @function\n"
	".p2align 2\n"
	"bpfrt_call_on_stack:\n"
	"	.cfi_startproc\n"
	"	addi sp, sp, -16\n"
	"	.cfi_def_cfa_offset 16\n"
	"	sd ra, 8(sp)\n"
	"	sd s0, 0(sp)\n"
	"	.cfi_offset ra, -8\n"
	"	.cfi_offset s0, -16\n"
	"	addi s0, sp, 16\n"
	"	.cfi_def_cfa s0, 0\n"
	"	mv sp, a3\n"
	"	mv t0, a0\n"
	"	mv a0, a1\n"
	"	mv a1, a2\n"
	"	jalr t0\n"
	"	addi sp, s0, -16\n"
	"	.cfi_def_cfa sp, 16\n"
	"	ld ra, 8(sp)\n"
	"	ld s0, 0(sp)\n"
	"	.cfi_restore ra\n"
	"	.cfi_restore s0\n"
	"	addi sp, sp, 16\n"
	"	.cfi_def_cfa_offset 0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size bpfrt_call_on_stack, .-bpfrt_call_on_stack\n");
#else
#error "bpfrt_call_on_stack: no thunk for this architecture"
#endif

#ifdef BPFRT_STACK_SWITCH_ASAN
#include <sanitizer/common_interface_defs.h>

/* ASan tracks one stack per thread; its fiber API moves that to the new
 * stack and back. Each switched run is a fresh fiber (no fake stack to
 * keep), finished before the switch back. */
struct san_call {
	bpfrt_stack_fn fn;
	uint64_t a1, a2;
	const void *old_bottom;
	size_t old_size;
};

static uint64_t san_entry(uint64_t arg, uint64_t unused)
{
	struct san_call *c = (struct san_call *)(uintptr_t)arg;
	uint64_t r0;

	(void)unused;
	__sanitizer_finish_switch_fiber(NULL, &c->old_bottom, &c->old_size);
	r0 = c->fn(c->a1, c->a2);
	__sanitizer_start_switch_fiber(NULL, c->old_bottom, c->old_size);
	return r0;
}

uint64_t bpfrt_run_on_stack(bpfrt_stack_fn fn, uint64_t a1, uint64_t a2, void *top,
			    size_t size)
{
	struct san_call c = { .fn = fn, .a1 = a1, .a2 = a2 };
	void *fake = NULL;
	uint64_t r0;

	__sanitizer_start_switch_fiber(&fake, (char *)top - size, size);
	r0 = bpfrt_call_on_stack(san_entry, (uint64_t)(uintptr_t)&c, 0, top);
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
	return r0;
}
#endif
