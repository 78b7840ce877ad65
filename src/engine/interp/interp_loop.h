/* The interpreter loop, included by interp.c once per variant (not a
 * standalone header). The includer defines INTERP_NAME (the function to
 * define), INTERP_COUNTED (0 or 1: count executed instructions) and
 * INTERP_CHECKED (0 or 1: the checking interpreter, interp/check.h: every
 * memory access, call argument and control transfer is checked against
 * the run's regions in bpfrt_run_state.check first). The checks are hooks
 * that expand to nothing when INTERP_CHECKED is 0, so the plain loop is
 * the same code as without them.
 *
 * Dispatch is threaded: every handler ends with its own indirect jump
 * through a 256-entry table indexed by the opcode byte, so the branch
 * predictor sees one jump site per handler. Opcodes the structural
 * validator rejects still land on a safe abort. */

static __attribute__((noinline, hot)) uint64_t
INTERP_NAME(const struct bpfrt_prog *prog, uint32_t entry, const uint64_t *args,
	    uint64_t *executed, uint8_t *stack, uint64_t fp, struct interp_frame *frames)
{
	/* 16 slots: a 4-bit register field can never index out of bounds,
	 * even if an out-of-range number slipped past validation. */
	uint64_t reg[16] = { 0 };
	/* The BPF stack is [stack, fp): the caller's native array, or the
	 * program's private stack; frames are carved from the top. frames[]
	 * (BPFRT_MAX_CALL_FRAMES - 1 saved callers) lives with it. */
	/* the program's snapshot of its helpers (core/env.h), as the JIT's */
	const struct bpfrt_helper *helpers = prog->helpers;
	uint32_t helper_cnt = prog->helper_cnt;
	const struct bpf_insn *insn = prog->insns + entry;
	unsigned int depth = 0; /* saved caller frames */
	bool rcu_held = false; /* this activation entered a read section */
	uint64_t count = 0;
	int abort_err;
	uint64_t abort_arg;
#if INTERP_CHECKED
	struct bpfrt_check_run *const cr = bpfrt_run_state.check;
	struct bpfrt_check_stack *const cs = cr->stack;
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define ALU_ENTRIES(name, op)                                                  \
	[BPF_ALU64 | (op) | BPF_K] = &&alu64_##name##_k,                       \
	[BPF_ALU64 | (op) | BPF_X] = &&alu64_##name##_x,                       \
	[BPF_ALU | (op) | BPF_K] = &&alu32_##name##_k,                         \
	[BPF_ALU | (op) | BPF_X] = &&alu32_##name##_x
#define JMP_ENTRIES(name, op)                                                  \
	[BPF_JMP | (op) | BPF_K] = &&jmp64_##name##_k,                         \
	[BPF_JMP | (op) | BPF_X] = &&jmp64_##name##_x,                         \
	[BPF_JMP32 | (op) | BPF_K] = &&jmp32_##name##_k,                       \
	[BPF_JMP32 | (op) | BPF_X] = &&jmp32_##name##_x
#define MEM_ENTRIES(size, sfx)                                                 \
	[BPF_LDX | BPF_MEM | (size)] = &&ldx_##sfx,                            \
	[BPF_ST | BPF_MEM | (size)] = &&st_##sfx,                              \
	[BPF_STX | BPF_MEM | (size)] = &&stx_##sfx
	static const void *const table[256] = {
		[0 ... 255] = &&bad_opcode,
		ALU_ENTRIES(add, BPF_ADD),
		ALU_ENTRIES(sub, BPF_SUB),
		ALU_ENTRIES(mul, BPF_MUL),
		ALU_ENTRIES(div, BPF_DIV),
		ALU_ENTRIES(or, BPF_OR),
		ALU_ENTRIES(and, BPF_AND),
		ALU_ENTRIES(lsh, BPF_LSH),
		ALU_ENTRIES(rsh, BPF_RSH),
		ALU_ENTRIES(mod, BPF_MOD),
		ALU_ENTRIES(xor, BPF_XOR),
		ALU_ENTRIES(mov, BPF_MOV),
		ALU_ENTRIES(arsh, BPF_ARSH),
		[BPF_ALU64 | BPF_NEG | BPF_K] = &&alu64_neg,
		[BPF_ALU | BPF_NEG | BPF_K] = &&alu32_neg,
		[BPF_ALU | BPF_END | BPF_TO_LE] = &&end_to_le,
		[BPF_ALU | BPF_END | BPF_TO_BE] = &&end_to_be,
		[BPF_ALU64 | BPF_END | BPF_TO_LE] = &&end_bswap,
		JMP_ENTRIES(jeq, BPF_JEQ),
		JMP_ENTRIES(jgt, BPF_JGT),
		JMP_ENTRIES(jge, BPF_JGE),
		JMP_ENTRIES(jset, BPF_JSET),
		JMP_ENTRIES(jne, BPF_JNE),
		JMP_ENTRIES(jsgt, BPF_JSGT),
		JMP_ENTRIES(jsge, BPF_JSGE),
		JMP_ENTRIES(jlt, BPF_JLT),
		JMP_ENTRIES(jle, BPF_JLE),
		JMP_ENTRIES(jslt, BPF_JSLT),
		JMP_ENTRIES(jsle, BPF_JSLE),
		[BPF_JMP | BPF_JA] = &&jmp_ja,
		[BPF_JMP32 | BPF_JA] = &&jmp_gotol,
		[BPF_JMP | BPF_JCOND] = &&jmp_may_goto,
		[BPF_JMP | BPF_CALL] = &&jmp_call,
		[BPF_JMP | BPF_CALL | BPF_X] = &&jmp_callx,
		[BPF_JMP | BPF_EXIT] = &&jmp_exit,
		MEM_ENTRIES(BPF_B, b),
		MEM_ENTRIES(BPF_H, h),
		MEM_ENTRIES(BPF_W, w),
		MEM_ENTRIES(BPF_DW, dw),
		[BPF_LDX | BPF_MEMSX | BPF_B] = &&ldxsx_b,
		[BPF_LDX | BPF_MEMSX | BPF_H] = &&ldxsx_h,
		[BPF_LDX | BPF_MEMSX | BPF_W] = &&ldxsx_w,
		/* fault-safe loads (the verifier's rewrite of loads through
		 * typed host pointers): 0 where the address faults */
		[BPF_LDX | BPFRT_PROBE_MEM | BPF_B] = &&ldx_probe_b,
		[BPF_LDX | BPFRT_PROBE_MEM | BPF_H] = &&ldx_probe_h,
		[BPF_LDX | BPFRT_PROBE_MEM | BPF_W] = &&ldx_probe_w,
		[BPF_LDX | BPFRT_PROBE_MEM | BPF_DW] = &&ldx_probe_dw,
		[BPF_LDX | BPFRT_PROBE_MEMSX | BPF_B] = &&ldxsx_probe_b,
		[BPF_LDX | BPFRT_PROBE_MEMSX | BPF_H] = &&ldxsx_probe_h,
		[BPF_LDX | BPFRT_PROBE_MEMSX | BPF_W] = &&ldxsx_probe_w,
		[BPF_STX | BPF_ATOMIC | BPF_W] = &&atomic_w,
		[BPF_STX | BPF_ATOMIC | BPF_DW] = &&atomic_dw,
		[BPF_LD | BPF_IMM | BPF_DW] = &&ld_imm64,
	};
#undef ALU_ENTRIES
#undef JMP_ENTRIES
#undef MEM_ENTRIES
#pragma GCC diagnostic pop

#define DST   reg[insn->dst_reg]
#define SRC   reg[insn->src_reg]
#define IMM   insn->imm
#define OFF   insn->off
#define IMM64 ((uint64_t)(int64_t)insn->imm)   /* sign-extended */
#define IMM32 ((uint32_t)insn->imm)
#if INTERP_CHECKED
/* Checking hooks: a failed check has written the report and aborted. */
#define CHECK_PC() do {                                                        \
	if (unlikely((uint64_t)(insn - prog->insns) >= prog->insn_cnt)) {      \
		bpfrt_check_control(prog, insn, "control left the program");   \
		goto check_failed;                                             \
	}                                                                      \
} while (0)
/* a BPF-to-BPF call must enter a subprogram at its first insn */
#define CHECK_CALL_TARGET(t) do {                                              \
	uint64_t t_ = (uint64_t)((t) - prog->insns);                           \
	if (unlikely(t_ >= prog->insn_cnt ||                                   \
		     prog->subprogs[prog->insn_subprog[t_]].start != t_)) {    \
		bpfrt_check_control(prog, insn, "call to no subprogram start"); \
		goto check_failed;                                             \
	}                                                                      \
} while (0)
#define CHECK_MEM(addr, size, access) do {                                     \
	if (unlikely(!bpfrt_check_access(cr, prog, insn, (addr), (size), (access)))) \
		goto check_failed;                                             \
} while (0)
#define CHECK_CALL(h) do {                                                     \
	if (unlikely(!bpfrt_check_call(cr, prog, insn, (h), &reg[BPF_R1])))    \
		goto check_failed;                                             \
} while (0)
#define CHECK_CALL_DONE(h) do {                                                \
	if (unlikely(!bpfrt_check_call_done(cr, prog, insn, (h), &reg[BPF_R1], \
					    reg[BPF_R0])))                     \
		goto check_failed;                                             \
	CHECK_CLOBBER(BPF_R1, BPF_R5);                                         \
} while (0)
/* Registers the verifier holds uninitialised here (caller-saved ones
 * after a call, a callee's or tail-call target's own at entry) get a
 * poison value (a non-canonical address) in verified programs, so a
 * program wrongly allowed to use one computes with garbage or is caught
 * dereferencing it instead of seeing what the plain interpreter left. */
