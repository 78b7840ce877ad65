/* bpf_for_each_map_elem(map, callback, ctx, flags): calls
 * callback(map, key, value, ctx) for each element until it returns 1;
 * returns the number of elements it was called for (the one that stopped
 * it included), -EINVAL for flags other than 0, as Linux. The verifier
 * types the callback's arguments (verifier/calls.c) and allows the map
 * types Linux does (verifier/map_compat.c): arrays, hashes, their per-CPU
 * and LRU variants; a per-CPU map's value is this CPU's.
 *
 * The walk goes by get_next_key from a copy of the previous key, so the
 * key the callback sees is that copy (read-only to the program, as
 * Linux's PTR_TO_MAP_KEY) and the value the element's own. A callback
 * that deletes or inserts elements can make get_next_key start over (a
 * deleted previous key restarts it, as for user space): the walk stops
 * after max_entries callbacks or 2 * max_entries + 1 steps, so it always
 * ends, where Linux's bucket walk visits each bucket once. */
#include "helpers/for_each.h"
#include "core/run.h"
#include "helpers/callback.h"
#include "interp/check.h"
#include "maps/map.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define KEY_ON_STACK 64

/* The checking interpreter holds the callback to regions: the key copy
 * (read-only) and the element's value are two more for this call. */
static bool check_regions(struct bpfrt_map *map, const void *key, void *value)
{
	struct bpfrt_check_run *cr = bpfrt_run_state.check;

	if (!cr)
		return true;
	return bpfrt_check_add_region(cr, (uintptr_t)key, map->key_size, BPFRT_REGION_MAP_VALUE,
				      false, map) &&
	       bpfrt_check_add_region(cr, (uintptr_t)value, map->value_size,
				      BPFRT_REGION_MAP_VALUE, !(map->map_flags & BPF_F_RDONLY_PROG),
				      map);
}

uint64_t bpfrt_bpf_for_each_map_elem(uint64_t map_arg, uint64_t callback, uint64_t ctx,
				     uint64_t flags, uint64_t r5)
{
	struct bpfrt_map *map = (struct bpfrt_map *)(uintptr_t)map_arg;
	uint8_t stack_keys[2][KEY_ON_STACK];
	uint8_t *keys[2] = { stack_keys[0], stack_keys[1] }, *heap = NULL;
	uint64_t calls = 0, steps = 0, max_steps;
	const void *prev = NULL;
	int cur = 0;
	bool stop;

	if (flags)
		return (uint64_t)-EINVAL;
	if (!map || !map->ops->get_next_key)
		return 0;
	if (map->key_size > KEY_ON_STACK) {
		heap = malloc(2 * (size_t)map->key_size);
		if (!heap)
			return (uint64_t)-ENOMEM;
		keys[0] = heap;
		keys[1] = heap + map->key_size;
	}
	max_steps = 2 * (uint64_t)map->max_entries + 1;
	while (calls < map->max_entries && steps++ < max_steps &&
	       map->ops->get_next_key(map, prev, keys[cur]) == 0) {
		void *value = map->ops->lookup(map, keys[cur]);

		prev = keys[cur];
		cur ^= 1;
		if (!value) /* deleted since: go on from its key */
			continue;
		calls++;
		if (!check_regions(map, prev, value))
			break;
		stop = bpfrt_callback_invoke(callback, map_arg, (uintptr_t)prev, (uintptr_t)value,
					     ctx, 0) || bpfrt_run_aborted();
		/* the key copy is this helper's stack: no region after the call */
		if (bpfrt_run_state.check)
			bpfrt_check_release_region(bpfrt_run_state.check, (uintptr_t)prev);
		if (stop)
			break;
	}
	free(heap);
	return calls;
}
