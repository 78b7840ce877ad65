/* Verifier internals: abstract register and stack states, the per-path
 * verifier state, the environment of one verification run, and what the
 * verifier's files share (each section names the file that defines it):
 * verifier.c (entry, program kinds), walk.c (the main loop), log.c,
 * states.c (state lifetime, equivalence, joins), prune.c (checkpoints),
 * facts.c (static facts), mem.c (memory accesses), alu.c (ALU, jumps),
 * calls.c (helpers, BPF calls, callbacks, tail calls, exit), scalar.c
 * (scalar bounds arithmetic), tnum.c. */
#ifndef BPFRT_VSTATE_H
#define BPFRT_VSTATE_H

#include "core/prog.h"
#include "isa/isa.h"
#include "verifier/tnum.h"
#include "verifier/verifier.h"
#include "maps/map.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

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
	PTR_TO_BTF_ID,     /* host struct a typed argument points to (btf_access.c) */
	CONST_PTR_TO_DYNPTR, /* a read-only local dynptr a helper hands a callback */
	/* the packet's metadata (xdp_md->data_meta): it ends where the packet
	 * starts, so its range is proven against the packet's start (data)
	 * as a packet pointer's is against data_end */
	PTR_TO_PACKET_META,
	PTR_TO_SOCKET,     /* struct bpf_sock of a full socket (sock.c) */
	PTR_TO_SOCK_COMMON, /* the struct bpf_sock fields every socket has */
	PTR_TO_TCP_SOCK,   /* struct bpf_tcp_sock */
	VREG_TYPE_CNT,
};

#define PTR_MAYBE_NULL 0x1 /* flags: may be NULL until checked */
#define PTR_DYNPTR_SLICE 0x2 /* flags: PTR_TO_MEM from dynptr_data (ref_obj_id:
			      * its dynptr's id), never a ringbuf record itself */
#define MEM_RDONLY     0x4 /* flags, PTR_TO_MEM: the program may only read it
			    * (an iterator's element, verifier/iter.c) */
#define PTR_TRUSTED    0x8 /* flags, PTR_TO_BTF_ID: Linux's PTR_TRUSTED (a typed
			    * argument, the current task, a kfunc's result, and
			    * constant steps into them; never a pointer loaded
			    * from a struct), which KF_TRUSTED_ARGS kfuncs take */

/* Context slots whose arguments may be typed: 12 tracepoint arguments,
 * or six registers and fexit's return value. */
#define BPFRT_BTF_ARG_SLOTS 13

struct btf;

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
	uint32_t ref_obj_id;    /* acquired reference it belongs to; a dynptr
				 * slice: its dynptr's id (dynptr.c) */
	uint32_t mem_size;      /* PTR_TO_MEM: bytes; PTR_TO_FUNC: subprog;
				 * PTR_TO_BTF_ID: the struct's id in env->btf */
	int32_t range;          /* PTR_TO_PACKET(_META): bytes known inside the
				 * packet (the metadata), from the variable part */
	struct bpfrt_map *map;  /* CONST_PTR_TO_MAP, PTR_TO_MAP_VALUE/KEY */
};

enum slot_type {
	STACK_INVALID = 0, /* never written on this path */
	STACK_MISC,        /* some data */
	STACK_ZERO,        /* known zero */
	STACK_SPILL,       /* part of the spilled register */
	STACK_DYNPTR,      /* part of a struct bpf_dynptr (dynptr.c): never read or
			    * written as data */
	STACK_ITER,        /* part of an open-coded iterator object (iter.c):
			    * every byte of its slots, which no access but
			    * the iterator kfuncs' may touch; the slot's
			    * `spilled` describes it, never a register */
};

/* One 8-byte stack slot; slot i covers [-(i+1)*8, -i*8) of its frame. */
struct vslot {
	struct vreg spilled;
	uint8_t type[8];        /* per byte, byte 0 at the lowest address */
	uint8_t spill_off;      /* the spilled value's first byte and size */
	uint8_t spill_size;
	/* STACK_DYNPTR slots (all 8 bytes): enum vdynptr_kind, and whether
	 * this is the dynptr's first (lowest) slot; spilled.id is the
	 * dynptr's id, spilled.ref_obj_id its reference (ringbuf) */
	uint8_t dynptr_kind;
	uint8_t dynptr_first;
};