#define CHECK_CLOBBER(first, last) do {                                        \
	if (prog->verified)                                                    \
		for (int r_ = (first); r_ <= (last); r_++)                     \
			reg[r_] = BPFRT_CHECK_POISON;                          \
} while (0)
#define CHECK_LDDW() do {                                                      \
	if (unlikely(!bpfrt_check_lddw(cr, prog, insn)))                       \
		goto check_failed;                                             \
} while (0)
/* The frame now running is [fp - its subprogram's depth, fp); entered:
 * none of its bytes are written yet. */
#define CHECK_FRAME_DEPTH()                                                    \
	(fp - prog->subprogs[prog->insn_subprog[insn - prog->insns]].stack_depth)
#define CHECK_FRAME_ENTER() bpfrt_check_frame_enter(cs, CHECK_FRAME_DEPTH(), fp)
#define CHECK_FRAME_RETURN() (cs->lo = CHECK_FRAME_DEPTH())
/* the context bound of the program whose code runs (a tail-call target
 * may have been verified for less) */
#define CHECK_SWITCH_PROG() bpfrt_check_set_prog(cr, prog)
#else
#define CHECK_PC() do { } while (0)
#define CHECK_CALL_TARGET(t) do { } while (0)
#define CHECK_MEM(addr, size, access) do { } while (0)
#define CHECK_CALL(h) do { } while (0)
#define CHECK_CALL_DONE(h) do { } while (0)
#define CHECK_CLOBBER(first, last) do { } while (0)
#define CHECK_LDDW() do { } while (0)
#define CHECK_FRAME_ENTER() do { } while (0)
#define CHECK_FRAME_RETURN() do { } while (0)
#define CHECK_SWITCH_PROG() do { } while (0)
#endif
#define DISPATCH() do {                                                        \
	if (INTERP_COUNTED)                                                    \
		count++;                                                       \
	CHECK_PC();                                                            \
	goto *table[insn->code];                                               \
} while (0)
#define NEXT() do { insn++; DISPATCH(); } while (0)
#define ABORT(err, arg) do { abort_err = (err); abort_arg = (arg); goto aborted; } while (0)
/* The program whose instructions run changes on tail calls and on returns
 * into a caller that a tail call left behind. */
