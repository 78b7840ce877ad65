/* The verifier fuzzers' program generator: see vgen.h. */
#include "vgen.h"
#include "isa/isa.h"
#include "maps/map.h"
#include "core/prog_kind.h"
#include "helpers/kernel_kfuncs.h"
#include "helpers/kind_rules.h"
#include "bpfrt/tracepoint.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

const char *const vg_class_names[VC_CNT] = {
	"alu32", "alu64", "movsx", "sdiv/smod", "neg", "le/be", "bswap",
	"ldx", "ldsx", "st", "stx",
	"atomic add", "atomic or", "atomic and", "atomic xor", "atomic fetch",
	"xchg", "cmpxchg", "atomic 32-bit", "atomic 64-bit",
	"jmp", "jmp32", "ja", "gotol", "back-edge",
	"lddw imm", "lddw map", "lddw map value", "lddw func",
	"helper call", "local call", "callx", "bpf_loop", "tail call", "ringbuf record",
	"packet", "ctx read", "ctx write", "ld_abs/ind", "spin lock", "iterator loop",
	"socket",
	"may_goto",
};

/* ---- maps ----------------------------------------------------------------------- */

static struct bpfrt_map *kind_progs[VG_KINDS];
static int kind_progs_kfd[VG_KINDS] = { [0 ... VG_KINDS - 1] = -1 };
static struct bpfrt_prog *slot_progs[VG_KINDS][2];

struct bpfrt_map *vg_map(int vm, enum bpfrt_prog_kind k)
{
	return vm == VM_KIND_PROGS ? kind_progs[k] : tmaps[vm].map;
}

int vg_kernel_map_fd(int vm, enum bpfrt_prog_kind k)
{
	return vm == VM_KIND_PROGS ? kind_progs_kfd[k] : tmaps[vm].kfd;
}

int vg_kernel_maps_init(void)
{
	int err = kernel_maps_init();

	if (err)
		return err;
	for (int k = 0; k < VG_KINDS; k++) {
		if (kind_progs_kfd[k] >= 0)
			continue;
		kind_progs_kfd[k] = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "kprogs", 4, 4, 4, NULL);
		if (kind_progs_kfd[k] < 0)
			return -errno;
	}
	return 0;
}

/* The kind bounds its return value (fentry/fexit: 0; the cgroup and
 * socket hooks: [0, 1]): the generator returns 0 there. */
static int ret_zero_only(enum bpfrt_prog_kind k)
{
	int64_t lo, hi;

	return bpfrt_prog_kind_ret_range(bpfrt_prog_kind_desc(k), 0, NULL, &lo, &hi) &&
	       lo <= 0 && hi >= 0;
}

/* Slot 0: r0 = 42 (0 where the kind must return 0); slot 1: tail-calls
 * slot 1 again until the limit, then returns 7. */
static void fill_slots(enum bpfrt_prog_kind k)
{
	struct vg_prog *p = calloc(1, sizeof(*p));
	int32_t ret = ret_zero_only(k) ? 0 : 42;

	for (int s = 0; s < 2; s++) {
		size_t n = 0;

		memset(p, 0, sizeof(*p));
		p->kind = k;
		p->ctx_size = 64;
		if (s == 1) {
			uint64_t a = (uint64_t)(uintptr_t)kind_progs[k];

			p->refs[0] = (struct bpfrt_map_ref){ 1, BPF_PSEUDO_MAP_FD, kind_progs[k], 0 };
			p->ref_map[0] = VM_KIND_PROGS;
			p->nref = 1;
			p->insns[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
							   .dst_reg = 6, .src_reg = 1 };
			p->insns[n++] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM,
							   .dst_reg = 2, .imm = (int32_t)a };
			p->insns[n++] = (struct bpf_insn){ .imm = (int32_t)(a >> 32) };
			p->insns[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
							   .dst_reg = 3, .imm = 1 };
			p->insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
							   .imm = BPF_FUNC_tail_call };
			ret = ret_zero_only(k) ? 0 : 7;
		}
		p->insns[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = ret };
		p->insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
		p->n = n;
		if (vg_load(p, true, &slot_progs[k][s], NULL, 0) ||
		    bpfrt_map_update_prog(kind_progs[k], (uint32_t)s, slot_progs[k][s]))
			fprintf(stderr, "# %s prog array slot %d: %s\n", vg_kind_name(k), s,
				bpfrt_last_error());
	}
	free(p);
}

static uint32_t helper_ids[BPFRT_MAX_HELPER_ID];
static uint32_t helper_cnt;
/* Linux's kernel-object kfuncs (helpers/kernel_kfuncs.h): called now and
 * then only, as raw programs have no BTF to type their results (most
 * calls are refused), which would crowd out accepted programs */
static bool is_kernel_kfunc[BPFRT_MAX_HELPER_ID];
/* the open-coded iterator kfuncs: [0] num, [1] bits; new, next, destroy */
static int iter_ids[2][3];

void vg_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	maps_init();
	bpfrt_helpers_init();
	for (uint32_t id = 0; id < BPFRT_MAX_HELPER_ID; id++) {
		struct bpfrt_helper_info info = { .sz = sizeof(info) };
		const struct bpfrt_helper_info *h = bpfrt_helper_info(id, &info) ? NULL : &info;

		/* the iterator kfuncs only in iterator loops (s_iter): their
		 * first argument is an object on the stack, not a value */
		if (h && h->fn && !(h->name && !strncmp(h->name, "bpf_iter_", 9))) {
			is_kernel_kfunc[id] = bpfrt_kernel_kfunc_of(h->fn) != NULL;
			helper_ids[helper_cnt++] = id;
		}
	}
	for (int t = 0; t < 2; t++)
		for (int op = 0; op < 3; op++) {
			static const char *const ops[] = { "new", "next", "destroy" };
			char name[32];

			snprintf(name, sizeof(name), "bpf_iter_%s_%s", t ? "bits" : "num", ops[op]);
			iter_ids[t][op] = bpfrt_kfunc_id(name);
		}
	for (int k = 0; k < VG_KINDS; k++)
		if (bpfrt_map_create(BPF_MAP_TYPE_PROG_ARRAY, "kind_progs", 4, 4, 4, NULL,
				     &kind_progs[k]))
			fprintf(stderr, "# prog array: %s\n", bpfrt_last_error());
	for (int k = 0; k < VG_KINDS; k++)
		fill_slots((enum bpfrt_prog_kind)k);
}

static int drain(void *ctx, void *data, size_t len)
{
	return 0;
}

void vg_reset_maps(void)
{
	for (int m = VM_ARRAY; m <= VM_BIG; m++)
		for (uint32_t i = 0; i < tmaps[m].max; i++)
			memset(bpfrt_map_value_ptr(tmaps[m].map, i), 0, tmaps[m].value);
	for (;;) {
		uint32_t key;

		if (bpfrt_map_get_next_key(tmaps[VM_HASH].map, NULL, &key))
			break;
		bpfrt_map_delete_elem(tmaps[VM_HASH].map, &key);
	}
	for (int m = VM_QUEUE; m <= VM_STACK; m++) {
		uint64_t v;

		while (!bpfrt_map_lookup_and_delete_elem(tmaps[m].map, NULL, &v, 0))
			;
	}
	for (int m = VM_LRU_PCPU; m <= VM_LPM; m += VM_LPM - VM_LRU_PCPU) {
		uint64_t key;

		while (!bpfrt_map_get_next_key(tmaps[m].map, NULL, &key))
			bpfrt_map_delete_elem(tmaps[m].map, &key);
	}
	for (;;) {
		uint32_t key;

		if (bpfrt_map_get_next_key(tmaps[VM_STM].map, NULL, &key))
			break;
		bpfrt_map_delete_elem(tmaps[VM_STM].map, &key);
	}
	/* the cgroup storages: their one value (per CPU) back to zeros */
	for (int m = VM_CGS; m <= VM_PCGS; m += VM_PCGS - VM_CGS) {
		static const uint8_t key[16];
		uint8_t *zeros = calloc(bpfrt_map_value_buf_size(tmaps[m].map), 1);

		if (zeros)
			bpfrt_map_update_elem(tmaps[m].map, key, zeros, BPF_ANY);
		free(zeros);
	}
	/* Records are not zeroed, and the next one starts where the last
	 * ended: cover the whole ring with zeros (one record as large as the
	 * ring allows, then one over the 8 bytes it leaves), so a run reads
	 * the same stale bytes wherever its records land. */
	{
		static const char zeros[4096 - 16];
		struct bpfrt_map *rb = tmaps[VM_RB].map;

		bpfrt_ringbuf_consume(rb, drain, NULL);
		bpfrt_ringbuf_output(rb, zeros, sizeof(zeros), 0);
		bpfrt_ringbuf_consume(rb, drain, NULL);
		bpfrt_ringbuf_output(rb, zeros, 8, 0);
		bpfrt_ringbuf_consume(rb, drain, NULL);
	}
}

const char *vg_kind_name(enum bpfrt_prog_kind k)
{
	static const char *const names[VG_KINDS] = {
		"unspec", "tracepoint", "raw_tp", "fentry", "fexit", "fmod_ret", "fentry.multi",
		"kprobe", "kretprobe", "uprobe", "socket", "xdp", "syscall", "kprobe.multi",
		"uprobe.multi", "usdt", "ksyscall", "perf_event", "tc", "action", "cgroup_skb",
		"cgroup_sock", "cgroup_sock_addr", "cgroup_sysctl", "cgroup_sockopt", "cgroup_dev",
		"sockops", "sk_skb", "sk_msg", "sk_lookup", "sk_reuseport", "flow_dissector",
		"lwt", "lirc_mode2", "lsm", "iter", "struct_ops", "netfilter", "fexit.multi",
		"fsession",
	};

	return (unsigned)k < VG_KINDS ? names[k] : "?";
}

/* ---- the context of each kind, as the verifier types it -------------------------- */

struct kctx {
	uint32_t size;
	bool ro, u64_only, packet;
};

static struct kctx kind_ctx(enum bpfrt_prog_kind k, uint32_t unspec_size)
{
	switch (k) {
	case BPFRT_PROG_TRACEPOINT: return (struct kctx){ 8 + 8 * BPFRT_TP_MAX_ARGS, true };
	case BPFRT_PROG_RAW_TRACEPOINT: return (struct kctx){ 8 * BPFRT_TP_MAX_ARGS, true };
	case BPFRT_PROG_FENTRY:
	case BPFRT_PROG_FENTRY_MULTI: return (struct kctx){ 48, true, true };
	case BPFRT_PROG_FEXIT:
	case BPFRT_PROG_FMOD_RET: return (struct kctx){ 56, true, true };
	case BPFRT_PROG_KPROBE:
	case BPFRT_PROG_KRETPROBE:
	case BPFRT_PROG_UPROBE: return (struct kctx){ 168, true };
	case BPFRT_PROG_SOCKET: return (struct kctx){ 192, false }; /* cb[] writable (the kernel's rules) */
	case BPFRT_PROG_XDP: return (struct kctx){ 24, true, false, true };
	case BPFRT_PROG_UNSPEC:
	case BPFRT_PROG_SYSCALL: return (struct kctx){ unspec_size, false };
	default: {
		/* the kinds with fixed contexts (and the kernel's field rules,
		 * which refuse most of what the generator tries, so that the
		 * rules themselves are what is fuzzed) */
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);

		return (struct kctx){ d->ctx.size, d->ctx.rdonly, d->ctx.u64_only };
	}
	}
}

