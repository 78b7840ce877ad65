/* Kernel-differential verifier check: random and mutated programs from the
 * fuzzers' generator (tests/verifier/vgen.c) are verified by Linux
 * (BPF_PROG_LOAD as root, with kernel maps of the same shapes) and by
 * bpfrt. Where bpfrt accepts and Linux rejects, the program runs in the
 * checking interpreter (a violation is a bug) and the difference must
 * match a recorded class below (the kernel's message and/or a predicate,
 * with the reason bpfrt differs); an unmatched one is a bug: the program,
 * both verdicts and the kernel's log are printed.
 *
 *   BPFRT_DIFF_SEED=N|time  another seed (default 1)
 *   BPFRT_DIFF_SECONDS=S    run for S seconds instead of the smoke count
 *   BPFRT_DIFF_PROGRAMS=N   run N programs
 *   BPFRT_DIFF_ONE=I        only program I, printed with both verdicts
 *   BPFRT_DIFF_LOG=1        with BPFRT_DIFF_ONE: bpfrt's log (level 2) too
 *   BPFRT_DIFF_SHOW=1       print one program of each recorded class */
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "isa/isa.h"
#include "verifier/vgen.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the kernel's verdict --------------------------------------------------------- */

/* Linux's program type for a kind, and its expected attach type; -1 where
 * the kind has no kernel equivalent that loads without an attach target
 * (fentry, fexit, fmod_ret, fentry.multi need a BTF function). */
static int kernel_type(enum bpfrt_prog_kind k, enum bpf_attach_type *at)
{
	*at = 0;
	switch (k) {
	case BPFRT_PROG_UNSPEC:
	case BPFRT_PROG_SOCKET: return BPF_PROG_TYPE_SOCKET_FILTER;
	case BPFRT_PROG_TRACEPOINT: return BPF_PROG_TYPE_TRACEPOINT;
	case BPFRT_PROG_RAW_TRACEPOINT: return BPF_PROG_TYPE_RAW_TRACEPOINT;
	case BPFRT_PROG_KPROBE:
	case BPFRT_PROG_KRETPROBE:
	case BPFRT_PROG_UPROBE: return BPF_PROG_TYPE_KPROBE;
	case BPFRT_PROG_XDP: *at = BPF_XDP; return BPF_PROG_TYPE_XDP;
	case BPFRT_PROG_SYSCALL: return BPF_PROG_TYPE_SYSCALL;
	default: return -1;
	}
}

/* Linux wants BTF func_info for programs with subprograms: one BTF of
 * static functions f0..f(N-1) returning int, loaded once, and each
 * subprogram start mapped to one of them. */
#define MAX_FUNCS 16
static int btf_fd = -1;
static uint32_t btf_func_id[MAX_FUNCS];

static int funcs_btf(void)
{
	struct btf *btf;
	int int_id, proto;

	if (btf_fd >= 0)
		return btf_fd;
	btf = btf__new_empty();
	if (!btf)
		return -1;
	int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	proto = btf__add_func_proto(btf, int_id);
	for (int i = 0; i < MAX_FUNCS; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", i);
		btf_func_id[i] = (uint32_t)btf__add_func(btf, name, BTF_FUNC_STATIC, proto);
	}
	if (!btf__load_into_kernel(btf))
		btf_fd = dup(btf__fd(btf));
	btf__free(btf);
	return btf_fd;
}

/* Subprogram starts (0 first, ascending) of p; their count. */
static int subprog_starts(const struct vg_prog *p, uint32_t *starts)
{
	int n = 1;

	starts[0] = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->insns[i];
		int64_t t;

		if (!((in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) ||
		      (insn_is_lddw(in) && in->src_reg == BPF_PSEUDO_FUNC)))
			continue;
		t = (int64_t)i + 1 + in->imm;
		if (t <= 0 || t >= (int64_t)p->n)
			continue;
		for (int k = 0; k <= n; k++) {
			if (k == n) {
				if (n < MAX_FUNCS)
					starts[n++] = (uint32_t)t;
				break;
			}
			if (starts[k] == (uint32_t)t)
				break;
		}
	}
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && starts[b - 1] > starts[b]; b--) {
			uint32_t x = starts[b];

			starts[b] = starts[b - 1];
			starts[b - 1] = x;
		}
	return n;
}