#define INTERP_SWITCH_PROG(p) do {                                             \
	prog = (p);                                                            \
	helpers = prog->helpers;                                               \
	helper_cnt = prog->helper_cnt;                                         \
	bpfrt_run_state.cur_prog = prog;                                       \
	CHECK_SWITCH_PROG();                                                   \
} while (0)

	reg[BPF_R1] = args[0];
	reg[BPF_R2] = args[1];
	reg[BPF_R3] = args[2];
	reg[BPF_R4] = args[3];
	reg[BPF_R5] = args[4];
	reg[BPF_R10] = fp;
	DISPATCH();

	/* ---- ALU ---------------------------------------------------------- */
#define ALU_BINOP(name, op)                                                    \
alu64_##name##_k: DST = DST op IMM64; NEXT();                                  \
alu64_##name##_x: DST = DST op SRC; NEXT();                                    \
alu32_##name##_k: DST = (uint32_t)((uint32_t)DST op IMM32); NEXT();            \
alu32_##name##_x: DST = (uint32_t)((uint32_t)DST op (uint32_t)SRC); NEXT();
	ALU_BINOP(add, +)
	ALU_BINOP(sub, -)
	ALU_BINOP(mul, *)
	ALU_BINOP(or, |)
	ALU_BINOP(and, &)
	ALU_BINOP(xor, ^)
