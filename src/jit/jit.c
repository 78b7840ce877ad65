/* Arch-neutral JIT driver: picks the backend for this machine and writes
 * annotated listings of JIT images (BPF instruction, then the native code
 * it became, via capstone). */
#include "jit/jit.h"

#include "core/error.h"
#include "jit/backend.h"

/* BPFRT_NO_CAPSTONE: builds for machines without a capstone library
 * (riscv64 on Debian 12) list raw instruction words. */
#ifndef BPFRT_NO_CAPSTONE
#include <capstone/capstone.h>
#else
typedef size_t csh;
#endif
#include <inttypes.h>
#include <string.h>

const struct bpfrt_jit_backend *bpfrt_jit_native_backend(void)
{
#if defined(__x86_64__)
	return &bpfrt_jit_x86_64;
#elif defined(__aarch64__)
	return &bpfrt_jit_arm64;
#elif defined(__riscv) && __riscv_xlen == 64
	return &bpfrt_jit_riscv64;
#else
	return NULL;
#endif
}

static void dump_raw(FILE *out, const uint8_t *code, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		fprintf(out, "  %8" PRIx64 ":  .byte", addr + i);
		for (size_t k = i; k < len && k < i + 8; k++)
			fprintf(out, " 0x%02x", code[k]);
		fputc('\n', out);
	}
}

/* 32-bit instruction words (arm64, riscv64) when capstone cannot decode. */
static void dump_words(FILE *out, const uint8_t *image, size_t from, size_t to)
{
	for (; from + 4 <= to; from += 4) {
		uint32_t w;

		memcpy(&w, image + from, 4);
		fprintf(out, "  %8zx:  .word    0x%08" PRIx32 "\n", from, w);
	}
	if (from < to)
		dump_raw(out, image + from, from, to - from);
}

/* Native instructions in [from, to) of the image (cs == 0: raw words). */
static void dump_native(csh cs, FILE *out, const uint8_t *image, size_t from, size_t to)
{
	if (!cs) {
		dump_words(out, image, from, to);
		return;
	}
#ifndef BPFRT_NO_CAPSTONE
	while (from < to) {
		cs_insn *ci;
		size_t cnt = cs_disasm(cs, image + from, to - from, (uint64_t)from, 0, &ci);
		size_t done = 0;

		for (size_t k = 0; k < cnt; k++) {
			fprintf(out, "  %8" PRIx64 ":  %-8s %s\n", ci[k].address, ci[k].mnemonic,
				ci[k].op_str);
			done += ci[k].size;
		}
		if (cnt)
			cs_free(ci, cnt);
		from += done;
		if (from < to && !cnt) {
			/* undecodable: show one byte raw and go on */
			dump_raw(out, image + from, from, 1);
			from++;
		}
	}
#endif
}

static void dump_bpf(FILE *out, const struct bpfrt_prog *prog, uint32_t pc, int *slots)
{
	char text[128];
	int n = bpfrt_disasm_insn(prog->insns + pc, prog->insn_cnt - pc, text, sizeof(text));

	if (n > 0) {
		fprintf(out, "%u: %s\n", pc, text);
		*slots = n;
		return;
	}
	const uint8_t *raw = (const uint8_t *)&prog->insns[pc];

	fprintf(out, "%u: .raw", pc);
	for (unsigned k = 0; k < sizeof(struct bpf_insn); k++)
		fprintf(out, " %02x", raw[k]);
	fputc('\n', out);
	*slots = 1;
}

int bpfrt_prog_dump_jited(const struct bpfrt_prog *prog, FILE *out)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();
	const uint32_t *off;
	const uint8_t *image;
	size_t len;
	csh cs = 0;

	if (!prog || !out)
		return bpfrt_err(-EINVAL, "dump --jited: NULL argument");
	image = bpfrt_prog_jited(prog, &len);
	if (!image || !prog->jit_insn_off)
		return bpfrt_err(-ENOENT, "dump --jited: %s was not JIT-compiled", prog->name);
	if (!be)
		return bpfrt_err(-ENOTSUP, "dump --jited: no JIT backend for this machine");
#ifndef BPFRT_NO_CAPSTONE
	/* cs_arch < 0: this capstone has no decoder for the backend */
	if (be->cs_arch >= 0 &&
	    cs_open((cs_arch)be->cs_arch, (cs_mode)be->cs_mode, &cs) != CS_ERR_OK)
		return bpfrt_err(-ENOTSUP, "dump --jited: capstone cannot open %s", be->arch);
#endif
	off = prog->jit_insn_off;

	fprintf(out, "; %s: %zu bytes of %s code at %p\n", prog->name, len, be->arch, (void *)image);
	if (!cs)
		fprintf(out, "; no %s disassembler in this capstone: raw instruction words\n",
			be->arch);
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		const struct bpfrt_subprog *sp = &prog->subprogs[s];
		uint32_t fstart = off[BPFRT_JIT_FUNC_START(prog, s)];
		uint32_t bend = off[BPFRT_JIT_BODY_END(prog, s)];
		uint32_t fend = s + 1 < prog->subprog_cnt ?
				off[BPFRT_JIT_FUNC_START(prog, s + 1)] : off[prog->insn_cnt];

		fprintf(out, "\n; subprog %u (insn %u), stack %u bytes\n", s, sp->start,
			sp->stack_depth);
		fprintf(out, "; prologue\n");
		dump_native(cs, out, image, fstart, off[sp->start]);
		for (uint32_t pc = sp->start; pc < sp->end;) {
			int slots;
			uint32_t next;

			dump_bpf(out, prog, pc, &slots);
			next = pc + (uint32_t)slots < sp->end ? off[pc + slots] : bend;
			dump_native(cs, out, image, off[pc], next);
			pc += (uint32_t)slots;
		}
		if (fend > bend) {
			fprintf(out, "; epilogue (abort unwinding)\n");
			dump_native(cs, out, image, bend, fend);
		}
	}
#ifndef BPFRT_NO_CAPSTONE
	if (cs)
		cs_close(&cs);
#endif
	return 0;
}
