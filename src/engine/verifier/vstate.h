/* Verifier internals: abstract register and stack states, the per-path
 * verifier state, and the environment of one verification run. Shared by
 * verifier.c (driver, memory, calls, pruning) and scalar.c (ALU bounds). */
#ifndef BPFRT_VSTATE_H
#define BPFRT_VSTATE_H

#include "core/prog.h"
#include "isa/isa.h"
#include "verifier/tnum.h"
#include "verifier/verifier.h"

#include <stdarg.h>

enum vreg_type {
	NOT_INIT = 0,
	SCALAR,
	PTR_TO_CTX,
	PTR_TO_STACK,
	CONST_PTR_TO_MAP,
	PTR_TO_MAP_VALUE,
	PTR_TO_MAP_KEY,
	PTR_TO_MEM,        /* ringbuf record or other sized memory */
	PTR_TO_PACKET,
	PTR_TO_PACKET_END,
	PTR_TO_FUNC,
	VREG_TYPE_CNT,
};

#define PTR_MAYBE_NULL 0x1 /* flags: may be NULL until checked */

/* One register. Scalars use var_off and the bounds for their value;
 * pointers use them for the variable part of their offset, off for the
 * fixed part. */
struct vreg {
	uint8_t type;
	uint8_t flags;
	uint8_t frameno;        /* PTR_TO_STACK: the frame it points into */
	int32_t off;
	struct tnum var_off;
	int64_t smin, smax;
	uint64_t umin, umax;
	int32_t s32min, s32max;
	uint32_t u32min, u32max;
	uint32_t id;            /* null-check / packet-range / scalar-copy group */
	uint32_t ref_obj_id;    /* acquired reference it belongs to */
	uint32_t mem_size;      /* PTR_TO_MEM: bytes; PTR_TO_FUNC: subprog */
	int32_t range;          /* PTR_TO_PACKET: bytes known inside the packet */
	struct bpfrt_map *map;  /* CONST_PTR_TO_MAP, PTR_TO_MAP_VALUE/KEY */
};

enum slot_type {
	STACK_INVALID = 0, /* never written on this path */
	STACK_MISC,        /* some data */
	STACK_ZERO,        /* known zero */
	STACK_SPILL,       /* part of the spilled register */
};

/* One 8-byte stack slot; slot i covers [-(i+1)*8, -i*8) of its frame. */
struct vslot {
	struct vreg spilled;
	uint8_t type[8];        /* per byte, byte 0 at the lowest address */
	uint8_t spill_off;      /* the spilled value's first byte and size */
	uint8_t spill_size;
};

static inline bool slot_has_spill(const struct vslot *s)
{
	return s->spill_size && s->type[s->spill_off] == 3 /* STACK_SPILL */;
}

struct vframe {
	struct vreg regs[BPF_NREGS];
	uint32_t callsite;      /* insn of the call that made this frame */
	uint32_t subprog;
	uint32_t nslots;
	bool in_callback;       /* entered through a helper (bpf_loop) */
	uint32_t cb_helper;     /* that helper's id */
	uint32_t cb_inv;        /* the helper call (invocation) it belongs to */
	struct vslot *slots;
};

struct vref {
	uint32_t id;
	uint32_t insn;
};

struct vstate {
	struct vframe *frames[BPFRT_MAX_CALL_FRAMES];
	uint32_t curframe;
	uint32_t nrefs;
	struct vref *refs;
	/* checkpoints: the state this one descends from and how many paths
	 * from this one are still being explored */
	struct vstate *parent;
	uint32_t branches;
	uint32_t insn;          /* where it was saved / is to resume */
	struct vstate *next;    /* explored list of insn */
	bool joined;            /* widened by a join on this path */
	uint32_t join_insn;     /* where the last join on this path was */
	uint64_t hash;          /* checkpoints: loop_hash at insn */
	uint32_t hits, misses;
};

