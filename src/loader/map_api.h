/* What the loader needs from the map layer (include/bpfrt/map.h,
 * src/maps/map.h) and the kfunc registry. */
#ifndef BPFRT_LOADER_MAP_API_H
#define BPFRT_LOADER_MAP_API_H

#include "bpfrt/bpfrt.h"

#if __has_include("bpfrt/map.h")
#include "bpfrt/map.h"
#else
struct bpfrt_map;
struct bpfrt_map_create_opts {
	size_t sz;
	uint32_t map_flags;
};
int bpfrt_map_create(enum bpf_map_type type, const char *name, uint32_t key_size,
		     uint32_t value_size, uint32_t max_entries,
		     const struct bpfrt_map_create_opts *opts, struct bpfrt_map **map);
void bpfrt_map_free(struct bpfrt_map *map);
#endif

/* Address of array element idx's value (global-data maps). */
void *bpfrt_map_value_ptr(struct bpfrt_map *map, uint32_t idx);

#endif
