/* The program kind table (prog_kind.h). Context sizes are Linux's x86-64
 * layouts, which bpfrt hands programs as they are (no context rewriting):
 * the verifier allows exactly [0, size), test runs build contexts of it,
 * attach points compare a program's reach with what they provide. */
#include "core/prog_kind.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#define PT_REGS_SIZE 168               /* x86-64 struct pt_regs (struct bpfrt_pt_regs) */
#define TRAMP_ARGS_SIZE (6 * 8)        /* a trampoline's frame holds 6 arguments */
#define TRAMP_ARGS_RET_SIZE (7 * 8)    /* and the return value (so far); attach checks the
				        * slot against the target's argument count */

_Static_assert(sizeof(struct xdp_md) == 24, "xdp_md as Linux lays it out");
_Static_assert(sizeof(struct __sk_buff) == 192, "__sk_buff as Linux lays it out");

#define SECS(...) ((const struct bpfrt_sec_def[]){ __VA_ARGS__, { NULL, 0 } })

#define TRACING(nm, shortnm, can_attach) \
	.info = { .name = nm, .tracing = true, .attachable = can_attach }, .short_name = shortnm

static const struct bpfrt_ctx_layout pt_regs_ctx = {
	.sizing = BPFRT_CTX_FIXED, .size = PT_REGS_SIZE, .rdonly = true,
};

static const struct bpfrt_prog_kind_desc kinds[] = {
	[BPFRT_PROG_UNSPEC] = {
		/* raw loads only: no SEC() name */
		.info = { .name = "unspec", .ctx_writable = true }, .short_name = "unspec",
		.ctx = { .sizing = BPFRT_CTX_CALLER },
	},
	[BPFRT_PROG_TRACEPOINT] = {
		TRACING("tracepoint", "tp", true),
		.secs = SECS({ "tp", BPFRT_SEC_TARGET }, { "tracepoint", BPFRT_SEC_TARGET }),
		.ctx = { .sizing = BPFRT_CTX_TP_ARGS, .size = BPFRT_KIND_TP_HEADER,
			 .rdonly = true },
	},
	[BPFRT_PROG_RAW_TRACEPOINT] = {
		TRACING("raw_tracepoint", "raw_tp", true),
		.secs = SECS({ "raw_tp", BPFRT_SEC_TARGET }, { "raw_tracepoint", BPFRT_SEC_TARGET },
			     { "tp_btf", BPFRT_SEC_TARGET }),
		.ctx = { .sizing = BPFRT_CTX_TP_ARGS, .size = 0, .rdonly = true },
	},
	[BPFRT_PROG_FENTRY] = {
		TRACING("fentry", "fentry", true),
		.secs = SECS({ "fentry", BPFRT_SEC_TARGET }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_SIZE, .rdonly = true,
			 .u64_only = true },
		.returns_zero = true,
	},
	[BPFRT_PROG_FEXIT] = {
		TRACING("fexit", "fexit", true),
		.secs = SECS({ "fexit", BPFRT_SEC_TARGET }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_RET_SIZE, .rdonly = true,
			 .u64_only = true },
		.returns_zero = true,
	},
	[BPFRT_PROG_FMOD_RET] = {
		TRACING("fmod_ret", "fmod_ret", true),
		.secs = SECS({ "fmod_ret", BPFRT_SEC_TARGET }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_RET_SIZE, .rdonly = true,
			 .u64_only = true },
	},
	[BPFRT_PROG_FENTRY_MULTI] = {
		TRACING("fentry.multi", "fentry.multi", true),
		.secs = SECS({ "fentry.multi", BPFRT_SEC_TARGET }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = TRAMP_ARGS_SIZE, .rdonly = true,
			 .u64_only = true },
	},
	[BPFRT_PROG_KPROBE] = {
		TRACING("kprobe", "kprobe", true),
		.secs = SECS({ "kprobe", BPFRT_SEC_TARGET }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_KRETPROBE] = {
		TRACING("kretprobe", "kretprobe", true),
		.secs = SECS({ "kretprobe", BPFRT_SEC_TARGET }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_UPROBE] = {
		/* placed by the host's uprobe module as kprobes (the same
		 * pt_regs) in this process's executable and libraries */
		TRACING("uprobe", "uprobe", true),
		.secs = SECS({ "uprobe", BPFRT_SEC_TARGET_OPT }, { "uretprobe", BPFRT_SEC_TARGET_OPT },
			     { "usdt", BPFRT_SEC_TARGET_OPT }),
		.ctx = pt_regs_ctx, .ctx_class = BPFRT_CTX_CLASS_PT_REGS,
	},
	[BPFRT_PROG_SOCKET] = {
		.info = { .name = "socket", .packet = true }, .short_name = "socket",
		.secs = SECS({ "socket", BPFRT_SEC_TARGET_OPT }),
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = sizeof(struct __sk_buff),
			 .rdonly = true },
		.test_ctx = BPFRT_TEST_CTX_SK_BUFF,
	},
	[BPFRT_PROG_XDP] = {
		.info = { .name = "xdp", .packet = true }, .short_name = "xdp",
		.secs = SECS({ "xdp", BPFRT_SEC_TARGET_OPT }),
		/* u32 data and data_end load as packet pointers (the packet
		 * lies below 4 GiB); data_meta is a plain number */
		.ctx = { .sizing = BPFRT_CTX_FIXED, .size = sizeof(struct xdp_md), .rdonly = true,
			 .packet_field_cnt = 2,
			 .packet_fields = {
				 { offsetof(struct xdp_md, data), 4, false },
				 { offsetof(struct xdp_md, data_end), 4, true },
			 },
			 .addr_fields_end = offsetof(struct xdp_md, data_meta) + 4 },
		.test_ctx = BPFRT_TEST_CTX_XDP_MD,
	},
	[BPFRT_PROG_SYSCALL] = {
		.info = { .name = "syscall", .ctx_writable = true }, .short_name = "syscall",
		.secs = SECS({ "syscall", BPFRT_SEC_EXACT }),
		.ctx = { .sizing = BPFRT_CTX_CALLER },
	},
};

#define KIND_COUNT ((int)(sizeof(kinds) / sizeof(kinds[0])))

_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == BPFRT_PROG_SYSCALL + 1,
	       "every enum bpfrt_prog_kind value has a description");

