/* bpf_override_return (58) for kprobes (override.c). */
#ifndef BPFRT_ATTACH_OVERRIDE_H
#define BPFRT_ATTACH_OVERRIDE_H

#include <stdbool.h>
#include <stdint.h>

struct bpfrt_prog;

uint64_t bpfrt_bpf_override_return(uint64_t ctx, uint64_t rc, uint64_t r3, uint64_t r4,
				   uint64_t r5);

/* Does prog call bpf_override_return (the function above, whatever id it
 * was registered under)? */
bool bpfrt_prog_calls_override(const struct bpfrt_prog *prog);

#endif
