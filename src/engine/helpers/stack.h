/* bpf_get_stackid, bpf_get_stack and bpf_map_lookup_percpu_elem
 * (stack.c), and where a stack walk starts. */
#ifndef BPFRT_HELPERS_STACK_H
#define BPFRT_HELPERS_STACK_H

#include <stdbool.h>
#include <stdint.h>

/* The registers a user stack walk starts from: the first address
 * reported, the frame pointer the walk follows, the stack pointer (the
 * lowest address of the stack in use). at_entry: ip is a function's first
 * instruction, so its return address is at sp and fp is still its
 * caller's (the walk reports [sp] second, as Linux does for a uprobe at a
 * function's entry). */
struct bpfrt_stack_regs {
	uint64_t ip, fp, sp;
	bool at_entry;
};

/* The host's answer for a context that a probe gave its programs (its
 * pt_regs): true and *regs filled, false for any other context. Set once,
 * before main (host/attach/helpers_tracing.c); without it, or where it
 * says false, a walk starts at the helper's caller (the program). Must be
 * async-signal-safe. */
typedef bool (*bpfrt_stack_regs_fn)(uint64_t ctx, struct bpfrt_stack_regs *regs);
void bpfrt_stack_set_regs_source(bpfrt_stack_regs_fn fn);

/* Up to max user-space return addresses from regs (ips[0] = regs->ip),
 * by the frame-pointer chain, every read fault-safe; the count. */
uint32_t bpfrt_stack_walk(const struct bpfrt_stack_regs *regs, uint64_t *ips, uint32_t max);

uint64_t bpfrt_bpf_get_stackid(uint64_t ctx, uint64_t map, uint64_t flags, uint64_t r4,
			       uint64_t r5);
uint64_t bpfrt_bpf_get_stack(uint64_t ctx, uint64_t buf, uint64_t size, uint64_t flags,
			     uint64_t r5);
uint64_t bpfrt_bpf_map_lookup_percpu_elem(uint64_t map, uint64_t key, uint64_t cpu,
					  uint64_t r4, uint64_t r5);

#endif
