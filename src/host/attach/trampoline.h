/* fentry / fexit / fmod_ret trampolines and fentry.multi.
 *
 * Host functions are found by patchable.c: every function of the
 * executable or a loaded library whose entry is a 5-byte nop recorded in
 * __patchable_function_entries (clang -fpatchable-function-entry=5[,M]) or
 * __mcount_loc (gcc -pg -mfentry -mnop-mcount -mrecord-mcount); M bytes of
 * padding before the entry (M >= 4) let fentry.multi keep the function's
 * metadata index there. See mk/bpfrt-host.mk for the flags.
 *
 * Every patched function has a permanent struct bpfrt_tramp_func (its
 * program arrays, RCU-published) and, once a per-function kind attaches, a
 * permanent trampoline in JIT memory (the fentry STUB, or the CLASSIC
 * trampoline for fexit/fmod_ret). Both are kept for the life of the process
 * and reused by later attaches: a thread may sit in a trampoline for as
 * long as it likes (preempted in its first instruction, or inside the
 * original function called from an fexit trampoline), so no grace period
 * could prove one unused. What attach and detach change (programs, program
 * arrays, the fentry IMAGEs, which are only entered inside an RCU read
 * section) is freed after RCU grace periods. The entry goes back to its
 * nop5 when the function's last program leaves. */
#ifndef BPFRT_ATTACH_TRAMPOLINE_H
#define BPFRT_ATTACH_TRAMPOLINE_H

#include "attach/link.h"
#include "attach/run.h"
#include "attach/text_poke.h"
#include "jit/trampoline_backend.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- patchable functions (patchable.c) --------------------------------- */
struct bpfrt_sym_module;

struct bpfrt_patchable_func {
	uintptr_t entry;        /* first byte of the 5-byte nop */
	uint32_t pad;           /* bytes of padding right before entry (0: none) */
	bool nops1;             /* gcc's five 1-byte nops: cannot be patched live */
	const char *name;
	const char *module;     /* file it comes from */
	const struct bpfrt_sym_module *mod; /* its module in the symbol table */
	/* patchable.c: the others of the same name (static functions) */
	struct bpfrt_patchable_func *same_name;
};

/* Scans the executable and loaded libraries (again when libraries were
 * loaded since the last scan). Returns 0 or -errno. */
int bpfrt_patchable_scan(void);
/* The function called name, or LIB:NAME (the module as sym/symbols.h
 * names it), or NULL (bpfrt_last_error() says why). */
const struct bpfrt_patchable_func *bpfrt_patchable_lookup(const char *name);
/* Calls fn for every patchable function whose name matches glob
 * (fnmatch); a negative return stops. Returns the count or -errno. */
int bpfrt_patchable_foreach(const char *glob,
			    int (*fn)(void *ctx, const struct bpfrt_patchable_func *f),
			    void *ctx);
/* Number of patchable functions found. */
size_t bpfrt_patchable_count(void);

/* ---- trampoline code ------------------------------------------------------ */
/* The frame, the kinds of trampoline code and their description are the
 * JIT backend's interface (jit/trampoline_backend.h); the host fills a
 * struct bpfrt_tramp_desc and bpfrt_tramp_build() has the backend write
 * the code. A trampoline kept per function is the CLASSIC one (fexit,
 * fmod_ret) or the fentry STUB; IMAGEs are rebuilt on attach and detach
 * and freed after a grace period: every thread running an IMAGE entered
 * it inside the stub's read section, so the grace period proves it unused
 * (the stub, which runs outside the section, is never freed). */

/* Where the run-path state of this process is, for generated code. */
const struct bpfrt_tramp_layout *bpfrt_tramp_layout(void);

/* multi.c's address hash (open addressing, linear probing, load <= 1/2),
 * probed inline by the global trampolines: slot (ip * MUL) >> shift, then
 * the next ones (& mask) until ip or an empty slot (ip 0). */
#define BPFRT_MD_HASH_MUL 0x9e3779b97f4a7c15ull
struct bpfrt_md_slot {
	_Atomic uintptr_t ip;
	struct bpfrt_tramp_func *tf;
};
struct bpfrt_md_hash {
	uint32_t shift;          /* 64 - log2(size) */
	uint32_t cnt;
	uint32_t mask;           /* size - 1 */
	struct bpfrt_md_slot slots[];
};

struct tramp_block;