const struct bpfrt_prog_kind_desc *bpfrt_prog_kind_desc(int kind)
{
	/* a hole in the designated initializers would have no name */
	return kind >= 0 && kind < KIND_COUNT && kinds[kind].info.name ? &kinds[kind] : NULL;
}

int bpfrt_prog_kind_count(void)
{
	return KIND_COUNT;
}

const struct bpfrt_prog_kind_info *bpfrt_prog_kind_info(enum bpfrt_prog_kind kind)
{
	const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc((int)kind);

	return d ? &d->info : NULL;
}

/* sec after a definition's name: NULL if it does not match, else where
 * the target starts. */
static const char *sec_match(const char *sec, const struct bpfrt_sec_def *def)
{
	size_t n = strlen(def->name);

	if (strncmp(sec, def->name, n))
		return NULL;
	switch (def->syntax) {
	case BPFRT_SEC_EXACT:
		return sec[n] ? NULL : sec + n;
	case BPFRT_SEC_TARGET:
		return sec[n] == '/' ? sec + n + 1 : NULL;
	case BPFRT_SEC_TARGET_OPT:
		return !sec[n] ? sec + n : sec[n] == '/' ? sec + n + 1 : NULL;
	}
	return NULL;
}

int bpfrt_prog_kind_from_sec(const char *sec, enum bpfrt_prog_kind *kind, const char **target)
{
	for (int k = 0; k < KIND_COUNT; k++)
		for (const struct bpfrt_sec_def *def = kinds[k].secs; def && def->name; def++) {
			const char *t = sec_match(sec, def);

			if (t) {
				*kind = (enum bpfrt_prog_kind)k;
				*target = t;
				return 0;
			}
		}
	return -ENOENT;
}

bool bpfrt_prog_kind_is_tracing(int kind)
{
	const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(kind);

	return d && d->info.tracing;
}

bool bpfrt_prog_kinds_share_ctx(int a, int b)
{
	const struct bpfrt_prog_kind_desc *da = bpfrt_prog_kind_desc(a);
	const struct bpfrt_prog_kind_desc *db = bpfrt_prog_kind_desc(b);

	if (a == b)
		return true;
	return da && db && da->ctx_class != BPFRT_CTX_CLASS_OWN && da->ctx_class == db->ctx_class;
}

const char *bpfrt_prog_kind_str(int kind)
{
	const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(kind);

	return d ? d->short_name : "unknown";
}

/* Written once by the host's constructor, read at loads: atomic, so a
 * load on another thread never sees a torn pointer. */
static _Atomic(bpfrt_tp_nargs_fn) tp_nargs_lookup;

void bpfrt_prog_kind_set_tp_nargs(bpfrt_tp_nargs_fn fn)
{
	atomic_store_explicit(&tp_nargs_lookup, fn, memory_order_release);
}

uint32_t bpfrt_prog_kind_tp_nargs(const char *target)
{
	bpfrt_tp_nargs_fn fn = atomic_load_explicit(&tp_nargs_lookup, memory_order_acquire);
	int n = fn && target && *target ? fn(target) : -ENOENT;

	return n >= 0 && n <= BPFRT_KIND_TP_MAX_ARGS ? (uint32_t)n : BPFRT_KIND_TP_MAX_ARGS;
}
