/* The loaded-program object every module shares. Data flows one way:
 * validator fills subprogs/stack facts, a backend fills the jit fields,
 * the interpreter and JIT code only read. */
#ifndef BPFRT_PROG_H
#define BPFRT_PROG_H

#include "bpfrt/bpfrt.h"
#include "core/prog_kind.h"

struct bpfrt_env;
struct bpfrt_execmem;
struct bpfrt_object;
struct bpfrt_map;
struct btf;
struct bpfrt_extable;

/* A map or global-data reference the loader resolved into an lddw
 * immediate (kept for the verifier and for listings). */
struct bpfrt_map_ref {
	uint32_t insn;          /* index of the lddw */
	uint8_t kind;           /* BPF_PSEUDO_MAP_FD or BPF_PSEUDO_MAP_VALUE */
	struct bpfrt_map *map;
	uint32_t off;           /* value offset for BPF_PSEUDO_MAP_VALUE */
};

/* A source line of the program (the object's BTF line info, as the
 * loader linked it): from insn on, until the next record. Strings are the
 * program's (lines_pool). */
struct bpfrt_line_info {
	uint32_t insn;
	uint32_t line, col;
	const char *file;       /* as the compiler wrote it (a path) */
	const char *src;        /* the line's text */
};

struct bpfrt_subprog {
	uint32_t start;        /* first instruction */
	uint32_t end;          /* one past the last instruction */
	uint32_t stack_depth;  /* own frame, bytes, multiple of 8 (<= 512) */
	uint32_t chain_depth;  /* own frame plus the deepest chain of callees */
	uint32_t call_depth;   /* frames in the deepest chain starting here (1 = leaf) */
};

/* Native entry: r1, r2 in, r0 out. */
typedef uint64_t (*bpfrt_jit_fn)(uint64_t r1, uint64_t r2);

/* A user (prog array slot, link, nest list) keeps prog alive across
 * bpfrt_prog_free; the last release after bpfrt_prog_free frees it. */
void bpfrt_prog_hold(struct bpfrt_prog *prog);
void bpfrt_prog_release(struct bpfrt_prog *prog);
/* loader/object.c: a program of obj is gone (its memory freed). Each
 * program of an object holds the object's maps alive (they are freed
 * with the object, once bpfrt_object_close was called and its last
 * program is gone): a program in another object's prog array slot or
 * attached outlives bpfrt_object_close and still uses its maps. */
void bpfrt_object_prog_gone(struct bpfrt_object *obj);

struct bpfrt_prog {
	char name[BPFRT_NAME_LEN];
	struct bpf_insn *insns;
	uint32_t insn_cnt;

	/* The environment it was loaded in (held), and the snapshot of the
	 * helpers and kfuncs its instructions call, taken from it at load
	 * (core/env.h): helper_cnt entries indexed by id, NULL fn = not
	 * registered at load. Every engine calls through this copy only. */
	struct bpfrt_env *env;
	struct bpfrt_helper *helpers;
	uint32_t helper_cnt;

	/* Filled by the validator; subprogs[0] is the main program. */
	struct bpfrt_subprog *subprogs;
	uint32_t subprog_cnt;
	uint32_t stack_depth;  /* subprogs[0].chain_depth: deepest call chain total */
	uint32_t *insn_subprog; /* insn index -> subprog index */

	/* Set by the object loader (NULL/0 for programs loaded from bytes). */
	struct bpfrt_object *obj;
	char *sec_name;
	char *attach_target;
	int kind;               /* enum bpfrt_prog_kind */
	uint8_t kind_variant;   /* enum bpfrt_kind_variant: the SEC() name's attach type */
	uint8_t sec_flags;      /* BPFRT_SEC_* of the SEC() name (sleepable, ...) */
	bool autoload;          /* object programs: loaded by bpfrt_object_load ('?': false) */
	/* the kind's context only a kernel builds: runs refused (set at load) */
	bool kernel_only;
	/* CO-RE relocations the loader could not resolve: the instructions
	 * it poisoned (BPFRT_CORE_POISON) and why, for the verifier's message
	 * if a path reaches one */
	struct bpfrt_core_poison *core_poisons;
	uint32_t core_poison_cnt;
	/* the target BTF of typed arguments the loader found (the object's
	 * btf_custom_path; borrowed, cleared when the object closes), else
	 * NULL: the verifier asks the host (verifier/btf_access.c) */
	const struct btf *attach_btf;
	struct bpfrt_map_ref *map_refs;
	uint32_t map_ref_cnt;
	/* line info sorted by insn, NULL/0 without BTF; pool holds the text */
	struct bpfrt_line_info *lines;
	uint32_t line_cnt;
	char *lines_pool;

	/* The load is complete (bpfrt_prog_set_loaded, release; cleared
	 * first by unprepare): before, verified and the context reach are not
	 * final, and runs, attach and prog array slots refuse the program. A
	 * program of an object is set only once every program of the object
	 * is prepared: a failing load strips them all, and none may have been
	 * slotted, attached or run in the meantime. */
	bool loaded;
	/* Lifetime: 2 per user (prog array slot, link, nest list) plus bit 0
	 * once bpfrt_prog_free was called; the memory goes when both say so. */
	uint32_t users;
	bool verified;
	uint32_t max_ctx_access; /* context bytes it reads, or a tail-call target may */
	uint32_t ctx_size;       /* context bytes r1 was verified as */

	/* Filled by the JIT backend. */
	bpfrt_jit_fn jit_func;
	struct bpfrt_execmem *jit_mem;
	size_t jit_len;
	uint32_t *jit_insn_off; /* insn index -> byte offset in the image (insn_cnt+1 entries) */
	struct bpfrt_extable *jit_extable; /* its fault-safe loads (core/extable.h), or NULL */