#undef ALU_BINOP

	/* Shift counts are masked to the operand width, immediates too. */
alu64_lsh_k: DST = DST << (IMM & 63); NEXT();
alu64_lsh_x: DST = DST << (SRC & 63); NEXT();
alu32_lsh_k: DST = (uint32_t)((uint32_t)DST << (IMM & 31)); NEXT();
alu32_lsh_x: DST = (uint32_t)((uint32_t)DST << (SRC & 31)); NEXT();
alu64_rsh_k: DST = DST >> (IMM & 63); NEXT();
alu64_rsh_x: DST = DST >> (SRC & 63); NEXT();
alu32_rsh_k: DST = (uint32_t)DST >> (IMM & 31); NEXT();
alu32_rsh_x: DST = (uint32_t)DST >> (SRC & 31); NEXT();
alu64_arsh_k: DST = (uint64_t)((int64_t)DST >> (IMM & 63)); NEXT();
alu64_arsh_x: DST = (uint64_t)((int64_t)DST >> (SRC & 63)); NEXT();
alu32_arsh_k: DST = (uint32_t)((int32_t)(uint32_t)DST >> (IMM & 31)); NEXT();
alu32_arsh_x: DST = (uint32_t)((int32_t)(uint32_t)DST >> (SRC & 31)); NEXT();

	/* off == 1 selects the signed forms (sdiv, smod). */
alu64_div_k: DST = div64(DST, IMM64, OFF == 1); NEXT();
alu64_div_x: DST = div64(DST, SRC, OFF == 1); NEXT();
alu32_div_k: DST = div32((uint32_t)DST, IMM32, OFF == 1); NEXT();
alu32_div_x: DST = div32((uint32_t)DST, (uint32_t)SRC, OFF == 1); NEXT();
alu64_mod_k: DST = mod64(DST, IMM64, OFF == 1); NEXT();
alu64_mod_x: DST = mod64(DST, SRC, OFF == 1); NEXT();
alu32_mod_k: DST = mod32((uint32_t)DST, IMM32, OFF == 1); NEXT();
alu32_mod_x: DST = mod32((uint32_t)DST, (uint32_t)SRC, OFF == 1); NEXT();

alu64_neg: DST = -DST; NEXT();
alu32_neg: DST = (uint32_t)-(uint32_t)DST; NEXT();

alu64_mov_k: DST = IMM64; NEXT();
alu32_mov_k: DST = IMM32; NEXT();
	/* off != 0 is movsx: sign-extend the low 8/16/32 bits of src. */
alu64_mov_x:
	if (likely(OFF == 0))
		DST = SRC;
	else if (OFF == 8)
		DST = (uint64_t)(int64_t)(int8_t)SRC;
	else if (OFF == 16)
		DST = (uint64_t)(int64_t)(int16_t)SRC;
	else if (OFF == 32)
		DST = (uint64_t)(int64_t)(int32_t)SRC;
	else
		goto bad_opcode;
	NEXT();
