/* JIT against interpreter in tests: a program loaded with the JIT runs in
 * both engines and must agree; the JIT listing as a string. Failures are
 * reported at the caller's file and line. */
#ifndef BPFRT_TEST_JIT_SUPPORT_H
#define BPFRT_TEST_JIT_SUPPORT_H

#include "prog_support.h"

/* Runs insns with r1 = a1, r2 = a2 in both engines; false (after
 * reporting) if the load or a run failed or the engines disagree on r0. */
#define run_both(insns, n, a1, a2, r0) run_both_at(__FILE__, __LINE__, insns, n, a1, a2, r0)
bool run_both_at(const char *file, int line, const struct bpf_insn *insns, size_t n,
		 uint64_t a1, uint64_t a2, uint64_t *r0);

/* The same with r1 = a private copy of mem per engine, r2 = mem_len: the
 * engines must agree on r0 and on the memory after the run, which is
 * copied back to mem. */
#define run_both_mem(insns, n, mem, mem_len, r0) \
	run_both_mem_at(__FILE__, __LINE__, insns, n, mem, mem_len, r0)
bool run_both_mem_at(const char *file, int line, const struct bpf_insn *insns, size_t n,
		     void *mem, size_t mem_len, uint64_t *r0);

/* bpfrt_prog_dump_jited into a malloc'd string; NULL (after reporting)
 * when there is no listing. */
#define jited_listing(p) jited_listing_at(__FILE__, __LINE__, p)
char *jited_listing_at(const char *file, int line, const struct bpfrt_prog *p);

#endif
