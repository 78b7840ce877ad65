/* Arch-neutral JIT passes (passes.h): the backends emit, this converges,
 * allocates and records. */
#include "jit/passes.h"

#include "core/error.h"
#include "core/extable.h"
#include "core/run.h"
#include "core/stack_abi.h"
#include "isa/isa.h"
#include "jit/execmem.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PASSES      40
#define LONG_AFTER      24  /* passes before every branch goes long to force convergence */
#define SEED_FUNC_CODE  64  /* first estimate of a prologue, and of the code after a body */
#define MAX_ATTEMPTS    4   /* allocations when the image grows at its address */

static int alloc_offsets(struct bpfrt_jit_offsets *o, uint32_t n, uint32_t ns)
{
	o->start = calloc(n + 1, sizeof(uint32_t));
	o->fstart = calloc(ns, sizeof(uint32_t));
	o->bend = calloc(ns, sizeof(uint32_t));
	return o->start && o->fstart && o->bend ? 0 : -ENOMEM;
}

static void free_offsets(struct bpfrt_jit_offsets *o)
{
	free(o->start);
	free(o->fstart);
	free(o->bend);
}

int bpfrt_jit_passes_init(struct bpfrt_jit_passes *jp, struct bpfrt_prog *prog,
			  const struct bpfrt_jit_arch *arch, uint8_t **code, size_t *len)
{
	uint32_t n = prog->insn_cnt, ns = prog->subprog_cnt;

	*jp = (struct bpfrt_jit_passes){
		.prog = prog,
		.insns = prog->insns,
		.n = n,
		.arch = arch,
		.code = code,
		.len = len,
		.tp_off = bpfrt_run_state_tp_offset(),
		.priv = prog->privstack,
		.priv_release = true,
	};
	if (!prog->subprogs || !ns || !n)
		return bpfrt_err(-EINVAL, "jit: %s: program was not validated", prog->name);
	if (jp->priv) {
		/* only a registered host sets prog->privstack */
		jp->priv_slots = bpfrt_privstack_slots_tp_offset();
		jp->priv_slot = (int32_t)(prog->privstack_id * sizeof(void *));
		jp->priv_claim_slow = (uintptr_t)bpfrt_stack_host->claim_slow;
		jp->priv_release_aborted = (uintptr_t)bpfrt_stack_host->release_aborted;
	}
	jp->callback = calloc(ns, sizeof(*jp->callback));
	jp->marks = calloc(n + 1, 1);
	if (arch->frame_size)
		jp->frames = calloc(ns, arch->frame_size);
	if (alloc_offsets(&jp->cur, n, ns) || alloc_offsets(&jp->prev, n, ns) || !jp->callback ||
	    !jp->marks || (arch->frame_size && !jp->frames))
		return bpfrt_err(-ENOMEM, "jit: out of memory");
	return 0;
}

void bpfrt_jit_passes_free(struct bpfrt_jit_passes *jp)
{
	free_offsets(&jp->cur);
	free_offsets(&jp->prev);
	free(jp->callback);
	free(jp->frames);
	free(jp->marks);
	free(jp->probes);
	jp->probes = NULL;
	jp->callback = NULL;
	jp->frames = NULL;
	jp->marks = NULL;
	if (jp->code) {
		free(*jp->code);
		*jp->code = NULL;
	}
}

/* Room for more bytes in the pass buffer. */
static int reserve(struct bpfrt_jit_passes *jp, size_t more)
{
	size_t len = *jp->len;

	if (len + more <= jp->cap)
		return 0;
	size_t cap = jp->cap ? jp->cap : 4096;

	while (cap < len + more)
		cap *= 2;
	uint8_t *p = realloc(*jp->code, cap);

	if (!p)
		return bpfrt_err(-ENOMEM, "jit: out of memory");
	*jp->code = p;
	jp->cap = cap;
	return 0;
}

/* execmem starts images at a random 16-byte offset; trap padding up to the
 * arch's alignment makes the code's cache-line layout, and so its speed,
 * the same for every load. Worst case while the address is unknown. */
static int emit_head_pad(struct bpfrt_jit_passes *jp)
{
	size_t align = jp->arch->image_align;
	int err;

	jp->head_pad = 0;
	if (align <= 1)
		return 0;
	if ((err = reserve(jp, align)))
		return err;
	jp->head_pad = jp->base ? (uint32_t)(-jp->base & (align - 1)) : (uint32_t)(align - 1);
	jp->arch->fill_traps(*jp->code, jp->head_pad);
	*jp->len = jp->head_pad;
	return 0;
}