/* ---- generator state --------------------------------------------------------------- */

enum gt { T_NONE, T_SCALAR, T_CTX, T_STACK, T_MAPVAL, T_PKT, T_PKT_END, T_MAPPTR, T_FUNC,
	  T_RBREC, T_PSTACK };

struct greg {
	uint8_t t;
	uint8_t vm;       /* T_MAPVAL/T_MAPPTR: which map */
	int16_t off;      /* T_STACK: from fp; T_MAPVAL/T_RBREC: into the value; T_PKT: range */
	uint16_t var;     /* largest variable part added (T_MAPVAL/T_PKT) */
	uint16_t size;    /* T_RBREC: record size */
};

#define STK 512
struct gst {
	struct greg r[11];
	uint8_t init[STK];    /* byte fp-512+i written */
	uint8_t spill[STK / 8]; /* slot holds a spilled pointer of this gt */
};

/* ROLE_CB: bpf_loop's callback(index, ctx); ROLE_EACH: for_each_map_elem's
 * callback(map, key, value, ctx); ROLE_DRAIN: user_ringbuf_drain's
 * callback(const struct bpf_dynptr *sample, ctx) */
enum { ROLE_MAIN, ROLE_LOCAL, ROLE_CB, ROLE_EACH, ROLE_DRAIN };
#define IS_CB(role) ((role) == ROLE_CB || (role) == ROLE_EACH || (role) == ROLE_DRAIN)

struct gsub {
	int role;
	int nargs;
	bool ctx_arg;         /* LOCAL: r1 = ctx; CB: r2 -> parent slot holding ctx */
	size_t start;
};

struct gen {
	struct vg_prog *p;
	struct gst st;
	struct kctx ctx;
	int role;
	int self;             /* own subprogram index (0: main) */
	int depth;
	bool ctx_ok;          /* r6 holds ctx */
	bool in_record;       /* inside a ringbuf reserve..submit block */
	uint16_t reserved;    /* registers the current block owns */
	int stk_lo;           /* lowest fp offset this frame uses */
	int iters;            /* iterator loops open (their objects sit below stk_lo) */
	size_t limit;         /* stop adding snippets at this many insns */
	struct gsub subs[5];
	int nsub;
	struct { size_t insn; int sub; } fix[64];
	int nfix;
	bool full;
};

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (uint8_t)(c), .dst_reg = (uint8_t)(d), \
					       .src_reg = (uint8_t)(s), .off = (int16_t)(o), \
					       .imm = (int32_t)(i) })

static void emit(struct gen *g, struct bpf_insn in)
{
	if (g->p->n >= VG_MAX_INSNS - 4) {
		g->full = true;
		return;
	}
	g->p->insns[g->p->n++] = in;
}

static bool room(struct gen *g, size_t need)
{
	return !g->full && g->p->n + need < VG_MAX_INSNS - 8;
}

static const int32_t imms[] = { 0, 1, -1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, -8, -16,
				-512, 4096, 0x7fff, 0x8000, 0xffff, 0x7fffffff, INT32_MIN };

static int32_t rnd_imm(void)
{
	return fz(4) ? imms[fz(sizeof(imms) / sizeof(imms[0]))] : (int32_t)fz_next();
}

static bool usable(struct gen *g, int r)
{
	return r != 10 && !(g->reserved & (1u << r)) && !(r == 6 && g->ctx_ok);
}

/* A register holding type t (that the block may read), or -1. */
static int pick_type(struct gen *g, uint8_t t)
{
	int c[11], n = 0;

	for (int r = 0; r < 10; r++)
		if (g->st.r[r].t == t)
			c[n++] = r;
	return n ? c[fz((uint32_t)n)] : -1;
}

/* A register to write a new value into (not holding a pointer, mostly). */
static int pick_dst(struct gen *g)
{
	for (int tries = 0; tries < 20; tries++) {
		int r = (int)fz(10);

		if (!usable(g, r))
			continue;
		if (g->st.r[r].t <= T_SCALAR || fz(8) == 0)
			return r;
	}
	for (int r = 0; r < 10; r++)
		if (usable(g, r) && g->st.r[r].t <= T_SCALAR)
			return r;
	return 0;
}

static void set_scalar(struct gen *g, int r)
{
	g->st.r[r] = (struct greg){ .t = T_SCALAR };
}

/* A scalar register, made one if there is none. */
static int need_scalar(struct gen *g)
{
	int r = pick_type(g, T_SCALAR);

	if (r >= 0 && (usable(g, r) || fz(2)))
		return r;
	r = pick_dst(g);
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, rnd_imm()));
	set_scalar(g, r);
	return r;
}

static void clobber_calls(struct gen *g)
{
	for (int r = 1; r <= 5; r++)
		g->st.r[r].t = T_NONE;
}

/* ---- the stack -------------------------------------------------------------------- */

static void stk_write(struct gen *g, int off, int size, uint8_t spill)
{
	for (int a = off; a < off + size; a++) {
		int slot = (STK + a) / 8;

		if (a < -STK || a >= 0)
			continue;
		if (g->st.spill[slot]) {
			/* what is left of an overwritten spill is not readable */
			g->st.spill[slot] = 0;
			memset(&g->st.init[slot * 8], 0, 8);
		}
	}
	for (int a = off; a < off + size; a++)
		if (a >= -STK && a < 0)
			g->st.init[STK + a] = 1;
	if (spill && off % 8 == 0 && off >= -STK && off < 0)
		g->st.spill[(STK + off) / 8] = spill;
}

static bool stk_readable(struct gen *g, int off, int size)
{
	for (int a = off; a < off + size; a++)
		if (a < -STK || a >= 0 || !g->st.init[STK + a] || g->st.spill[(STK + a) / 8])
			return false;
	return true;
}

/* Writes size bytes at off (so that a read or a helper may use them). */
static void stk_fill(struct gen *g, int off, int size)
{
	for (int a = off; a < off + size;) {
		int s = (a % 8 == 0 && off + size - a >= 8) ? 8 : (a % 4 == 0 && off + size - a >= 4) ? 4 : 1;
		uint8_t sz = s == 8 ? BPF_DW : s == 4 ? BPF_W : BPF_B;

		emit(g, I(BPF_ST | BPF_MEM | sz, 10, 0, a, rnd_imm()));
		a += s;
	}
	stk_write(g, off, size, 0);
}

/* ---- state joins -------------------------------------------------------------- */

static void meet(struct gst *a, const struct gst *b)
{
	for (int r = 0; r < 11; r++) {
		struct greg *x = &a->r[r];
		const struct greg *y = &b->r[r];

		if (!memcmp(x, y, sizeof(*x)))
			continue;
		if (x->t == T_PKT && y->t == T_PKT) {
			x->off = x->off < y->off ? x->off : y->off;
			x->var = x->var > y->var ? x->var : y->var;
		} else {
			x->t = T_NONE;
		}
	}
	for (int i = 0; i < STK; i++)
		a->init[i] &= b->init[i];
	for (int i = 0; i < STK / 8; i++)
		if (a->spill[i] != b->spill[i])
			a->spill[i] = 0, memset(&a->init[i * 8], 0, 8);
}

/* ---- snippets ------------------------------------------------------------------- */

static void block(struct gen *g, int snippets);

static const uint8_t alu_ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
				   BPF_RSH, BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH };
static const uint8_t jmp_ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
				   BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE };

static void s_alu(struct gen *g)
{
	bool wide = fz(3) != 0;
	uint8_t cls = wide ? BPF_ALU64 : BPF_ALU;
	uint8_t op = alu_ops[fz(sizeof(alu_ops))];

	if (op == BPF_MOV) {
		int d = pick_dst(g), s;

		if (fz(3) == 0) {
			emit(g, I(cls | BPF_MOV | BPF_K, d, 0, 0, rnd_imm()));
			set_scalar(g, d);
			return;
		}
		s = (int)fz(11);
		if (g->st.r[s].t == T_NONE)
			s = need_scalar(g);
		if (g->st.r[s].t == T_SCALAR && fz(3) == 0) {
			/* movsx: sign-extend the low 8/16 (/32 on ALU64) bits */
			int16_t bits = (int16_t)(8 << fz(wide ? 3 : 2));

			emit(g, I(cls | BPF_MOV | BPF_X, d, s, bits, 0));
			set_scalar(g, d);
			return;
		}
		if (g->st.r[s].t != T_SCALAR && (!wide || (g->st.r[s].t == T_RBREC && fz(4)))) {
			s = need_scalar(g);
		}
		emit(g, I(cls | BPF_MOV | BPF_X, d, s, 0, 0));
		g->st.r[d] = g->st.r[s];
		if (!wide)
			set_scalar(g, d);
		return;
	}
	{
		int d = need_scalar(g);
		int16_t off = (op == BPF_DIV || op == BPF_MOD) && fz(3) == 0 ? 1 : 0;
		int32_t k = rnd_imm();

		if (!usable(g, d)) {
			d = pick_dst(g);
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, rnd_imm()));
			set_scalar(g, d);
		}
		if (op == BPF_NEG) {
			emit(g, I(cls | BPF_NEG, d, 0, 0, 0));
		} else if (fz(2)) {
			if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
				k &= wide ? 63 : 31;
			if ((op == BPF_DIV || op == BPF_MOD) && k == 0)
				k = 3;
			emit(g, I(cls | op | BPF_K, d, 0, off, k));
		} else {
			int s = need_scalar(g);

			emit(g, I(cls | op | BPF_X, d, s, off, 0));
		}
		set_scalar(g, d);
	}
}

static void s_end(struct gen *g)
{
	int d = need_scalar(g);
	int32_t w = 16 << fz(3);

	if (!usable(g, d))
		return;
	if (fz(2))
		emit(g, I(BPF_ALU | BPF_END | (fz(2) ? BPF_TO_BE : BPF_TO_LE), d, 0, 0, w));
	else
		emit(g, I(BPF_ALU64 | BPF_END | BPF_TO_LE, d, 0, 0, w)); /* bswap */
	set_scalar(g, d);
}

