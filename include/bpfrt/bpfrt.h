/* bpfrt: an in-process eBPF runtime. Public API.
 *
 * Conventions (as libbpf): opaque objects, functions return 0 or a negative
 * errno; on failure bpfrt_last_error() gives a one-line message naming the
 * instruction, section or symbol at fault. The message is per thread. */
#ifndef BPFRT_BPFRT_H
#define BPFRT_BPFRT_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfrt/map.h"
#include "bpfrt/object.h"
#include "bpfrt/attach.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BPFRT_MAX_INSNS        1000000 /* same limit as Linux's processed-insn cap */
#define BPFRT_MAX_CALL_FRAMES  8
#define BPFRT_STACK_PER_FRAME  512
#define BPFRT_MAX_HELPER_ID    1024 /* Linux helper ids, then host kfuncs */
#define BPFRT_KFUNC_ID_BASE    512
#define BPFRT_NAME_LEN         64

/* Message for the last failing bpfrt call on this thread ("" if none). */
const char *bpfrt_last_error(void);

/* ---- programs ---------------------------------------------------------- */
struct bpfrt_prog;

enum bpfrt_exec_mode {
	BPFRT_EXEC_DEFAULT = 0, /* JIT if the program was JIT-compiled, else interpreter */
	BPFRT_EXEC_INTERP,
	BPFRT_EXEC_JIT,
	/* Checking interpreter: every memory access and helper argument is
	 * validated at run time against the regions the program may touch
	 * (its context: the smaller of arg2, the length bpfrt_prog_run is
	 * given, and the bytes the verifier proved it reads, at most its
	 * kind's context; its stack frames, map values, ringbuf records, the
	 * packet); a violation aborts the run with a report (-EFAULT,
	 * bpfrt_last_error() names the insn and address). For fuzzing and
	 * debugging, not speed. */
	BPFRT_EXEC_CHECKED,
};

struct bpfrt_prog_load_opts {
	size_t sz;              /* sizeof(struct bpfrt_prog_load_opts) */
	const char *name;       /* for messages and listings; may be NULL */
	bool jit;               /* compile to native code at load time */
	/* Verification (src/verifier): raw-instruction loads are trusted
	 * unless verify is set or a kind is given; see bpfrt_prog_load. */
	bool verify;
	enum bpfrt_prog_kind kind; /* context r1 points to (object.h) */
	uint32_t ctx_size;      /* BPFRT_PROG_UNSPEC/SYSCALL: bytes at r1, read-write */
	char *log_buf;          /* verifier log (NUL-terminated, keeps the tail) */
	size_t log_size;
	uint32_t log_level;     /* 0: message only, 1: insns on the failing path, 2: + states */
	uint32_t flags;         /* BPFRT_F_* load flags below */
};

/* Load flags. Private stacks (one BPF stack per program and thread, with
 * guard pages) are on by default for tracing-like kinds (tp, raw_tp,
 * fentry/fexit/fmod_ret, fentry.multi, kprobe, uprobe) whose stack depth
 * exceeds 64 bytes, as in Linux; the flags force them off or on. */
#define BPFRT_F_DISABLE_PRIVATE_STACK (1u << 0) /* Linux's BPF_F_DISABLE_PRIVATE_STACK */
#define BPFRT_F_PRIVATE_STACK         (1u << 1) /* force a private stack */
/* Trusted programs only: lets pointer values become data (stored into
 * maps, records or the context, passed to helpers as values, returned,
 * compared, subtracted), as privileged Linux (allow_ptr_leaks) does. By
 * default the verifier applies unprivileged Linux's rule and rejects
 * every such leak: maps may be shared with other processes, and a leaked
 * pointer hands out the host's address layout. */
#define BPFRT_F_ALLOW_PTR_LEAKS       (1u << 2)

