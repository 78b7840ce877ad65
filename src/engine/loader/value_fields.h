/* Special fields of a map value's BTF type (value_fields.c). */
#ifndef BPFRT_LOADER_VALUE_FIELDS_H
#define BPFRT_LOADER_VALUE_FIELDS_H

#include <stdint.h>

struct btf;

/* The offset of the struct bpf_spin_lock in value_type into *off (-1:
 * none). 0, or -E2BIG (more than one), -EINVAL (misaligned), with a
 * message naming object and map. */
int bpfrt_btf_find_spin_lock(const struct btf *btf, uint32_t value_type, const char *obj,
			     const char *map, int32_t *off);

#endif
