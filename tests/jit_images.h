/* Machine code as a digest that does not depend on where it was placed:
 * the before/after check of code-generation refactors (JIT images,
 * trampolines, kprobe trampolines must come out byte for byte the same).
 *
 * Each instruction is decoded (capstone, loaded at run time) and its
 * address-bearing fields (relative branch targets, rip-relative
 * displacements, 64-bit immediates) are replaced by what they point at:
 * "+OFF" inside the code itself, "obj" inside any loaded object (library
 * and executable text and data move from one build to the next), "mem"
 * inside any other mapping (heap, maps, helper tables: they move from run
 * to run), the raw value otherwise (fake addresses the caller pins);
 * fs-relative displacements (initial-exec TLS) by the executable's TLS
 * symbol and the offset in it (the TLS layout moves too). Every
 * other byte is kept, so any change of encoding changes the digest. */
#ifndef BPFRT_TEST_JIT_IMAGES_H
#define BPFRT_TEST_JIT_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes the normalised listing of code (len bytes that run at `at`) to
 * out (may be NULL) and returns its FNV-1a hash; *insns (may be NULL)
 * gets the instruction count. Returns 0 with *insns = 0 when capstone
 * cannot be loaded. */
uint64_t jit_images_digest(const uint8_t *code, size_t len, uintptr_t at, FILE *out,
			   size_t *insns);

/* When $BPFRT_JIT_IMAGES names a file: appends "LABEL LEN INSNS HASH" to it
 * (and the listing when $BPFRT_JIT_IMAGES_LIST=1). Does nothing otherwise. */
void jit_images_note(const char *label, const uint8_t *code, size_t len, uintptr_t at);

/* Writes the "LABEL LEN INSNS HASH" line to out. */
void jit_images_line(FILE *out, const char *label, const uint8_t *code, size_t len,
		     uintptr_t at);

/* True when $BPFRT_JIT_IMAGES is set. */
bool jit_images_enabled(void);

#endif