/* Validates, verifies if asked, and (optionally) JIT-compiles insns; the
 * program keeps its own copy of the instructions. Returns 0 and *prog, or
 * -errno.
 *
 * Verification rule: programs from objects (bpfrt_object_load) are always
 * verified unless the object load opts say trusted. Raw instructions have
 * no program type, map references or context of their own (the
 * conformance contract r1 = memory, r2 = length cannot be proven safe), so
 * bpfrt_prog_load verifies only when opts->verify is set or opts->kind is
 * not BPFRT_PROG_UNSPEC; otherwise the structural validator alone runs,
 * as before (trusted). A verified BPFRT_PROG_UNSPEC program gets r1 =
 * ctx_size read-write bytes and r2 = an unknown scalar. */
int bpfrt_prog_load(const struct bpf_insn *insns, size_t insn_cnt,
		    const struct bpfrt_prog_load_opts *opts,
		    struct bpfrt_prog **prog);
/* Gives the caller's program up. Like Linux's references, every use keeps
 * it alive: a prog array slot holding it, a link attaching it, a nest
 * list (bpfrt_nest_set_children) naming it. The memory goes when the
 * last of them lets it go (the slot is overwritten or deleted or its map
 * freed, the link destroyed, the list replaced); until then the program
 * still runs through them. After this call the caller must not use prog. */
void bpfrt_prog_free(struct bpfrt_prog *prog);

/* Runs the program with r1 = arg1, r2 = arg2 (the conformance contract:
 * memory pointer and length). Returns 0 and *retval = r0, or -errno
 * (-ENOTSUP for BPFRT_EXEC_JIT on a program that was not compiled).
 * Runs nest (a kfunc may run other programs); a program already running
 * on this thread is not entered again: -EBUSY, counted in
 * bpfrt_prog_misses(). A nested run (inside another run on this thread)
 * never puts its BPF frames on the stack in use: the interpreter and JIT
 * code of programs with a private stack put them on that stack, and JIT
 * code of a program without one runs whole (with the helpers and kfuncs
 * it calls) on a per-thread stack of its nesting level; a run nested
 * deeper than 256 such levels is skipped: -ELOOP, counted as a miss. */
int bpfrt_prog_run(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
		   uint64_t arg1, uint64_t arg2, uint64_t *retval);
/* A verified program is only run with the context it was verified for:
 * bpfrt_prog_run refuses (-EINVAL, naming the program) arg1 = 0 (the
 * verifier takes r1 to be a valid pointer, so code under `if (ctx == 0)`
 * is never checked) and arg2 below bpfrt_prog_ctx_access() (the bytes
 * its loads and stores reach). For XDP, data/data_end must describe real
 * memory below 4 GiB: use bpfrt_prog_test_run_opts, which builds it. */

/* ---- test runs (Linux's BPF_PROG_TEST_RUN) ----------------------------- */
/* libbpf's struct bpf_test_run_opts, plus the engine to run in. The
 * context is built for the program's kind:
 *  - XDP: data_in is the packet (14 .. BPFRT_TEST_RUN_MAX_DATA bytes).
 *    The program gets an xdp_md whose data/data_end point at a private
 *    copy of it, mapped below 4 GiB (xdp_md's fields are 32 bits; where no
 *    such memory can be mapped the run fails with -ENOMEM and says so);
 *    data_meta is 0 (bpfrt has no metadata area). ctx_in, optional, is an
 *    xdp_md as Linux takes it: data and data_meta 0, data_end equal to
 *    data_size_in, egress_ifindex 0; ingress_ifindex and rx_queue_index
 *    are passed on (default ingress_ifindex 1, loopback, as Linux).
 *    data_out gets the packet after the run, ctx_out the xdp_md with
 *    offsets (data 0, data_end = length) as Linux reports them.
 *  - SOCKET: data_in is the packet (>= 14 bytes); the program gets a
 *    struct __sk_buff with len, protocol (the Ethernet type, network
 *    order), pkt_type and ifindex filled from it (data/data_end 0: a
 *    socket filter reads the packet through no pointer). ctx_in,
 *    optional, may set mark, priority, ingress_ifindex, ifindex, cb[],
 *    tstamp, wire_len, gso_segs, gso_size and hwtstamp (as Linux); any
 *    other field non-zero is refused. data_out, ctx_out as XDP.
 *  - TRACEPOINT, RAW_TRACEPOINT, FENTRY, FEXIT, FMOD_RET, FENTRY_MULTI,
 *    KPROBE, KRETPROBE, UPROBE: no data_in/data_out; the context is
 *    ctx_in, or without it a zeroed one of the size the program was
 *    verified for (bpfrt_prog_ctx_size). A ctx_in shorter than the bytes
 *    the program reads (bpfrt_prog_ctx_access) or longer than its kind's
 *    context is refused (-EINVAL naming the program and both sizes). The
 *    context is read-only to these kinds: no ctx_out.
 *  - SYSCALL, UNSPEC: the context is ctx_in, at least the verified
 *    ctx_size bytes (a copy: the caller's buffer is not written); no
 *    data_in. ctx_out gets the context after the run.
 * repeat 0 runs once; duration is the mean wall time of one run in ns.
 * data_size_out/ctx_size_out are, as in Linux, the buffer sizes in and
 * the full lengths out; a buffer too small gets what fits and -ENOSPC.
 * data_size_out 0 means large enough (Linux's old behaviour); ctx_size_out
 * has no such convention: ctx_out with ctx_size_out 0 gets nothing and
 * -ENOSPC. Repetitions run on the same packet and context.
 * Programs that were not verified (trusted loads) need ctx_in or data_in
 * of their own contract. Returns 0 or -errno with bpfrt_last_error(). */
