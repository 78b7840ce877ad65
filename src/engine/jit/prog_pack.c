/* Prog packs: executable memory carved out of 2 MiB double-mapped packs in
 * 64-byte chunks, so that many small JIT images share one (ideally huge)
 * page and one iTLB entry instead of a 4 KiB mapping each. The design
 * follows the kernel's bpf_prog_pack: a bitmap per pack, first fit, empty
 * packs returned to the system. One difference: the last pack to empty is
 * kept as a spare while no other pack is empty, because mapping and
 * trap-filling 2 MiB costs about a millisecond and a program loaded and
 * unloaded in a loop would otherwise pay it every time. */
#define _GNU_SOURCE
#include "jit/prog_pack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BITS_PER_WORD  64u
#define BITMAP_WORDS   (PROG_PACK_CHUNKS / BITS_PER_WORD)

struct prog_pack {
	struct prog_pack *next;
	struct execmem_view view;
	uint32_t used;        /* chunks handed out */
	uint32_t first_free;  /* no free chunk below this one */
	uint64_t bitmap[BITMAP_WORDS]; /* bit set = chunk in use */
};

pthread_mutex_t execmem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prog_pack *packs; /* in creation order: first fit prefers old packs */
static struct prog_pack *spare; /* an empty, trap-filled pack kept for reuse */

/* First index >= start whose bit equals `set`, or limit. */
static uint32_t find_bit(const uint64_t *map, uint32_t start, uint32_t limit, bool set)
{
	while (start < limit) {
		uint32_t w = start / BITS_PER_WORD;
		uint64_t word = set ? map[w] : ~map[w];

		word &= ~0ull << (start % BITS_PER_WORD);
		if (word) {
			uint32_t bit = w * BITS_PER_WORD + (uint32_t)__builtin_ctzll(word);

			return bit < limit ? bit : limit;
		}
		start = (w + 1) * BITS_PER_WORD;
	}
	return limit;
}

/* Lowest index of n consecutive clear bits at or after start, or -1. */
static int64_t find_clear_run(const uint64_t *map, uint32_t start, uint32_t n)
{
	while (start + n <= PROG_PACK_CHUNKS) {
		uint32_t run_end;

		start = find_bit(map, start, PROG_PACK_CHUNKS, false);
		if (start + n > PROG_PACK_CHUNKS)
			break;
		run_end = find_bit(map, start, start + n, true);
		if (run_end == start + n)
			return start;
		start = run_end;
	}
	return -1;
}

static void assign_bits(uint64_t *map, uint32_t first, uint32_t n, bool set)
{
	while (n) {
		uint32_t w = first / BITS_PER_WORD, bit = first % BITS_PER_WORD;
		uint32_t cnt = BITS_PER_WORD - bit < n ? BITS_PER_WORD - bit : n;
		uint64_t mask = (cnt == BITS_PER_WORD ? ~0ull : ((1ull << cnt) - 1)) << bit;

		if (set)
			map[w] |= mask;
		else
			map[w] &= ~mask;
		first += cnt;
		n -= cnt;
	}
}

static bool pack_take(struct prog_pack *pack, uint32_t nchunks, uint32_t *first)
{
	int64_t start;

	if (PROG_PACK_CHUNKS - pack->used < nchunks)
		return false;
	start = find_clear_run(pack->bitmap, pack->first_free, nchunks);
	if (start < 0)
		return false;
	assign_bits(pack->bitmap, (uint32_t)start, nchunks, true);
	pack->used += nchunks;
	if ((uint32_t)start == pack->first_free)
		pack->first_free = find_bit(pack->bitmap, (uint32_t)start + nchunks,
					    PROG_PACK_CHUNKS, false);
	*first = (uint32_t)start;
	return true;
}

static struct prog_pack *pack_create(void)
{
	struct prog_pack *pack = calloc(1, sizeof(*pack));
	int err;

	if (!pack)
		return NULL;
	err = execmem_view_map(&pack->view, PROG_PACK_SIZE, true, NULL);
	if (err) {
		free(pack);
		errno = -err;
		return NULL;
	}
	return pack;
}

struct prog_pack *prog_pack_alloc(uint32_t nchunks, uint32_t *first)
{
	struct prog_pack **link, *pack;

	if (nchunks == 0 || nchunks > PROG_PACK_CHUNKS) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&execmem_lock);
	for (link = &packs; (pack = *link); link = &pack->next)
		if (pack_take(pack, nchunks, first))
			goto out;
	/* Created under the lock so that racing threads do not each map a
	 * fresh 2 MiB pack for one image; packs are made rarely. */
	pack = spare ? spare : pack_create();
	spare = NULL;
	if (pack) {
		*link = pack;
		pack_take(pack, nchunks, first);
	}
out:
	pthread_mutex_unlock(&execmem_lock);
	return pack;
}

void prog_pack_free(struct prog_pack *pack, uint32_t first, uint32_t nchunks)
{
	struct prog_pack **link;
	bool empty;

	pthread_mutex_lock(&execmem_lock);
	assign_bits(pack->bitmap, first, nchunks, false);
	pack->used -= nchunks;
	if (first < pack->first_free)
		pack->first_free = first;
	empty = pack->used == 0;
	if (empty) {
		for (link = &packs; *link != pack; link = &(*link)->next)
			;
		*link = pack->next;
		pack->next = NULL;
		pack->first_free = 0;
		if (!spare) {
			spare = pack;
			empty = false;
		}
	}
	pthread_mutex_unlock(&execmem_lock);
	if (empty) {
		execmem_view_unmap(&pack->view);
		free(pack);
	}
}

const struct execmem_view *prog_pack_view(const struct prog_pack *pack)
{
	return &pack->view;
}

void prog_pack_trim(void)
{
	struct prog_pack *pack;

	pthread_mutex_lock(&execmem_lock);
	pack = spare;
	spare = NULL;
	pthread_mutex_unlock(&execmem_lock);
	if (pack) {
		execmem_view_unmap(&pack->view);
		free(pack);
	}
}

void prog_pack_for_each_view_locked(void (*fn)(struct execmem_view *view))
{
	struct prog_pack *pack;

	for (pack = packs; pack; pack = pack->next)
		fn(&pack->view);
	if (spare)
		fn(&spare->view);
}

static void add_pack_stats(struct bpfrt_execmem_stats *stats, const struct prog_pack *pack)
{
	if (stats->pack_info_cnt < BPFRT_EXECMEM_STATS_PACKS) {
		struct bpfrt_execmem_pack_stats *info = &stats->packs[stats->pack_info_cnt++];

		info->addr = (uintptr_t)pack->view.exec;
		info->backing = pack->view.backing;
		info->chunks_used = pack->used;
	}
	stats->pack_cnt++;
	stats->packs_by_backing[pack->view.backing]++;
	stats->bytes_used += (uint64_t)pack->used * PROG_PACK_CHUNK;
	stats->bytes_mapped += pack->view.len;
}

void prog_pack_stats_locked(struct bpfrt_execmem_stats *stats)
{
	const struct prog_pack *pack;

	for (pack = packs; pack; pack = pack->next)
		add_pack_stats(stats, pack);
	if (spare) {
		add_pack_stats(stats, spare);
		stats->spare_cnt++;
	}
}
