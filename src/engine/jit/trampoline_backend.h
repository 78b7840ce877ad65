/* What a JIT backend generates for the host's trampolines (fentry, fexit,
 * fmod_ret: src/host/attach/trampoline.c; fentry.multi: multi.c), as
 * Linux's arch_prepare_bpf_trampoline: the host describes the trampoline
 * in the terms below and struct bpfrt_jit_backend.arch_prepare_trampoline
 * writes its code. The backend knows no host structure: the run-path state
 * the generated code reads and writes (the attach TLS, program arrays, the
 * per-function state, the address hash) is handed over as values, thread-
 * pointer offsets and structure offsets the host computes with offsetof()
 * (struct bpfrt_tramp_layout). The frame the code keeps on the stack is
 * the one structure both sides share, and it is defined here.
 *
 * Kinds (enum bpfrt_tramp_type):
 *
 * CLASSIC: enter/exit in C (fexit, fmod_ret, BPFRT_TRAMP_NO_FAST=1, the
 * fentry.multi global trampolines without the generated run path).
 *
 * STUB + IMAGE: the fentry fast path. The entry calls a permanent
 * per-function STUB: frame, argument saves, the RCU read lock inline, then
 * a jump through the slot at its end, inside the read section: to the
 * IMAGE, or to its own C path (enter(frame, md)) when there is none. The
 * IMAGE is the function's current program list compiled in: per program
 * the recursion guard inline and a direct call of its JIT code (run_item()
 * in C for what is not inline: interpreted programs, programs that call
 * helpers, a guard that is not free), then a jump back to the stub's tail
 * (RCU unlock, restores, ret).
 *
 * MULTI: fentry.multi's global trampoline with the run path generated: the
 * RCU lock, the function's state from the padding index (or the address
 * hash), then its multi array run item by item, items flagged
 * BPFRT_TRAMP_ITEM_INLINE called inline as in an IMAGE.
 *
 * PROBE: a kprobe/uprobe site's run path (src/host/attach/kprobe.c), a
 * function its trampoline calls with rdi = the struct pt_regs it built.
 * When the RCU read side is free and fast (no section open on the thread,
 * registered, fence-free), no kretprobe program is attached, and the
 * site's array holds one program flagged BPFRT_TRAMP_ITEM_INLINE with the
 * attach guard free, it opens the read section inline, calls that
 * program's JIT code directly with (regs, 0) and returns eax = 0; with no
 * program attached it returns 0 at once. Anything else jumps to c_path
 * (a function of the same argument, whose eax it returns) with nothing
 * held. No FP state is touched on the inline path: an inline program
 * calls nothing, so it leaves every FP register alone. With kret_enter
 * (a C function built to use general registers only) kretprobe programs
 * attached do not send the event to C: after the entry program,
 * eax = kret_enter(md, regs) inside the read section, once the thread's
 * return stack exists (the u64 at thread-pointer offset tls_kret is not
 * 0; making it is left to c_path).
 *
 * RCU_LOCK_FN / RCU_UNLOCK_FN: tests, the inline read-side lock / unlock
 * as void f(void). */
#ifndef BPFRT_JIT_TRAMPOLINE_BACKEND_H
#define BPFRT_JIT_TRAMPOLINE_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

struct bpfrt_prog;

/* What a trampoline keeps on the stack; programs get ctx = args (the u64
 * argument array, ctx[nr_args] = return value for fexit/fmod_ret), and the
 * words before args are Linux's: ctx[-1] = nr_args, ctx[-2] = function ip. */
struct bpfrt_tramp_frame {
	uint64_t ip;            /* entry of the traced function */
	uint64_t nr_args;
	uint64_t args[7];       /* rdi, rsi, rdx, rcx, r8, r9, return slot */
	uint64_t rax;           /* rax at entry; return value after the call */
	uint64_t rdx;           /* rdx after the call (128-bit returns) */
	uint64_t cookie;        /* multi: cookie of the program running now */
	void *md;               /* the host's per-function state */
	uint64_t unused;
	uint8_t xmm[8][16];     /* xmm0-7: float arguments, float returns */
};
#define BPFRT_TRAMP_FRAME_SIZE 248  /* sizeof + 8: rsp 16-aligned at calls */

/* Enter results (the CLASSIC code branches on them). */
#define BPFRT_TRAMP_BODY      0 /* fentry only: resume the function body */
#define BPFRT_TRAMP_CALL_ORIG 1 /* call the body, then exit() */
#define BPFRT_TRAMP_SKIP_ORIG 2 /* fmod_ret override: frame->rax, then exit() */

enum bpfrt_tramp_type {
	BPFRT_TRAMP_CLASSIC,
	BPFRT_TRAMP_STUB,
	BPFRT_TRAMP_IMAGE,
	BPFRT_TRAMP_MULTI,
	BPFRT_TRAMP_PROBE,
	BPFRT_TRAMP_RCU_LOCK_FN,
	BPFRT_TRAMP_RCU_UNLOCK_FN,
};