static inline bool slot_has_spill(const struct vslot *s)
{
	return s->spill_size && s->type[s->spill_off] == 3 /* STACK_SPILL */;
}

/* A slot of a packed frame: its bytes' types and spill fields; the
 * spilled register, where it matters, is one of the frame's packed_vregs
 * (spilled: its index, PACKED_NO_SPILL: none, read as all zeroes). */
#define PACKED_NO_SPILL 0xff
struct vslot_packed {
	uint8_t type[8];
	uint8_t spill_off, spill_size, dynptr_kind, dynptr_first;
	uint8_t spilled;
};

struct vframe {
	uint32_t callsite;      /* insn of the call that made this frame */
	uint32_t subprog;
	uint32_t nslots;
	bool in_callback;       /* entered through a helper (bpf_loop) */
	uint32_t cb_helper;     /* that helper's id */
	uint32_t cb_inv;        /* the helper call (invocation) it belongs to */
	/* which iteration of that call's callback this is (0 first): a state
	 * repeating one of an earlier iteration is no infinite loop, the
	 * helper bounds the iterations (their convergence is checked where
	 * the callback is entered, enter_callback) */
	uint32_t cb_iter;
	/* stack liveness (slots 0-63, bit k: slot k), Linux's read marks:
	 * in a checkpoint, live_read holds the slots its continuation read
	 * before writing them whole (complete once it is fully explored);
	 * written holds the slots written whole since the previous
	 * checkpoint of the path (a new frame: all of them), which stop a
	 * read from reaching further up (states.c, vstack_mark_read) */
	uint64_t live_read;
	uint64_t written;
	/* entries of slots: nslots, except in a fully explored checkpoint
	 * whose deepest slots were dropped (never read again, or never
	 * written: vstate_pack) */
	uint32_t slots_held;
	struct vslot *slots;
	/* A saved state (checkpoint, callback entry) is never changed but
	 * for its read marks, and only compared at its insn: its frames are
	 * packed (vstate_save, vstate_pack) into one allocation without
	 * regs and slots (read them through vframe_reg and vframe_slot). It
	 * keeps the registers of regs_held (those a comparison reads; any
	 * other reads as NOT_INIT), then the spilled registers its slots
	 * need, in packed_vregs, and slots_held packed_slots. */
	bool packed;
	uint16_t regs_held;
	struct vreg *packed_vregs;
	struct vslot_packed *packed_slots;
	/* last: a packed frame is allocated without them */
	struct vreg regs[BPF_NREGS];
};

static const struct vreg vreg_not_init; /* all zeroes: NOT_INIT */

/* Register r of a frame, packed or not. */
static inline const struct vreg *vframe_reg(const struct vframe *f, int r)
{
	if (!f->packed)
		return &f->regs[r];
	if (!(f->regs_held & (1u << r)))
		return &vreg_not_init;
	return &f->packed_vregs[__builtin_popcount(f->regs_held & ((1u << r) - 1u))];
}

/* Slot k (below slots_held) of a frame; a packed one is unpacked into *tmp. */
static inline const struct vslot *vframe_slot(const struct vframe *f, uint32_t k,
					      struct vslot *tmp)
{
	const struct vslot_packed *p;

	if (!f->packed)
		return &f->slots[k];
	p = &f->packed_slots[k];
	memcpy(tmp->type, p->type, sizeof(tmp->type));
	tmp->spill_off = p->spill_off;
	tmp->spill_size = p->spill_size;
	tmp->dynptr_kind = p->dynptr_kind;
	tmp->dynptr_first = p->dynptr_first;
	if (p->spilled == PACKED_NO_SPILL)
		memset(&tmp->spilled, 0, sizeof(tmp->spilled));
	else
		tmp->spilled = f->packed_vregs[p->spilled];
	return tmp;
}