static char klog[1 << 20];
static const char *kreason;   /* the log's last line before the statistics */

/* Linux calls kfuncs by their BTF id in vmlinux (BPF_PSEUDO_KFUNC_CALL);
 * bpfrt's ids are its own. The kernel's call of the kfunc bpfrt registered
 * under id, if the running kernel has one of that name: 1 and *btf_id. */
static bool kernel_kfunc(int32_t id, int32_t *btf_id)
{
	static struct btf *vmlinux;
	static bool tried;
	BPFRT_OPTS(bpfrt_helper_info, h);
	int32_t k;

	if (!tried) {
		tried = true;
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux || libbpf_get_error(vmlinux))
			vmlinux = NULL;
	}
	if (!vmlinux || bpfrt_helper_info((uint32_t)id, &h) || !h.name)
		return false;
	k = btf__find_by_name_kind(vmlinux, h.name, BTF_KIND_FUNC);
	if (k <= 0)
		return false;
	*btf_id = k;
	return true;
}

/* 1 accepted, 0 rejected (klog, kreason), -1 not comparable. */
static int kernel_verdict_of(const struct vg_prog *p)
{
	static struct bpf_insn insns[VG_MAX_INSNS];
	enum bpf_attach_type at;
	int type = kernel_type(p->kind, &at), fd;
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = klog, .log_size = sizeof(klog),
		    .log_level = 1);
	char *end;

	if (type < 0)
		return -1;
	po.expected_attach_type = at;
	if (p->kind == BPFRT_PROG_SYSCALL)
		po.prog_flags = BPF_F_SLEEPABLE;
	memcpy(insns, p->insns, p->n * sizeof(insns[0]));
	for (uint32_t i = 0; i < p->n; i++) {
		struct bpf_insn *in = &insns[i];
		int32_t k;

		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg ||
		    in->imm < BPFRT_KFUNC_ID_BASE)
			continue;
		if (!kernel_kfunc(in->imm, &k))
			return -1; /* a kfunc of bpfrt's own: nothing to compare */
		in->src_reg = BPF_PSEUDO_KFUNC_CALL;
		in->imm = k;
	}
	for (uint32_t r = 0; r < p->nref; r++) {
		struct bpf_insn *in = &insns[p->refs[r].insn];

		in[0].src_reg = p->refs[r].kind;
		in[0].imm = vg_kernel_map_fd(p->ref_map[r], p->kind);
		in[1].imm = p->refs[r].kind == BPF_PSEUDO_MAP_VALUE ? (int32_t)p->refs[r].off : 0;
	}
	{
		static struct bpf_func_info fi[MAX_FUNCS];
		uint32_t starts[MAX_FUNCS];
		int n = subprog_starts(p, starts);

		if (n > 1 && funcs_btf() >= 0) {
			for (int i = 0; i < n; i++)
				fi[i] = (struct bpf_func_info){ starts[i], btf_func_id[i] };
			po.prog_btf_fd = btf_fd;
			po.func_info = fi;
			po.func_info_cnt = (uint32_t)n;
			po.func_info_rec_size = sizeof(fi[0]);
		}
	}
	klog[0] = 0;
	fd = bpf_prog_load(type, "vdiff", "GPL", insns, p->n, &po);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno == E2BIG || errno == ENOSPC)
		return -1; /* the kernel's log or its limits, not a verdict */
	/* the reason is the line before "processed N insns" (or the last) */
	end = klog + strlen(klog);
	while (end > klog && end[-1] == '\n')
		*--end = 0;
	{
		char *last = strrchr(klog, '\n');

		if (last && strstr(last, "processed ")) {
			*last = 0;
			last = strrchr(klog, '\n');
		}
		kreason = last ? last + 1 : klog;
		if (!strncmp(kreason, "processed ", 10))
			return -2; /* verified, then failed (errno): not a verdict */
	}
	return 0;
}