/* Region a pointer register may access: [lo, hi) relative to it. */
static bool region(struct gen *g, int r, int *lo, int *hi, bool write)
{
	const struct greg *x = &g->st.r[r];

	switch (x->t) {
	case T_STACK:
		*lo = g->stk_lo - x->off;
		*hi = -x->off;
		return *hi > *lo;
	case T_MAPVAL:
		if (write && x->vm == VM_RODATA)
			return false;
		*lo = -x->off;
		*hi = (int)tmaps[x->vm].value - x->off - x->var;
		return *hi > *lo;
	case T_RBREC:
		*lo = -x->off;
		*hi = x->size - x->off;
		return *hi > *lo;
	case T_PKT:
		*lo = 0;
		*hi = x->off - x->var;
		return *hi > 0;
	case T_CTX:
		if (write && g->ctx.ro)
			return false;
		*lo = 0;
		*hi = (int)g->ctx.size;
		return *hi > 0;
	default:
		return false;
	}
}

static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };

/* A base register and an offset for an access of 1 << sz bytes. */
static int access_at(struct gen *g, bool write, int *sz, int16_t *off)
{
	int cand[11], n = 0, r, lo, hi, bytes;

	for (int i = 0; i <= 10; i++)
		if (g->st.r[i].t >= T_CTX && g->st.r[i].t != T_PKT_END && region(g, i, &lo, &hi, write))
			cand[n++] = i;
	if (!n)
		return -1;
	r = cand[fz((uint32_t)n)];
	if (fz(3) == 0 && region(g, 10, &lo, &hi, write))
		r = 10;
	region(g, r, &lo, &hi, write);
	*sz = (int)fz(4);
	if (g->st.r[r].t == T_CTX && g->ctx.u64_only)
		*sz = 3;
	bytes = 1 << *sz;
	if (hi - lo < bytes)
		return -1;
	{
		/* aligned in absolute terms where the base is known */
		int base = g->st.r[r].t == T_CTX || g->st.r[r].t == T_PKT ? 0 : g->st.r[r].off;
		int first = lo, span;

		while (((base + first) % bytes + bytes) % bytes)
			first++;
		if (first > hi - bytes)
			return -1;
		span = (hi - bytes - first) / bytes + 1;
		*off = (int16_t)(first + (int)fz((uint32_t)span) * bytes);
	}
	return r;
}

static void s_load(struct gen *g)
{
	int sz, r, d;
	int16_t off;
	bool sx = fz(4) == 0;

	r = access_at(g, false, &sz, &off);
	if (r < 0)
		return;
	if (g->st.r[r].t == T_STACK) {
		int at = g->st.r[r].off + off;

		if (sz == 3 && at % 8 == 0 && at >= -STK && at < 0 && g->st.spill[(STK + at) / 8]) {
			/* fill a spilled pointer */
			uint8_t t = g->st.spill[(STK + at) / 8];

			d = pick_dst(g);
			emit(g, I(BPF_LDX | BPF_MEM | BPF_DW, d, r, off, 0));
			/* only ctx comes back typed: the slot keeps no offsets */
			g->st.r[d] = (struct greg){ .t = t == T_CTX ? T_CTX : T_NONE };
			return;
		}
		if (!stk_readable(g, at, 1 << sz)) {
			if (fz(8))
				stk_fill(g, at, 1 << sz);
		}
	}
	d = pick_dst(g);
	if (sx && sz < 3)
		emit(g, I(BPF_LDX | BPF_MEMSX | sizes[sz], d, r, off, 0));
	else
		emit(g, I(BPF_LDX | BPF_MEM | sizes[sz], d, r, off, 0));
	set_scalar(g, d);
	if (g->st.r[r].t == T_CTX && g->ctx.packet && sz == 2 && (off == 0 || off == 4) && !sx)
		g->st.r[d].t = T_NONE; /* a packet pointer, used by s_packet only */
}

static void s_store(struct gen *g)
{
	int sz, r;
	int16_t off;

	r = access_at(g, true, &sz, &off);
	if (r < 0)
		return;
	if (g->st.r[r].t == T_STACK && sz == 3 && (g->st.r[r].off + off) % 8 == 0 && fz(4) == 0) {
		/* spill a pointer (or, rarely, whatever the register holds) */
		int s = (int)fz(10);

		if (g->st.r[s].t == T_NONE)
			s = need_scalar(g);
		emit(g, I(BPF_STX | BPF_MEM | BPF_DW, r, s, off, 0));
		stk_write(g, g->st.r[r].off + off, 8,
			  g->st.r[s].t > T_SCALAR ? g->st.r[s].t : 0);
		return;
	}
	if (fz(2)) {
		emit(g, I(BPF_ST | BPF_MEM | sizes[sz], r, 0, off, rnd_imm()));
	} else {
		int s = need_scalar(g);

		if (fz(24) == 0)
			s = (int)fz(10); /* a pointer into memory: rejected (a leak) */
		emit(g, I(BPF_STX | BPF_MEM | sizes[sz], r, s, off, 0));
	}
	if (g->st.r[r].t == T_STACK)
		stk_write(g, g->st.r[r].off + off, 1 << sz, 0);
}

static void s_atomic(struct gen *g)
{
	static const int32_t ops[] = { BPF_ADD, BPF_OR, BPF_AND, BPF_XOR };
	int sz, r, s;
	int16_t off;
	int32_t op;

	for (int t = 0;; t++) {
		r = access_at(g, true, &sz, &off);
		if (r < 0 || t > 4)
			return;
		if (sz >= 2 && g->st.r[r].t != T_CTX && g->st.r[r].t != T_PKT)
			break;
	}
	switch (fz(6)) {
	case 4: op = BPF_XCHG; break;
	case 5: op = BPF_CMPXCHG; break;
	default: op = ops[fz(4)] | (fz(2) ? BPF_FETCH : 0); break;
	}
	if (g->st.r[r].t == T_STACK) {
		int at = g->st.r[r].off + off;

		if (!stk_readable(g, at, 1 << sz))
			stk_fill(g, at, 1 << sz);
	}
	if (op == BPF_CMPXCHG && g->st.r[0].t != T_SCALAR && usable(g, 0)) {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, rnd_imm()));
		set_scalar(g, 0);
	}
	s = need_scalar(g);
	if ((op & BPF_FETCH) && !usable(g, s)) {
		s = pick_dst(g);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, s, 0, 0, rnd_imm()));
		set_scalar(g, s);
	}
	emit(g, I(BPF_STX | BPF_ATOMIC | sizes[sz], r, s, off, op));
	if (op == BPF_CMPXCHG)
		set_scalar(g, 0);
}

/* A map reference for an lddw at the current insn. */
static void add_ref(struct gen *g, int vm, uint8_t kind, uint32_t off, int dst)
{
	struct bpfrt_map *m = vg_map(vm, g->p->kind);
	uint64_t a = kind == BPF_PSEUDO_MAP_VALUE ?
		     (uint64_t)(uintptr_t)bpfrt_map_value_ptr(m, 0) + off : (uint64_t)(uintptr_t)m;

	if (g->p->nref >= VG_MAX_REFS || !room(g, 2)) {
		g->full = true;
		return;
	}
	g->p->refs[g->p->nref] = (struct bpfrt_map_ref){ (uint32_t)g->p->n, kind, m, off };
	g->p->ref_map[g->p->nref++] = (uint8_t)vm;
	emit(g, I(BPF_LD | BPF_DW | BPF_IMM, dst, 0, 0, (int32_t)(uint32_t)a));
	emit(g, I(0, 0, 0, 0, (int32_t)(uint32_t)(a >> 32)));
	if (kind == BPF_PSEUDO_MAP_VALUE)
		g->st.r[dst] = (struct greg){ .t = T_MAPVAL, .vm = (uint8_t)vm, .off = (int16_t)off };
	else
		g->st.r[dst] = (struct greg){ .t = T_MAPPTR, .vm = (uint8_t)vm };
}

/* A subprogram of this role, created after the current one (so calls
 * never recurse), or -1. */
static int get_sub(struct gen *g, int role)
{
	for (int i = g->self + 1; i < g->nsub; i++)
		if (g->subs[i].role == role && fz(3))
			return i;
	if (g->nsub >= 5)
		return -1;
	g->subs[g->nsub] = (struct gsub){ .role = role, .nargs = (int)fz(6), .ctx_arg = fz(2) };
	return g->nsub++;
}

static void fixup(struct gen *g, int sub)
{
	if (g->nfix < 64) {
		g->fix[g->nfix].insn = g->p->n;
		g->fix[g->nfix++].sub = sub;
	} else {
		g->full = true;
	}
}

static void lddw_func(struct gen *g, int dst, int sub)
{
	fixup(g, sub);
	emit(g, I(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_FUNC, 0, 0));
	emit(g, I(0, 0, 0, 0, 0));
	g->st.r[dst] = (struct greg){ .t = T_FUNC };
}

/* bpf_spin_lock / bpf_spin_unlock around a store next to the lock of
 * "locked" (its lock at 4; socket filters and tracing kinds are refused
 * such a map, as Linux). */
static void s_spin_lock(struct gen *g)
{
	if ((g->reserved & 0x3f) || !room(g, 12))
		return;
	add_ref(g, VM_LOCKED, BPF_PSEUDO_MAP_VALUE, 4, 1);
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_spin_lock));
	clobber_calls(g);
	g->st.r[0].t = T_NONE;
	add_ref(g, VM_LOCKED, BPF_PSEUDO_MAP_VALUE, 8, 2);
	emit(g, I(BPF_ST | BPF_MEM | BPF_DW, 2, 0, 0, (int32_t)fz(100)));
	add_ref(g, VM_LOCKED, BPF_PSEUDO_MAP_VALUE, 4, 1);
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_spin_unlock));
	clobber_calls(g);
	g->st.r[0].t = T_NONE;
}

static void s_lddw(struct gen *g)
{
	int d = pick_dst(g);

	switch (fz(4)) {
	case 0: {
		uint64_t v = fz_next() >> fz(64);

		emit(g, I(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(uint32_t)v));
		emit(g, I(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32)));
		set_scalar(g, d);
		break;
	}
	case 1: {
		static const int vms[] = { VM_HASH, VM_ARRAY, VM_BIG, VM_RB, VM_RODATA, VM_KIND_PROGS };

		add_ref(g, vms[fz(6)], BPF_PSEUDO_MAP_FD, 0, d);
		break;
	}
	case 2: {
		static const int vms[] = { VM_ARRAY, VM_BIG, VM_RODATA };
		int vm = vms[fz(3)];

		add_ref(g, vm, BPF_PSEUDO_MAP_VALUE, fz(tmaps[vm].value / 4) * 4, d);
		break;
	}
	default: {
		int sub = get_sub(g, ROLE_CB);

		if (sub > 0)
			lddw_func(g, d, sub);
		break;
	}
	}
}