/* The run-time state of one patched function. Permanent (see above). */
struct bpfrt_tramp_func {
	uintptr_t ip;
	const struct bpfrt_patchable_func *pf;
	uint32_t nr_args;       /* from the first attach (bpfrt_tramp_nr_args) */
	uint32_t pad_idx;       /* index stored in the padding (+1; 0: none) */
	struct bpfrt_prog_array *_Atomic fentry;
	struct bpfrt_prog_array *_Atomic fexit;
	struct bpfrt_prog_array *_Atomic fmod_ret;
	struct bpfrt_prog_array *_Atomic multi;
	uintptr_t image;        /* per-function CLASSIC trampoline, once built */
	uintptr_t stub;         /* fentry fast path: the STUB, once built */
	uint32_t stub_tail;     /* offsets of the stub's tail, slot, C path */
	uint32_t stub_slot, stub_c_path;
	_Atomic uintptr_t fast_image;   /* the IMAGE in the stub's slot (0: C path) */
	struct tramp_block *fast_block; /* its memory */
	/* the arrays the IMAGE was compiled from */
	const struct bpfrt_prog_array *fast_fentry, *fast_multi;
	bool pad_written;       /* pad_idx is in the padding */
	uintptr_t target;       /* what the entry calls now (0: nop5) */
	uint32_t prog_cnt;      /* programs attached, all kinds */
};

/* nr_args: bpfrt_attach_opts.nr_args, 0 = the count the function's debug
 * info gives (bpfrt_tramp_nr_args). */
int bpfrt_trampoline_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
				 const char *target, uint64_t cookie, uint32_t nr_args,
				 struct bpfrt_link **link);
int bpfrt_multi_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			    const char *target, uint64_t cookie, uint32_t nr_args,
			    struct bpfrt_link **link);

/* ---- shared by trampoline.c and multi.c ---------------------------------- */
/* The integer argument registers of pf for a kind's attach: its debug
 * info's count (asked, the user's nr_args, must then agree: else -EINVAL),
 * or asked where the debug info has none or cannot tell; without either,
 * an error naming the function, unless !required, which gives 0 (unknown:
 * fentry.multi, whose programs read no return value, then takes the
 * user's count or 6). 0 and *nr_args, or -errno with a message starting
 * "KIND: ". */
int bpfrt_tramp_nr_args(const char *kind, const struct bpfrt_patchable_func *pf,
			uint32_t asked, bool required, uint32_t *nr_args);
/* Under bpfrt_tramp_lock: the function's state, created on first use. */
struct bpfrt_tramp_func *bpfrt_tramp_func_get(const struct bpfrt_patchable_func *pf,
					      uint32_t nr_args);
/* Where entry should call now given its programs (0: nothing, nop5). */
uintptr_t bpfrt_tramp_func_target(struct bpfrt_tramp_func *tf);
/* Fills pokes[] (room for 2) with what makes tf's entry call the target
 * its programs need now (and writes its padding index first if that target
 * reads it); records the new target. Returns the poke count or -errno. */
int bpfrt_tramp_func_pokes(struct bpfrt_tramp_func *tf, struct bpfrt_poke *pokes);
/* multi.c: the global trampolines, the padding index and the address hash. */
int bpfrt_multi_register_func(struct bpfrt_tramp_func *tf);
uintptr_t bpfrt_multi_global_tramp(const struct bpfrt_tramp_func *tf);
bool bpfrt_multi_uses_pad(const struct bpfrt_tramp_func *tf);
/* Tests and benches: use the hash even for functions with padding (set
 * before the functions' first attach). */
extern bool bpfrt_multi_force_hash;
struct bpfrt_tramp_func *bpfrt_multi_lookup_hash(uintptr_t ip);
extern pthread_mutex_t bpfrt_tramp_lock;
/* Builds a trampoline in JIT memory within rel32 reach of near; returns
 * its address or 0 (error set). Under bpfrt_tramp_lock. */
uintptr_t bpfrt_tramp_build(const struct bpfrt_tramp_desc *d, uintptr_t near);

uint64_t bpfrt_tramp_enter(struct bpfrt_tramp_frame *frame, void *md);
void bpfrt_tramp_exit(struct bpfrt_tramp_frame *frame, void *md);
/* Fast path, out of line (the stub and images call them). */
uint64_t bpfrt_tramp_stub_run(struct bpfrt_tramp_frame *frame, void *md);
void bpfrt_tramp_run_item(struct bpfrt_tramp_frame *frame, void *md,
			  struct bpfrt_prog *prog, uint64_t cookie);
/* True if prog's image may be called inline (struct bpfrt_tramp_item). */
bool bpfrt_tramp_prog_inlinable(const struct bpfrt_prog *prog);

/* Offset of an initial-exec TLS variable from the thread pointer: the same
 * in every thread, for generated fs-relative accesses. */
int32_t bpfrt_tramp_tls_offset(const void *var);

#endif