/* ---- recorded differences ------------------------------------------------------------ */

static bool has_insn(const struct vg_prog *p, bool (*fn)(const struct bpf_insn *));

static bool is_tail_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL) && !in->src_reg && in->imm == BPF_FUNC_tail_call;
}

static bool is_helper_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL) && !in->src_reg;
}

static bool any(const struct vg_prog *p)
{
	return true;
}

static bool program_tail_calls(const struct vg_prog *p)
{
	return has_insn(p, is_tail_call);
}

static bool program_calls_helpers(const struct vg_prog *p)
{
	return has_insn(p, is_helper_call);
}

static bool uses_locked_map(const struct vg_prog *p)
{
	for (uint32_t i = 0; i < p->nref; i++)
		if (p->ref_map[i] == VM_LOCKED)
			return true;
	return false;
}

static bool is_snprintf(const struct bpf_insn *in)
{
	return is_helper_call(in) && in->imm == BPF_FUNC_snprintf;
}

static bool program_calls_snprintf(const struct vg_prog *p)
{
	return has_insn(p, is_snprintf);
}

static bool is_syscall(const struct vg_prog *p)
{
	return p->kind == BPFRT_PROG_SYSCALL;
}

/* ringbuf_reserve with a constant size above the 4096-byte ring */
static bool reserves_more_than_the_ring(const struct vg_prog *p)
{
	for (size_t i = 1; i < p->n; i++)
		if (is_helper_call(&p->insns[i]) && p->insns[i].imm == BPF_FUNC_ringbuf_reserve)
			for (size_t k = i; k-- > 0 && i - k < 4;)
				if (p->insns[k].code == (BPF_ALU64 | BPF_MOV | BPF_K) &&
				    p->insns[k].dst_reg == 2 && p->insns[k].imm > 4096)
					return true;
	return false;
}

/* A load from the context (r1 or the generator's copy in r6) at a field
 * Linux types as a pointer. */
static bool reads_linux_ctx_pointer(const struct vg_prog *p)
{
	static const int16_t skb[] = { 76, 80, 140, 144, 168 }, xdp[] = { 0, 4, 8 };
	const int16_t *f = p->kind == BPFRT_PROG_XDP ? xdp : skb;
	size_t nf = p->kind == BPFRT_PROG_XDP ? 3 : 5;

	if (p->kind != BPFRT_PROG_XDP && p->kind != BPFRT_PROG_SOCKET &&
	    p->kind != BPFRT_PROG_UNSPEC)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->insns[i];

		if (BPF_CLASS(in->code) != BPF_LDX || (in->src_reg != 1 && in->src_reg != 6))
			continue;
		for (size_t k = 0; k < nf; k++)
			if (in->off == f[k])
				return true;
	}
	return false;
}

/* The instructions of a verifier log ("N: (" lines) into set; with
 * last_segment, only those after the last "from A to B" (the walk that
 * failed, back to where it was pushed). */
static void log_insns(const char *log, uint8_t *set, size_t n, bool last_segment)
{
	const char *from = log;

	if (last_segment)
		for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (!strncmp(l, "from ", 5))
				from = l;
	for (const char *l = from; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *end;
		long v = strtol(l, &end, 10);

		if (end != l && end[0] == ':' && end[1] == ' ' && end[2] == '(' && v >= 0 &&
		    (size_t)v < n)
			set[v] = 1;
		if (last_segment && !strncmp(l, "from ", 5)) {
			/* the walk resumed at B */
			const char *to = strstr(l, " to ");

			if (to && (v = strtol(to + 4, &end, 10)) >= 0 && (size_t)v < n)
				set[v] = 1;
		}
	}
}

/* The instructions bpfrt's walk reaches (its level-2 log names every insn
 * it processes) into ours; false when unknown (the log did not fit). */