static void s_ptr_arith(struct gen *g)
{
	int r = -1, lo, hi;

	for (int t = 0; t < 6 && r < 0; t++) {
		int c = (int)fz(10);

		if (usable(g, c) && (g->st.r[c].t == T_STACK || g->st.r[c].t == T_MAPVAL ||
				     g->st.r[c].t == T_PKT) && region(g, c, &lo, &hi, false))
			r = c;
	}
	if (r < 0) {
		/* a stack pointer to work with */
		r = pick_dst(g);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, 10, 0, 0));
		g->st.r[r] = (struct greg){ .t = T_STACK, .off = 0 };
		if (fz(2))
			return;
	}
	region(g, r, &lo, &hi, false);
	if (g->st.r[r].t == T_PKT) {
		/* the range shrinks by what is added */
		int k = (int)fz((uint32_t)(hi > 1 ? hi : 1));

		emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0, k));
		g->st.r[r].off = (int16_t)(g->st.r[r].off - k);
		return;
	}
	if (g->st.r[r].t == T_MAPVAL && fz(2)) {
		/* a bounded variable offset */
		int s = need_scalar(g);
		int mask = 7 << fz(2);

		if (!usable(g, s) || hi - lo <= mask + 8)
			return;
		emit(g, I(BPF_ALU64 | BPF_AND | BPF_K, s, 0, 0, mask));
		emit(g, I(BPF_ALU64 | BPF_ADD | BPF_X, r, s, 0, 0));
		g->st.r[r].var = (uint16_t)(g->st.r[r].var + mask);
		return;
	}
	{
		int k = lo + (int)fz((uint32_t)(hi - lo));

		k &= ~7;
		emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0, k));
		g->st.r[r].off = (int16_t)(g->st.r[r].off + k);
	}
}

/* ---- helper calls --------------------------------------------------------------- */

static bool nondet_helper(uint32_t id)
{
	return id == BPF_FUNC_ktime_get_ns || id == BPF_FUNC_get_prandom_u32 ||
	       id == BPF_FUNC_get_smp_processor_id || id == BPF_FUNC_ktime_get_boot_ns ||
	       id == BPF_FUNC_ringbuf_query || id == BPF_FUNC_jiffies64 ||
	       id == BPF_FUNC_ktime_get_coarse_ns || id == BPF_FUNC_get_numa_node_id ||
	       id == BPF_FUNC_ktime_get_tai_ns ||
	       /* the stack differs between engines; the per-CPU values
	        * between the CPUs the runs happen to run on */
	       id == BPF_FUNC_get_stackid || id == BPF_FUNC_get_stack ||
	       id == BPF_FUNC_map_lookup_percpu_elem ||
	       /* the per-CPU cgroup storage is the CPU's the run is on */
	       id == BPF_FUNC_get_local_storage;
}

static int map_for(uint32_t id)
{
	if (id == BPF_FUNC_ringbuf_output || id == BPF_FUNC_ringbuf_reserve ||
	    id == BPF_FUNC_ringbuf_query)
		return VM_RB;
	if (id == BPF_FUNC_tail_call)
		return VM_KIND_PROGS;
	if (id == BPF_FUNC_user_ringbuf_drain)
		return fz(8) ? VM_URB : VM_RB;
	/* the keyless kinds, now and then one they refuse (or a read-only
	 * queue for the writers) */
	if (id == BPF_FUNC_map_push_elem || id == BPF_FUNC_map_pop_elem ||
	    id == BPF_FUNC_map_peek_elem)
		return fz(8) ? VM_QUEUE + (int)fz(3) : fz(2) ? VM_ROQUEUE : (int)fz(3);
	/* now and then a map of kernel objects (always empty): sockmap,
	 * sockhash, xskmap, devmap, cpumap, sk_storage */
	if (fz(32) == 0)
		return VM_SOCKMAP + (int)fz(VM_SKS - VM_SOCKMAP); /* sk_storage: no Linux copy */
	if (fz(16) == 0)
		return fz(3) == 0 ? VM_LRU_PCPU : fz(2) ? VM_LPM : VM_QUEUE + (int)fz(3);
	if (id == BPF_FUNC_current_task_under_cgroup)
		return fz(8) ? VM_CGA : (int)fz(3);
	if (id == BPF_FUNC_perf_event_output)
		return fz(8) ? VM_PEA : (int)fz(3);
	if (id == BPF_FUNC_get_stackid)
		return fz(8) ? VM_STM : (int)fz(3);
	if (id == BPF_FUNC_get_local_storage)
		return fz(8) ? (fz(2) ? VM_CGS : VM_PCGS) : (int)fz(3);
	if (id == BPF_FUNC_map_lookup_percpu_elem)
		return fz(8) ? (fz(2) ? VM_PCPU : VM_LRU_PCPU) : (int)fz(3);
	/* a lookup on a map-in-map gives an inner map, not memory */
	if (id == BPF_FUNC_map_lookup_elem && fz(12) == 0)
		return fz(2) ? VM_AOM : VM_HOM;
	if (id == BPF_FUNC_map_lookup_elem)
		return fz(4) ? (int)fz(3) : VM_RODATA;
	/* update/delete on .rodata: rejected (BPF_F_RDONLY_PROG); once
	 * accepted, so a program could change what the verifier folded */
	return fz(5) ? (int)fz(3) : (int)fz(6);
}

/* A stack buffer of n bytes at a fresh offset; *init: written first. */
static int stk_buf(struct gen *g, int n, bool init, int *cursor)
{
	int off;

	n = (n + 7) & ~7;
	if (*cursor - n < g->stk_lo)
		*cursor = 0;
	*cursor -= n;
	off = *cursor;
	if (off < g->stk_lo)
		off = g->stk_lo;
	if (init && !stk_readable(g, off, n))
		stk_fill(g, off, n);
	return off;
}

static void ptr_stack(struct gen *g, int r, int off)
{
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, 10, 0, 0));
	emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0, off));
	g->st.r[r] = (struct greg){ .t = T_STACK, .off = (int16_t)off };
}

/* The size argument in r: a constant, or a bounded variable. */
static int size_arg(struct gen *g, int r, int max, bool zero_ok)
{
	int n = zero_ok ? (int)fz((uint32_t)max + 1) : 1 + (int)fz((uint32_t)max);

	if (fz(4) == 0 && max >= 8) {
		int s = need_scalar(g);
		int mask = max >= 16 ? 15 : 7;

		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, s, 0, 0));
		emit(g, I(BPF_ALU64 | BPF_AND | BPF_K, r, 0, 0, mask));
		if (!zero_ok)
			emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0, 1));
		set_scalar(g, r);
		return -1; /* variable */
	}
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, n));
	set_scalar(g, r);
	return n;
}

/* Bytes the verifier never lets be read as data again (a dynptr's). */
static void stk_forget(struct gen *g, int off, int size)
{
	for (int a = off; a < off + size; a++)
		if (a >= -STK && a < 0) {
			g->st.init[STK + a] = 0;
			g->st.spill[(STK + a) / 8] = 0;
		}
}

static bool is_dynptr_helper(uint32_t id)
{
	return id >= BPF_FUNC_dynptr_from_mem && id <= BPF_FUNC_dynptr_data;
}

/* The dynptr helpers as the verifier takes them: a dynptr made at an
 * 8-aligned slot (local over the "array" value, or over a new ringbuf
 * record), used by the helper picked (read, write, data: offsets and
 * lengths now and then past its size, which the helpers refuse at run
 * time), and a ringbuf one released in the same block; its 16 bytes are
 * never data again in the model. */
static bool dynptr_block(struct gen *g, uint32_t id)
{
	int cursor = 0, off, buf, len;
	bool rb = id == BPF_FUNC_ringbuf_reserve_dynptr || id == BPF_FUNC_ringbuf_submit_dynptr ||
		  id == BPF_FUNC_ringbuf_discard_dynptr || fz(3) == 0;

	if ((g->reserved & 0x3f) || !room(g, 60))
		return false;
	off = stk_buf(g, 24, false, &cursor);
	off = (off + 7) & ~7;
	if (rb) {
		add_ref(g, VM_RB, BPF_PSEUDO_MAP_FD, 0, 1);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 8 * (1 + (int32_t)fz(4))));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, fz(16) ? 0 : 1));
	} else {
		add_ref(g, VM_ARRAY, BPF_PSEUDO_MAP_VALUE, 0, 1);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)fz(17)));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, fz(16) ? 0 : 1));
	}
	ptr_stack(g, 4, off);
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, rb ? BPF_FUNC_ringbuf_reserve_dynptr
						 : BPF_FUNC_dynptr_from_mem));
	stk_forget(g, off, 16);
	switch (id) {
	case BPF_FUNC_dynptr_read:
		len = (int)fz(9);
		buf = stk_buf(g, 8, false, &cursor);
		ptr_stack(g, 1, buf);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, len));
		ptr_stack(g, 3, off);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, (int32_t)fz(12)));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, fz(16) ? 0 : 1));
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_read));
		stk_write(g, buf, len, 0);
		break;
	case BPF_FUNC_dynptr_write:
		len = (int)fz(9);
		buf = stk_buf(g, 8, true, &cursor);
		ptr_stack(g, 1, off);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)fz(12)));
		ptr_stack(g, 3, buf);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, len));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, fz(16) ? 0 : 1));
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_write));
		break;
	case BPF_FUNC_dynptr_data:
		/* the slice read once if there is one: r0 a number after */
		ptr_stack(g, 1, off);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)fz(12)));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 1 + (int32_t)fz(8)));
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_data));
		emit(g, I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0));
		emit(g, I(BPF_LDX | BPF_MEM | BPF_B, 0, 0, 0, 0));
		break;
	default:
		break;
	}
	if (rb) {
		ptr_stack(g, 1, off);
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0));
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, id == BPF_FUNC_ringbuf_submit_dynptr ||
			  (id != BPF_FUNC_ringbuf_discard_dynptr && fz(2)) ?
			  BPF_FUNC_ringbuf_submit_dynptr : BPF_FUNC_ringbuf_discard_dynptr));
	}
	clobber_calls(g);
	if (rb)
		g->st.r[0].t = T_NONE; /* submit and discard return nothing */
	else
		set_scalar(g, 0);
	return true;
}

static bool is_sock_helper(uint32_t id)
{
	return id == BPF_FUNC_sk_lookup_tcp || id == BPF_FUNC_sk_lookup_udp ||
	       id == BPF_FUNC_skc_lookup_tcp || id == BPF_FUNC_sk_release ||
	       id == BPF_FUNC_sk_fullsock || id == BPF_FUNC_tcp_sock ||
	       id == BPF_FUNC_get_listener_sock || id == BPF_FUNC_skc_to_tcp_sock;
}

static bool kind_may_call(const struct gen *g, uint32_t id)
{
	struct bpfrt_helper_info info = { .sz = sizeof(info) };

	return !bpfrt_helper_info(id, &info) &&
	       !bpfrt_helper_kind_reason((int32_t)id, info.fn, g->p->kind);
}

/* The socket helpers as the verifier takes them: a lookup of a zeroed
 * tuple on the stack, its NULL check, now and then a field read and a cast
 * of the socket (spilled across the call; the cast's own NULL check and a
 * field read), and the release in the same block. bpfrt's lookups find no
 * socket: every run takes the NULL path. */