struct vstack_elem {
	struct vstate *st;
	uint32_t insn;
	uint32_t prev_insn;
};

/* Each bpf_loop call site keeps the caller states it entered its callback
 * with; a callback exit whose state one of them covers needs no further
 * iteration. */
struct cb_site {
	uint32_t insn;
	uint32_t cnt;
	struct vstate **entries;
	uint32_t *inv;            /* the invocation each entry belongs to */
	uint32_t cap;
};

struct venv {
	struct bpfrt_prog *prog;
	const struct bpf_insn *insns;
	uint32_t n;
	struct vstate *cur;
	uint32_t insn;
	uint32_t prev_insn;
	uint64_t processed;
	uint32_t id_gen;
	uint8_t *prune_point;
	uint16_t *live;           /* registers live at each insn */
	uint16_t *precise;        /* registers that may decide a branch (compute_precise) */
	uint64_t *precise_slots;  /* the same for stack slots 0-63 */
	const struct bpfrt_map_ref **ref_at; /* per insn: lddw map reference */
	struct vstate **explored; /* per insn */
	struct vstate *graveyard; /* states no longer compared against */
	struct vstack_elem *stack;
	uint32_t stack_cnt, stack_cap;
	uint32_t *max_stack;      /* per subprog: deepest byte accessed */
	uint32_t max_ctx_access;
	struct cb_site *cb_sites;
	uint32_t cb_site_cnt;
	uint32_t inv_gen;         /* helper calls entering a callback */
	/* loops: checkpoints are sparse while a loop runs (jumps and insns
	 * since the last one), and joins that let a loop come round to an
	 * earlier state are switched off where that happened (restart) */
	uint64_t jmps, prev_jmps, prev_processed;
	uint8_t *no_join;         /* per insn: never join here */
	bool join_off;            /* nowhere */
	uint32_t restarts;
	/* context of the program kind */
	uint32_t ctx_size;
	bool ctx_rdonly;
	bool ctx_u64_only;        /* tracing arrays: 8-byte loads only */
	/* log */
	uint32_t log_level;
	char *log_buf;
	size_t log_size, log_len;
	bool log_truncated;
	uint64_t peak_states, total_states;
	char msg[512];            /* the rejection */
};

/* scalar.c */
void vreg_mark_unknown(struct vreg *r);
void vreg_mark_const(struct vreg *r, uint64_t v);
void vreg_mark_const32(struct vreg *r, uint32_t v);
void vreg_bounds_sync(struct vreg *r);
void vreg_bounds_from_var_off(struct vreg *r);
void vreg_zext32(struct vreg *r);
/* Keeps the low `size` bytes (zero-extended), as a narrower load sees it. */
void vreg_coerce(struct vreg *r, unsigned size);
void vreg_set_range(struct vreg *r, int64_t smin, int64_t smax);
void vreg_set_urange(struct vreg *r, uint64_t umin, uint64_t umax);
/* Loads of `size` bytes: the value range of a fresh zero-extended load. */
void vreg_mark_load(struct vreg *r, unsigned size, bool sign_extend);
/* dst = dst op src for scalars (src may be an immediate made scalar). */
int vscalar_alu(struct venv *env, const struct bpf_insn *insn, struct vreg *dst,
		const struct vreg *src, bool is64);
/* movsx / ldxs: sign extension of the low `bits`. */
void vscalar_sext(struct vreg *r, unsigned bits, bool is64);
/* Branch on two scalars: 1 taken, 0 not taken, -1 unknown. */
int vscalar_branch_taken(const struct vreg *a, const struct vreg *b, uint8_t op, bool is32);
/* Refines a (true branch: the condition holds) and b. */
bool vscalar_refine(struct vreg *a, struct vreg *b, uint8_t op, bool is32, bool taken);
bool vreg_is_const(const struct vreg *r);
bool vscalar_range_within(const struct vreg *old, const struct vreg *cur);

/* verifier.c */
int verr(struct venv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vlog(struct venv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
