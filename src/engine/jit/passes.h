/* The arch-neutral half of every JIT backend: the passes that converge
 * the image size, the image's allocation and copy through execmem, the
 * offsets listings read (jit.h), and the decisions that do not depend on
 * the instruction set (prescan, frames, call targets). As in Linux, arch
 * code emits and the driver converges: a backend describes itself with
 * struct bpfrt_jit_arch, embeds struct bpfrt_jit_passes in its context
 * (the state every backend shares: which instruction, the first error,
 * the private stack) and emits one function prologue, one instruction or
 * one abort stub at a time into its own pass buffer; bpfrt_jit_build()
 * does the rest.
 *
 * Branch displacements are computed from previous-pass positions on both
 * ends (bpfrt_jit_prev_pos), so they shrink monotonically and the final,
 * converged pass is exact. */
#ifndef BPFRT_JIT_PASSES_H
#define BPFRT_JIT_PASSES_H

#include "jit/jit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_insn;

/* Image offsets of one pass. */
struct bpfrt_jit_offsets {
	uint32_t *start;        /* insn_cnt + 1: start of each instruction's code */
	uint32_t *fstart;       /* per subprogram: function (prologue) start */
	uint32_t *bend;         /* per subprogram: end of the body */
	uint32_t abort_off;     /* abort stub after subprogram 0 */
	size_t len;
};

struct bpfrt_jit_passes;

/* A fault-safe load of the pass (BPFRT_PROBE_MEM): where its instruction
 * starts and the code after it, the backend's word for it (the native
 * destination register) and, once the driver emitted it after every
 * function, its fixup (zero that register, resume). */
struct bpfrt_jit_probe {
	uint32_t insn_off, resume_off, fixup_off;
	uint32_t reg;
};

struct bpfrt_jit_arch {
	size_t max_insn_code;   /* buffer room one instruction's code may take */
	uint32_t seed_insn_code; /* first estimate of one instruction's code */
	/* > 1: functions start at this power-of-two alignment of the image's
	 * address, behind trap padding (fill_traps) */
	size_t image_align;
	/* code depends on the image address: converge again at it */
	bool addr_dependent;
	void (*fill_traps)(void *dst, size_t len);
	/* > 0: bpfrt_jit_passes_init() allocates jp->frames, this many bytes
	 * per subprogram (the backend's own frame layouts) */
	size_t frame_size;
	/* Optional, after bpfrt_jit_prescan(): the backend's own analysis
	 * and frame layouts. Returns 0 or -errno with bpfrt_last_error(). */
	int (*prescan)(struct bpfrt_jit_passes *jp);
	/* The emitters: the driver sets jp->sub and jp->pc before each call
	 * and stops at the first error one records (bpfrt_jit_fail). */
	void (*emit_prologue)(struct bpfrt_jit_passes *jp, uint32_t s);
	/* Optional: padding before instruction pc's code (not part of it). */
	void (*pad_insn)(struct bpfrt_jit_passes *jp, uint32_t pc);
	/* Instructions consumed: 1, or 2 for lddw or a fused pair. */
	int (*emit_insn)(struct bpfrt_jit_passes *jp, uint32_t pc);
	void (*emit_abort_stub)(struct bpfrt_jit_passes *jp);
	/* Optional: the fixup of a fault-safe load at *jp->len, the same
	 * size in every pass (jp->prev_pos for the resume branch is not
	 * needed: p->resume_off is of this pass). Without it a program with
	 * fault-safe loads is refused. */
	void (*emit_probe_fixup)(struct bpfrt_jit_passes *jp, const struct bpfrt_jit_probe *p);
	/* Optional: the image grew when emitted at its address; make the
	 * next try smaller. Without it such growth is an error. */
	void (*shrink)(struct bpfrt_jit_passes *jp);
};

