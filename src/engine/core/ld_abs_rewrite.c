/* After validation (and verification), each legacy packet load
 * (BPF_LD | BPF_ABS / BPF_IND) becomes a call of an internal helper, as
 * Linux's verifier rewrites them (its gen_ld_abs): so the interpreter,
 * the checking interpreter and the three JITs run them with no opcode of
 * their own.
 *
 *   r2 = src; r2 += imm        (IND)    or    r2 = imm   (ABS)
 *   r1 = r6
 *   r3 = size
 *   call skb_load_helper       (helpers/skb_load.c)
 *   if r0 s>= 0 goto +2
 *   w0 = 0                     the load failed: the function returns 0
 *   exit
 *
 * The helper takes an id of the program's helper snapshot that its
 * instructions do not call (the highest free one below the kfunc ids), so
 * no registered helper moves. Everything that counts instructions follows
 * the new layout: jump and call offsets, subprogram bounds, map
 * references, line info, CO-RE poison records. */
#include "core/prog.h"
#include "core/error.h"
#include "helpers/skb_load.h"
#include "isa/isa.h"

#include <stdlib.h>
#include <string.h>

#define LD_ABS_SEQ_MAX 8

static bool is_ld_abs(const struct bpf_insn *insn)
{
	return insn_class(insn) == BPF_LD &&
	       (insn_mode(insn) == BPF_ABS || insn_mode(insn) == BPF_IND);
}

static struct bpf_insn mk(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off,
			      .imm = imm };
	return i;
}