static bool sock_block(struct gen *g, uint32_t id)
{
	static const uint32_t lookups[] = { BPF_FUNC_sk_lookup_tcp, BPF_FUNC_sk_lookup_udp,
					    BPF_FUNC_skc_lookup_tcp };
	static const uint32_t casts[] = { BPF_FUNC_sk_fullsock, BPF_FUNC_tcp_sock,
					  BPF_FUNC_get_listener_sock, BPF_FUNC_skc_to_tcp_sock };
	uint32_t lookup = lookups[fz(3)], cast = 0;
	int cursor = 0, tuple, slot = 0;
	size_t skip, skip_cast;

	if (id == lookups[0] || id == lookups[1] || id == lookups[2])
		lookup = id;
	else if (id != BPF_FUNC_sk_release)
		cast = id;
	else if (fz(2))
		cast = casts[fz(4)];
	if (cast && !kind_may_call(g, cast))
		cast = 0;
	if (!g->ctx_ok || (g->reserved & 0x3f) || !room(g, 40) || !kind_may_call(g, lookup) ||
	    !kind_may_call(g, BPF_FUNC_sk_release))
		return false;
	tuple = stk_buf(g, 36, true, &cursor);
	if (cast)
		slot = (stk_buf(g, 16, false, &cursor) + 7) & ~7;
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0));
	ptr_stack(g, 2, tuple);
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, fz(2) ? 12 : 36)); /* IPv4 or IPv6 */
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0));
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 0));
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, (int32_t)lookup));
	skip = g->p->n;
	emit(g, I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0));
	if (fz(2)) /* the family, a field of every socket */
		emit(g, I(BPF_LDX | BPF_MEM | BPF_W, 2, 0, 4, 0));
	if (cast) {
		emit(g, I(BPF_STX | BPF_MEM | BPF_DW, 10, 0, slot, 0));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0));
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, (int32_t)cast));
		skip_cast = g->p->n;
		emit(g, I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0));
		emit(g, I(BPF_LDX | BPF_MEM | BPF_W, 2, 0, 0, 0)); /* at 0 in each view */
		if (!g->full)
			g->p->insns[skip_cast].off = (int16_t)(g->p->n - skip_cast - 1);
		emit(g, I(BPF_LDX | BPF_MEM | BPF_DW, 1, 10, slot, 0));
	} else {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0));
	}
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_release));
	if (!g->full)
		g->p->insns[skip].off = (int16_t)(g->p->n - skip - 1);
	if (cast)
		stk_forget(g, slot, 8);
	clobber_calls(g);
	set_scalar(g, 0);
	return true;
}

/* Sets up r1..r5 for helper id as its prototype says, then calls it
 * (callx: through a register). Returns false if this frame cannot. */
static bool call_helper(struct gen *g, uint32_t id, bool callx)
{
	struct bpfrt_helper_info info = { .sz = sizeof(info) };
	const struct bpfrt_helper_info *h = bpfrt_helper_info(id, &info) ? NULL : &info;
	int cursor = 0, mapvm = -1, cb = -1, uninit_off[5], uninit_len[5], nuninit = 0;

	if (!h)
		return false;
	if (is_dynptr_helper(id) && !callx)
		return dynptr_block(g, id);
	if (is_sock_helper(id))
		return !callx && sock_block(g, id);
	for (int a = 0; a < 5; a++)
		if ((h->args[a] == BPFRT_ARG_PTR_TO_CTX && !g->ctx_ok) ||
		    h->args[a] == BPFRT_ARG_PTR_TO_RINGBUF_MEM)
			return false;
	if (id == BPF_FUNC_tail_call && (g->in_record || !g->ctx_ok))
		return false;
	if ((g->reserved & 0x3e) || !room(g, 40))
		return false;
	for (int a = 0; a < 5; a++) {
		int r = a + 1;
		enum bpfrt_arg_type t = h->args[a];
		enum bpfrt_arg_type next = a < 4 ? h->args[a + 1] : BPFRT_ARG_NONE;

		/* r1..r(a) are set: later setups keep off them */
		g->reserved |= (uint16_t)((1u << (a + 1)) - 2);
		switch (t) {
		case BPFRT_ARG_NONE:
			break;
		case BPFRT_ARG_ANYTHING:
			if (fz(6) == 0 && id != BPF_FUNC_snprintf) {
				int s = (int)fz(10);

				/* a stack pointer as "anything" is a leak (rejected);
				 * it once let probe_read read the frame's unwritten
				 * bytes (the engines disagreed on what they read) */
				if (g->st.r[s].t != T_NONE) {
					emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, s, 0, 0));
					g->st.r[r] = g->st.r[s];
					break;
				}
			}
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0,
				  fz(2) ? (int32_t)fz(4) : rnd_imm()));
			set_scalar(g, r);
			break;
		case BPFRT_ARG_PTR_TO_CTX_OR_NULL:
			if (!g->ctx_ok || fz(2)) {
				emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, 0));
				set_scalar(g, r);
				break;
			}
			/* fall through */
		case BPFRT_ARG_PTR_TO_CTX:
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, 6, 0, 0));
			g->st.r[r] = g->st.r[6];
			break;
		case BPFRT_ARG_PTR_TO_MEM:
		case BPFRT_ARG_PTR_TO_UNINIT_MEM: {
			bool uninit = t == BPFRT_ARG_PTR_TO_UNINIT_MEM;
			bool zero_ok = next == BPFRT_ARG_CONST_SIZE_OR_ZERO;
			int mv = pick_type(g, T_MAPVAL), lo, hi, n;

			if (mv >= 0 && fz(3) == 0 && region(g, mv, &lo, &hi, uninit) && lo <= 0 &&
			    hi > 1) {
				emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, mv, 0, 0));
				g->st.r[r] = g->st.r[mv];
				size_arg(g, r + 1, hi > 32 ? 32 : hi, zero_ok);
			} else {
				int max = 1 + (int)fz(48), off;

				if (fz(3) == 0)
					max = 16;
				off = stk_buf(g, max, !uninit, &cursor);
				ptr_stack(g, r, off);
				n = size_arg(g, r + 1, max, zero_ok);
				if (uninit && n > 0 && nuninit < 5) {
					uninit_off[nuninit] = off;
					uninit_len[nuninit++] = n;
				}
			}
			a++; /* the size is set */
			break;
		}
		case BPFRT_ARG_CONST_SIZE:
		case BPFRT_ARG_CONST_SIZE_OR_ZERO:
			if (id == BPF_FUNC_ringbuf_reserve) {
				int32_t sz = fz(16) ? 8 * (1 + (int32_t)fz(8)) : 8192;

				emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, sz));
				set_scalar(g, r);
			} else {
				size_arg(g, r, 64, t == BPFRT_ARG_CONST_SIZE_OR_ZERO);
			}
			break;
		case BPFRT_ARG_CONST_MAP_PTR:
			mapvm = map_for(id);
			add_ref(g, mapvm, BPF_PSEUDO_MAP_FD, 0, r);
			break;
		case BPFRT_ARG_PTR_TO_MAP_KEY:
		case BPFRT_ARG_PTR_TO_MAP_VALUE: {
			int vm = mapvm >= 0 ? mapvm : VM_ARRAY;
			int n = (int)(t == BPFRT_ARG_PTR_TO_MAP_KEY ? tmaps[vm].key : tmaps[vm].value);
			int mv = pick_type(g, T_MAPVAL), off;

			if (n <= 0)
				n = 4;
			if (t == BPFRT_ARG_PTR_TO_MAP_VALUE && mv >= 0 && fz(3) == 0) {
				emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, r, mv, 0, 0));
				g->st.r[r] = g->st.r[mv];
				break;
			}
			off = stk_buf(g, n, false, &cursor);
			if (t == BPFRT_ARG_PTR_TO_MAP_KEY) {
				/* a key that exists in the arrays most of the time */
				emit(g, I(BPF_ST | BPF_MEM | BPF_W, 10, 0, off, fz(5)));
				stk_write(g, off, 4, 0);
				if (n > 4)
					stk_fill(g, off + 4, n - 4);
			} else if (!stk_readable(g, off, n)) {
				stk_fill(g, off, n);
			}
			ptr_stack(g, r, off);
			break;
		}
		case BPFRT_ARG_PTR_TO_FUNC:
			cb = get_sub(g, id == BPF_FUNC_for_each_map_elem ? ROLE_EACH :
					id == BPF_FUNC_user_ringbuf_drain ? ROLE_DRAIN : ROLE_CB);
			if (cb <= 0)
				return false;
			lddw_func(g, r, cb);
			break;
		case BPFRT_ARG_PTR_TO_STACK_OR_NULL:
			if (cb > 0 && g->subs[cb].ctx_arg && g->ctx_ok) {
				/* the callback finds ctx in the slot r3 points to */
				emit(g, I(BPF_STX | BPF_MEM | BPF_DW, 10, 6, -8, 0));
				stk_write(g, -8, 8, T_CTX);
				ptr_stack(g, r, -8);
			} else if (fz(2)) {
				int off = stk_buf(g, 8, true, &cursor);

				ptr_stack(g, r, off);
				if (cb > 0)
					g->subs[cb].ctx_arg = false;
			} else {
				emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, 0));
				set_scalar(g, r);
				if (cb > 0)
					g->subs[cb].ctx_arg = false;
			}
			break;
		case BPFRT_ARG_PTR_TO_UNINIT_MAP_VALUE: {
			int n = mapvm >= 0 && tmaps[mapvm].value ? (int)tmaps[mapvm].value : 8;
			/* a bloom filter's peek reads the value it tests */
			bool reads = mapvm == VM_BLOOM;
			int off = stk_buf(g, n, reads, &cursor);

			ptr_stack(g, r, off);
			if (!reads && nuninit < 5) {
				uninit_off[nuninit] = off;
				uninit_len[nuninit++] = n;
			}
			break;
		}
		case BPFRT_ARG_PTR_TO_LONG: {
			int off = stk_buf(g, 8, false, &cursor);

			ptr_stack(g, r, off);
			if (nuninit < 5) {
				uninit_off[nuninit] = off;
				uninit_len[nuninit++] = 8;
			}
			break;
		}
		case BPFRT_ARG_PTR_TO_CONST_STR:
			add_ref(g, VM_RODATA, BPF_PSEUDO_MAP_VALUE, 0, r);
			break;
		default:
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, 0));
			set_scalar(g, r);
			break;
		}
	}
	if (id == BPF_FUNC_loop) {
		/* a few iterations, maybe a variable count */
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, fz(6)));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0));
	}
	if (callx) {
		int t = 0;

		for (int c = 6; c <= 9; c++)
			if (usable(g, c) && g->st.r[c].t <= T_SCALAR)
				t = c;
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, t, 0, 0, (int32_t)id));
		emit(g, I(BPF_JMP | BPF_CALL | BPF_X, t, 0, 0, 0));
	} else {
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, (int32_t)id));
	}
	g->reserved &= (uint16_t)~0x3eu;
	/* a bloom filter keeps every bit a run set: a later run's peek can
	 * differ (vg_reset_maps cannot clear one); a per-CPU value is the
	 * slot of whichever CPU the thread is on at the time */
	if (nondet_helper(id) || (mapvm == VM_BLOOM && id == BPF_FUNC_map_peek_elem) ||
	    mapvm == VM_LRU_PCPU)
		g->p->nondet = true;
	clobber_calls(g);
	for (int i = 0; i < nuninit; i++)
		stk_write(g, uninit_off[i], uninit_len[i], 0);
	switch (h->ret) {
	case BPFRT_RET_VOID:
		g->st.r[0].t = T_NONE;
		break;
	case BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL: {
		/* null check: an early return, or a block that has the value */
		int d;

		if (fz(2) && !IS_CB(g->role)) {
			emit(g, I(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 2, 0));
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
			emit(g, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
			d = fz(2) ? 0 : 7 + (int)fz(3);
			if (d && !usable(g, d))
				d = 0;
			if (d)
				emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, d, 0, 0, 0));
			g->st.r[d] = (struct greg){ .t = T_MAPVAL, .vm = (uint8_t)mapvm };
			if (mapvm < 0 || mapvm > VM_RODATA || mapvm == VM_RB)
				g->st.r[d].t = T_NONE;
		} else {
			struct gst before = g->st;
			size_t j = g->p->n;

			emit(g, I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0));
			g->st.r[0] = (struct greg){ .t = T_MAPVAL, .vm = (uint8_t)mapvm };
			if (mapvm < 0 || mapvm > VM_RODATA || mapvm == VM_RB)
				g->st.r[0].t = T_NONE;
			g->reserved |= 1;
			block(g, 1 + (int)fz(3));
			g->reserved &= (uint16_t)~1u;
			if (!g->full)
				g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
			before.r[0].t = T_NONE;
			meet(&g->st, &before);
		}
		break;
	}
	case BPFRT_RET_PTR_TO_MAP_VALUE:
		/* a cgroup storage value, which the generator does not model */
		g->st.r[0].t = T_NONE;
		break;
	default:
		set_scalar(g, 0);
		break;
	}
	return true;
}

