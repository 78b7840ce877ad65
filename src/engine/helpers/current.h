/* The current task's identity as Linux's helpers report it (pid/tgid,
 * uid/gid, comm, cgroup, NUMA node), answered from a per-thread cache
 * (current.c says what invalidates it). */
#ifndef BPFRT_HELPERS_CURRENT_H
#define BPFRT_HELPERS_CURRENT_H

#include <stdint.h>

uint64_t bpfrt_bpf_get_current_pid_tgid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5);
uint64_t bpfrt_bpf_get_current_uid_gid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5);
uint64_t bpfrt_bpf_get_current_comm(uint64_t buf, uint64_t size, uint64_t r3, uint64_t r4,
				    uint64_t r5);
uint64_t bpfrt_bpf_get_current_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5);
uint64_t bpfrt_bpf_get_numa_node_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5);

#endif