/* The head of every backend's context (reached with bpfrt_container_of). */
struct bpfrt_jit_passes {
	struct bpfrt_prog *prog;
	const struct bpf_insn *insns;
	uint32_t n;             /* instructions */
	const struct bpfrt_jit_arch *arch;
	uint8_t **code;         /* the backend's pass buffer ... */
	size_t *len;            /* ... and the bytes emitted into it */
	size_t cap;
	bool abort_stub;        /* subprogram 0 has one (bpfrt_jit_prescan) */
	/* read by the emitters */
	struct bpfrt_jit_offsets cur, prev;
	uint64_t base;          /* image address, 0 while not allocated */
	bool force_long;        /* late passes: every branch long, to converge */
	uint32_t head_pad;      /* trap bytes before the first function */
	uint32_t sub;           /* subprogram being emitted */
	uint32_t pc;            /* instruction being emitted */
	int err;                /* first error of the pass (bpfrt_jit_fail) */
	void *frames;           /* arch->frame_size bytes per subprogram */
	/* per instruction (n + 1): BPFRT_JIT_* marks from the prescan; the
	 * bits above them are the backend's */
	uint8_t *marks;
	intptr_t tp_off;        /* bpfrt_run_state from the thread pointer */
	/* the pass's fault-safe loads, in image order (bpfrt_jit_probe_load) */
	struct bpfrt_jit_probe *probes;
	uint32_t probe_cnt, probe_cap;
	/* from bpfrt_jit_prescan() */
	bool has_callx;
	bool *callback;         /* per subprogram: lddw BPF_PSEUDO_FUNC names it */
	/* private stack (prog->privstack, core/stack_abi.h) */
	bool priv;
	bool priv_release;      /* main's teardown gives the stack back */
	intptr_t priv_slots;    /* bpfrt_privstack_slots from the thread pointer */
	int32_t priv_slot;      /* the program's slot in that array (bytes) */
	uintptr_t priv_claim_slow;      /* the host's claim_slow: void *(prog) */
	uintptr_t priv_release_aborted; /* the host's release_aborted: void *(prog) */
};

/* Checks that prog was validated, fills in the shared state and
 * allocates the offsets and frames. code and len are the backend's pass
 * buffer (NULL, 0); the driver grows and frees it. Returns 0 or -errno
 * with bpfrt_last_error() set; call bpfrt_jit_passes_free() either way. */
int bpfrt_jit_passes_init(struct bpfrt_jit_passes *jp, struct bpfrt_prog *prog,
			  const struct bpfrt_jit_arch *arch, uint8_t **code, size_t *len);
void bpfrt_jit_passes_free(struct bpfrt_jit_passes *jp);

/* A backend's whole compile (struct bpfrt_jit_backend): init, the
 * shared prescan and arch->prescan, bpfrt_jit_build and free. jp is the
 * head of the backend's context, code and len its pass buffer. Returns 0
 * or -errno with bpfrt_last_error() set. */
int bpfrt_jit_compile(struct bpfrt_jit_passes *jp, struct bpfrt_prog *prog,
		      const struct bpfrt_jit_arch *arch, uint8_t **code, size_t *len);

/* Converges, allocates the image, emits it at its address if the code
 * depends on it, copies it and sets prog->jit_func, jit_mem, jit_len and
 * jit_insn_off (and, with a private stack, prog->privstack_abort: where
 * the host's fault handler resumes). jp->base and jp->prev stay valid until
 * bpfrt_jit_passes_free(). Returns 0 or -errno with bpfrt_last_error(). */
int bpfrt_jit_build(struct bpfrt_jit_passes *jp);

/* The backend emitted a fault-safe load at [insn_off, resume_off) of the
 * pass buffer whose destination is native register reg: the driver gives
 * it an exception table entry and a fixup (arch->emit_probe_fixup). */
void bpfrt_jit_probe_load(struct bpfrt_jit_passes *jp, uint32_t insn_off, uint32_t resume_off,
			  uint32_t reg);