static bool bpfrt_walk(const struct vg_prog *p, uint8_t *ours)
{
	static char log[1 << 23];
	struct bpfrt_prog *prog = NULL;
	BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log, .log_size = sizeof(log),
		   .log_level = 2, .ctx_size = p->ctx_size);
	int err;

	if (vg_load(p, false, &prog, NULL, 0))
		return false;
	log[0] = 0;
	err = bpfrt_prog_verify(prog, &vo);
	bpfrt_prog_free(prog);
	if (err || strlen(log) >= sizeof(log) - 1)
		return false;
	memset(ours, 0, VG_MAX_INSNS);
	log_insns(log, ours, p->n, false);
	return true;
}

/* Some instruction of the walk where Linux failed is one bpfrt's walk
 * never reaches: bpfrt proved that path dead. */
static bool bpfrt_proves_dead(const struct vg_prog *p)
{
	static uint8_t linux_path[VG_MAX_INSNS], ours[VG_MAX_INSNS];

	if (!bpfrt_walk(p, ours))
		return false;
	memset(linux_path, 0, sizeof(linux_path));
	log_insns(klog, linux_path, p->n, true);
	for (size_t i = 0; i < p->n; i++)
		if (linux_path[i] && !ours[i])
			return true;
	return false;
}

/* Every callx is one bpfrt's walk never reaches. */
static bool callx_only_where_dead(const struct vg_prog *p)
{
	static uint8_t ours[VG_MAX_INSNS];

	if (!bpfrt_walk(p, ours))
		return false;
	for (size_t i = 0; i < p->n; i++)
		if (insn_is_callx(&p->insns[i]) && ours[i])
			return false;
	return true;
}

/* A helper call whose memory argument comes with a constant size 0 (the
 * size register's last write before the call is "mov rN, 0"). */
static bool zero_sized_memory_argument(const struct vg_prog *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->insns[i];
		struct bpfrt_helper_info h_info = { .sz = sizeof(h_info) };
		const struct bpfrt_helper_info *h = &h_info;

		if (!is_helper_call(in) || bpfrt_helper_info((uint32_t)in->imm, &h_info))
			continue;
		for (int a = 0; a < 4; a++) {
			int size_reg = a + 2;

			if (h->args[a] != BPFRT_ARG_PTR_TO_MEM && h->args[a] != BPFRT_ARG_PTR_TO_UNINIT_MEM)
				continue;
			for (size_t k = i; k-- > 0 && i - k <= 16;) {
				const struct bpf_insn *w = &p->insns[k];

				if (w->dst_reg != size_reg || BPF_CLASS(w->code) == BPF_JMP ||
				    BPF_CLASS(w->code) == BPF_JMP32 || BPF_CLASS(w->code) == BPF_ST ||
				    BPF_CLASS(w->code) == BPF_STX)
					continue;
				if (w->code == (BPF_ALU64 | BPF_MOV | BPF_K) && w->imm == 0)
					return true;
				break;
			}
		}
	}
	return false;
}

static bool kind_ctx_differs(const struct vg_prog *p)
{
	/* bpfrt's contexts are plain memory of the kind's size; Linux's
	 * are typed structures (field by field, some rewritten) */
	return true;
}

static bool direct_value_of_big_array(const struct vg_prog *p)
{
	for (uint32_t r = 0; r < p->nref; r++)
		if (p->refs[r].kind == BPF_PSEUDO_MAP_VALUE && p->ref_map[r] != VM_KIND_PROGS &&
		    tmaps[p->ref_map[r]].max > 1)
			return true;
	return false;
}

struct diff_class {
	const char *name;
	const char *kmsg;                 /* substring of Linux's reason, or NULL */
	bool (*pred)(const struct vg_prog *p);
	const char *why;
	uint64_t count;
	bool shown;
	bool known_bug;
};