alu32_mov_x:
	if (likely(OFF == 0 || OFF == 32))
		DST = (uint32_t)SRC;
	else if (OFF == 8)
		DST = (uint32_t)(int32_t)(int8_t)SRC;
	else if (OFF == 16)
		DST = (uint32_t)(int32_t)(int16_t)SRC;
	else
		goto bad_opcode;
	NEXT();

	/* The host is little-endian: to-le only truncates, to-be swaps. */
end_to_le:
	switch (IMM) {
	case 16: DST = (uint16_t)DST; break;
	case 32: DST = (uint32_t)DST; break;
	case 64: break;
	default: goto bad_opcode;
	}
	NEXT();
end_to_be:
end_bswap:
	switch (IMM) {
	case 16: DST = __builtin_bswap16((uint16_t)DST); break;
	case 32: DST = __builtin_bswap32((uint32_t)DST); break;
	case 64: DST = __builtin_bswap64(DST); break;
	default: goto bad_opcode;
	}
	NEXT();

	/* ---- jumps -------------------------------------------------------- */
#define JMP_COND(name, op, t64, t32)                                           \
jmp64_##name##_k:                                                              \
	if ((t64)DST op (t64)IMM64)                                            \
		insn += OFF;                                                   \
	NEXT();                                                                \
jmp64_##name##_x:                                                              \
	if ((t64)DST op (t64)SRC)                                              \
		insn += OFF;                                                   \
	NEXT();                                                                \
jmp32_##name##_k:                                                              \
	if ((t32)(uint32_t)DST op (t32)IMM32)                                  \
		insn += OFF;                                                   \
	NEXT();                                                                \
jmp32_##name##_x:                                                              \
	if ((t32)(uint32_t)DST op (t32)(uint32_t)SRC)                          \
		insn += OFF;                                                   \
	NEXT();
	JMP_COND(jeq, ==, uint64_t, uint32_t)
	JMP_COND(jne, !=, uint64_t, uint32_t)
	JMP_COND(jgt, >, uint64_t, uint32_t)
	JMP_COND(jge, >=, uint64_t, uint32_t)
	JMP_COND(jlt, <, uint64_t, uint32_t)
	JMP_COND(jle, <=, uint64_t, uint32_t)
	JMP_COND(jsgt, >, int64_t, int32_t)
	JMP_COND(jsge, >=, int64_t, int32_t)
	JMP_COND(jslt, <, int64_t, int32_t)
	JMP_COND(jsle, <=, int64_t, int32_t)
	JMP_COND(jset, &, uint64_t, uint32_t)
#undef JMP_COND

jmp_ja:
	insn += OFF;
	NEXT();
jmp_gotol:
	insn += IMM;
	NEXT();
jmp_may_goto:
	/* the run's budget (core/run.h): spent, every may_goto jumps */
	if (unlikely(insn->src_reg != BPF_MAY_GOTO))
		goto bad_opcode;
	if (bpfrt_run_state.may_goto_left)
		bpfrt_run_state.may_goto_left--;
	else
		insn += OFF;
	NEXT();

	/* ---- memory ------------------------------------------------------- */
#define MEM_OPS(sfx, type)                                                     \
ldx_##sfx:                                                                     \
	CHECK_MEM(SRC + (int64_t)OFF, sizeof(type), BPFRT_CHECK_READ);         \
	DST = MEM_LOAD(type, SRC + (int64_t)OFF); NEXT();                      \
st_##sfx:                                                                      \
	CHECK_MEM(DST + (int64_t)OFF, sizeof(type), BPFRT_CHECK_WRITE);        \
	MEM_STORE(type, DST + (int64_t)OFF, IMM); NEXT();                      \
stx_##sfx:                                                                     \
	CHECK_MEM(DST + (int64_t)OFF, sizeof(type), BPFRT_CHECK_WRITE);        \
	MEM_STORE(type, DST + (int64_t)OFF, SRC); NEXT();
	MEM_OPS(b, uint8_t)
	MEM_OPS(h, uint16_t)
	MEM_OPS(w, uint32_t)
	MEM_OPS(dw, uint64_t)