/* Records the first error of a pass, "jit: insn PC: ..." for jp->pc. */
void bpfrt_jit_fail(struct bpfrt_jit_passes *jp, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- prescan helpers ---- */

/* The whole-program prescan every backend needs: branches in range
 * (jp->marks as for bpfrt_jit_scan_branches), jp->has_callx,
 * jp->callback, and whether subprogram 0 gets an abort stub. Returns 0 or
 * -EINVAL. */
int bpfrt_jit_prescan(struct bpfrt_jit_passes *jp);

/* What every backend decides the same way about a subprogram's frame;
 * each turns it into its own registers and layout. */
struct bpfrt_jit_frame {
	/* BPF registers among r6-r10 whose native registers the function
	 * saves: r10 when it sets r10, and in private main, which claims it
	 * over the host's value */
	uint16_t saved;
	/* main restores every callee-saved register itself: the abort stub
	 * (or a private stack's guard-page fault) unwinds past subprogram
	 * epilogues */
	bool saves_all;
	bool calls;             /* helpers, kfuncs, subprograms, callx, the claim's slow path */
	bool sets_fp;           /* r10 points at a BPF stack on the native stack */
	/* main with callx keeps the outer run's entry_sp in its frame (a
	 * private stack keeps it in the stack's C area instead) */
	bool keeps_entry_sp;
	/* BPF stack bytes on the native stack, not rounded: the function's
	 * own; with a private stack a callback's whole chain (a helper calls
	 * it on the native stack), else none */
	uint32_t stack;
};

void bpfrt_jit_frame(const struct bpfrt_jit_passes *jp, uint32_t s, struct bpfrt_jit_frame *f);

/* The subprogram the local call or BPF_PSEUDO_FUNC lddw at jp->pc names,
 * or -1 with the error recorded. */
int bpfrt_jit_callee(struct bpfrt_jit_passes *jp, const struct bpf_insn *insn);

/* Private stack: how far r10 moves down around a local call from the
 * subprogram being emitted, so the callee's frame lies below the caller's
 * own (subprograms other than callbacks never save or set r10); 0 without. */
static inline uint32_t bpfrt_jit_call_shift(const struct bpfrt_jit_passes *jp)
{
	return jp->priv ? jp->prog->subprogs[jp->sub].stack_depth : 0;
}

/* The function a helper call names, or NULL with the error recorded. */
bpfrt_helper_fn bpfrt_jit_helper(struct bpfrt_jit_passes *jp, const struct bpf_insn *insn);

/* Marks bpfrt_jit_scan_branches() sets per instruction. */
#define BPFRT_JIT_TARGET 1      /* some branch lands here */
#define BPFRT_JIT_LOOP   2      /* a backward branch lands here */

/* Checks that every branch lands inside the program, tells whether it has
 * a callx (*callx) and, if marks (insn_cnt bytes) is given, ORs the
 * BPFRT_JIT_* marks into branch targets. Returns 0 or -EINVAL naming the
 * instruction. */
int bpfrt_jit_scan_branches(const struct bpfrt_prog *prog, uint8_t *marks, bool *callx);

/* BPF registers (bit r) the subprogram's instructions name: dst, and src
 * except in lddw and calls, where it is a kind; *calls (may be NULL):
 * it calls (call or callx). */
uint16_t bpfrt_jit_subprog_regs(const struct bpfrt_prog *prog, const struct bpfrt_subprog *sp,
				bool *calls);
/* Native registers (bit map[r]) behind a mask of BPF registers. */
uint32_t bpfrt_jit_map_regs(uint16_t bpf_regs, const uint8_t *map);

/* The backend context holding jp, from jp (as Linux's container_of). */
#define bpfrt_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Position of the code being emitted for instruction pc as it was in the
 * previous pass. */
static inline int64_t bpfrt_jit_prev_pos(const struct bpfrt_jit_passes *jp, uint32_t pc)
{
	return (int64_t)jp->prev.start[pc] + (int64_t)(*jp->len - jp->cur.start[pc]);
}

#endif