static void s_helper(struct gen *g)
{
	for (int t = 0; t < 4; t++) {
		uint32_t id = helper_ids[fz(helper_cnt)];

		if (id == BPF_FUNC_ringbuf_reserve || id == BPF_FUNC_trace_printk ||
		    id == BPF_FUNC_trace_vprintk)
			if (fz(4))
				continue; /* reserve has its block; printing is slow */
		if (is_kernel_kfunc[id] && fz(8))
			continue;
		if (call_helper(g, id, false))
			return;
	}
}

static void s_callx(struct gen *g)
{
	/* callx of a helper set up as for a call: the verifier rejects
	 * callx (as Linux); it once walked it as a conditional jump, so any
	 * helper ran with any arguments (a callx of probe_read from a
	 * bpf_loop callback crashed the JIT run). */
	for (int t = 0; t < 4; t++)
		if (call_helper(g, helper_ids[fz(helper_cnt)], true))
			return;
}

static void s_tail_call(struct gen *g)
{
	if (!g->ctx_ok || g->in_record || (g->reserved & 0x3e))
		return;
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0));
	add_ref(g, VM_KIND_PROGS, BPF_PSEUDO_MAP_FD, 0, 2);
	if (fz(3) == 0) {
		int s = need_scalar(g);

		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 3, s, 0, 0));
		emit(g, I(BPF_ALU64 | BPF_AND | BPF_K, 3, 0, 0, 7));
	} else {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, fz(5)));
	}
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call));
	clobber_calls(g);
	g->st.r[0].t = T_NONE; /* as Linux: no r0 after a tail call that fails */
}

static void s_local_call(struct gen *g)
{
	int sub = get_sub(g, ROLE_LOCAL);

	if (sub <= 0 || (g->reserved & 0x3f) || g->in_record)
		return;
	if (g->subs[sub].ctx_arg && !g->ctx_ok)
		g->subs[sub].ctx_arg = false;
	for (int a = 1; a <= g->subs[sub].nargs; a++) {
		if (a == 1 && g->subs[sub].ctx_arg)
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0));
		else
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, a, 0, 0, rnd_imm()));
	}
	fixup(g, sub);
	emit(g, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0));
	clobber_calls(g);
	set_scalar(g, 0);
}

static void s_ringbuf(struct gen *g)
{
	int32_t size = 8 * (1 + (int32_t)fz(8));
	int rec = 7 + (int)fz(3);
	struct gst before;
	size_t j;
	bool saved = g->in_record;

	if (g->in_record || !usable(g, rec) || (g->reserved & 0x3f) || !room(g, 60))
		return;
	add_ref(g, VM_RB, BPF_PSEUDO_MAP_FD, 0, 1);
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, size));
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0));
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_reserve));
	clobber_calls(g);
	g->st.r[0].t = T_NONE;
	before = g->st;
	j = g->p->n;
	emit(g, I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0));
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, rec, 0, 0, 0));
	g->st.r[rec] = (struct greg){ .t = T_RBREC, .size = (uint16_t)size };
	g->reserved |= (uint16_t)(1u << rec);
	g->in_record = true;
	block(g, 1 + (int)fz(4));
	g->in_record = saved;
	g->reserved &= (uint16_t)~(1u << rec);
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, rec, 0, 0));
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0));
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0,
		  fz(2) ? BPF_FUNC_ringbuf_submit : BPF_FUNC_ringbuf_discard));
	clobber_calls(g);
	g->st.r[0].t = T_NONE;
	for (int r = 0; r < 10; r++)
		if (g->st.r[r].t == T_RBREC)
			g->st.r[r].t = T_NONE; /* submitted: every copy is gone */
	if (!g->full)
		g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
	meet(&g->st, &before);
}

static void s_packet(struct gen *g)
{
	int p = 7 + (int)fz(3), n = 1 + (int)fz(40);
	struct gst before;
	size_t j;
	bool meta;

	if (!g->ctx.packet || !g->ctx_ok || !usable(g, p) || (g->reserved & 0x1c) ||
	    !room(g, 40))
		return;
	/* data against data_end, or (XDP) data_meta against data: the
	 * metadata's bytes behave as the packet's (ctx_for gives 16) */
	meta = g->p->kind == BPFRT_PROG_XDP && fz(3) == 0;
	emit(g, I(BPF_LDX | BPF_MEM | BPF_W, p, 6, meta ? 8 : 0, 0));
	emit(g, I(BPF_LDX | BPF_MEM | BPF_W, 3, 6, meta ? 0 : 4, 0));
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 4, p, 0, 0));
	emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, n));
	g->st.r[3] = (struct greg){ .t = meta ? T_NONE : T_PKT_END };
	g->st.r[4].t = T_NONE;
	g->st.r[p].t = T_NONE;
	before = g->st;
	j = g->p->n;
	if (fz(2))
		emit(g, I(BPF_JMP | BPF_JGT | BPF_X, 4, 3, 0, 0));  /* past the end: skip */
	else
		emit(g, I(BPF_JMP | BPF_JLT | BPF_X, 3, 4, 0, 0));
	g->st.r[p] = (struct greg){ .t = T_PKT, .off = (int16_t)n };
	g->reserved |= (uint16_t)(1u << p);
	block(g, 1 + (int)fz(4));
	g->reserved &= (uint16_t)~(1u << p);
	if (!g->full)
		g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
	meet(&g->st, &before);
}

/* A legacy packet load (socket filters): r0 = packet bytes, r1-r5
 * clobbered; offsets inside and past the test packet, and Linux's
 * negative SKF_NET_OFF / SKF_LL_OFF bases. */
static void s_ld_abs(struct gen *g)
{
	static const int32_t offs[] = { 0, 1, 2, 12, 40, 60, 1000, -0x100000, -0x200000 + 12,
					-1 };
	static const uint8_t szs[] = { BPF_B, BPF_H, BPF_W };
	int32_t imm = offs[fz(sizeof(offs) / sizeof(offs[0]))];
	uint8_t sz = szs[fz(3)];

	if (!g->ctx_ok || (g->reserved & 0x3f) || !room(g, 2))
		return;
	if (fz(2)) {
		emit(g, I(BPF_LD | BPF_ABS | sz, 0, 0, 0, imm));
	} else {
		int r = need_scalar(g);

		if (r < 0 || r == 6)
			return;
		emit(g, I(BPF_LD | BPF_IND | sz, 0, r, 0, (int32_t)fz(16)));
	}
	clobber_calls(g);
	set_scalar(g, 0);
}

static void cond_jump(struct gen *g)
{
	bool j32 = fz(3) == 0;
	uint8_t op = jmp_ops[fz(sizeof(jmp_ops))];
	int d = need_scalar(g);

	if (fz(2)) {
		emit(g, I((j32 ? BPF_JMP32 : BPF_JMP) | op | BPF_K, d, 0, 0, rnd_imm()));
	} else {
		int s = need_scalar(g);

		if (s == d && fz(8))
			s = need_scalar(g); /* mostly two registers */
		emit(g, I((j32 ? BPF_JMP32 : BPF_JMP) | op | BPF_X, d, s, 0, 0));
	}
}

static void s_if(struct gen *g)
{
	struct gst before;
	size_t j;

	if (!room(g, 20))
		return;
	cond_jump(g);
	j = g->p->n - 1;
	before = g->st;
	g->depth++;
	if (fz(5) == 0 && !IS_CB(g->role) && !g->in_record) {
		/* an early return */
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0,
			  ret_zero_only(g->p->kind) && g->role == ROLE_MAIN ? 0 : rnd_imm()));
		emit(g, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
		g->st = before;
	} else {
		block(g, 1 + (int)fz(3));
	}
	if (fz(3) == 0 && !g->full) {
		/* else: then-part jumps over it (ja or gotol) */
		struct gst then = g->st;
		size_t k = g->p->n;
		bool gotol = fz(2);

		emit(g, gotol ? I(BPF_JMP32 | BPF_JA, 0, 0, 0, 0) : I(BPF_JMP | BPF_JA, 0, 0, 0, 0));
		if (!g->full)
			g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
		g->st = before;
		block(g, 1 + (int)fz(3));
		if (!g->full) {
			if (gotol)
				g->p->insns[k].imm = (int32_t)(g->p->n - k - 1);
			else
				g->p->insns[k].off = (int16_t)(g->p->n - k - 1);
		}
		meet(&g->st, &then);
	} else if (!g->full) {
		g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
		meet(&g->st, &before);
	}
	g->depth--;
}

