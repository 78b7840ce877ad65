#include "jit_support.h"
#include "testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool run_both_at(const char *file, int line, const struct bpf_insn *insns, size_t n,
		 uint64_t a1, uint64_t a2, uint64_t *r0)
{
	struct bpfrt_prog *p = load_insns("run_both", insns, n, true, 0);
	uint64_t rj = 0, ri = 0;
	int ej, ei;

	if (!p) {
		tl_fail(file, line, "load failed: %s", bpfrt_last_error());
		return false;
	}
	ej = bpfrt_prog_run(p, BPFRT_EXEC_JIT, a1, a2, &rj);
	ei = bpfrt_prog_run(p, BPFRT_EXEC_INTERP, a1, a2, &ri);
	bpfrt_prog_free(p);
	CHECK_AT(file, line, ej == 0 && ei == 0, "run: jit %d interp %d", ej, ei);
	CHECK_AT(file, line, rj == ri, "jit r0 %#" PRIx64 " != interp r0 %#" PRIx64, rj, ri);
	*r0 = rj;
	return ej == 0 && ei == 0 && rj == ri;
}

bool run_both_mem_at(const char *file, int line, const struct bpf_insn *insns, size_t n,
		     void *mem, size_t mem_len, uint64_t *r0)
{
	struct bpfrt_prog *p = load_insns("run_both", insns, n, true, 0);
	uint8_t *mi = malloc(mem_len + 1), *mj = malloc(mem_len + 1);
	uint64_t ri = 0, rj = 0;
	int ei, ej;
	bool ok;

	if (!p || !mi || !mj) {
		tl_fail(file, line, "load: %s", bpfrt_last_error());
		free(mi);
		free(mj);
		bpfrt_prog_free(p);
		return false;
	}
	memcpy(mi, mem, mem_len);
	memcpy(mj, mem, mem_len);
	ej = bpfrt_prog_run(p, BPFRT_EXEC_JIT, (uint64_t)(uintptr_t)mj, mem_len, &rj);
	ei = bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uint64_t)(uintptr_t)mi, mem_len, &ri);
	ok = ej == 0 && ei == 0 && ri == rj && !memcmp(mi, mj, mem_len);
	CHECK_AT(file, line, ej == 0 && ei == 0, "run: jit %d interp %d: %s", ej, ei,
		 bpfrt_last_error());
	CHECK_AT(file, line, ri == rj, "r0: interp %#" PRIx64 " jit %#" PRIx64, ri, rj);
	CHECK_AT(file, line, !memcmp(mi, mj, mem_len), "memory differs");
	memcpy(mem, mj, mem_len);
	*r0 = rj;
	free(mi);
	free(mj);
	bpfrt_prog_free(p);
	return ok;
}

char *jited_listing_at(const char *file, int line, const struct bpfrt_prog *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f) {
		tl_fail(file, line, "open_memstream failed");
		return NULL;
	}
	err = bpfrt_prog_dump_jited(p, f);
	fclose(f);
	if (err) {
		tl_fail(file, line, "dump_jited: %d %s", err, bpfrt_last_error());
		free(text);
		return NULL;
	}
	return text;
}
