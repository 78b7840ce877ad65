/* The checking interpreter's run-time model (BPFRT_EXEC_CHECKED): the
 * regions a run may touch, the checks against them, and the violation
 * report.
 *
 * A region is added by provenance, never by guessing from an address:
 *  - the context at r1, bounded by the smaller of the run's context
 *    length (r2, as bpfrt_prog_run takes it) and what the verifier proved
 *    the program reads (max_ctx_access), and by its kind's context;
 *  - the packet [data, data_end) the context of a packet kind (XDP) names,
 *    and its metadata [data_meta, data) where the context has data_meta;
 *  - each activation's BPF stack: the live frames [current frame bottom,
 *    top) of the interpreter activations running (the main one and the
 *    callbacks nested in it), with one init byte per stack byte: a read of
 *    a byte not written in this run is a violation;
 *  - a map value when lddw loads its address (BPF_PSEUDO_MAP_VALUE in the
 *    program's map_refs) or a lookup helper returns it (value_size bytes);
 *  - a ringbuf record from reserve (its size) until submit or discard, and
 *    from ringbuf_reserve_dynptr until submit_dynptr or discard_dynptr;
 *  - what a helper hands a callback (for_each_map_elem's key copy,
 *    user_ringbuf_drain's dynptr and sample), for the call.
 * A dynptr argument must be initialised stack (or such a region) and, if
 * not null, name memory inside one live region (writable unless it is
 * read-only).
 * Helper and kfunc arguments are checked against the same regions by the
 * callee's prototype (struct bpfrt_helper args).
 *
 * The state of a run lives in bpfrt_run_state.check (NULL in the other
 * engines); each activation pushes its stack. A violation writes the
 * report (program, insn index and text, address, size, nearest region)
 * into a per-thread buffer and aborts the run: bpfrt_prog_run returns
 * -EFAULT with that report as bpfrt_last_error(). */
#ifndef BPFRT_INTERP_CHECK_H
#define BPFRT_INTERP_CHECK_H

#include "core/prog.h"

#include <stdbool.h>
#include <stdint.h>

/* What the checking interpreter puts in registers the verifier holds
 * uninitialised (non-canonical: no host address). */
#define BPFRT_CHECK_POISON 0xbadc0ffee0ddf00dull

enum bpfrt_check_access {
	BPFRT_CHECK_READ = 1,
	BPFRT_CHECK_WRITE = 2,
	BPFRT_CHECK_RW = 3, /* atomics: read and write */
};

enum bpfrt_check_region_kind {
	BPFRT_REGION_CTX,
	BPFRT_REGION_PACKET,
	BPFRT_REGION_STACK,
	BPFRT_REGION_MAP_VALUE,
	BPFRT_REGION_RINGBUF,
	BPFRT_REGION_DYNPTR,       /* a struct bpf_dynptr a helper hands a callback */
	BPFRT_REGION_PACKET_META,  /* the packet's metadata, before its data */
};

struct bpfrt_check_region {
	uint64_t start, end;       /* [start, end) */
	uint8_t kind;              /* enum bpfrt_check_region_kind */
	bool writable;
	bool readable;             /* false: a BPF_F_WRONLY_PROG map's value */
	bool released;             /* a ringbuf record after submit/discard: kept for the report */
	const struct bpfrt_map *map;
};

/* One interpreter activation's BPF stack: [base, top) is the memory,
 * [lo, top) the frames live now (the current one and its callers). */
struct bpfrt_check_stack {
	uint64_t base, lo, top;
	uint8_t *init;             /* one byte per stack byte: written in this run */
	struct bpfrt_check_stack *outer;
};

struct bpfrt_check_run {
	uint64_t ctx;              /* r1 at entry */
	uint32_t ctx_given;        /* context bytes the caller provides (r2) */
	/* the packet and its metadata (end 0: none) */
	struct bpfrt_check_region ctx_region, pkt_region, meta_region;
	const struct bpfrt_prog *ctx_prog; /* the program ctx_region is bounded for */
	struct bpfrt_check_region *regions; /* map values, ringbuf records */
	uint32_t region_cnt, region_cap;
	bool regions_full;         /* out of memory: the run aborts */
	struct bpfrt_check_stack *stack; /* innermost activation */
	/* Inner maps this run's lookups on a map-in-map returned: maps the
	 * program may pass to helpers besides the ones it references. */
	struct bpfrt_map *inner_maps[32];
	uint32_t inner_cnt;
};

void bpfrt_check_run_init(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			  uint64_t ctx, uint64_t ctx_len);
void bpfrt_check_run_fini(struct bpfrt_check_run *cr);

/* The context region for prog (the entry program, or a tail-call target
 * with its own verified size). */
void bpfrt_check_set_prog(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog);

/* The checks. Each returns true when the operation may go ahead; false
 * after writing the report and aborting the run (the caller stops).
 * insn is the instruction being executed in prog. */
bool bpfrt_check_access(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			const struct bpf_insn *insn, uint64_t addr, uint32_t size, int access);
/* Before a helper or kfunc call: every argument by the prototype.
 * args = r1-r5. */
bool bpfrt_check_call(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		      const struct bpf_insn *insn, const struct bpfrt_helper *h,
		      const uint64_t *args);
/* After it returned r0: regions it created or released, stack bytes it
 * wrote; false if the call aborted the run (a callback did). */
bool bpfrt_check_call_done(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			   const struct bpf_insn *insn, const struct bpfrt_helper *h,
			   const uint64_t *args, uint64_t r0);
/* lddw at insn: a map value address the loader resolved becomes a region. */
bool bpfrt_check_lddw(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		      const struct bpf_insn *insn);
/* A frame [lo, fp) was entered (call, tail call): none of its bytes are
 * written yet. */
void bpfrt_check_frame_enter(struct bpfrt_check_stack *cs, uint64_t lo, uint64_t fp);
/* Control flow left the program (a jump or fall-through out of it). */
void bpfrt_check_control(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			 const char *what);

/* A helper hands a callback memory of its own (for_each_map_elem's key
 * copy and element value): a region until released; false when out of
 * memory (the caller stops). Release marks every region starting at
 * start released. */
struct bpfrt_map;
bool bpfrt_check_add_region(struct bpfrt_check_run *cr, uint64_t start, uint64_t size,
			    uint8_t kind, bool writable, const struct bpfrt_map *map);
void bpfrt_check_release_region(struct bpfrt_check_run *cr, uint64_t start);

/* The report of the last violation on this thread. */
const char *bpfrt_check_report(void);

#endif