static int emit_body(struct bpfrt_jit_passes *jp, const struct bpfrt_subprog *sp)
{
	const struct bpfrt_jit_arch *arch = jp->arch;
	int err;

	for (uint32_t pc = sp->start; pc < sp->end;) {
		int used;

		if ((err = reserve(jp, arch->max_insn_code)))
			return err;
		if (arch->pad_insn)
			arch->pad_insn(jp, pc);
		jp->cur.start[pc] = (uint32_t)*jp->len;
		jp->pc = pc;
		used = arch->emit_insn(jp, pc);
		if (jp->err)
			return jp->err;
		if (used < 1)
			return bpfrt_err(-EFAULT, "jit: insn %u: emitter consumed %d instructions",
					 pc, used);
		/* an lddw second slot or a fused instruction starts where
		 * its code would (empty) */
		for (int k = 1; k < used && pc + k < sp->end; k++)
			jp->cur.start[pc + k] = (uint32_t)*jp->len;
		pc += (uint32_t)used;
	}
	return 0;
}

static int emit_pass(struct bpfrt_jit_passes *jp)
{
	const struct bpfrt_jit_arch *arch = jp->arch;
	const struct bpfrt_prog *prog = jp->prog;
	int err;

	*jp->len = 0;
	jp->probe_cnt = 0;
	if ((err = emit_head_pad(jp)))
		return err;
	jp->cur.abort_off = 0;
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		if ((err = reserve(jp, 2 * arch->max_insn_code)))
			return err;
		jp->cur.fstart[s] = (uint32_t)*jp->len;
		jp->sub = s;
		jp->pc = prog->subprogs[s].start;
		arch->emit_prologue(jp, s);
		if (jp->err || (err = emit_body(jp, &prog->subprogs[s])))
			return jp->err ? jp->err : err;
		jp->cur.bend[s] = (uint32_t)*jp->len;
		if (s == 0 && jp->abort_stub) {
			if ((err = reserve(jp, arch->max_insn_code)))
				return err;
			jp->cur.abort_off = (uint32_t)*jp->len;
			arch->emit_abort_stub(jp);
			if (jp->err)
				return jp->err;
		}
	}
	jp->cur.start[prog->insn_cnt] = (uint32_t)*jp->len;
	/* the fixups of fault-safe loads, cold, after every function */
	for (uint32_t i = 0; i < jp->probe_cnt; i++) {
		if (!arch->emit_probe_fixup)
			return bpfrt_err(-EOPNOTSUPP, "jit: %s: this backend has no fault-safe loads",
					 prog->name);
		if ((err = reserve(jp, arch->max_insn_code)))
			return err;
		jp->probes[i].fixup_off = (uint32_t)*jp->len;
		arch->emit_probe_fixup(jp, &jp->probes[i]);
		if (jp->err)
			return jp->err;
	}
	jp->cur.len = *jp->len;
	if (*jp->len > UINT32_MAX / 2)
		return bpfrt_err(-E2BIG, "jit: native image too large");
	return 0;
}

static bool offsets_equal(const struct bpfrt_jit_passes *jp)
{
	const struct bpfrt_jit_offsets *a = &jp->cur, *b = &jp->prev;
	uint32_t n = jp->prog->insn_cnt, ns = jp->prog->subprog_cnt;

	return a->len == b->len && a->abort_off == b->abort_off &&
	       !memcmp(a->start, b->start, (n + 1) * sizeof(uint32_t)) &&
	       !memcmp(a->fstart, b->fstart, ns * sizeof(uint32_t)) &&
	       !memcmp(a->bend, b->bend, ns * sizeof(uint32_t));
}

static void swap_offsets(struct bpfrt_jit_passes *jp)
{
	struct bpfrt_jit_offsets t = jp->prev;

	jp->prev = jp->cur;
	jp->cur = t;
}

/* Emits until the offsets stop changing. On return the pass buffer holds
 * the image of the converged pass and jp->prev its offsets. */