static uint32_t emit_seq(const struct bpf_insn *ld, uint32_t helper_id, struct bpf_insn *out)
{
	static const int32_t sizes[4] = { [BPF_W >> 3] = 4, [BPF_H >> 3] = 2, [BPF_B >> 3] = 1 };
	uint32_t n = 0;

	if (insn_mode(ld) == BPF_IND) {
		if (ld->src_reg != BPF_R2)
			out[n++] = mk(BPF_ALU64 | BPF_MOV | BPF_X, BPF_R2, ld->src_reg, 0, 0);
		if (ld->imm)
			out[n++] = mk(BPF_ALU64 | BPF_ADD | BPF_K, BPF_R2, 0, 0, ld->imm);
	} else {
		out[n++] = mk(BPF_ALU64 | BPF_MOV | BPF_K, BPF_R2, 0, 0, ld->imm);
	}
	out[n++] = mk(BPF_ALU64 | BPF_MOV | BPF_X, BPF_R1, BPF_R6, 0, 0);
	out[n++] = mk(BPF_ALU64 | BPF_MOV | BPF_K, BPF_R3, 0, 0, sizes[insn_size(ld) >> 3]);
	out[n++] = mk(BPF_JMP | BPF_CALL, 0, 0, 0, (int32_t)helper_id);
	out[n++] = mk(BPF_JMP | BPF_JSGE | BPF_K, BPF_R0, 0, 2, 0);
	out[n++] = mk(BPF_ALU | BPF_MOV | BPF_K, BPF_R0, 0, 0, 0);
	out[n++] = mk(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

/* The id the helper goes under: one no instruction calls and the
 * snapshot leaves empty (a callx program's snapshot is the whole table:
 * the id must be unregistered there too). */
static int pick_helper_id(struct bpfrt_prog *prog, uint32_t *id)
{
	for (uint32_t i = BPFRT_KFUNC_ID_BASE - 1; i > 0; i--) {
		if (i < prog->helper_cnt && prog->helpers[i].fn)
			continue;
		*id = i;
		return 0;
	}
	return bpfrt_err(-E2BIG, "%s: no free helper id for the legacy packet loads' helper",
			 prog->name);
}

static int install_helper(struct bpfrt_prog *prog, uint32_t id)
{
	static const struct bpfrt_helper skb_load = {
		.name = "skb_load_helper", .fn = bpfrt_skb_load_helper, .ret = BPFRT_RET_INTEGER,
		.args = { BPFRT_ARG_PTR_TO_CTX, BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};

	if (id >= prog->helper_cnt) {
		struct bpfrt_helper *n = realloc(prog->helpers, (id + 1) * sizeof(*n));

		if (!n)
			return bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
		memset(n + prog->helper_cnt, 0, (id + 1 - prog->helper_cnt) * sizeof(*n));
		prog->helpers = n;
		prog->helper_cnt = id + 1;
	}
	prog->helpers[id] = skb_load;
	return 0;
}

/* A relative field (jump off, call or function-address imm) pointing at
 * old target t, for the instruction now at new_pc. */
static int relocate(const struct bpfrt_prog *prog, const uint32_t *map, uint32_t old_pc,
		    uint32_t new_pc, int64_t rel, bool wide, int64_t *out)
{
	int64_t t = (int64_t)old_pc + 1 + rel, nr;

	if (t < 0 || t > prog->insn_cnt)
		return bpfrt_err(-EINVAL, "%s: insn %u: jump target out of range", prog->name,
				 old_pc);
	nr = (int64_t)map[t] - (int64_t)new_pc - 1;
	if (!wide && (nr < INT16_MIN || nr > INT16_MAX))
		return bpfrt_err(-E2BIG, "%s: insn %u: the jump no longer reaches its target after "
				 "the legacy packet loads' rewrite (%lld insns)", prog->name, old_pc,
				 (long long)nr);
	*out = nr;
	return 0;
}

static int fix_branch(const struct bpfrt_prog *prog, const uint32_t *map, uint32_t old_pc,
		      uint32_t new_pc, struct bpf_insn *insn)
{
	uint8_t cls = insn_class(insn), op = insn_op(insn);
	int64_t nr;
	int err;

	if (insn_is_lddw(insn)) {
		if (insn->src_reg != BPF_PSEUDO_FUNC)
			return 0;
		if ((err = relocate(prog, map, old_pc, new_pc, insn->imm, true, &nr)))
			return err;
		insn->imm = (int32_t)nr;
		return 0;
	}
	if (cls != BPF_JMP && cls != BPF_JMP32)
		return 0;
	if (op == BPF_EXIT)
		return 0;
	if (op == BPF_CALL) {
		if (insn->src_reg != BPF_PSEUDO_CALL || insn_src(insn) != BPF_K)
			return 0;
		if ((err = relocate(prog, map, old_pc, new_pc, insn->imm, true, &nr)))
			return err;
		insn->imm = (int32_t)nr;
		return 0;
	}
	if (op == BPF_JA && cls == BPF_JMP32) { /* gotol: imm */
		if ((err = relocate(prog, map, old_pc, new_pc, insn->imm, true, &nr)))
			return err;
		insn->imm = (int32_t)nr;
		return 0;
	}
	if ((err = relocate(prog, map, old_pc, new_pc, insn->off, false, &nr)))
		return err;
	insn->off = (int16_t)nr;
	return 0;
}

int bpfrt_prog_rewrite_ld_abs(struct bpfrt_prog *prog)
{
	uint32_t n = prog->insn_cnt, cnt = 0, new_n = 0, id = 0;
	struct bpf_insn *out = NULL;
	uint32_t *map = NULL, *insn_subprog = NULL;
	int err;

	for (uint32_t pc = 0; pc < n; pc++)
		if (is_ld_abs(&prog->insns[pc]))
			cnt++;
		else if (insn_is_lddw(&prog->insns[pc]))
			pc++;
	if (!cnt)
		return 0;
	if ((err = pick_helper_id(prog, &id)) || (err = install_helper(prog, id)))
		return err;
	map = malloc((n + 1) * sizeof(*map));
	out = malloc(((size_t)n + (size_t)cnt * (LD_ABS_SEQ_MAX - 1)) * sizeof(*out));
	if (!map || !out) {
		err = bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
		goto out;
	}
	/* the new layout first, so branches can be pointed at it */
	for (uint32_t pc = 0; pc < n; pc++) {
		struct bpf_insn seq[LD_ABS_SEQ_MAX];

		map[pc] = new_n;
		new_n += is_ld_abs(&prog->insns[pc]) ? emit_seq(&prog->insns[pc], id, seq) : 1;
	}
	map[n] = new_n;
	for (uint32_t pc = 0; pc < n; pc++) {
		struct bpf_insn *at = &out[map[pc]];

		if (is_ld_abs(&prog->insns[pc])) {
			emit_seq(&prog->insns[pc], id, at);
			continue;
		}
		*at = prog->insns[pc];
		if (insn_is_lddw(at) && pc + 1 < n) {
			if ((err = fix_branch(prog, map, pc, map[pc], at)))
				goto out;
			out[map[pc + 1]] = prog->insns[pc + 1];
			pc++;
			continue;
		}
		if ((err = fix_branch(prog, map, pc, map[pc], at)))
			goto out;
	}
	insn_subprog = malloc((size_t)new_n * sizeof(*insn_subprog));
	if (!insn_subprog) {
		err = bpfrt_err(-ENOMEM, "%s: out of memory", prog->name);
		goto out;
	}
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		struct bpfrt_subprog *sp = &prog->subprogs[s];

		sp->start = map[sp->start];
		sp->end = map[sp->end];
		for (uint32_t pc = sp->start; pc < sp->end; pc++)
			insn_subprog[pc] = s;
	}
	for (uint32_t i = 0; i < prog->map_ref_cnt; i++)
		if (prog->map_refs[i].insn < n)
			prog->map_refs[i].insn = map[prog->map_refs[i].insn];
	for (uint32_t i = 0; i < prog->line_cnt; i++)
		if (prog->lines[i].insn < n)
			prog->lines[i].insn = map[prog->lines[i].insn];
	for (uint32_t i = 0; i < prog->core_poison_cnt; i++)
		if (prog->core_poisons[i].insn < n)
			prog->core_poisons[i].insn = map[prog->core_poisons[i].insn];
	for (uint32_t i = 0; i < prog->core_guard_cnt; i++)
		if (prog->core_guards[i].insn < n)
			prog->core_guards[i].insn = map[prog->core_guards[i].insn];
	free(prog->insns);
	free(prog->insn_subprog);
	prog->insns = out;
	prog->insn_cnt = new_n;
	prog->insn_subprog = insn_subprog;
	out = NULL;
out:
	free(out);
	free(map);
	return err;
}