/* The program kinds a trampoline serves (bpfrt_tramp_desc.flags). */
#define BPFRT_TRAMP_F_FENTRY   0x1u
#define BPFRT_TRAMP_F_FEXIT    0x2u
#define BPFRT_TRAMP_F_FMOD_RET 0x4u

/* One program of an IMAGE. inline_run: JIT'ed and calls nothing (no
 * helper, kfunc, callx or tail call), so it cannot abort, needs no cookie
 * or frame for helpers and leaves xmm alone: the guard and the call are
 * emitted inline. */
struct bpfrt_tramp_item {
	struct bpfrt_prog *prog;
	uint64_t cookie;
	bool inline_run;
};

/* A program array item's flags (struct bpfrt_tramp_layout.item_flags):
 * the program may run inline. */
#define BPFRT_TRAMP_ITEM_INLINE 0x80000000u

/* Where the run-path state the generated code touches lives. Offsets the
 * code uses as 8-bit displacements must be below 128 (the backend refuses
 * a layout that breaks this with -EINVAL).
 *
 * The attach TLS (initial-exec: the same thread-pointer offset in every
 * thread): a u32 count of the attached runs active in this thread, and
 * the stack of the programs they run (a run at depth 0 stores its program
 * in entry 0, sets the count to 1, runs, and sets it back to 0).
 *
 * A program array: a u32 count and an array of items at a power-of-two
 * stride, each with a program pointer, a u64 cookie and u32 flags.
 *
 * A program (struct bpfrt_prog): its JIT entry pointer.
 *
 * The host's per-function state: the function's entry address and its
 * fentry.multi program array pointer.
 *
 * The address hash (MULTI with md_table): u32 shift, u32 mask, slots at
 * a power-of-two stride, each an entry address (0: empty) and a state
 * pointer; a function's first slot is (ip * hash_mul) >> shift, then the
 * next ones (& mask) until its ip or an empty slot. */
struct bpfrt_tramp_layout {
	int32_t tls_depth;              /* thread-pointer offset of the u32 count */
	int32_t tls_active;             /* and of the stack's entry 0 */
	uint32_t arr_cnt, arr_items;    /* in a program array */
	uint32_t item_shift;            /* log2 of the item stride */
	uint32_t item_prog, item_cookie, item_flags;
	uint32_t prog_jit_func;         /* in struct bpfrt_prog */
	uint32_t func_ip, func_multi;   /* in the per-function state */
	uint32_t hash_shift, hash_mask, hash_slots;
	uint32_t slot_shift;            /* log2 of the slot stride */
	uint32_t slot_ip, slot_func;
	uint64_t hash_mul;
};

struct bpfrt_tramp_desc {
	enum bpfrt_tramp_type type;
	uint32_t flags;         /* BPFRT_TRAMP_F_*: what the trampoline serves */
	uintptr_t func;         /* entry of the traced function (0: global trampoline) */
	uint8_t nr_args;        /* register arguments the frame must hold (<= 6) */
	uint8_t ret_size;       /* bytes of return value kept around exit() (<= 16) */
	uintptr_t body;         /* func + 5: the original code after the patched
				 * call (0: no original call, a global trampoline) */
	const void *md;         /* passed to enter/exit/run_item as 2nd argument */
	uint64_t (*enter)(struct bpfrt_tramp_frame *frame, void *md);
	void (*exit)(struct bpfrt_tramp_frame *frame, void *md);
	bool no_fp;             /* do not save xmm0-7 (benchmarks only) */
	/* STUB (out: offsets in its code) */
	uint32_t *tail_off;     /* the tail: RCU unlock, restores, ret */
	uint32_t *slot_off;     /* the 8-byte slot the stub jumps through */
	uint32_t *c_path_off;   /* the C path (the slot's value without IMAGE) */
	/* IMAGE */
	uintptr_t tail;         /* the stub's tail */
	const struct bpfrt_tramp_item *items;
	uint32_t item_cnt;
	void (*run_item)(struct bpfrt_tramp_frame *frame, void *md,
			 struct bpfrt_prog *prog, uint64_t cookie);
	/* MULTI (with run_item) */
	bool pad;               /* the state's index in the padding first */
	const void *pad_chunks; /* per-function state pointers [pad_chunk_cnt][1 << bits] */
	uint32_t pad_chunk_bits, pad_chunk_cnt;
	void *(*lookup)(uintptr_t ip);  /* the address hash, in C */
	const void *md_table;   /* the address hash's pointer: probed inline */
	/* PROBE: the site's program array slots (struct bpfrt_prog_array
	 * *_Atomic, entry and return programs) and its C run path */
	const void *progs_slot, *rprogs_slot;
	uintptr_t c_path;
	uintptr_t kret_enter;   /* int kret_enter(md, regs); 0: kretprobes in C */
	int32_t tls_kret;
	/* IMAGE, MULTI, PROBE: where the run-path state is */
	const struct bpfrt_tramp_layout *layout;
};

#endif
