/* The interface every native backend (x86-64, arm64, riscv64) implements.
 * A backend never parses ELF and never allocates executable memory except
 * through execmem; jit/passes.h is the half the three share. */
#ifndef BPFRT_BACKEND_H
#define BPFRT_BACKEND_H

#include "core/prog.h"

struct bpfrt_tramp_desc;

struct bpfrt_jit_backend {
	const char *arch;            /* "x86_64", "arm64", "riscv64" */
	/* Compiles a validated program: converges the image size over passes,
	 * allocates it with bpfrt_execmem_alloc, emits the final pass with
	 * its real address, copies it with bpfrt_execmem_copy and sets
	 * prog->jit_func, jit_mem, jit_len and jit_insn_off (the shared
	 * driver in passes.h does all of that around the backend's emitters).
	 * Returns 0 or -errno with bpfrt_last_error() set. */
	int (*compile)(struct bpfrt_prog *prog);
	/* Fills len bytes with the architecture's trap instruction. */
	void (*fill_traps)(void *dst, size_t len);
	/* Capstone arch/mode numbers for listings; cs_arch < 0: this
	 * capstone has no such arch, and jit.c runs objdump instead. */
	int cs_arch, cs_mode;
	/* Optional (x86-64 only now): writes into buf (cap bytes) the code of
	 * an fentry/fexit/fmod_ret/fentry.multi trampoline that will run at
	 * image, as struct bpfrt_tramp_desc (jit/trampoline_backend.h)
	 * describes. Returns its length, -E2BIG when cap is too small, or
	 * -EINVAL for a description it cannot build. (Linux:
	 * arch_prepare_bpf_trampoline.) */
	int (*arch_prepare_trampoline)(void *buf, size_t cap, uintptr_t image,
				       const struct bpfrt_tramp_desc *desc);
};

int bpfrt_x86_prepare_trampoline(void *buf, size_t cap, uintptr_t image,
				 const struct bpfrt_tramp_desc *desc);

/* The backend for the machine bpfrt is running on, or NULL. */
const struct bpfrt_jit_backend *bpfrt_jit_native_backend(void);

extern const struct bpfrt_jit_backend bpfrt_jit_x86_64;
extern const struct bpfrt_jit_backend bpfrt_jit_arm64;
extern const struct bpfrt_jit_backend bpfrt_jit_riscv64;

#endif