static void s_loop(struct gen *g)
{
	int c = 9;
	size_t head, j;
	struct gst before;

	if (!usable(g, c) || !room(g, 30) || g->in_record)
		return;
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, c, 0, 0, 0));
	set_scalar(g, c);
	before = g->st;
	head = g->p->n;
	g->reserved |= 1u << c;
	g->depth++;
	block(g, 1 + (int)fz(2));
	g->depth--;
	g->reserved &= (uint16_t)~(1u << c);
	emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, c, 0, 0, 1));
	j = g->p->n;
	emit(g, I((fz(2) ? BPF_JMP32 : BPF_JMP) | (fz(2) ? BPF_JLT : BPF_JNE) | BPF_K, c, 0, 0,
		  2 + fz(4)));
	if (!g->full)
		g->p->insns[j].off = (int16_t)((int64_t)head - (int64_t)j - 1);
	meet(&g->st, &before);
}

/* A counted loop with a may_goto (Linux's `i < n && can_loop`): before
 * the body or after it, jumping past the loop; or (off < 0) ending the
 * body, jumping back to the head. The counter bounds the trip count
 * either way; the verifier walks both ways of each may_goto. */
static void s_may_goto_loop(struct gen *g)
{
	int c = 9;
	bool first = fz(2), back = !first && fz(2);
	size_t head, mg = 0, j;
	struct gst before;

	if (!usable(g, c) || !room(g, 32) || g->in_record)
		return;
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, c, 0, 0, 0));
	set_scalar(g, c);
	before = g->st;
	head = g->p->n;
	if (first) {
		mg = g->p->n;
		emit(g, I(BPF_JMP | BPF_JCOND, 0, BPF_MAY_GOTO, 0, 0));
	}
	g->reserved |= 1u << c;
	g->depth++;
	block(g, 1 + (int)fz(2));
	g->depth--;
	g->reserved &= (uint16_t)~(1u << c);
	emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, c, 0, 0, 1));
	j = g->p->n;
	emit(g, I((fz(2) ? BPF_JMP32 : BPF_JMP) | BPF_JGE | BPF_K, c, 0, 0, 2 + fz(4)));
	if (back) {
		/* if c >= n goto out; may_goto head; out: */
		emit(g, I(BPF_JMP | BPF_JCOND, 0, BPF_MAY_GOTO, 0, 0));
		if (!g->full) {
			/* while the budget lasts the fall-through ends the loop
			 * after a round; once it is spent the count does */
			g->p->insns[j].off = 1;
			g->p->insns[g->p->n - 1].off = (int16_t)((int64_t)head - (int64_t)g->p->n);
		}
	} else {
		if (!first) {
			mg = g->p->n;
			emit(g, I(BPF_JMP | BPF_JCOND, 0, BPF_MAY_GOTO, 0, 0));
		}
		emit(g, I(BPF_JMP | BPF_JA, 0, 0, 0, 0));
		if (!g->full) {
			g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
			g->p->insns[mg].off = (int16_t)(g->p->n - mg - 1);
			g->p->insns[g->p->n - 1].off = (int16_t)((int64_t)head - (int64_t)g->p->n);
		}
	}
	meet(&g->st, &before);
}

/* A loop over an open-coded iterator (bpf_for / bpf_for_each over bits):
 * new, then next until NULL around a body of snippets, then destroy. The
 * object sits below the stack the other snippets use, so nothing else
 * touches it; the body may read the element. The trip count is the
 * iterator's: the verifier proves it by convergence at next. */
static void s_iter(struct gen *g)
{
	int t = (int)fz(2), off = g->stk_lo - 16 * (g->iters + 1), d;
	size_t head, j;
	struct gst before;

	if (g->in_record || g->iters >= 2 || (g->reserved & 0x3f) || !room(g, 60) ||
	    iter_ids[t][0] < 0 || iter_ids[t][1] < 0 || iter_ids[t][2] < 0)
		return;
	ptr_stack(g, 1, off);
	if (t) {
		/* words: an initialised stack buffer, or any address */
		static int cursor;
		int n = 1 + (int)fz(2), buf = stk_buf(g, 8 * n, true, &cursor);

		if (fz(4))
			ptr_stack(g, 2, buf);
		else
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, fz(2) ? 0 : 4096));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, n));
	} else {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, rnd_imm()));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, rnd_imm()));
	}
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, iter_ids[t][0]));
	clobber_calls(g);
	set_scalar(g, 0);
	before = g->st;
	head = g->p->n;
	ptr_stack(g, 1, off);
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, iter_ids[t][1]));
	clobber_calls(g);
	g->st.r[0].t = T_NONE;
	j = g->p->n;
	emit(g, I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0));
	if (fz(2) && (d = pick_dst(g)) >= 0) {
		emit(g, I(BPF_LDX | BPF_MEM | BPF_W, d, 0, 0, 0));
		set_scalar(g, d);
	}
	g->iters++;
	g->depth++;
	block(g, 1 + (int)fz(2));
	g->depth--;
	g->iters--;
	emit(g, I(BPF_JMP | BPF_JA, 0, 0, (int16_t)((int64_t)head - (int64_t)g->p->n - 1), 0));
	if (!g->full)
		g->p->insns[j].off = (int16_t)(g->p->n - j - 1);
	meet(&g->st, &before);
	ptr_stack(g, 1, off);
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, iter_ids[t][2]));
	clobber_calls(g);
	g->st.r[0].t = T_NONE;
}

static void snippet(struct gen *g)
{
	uint32_t w = fz(100);

	if (g->in_record) {
		/* between reserve and submit: no calls, no exits, no loops */
		if (w < 30)
			s_alu(g);
		else if (w < 55)
			s_store(g);
		else if (w < 80)
			s_load(g);
		else if (w < 90)
			s_atomic(g);
		else if (g->depth < 3)
			s_if(g);
		else
			s_end(g);
		return;
	}
	if (w < 18)
		s_alu(g);
	else if (w < 21)
		s_end(g);
	else if (w < 26)
		s_ptr_arith(g);
	else if (w < 37)
		s_load(g);
	else if (w < 48)
		s_store(g);
	else if (w < 54)
		s_atomic(g);
	else if (w < 57)
		s_lddw(g);
	else if (w < 58)
		s_spin_lock(g);
	else if (w < 68)
		s_helper(g);
	else if (w < 78 && g->depth < 3)
		s_if(g);
	else if (w < 80 && g->depth < 2) {
		if (fz(3))
			s_loop(g);
		else
			s_may_goto_loop(g);
	}
	else if (w < 84)
		s_local_call(g);
	else if (w < 87)
		call_helper(g, BPF_FUNC_loop, false);
	else if (w < 89)
		s_tail_call(g);
	else if (w < 90)
		s_callx(g);
	else if (w < 93)
		s_ringbuf(g);
	else if (w < 94 && fz(4) == 0 && !g->depth)
		s_iter(g);
	else if (g->ctx.packet)
		s_packet(g);
	else if (g->p->kind == BPFRT_PROG_SOCKET)
		s_ld_abs(g);
	else
		s_load(g);
}

static void block(struct gen *g, int snippets)
{
	for (int i = 0; i < snippets && !g->full && g->p->n < g->limit; i++)
		snippet(g);
}

/* One function: prologue, body, return. */
static void function(struct gen *g, int self)
{
	const struct gsub *sub = &g->subs[self];

	g->self = self;
	g->role = sub->role;
	g->depth = 0;
	g->reserved = 0;
	g->in_record = false;
	memset(&g->st, 0, sizeof(g->st));
	g->st.r[10] = (struct greg){ .t = T_STACK };
	g->stk_lo = self ? -64 : -256;
	g->ctx_ok = false;
	switch (sub->role) {
	case ROLE_MAIN:
		g->st.r[1] = (struct greg){ .t = T_CTX };
		if (fz(10)) {
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0));
			g->st.r[6] = g->st.r[1];
			g->ctx_ok = true;
		}
		break;
	case ROLE_LOCAL:
		for (int a = 1; a <= sub->nargs; a++)
			set_scalar(g, a);
		if (sub->ctx_arg && sub->nargs) {
			g->st.r[1] = (struct greg){ .t = T_CTX };
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0));
			g->st.r[6] = g->st.r[1];
			g->ctx_ok = true;
		}
		break;
	case ROLE_EACH:
		/* r1 the map, r2 the key, r3 the value: read a byte of each
		 * (every map's key and value have one), then leave them */
		emit(g, I(BPF_LDX | BPF_MEM | BPF_B, 7, 2, 0, 0));
		set_scalar(g, 7);
		emit(g, I(BPF_LDX | BPF_MEM | BPF_B, 8, 3, 0, 0));
		set_scalar(g, 8);
		if (sub->ctx_arg) {
			/* the caller's spilled ctx, through r4 */
			emit(g, I(BPF_LDX | BPF_MEM | BPF_DW, 6, 4, 0, 0));
			g->st.r[6] = (struct greg){ .t = T_CTX };
			g->ctx_ok = true;
		}
		break;
	case ROLE_DRAIN:
		/* the sample's first bytes read into the frame, then r1 left */
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 1, 0, 0));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0));
		emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -8));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)fz(9)));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, (int32_t)fz(4)));
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 0));
		emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_read));
		stk_write(g, -8, 8, 0);
		set_scalar(g, 0);
		for (int r = 1; r <= 5; r++)
			g->st.r[r].t = T_NONE;
		/* the caller's ctx (r2) is not used */
		break;
	case ROLE_CB:
		set_scalar(g, 1);
		if (sub->ctx_arg) {
			/* the caller's spilled ctx, through r2 */
			emit(g, I(BPF_LDX | BPF_MEM | BPF_DW, 6, 2, 0, 0));
			g->st.r[6] = (struct greg){ .t = T_CTX };
			g->ctx_ok = true;
		}
		break;
	}
	for (int r = 0; r < 10; r++)
		if (g->st.r[r].t == T_NONE && r != 2 && fz(2)) {
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, rnd_imm()));
			set_scalar(g, r);
		}
	{
		size_t len = self ? 6 + fz(30) : 10 + fz(120);

		g->limit = g->p->n + len;
		if (g->limit > VG_MAX_INSNS - 40)
			g->limit = VG_MAX_INSNS - 40;
	}
	while (!g->full && g->p->n < g->limit)
		snippet(g);
	/* return */
	if (IS_CB(g->role)) {
		int s = need_scalar(g);

		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 0, s, 0, 0));
		emit(g, I(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 1));
	} else if (ret_zero_only(g->p->kind) && g->role == ROLE_MAIN) {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
	} else if (fz(2) && pick_type(g, T_SCALAR) >= 0) {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 0, pick_type(g, T_SCALAR), 0, 0));
	} else {
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, rnd_imm()));
	}
	g->full = false; /* the exit always fits: emit keeps 4 slots */
	emit(g, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
}