#define BPFRT_TEST_RUN_MAX_DATA 65535u /* the verifier's largest packet offset */
#define BPFRT_TEST_RUN_MAX_CTX  65535u /* SYSCALL/UNSPEC context, as Linux's U16_MAX */

struct bpfrt_test_run_opts {
	size_t sz;              /* sizeof(struct bpfrt_test_run_opts) */
	const void *data_in;
	void *data_out;
	uint32_t data_size_in;
	uint32_t data_size_out; /* in: size of data_out (0: large enough); out: packet length */
	const void *ctx_in;
	void *ctx_out;
	uint32_t ctx_size_in;
	uint32_t ctx_size_out;  /* in: size of ctx_out (0: nothing copied); out: context length */
	uint64_t retval;        /* out: r0 of the last run (Linux: its low 32 bits) */
	int repeat;             /* runs; 0 = 1 */
	uint32_t duration;      /* out: mean ns per run */
	uint32_t flags;         /* none defined yet: must be 0 */
	enum bpfrt_exec_mode mode; /* engine, as bpfrt_prog_run */
};

int bpfrt_prog_test_run_opts(struct bpfrt_prog *prog, struct bpfrt_test_run_opts *opts);

/* ---- verifier ---------------------------------------------------------- */
struct bpfrt_verify_opts {
	size_t sz;              /* sizeof(struct bpfrt_verify_opts) */
	char *log_buf;          /* may be NULL: message in bpfrt_last_error() only */
	size_t log_size;
	uint32_t log_level;     /* 0, 1 (insns of the failing path) or 2 (+ register states) */
	uint32_t ctx_size;      /* BPFRT_PROG_UNSPEC/SYSCALL: bytes at r1 */
	uint64_t insn_processed; /* out: instructions the verifier processed */
	uint32_t states;        /* out: states kept for pruning */
};

/* Runs the verifier on a loaded program (e.g. one loaded trusted) as its
 * kind, without changing it. Returns 0, or -EACCES/-EINVAL/-E2BIG with
 * bpfrt_last_error() "insn N: reason" and the log in opts->log_buf. */
int bpfrt_prog_verify(struct bpfrt_prog *prog, struct bpfrt_verify_opts *opts);
/* Largest context offset + size the program reads, or its tail-call
 * targets may (the context its prog arrays' owner was verified for):
 * attach points with a smaller context refuse it. 0 if unverified. */
uint32_t bpfrt_prog_ctx_access(const struct bpfrt_prog *prog);
/* Size of the context the program was verified against (its kind's
 * largest context, or the ctx_size of UNSPEC/SYSCALL), 0 if unverified. */
uint32_t bpfrt_prog_ctx_size(const struct bpfrt_prog *prog);
/* True if the program was verified at load. */
bool bpfrt_prog_verified(const struct bpfrt_prog *prog);