static inline const uint8_t *vframe_slot_types(const struct vframe *f, uint32_t k)
{
	return f->packed ? f->packed_slots[k].type : f->slots[k].type;
}

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
	bool evicted;           /* in env->graveyard (no longer compared) */
	uint32_t join_insn;     /* where the last join on this path was */
	uint64_t hash;          /* checkpoints: loop_hash at insn */
	uint32_t hits, misses;
	/* the bpf_spin_lock held on this path (spin_lock.c): the map value's
	 * map and the id of its pointer; NULL map: none */
	struct bpfrt_map *lock_map;
	uint32_t lock_id;
	/* may_goto fall-throughs taken on this path (may_goto.c) */
	uint32_t may_goto_depth;
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

/* What the verifier knows of one instruction: env->aux[pc], one array per
 * verification (a restart keeps it, freeing only the explored states).
 * The facts computed before the walk (facts.c) never change during it.
 * Invariants: an lddw's second half has lddw_tail set and every other
 * field 0; explored is NULL wherever prune_point is not set. */
struct insn_aux {
	/* states saved here, newest first, linked by vstate.next: fully
	 * explored ones (branches == 0: their every path ended, so they cover
	 * what they contain) and checkpoints of paths still being walked
	 * (branches > 0: ancestors of the current path, the loop check) */
	struct vstate *explored;
	/* the first half of an lddw the loader relocated: its reference in
	 * prog->map_refs (what the immediate is), else NULL */
	const struct bpfrt_map_ref *map_ref;
	/* stack slots 0-63 of the current frame that may decide a later
	 * branch (precise, for r10 + constant slots) */
	uint64_t precise_slots;
	/* registers possibly read before being written from here on, within
	 * the subprogram (a local call reads r1-r5): pruning compares only
	 * these (plus r10) */
	uint16_t live;
	/* registers whose value may decide a later branch: iterator loops'
	 * widening (iter.c) never forgets them */
	uint16_t precise;
	/* registers whose value may decide anything from here on (a branch,
	 * pointer arithmetic, a call's argument, a checked return value):
	 * pruning lets any scalar stand for a scalar outside it, and joins
	 * widen only those; and the r10 slots those may come from (facts.c) */
	uint16_t decides;
	uint64_t decides_slots;
	/* states are compared and saved here: branch targets, after
	 * conditional jumps and calls, subprogram entries */
	bool prune_point;
	bool lddw_tail;
	/* a load of __sk_buff->sk: rewritten into r = 0 once verified
	 * (sock.c: bpfrt has no sockets) */
	bool sk_null_load;
	/* never join here: a join here let a loop come round to an earlier
	 * state (set by a restart, kept by the next attempt) */
	bool no_join;
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
	struct insn_aux *aux;     /* per insn, n of them */
	struct vstate *graveyard; /* states no longer compared against */
	uint32_t graveyard_done;  /* of them, fully explored (to be freed) */
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
	bool join_off;            /* never join anywhere (no_join: per insn) */
	uint32_t restarts;
	/* context of the program kind */
	const struct bpfrt_prog_kind_desc *kind;
	uint32_t ctx_size;
	bool ctx_rdonly;
	bool ctx_u64_only;        /* tracing arrays: 8-byte loads only */
	/* log */
	uint32_t log_level;
	char *log_buf;
	size_t log_size, log_len;
	uint64_t log_total;     /* bytes the whole log takes (no truncation) */
	bool log_truncated;
	/* log.c's view of the instruction being logged, as the kernel's log
	 * keeps it: what it touched (printed after it), what was written
	 * since the last prune point (the "_w" marks), where its line ended,
	 * and the source line printed last */
	uint16_t log_scratched, log_written;
	int32_t log_slot;         /* stack slot it accessed (-1: none) */
	uint64_t log_insn_end;    /* log_total after its line (0: none) */
	const struct bpfrt_line_info *log_line;
	bool log_started;         /* the initial state is printed */
	uint64_t peak_states, total_states;
	/* states kept for pruning (explored lists, evicted ones still
	 * parents, callback entries) and their memory, now and at the peak */
	uint64_t kept_states, kept_bytes, peak_bytes;
	/* btf_access.c: the target BTF of the typed arguments, the struct
	 * each context slot's pointer points to (0: a number), why there
	 * are none (empty: the kind has none, or they are typed), and the
	 * loads through PTR_TO_BTF_ID (n bytes, allocated on the first) */
	const struct btf *btf;
	uint32_t arg_btf_id[BPFRT_BTF_ARG_SLOTS];
	char btf_why[256];
	uint8_t *probe_loads;
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

/* log.c */
extern const char *const vreg_type_names[VREG_TYPE_CNT];
/* "map_value", "map_value_or_null"... (a per-thread buffer for the latter) */
const char *vreg_type_str(const struct vreg *r);
/* Records the rejection of the current instruction; returns -EACCES. */
int verr(struct venv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vlog(struct venv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The whole current frame's state, on the line begun ("from 3 to 7:"). */
void vlog_state(struct venv *env, const struct vstate *st);
/* The instruction at pc (source line first when it changes), before it
 * is walked; then, after it, what it touched. */
void vlog_insn(struct venv *env, uint32_t pc);
void vlog_insn_state(struct venv *env, const struct vstate *st);
/* "processed N insns (limit L) total_states T peak_states P" */
void vlog_totals(struct venv *env);

/* states.c */
struct vframe *vframe_new(uint32_t nslots);
void vframe_free(struct vframe *f);
void vstate_free(struct vstate *st);
struct vstate *vstate_copy(const struct vstate *src);
/* Memory a state takes (frames, slots, references). */
size_t vstate_size(const struct vstate *st);
/* A copy of cur saved at insn, only ever compared there (a checkpoint or
 * a callback entry): its frames packed, with only the registers a
 * comparison at insn reads (vframe.packed). */
struct vstate *vstate_save(struct venv *env, const struct vstate *cur, uint32_t insn);
/* A checkpoint is fully explored, its read marks final: the slots its
 * walk never read are packed without their spills, and the deepest such
 * slots (or never written ones) are dropped. Kept bytes follow. */
void vstate_pack(struct venv *env, struct vstate *st);
/* A state starts or stops being kept for pruning (the peak figures). */
void vstate_kept(struct venv *env, const struct vstate *st);
void vstate_unkept(struct venv *env, const struct vstate *st);
int vacquire_ref(struct venv *env, uint32_t *id);
bool vrelease_ref_state(struct vstate *st, uint32_t id);
/* The record is gone: every register that pointed into it is invalid. */
void vrelease_reference(struct vstate *st, uint32_t id);
/* Is every concrete state cur stands for one old's walk covered (at insn;
 * exact: the same abstract state)? */
bool vstates_equal(struct venv *env, const struct vstate *old, const struct vstate *cur,
		   uint32_t insn, bool exact);
/* Does the fully explored old's walk from insn cover cur? As
 * vstates_equal(!exact), except that old's scalars which decide nothing
 * from insn on (imprecise) match any scalar. */
bool vstate_covers(struct venv *env, const struct vstate *old, const struct vstate *cur,
		   uint32_t insn);
/* The current path reads slots `mask` of frame frameno (what it read
 * matters to every checkpoint since it was last written whole) /
 * writes them whole / could read any slot of any frame. */
void vstack_mark_read(struct venv *env, uint32_t frameno, uint64_t mask);
void vstack_mark_written(struct venv *env, uint32_t frameno, uint64_t mask);
void vstack_mark_all_read(struct venv *env);
/* The slots bytes [lo, hi) of a frame (negative offsets) touch, and the
 * ones they cover whole. */
uint64_t vstack_slots_touched(int64_t lo, int64_t hi);
uint64_t vstack_slots_whole(int64_t lo, int64_t hi);
/* How many scalars of cur old does not cover (-1: not joinable). */
int vjoin_distance(struct venv *env, const struct vstate *old, const struct vstate *cur,
		   uint32_t insn);
/* cur widened to the hull of itself and old (insn UINT32_MAX: everything
 * may be widened). */
void vjoin_states(struct venv *env, const struct vstate *old, struct vstate *cur,
		  uint32_t insn, bool widen);

/* prune.c */
/* 1: a fully explored state covers the current one (prune), 0: go on. */
int vstate_is_visited(struct venv *env, uint32_t insn);
/* A path of st's ended: each checkpoint whose paths all ended is fully
 * explored (packed; freed if it was evicted). */
void vupdate_branch_counts(struct venv *env, struct vstate *st);

/* facts.c */
/* Fills the facts of env->aux (zeroed, n entries) the walk reads: lddw
 * halves and map references, liveness, precision, prune points. */
int vcompute_insn_facts(struct venv *env);

/* mem.c */
/* Rejects (message fmt, naming the destination) if val is a pointer and
 * the program may not leak pointers; 0 otherwise. */
int vcheck_ptr_leak(struct venv *env, const struct vreg *val, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int vcheck_reg_init(struct venv *env, int regno);
/* (calls.c) regno is a size argument: a scalar in [0 or 1, MAX_VAR_SIZE),
 * Linux's messages otherwise; *max its largest value. */
int vcheck_size_arg(struct venv *env, int regno, bool zero_ok, uint64_t *max);
void vnote_stack_use(struct venv *env, uint32_t frameno, int32_t lowest);
/* A helper reads (or, uninit, writes) [regno, regno + size), size up to
 * max_size (exactly max_size if exact). */
int vcheck_helper_mem(struct venv *env, int regno, uint64_t max_size, bool uninit, bool exact);
int vdo_ldx(struct venv *env, const struct bpf_insn *insn);
int vdo_store(struct venv *env, const struct bpf_insn *insn);
int vdo_atomic(struct venv *env, const struct bpf_insn *insn);

/* btf_access.c */
/* id with modifiers and typedefs peeled; 0 if the chain is too long. */
uint32_t vbtf_peel(const struct btf *btf, uint32_t id);
/* Types the context slots of the program's target (env->btf, arg_btf_id,
 * btf_why); 0 or -ENOMEM. */
int vbtf_setup_args(struct venv *env);
/* A context load at off that gives a typed argument: dst set, true. */
bool vbtf_ctx_arg(struct venv *env, int32_t off, uint32_t size, bool sext, struct vreg *dst);
/* Why the kind's arguments are numbers (no BTF), or NULL. */
const char *vbtf_scalar_note(const struct venv *env);
/* A load (or refused store) through the PTR_TO_BTF_ID reg. */
int vbtf_check_access(struct venv *env, int regno, const struct vreg *reg, int32_t off,
		      uint32_t size, bool write, struct vreg *dst, bool sext);
/* ALU on a typed pointer that is no step within its struct: its operands
 * made numbers again; true if both are now scalars. */
bool vbtf_alu_demote(const struct bpf_insn *insn, struct vreg *dst, struct vreg *src, bool is64);
/* An instruction a CO-RE relocation resolved to the program's own
 * layout (prog->core_guards): only a load through, or a constant step of,
 * a pointer typed from the program's BTF may use it, or a move of the
 * offset into a register (a number, checked where it is used). */
int vbtf_check_core_guard(struct venv *env, const struct bpf_insn *insn);
/* After a successful verification: its loads through typed pointers
 * become fault-safe (BPFRT_PROBE_MEM). */
void vbtf_rewrite_probe_loads(struct venv *env);

/* alu.c */
int vdo_alu(struct venv *env, const struct bpf_insn *insn);
/* Sets *next to where the current path goes on; pushes the other side. */
int vdo_cond_jmp(struct venv *env, const struct bpf_insn *insn, uint32_t *next);

/* calls.c */
/* Returns 1 if the walk continues in a subprogram or callback, 2 if this
 * path is done, 0 to go on after the call, <0 on rejection. */
int vdo_call(struct venv *env, const struct bpf_insn *insn);
/* map_compat.c: Linux's check_map_func_compatibility, and the helpers
 * that write a map (refused on BPF_F_RDONLY_PROG maps). */
bool vmap_func_compatible(const struct bpfrt_map *map, int32_t func_id);
bool vmap_func_writes(int32_t func_id);
int vmap_check_prog_maps(struct venv *env);
/* NULL, or why helper func_id may not take map in this program (Linux's
 * sockmap update rule, and the socket values bpfrt does not type). */
const char *vmap_func_refused(const struct venv *env, const struct bpfrt_map *map,
			      int32_t func_id);
/* Returns 0: continue at env->insn; 1: this path is done. */
int vdo_exit(struct venv *env);
int vcheck_tail_call_stack(struct venv *env);

/* spin_lock.c: bpf_spin_lock/unlock and the rules while a lock is held */
bool vlock_held(const struct venv *env);
/* A call at a path holding a lock: only bpf_spin_unlock. */
int vcheck_call_while_locked(struct venv *env, const struct bpf_insn *insn);
int vcheck_exit_unlocked(struct venv *env);
/* A BPFRT_ARG_PTR_TO_SPIN_LOCK argument: checked, then taken or given back. */
int vcheck_spin_lock_arg(struct venv *env, const struct bpfrt_helper *h, int regno);
/* [reg + off, + size) must not touch a map value's lock (helper: a helper's
 * memory argument, else a load/store/atomic). */
int vcheck_spin_lock_access(struct venv *env, const struct vreg *reg, int32_t off, uint32_t size,
			    bool helper);
/* The program's kind may reference map (one with a lock: not socket
 * filters and tracing kinds). */
int vcheck_map_lock_kind(struct venv *env, const struct bpfrt_map *map);

/* ld_abs.c: a legacy packet load (BPF_LD | BPF_ABS / BPF_IND); returns
 * as vdo_exit (its failure path is the current function's exit). */
int vdo_ld_abs(struct venv *env, const struct bpf_insn *insn);
/* dynptr.c: struct bpf_dynptr on the stack (two slots) and its helpers */
enum vdynptr_kind { VDYNPTR_NONE = 0, VDYNPTR_LOCAL = 1, VDYNPTR_RINGBUF = 2 };
/* A plain store (or a helper writing memory) touches [lo, hi) of fr: a
 * local dynptr there is destroyed (its slices with it), a referenced one
 * refuses the write. Returns 0 or the rejection. */
int vdynptr_stack_write(struct venv *env, struct vframe *fr, int64_t lo, int64_t hi);
/* Any byte of [lo, hi) of fr part of a dynptr? (reads refuse it) */
bool vdynptr_in_range(const struct vframe *fr, int64_t lo, int64_t hi);
/* The dynptr argument of helper argument type t in regno (check_arg). */
struct vdynptr_arg {
	uint32_t release_ref;     /* the reference a release helper drops */
	uint32_t dynptr_id;       /* the dynptr an argument names (slices carry it) */
	uint8_t kind;             /* its kind */
	int uninit_regno;         /* the dynptr the helper initialises, or -1 */
	enum bpfrt_arg_type uninit_type;
};
int vdynptr_check_arg(struct venv *env, int regno, enum bpfrt_arg_type t,
		      struct vdynptr_arg *da);
/* After the call's arguments passed: initialise the uninit dynptr
 * (acquiring its reference) or release the released one. */
int vdynptr_after_args(struct venv *env, int32_t id, struct vdynptr_arg *da);
/* r0 of dynptr_data: PTR_TO_MEM of size bytes or NULL, tied to the dynptr. */
void vdynptr_mark_slice(struct venv *env, struct vreg *r0, const struct vdynptr_arg *da,
			uint32_t size);
/* The callback argument of user_ringbuf_drain: a read-only local dynptr. */
void vdynptr_mark_callback_arg(struct venv *env, struct vreg *r);

/* sock.c: socket pointers, their fields and references */
bool vsock_is_sock_type(uint8_t type);
/* A BPFRT_ARG_PTR_TO_SOCK_COMMON / _SOCK_RELEASE argument (the latter's
 * reference in *release_ref). */
int vsock_check_arg(struct venv *env, int regno, enum bpfrt_arg_type t, uint32_t *release_ref);
/* r0 of a helper returning a socket or NULL, made in *out before the
 * arguments are clobbered (a lookup acquires its reference). */
int vsock_prepare_result(struct venv *env, int32_t id, const struct bpfrt_helper *h,
			 struct vreg *out);
/* Is the context load at off of size bytes __sk_buff->sk? Then dst is it. */
bool vsock_ctx_sk_field(const struct venv *env, int32_t off, uint32_t size);
void vsock_mark_ctx_sk(struct venv *env, struct vreg *dst);
/* A load or (refused) store through a socket pointer. */
int vsock_check_access(struct venv *env, int regno, const struct vreg *reg, int32_t off,
		       uint32_t size, bool write, struct vreg *dst);
/* After a successful verification: skb->sk loads become r = 0. */
void vsock_rewrite_ctx_loads(struct venv *env);

/* iter.c: the open-coded iterator kfuncs (bpf_iter_num_*, bpf_iter_bits_*) */
/* Is the call at pc one of them (which: helpers/iter.h's op, 0 if not)? */
int viter_call_op(const struct venv *env, uint32_t pc);
/* Checks and models the iterator kfunc call at env->insn. 0: go on after
 * it, <0 rejection. */
int viter_call(struct venv *env, int32_t id);
/* Refuses an access to [lo, hi) of the frame touching an iterator. */
int viter_check_stack_access(struct venv *env, const struct vframe *fr, int64_t lo, int64_t hi);
/* Do two slots, one of them an iterator's, hold the same iterator (exact:
 * at the same iteration depth too)? */
bool viter_slots_equal(const struct vslot *old, const struct vslot *cur, bool exact);
/* Refuses the exit of frame fr while it holds an iterator. */
int viter_check_frame_exit(struct venv *env, const struct vframe *fr);
/* At an iterator's next call: does the ancestor sl (a checkpoint still
 * being explored) cover cur, an iteration of the same, active iterator?
 * Then the loop converged (prune). */
bool viter_converged(struct venv *env, const struct vstate *sl, const struct vstate *cur,
		     uint32_t insn);

/* kfuncs_kernel.c: Linux's kernel-object kfuncs and context casts
 * (helpers/kernel_kfuncs.h), and the get_current_task_btf helper */
struct bpfrt_kernel_kfunc;
/* The call's kernel kfunc, or NULL if id is none of them. */
const struct bpfrt_kernel_kfunc *vkfunc_kernel_of(const struct venv *env, int32_t id);
/* Checks and models the call at env->insn: 0 go on, <0 rejection. */
int vkfunc_kernel_call(struct venv *env, int32_t id);

/* The loop machinery iter.c and may_goto.c share: the checkpoint of the
 * previous iteration (the nearest ancestor saved at insn with the same
 * call sites, past the one just saved for the current state); st's
 * scalars that changed since prev and that no branch after insn depends
 * on, forgotten (Linux's widen_imprecise_scalars); is sl an ancestor of
 * cur (within a bounded search)? */
const struct vstate *vprevious_iteration(const struct venv *env, uint32_t insn);
void vwiden_imprecise(struct venv *env, const struct vstate *prev, struct vstate *st,
		      uint32_t insn);
bool vis_ancestor(const struct vstate *sl, const struct vstate *cur);

/* may_goto.c */
/* Walks the may_goto at env->insn: the fall-through pushed, *next the
 * jump target. */
int vdo_may_goto(struct venv *env, const struct bpf_insn *insn, uint32_t *next);
/* At a may_goto: does the ancestor sl cover cur, which fell through a
 * may_goto since? Then the loop converged (prune). */
bool vmay_goto_converged(struct venv *env, const struct vstate *sl, const struct vstate *cur,
			 uint32_t insn);
/* A loop converged at its ancestor sl (an iterator's or a may_goto's):
 * the checkpoints between sl and cur, whose walks end here, may read
 * what sl's continuation reads later, so every slot they did not see
 * written whole is marked read. */
void vmark_loop_reads(struct vstate *cur, const struct vstate *sl);
/* May sl and cur, at insn, be taken for an infinite loop (as far as the
 * may_goto depths go)? */
bool vmay_goto_same_depth(const struct vstate *sl, const struct vstate *cur);

/* walk.c */
/* A copy of the current state pushed to be walked from insn later. */
struct vstate *vpush_branch(struct venv *env, uint32_t insn);
int vdo_check(struct venv *env);

/* ---- small helpers every file uses ---- */
#define MAX_VAR_OFF     (1 << 29) /* BPF_MAX_VAR_OFF */
#define MAX_VAR_SIZE    (1 << 29) /* BPF_MAX_VAR_SIZ */
#define MAX_PACKET_OFF  0xffff

#define REGMASK(r) ((uint16_t)(1u << (r)))
#define ARG_REGS (REGMASK(1) | REGMASK(2) | REGMASK(3) | REGMASK(4) | REGMASK(5))

static inline struct vframe *cur_frame(struct venv *env)
{
	return env->cur->frames[env->cur->curframe];
}

static inline struct vreg *cur_regs(struct venv *env)
{
	return cur_frame(env)->regs;
}

static inline void mark_not_init(struct vreg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = NOT_INIT;
}

static inline void mark_ptr(struct vreg *r, enum vreg_type t)
{
	memset(r, 0, sizeof(*r));
	r->type = (uint8_t)t;
	vreg_mark_const(r, 0); /* variable offset 0 */
	r->type = (uint8_t)t;
}

static inline bool is_ptr(const struct vreg *r)
{
	return r->type != NOT_INIT && r->type != SCALAR;
}

static inline uint32_t frame_slots_for(struct venv *env, uint32_t subprog)
{
	return (env->prog->subprogs[subprog].stack_depth + 7) / 8;
}

/* Every register and spilled register of every frame (callback for
 * id-wide updates). */
#define for_each_reg(st, r, body)                                                   \
	do {                                                                        \
		for (uint32_t __f = 0; __f <= (st)->curframe; __f++) {               \
			struct vframe *__fr = (st)->frames[__f];                     \
			for (int __i = 0; __i < BPF_NREGS; __i++) {                  \
				struct vreg *r = &__fr->regs[__i];                   \
				body;                                                \
			}                                                            \
			for (uint32_t __s = 0; __s < __fr->nslots; __s++) {          \
				struct vreg *r = &__fr->slots[__s].spilled;          \
				if (!slot_has_spill(&__fr->slots[__s]))              \
					continue;                                    \
				body;                                                \
			}                                                            \
		}                                                                   \
	} while (0)

/* A pointer into the packet or its metadata (Linux's reg_is_pkt_pointer):
 * an access through it is checked against its range. */
static inline bool is_pkt_pointer(const struct vreg *r)
{
	return r->type == PTR_TO_PACKET || r->type == PTR_TO_PACKET_META;
}

/* One of the packet's pointers, its end included: the comparisons among
 * them measure the packet, never an address. */
static inline bool is_pkt_family(const struct vreg *r)
{
	return is_pkt_pointer(r) || r->type == PTR_TO_PACKET_END;
}

/* Loaded with BPFRT_F_ALLOW_PTR_LEAKS: trusted as privileged Linux trusts
 * its programs (mem.c, vcheck_ptr_leak). */
static inline bool ptr_leaks_allowed(const struct venv *env)
{
	return env->prog->load_flags & BPFRT_F_ALLOW_PTR_LEAKS;
}

static inline bool kind_has_packet(const struct venv *env)
{
	return env->kind->ctx.packet_field_cnt > 0;
}

static inline struct vreg *reg_at(struct venv *env, int regno)
{
	return &cur_regs(env)[regno];
}

static inline bool vreg_is_zero(const struct vreg *r)
{
	return r->type == SCALAR && tnum_equals_const(r->var_off, 0);
}

/* BPF_F_RDONLY_PROG: programs may read the map, never write it. */
static inline bool map_prog_rdonly(const struct bpfrt_map *map)
{
	return map && (map->map_flags & BPF_F_RDONLY_PROG);
}

/* BPF_F_WRONLY_PROG: programs may write the map, never read it. */
static inline bool map_prog_wronly(const struct bpfrt_map *map)
{
	return map && (map->map_flags & BPF_F_WRONLY_PROG);
}

/* A map whose value is constant and directly addressable: a one-entry
 * array, frozen and read-only for programs (Linux's bpf_map_is_rdonly
 * with map_direct_value_addr). Loads from it fold; strings in it are
 * BPFRT_ARG_PTR_TO_CONST_STR. */
static inline bool map_is_const(const struct bpfrt_map *map)
{
	return map && map->type == BPF_MAP_TYPE_ARRAY && map->max_entries == 1 &&
	       bpfrt_map_is_rdonly(map);
}

#endif
