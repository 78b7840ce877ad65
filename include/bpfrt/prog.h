/* Programs: loading BPF instructions, running them, what is known about
 * a loaded program.
 *
 * Ownership: bpfrt_prog_load gives the caller a program it gives up with
 * bpfrt_prog_free. Programs of an object (bpfrt/object.h) are the object's:
 * bpfrt_object_close frees them; never bpfrt_prog_free those. Every use
 * (a prog array slot, a link, a nest list) keeps a program alive past its
 * owner's free, as Linux's references do. The program keeps its own copy
 * of the instructions; strings and arrays returned by the accessors belong
 * to the program and live as long as it does.
 *
 * Thread safety: a loaded program may be run (bpfrt_prog_run,
 * bpfrt_prog_test_run_opts, attach points) by any number of threads at
 * once, and the accessors read it from any thread. Loading, setting flags
 * and freeing one program are not synchronised with other calls on that
 * same program. */
#ifndef BPFRT_PUBLIC_PROG_H
#define BPFRT_PUBLIC_PROG_H

#include "bpfrt/export.h"

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfrt/error.h"
#include "bpfrt/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BPFRT_MAX_INSNS        1000000 /* same limit as Linux's processed-insn cap */
#define BPFRT_MAX_CALL_FRAMES  8
#define BPFRT_STACK_PER_FRAME  512
#define BPFRT_NAME_LEN         64      /* program and map names, NUL included */

struct bpfrt_prog;
struct bpfrt_env;

/* What a program's SEC() name says it attaches to: the context r1 points
 * to (bpfrt/attach.h describes each). */
enum bpfrt_prog_kind {
	BPFRT_PROG_UNSPEC = 0,
	BPFRT_PROG_TRACEPOINT,     /* tp/CATEGORY/NAME, tracepoint/... */
	BPFRT_PROG_RAW_TRACEPOINT, /* raw_tp/NAME, raw_tracepoint/... */
	BPFRT_PROG_FENTRY,         /* fentry/FUNC */
	BPFRT_PROG_FEXIT,          /* fexit/FUNC */
	BPFRT_PROG_FMOD_RET,       /* fmod_ret/FUNC */
	BPFRT_PROG_FENTRY_MULTI,   /* fentry.multi/GLOB */
	BPFRT_PROG_KPROBE,         /* kprobe/FUNC[+OFF] */
	BPFRT_PROG_KRETPROBE,      /* kretprobe/FUNC */
	BPFRT_PROG_UPROBE,         /* uprobe/..., uretprobe/... */
	BPFRT_PROG_SOCKET,         /* socket */
	BPFRT_PROG_XDP,            /* xdp */
	BPFRT_PROG_SYSCALL,        /* syscall */
	/* Kinds below run here through test runs but attach nowhere in this
	 * process (their hooks are other processes' or the kernel's). */
	BPFRT_PROG_KPROBE_MULTI,   /* kprobe.multi/GLOB, kretprobe.multi/, kprobe.session/ */
	BPFRT_PROG_UPROBE_MULTI,   /* uprobe.multi/PATH:GLOB, uretprobe.multi/, uprobe.session/ */
	BPFRT_PROG_USDT,           /* usdt/PATH:PROVIDER:NAME */
	BPFRT_PROG_KSYSCALL,       /* ksyscall/NAME, kretsyscall/NAME */
	BPFRT_PROG_PERF_EVENT,     /* perf_event: struct bpf_perf_event_data */
	/* Kinds whose context only a kernel makes: they load and verify with
	 * the kernel's context rules; runs and attach are refused, naming the
	 * kind (bpfrt_prog_kind_info()->runs is false). */
	BPFRT_PROG_SCHED_CLS,      /* tc, tcx/ingress, classifier, netkit/...: __sk_buff */
	BPFRT_PROG_SCHED_ACT,      /* action: __sk_buff */
	BPFRT_PROG_CGROUP_SKB,     /* cgroup_skb/ingress, cgroup_skb/egress, cgroup/skb */
	BPFRT_PROG_CGROUP_SOCK,    /* cgroup/sock_create, ..., cgroup/post_bind4: bpf_sock */
	BPFRT_PROG_CGROUP_SOCK_ADDR, /* cgroup/bind4, connect6, sendmsg4, ...: bpf_sock_addr */
	BPFRT_PROG_CGROUP_SYSCTL,  /* cgroup/sysctl: bpf_sysctl */
	BPFRT_PROG_CGROUP_SOCKOPT, /* cgroup/getsockopt, cgroup/setsockopt: bpf_sockopt */
	BPFRT_PROG_CGROUP_DEVICE,  /* cgroup/dev: bpf_cgroup_dev_ctx */
	BPFRT_PROG_SOCK_OPS,       /* sockops: bpf_sock_ops */
	BPFRT_PROG_SK_SKB,         /* sk_skb, sk_skb/stream_parser, ...: __sk_buff */
	BPFRT_PROG_SK_MSG,         /* sk_msg: sk_msg_md */
	BPFRT_PROG_SK_LOOKUP,      /* sk_lookup: bpf_sk_lookup */
	BPFRT_PROG_SK_REUSEPORT,   /* sk_reuseport, sk_reuseport/migrate: sk_reuseport_md */
	BPFRT_PROG_FLOW_DISSECTOR, /* flow_dissector: __sk_buff */
	BPFRT_PROG_LWT,            /* lwt_in, lwt_out, lwt_xmit, lwt_seg6local: __sk_buff */
	BPFRT_PROG_LIRC_MODE2,     /* lirc_mode2: one u32 sample */
	BPFRT_PROG_LSM,            /* lsm/HOOK, lsm.s/HOOK, lsm_cgroup/HOOK: the hook's u64 args */
	BPFRT_PROG_ITER,           /* iter/NAME, iter.s/NAME: struct bpf_iter__NAME */
	BPFRT_PROG_STRUCT_OPS,     /* struct_ops/NAME: the operation's u64 args */
	BPFRT_PROG_NETFILTER,      /* netfilter: struct bpf_nf_ctx */
	BPFRT_PROG_FEXIT_MULTI,    /* fexit.multi/GLOB, fsession.multi/GLOB */
	BPFRT_PROG_FSESSION,       /* fsession/FUNC */
	BPFRT_PROG_EXT,            /* freplace/FUNC: refused at load (a kernel program's function) */
};