const char *bpfrt_prog_name(const struct bpfrt_prog *prog);
const struct bpf_insn *bpfrt_prog_insns(const struct bpfrt_prog *prog, size_t *cnt);
/* Native image, or NULL if not JIT-compiled. */
const void *bpfrt_prog_jited(const struct bpfrt_prog *prog, size_t *len);
/* Stack bytes of the deepest call chain (the private-stack size). */
uint32_t bpfrt_prog_stack_depth(const struct bpfrt_prog *prog);
/* Number of subprograms and each one's own stack depth and first insn. */
uint32_t bpfrt_prog_subprog_cnt(const struct bpfrt_prog *prog);
int bpfrt_prog_subprog_info(const struct bpfrt_prog *prog, uint32_t idx,
			    uint32_t *start_insn, uint32_t *stack_depth);

/* Load flags of a program (object programs: set before bpfrt_object_load,
 * like libbpf's bpf_program__set_flags). Returns 0 or -errno (-EBUSY once
 * loaded, -EINVAL for unknown or contradicting flags). */
int bpfrt_prog_set_flags(struct bpfrt_prog *prog, uint32_t flags);
uint32_t bpfrt_prog_flags(const struct bpfrt_prog *prog);

/* Private stack of a program. A run that touches a guard page is aborted
 * (bpfrt_prog_run returns -EFAULT naming the program and its stack size;
 * attached runs count an abort) and the program is marked faulted. */
struct bpfrt_privstack_info {
	bool enabled;           /* runs use a private stack */
	bool faulted;           /* some run hit a guard page */
	uint32_t stack_size;    /* bytes of frames per thread (the deepest chain) */
	uint32_t thread_cnt;    /* threads that hold a stack of this program now */
	uint64_t faults;        /* runs aborted on a guard page */
};
int bpfrt_prog_privstack_info(const struct bpfrt_prog *prog, struct bpfrt_privstack_info *info);

/* Process-wide private-stack counters. */
struct bpfrt_privstack_stats {
	uint64_t live;          /* stacks mapped now */
	uint64_t bytes_mapped;  /* their mappings, guard pages included */
	uint64_t allocs, frees; /* since start */
	uint64_t threads;       /* threads holding at least one stack (any kind) */
	uint64_t nest_stacks;   /* stacks of nesting levels (JIT runs nested without
				 * a private stack) mapped now, all threads */
	uint64_t nest_bytes;    /* their mappings, guard pages included */
};
void bpfrt_privstack_stats(struct bpfrt_privstack_stats *stats);

/* Nested execution. bpfrt_nest_kfunc_register() registers (once) the
 * kfunc `__u64 bpfrt_run_children(__u64 list, __u64 arg)`, which runs
 * every program of child list `list` with r1 = arg (nested runs, on the
 * stacks bpfrt_prog_run describes, the recursion guard refusing a program
 * already running on the thread) and returns the sum of their results; it
 * returns the kfunc id or -errno. Call it before loading programs that use
 * it. bpfrt_nest_set_children() publishes a list (cnt 0 empties it); not
 * from inside a run (it waits for runs using the old list).
 * arg is a number, not a context: children get no context, so a verified
 * child must read none (bpfrt_prog_ctx_access() 0, counting what its
 * tail-call targets and host kfuncs given r1 may read); others are
 * refused with -EINVAL naming them. Unverified children are trusted. */
#define BPFRT_NEST_MAX_LISTS 256
int bpfrt_nest_kfunc_register(void);
int bpfrt_nest_set_children(uint32_t list, struct bpfrt_prog *const *progs, uint32_t cnt);

/* Writes the native code, disassembled, with the BPF instruction each part
 * came from. */
int bpfrt_prog_dump_jited(const struct bpfrt_prog *prog, FILE *out);
/* Writes the BPF instructions, disassembled. */
int bpfrt_prog_dump_xlated(const struct bpfrt_prog *prog, FILE *out);

/* ---- helpers ----------------------------------------------------------- */
typedef uint64_t (*bpfrt_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3,
				    uint64_t r4, uint64_t r5);

