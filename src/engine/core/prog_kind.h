/* Program kinds: one const description per enum bpfrt_prog_kind, read by
 * the object loader (SEC() names), the verifier (context layout), private
 * stacks (tracing-like kinds), test runs (which context to build), attach
 * (context compatibility, attachable here) and the CLI (names), so that
 * knowing a kind is one table entry instead of a case in each of them.
 * Engine layer: nothing here points into the host; the host's attach
 * functions have their own table indexed by the same enum
 * (attach/attach_kind.c). */
#ifndef BPFRT_PROG_KIND_H
#define BPFRT_PROG_KIND_H

#include "bpfrt/prog.h"
#include "core/ctx_rules.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a SEC() name carries the attach target, as libbpf's section
 * definitions spell it: "syscall" (exact), "tp/" (prefix, then the
 * target), "uprobe+" (the name alone or the name, '/', a target). */
enum bpfrt_sec_syntax {
	BPFRT_SEC_EXACT,          /* the name alone: "syscall" */
	BPFRT_SEC_TARGET,         /* name/TARGET: "tp/syscalls/sys_enter_getpgid" (TARGET may be empty) */
	BPFRT_SEC_TARGET_OPT,     /* name or name/TARGET: "uprobe", "uprobe/PATH:FUNC" */
};

/* What a SEC() name adds to its kind (libbpf's SEC_* flags). */
#define BPFRT_SEC_SLEEPABLE  (1u << 0) /* ".s": may sleep (bpfrt runs every program as if it may) */
#define BPFRT_SEC_XDP_FRAGS  (1u << 1) /* "xdp.frags": multi-buffer packets (one buffer here) */
#define BPFRT_SEC_RETPROBE   (1u << 2) /* kretprobe.multi, uretprobe..., kretsyscall: on return */
#define BPFRT_SEC_SESSION    (1u << 3) /* kprobe.session, uprobe.session: entry and return */

struct bpfrt_sec_def {
	const char *name;         /* without the '/' */
	enum bpfrt_sec_syntax syntax;
	uint8_t flags;            /* BPFRT_SEC_* */
	uint8_t variant;          /* enum bpfrt_kind_variant: the context rules' attach type */
};

/* A SEC() name as the loader reads it: libbpf's leading '?' (the program
 * is not loaded unless asked, bpf_program__set_autoload), the kind, the
 * definition it matched and the target after it. */
struct bpfrt_sec_parsed {
	enum bpfrt_prog_kind kind;
	const struct bpfrt_sec_def *def;
	const char *target;       /* inside the name given; "" if none */
	bool autoload;            /* false: the name started with '?' */
};

/* Where the size of a kind's context comes from. */
enum bpfrt_ctx_sizing {
	BPFRT_CTX_FIXED,          /* ctx.size bytes */
	/* ctx.size bytes of header, then one u64 per argument of the
	 * tracepoint the attach target names (registered at load), or
	 * BPFRT_KIND_TP_MAX_ARGS if none is: the attach point then checks the
	 * program's reach against its own count */
	BPFRT_CTX_TP_ARGS,
	BPFRT_CTX_CALLER,         /* the load's ctx_size: memory the caller describes */
};

/* Kinds in one class (other than OWN) see the same context type and may
 * run at each other's hooks and share prog arrays. */
enum bpfrt_ctx_class {
	BPFRT_CTX_CLASS_OWN,      /* only its own kind (not even fentry and fexit: the
				   * verifier checks each one's return value and the slot
				   * after the arguments differently) */
	BPFRT_CTX_CLASS_PT_REGS,  /* struct pt_regs: kprobe, kretprobe, uprobe */
};

/* The context a test run (BPF_PROG_TEST_RUN) builds for the kind. */
enum bpfrt_test_ctx {
	BPFRT_TEST_CTX_MEMORY,    /* a zeroed or caller-filled context of the verified size */
	BPFRT_TEST_CTX_XDP_MD,    /* an xdp_md over a copy of the packet */
	BPFRT_TEST_CTX_SK_BUFF,   /* a __sk_buff describing the packet */
};

/* What a packet-pointer field of the context points to. */
enum bpfrt_ctx_packet_role {
	BPFRT_PKT_DATA,           /* the packet's start (data) */
	BPFRT_PKT_END,            /* its end (data_end) */
	BPFRT_PKT_META,           /* its metadata's start (data_meta): the metadata
				   * lies in [data_meta, data) */
};

/* A context field that loads as a pointer into the packet. */
struct bpfrt_ctx_packet_field {
	uint16_t off;
	uint8_t width;            /* bytes; the load must be the whole field */
	uint8_t role;             /* enum bpfrt_ctx_packet_role */
};

#define BPFRT_CTX_PACKET_FIELDS_MAX 3

struct bpfrt_ctx_layout {
	enum bpfrt_ctx_sizing sizing;
	uint32_t size;            /* FIXED: the size; TP_ARGS: the header before the args */
	bool rdonly;              /* the program may not write it */
	bool u64_only;            /* only aligned 8-byte slots (a trampoline's argument frame) */
	uint8_t packet_field_cnt;
	struct bpfrt_ctx_packet_field packet_fields[BPFRT_CTX_PACKET_FIELDS_MAX];
	/* the fields holding addresses (xdp_md's data, data_end, data_meta)
	 * end here: no sign-extending load below it */
	uint16_t addr_fields_end;
	/* the kernel's per-field rules (ctx_rules.h), NULL: every aligned
	 * access inside [0, size) (read-only where rdonly says) */
	bpfrt_ctx_rule_fn rule;
	bool packet_rdonly;       /* packet pointers from it may be read, not written through */
	bool sk_field;            /* __sk_buff->sk loads as a socket or NULL (verifier/sock.c) */
};