void vg_program(struct vg_prog *p, int kind)
{
	struct gen *g = calloc(1, sizeof(*g));

	vg_init();
	p->n = 0;
	p->nref = 0;
	p->nondet = false;
	p->mutated = false;
	p->kind = kind >= 0 ? (enum bpfrt_prog_kind)kind : (enum bpfrt_prog_kind)fz(VG_KINDS);
	p->ctx_size = (p->kind == BPFRT_PROG_UNSPEC || p->kind == BPFRT_PROG_SYSCALL) ?
		      (fz(4) ? 64 : 8 * fz(9)) : 0;
	g->p = p;
	g->ctx = kind_ctx(p->kind, p->ctx_size);
	g->subs[0] = (struct gsub){ .role = ROLE_MAIN };
	g->nsub = 1;
	for (int s = 0; s < g->nsub; s++) {
		g->subs[s].start = p->n;
		if (p->n + 16 >= VG_MAX_INSNS) {
			/* no room: an empty function */
			p->n = g->subs[s].start;
		}
		function(g, s);
	}
	for (int i = 0; i < g->nfix; i++) {
		struct bpf_insn *in = &p->insns[g->fix[i].insn];

		in->imm = (int32_t)((int64_t)g->subs[g->fix[i].sub].start -
				    (int64_t)g->fix[i].insn - 1);
	}
	free(g);
}

/* ---- mutation --------------------------------------------------------------------- */

void vg_mutate(struct vg_prog *p)
{
	p->mutated = true;
	for (int k = 1 + (int)fz(3); k > 0; k--) {
		struct bpf_insn *in = &p->insns[fz((uint32_t)p->n)];

		switch (fz(8)) {
		case 0: in->off = (int16_t)(in->off + (int)fz(17) - 8); break;
		case 1: in->imm = (int32_t)fz_next(); break;
		case 2: in->imm = (int32_t)((uint32_t)in->imm + fz(9) - 4); break;
		case 3: in->dst_reg = (uint8_t)fz(11); break;
		case 4: in->src_reg = (uint8_t)fz(11); break;
		case 5: in->code ^= (uint8_t)(1u << fz(8)); break; /* class, source, size, mode, op */
		case 6: in->code = (uint8_t)((in->code & 0x07) | (fz(16) << 4) | (in->code & 0x08)); break;
		default: in->off = (int16_t)fz_next(); break;
		}
	}
}

/* ---- classification ----------------------------------------------------------------- */

uint64_t vg_classes(const struct vg_prog *p, uint8_t *helpers)
{
	uint64_t m = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->insns[i];
		uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

#define SET(c) (m |= 1ull << (c))
		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64:
			SET(cls == BPF_ALU ? VC_ALU32 : VC_ALU64);
			if (op == BPF_MOV && BPF_SRC(in->code) == BPF_X && in->off)
				SET(VC_MOVSX);
			if ((op == BPF_DIV || op == BPF_MOD) && in->off == 1)
				SET(VC_SDIV_SMOD);
			if (op == BPF_NEG)
				SET(VC_NEG);
			if (op == BPF_END)
				SET(cls == BPF_ALU ? VC_LE_BE : VC_BSWAP);
			break;
		case BPF_LDX:
			SET(BPF_MODE(in->code) == BPF_MEMSX ? VC_LDSX : VC_LDX);
			break;
		case BPF_ST:
			SET(VC_ST);
			break;
		case BPF_STX:
			if (BPF_MODE(in->code) != BPF_ATOMIC) {
				SET(VC_STX);
				break;
			}
			SET(BPF_SIZE(in->code) == BPF_DW ? VC_ATOMIC64 : VC_ATOMIC32);
			switch (in->imm & ~BPF_FETCH) {
			case BPF_ADD: SET(VC_ATOMIC_ADD); break;
			case BPF_OR: SET(VC_ATOMIC_OR); break;
			case BPF_AND: SET(VC_ATOMIC_AND); break;
			case BPF_XOR: SET(VC_ATOMIC_XOR); break;
			}
			if (in->imm == BPF_XCHG)
				SET(VC_XCHG);
			else if (in->imm == BPF_CMPXCHG)
				SET(VC_CMPXCHG);
			else if (in->imm & BPF_FETCH)
				SET(VC_ATOMIC_FETCH);
			break;
		case BPF_LD:
			if (insn_is_lddw(in)) {
				bool ref = false;

				for (uint32_t r = 0; r < p->nref; r++)
					if (p->refs[r].insn == i) {
						SET(p->refs[r].kind == BPF_PSEUDO_MAP_VALUE ?
						    VC_LDDW_MAP_VALUE : VC_LDDW_MAP);
						ref = true;
					}
				if (in->src_reg == BPF_PSEUDO_FUNC)
					SET(VC_LDDW_FUNC);
				else if (!ref)
					SET(VC_LDDW_IMM);
				i++;
			}
			break;
		case BPF_JMP:
		case BPF_JMP32:
			if (op == BPF_CALL) {
				if (insn_is_callx(in)) {
					SET(VC_CALLX);
				} else if (in->src_reg == BPF_PSEUDO_CALL) {
					SET(VC_LOCAL_CALL);
				} else if (!in->src_reg) {
					SET(VC_HELPER);
					if (in->imm == BPF_FUNC_loop)
						SET(VC_BPF_LOOP);
					if (in->imm == BPF_FUNC_tail_call)
						SET(VC_TAIL_CALL);
					if (in->imm == BPF_FUNC_ringbuf_reserve)
						SET(VC_RINGBUF_RECORD);
					if (in->imm == BPF_FUNC_spin_lock)
						SET(VC_SPIN_LOCK);
					if (in->imm == BPF_FUNC_sk_release)
						SET(VC_SOCKET);
					if (in->imm == iter_ids[0][1] || in->imm == iter_ids[1][1])
						SET(VC_ITER_LOOP);
					if (helpers && (uint32_t)in->imm < BPFRT_MAX_HELPER_ID)
						helpers[in->imm] = 1;
				}
			} else if (op == BPF_JA) {
				SET(cls == BPF_JMP32 ? VC_GOTOL : VC_JA);
			} else if (insn_is_may_goto(in)) {
				SET(VC_MAY_GOTO);
			} else if (op != BPF_EXIT) {
				SET(cls == BPF_JMP32 ? VC_JMP32 : VC_JMP);
			}
			if (insn_is_branch(in) && insn_branch_target(in, (int64_t)i) <= (int64_t)i)
				SET(VC_BACK_EDGE);
			break;
		}
		if (cls == BPF_LD && (BPF_MODE(in->code) == BPF_ABS || BPF_MODE(in->code) == BPF_IND))
			SET(VC_LD_ABS);
		if (p->kind == BPFRT_PROG_XDP && cls == BPF_LDX && in->src_reg == 6 &&
		    (in->off == 0 || in->off == 4))
			SET(VC_PACKET);
	}
	/* context accesses through r6 (the generator keeps ctx there) */
	for (size_t i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->insns[i];

		if (BPF_CLASS(in->code) == BPF_LDX && in->src_reg == 6)
			SET(VC_CTX_READ);
		if ((BPF_CLASS(in->code) == BPF_ST || (BPF_CLASS(in->code) == BPF_STX &&
						       BPF_MODE(in->code) == BPF_MEM)) &&
		    in->dst_reg == 6)
			SET(VC_CTX_WRITE);
		if (insn_is_lddw(in))
			i++;
	}
#undef SET
	return m;
}

/* ---- loading and running ------------------------------------------------------------- */

int vg_load(const struct vg_prog *p, bool jit, struct bpfrt_prog **out, char *log, size_t log_size)
{
	BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log, .log_size = log_size,
		   .log_level = log ? 1 : 0, .ctx_size = p->ctx_size);
	char name[BPFRT_NAME_LEN];

	snprintf(name, sizeof(name), "fuzz_%s", vg_kind_name(p->kind));
	return load_verified(name, p->kind, 0, p->refs, p->nref, p->insns, p->n, jit, &vo, out);
}

bool vg_checked_available = true;

static uint64_t run_ctx(enum bpfrt_prog_kind kind, uint64_t *len)
{
	struct vcase c = { .name = "fuzz", .kind = kind };

	return ctx_for(&c, len);
}

/* The one place that knows the checking interpreter may be missing. */
int vg_run_checked(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind, uint64_t *r0)
{
	uint64_t len, ctx = run_ctx(kind, &len);
	int err;

	if (!bpfrt_prog_kind_info(kind)->runs)
		return -ENOTSUP; /* verified only: a kernel's context */
	if (!ctx)
		return -ENOTSUP;
	if (vg_checked_available) {
		err = bpfrt_prog_run(prog, BPFRT_EXEC_CHECKED, ctx, len, r0);
		if (err != -ENOTSUP)
			return err;
		vg_checked_available = false; /* not built yet: the plain interpreter */
		run_ctx(kind, &len);
	}
	return bpfrt_prog_run(prog, BPFRT_EXEC_INTERP, ctx, len, r0);
}

int vg_run_jit(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind, uint64_t *r0)
{
	uint64_t len, ctx = run_ctx(kind, &len);

	if (!bpfrt_prog_kind_info(kind)->runs)
		return -ENOTSUP;
	if (!ctx)
		return -ENOTSUP;
	return bpfrt_prog_run(prog, BPFRT_EXEC_JIT, ctx, len, r0);
}

void vg_print(const struct vg_prog *p, FILE *out)
{
	fprintf(out, "# kind %s%s, ctx_size %u, %zu insns, %u map refs:", vg_kind_name(p->kind),
		p->mutated ? " (mutated)" : "", p->ctx_size, p->n, p->nref);
	for (uint32_t r = 0; r < p->nref; r++)
		fprintf(out, " insn %u %s%s+%u", p->refs[r].insn,
			p->refs[r].kind == BPF_PSEUDO_MAP_VALUE ? "mapval:" : "map:",
			p->ref_map[r] == VM_KIND_PROGS ? "kind_progs" : tmaps[p->ref_map[r]].name,
			p->refs[r].off);
	fprintf(out, "\n");
	bpfrt_disasm(p->insns, p->n, out);
	fflush(out);
}

/* ---- reproducing ----------------------------------------------------------------------- */

void vg_seed(uint64_t seed, uint64_t i)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	fz_state = (z ^ (z >> 31)) | 1;
}

const struct vg_prog *vg_cur_prog;
uint64_t vg_cur_seed, vg_cur_index;

static void print_current(void)
{
	if (!vg_cur_prog)
		return;
	fprintf(stderr, "# fuzz: died running program %" PRIu64 " of seed %" PRIu64
		" (BPFRT_FUZZ_SEED=%" PRIu64 " BPFRT_FUZZ_ONE=%" PRIu64 " reproduce it):\n",
		vg_cur_index, vg_cur_seed, vg_cur_seed, vg_cur_index);
	vg_print(vg_cur_prog, stderr);
}

#if defined(__SANITIZE_ADDRESS__)
void __sanitizer_set_death_callback(void (*cb)(void));
#define VG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
void __sanitizer_set_death_callback(void (*cb)(void));
#define VG_ASAN 1
#endif
#endif

static void on_fatal(int sig)
{
	print_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

void vg_report_deaths(void)
{
#ifdef VG_ASAN
	__sanitizer_set_death_callback(print_current);
#else
	signal(SIGSEGV, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGILL, on_fatal);
	signal(SIGFPE, on_fatal);
#endif
	signal(SIGABRT, on_fatal);
}