/* What a program kind is, from the one table the loader, verifier,
 * private stacks, test runs and attach read. */
struct bpfrt_prog_kind_info {
	/* as links, the CLI and test runs name it: "tracepoint",
	 * "raw_tracepoint", "fentry", "fentry.multi", "kprobe", "xdp", ... */
	const char *name;
	/* a host hook fires it (tracepoints, trampolines, probes): its
	 * context is the hook's arguments or registers, read-only; private
	 * stacks by default for more than 64 bytes of stack */
	bool tracing;
	bool packet;        /* test runs take a packet (data_in): xdp, socket */
	bool ctx_writable;  /* the context is the caller's memory, written back (ctx_out) */
	bool attachable;    /* bpfrt_prog_attach attaches it in this process */
	/* bpfrt runs it (bpfrt_prog_run, test runs); false for the kinds
	 * whose context only a kernel builds: they load and verify, and a
	 * run is refused (-EOPNOTSUPP) naming the kind */
	bool runs;
	const char *ctx_type; /* the context r1 points to: "struct __sk_buff", ... */
};

/* The description of kind (static, never freed; any thread), NULL for a
 * value that is no kind. */
BPFRT_API const struct bpfrt_prog_kind_info *bpfrt_prog_kind_info(enum bpfrt_prog_kind kind);

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
	enum bpfrt_prog_kind kind; /* context r1 points to */
	uint32_t ctx_size;      /* BPFRT_PROG_UNSPEC/SYSCALL: bytes at r1, read-write */
	char *log_buf;          /* verifier log (NUL-terminated, keeps the tail) */
	size_t log_size;
	uint32_t log_level;     /* 0: message only, 1: insns on the failing path, 2: + states */
	uint32_t flags;         /* BPFRT_F_* load flags below */
	/* Helpers, kfuncs and limits (bpfrt/env.h); NULL: the default. The
	 * program holds the environment until it is freed. */
	struct bpfrt_env *env;
};
#define bpfrt_prog_load_opts__last_field env

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
BPFRT_API int bpfrt_prog_load(const struct bpf_insn *insns, size_t insn_cnt,
			      const struct bpfrt_prog_load_opts *opts,
			      struct bpfrt_prog **prog);
/* Gives the caller's program up. Like Linux's references, every use keeps
 * it alive: a prog array slot holding it, a link attaching it, a nest
 * list (bpfrt_nest_set_children) naming it. The memory goes when the
 * last of them lets it go (the slot is overwritten or deleted or its map
 * freed, the link destroyed, the list replaced); until then the program
 * still runs through them. After this call the caller must not use prog. */
BPFRT_API void bpfrt_prog_free(struct bpfrt_prog *prog);

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
BPFRT_API int bpfrt_prog_run(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode,
			     uint64_t arg1, uint64_t arg2, uint64_t *retval);
/* A verified program is only run with the context it was verified for:
 * bpfrt_prog_run refuses (-EINVAL, naming the program) arg1 = 0 (the
 * verifier takes r1 to be a valid pointer, so code under `if (ctx == 0)`
 * is never checked) and arg2 below bpfrt_prog_ctx_access() (the bytes
 * its loads and stores reach). For XDP, data/data_end must describe real
 * memory below 4 GiB, and data_meta the metadata before it, [data_meta,
 * data) (data_meta = data: none; the verifier lets programs read and
 * write it once they compared data_meta + n with data): use
 * bpfrt_prog_test_run_opts (bpfrt/test_run.h), which builds it. */

BPFRT_API const char *bpfrt_prog_name(const struct bpfrt_prog *prog);
BPFRT_API const struct bpf_insn *bpfrt_prog_insns(const struct bpfrt_prog *prog, size_t *cnt);
/* Native image, or NULL if not JIT-compiled. */
BPFRT_API const void *bpfrt_prog_jited(const struct bpfrt_prog *prog, size_t *len);
/* Stack bytes of the deepest call chain (the private-stack size). */
BPFRT_API uint32_t bpfrt_prog_stack_depth(const struct bpfrt_prog *prog);
/* Number of subprograms and each one's own stack depth and first insn. */
BPFRT_API uint32_t bpfrt_prog_subprog_cnt(const struct bpfrt_prog *prog);
BPFRT_API int bpfrt_prog_subprog_info(const struct bpfrt_prog *prog, uint32_t idx,
				      uint32_t *start_insn, uint32_t *stack_depth);

/* Load flags of a program (object programs: set before bpfrt_object_load,
 * like libbpf's bpf_program__set_flags). Returns 0 or -errno (-EBUSY once
 * loaded, -EINVAL for unknown or contradicting flags). */
BPFRT_API int bpfrt_prog_set_flags(struct bpfrt_prog *prog, uint32_t flags);
BPFRT_API uint32_t bpfrt_prog_flags(const struct bpfrt_prog *prog);

/* Writes the native code, disassembled, with the BPF instruction each part
 * came from. */
BPFRT_API int bpfrt_prog_dump_jited(const struct bpfrt_prog *prog, FILE *out);
/* Writes the BPF instructions, disassembled. */
BPFRT_API int bpfrt_prog_dump_xlated(const struct bpfrt_prog *prog, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