static struct diff_class classes[] = {
	{ "a path bpfrt proves dead", NULL, bpfrt_proves_dead,
	  "the walk where Linux fails goes through an instruction bpfrt's walk never "
	  "reaches: bpfrt's tracking is more precise there (constants stored to the stack "
	  "in 1/2/4-byte pieces, shifts by a known register, comparisons of a register "
	  "with itself), so the failing path is dead for bpfrt" },
	{ "callx in dead code", "unknown opcode 8d", callx_only_where_dead,
	  "Linux refuses any callx before its walk; bpfrt refuses a callx its walk "
	  "reaches, and one only on paths it proves dead never runs" },
	{ "zero-sized memory argument", "expected=fp, pkt", zero_sized_memory_argument,
	  "with a constant size 0 bpfrt lets any value stand for a helper's memory "
	  "argument (no byte is read or written); Linux still wants a memory pointer" },
	{ "a spin lock map without BTF", "has to have BTF in order to use bpf_spin_lock",
	  uses_locked_map,
	  "Linux finds a map value's bpf_spin_lock in the map's BTF, and the kernel's "
	  "copies of the test maps are made without one; bpfrt's \"locked\" map has its lock "
	  "at 4 (tests/verifier/progs/vspinlock.bpf.c compares with BTF)" },
	{ "r2 is the context length", "R2 !read_ok", any,
	  "bpfrt's run contract passes r2 = the context length (a scalar); Linux starts "
	  "with r2 uninitialised" },
	{ "tail-call stack cap on allocated frames",
	  "tail_calls are not allowed when call stack of previous frames", program_tail_calls,
	  "both cap the frames below a tail-calling subprogram at 256 bytes; bpfrt measures "
	  "the frames it allocates (each subprogram's walked depth, rounded to 16), Linux "
	  "its own stack depths, larger where bpfrt proves paths dead" },
	{ "r0 after a tail call", "R0 !read_ok", program_tail_calls,
	  "bpfrt defines a failed tail call's r0 (-ENOENT, an unknown scalar to the "
	  "verifier); Linux leaves r0 uninitialised after bpf_tail_call" },
	{ "context layout", "invalid bpf_context access", kind_ctx_differs,
	  "bpfrt's context of each kind is plain memory of the kind's size (read-only "
	  "except unspec/syscall); Linux's are typed structures checked field by field "
	  "(__sk_buff, xdp_md, pt_regs, tracepoint records, syscall args) - the checking "
	  "interpreter confirms every access stays inside bpfrt's context" },
	{ "helper not offered to the type", "program of this type cannot use helper",
	  program_calls_helpers,
	  "bpfrt registers its helpers for every program kind; Linux offers each helper "
	  "to some program types only" },
	{ "helper unknown to the type", "unknown func", program_calls_helpers,
	  "bpfrt registers its helpers for every program kind; Linux offers each helper "
	  "to some program types only" },
	{ "snprintf format", "R3 type=scalar expected=map_value", program_calls_snprintf,
	  "bpfrt's snprintf and trace_vprintk read their format through probe_read (any "
	  "value is safe: a bad address gives -EFAULT); Linux requires a constant "
	  "string in a read-only map" },
	{ "helper not for the type", "not supported for program type", program_calls_helpers,
	  "bpfrt registers its helpers for every program kind; Linux offers each helper "
	  "to some program types only" },
	{ "ringbuf reserve larger than the ring", NULL, reserves_more_than_the_ring,
	  "bpfrt knows a reservation larger than the ring always fails (r0 = NULL, no "
	  "reference); Linux tracks a reference that the NULL check must release" },
	{ "syscall programs are sleepable in Linux", "Sleepable programs can only use", is_syscall,
	  "Linux's syscall programs must be sleepable, and sleepable programs may not use "
	  "prog arrays (no tail calls); bpfrt's syscall kind runs like unspec, where tail "
	  "calls are allowed" },
	{ "pointer fields of Linux's context", NULL, reads_linux_ctx_pointer,
	  "Linux's __sk_buff and xdp_md have pointer fields (data, data_end, data_meta, "
	  "flow_keys, sk) that bpfrt's plain-memory context gives as numbers; what Linux "
	  "rejects is a use of such a pointer" },
	{ "subtracting from a stack pointer", "subtraction from stack pointer prohibited", any,
	  "Linux refuses rX -= K on a stack pointer; bpfrt computes the pointer and checks "
	  "every access through it against the frame" },
	{ "misaligned stack access", "misaligned stack access", any,
	  "bpfrt tracks the stack byte by byte (spills are destroyed by any overlapping "
	  "write) and its JITs' loads and stores need no alignment; Linux requires stack "
	  "accesses aligned to their size" },
	{ "Linux's internal error", "verifier bug", any,
	  "Linux reports an internal error of its own (\"verifier bug\") after the checks, "
	  "not a verdict on the program; bpfrt's verdict stands, and the checked run "
	  "confirms it" },
	{ "direct value address of an array element", "invalid access to map value pointer",
	  direct_value_of_big_array,
	  "bpfrt resolves lddw map-value (BPF_PSEUDO_MAP_VALUE) to element 0 of any array; "
	  "Linux only for one-entry arrays (global data); the value is in bounds either way" },
};
#define NCLASSES (sizeof(classes) / sizeof(classes[0]))