/* Argument and return kinds, as the verifier will need them. */
enum bpfrt_arg_type {
	BPFRT_ARG_NONE = 0,      /* argument unused */
	BPFRT_ARG_ANYTHING,      /* any scalar; a pointer only with BPFRT_F_ALLOW_PTR_LEAKS
				  * (the helper may then touch a stack pointer's whole frame) */
	BPFRT_ARG_PTR_TO_CTX,
	BPFRT_ARG_PTR_TO_MEM,    /* followed by a BPFRT_ARG_CONST_SIZE */
	BPFRT_ARG_PTR_TO_UNINIT_MEM,
	BPFRT_ARG_CONST_SIZE,
	BPFRT_ARG_CONST_SIZE_OR_ZERO,
	BPFRT_ARG_CONST_MAP_PTR,
	BPFRT_ARG_PTR_TO_MAP_KEY,
	BPFRT_ARG_PTR_TO_MAP_VALUE,
	BPFRT_ARG_PTR_TO_FUNC,
	BPFRT_ARG_PTR_TO_STACK_OR_NULL, /* a callback's context (bpf_loop); for a helper
					 * without a callback argument before it, the
					 * helper may touch the whole frame */
	BPFRT_ARG_PTR_TO_RINGBUF_MEM,
	BPFRT_ARG_PTR_TO_LONG,   /* 8 writable bytes (an output u64) */
	BPFRT_ARG_PTR_TO_CONST_STR, /* NUL-terminated string in a read-only map */
};

enum bpfrt_ret_type {
	BPFRT_RET_INTEGER = 0,
	BPFRT_RET_VOID,
	BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL,
	BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL,
};

struct bpfrt_helper {
	const char *name;
	bpfrt_helper_fn fn;
	enum bpfrt_ret_type ret;
	enum bpfrt_arg_type args[5];
};

/* Registers (or replaces) helper `id`. Programs validate calls against the
 * registry at load; JIT code binds the function it saw at load. */
int bpfrt_helper_register(uint32_t id, const struct bpfrt_helper *helper);
int bpfrt_helper_unregister(uint32_t id);
const struct bpfrt_helper *bpfrt_helper_get(uint32_t id);

/* Host kfuncs: named C functions that BPF code declares as
 * `extern ... __ksym` and calls; the loader resolves them by name. Returns
 * the id (>= BPFRT_KFUNC_ID_BASE) the calls are bound to, or -errno. */
int bpfrt_kfunc_register(const char *name, const struct bpfrt_helper *proto);
/* Id of the kfunc registered under name, or -ENOENT. */
int bpfrt_kfunc_id(const char *name);

/* Linux's helpers (map_lookup_elem ... loop, under their Linux ids) are
 * registered on the first program load, each only where its id is still
 * free: an embedder's own helper under a Linux id wins, and registering
 * one later replaces the default. Idempotent; call it to make the defaults
 * visible to bpfrt_helper_get() before any load. */
void bpfrt_helpers_init(void);

/* ---- trace buffer (bpf_trace_printk) ----------------------------------- */
/* trace_printk lines go to a bounded in-process ring (the oldest line is
 * dropped when full) laid out like the kernel's trace_pipe:
 *   "  comm-tid  [cpu] ..... sec.usec: bpf_trace_printk: message\n"
 * Reading consumes lines. */

/* Copies as many whole pending lines as fit into buf, NUL-terminated.
 * Returns the bytes copied (0: nothing pending), or -ENOSPC if even the
 * next line does not fit. */
int bpfrt_trace_read(char *buf, size_t len);
/* Calls fn for every pending line (len excludes the NUL); a negative
 * return stops and is returned. Returns the number of lines. */
typedef int (*bpfrt_trace_line_fn)(void *ctx, const char *line, size_t len);
int bpfrt_trace_drain(bpfrt_trace_line_fn fn, void *ctx);
/* Writes every pending line to out (the CLI's trace-pipe). Returns the
 * number of lines or -errno. */
int bpfrt_trace_pipe(FILE *out);
/* Lines lost to a full buffer since the last clear. */
uint64_t bpfrt_trace_dropped(void);
/* Discards pending lines and the dropped count. */
void bpfrt_trace_clear(void);