#undef MEM_OPS
ldxsx_b:
	CHECK_MEM(SRC + (int64_t)OFF, 1, BPFRT_CHECK_READ);
	DST = (uint64_t)(int64_t)MEM_LOAD(int8_t, SRC + (int64_t)OFF); NEXT();
ldxsx_h:
	CHECK_MEM(SRC + (int64_t)OFF, 2, BPFRT_CHECK_READ);
	DST = (uint64_t)(int64_t)MEM_LOAD(int16_t, SRC + (int64_t)OFF); NEXT();
ldxsx_w:
	CHECK_MEM(SRC + (int64_t)OFF, 4, BPFRT_CHECK_READ);
	DST = (uint64_t)(int64_t)MEM_LOAD(int32_t, SRC + (int64_t)OFF); NEXT();

	/* host memory through a typed argument: never a region of the run
	 * (the checking interpreter has nothing to check), never a fault */
ldx_probe_b:
	DST = bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 1); NEXT();
ldx_probe_h:
	DST = bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 2); NEXT();
ldx_probe_w:
	DST = bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 4); NEXT();
ldx_probe_dw:
	DST = bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 8); NEXT();
ldxsx_probe_b:
	DST = (uint64_t)(int64_t)(int8_t)bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 1);
	NEXT();
ldxsx_probe_h:
	DST = (uint64_t)(int64_t)(int16_t)bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 2);
	NEXT();
ldxsx_probe_w:
	DST = (uint64_t)(int64_t)(int32_t)bpfrt_probe_load((uintptr_t)(SRC + (int64_t)OFF), 4);
	NEXT();

ld_imm64:
	/* The loader turns map references into plain constants; a
	 * subprogram address becomes a callback handle (see callback.h). */
	if (likely(insn->src_reg == 0)) {
		CHECK_LDDW();
		DST = insn_lddw_imm(insn);
	}
	else if (insn->src_reg == BPF_PSEUDO_FUNC)
		DST = BPFRT_CALLBACK_INTERP_TAG | (uint32_t)(insn - prog->insns + 1 + IMM);
	else
		goto bad_opcode;
	insn += 2;
	DISPATCH();

	/* Programs run on several threads at once: these must really be
	 * atomic. The result of a fetch is zero-extended into the register. */
#define ATOMIC_OPS(type)                                                       \
	do {                                                                   \
		type *p_ = (type *)(uintptr_t)(DST + (int64_t)OFF);            \
		CHECK_MEM(DST + (int64_t)OFF, sizeof(type), BPFRT_CHECK_RW);   \
		type v_ = (type)SRC;                                           \
		switch (IMM) {                                                 \
		case BPF_ADD:                                                  \
			__atomic_fetch_add(p_, v_, __ATOMIC_SEQ_CST); break;   \
		case BPF_OR:                                                   \
			__atomic_fetch_or(p_, v_, __ATOMIC_SEQ_CST); break;    \
		case BPF_AND:                                                  \
			__atomic_fetch_and(p_, v_, __ATOMIC_SEQ_CST); break;   \
		case BPF_XOR:                                                  \
			__atomic_fetch_xor(p_, v_, __ATOMIC_SEQ_CST); break;   \
		case BPF_ADD | BPF_FETCH:                                      \
			SRC = __atomic_fetch_add(p_, v_, __ATOMIC_SEQ_CST); break; \
		case BPF_OR | BPF_FETCH:                                       \
			SRC = __atomic_fetch_or(p_, v_, __ATOMIC_SEQ_CST); break; \
		case BPF_AND | BPF_FETCH:                                      \
			SRC = __atomic_fetch_and(p_, v_, __ATOMIC_SEQ_CST); break; \
		case BPF_XOR | BPF_FETCH:                                      \
			SRC = __atomic_fetch_xor(p_, v_, __ATOMIC_SEQ_CST); break; \
		case BPF_XCHG:                                                 \
			SRC = __atomic_exchange_n(p_, v_, __ATOMIC_SEQ_CST); break; \
		case BPF_CMPXCHG: {                                            \
			/* On failure `old` receives the current value, on    \
			 * success it already holds it: r0 = old either way. */\
			type old_ = (type)reg[BPF_R0];                         \
			CMPXCHG_EXPECTED_FIXUP(old_);                          \
			__atomic_compare_exchange_n(p_, &old_, v_, false,      \
						    __ATOMIC_SEQ_CST,          \
						    __ATOMIC_SEQ_CST);         \
			reg[BPF_R0] = old_;                                    \
			break;                                                 \
		}                                                              \
		default:                                                       \
			goto bad_opcode;                                       \
		}                                                              \
	} while (0)
