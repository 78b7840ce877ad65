/* The verifier fuzzer: random and mutated programs through the verifier;
 * every accepted one runs (ASan in the sanitizer build), and any fault is
 * a verifier bug. */
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "isa/isa.h"
#include "verifier/vsupport.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A random program over registers, the stack, the context and a map
 * value, with forward jumps only (every run ends). */
static size_t fz_program(struct bpf_insn *p, size_t max, struct bpfrt_map_ref *ref, uint32_t *nref)
{
	static const uint8_t alu_ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND,
					   BPF_LSH, BPF_RSH, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH };
	static const uint8_t jmp_ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
					   BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE };
	static const int32_t imms[] = { 0, 1, -1, 2, 7, 8, 15, 16, 63, 64, 255, -8, -16, -512, 4096 };
	size_t n = 0, len = 8 + fz((uint32_t)max - 12);

	*nref = 0;
	for (int r = 0; r < 10; r++)
		if (r != 1 && r != 2)
			p[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
						    .dst_reg = (uint8_t)r, .imm = imms[fz(15)] };
	while (n < len) {
		uint8_t dst = (uint8_t)fz(10), src = (uint8_t)fz(11);
		int16_t off = (int16_t)(fz(3) ? -(int)(8 * fz(9)) - (int)fz(2) * 4 : (int)fz(80) - 8);
		uint8_t size = (uint8_t)(fz(4) << 3);

		switch (fz(12)) {
		case 0: case 1: case 2: case 3:
			p[n++] = (struct bpf_insn){ .code = (uint8_t)((fz(2) ? BPF_ALU64 : BPF_ALU) |
						    alu_ops[fz(12)] | (fz(2) ? BPF_X : BPF_K)),
						    .dst_reg = dst, .src_reg = 0, .imm = imms[fz(15)] };
			if (BPF_SRC(p[n - 1].code) == BPF_X) {
				p[n - 1].src_reg = src;
				p[n - 1].imm = 0;
			}
			break;
		case 4: case 5:
			p[n++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | size, .dst_reg = dst,
						    .src_reg = (uint8_t)(fz(2) ? 10 : fz(10)), .off = off };
			break;
		case 6: case 7:
			p[n++] = (struct bpf_insn){ .code = BPF_STX | BPF_MEM | size,
						    .dst_reg = (uint8_t)(fz(2) ? 10 : fz(10)),
						    .src_reg = src, .off = off };
			break;
		case 8:
			p[n++] = (struct bpf_insn){ .code = BPF_ST | BPF_MEM | size,
						    .dst_reg = (uint8_t)(fz(2) ? 10 : fz(10)),
						    .off = off, .imm = imms[fz(15)] };
			break;
		case 9: {
			uint32_t room = (uint32_t)(len - n);

			p[n++] = (struct bpf_insn){ .code = (uint8_t)((fz(4) ? BPF_JMP : BPF_JMP32) |
						    jmp_ops[fz(11)] | (fz(2) ? BPF_X : BPF_K)),
						    .dst_reg = dst, .off = (int16_t)fz(room ? room : 1),
						    .imm = imms[fz(15)] };
			if (BPF_SRC(p[n - 1].code) == BPF_X) {
				p[n - 1].src_reg = src;
				p[n - 1].imm = 0;
			}
			break;
		}
		case 10:
			/* r0 = map value of "array" (non-NULL once checked) */
			if (n + 8 >= len || *nref)
				break;
			p[n++] = (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10,
						    .off = -4, .imm = (int32_t)fz(6) };
			p[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2,
						    .src_reg = 10 };
			p[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2,
						    .imm = -4 };
			ref[*nref] = (struct bpfrt_map_ref){ (uint32_t)n, BPF_PSEUDO_MAP_FD,
							     tmaps[1].map, 0 };
			(*nref)++;
			p[n++] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
						    .imm = (int32_t)(uintptr_t)tmaps[1].map };
			p[n++] = (struct bpf_insn){ .imm = (int32_t)((uintptr_t)tmaps[1].map >> 32) };
			p[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem };
			if (fz(4))
				p[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ | BPF_K,
							    .dst_reg = 0, .off = (int16_t)fz(4) };
			break;
		default:
			p[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
						    .dst_reg = dst, .src_reg = src };
			break;
		}
	}
	/* jumps may not land in an lddw's second half: retarget past them */
	for (size_t i = 0; i < n; i++)
		if (insn_is_branch(&p[i]) && !insn_is_gotol(&p[i])) {
			int64_t t = insn_branch_target(&p[i], (int64_t)i);

			if (t > 0 && t < (int64_t)n && insn_is_lddw(&p[t - 1]))
				p[i].off++;
		}
	p[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	return n;
}

