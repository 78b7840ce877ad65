/* Callbacks (bpf_loop now; for_each_map_elem and timers later) and tail
 * calls: what helpers and the engines share.
 *
 * A callback value is what `lddw rX, BPF_PSEUDO_FUNC` leaves in rX:
 *  - JIT code: the native address of the subprogram's function, which the
 *    backend emits with the SysV convention (r1-r5 in rdi rsi rdx rcx r8,
 *    r0 in rax, callee-saved registers preserved), so C calls it directly;
 *  - interpreter: BPFRT_CALLBACK_INTERP_TAG | the subprogram's first insn
 *    index, resolved in bpfrt_run_state.cur_prog (the program the
 *    interpreter runs on this thread; user-space addresses never have bit
 *    63 set, so the two kinds cannot be confused). */
#ifndef BPFRT_HELPERS_CALLBACK_H
#define BPFRT_HELPERS_CALLBACK_H

#include "core/prog.h"

#include <stdint.h>

#define BPFRT_CALLBACK_INTERP_TAG (1ull << 63)

/* Nesting limit for callbacks calling helpers that call callbacks. */
#define BPFRT_MAX_CALLBACK_DEPTH  BPFRT_MAX_CALL_FRAMES

/* MAX_TAIL_CALL_CNT: tail calls one run may take; the next one fails. */
#define BPFRT_MAX_TAIL_CALLS      33

/* Calls callback cb with r1-r5 = a1-a5 and returns its r0. A handle that
 * names no subprogram of the running program, or nesting deeper than
 * BPFRT_MAX_CALLBACK_DEPTH, aborts the run (bpfrt_prog_run then fails
 * with -EINVAL / -E2BIG) and returns 1, which every callback protocol reads
 * as "stop". Callers must also stop once bpfrt_run_aborted() is true. */
uint64_t bpfrt_callback_invoke(uint64_t cb, uint64_t a1, uint64_t a2, uint64_t a3,
			       uint64_t a4, uint64_t a5);

/* True once the current run has aborted (a callback hit a bad helper...):
 * helpers looping over callbacks stop early. */
bool bpfrt_run_aborted(void);

/* Helper 12's registered function. Engines recognise tail calls by this
 * function (any id bound to it is a tail call); called directly, as by an
 * engine that does not implement tail calls, it only fails: it counts the
 * call in bpfrt_tail_call_fallbacks and returns -EOPNOTSUPP. */
uint64_t bpfrt_helper_tail_call(uint64_t ctx, uint64_t map, uint64_t index,
				uint64_t r4, uint64_t r5);
/* Per thread: bpfrt_helper_tail_call calls (tests detect engines without
 * tail-call support through it). */
extern __thread uint64_t bpfrt_tail_call_fallbacks;

/* For JIT code: the native entry of the program in slot `index` of the
 * PROG_ARRAY `map` if a tail call may go there now, else NULL. Counts the
 * tail call in bpfrt_run_state.tail_call_cnt (the run glue resets it) and
 * fails once BPFRT_MAX_TAIL_CALLS were taken; fails for slots holding a
 * program that was not JIT-compiled. Stores ctx in
 * bpfrt_run_state.tail_call_ctx so JIT code can reload r1 after the call.
 * Same argument registers as the helper, so the call site needs no
 * shuffling. Must run inside the run's RCU read section. */
bpfrt_jit_fn bpfrt_tail_call_jit_target(uint64_t ctx, uint64_t map, uint64_t index);

/* JIT contract for tail calls (what the interpreter does, in native code).
 * At `call imm` where helpers[imm].fn == bpfrt_helper_tail_call:
 *
 *	call  bpfrt_tail_call_jit_target  ; rdi/rsi/rdx = r1-r3 already, as
 *	                                  ; for any helper call
 *	test  rax, rax
 *	jz    .fail
 *	mov   r11, rax                    ; target's jit_func
 *	mov   rdi, [run_state.tail_call_ctx]  ; r1 = ctx
 *	xor   esi, esi                    ; r2 = 0
 *	<this function's epilogue without the ret: pop the callee-saved
 *	 registers it pushed, then leave / add rsp>
 *	jmp   r11                         ; target returns to our caller
 * .fail:
 *	mov   rax, -ENOENT                ; r0, then continue with the next insn
 *
 * The count lives in bpfrt_run_state.tail_call_cnt (bpfrt_prog_run zeroes
 * it), so the target is entered at its normal entry, not past a prologue.
 * From a subprogram this replaces the subprogram's frame only: the
 * target's r0 comes back to the subprogram's caller, as in Linux. */

#endif
