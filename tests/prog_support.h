/* Building and loading programs in tests: a growable instruction builder,
 * raw-instruction and assembler loads, BPF objects from tests/progs. The
 * loads that report failures do so at their caller's file and line. */
#ifndef BPFRT_TEST_PROG_SUPPORT_H
#define BPFRT_TEST_PROG_SUPPORT_H

#include "bpfrt/bpfrt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	struct bpf_insn *i;
	size_t n, cap;
};

void pb_add(struct pb *p, struct bpf_insn insn);
void pb_lddw(struct pb *p, uint8_t reg, uint64_t v);
/* lddw of a host address (the attach tests' result slots). */
void pb_ldptr(struct pb *p, uint8_t reg, const void *ptr);
void pb_free(struct pb *p);

/* Loads insns; NULL on failure, left to the caller to report (some tests
 * expect it). */
struct bpfrt_prog *load_insns(const char *name, const struct bpf_insn *insns, size_t n,
			      bool jit, uint32_t flags);

/* Loads what b holds and frees b; a failure fails the test. */
#define pb_load(b, name, jit) pb_load_at(__FILE__, __LINE__, b, name, jit)
struct bpfrt_prog *pb_load_at(const char *file, int line, struct pb *b, const char *name,
			      bool jit);

/* Assembles text (bpfrt_asm) and loads it; a failure fails the test. */
#define load_asm(name, text, jit, flags) load_asm_at(__FILE__, __LINE__, name, text, jit, flags)
struct bpfrt_prog *load_asm_at(const char *file, int line, const char *name, const char *text,
			       bool jit, uint32_t flags);

/* Opens tests/progs/FILE (tl_prog_path) and loads it with opts; a failure
 * fails the test and returns NULL. */
#define load_object(file, opts) load_object_at(__FILE__, __LINE__, file, opts)
struct bpfrt_object *load_object_at(const char *file, int line, const char *obj_file,
				    const struct bpfrt_object_load_opts *opts);

/* Runs prog once with a zeroed 512-byte context (larger than any kind's):
 * for programs that read none of their context, or expect zeros in it
 * (verified programs are not run with a NULL one). Returns as
 * bpfrt_prog_run. */
int run_zero_ctx(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode, uint64_t *r0);

/* Calls helper `id` from a program that loads r1-r5 from an array in
 * memory, so the helper is reached through the engine's call path of
 * mode (BPFRT_EXEC_CHECKED: the plain interpreter, since the checking one
 * runs verified programs only); r0. A load or run error fails the test. */
#define call_helper(mode, id, a1, a2, a3, a4, a5) \
	call_helper_at(__FILE__, __LINE__, mode, id, (uint64_t[5]){ a1, a2, a3, a4, a5 })
uint64_t call_helper_at(const char *file, int line, enum bpfrt_exec_mode mode, int32_t id,
			const uint64_t args[5]);

/* The address of a global variable of obj; a missing one fails the test. */
#define object_global(obj, name) object_global_at(__FILE__, __LINE__, obj, name)
void *object_global_at(const char *file, int line, struct bpfrt_object *obj, const char *name);

#endif