static bool has_insn(const struct vg_prog *p, bool (*fn)(const struct bpf_insn *))
{
	for (size_t i = 0; i < p->n; i++)
		if (fn(&p->insns[i]))
			return true;
	return false;
}

static struct diff_class *classify(const struct vg_prog *p)
{
	for (size_t c = 0; c < NCLASSES; c++)
		if ((!classes[c].kmsg || strstr(kreason, classes[c].kmsg)) &&
		    (!classes[c].pred || classes[c].pred(p)))
			return &classes[c];
	return NULL;
}

/* ---- the loop ----------------------------------------------------------------------- */

struct dstats {
	uint64_t programs, not_comparable, kernel_errors, both_accept, both_reject, bpfrt_stricter;
	uint64_t linux_stricter, recorded, known_bugs, bugs, run;
};

static void report_bug(const struct vg_prog *p, const char *what, const char *detail)
{
	tl_fail(__FILE__, __LINE__, "program %" PRIu64 " of seed %" PRIu64 " (BPFRT_DIFF_SEED=%"
		PRIu64 " BPFRT_DIFF_ONE=%" PRIu64 "): %s: %s", vg_cur_index, vg_cur_seed,
		vg_cur_seed, vg_cur_index, what, detail);
	vg_print(p, stderr);
	fprintf(stderr, "# Linux's log:\n%s\n", klog);
}

static void diff_one(struct vg_prog *p, struct dstats *s, bool show)
{
	struct bpfrt_prog *prog = NULL;
	int lx, ours;
	uint64_t r0;

	vg_program(p, -1);
	if (fz(3) == 0)
		vg_mutate(p);
	s->programs++;
	lx = kernel_verdict_of(p);
	if (lx == -2) {
		s->kernel_errors++;
		return;
	}
	if (lx < 0) {
		s->not_comparable++;
		return;
	}
	vg_cur_prog = p;
	ours = vg_load(p, false, &prog, NULL, 0) == 0;
	if (show && getenv("BPFRT_DIFF_LOG") && prog) {
		static char log[1 << 22];
		BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log,
			   .log_size = sizeof(log), .log_level = 2,
			   .ctx_size = p->ctx_size);

		bpfrt_prog_verify(prog, &vo);
		printf("# bpfrt's log:\n%s\n", log);
	}
	if (show) {
		vg_print(p, stdout);
		printf("# bpfrt: %s; Linux: %s\n", ours ? "accepts" : bpfrt_last_error(),
		       lx ? "accepts" : kreason);
	}
	if (ours == lx) {
		s->both_accept += ours;
		s->both_reject += !ours;
	} else if (!ours) {
		s->bpfrt_stricter++;
	} else {
		struct diff_class *c;
		int err;

		s->linux_stricter++;
		vg_reset_maps();
		err = vg_run_checked(prog, p->kind, &r0);
		if (err != -ENOTSUP)
			s->run++;
		if (err && err != -ENOTSUP) {
			s->bugs++;
			report_bug(p, "bpfrt accepts, Linux rejects, and the checked run fails",
				   bpfrt_last_error());
		} else if ((c = classify(p))) {
			s->recorded += !c->known_bug;
			s->known_bugs += c->known_bug;
			c->count++;
			if (getenv("BPFRT_DIFF_SHOW") && !c->shown) {
				c->shown = true;
				printf("# class '%s', e.g. program %" PRIu64 ":\n", c->name, vg_cur_index);
				vg_print(p, stdout);
				printf("# Linux: %s\n", kreason);
			}
		} else {
			s->bugs++;
			report_bug(p, "bpfrt accepts, Linux rejects (no recorded class)", kreason);
		}
	}
	if (prog)
		bpfrt_prog_free(prog);
	vg_cur_prog = NULL;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