static int converge(struct bpfrt_jit_passes *jp)
{
	int err;

	for (int pass = 0; pass < MAX_PASSES; pass++) {
		jp->force_long = pass >= LONG_AFTER;
		if ((err = emit_pass(jp)))
			return err;
		bool done = offsets_equal(jp);

		swap_offsets(jp);
		if (done)
			return 0;
	}
	return bpfrt_err(-EFAULT, "jit: %s: code size did not converge", jp->prog->name);
}

/* Starting estimate: every instruction long, so the first real pass
 * mostly shrinks distances. */
static void seed_offsets(struct bpfrt_jit_passes *jp)
{
	const struct bpfrt_prog *prog = jp->prog;
	struct bpfrt_jit_offsets *o = &jp->prev;
	uint32_t pos = 0;

	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		const struct bpfrt_subprog *sp = &prog->subprogs[s];

		o->fstart[s] = pos;
		pos += SEED_FUNC_CODE;
		for (uint32_t pc = sp->start; pc < sp->end; pc++) {
			o->start[pc] = pos;
			pos += jp->arch->seed_insn_code;
		}
		o->bend[s] = pos;
		if (s == 0)
			o->abort_off = pos;
		pos += SEED_FUNC_CODE;
	}
	o->start[prog->insn_cnt] = pos;
	o->len = (size_t)-1;
}

/* prog->jit_insn_off in jit.h's layout, relative to the first function. */
static int record_offsets(struct bpfrt_jit_passes *jp)
{
	struct bpfrt_prog *prog = jp->prog;
	uint32_t *off = calloc(bpfrt_jit_off_entries(prog), sizeof(uint32_t));

	if (!off)
		return bpfrt_err(-ENOMEM, "jit: out of memory");
	for (uint32_t i = 0; i <= prog->insn_cnt; i++)
		off[i] = jp->prev.start[i] - jp->head_pad;
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		off[BPFRT_JIT_FUNC_START(prog, s)] = jp->prev.fstart[s] - jp->head_pad;
		off[BPFRT_JIT_BODY_END(prog, s)] = jp->prev.bend[s] - jp->head_pad;
	}
	prog->jit_insn_off = off;
	return 0;
}

/* Allocates the image for the converged size and, if the code depends on
 * its address, converges again there. Shrinking keeps it in the
 * allocation; growth means starting over with a smaller try (arch->shrink). */
static int place(struct bpfrt_jit_passes *jp, struct bpfrt_execmem **memp)
{
	const char *name = jp->prog->name;
	int err;

	for (int attempt = 1;; attempt++) {
		size_t want = jp->prev.len;
		struct bpfrt_execmem *mem = bpfrt_execmem_alloc(want);

		if (!mem)
			return bpfrt_err(errno ? -errno : -ENOMEM,
					 "jit: %s: cannot allocate %zu bytes of executable memory",
					 name, want);
		*memp = mem;
		jp->base = (uint64_t)(uintptr_t)bpfrt_execmem_addr(mem);
		if (!jp->arch->addr_dependent)
			return 0;
		if ((err = converge(jp)))
			return err;
		if (jp->prev.len <= want)
			return 0;
		bpfrt_execmem_free(mem);
		*memp = NULL;
		if (!jp->arch->shrink)
			return bpfrt_err(-EFAULT, "jit: %s: image grew at its address", name);
		jp->arch->shrink(jp);
		if (attempt == MAX_ATTEMPTS)
			return bpfrt_err(-EFAULT, "jit: %s: image keeps growing", name);
	}
}

void bpfrt_jit_probe_load(struct bpfrt_jit_passes *jp, uint32_t insn_off, uint32_t resume_off,
			  uint32_t reg)
{
	if (jp->probe_cnt == jp->probe_cap) {
		uint32_t cap = jp->probe_cap ? 2 * jp->probe_cap : 16;
		struct bpfrt_jit_probe *p = realloc(jp->probes, cap * sizeof(*p));

		if (!p) {
			bpfrt_jit_fail(jp, -ENOMEM, "out of memory");
			return;
		}
		jp->probes = p;
		jp->probe_cap = cap;
	}
	jp->probes[jp->probe_cnt++] = (struct bpfrt_jit_probe){
		.insn_off = insn_off, .resume_off = resume_off, .reg = reg,
	};
}

/* The exception table of the image's fault-safe loads (core/extable.h),
 * registered now that the code is in place; the program owns it. */