static void fz_mutate(struct bpf_insn *p, size_t n)
{
	for (int k = 1 + (int)fz(3); k > 0; k--) {
		struct bpf_insn *in = &p[fz((uint32_t)n)];

		switch (fz(4)) {
		case 0: in->off = (int16_t)(in->off + (int)fz(17) - 8); break;
		case 1: in->imm = (int32_t)fz_next(); break;
		case 2: in->dst_reg = (uint8_t)fz(11); break;
		default: in->src_reg = (uint8_t)fz(11); break;
		}
	}
}

static uint64_t fz_run_one(struct bpf_insn *p, size_t n, const struct bpfrt_map_ref *refs,
			   uint32_t nref, enum bpfrt_prog_kind kind, uint64_t *accepted)
{
	struct vcase c = { .name = "fuzz", .kind = kind, .ctx_size = kind ? 0 : 64 };
	struct built b = { .insns = p, .cnt = n, .ref_cnt = nref };
	struct bpfrt_prog *prog = NULL;
	uint64_t len, ctx, r0;

	memcpy(b.refs, refs, nref * sizeof(*refs));
	if (load_case(&c, &b, false, &prog, NULL, 0, 0))
		return 0;
	(*accepted)++;
	/* BPFRT_FUZZ_TRACE=1: the last program printed before a fault is the culprit */
	if (getenv("BPFRT_FUZZ_TRACE")) {
		fprintf(stderr, "# fuzz program %" PRIu64 " (%zu insns, %u map refs)\n",
			*accepted, n, nref);
		bpfrt_disasm(p, n, stderr);
		fflush(stderr);
	}
	ctx = ctx_for(&c, &len);
	if (kind == BPFRT_PROG_UNSPEC)
		len = 64;
	/* no low packet (no MAP_32BIT off x86-64): an XDP program cannot run */
	if (ctx && bpfrt_prog_run(prog, BPFRT_EXEC_INTERP, ctx, len, &r0))
		tl_fail(__FILE__, __LINE__, "accepted program failed to run: %s", bpfrt_last_error());
	bpfrt_prog_free(prog);
	return 1;
}

/* Accepted programs run under the interpreter (ASan in the sanitizer
 * build): any fault is a verifier bug. BPFRT_FUZZ_SECONDS runs longer. */
TEST(fuzz_random_and_mutated_programs_never_fault)
{
	/* By default a fixed number of programs (repeatable); with
	 * BPFRT_FUZZ_SECONDS, as many as fit in that time. */
	const char *env = getenv("BPFRT_FUZZ_SECONDS");
	double secs = env ? atof(env) : 1e9, el = 0;
	uint64_t max_programs = env ? UINT64_MAX : 300000;
	uint64_t programs = 0, accepted = 0;
	struct timespec t0, t1;
	struct bpf_insn p[96];
	struct bpfrt_map_ref refs[4];
	uint32_t nref;

	/* A fixed seed by default, so `make test` is repeatable; any other
	 * seed (BPFRT_FUZZ_SEED=N, or "time") explores further. */
	const char *seed_env = getenv("BPFRT_FUZZ_SEED");
	uint64_t seed = !seed_env ? 1 : !strcmp(seed_env, "time") ? (uint64_t)time(NULL)
								 : strtoull(seed_env, NULL, 0);

	maps_init();
	printf("# fuzz seed %" PRIu64 " (BPFRT_FUZZ_SEED)\n", seed);
	fflush(stdout);
	fz_state ^= seed;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (el < secs && programs < max_programs && !tl_failed()) {
		for (int i = 0; i < 200; i++) {
			size_t n = fz_program(p, sizeof(p) / sizeof(p[0]) - 1, refs, &nref);

			if (fz(3) == 0)
				fz_mutate(p, n);
			programs++;
			fz_run_one(p, n, refs, nref, BPFRT_PROG_UNSPEC, &accepted);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	}
	printf("# fuzz: %" PRIu64 " programs in %.1f s, %" PRIu64 " accepted and run without a fault\n",
	       programs, el, accepted);
	CHECK(accepted > 0);
}