TEST(random_programs_bpfrt_accepts_linux_rejects_only_as_recorded)
{
	const char *secs_env = getenv("BPFRT_DIFF_SECONDS"), *seed_env = getenv("BPFRT_DIFF_SEED");
	const char *count_env = getenv("BPFRT_DIFF_PROGRAMS"), *one_env = getenv("BPFRT_DIFF_ONE");
	uint64_t seed = !seed_env ? 1 : !strcmp(seed_env, "time") ? (uint64_t)time(NULL)
							      : strtoull(seed_env, NULL, 0);
	uint64_t max = count_env ? strtoull(count_env, NULL, 0) : secs_env ? UINT64_MAX
		       : getenv("BPFRT_CROSS_QEMU") ? 500 : TL_ASAN ? 1500 : 4000;
	double secs = secs_env ? atof(secs_env) : 1e9, el = 0;
	struct dstats s = { 0 };
	struct vg_prog *p = calloc(1, sizeof(*p));
	struct timespec t0, t1;
	int err;

	if (geteuid() != 0)
		SKIP("needs root to load programs into the kernel");
	libbpf_set_print(quiet);
	vg_init();
	err = vg_kernel_maps_init();
	if (err)
		SKIP("cannot create kernel maps (BPF unavailable?): %s", strerror(-err));
	vg_report_deaths();
	vg_cur_seed = seed;
	if (one_env) {
		vg_cur_index = strtoull(one_env, NULL, 0);
		vg_seed(seed, vg_cur_index);
		diff_one(p, &s, true);
		free(p);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < max && el < secs; i++) {
		vg_cur_index = i;
		vg_seed(seed, i);
		diff_one(p, &s, false);
		if ((i & 63) == 63) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			el = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		}
		if (s.bugs >= 5)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	el = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# diff seed %" PRIu64 ": %" PRIu64 " programs in %.1f s (%" PRIu64 " of kinds "
	       "Linux cannot load without an attach target, %" PRIu64 " that Linux verified "
	       "but then failed to load); agree: %" PRIu64 " both accept, %"
	       PRIu64 " both reject; bpfrt stricter %" PRIu64 "; Linux stricter %" PRIu64
	       " (%" PRIu64 " run in the %s interpreter): %" PRIu64 " recorded differences, %"
	       PRIu64 " known bugs being fixed, %" PRIu64 " bugs\n", seed, s.programs, el,
	       s.not_comparable, s.kernel_errors, s.both_accept, s.both_reject, s.bpfrt_stricter,
	       s.linux_stricter, s.run, vg_checked_available ? "checking" : "plain",
	       s.recorded, s.known_bugs, s.bugs);
	for (size_t c = 0; c < NCLASSES; c++)
		if (classes[c].count)
			printf("#   %" PRIu64 " x %s%s: %s\n", classes[c].count, classes[c].name,
			       classes[c].known_bug ? " (bug)" : "", classes[c].why);
	CHECK(s.both_accept > 0, "Linux and bpfrt never both accepted a program");
	free(p);
}
