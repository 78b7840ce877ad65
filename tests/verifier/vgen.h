/* The verifier fuzzers' program generator (tests/verifier/vgen.c), shared
 * by test_verifier_fuzz (bpfrt's verifier, then the checking interpreter
 * and the JIT) and test_verifier_linux_diff (bpfrt's verifier against
 * Linux's).
 *
 * A program is built from typed snippets: the generator tracks what each
 * register and stack byte holds (scalar, context, stack, map value,
 * packet, ringbuf record, map, function) so most programs are plausible
 * and get past the first instruction, and emits every instruction of the
 * ISA: ALU/ALU64 with every op (movsx, sdiv/smod, neg, le/be and bswap),
 * ldx and ldsx of every size, st/stx, every atomic (add/or/and/xor with
 * and without fetch, xchg, cmpxchg; 32 and 64-bit), jmp and jmp32 with
 * every op, ja and gotol, bounded loops, lddw of an immediate, a map, a
 * map value and a function, local calls, bpf_loop callbacks, tail calls,
 * callx, and calls of every registered helper (bpfrt_helper_info over
 * 0..BPFRT_MAX_HELPER_ID) with arguments set up per bpfrt_arg_type, for
 * every program kind with its context. vg_mutate then damages a program
 * (operand, opcode and register changes) to reach the rejections. */
#ifndef BPFRT_TESTS_VGEN_H
#define BPFRT_TESTS_VGEN_H

#include "vsupport.h"

#define VG_MAX_INSNS 512
#define VG_MAX_REFS  48
#define VG_KINDS     BPFRT_PROG_EXT /* every kind that loads (freplace is refused) */

/* Maps a program may reference: tmaps indexes, plus the prog array of the
 * program's own kind (one per kind: a prog array serves one kind). */
enum { VM_HASH = 0, VM_ARRAY = 1, VM_BIG = 2, VM_RB = 3, VM_RODATA = 5, VM_KIND_PROGS = 6,
       VM_QUEUE = 14, VM_STACK = 15, VM_BLOOM = 16, VM_LRU_PCPU = 17, VM_ROQUEUE = 18,
       VM_LPM = 19, VM_AOM = 20, VM_HOM = 21,
       VM_PEA = 22, VM_CGA = 23, VM_STM = 24, VM_PCPU = 25, VM_LOCKED = 26, VM_URB = 28,
       VM_CGS = 29, VM_PCGS = 31, VM_SOCKMAP = 32, VM_SKS = 37 };

struct vg_prog {
	struct bpf_insn insns[VG_MAX_INSNS];
	size_t n;
	struct bpfrt_map_ref refs[VG_MAX_REFS];
	uint8_t ref_map[VG_MAX_REFS];  /* VM_* per ref */
	uint32_t nref;
	enum bpfrt_prog_kind kind;
	uint32_t ctx_size;             /* UNSPEC/SYSCALL: bytes at r1 */
	bool nondet;                   /* calls time/random helpers: r0 may differ per run */
	bool mutated;
};

/* Instruction classes counted per program (vg_classes). */
enum vg_class {
	VC_ALU32, VC_ALU64, VC_MOVSX, VC_SDIV_SMOD, VC_NEG, VC_LE_BE, VC_BSWAP,
	VC_LDX, VC_LDSX, VC_ST, VC_STX,
	VC_ATOMIC_ADD, VC_ATOMIC_OR, VC_ATOMIC_AND, VC_ATOMIC_XOR, VC_ATOMIC_FETCH,
	VC_XCHG, VC_CMPXCHG, VC_ATOMIC32, VC_ATOMIC64,
	VC_JMP, VC_JMP32, VC_JA, VC_GOTOL, VC_BACK_EDGE,
	VC_LDDW_IMM, VC_LDDW_MAP, VC_LDDW_MAP_VALUE, VC_LDDW_FUNC,
	VC_HELPER, VC_LOCAL_CALL, VC_CALLX, VC_BPF_LOOP, VC_TAIL_CALL, VC_RINGBUF_RECORD,
	VC_PACKET, VC_CTX_READ, VC_CTX_WRITE, VC_LD_ABS, VC_SPIN_LOCK, VC_ITER_LOOP,
	VC_SOCKET,
	VC_MAY_GOTO,
	VC_CNT
};
extern const char *const vg_class_names[VC_CNT];

/* Creates the maps (maps_init) and, per kind, a prog array whose slot 0
 * holds a program returning a constant and slot 1 one that tail-calls
 * slot 1 again (to the limit). Idempotent. */
void vg_init(void);
/* The bpfrt map behind a VM_* for a program of kind k. */
struct bpfrt_map *vg_map(int vm, enum bpfrt_prog_kind k);
/* Linux's copy (vg_kernel_maps_init first), or -1. */
int vg_kernel_map_fd(int vm, enum bpfrt_prog_kind k);
int vg_kernel_maps_init(void);

/* A random program of a random kind (kind < 0) or of `kind`, from the
 * current fz_state. */
void vg_program(struct vg_prog *p, int kind);
/* 1 to 3 random changes (operands, opcode bits, registers). */
void vg_mutate(struct vg_prog *p);

/* Bitmask of enum vg_class present; helper ids called into *helpers (a
 * BPFRT_MAX_HELPER_ID-entry array of flags, may be NULL). */
uint64_t vg_classes(const struct vg_prog *p, uint8_t *helpers);

/* Verifies (and JIT-compiles when jit) through the object loader's path.
 * 0 and *out, or the verifier's -errno with bpfrt_last_error(). */
int vg_load(const struct vg_prog *p, bool jit, struct bpfrt_prog **out, char *log,
	    size_t log_size);

/* Maps back to their fixed contents (array values zeroed, hash emptied,
 * ringbuf drained), so that two runs of a program see the same data. */
void vg_reset_maps(void);

/* One run of an accepted program with its kind's context in the checking
 * interpreter (BPFRT_EXEC_CHECKED), or in the plain interpreter while the
 * build has no checking interpreter (vg_checked_available false then).
 * 0 and *r0, or the run's -errno. */
int vg_run_checked(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind, uint64_t *r0);
extern bool vg_checked_available;
/* The same in the JIT (the program must be compiled). */
int vg_run_jit(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind, uint64_t *r0);

/* Writes the program (kind, map references, disassembly) to out. */
void vg_print(const struct vg_prog *p, FILE *out);

const char *vg_kind_name(enum bpfrt_prog_kind k);

/* Program i of a seed starts from its own fz_state (so it can be rerun
 * alone: BPFRT_FUZZ_ONE). */
void vg_seed(uint64_t seed, uint64_t i);
/* The program being tried, printed with its seed and index should the
 * process die (a fault, an ASan report) after vg_report_deaths(). */
extern const struct vg_prog *vg_cur_prog;
extern uint64_t vg_cur_seed, vg_cur_index;
void vg_report_deaths(void);

#endif