struct bpfrt_prog_kind_desc {
	/* what the public bpfrt_prog_kind_info() hands out: the name links,
	 * the CLI and test runs print, tracing, packet, ctx_writable and
	 * attachable */
	struct bpfrt_prog_kind_info info;
	/* the kind in verifier and attach messages: its SEC() name ("tp",
	 * "raw_tp", ...; "unspec" for raw loads) */
	const char *short_name;
	const struct bpfrt_sec_def *secs; /* terminated by a NULL name */
	struct bpfrt_ctx_layout ctx;
	/* the verifier requires r0 == 0 at exit (Linux's rule for fentry
	 * and fexit, whose return value nothing reads) */
	bool returns_zero;
	enum bpfrt_ctx_class ctx_class;
	enum bpfrt_test_ctx test_ctx;
	/* non-NULL: loads of the kind are refused (-EOPNOTSUPP), for this
	 * reason (its name is still known, so the message can say what it is) */
	const char *load_refused;
	/* r0 at exit must lie in [ret_min, ret_max] (Linux's check_return_code
	 * for the kinds whose return value the kernel acts on) */
	bool ret_checked;
	uint32_t ret_min, ret_max;
};

/* The description of kind, NULL for a value that is no kind. */
const struct bpfrt_prog_kind_desc *bpfrt_prog_kind_desc(int kind);
/* Number of kinds (every value below it has a description). */
int bpfrt_prog_kind_count(void);

/* The kind a SEC() name says and where its attach target starts in it
 * (after the '/'; "" if none); -ENOENT if no kind has that name. */
int bpfrt_prog_kind_from_sec(const char *sec, enum bpfrt_prog_kind *kind, const char **target);
/* The same with everything the name says (struct bpfrt_sec_parsed). */
int bpfrt_prog_sec_parse(const char *sec, struct bpfrt_sec_parsed *out);
/* A uprobe, uprobe.multi or usdt target, as libbpf splits it:
 * "PATH:FUNC[+OFF]" (uprobe; FUNC may be a glob for uprobe.multi),
 * "PATH:PROVIDER:NAME" (usdt; then *func is the provider, *name the
 * probe). PATH may be absolute ("uprobe//usr/lib/libc.so.6:malloc") or a
 * library name. The parts are copied into buf (size bytes). Returns 0 or
 * -EINVAL with bpfrt_last_error() naming what is missing. */
struct bpfrt_probe_target {
	const char *path, *func, *name;
	uint64_t offset;
};
int bpfrt_probe_target_parse(enum bpfrt_prog_kind kind, const char *target, char *buf,
			     size_t size, struct bpfrt_probe_target *out);

/* The range r0 must be in at the program's exit for the kind and the
 * SEC() name's variant; false: any value. */
bool bpfrt_prog_kind_ret_range(const struct bpfrt_prog_kind_desc *d, uint8_t variant,
			       const char *target, int64_t *min, int64_t *max);
/* Packet pointers of the kind may be read, not written through (the
 * layout's packet_rdonly, but for the variants that write: lwt_xmit). */
bool bpfrt_prog_kind_packet_rdonly(const struct bpfrt_prog_kind_desc *d, uint8_t variant);
/* LSM hooks by name (lsm_hooks.c): the ones Linux keeps BPF away from,
 * and the return-value range of the others (false: void, no range). */
bool bpfrt_lsm_hook_disabled(const char *hook);
bool bpfrt_lsm_hook_ret_range(const char *hook, int64_t *min, int64_t *max);
/* The struct parameter i of a hook points to (its name), if bpfrt knows it. */
const char *bpfrt_lsm_hook_arg_struct(const char *hook, unsigned i);

/* The predicates the other modules ask, from the table (false, or
 * "unknown", for a value that is no kind). */
bool bpfrt_prog_kind_is_tracing(int kind);
/* Programs of kinds a and b see the same context: the same kind, or two
 * of one context class (kprobe, kretprobe, uprobe: one pt_regs). */
bool bpfrt_prog_kinds_share_ctx(int a, int b);
/* "raw_tp", "fentry", ... ("unknown" out of range). */
const char *bpfrt_prog_kind_str(int kind);

/* Tracepoint contexts are sized by the named tracepoint's arguments, and
 * tracepoints are registered in the host layer, which the engine does not
 * call. The host sets this lookup once, before main (a constructor);
 * without one every tracepoint counts as passing the most any may, and the
 * attach point checks the program's reach against its own count. */
#define BPFRT_KIND_TP_MAX_ARGS 12 /* the public BPFRT_TP_MAX_ARGS */
#define BPFRT_KIND_TP_HEADER 8    /* sizeof(struct bpfrt_tp_entry) */
/* Arguments of the tracepoint named target ("NAME" or "CATEGORY/NAME"),
 * or -ENOENT. */
typedef int (*bpfrt_tp_nargs_fn)(const char *target);
void bpfrt_prog_kind_set_tp_nargs(bpfrt_tp_nargs_fn fn);
/* The tracepoint's argument count, or BPFRT_KIND_TP_MAX_ARGS when target
 * names none (or no lookup is set). */
uint32_t bpfrt_prog_kind_tp_nargs(const char *target);

#endif