/* ---- text assembly ----------------------------------------------------- */
/* Assembles the bpf_conformance syntax ("mov %r0, 1", labels, "call local
 * f", "lock xchg [%r10-8], %r1"...). Returns 0 with a malloc'd array in
 * *insns (caller frees), or -EINVAL with a message naming the line. */
int bpfrt_asm(const char *text, struct bpf_insn **insns, size_t *insn_cnt);
/* Disassembles one instruction (two for lddw) into buf. Returns the number
 * of instruction slots consumed (1 or 2), or -EINVAL. Jumps and local calls
 * are printed with numeric offsets ("ja +3", "call local +4" as "call -1"
 * is never ambiguous). */
int bpfrt_disasm_insn(const struct bpf_insn *insns, size_t remaining,
		      char *buf, size_t buf_len);
/* Disassembles a whole program, one instruction per line. */
int bpfrt_disasm(const struct bpf_insn *insns, size_t insn_cnt, FILE *out);

/* ---- executable memory ------------------------------------------------ */
/* JIT images are packed into 2 MiB packs of 64-byte chunks (the userspace
 * bpf_prog_pack); larger images, or all images with packing off, get a
 * mapping of their own. Code pages are never writable and executable. */
#define BPFRT_EXECMEM_PACK_SIZE  (2u << 20)
#define BPFRT_EXECMEM_CHUNK_SIZE 64u
#define BPFRT_EXECMEM_STATS_PACKS 64

enum bpfrt_execmem_backing {
	BPFRT_EXECMEM_BACKING_4K = 0,    /* ordinary pages */
	BPFRT_EXECMEM_BACKING_THP_SHMEM, /* memfd with shmem transparent huge pages (requested) */
	BPFRT_EXECMEM_BACKING_HUGETLB,   /* memfd from reserved hugetlb pages */
	BPFRT_EXECMEM_BACKING_THP_ANON,  /* private anonymous memory, one PMD-mapped transparent
					  * huge page (checked), written through /proc/self/mem */
	BPFRT_EXECMEM_BACKING_CNT,
};

struct bpfrt_execmem_pack_stats {
	uint64_t addr;                   /* executable address of the pack */
	uint32_t backing;                /* enum bpfrt_execmem_backing */
	uint32_t chunks_used;            /* of PACK_SIZE / CHUNK_SIZE */
};

struct bpfrt_execmem_stats {
	bool packing;                    /* new images go into packs */
	uint32_t pack_cnt;               /* packs mapped, the spare included */
	uint32_t spare_cnt;              /* empty pack kept for reuse (0 or 1) */
	uint32_t packs_by_backing[BPFRT_EXECMEM_BACKING_CNT];
	uint32_t own_cnt;                /* images in a mapping of their own */
	uint64_t image_cnt;              /* live images, packed or not */
	uint64_t bytes_used;             /* chunk-rounded bytes in packs + own mappings */
	uint64_t bytes_mapped;           /* executable bytes mapped (packs + own) */
	uint32_t pack_info_cnt;          /* packs[] entries filled (first packs) */
	struct bpfrt_execmem_pack_stats packs[BPFRT_EXECMEM_STATS_PACKS];
};

/* Snapshot of the executable-memory allocator. Returns 0 or -EINVAL. */
int bpfrt_execmem_stats(struct bpfrt_execmem_stats *stats);
/* Returns the spare empty pack (kept so that a load/unload loop does not
 * map and fill 2 MiB each time) to the system. */
void bpfrt_execmem_trim(void);
/* Writes the stats as text, one line per pack with its backing (for the
 * CLI and benchmarks). Returns 0 or -errno. */
int bpfrt_execmem_dump(FILE *out);
/* "4k", "thp-shmem", "hugetlb" or "thp-anon". */
const char *bpfrt_execmem_backing_name(uint32_t backing);
/* Turns packing on or off for images allocated from now on (default on;
 * the environment variable BPFRT_NO_PACK=1 starts it off). */
void bpfrt_execmem_set_packing(bool on);
bool bpfrt_execmem_packing(void);

#ifdef __cplusplus
}
#endif
#endif