static int publish_extable(struct bpfrt_jit_passes *jp)
{
	struct bpfrt_extable *tab;
	int err;

	if (!jp->probe_cnt)
		return 0;
	if (!bpfrt_extable_ready())
		return bpfrt_err(-EOPNOTSUPP, "jit: %s: fault-safe loads need the host's fault "
				 "handler (host/signal/probe_fault.c), which is not installed",
				 jp->prog->name);
	tab = calloc(1, sizeof(*tab));
	if (tab)
		tab->entries = calloc(jp->probe_cnt, sizeof(*tab->entries));
	if (!tab || !tab->entries) {
		free(tab);
		return bpfrt_err(-ENOMEM, "jit: out of memory");
	}
	for (uint32_t i = 0; i < jp->probe_cnt; i++)
		tab->entries[i] = (struct bpfrt_extable_entry){
			.insn_off = jp->probes[i].insn_off, .fixup_off = jp->probes[i].fixup_off,
		};
	tab->cnt = jp->probe_cnt;
	tab->start = (uintptr_t)jp->base;
	tab->len = jp->prev.len;
	if ((err = bpfrt_extable_register(tab))) {
		bpfrt_extable_free(tab);
		return bpfrt_err(err, "jit: out of memory");
	}
	jp->prog->jit_extable = tab;
	return 0;
}

int bpfrt_jit_build(struct bpfrt_jit_passes *jp)
{
	struct bpfrt_prog *prog = jp->prog;
	struct bpfrt_execmem *mem = NULL;
	int err;

	seed_offsets(jp);
	if ((err = converge(jp)) || (err = place(jp, &mem)))
		goto fail;
	/* the copy also makes the code visible to instruction fetch */
	if ((err = bpfrt_execmem_copy(mem, 0, *jp->code, jp->prev.len))) {
		err = bpfrt_err(err, "jit: %s: cannot write the image", prog->name);
		goto fail;
	}
	if ((err = record_offsets(jp)))
		goto fail;
	if ((err = publish_extable(jp)))
		goto fail;
	prog->jit_mem = mem;
	prog->jit_len = jp->prev.len - jp->head_pad;
	prog->jit_func = (bpfrt_jit_fn)(uintptr_t)(jp->base + jp->head_pad);
	if (jp->priv)
		prog->privstack_abort = jp->base + jp->prev.abort_off;
	return 0;
fail:
	bpfrt_execmem_free(mem);
	return err;
}

int bpfrt_jit_compile(struct bpfrt_jit_passes *jp, struct bpfrt_prog *prog,
		      const struct bpfrt_jit_arch *arch, uint8_t **code, size_t *len)
{
	int err = bpfrt_jit_passes_init(jp, prog, arch, code, len);

	if (!err)
		err = bpfrt_jit_prescan(jp);
	if (!err && arch->prescan)
		err = arch->prescan(jp);
	if (!err)
		err = bpfrt_jit_build(jp);
	bpfrt_jit_passes_free(jp);
	return err;
}

