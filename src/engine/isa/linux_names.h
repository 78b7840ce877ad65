/* Linux's names for the things a BPF object refers to by number or by
 * section: helpers by id, map types, and the program types libbpf's
 * section names stand for. Messages about something bpfrt does not
 * support use them, so a kernel BPF user recognises what is missing. */
#ifndef BPFRT_ISA_LINUX_NAMES_H
#define BPFRT_ISA_LINUX_NAMES_H

#include <stdint.h>

/* "bpf_map_lookup_elem" for 1; NULL for an id Linux has no helper for. */
const char *bpfrt_linux_helper_name(int64_t id);
/* One past the highest helper id named (the UAPI header's __BPF_FUNC_MAX_ID). */
uint32_t bpfrt_linux_helper_max(void);
/* "BPF_MAP_TYPE_XSKMAP" for 17; NULL for a number that is no map type. */
const char *bpfrt_linux_map_type_name(uint32_t type);
/* The program type libbpf gives a SEC() name, without its BPF_PROG_TYPE_
 * prefix ("lsm/file_open": "LSM"), NULL for a name libbpf does not know. */
const char *bpfrt_linux_prog_type_of_section(const char *sec);

#endif