/* GCC 12 for riscv64 compares lr.w's sign-extended value with the expected
 * value's register as is, without sign-extending a 32-bit truncation of r0:
 * the CAS fails whenever r0's upper half differs from bit 31's sign. A trip
 * through memory makes it load (and extend) the value properly. */
#if defined(__riscv)
#define CMPXCHG_EXPECTED_FIXUP(v) do { volatile __typeof__(v) t_ = (v); (v) = t_; } while (0)
#else
#define CMPXCHG_EXPECTED_FIXUP(v) do { } while (0)
#endif
atomic_w:
	ATOMIC_OPS(uint32_t);
	NEXT();
atomic_dw:
	ATOMIC_OPS(uint64_t);
	NEXT();
#undef ATOMIC_OPS
#undef CMPXCHG_EXPECTED_FIXUP

	/* ---- calls -------------------------------------------------------- */
jmp_call:
	if (likely(insn->src_reg == 0)) {
		uint32_t id = (uint32_t)IMM;

		/* Validation refuses ids the snapshot lacks; this keeps an
		 * unvalidated instruction inside the table. */
		if (unlikely(id >= helper_cnt || !helpers[id].fn))
			ABORT(ENOENT, id);
		CHECK_CALL(&helpers[id]);
		if (unlikely(helpers[id].fn == bpfrt_helper_tail_call))
			goto tail_call;
		reg[BPF_R0] = helpers[id].fn(reg[BPF_R1], reg[BPF_R2], reg[BPF_R3],
					     reg[BPF_R4], reg[BPF_R5]);
		CHECK_CALL_DONE(&helpers[id]);
		NEXT();
	}
	if (insn->src_reg == BPF_PSEUDO_CALL) {
		const struct bpf_insn *target = insn + IMM + 1;
		uint32_t caller, callee;
		uint64_t callee_fp;
		struct interp_frame *f;

		CHECK_CALL_TARGET(target);
		caller = prog->insn_subprog[insn - prog->insns];
		callee = prog->insn_subprog[target - prog->insns];
		callee_fp = fp - prog->subprogs[caller].stack_depth;

		/* The validator bounds depth and frame sizes; re-check the
		 * two facts whose violation would corrupt native memory. */
		if (unlikely(depth >= BPFRT_MAX_CALL_FRAMES - 1))
			ABORT(E2BIG, depth + 1);
		if (unlikely(callee_fp - prog->subprogs[callee].stack_depth <
			     (uint64_t)(uintptr_t)stack ||
			     callee_fp > fp))
			ABORT(E2BIG, depth + 1);
		f = &frames[depth++];
		f->ret = insn + 1;
		f->prog = prog;
		f->callee_saved[0] = reg[BPF_R6];
		f->callee_saved[1] = reg[BPF_R7];
		f->callee_saved[2] = reg[BPF_R8];
		f->callee_saved[3] = reg[BPF_R9];
		f->fp = fp;
		fp = callee_fp;
		reg[BPF_R10] = fp;
		insn = target;
		CHECK_FRAME_ENTER();
		CHECK_CLOBBER(BPF_R0, BPF_R0);
		CHECK_CLOBBER(BPF_R6, BPF_R9);
		DISPATCH();
	}
	goto bad_opcode; /* kfunc calls are not supported */

