/* Internals of executable memory shared by execmem.c (handles, own
 * mappings, public API) and prog_pack.c (2 MiB packs carved into chunks). */
#ifndef BPFRT_PROG_PACK_H
#define BPFRT_PROG_PACK_H

#include "bpfrt/bpfrt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROG_PACK_SIZE   BPFRT_EXECMEM_PACK_SIZE
#define PROG_PACK_CHUNK  BPFRT_EXECMEM_CHUNK_SIZE
#define PROG_PACK_CHUNKS (PROG_PACK_SIZE / PROG_PACK_CHUNK)

/* Executable memory and the way to write it. Usually one memfd mapped
 * twice: exec is PROT_READ|PROT_EXEC, alias is PROT_READ|PROT_WRITE, both
 * len bytes of the same pages. An anonymous-THP view (backing THP_ANON)
 * has no alias: exec is private anonymous memory, never writable, written
 * through /proc/self/mem. fd is the memfd, kept open only where writes
 * through the alias must be followed by re-mapping the executable pages
 * (qemu-user), else -1. */
struct execmem_view {
	char *exec;
	char *alias;
	size_t len;
	int fd;
	enum bpfrt_execmem_backing backing;
};

/* Maps a view of len bytes (a page multiple). A huge view tries hugetlb,
 * then anonymous THP, then shmem THP, then plain pages, 2 MiB aligned;
 * others use plain pages, the executable one at exec_hint if that is
 * free (NULL: anywhere). The view is trap-filled. Returns 0 or -errno. */
int execmem_view_map(struct execmem_view *view, size_t len, bool huge, void *exec_hint);
void execmem_view_unmap(struct execmem_view *view);
/* Writes the architecture's trap instruction over len bytes at dst. */
void execmem_fill_traps(void *dst, size_t len);

/* Every pack and own-mapping counter is protected by this lock. */
extern pthread_mutex_t execmem_lock;

struct prog_pack;

/* Finds (first fit over packs, then within each pack's bitmap) or makes
 * room for nchunks chunks. Returns the pack and first chunk, or NULL with
 * errno set. Takes execmem_lock. */
struct prog_pack *prog_pack_alloc(uint32_t nchunks, uint32_t *first);
/* Returns chunks that the caller has already refilled with traps; a pack
 * left empty is unmapped, or kept as the one spare. Takes execmem_lock. */
void prog_pack_free(struct prog_pack *pack, uint32_t first, uint32_t nchunks);
const struct execmem_view *prog_pack_view(const struct prog_pack *pack);
/* Unmaps the spare pack, if any. */
void prog_pack_trim(void);
/* Calls fn on every pack's view. Call with execmem_lock held. */
void prog_pack_for_each_view_locked(void (*fn)(struct execmem_view *view));
/* Adds pack figures to stats. Call with execmem_lock held. */
void prog_pack_stats_locked(struct bpfrt_execmem_stats *stats);

#endif