void bpfrt_jit_fail(struct bpfrt_jit_passes *jp, int err, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (jp->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jp->err = bpfrt_err(err, "jit: insn %u: %s", jp->pc, msg);
}

/* ---- prescan helpers --------------------------------------------------- */

/* The subprogram starting where the local call or function reference at
 * pc points, or -1. */
static int callee_at(const struct bpfrt_jit_passes *jp, uint32_t pc, const struct bpf_insn *insn)
{
	int64_t t = (int64_t)pc + 1 + insn->imm;

	return t >= 0 && t < jp->n ? bpfrt_prog_subprog_at(jp->prog, (uint32_t)t) : -1;
}

int bpfrt_jit_prescan(struct bpfrt_jit_passes *jp)
{
	int err = bpfrt_jit_scan_branches(jp->prog, jp->marks, &jp->has_callx);

	if (err)
		return err;
	/* a function address is for C (a helper's callback): that
	 * subprogram runs on whatever stack its caller has */
	for (uint32_t pc = 0; pc < jp->n; pc++) {
		const struct bpf_insn *insn = &jp->insns[pc];

		if (!insn_is_lddw(insn))
			continue;
		if (insn->src_reg == BPF_PSEUDO_FUNC) {
			int s = callee_at(jp, pc, insn);

			if (s > 0)
				jp->callback[s] = true;
		}
		pc++;
	}
	/* callx can abort the run from any depth; a private stack's guard
	 * page can fault anywhere */
	jp->abort_stub = jp->has_callx || jp->priv;
	return 0;
}

void bpfrt_jit_frame(const struct bpfrt_jit_passes *jp, uint32_t s, struct bpfrt_jit_frame *f)
{
	const struct bpfrt_subprog *sp = &jp->prog->subprogs[s];
	const uint16_t r6_r9 = 1u << BPF_R6 | 1u << BPF_R7 | 1u << BPF_R8 | 1u << BPF_R9;
	const uint16_t r10 = 1u << BPF_R10;
	bool priv_main = jp->priv && s == 0;
	bool calls;
	uint16_t regs = bpfrt_jit_subprog_regs(jp->prog, sp, &calls);

	f->saves_all = s == 0 && (jp->has_callx || (jp->priv && jp->prog->subprog_cnt > 1));
	f->calls = calls || priv_main;
	if (jp->priv) {
		/* r10 comes from the caller as is, except in callbacks */
		f->sets_fp = jp->callback[s];
		f->stack = jp->callback[s] ? sp->chain_depth : 0;
	} else {
		f->sets_fp = sp->stack_depth || (regs & r10) || f->saves_all;
		f->stack = sp->stack_depth;
	}
	f->saved = (uint16_t)((regs & r6_r9) | (f->saves_all ? r6_r9 : 0) |
			      (f->sets_fp || priv_main ? r10 : 0));
	/* with a private stack the entry sp lives in the stack's C area */
	f->keeps_entry_sp = s == 0 && jp->has_callx && !jp->priv;
}

int bpfrt_jit_callee(struct bpfrt_jit_passes *jp, const struct bpf_insn *insn)
{
	int s = callee_at(jp, jp->pc, insn);

	if (s < 0)
		bpfrt_jit_fail(jp, -EINVAL, "%s to a non-subprogram",
			       insn_is_lddw(insn) ? "function reference" : "local call");
	return s;
}

bpfrt_helper_fn bpfrt_jit_helper(struct bpfrt_jit_passes *jp, const struct bpf_insn *insn)
{
	/* the program's snapshot: the interpreter calls the same function */
	const struct bpfrt_helper *h = insn->src_reg == 0
		? bpfrt_prog_helper(jp->prog, (uint32_t)insn->imm) : NULL;

	if (h)
		return h->fn;
	bpfrt_jit_fail(jp, -EINVAL, "call to unknown helper %d", insn->imm);
	return NULL;
}

int bpfrt_jit_scan_branches(const struct bpfrt_prog *prog, uint8_t *marks, bool *callx)
{
	const uint32_t n = prog->insn_cnt;

	*callx = false;
	for (uint32_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *insn = &prog->insns[pc];

		if (insn_is_lddw(insn)) {
			pc++;
			continue;
		}
		if (insn_is_branch(insn)) {
			int64_t t = insn_branch_target(insn, pc);

			if (t < 0 || t >= n)
				return bpfrt_err(-EINVAL, "jit: insn %u: jump out of range", pc);
			if (marks) {
				marks[t] |= BPFRT_JIT_TARGET;
				if (t <= pc)
					marks[t] |= BPFRT_JIT_LOOP;
			}
		}
		if (insn_is_callx(insn))
			*callx = true;
	}
	return 0;
}

uint16_t bpfrt_jit_subprog_regs(const struct bpfrt_prog *prog, const struct bpfrt_subprog *sp,
				bool *calls)
{
	uint16_t regs = 0;
	bool any_call = false;

	for (uint32_t pc = sp->start; pc < sp->end; pc++) {
		const struct bpf_insn *insn = &prog->insns[pc];

		if (insn->dst_reg < BPF_NREGS)
			regs |= (uint16_t)(1u << insn->dst_reg);
		if (!insn_is_lddw(insn) && !insn_is_call(insn) && insn->src_reg < BPF_NREGS)
			regs |= (uint16_t)(1u << insn->src_reg);
		if (insn_is_call(insn) || insn_is_callx(insn))
			any_call = true;
		if (insn_is_lddw(insn))
			pc++;
	}
	if (calls)
		*calls = any_call;
	return regs;
}

uint32_t bpfrt_jit_map_regs(uint16_t bpf_regs, const uint8_t *map)
{
	uint32_t native = 0;

	for (unsigned r = 0; r < BPF_NREGS; r++)
		if (bpf_regs & (1u << r))
			native |= 1u << map[r];
	return native;
}