	/* attach/run.c: attached runs skipped by the recursion guard, and
	 * attached runs that aborted. */
	_Atomic uint64_t attach_misses;
	_Atomic uint64_t attach_aborts;

	/* Load flags, and the private stack when used: set by the host's
	 * stack functions (core/stack_abi.h; stack/privstack.c), read by
	 * the JIT and the interpreter. */
	uint32_t load_flags;          /* BPFRT_F_* */
	bool privstack;               /* JIT code and interpreter runs use one */
	bool privstack_has_id;
	uint32_t privstack_id;        /* slot in bpfrt_privstack_slots[] */
	uint32_t privstack_size;      /* usable bytes per thread */
	uintptr_t privstack_abort;    /* JIT: abort stub that unwinds a fault */
	struct bpfrt_privstack *privstack_list; /* one per thread, under its lock */
	uint32_t privstack_threads;
	_Atomic uint64_t privstack_faults;

	/* Kept last: the JIT's generated code reaches the fields above by
	 * offset (its stored image digests with them). */
	/* the object's own BTF (borrowed, cleared with attach_btf), which
	 * names the kernel structs kernel kfuncs take and return
	 * (verifier/kfuncs_kernel.c); NULL for programs loaded from bytes */
	const struct btf *obj_btf;
	/* byte-offset relocations of kernel structs no target BTF describes,
	 * resolved to the program's own layout: the verifier lets only an
	 * access through a pointer typed from that same BTF use one
	 * (verifier/btf_access.c), and refuses the others with msg */
	struct bpfrt_core_poison *core_guards;
	uint32_t core_guard_cnt;
};

/* libbpf's poison for an unresolvable CO-RE relocation: `call 0xbad2310`
 * ("bad relo"); the validator lets it stand, the verifier refuses it on
 * any path that reaches it, and a verified program has it replaced by a
 * no-op (it is dead code). */
#define BPFRT_CORE_POISON 0xbad2310

struct bpfrt_core_poison {
	uint32_t insn;
	char *msg;
};

int bpfrt_prog_add_core_poison(struct bpfrt_prog *prog, uint32_t insn, const char *msg);
void bpfrt_prog_clear_core_poisons(struct bpfrt_prog *prog);
/* The message of the poisoned instruction at insn, NULL if none. */
const char *bpfrt_prog_core_poison(const struct bpfrt_prog *prog, uint32_t insn);
/* The same for core_guards. */
int bpfrt_prog_add_core_guard(struct bpfrt_prog *prog, uint32_t insn, const char *msg);
const char *bpfrt_prog_core_guard(const struct bpfrt_prog *prog, uint32_t insn);

/* What one bpfrt_prog_prepare call does (arguments of that call only). */
struct bpfrt_prepare {
	bool jit;                         /* JIT-compile */
	/* Verify (src/engine/verifier/verifier.c) with these options: it then
	 * records verified, the context bytes read and tighter frames. NULL:
	 * the structural validator only (trusted). */
	struct bpfrt_verify_opts *verify;
	/* Environment to load in, for a program that has none yet (the
	 * program holds it); NULL: the default. */
	struct bpfrt_env *env;
};

/* Validates and optionally verifies and JIT-compiles insns into an
 * allocated, named program (the second half of bpfrt_prog_load) and marks
 * it loaded. how NULL: validator only, no JIT, default environment. On
 * failure the program keeps no instructions. */
int bpfrt_prog_prepare(struct bpfrt_prog *prog, const struct bpf_insn *insns,
		       size_t insn_cnt, const struct bpfrt_prepare *how);
/* The same without marking it loaded: runs, attach and slots refuse it
 * until bpfrt_prog_set_loaded (the object loader: once every program of
 * the object is prepared). */
int bpfrt_prog_prepare_unpublished(struct bpfrt_prog *prog, const struct bpf_insn *insns,
				   size_t insn_cnt, const struct bpfrt_prepare *how);
void bpfrt_prog_set_loaded(struct bpfrt_prog *prog);
/* Frees what bpfrt_prog_prepare made, leaving name and object fields. */
void bpfrt_prog_unprepare(struct bpfrt_prog *prog);

/* Attach points call this with the context size they provide: a verified
 * program that reads further (its max_ctx_access, checked by the verifier
 * against the largest context of its kind) is refused, -EINVAL naming
 * both sizes. Unverified (trusted) programs pass. */
int bpfrt_prog_check_ctx(const struct bpfrt_prog *prog, uint32_t ctx_size, const char *target);

/* Attach points call this with the kind of hook they are: a verified
 * program runs only at hooks of its verified kind's context (an override
 * to another kind would hand it a context it was not verified for:
 * -EINVAL naming the program, both kinds and the target). Unverified
 * (trusted) programs pass. */
int bpfrt_prog_check_kind(const struct bpfrt_prog *prog, int kind, const char *target);
/* Entry of helper or kfunc id in the program's snapshot, NULL if the
 * program had no such helper registered at load. */
static inline const struct bpfrt_helper *bpfrt_prog_helper(const struct bpfrt_prog *prog,
							   uint32_t id)
{
	return id < prog->helper_cnt && prog->helpers[id].fn ? &prog->helpers[id] : NULL;
}

/* ld_abs_rewrite.c: each legacy packet load (BPF_LD | BPF_ABS / BPF_IND)
 * of a validated (and verified) program replaced by a call of an internal
 * helper, everything counting instructions moved with it; 0 or -errno. */
int bpfrt_prog_rewrite_ld_abs(struct bpfrt_prog *prog);

/* Finds the subprogram that starts at insn `start`, or -1. */
int bpfrt_prog_subprog_at(const struct bpfrt_prog *prog, uint32_t start);

#endif