jmp_callx: {
	uint64_t id = DST;

	if (unlikely(id >= helper_cnt || !helpers[id].fn))
		ABORT(ENOENT, id);
	CHECK_CALL(&helpers[id]);
	reg[BPF_R0] = helpers[id].fn(reg[BPF_R1], reg[BPF_R2], reg[BPF_R3],
				     reg[BPF_R4], reg[BPF_R5]);
	CHECK_CALL_DONE(&helpers[id]);
	NEXT();
}

jmp_exit:
	if (likely(depth == 0)) {
		if (INTERP_COUNTED)
			*executed = count;
		if (unlikely(rcu_held))
			bpfrt_rcu_read_unlock();
		return reg[BPF_R0];
	} else {
		struct interp_frame *f = &frames[--depth];

		reg[BPF_R6] = f->callee_saved[0];
		reg[BPF_R7] = f->callee_saved[1];
		reg[BPF_R8] = f->callee_saved[2];
		reg[BPF_R9] = f->callee_saved[3];
		fp = f->fp;
		reg[BPF_R10] = fp;
		insn = f->ret;
		if (unlikely(f->prog != prog)) /* a tail call replaced the callee */
			INTERP_SWITCH_PROG(f->prog);
		CHECK_FRAME_RETURN();
		CHECK_CLOBBER(BPF_R1, BPF_R5);
		DISPATCH();
	}

	/* bpf_tail_call(ctx, prog_array, index): the current frame becomes the
	 * entry of the target program with r1 = ctx (r2 = 0, as the target
	 * sees no second argument); on failure execution continues after the
	 * call with r0 = -ENOENT. Limits as Linux: MAX_TAIL_CALL_CNT (33)
	 * taken tail calls per run, counted in bpfrt_run_state as JIT code
	 * does, so callbacks and their activations share the run's count;
	 * the frame must have room for the target's stack and call chain. */
tail_call: {
	const struct bpfrt_prog *target;

	if (!rcu_held) {
		/* The slot's program stays alive until the read section
		 * ends: keep it to the end of this activation. */
		bpfrt_rcu_read_lock();
		rcu_held = true;
	}
	target = bpfrt_prog_array_get((struct bpfrt_map *)(uintptr_t)reg[BPF_R2],
				      (uint32_t)reg[BPF_R3]);
	if (!target || bpfrt_run_state.tail_call_cnt >= BPFRT_MAX_TAIL_CALLS || !target->insns ||
	    target->stack_depth > fp - (uint64_t)(uintptr_t)stack ||
	    depth + target->subprogs[0].call_depth > BPFRT_MAX_CALL_FRAMES) {
		reg[BPF_R0] = (uint64_t)-ENOENT;
		CHECK_CLOBBER(BPF_R1, BPF_R5);
		NEXT();
	}
	bpfrt_run_state.tail_call_cnt++;
	INTERP_SWITCH_PROG(target);
	reg[BPF_R2] = 0;
	insn = prog->insns;
	CHECK_FRAME_ENTER();
	CHECK_CLOBBER(BPF_R0, BPF_R0);
	CHECK_CLOBBER(BPF_R3, BPF_R9);
	DISPATCH();
}

bad_opcode:
	abort_err = EINVAL;
	abort_arg = insn->code;
aborted:
	if (INTERP_COUNTED)
		*executed = count;
	if (rcu_held)
		bpfrt_rcu_read_unlock();
	return interp_abort(prog, insn, abort_err, abort_arg);
#if INTERP_CHECKED
check_failed:
	/* the check wrote the report and the abort */
	if (rcu_held)
		bpfrt_rcu_read_unlock();
	return 0;
#endif

#undef DST
#undef SRC
#undef IMM
#undef OFF
#undef IMM64
#undef IMM32
#undef DISPATCH
#undef NEXT
#undef ABORT
#undef INTERP_SWITCH_PROG
#undef CHECK_PC
#undef CHECK_MEM
#undef CHECK_CALL_TARGET
#undef CHECK_CALL
#undef CHECK_CALL_DONE
#undef CHECK_CLOBBER
#undef CHECK_LDDW
#undef CHECK_FRAME_ENTER
#undef CHECK_FRAME_RETURN
#undef CHECK_SWITCH_PROG
#if INTERP_CHECKED
#undef CHECK_FRAME_DEPTH
#endif
}
