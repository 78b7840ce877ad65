/* A traced process's maps on the controller's side: the memfds the agent
 * hands over (proto.h, MAPS) mapped here, so values are read and written
 * in place while the target runs and ring buffers are consumed here.
 *
 * Nothing here waits on the target: hash maps are only read, along chains
 * whose every link is checked first (BPFRT_MAP_SHM_HASH), and arrays have
 * no lock (values are read
 * and written in 8-byte words, as programs and bpfrt_map_copy_out do, so
 * a value being written meanwhile is at worst seen half old, half new, as
 * in Linux), and a ring buffer's consumer stops at the first record still
 * BUSY, so a producer that died mid-record stops the reading, never
 * blocks it. What the mapping holds stays readable after the target is
 * gone: the final values of a target killed by a signal. */
#define _GNU_SOURCE
#include "cli_trace.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ring buffer record header bits (Linux's, linux/bpf.h) */
#define RB_BUSY (1u << 31)
#define RB_DISCARD (1u << 30)
#define RB_HDR 8u

static void copy_out(void *dst, const uint8_t *src, size_t size)
{
	uint8_t *d = dst;

	for (; size >= 8; size -= 8, src += 8, d += 8) {
		uint64_t w = __atomic_load_n((const uint64_t *)src, __ATOMIC_RELAXED);

		memcpy(d, &w, 8);
	}
	for (; size; size--)
		*d++ = __atomic_load_n(src++, __ATOMIC_RELAXED);
}

static void copy_in(uint8_t *dst, const void *src, size_t size)
{
	const uint8_t *s = src;

	/* whole words where the destination is aligned (values are) */
	for (; size >= 8 && !((uintptr_t)dst & 7); size -= 8, s += 8, dst += 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		__atomic_store_n((uint64_t *)dst, w, __ATOMIC_RELAXED);
	}
	for (; size; size--)
		__atomic_store_n(dst++, *s++, __ATOMIC_RELAXED);
}

/* Maps one map's memfd: size bytes; a ring buffer's data pages once more
 * after them, so a record that wraps is contiguous here too. */
static int map_one(struct shm_map *m, int fd)
{
	size_t len = m->d.shm.size;
	uint8_t *base;

	if (m->d.shm.layout == BPFRT_MAP_SHM_RINGBUF)
		len += m->d.shm.data_size;
	base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mmap(base, m->d.shm.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED ||
	    (m->d.shm.layout == BPFRT_MAP_SHM_RINGBUF &&
	     mmap(base + m->d.shm.size, m->d.shm.data_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		  fd, (off_t)m->d.shm.data_off) == MAP_FAILED)) {
		/* a frozen (.rodata) array is read-only in the target too */
		if (errno != EACCES || m->d.shm.layout == BPFRT_MAP_SHM_RINGBUF ||
		    mmap(base, m->d.shm.size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			int err = -errno;

			munmap(base, len);
			return err;
		}
	}
	m->base = base;
	m->len = len;
	return 0;
}

int shm_collect(int sock, uint32_t flags, struct shm_set *set, uint8_t *buf, int timeout_ms,
		agent_other_fn other, void *ctx)
{
	struct agent_maps_req req = { .flags = flags };
	int err = agent_send(sock, AGENT_MAPS, 0, &req, sizeof(req), NULL, 0, -1);

	while (!err) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		struct agent_msg h;
		int fd, n = poll(&p, 1, timeout_ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ETIMEDOUT;
		err = agent_recv(sock, &h, buf, AGENT_MAX_PAYLOAD, &fd);
		if (err)
			break;
		if (h.type == AGENT_DONE) {
			if (fd >= 0)
				close(fd);
			return h.err;
		}
		if (h.type == AGENT_OBJECT && set->obj_cnt < 16) {
			int i = set->obj_cnt++;

			snprintf(set->objs[i].name, sizeof(set->objs[i].name), "%.*s", (int)h.len,
				 (const char *)buf);
			set->objs[i].fd = fd;
			snprintf(set->objs[i].path, sizeof(set->objs[i].path), "/proc/self/fd/%d", fd);
			continue;
		}
		if (h.type == AGENT_SHM && h.len >= sizeof(struct agent_shm) && set->obj_cnt &&
		    set->cnt < (int)(sizeof(set->maps) / sizeof(set->maps[0]))) {
			struct shm_map *m = &set->maps[set->cnt++];

			memset(m, 0, sizeof(*m));
			memcpy(&m->d, buf, sizeof(m->d));
			m->d.map.name[sizeof(m->d.map.name) - 1] = 0;
			m->obj = set->obj_cnt - 1;
			if (fd >= 0 && m->d.shm.layout && map_one(m, fd))
				m->d.shm.layout = 0;        /* read through the channel then */
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (other)
			other(ctx, &h, buf);
	}
	return err;
}

void shm_release(struct shm_set *set)
{
	for (int i = 0; i < set->cnt; i++)
		if (set->maps[i].base)
			munmap(set->maps[i].base, set->maps[i].len);
	for (int i = 0; i < set->obj_cnt; i++)
		if (set->objs[i].fd >= 0)
			close(set->objs[i].fd);
	set->cnt = set->obj_cnt = 0;
}

struct shm_map *shm_find(struct shm_set *set, const char *spec)
{
	const char *colon = strchr(spec, ':');
	size_t ol = colon ? (size_t)(colon - spec) : 0;
	const char *name = colon ? colon + 1 : spec;

	for (int i = 0; i < set->cnt; i++) {
		struct shm_map *m = &set->maps[i];
		const char *on = set->objs[m->obj].name;

		if (strcmp(m->d.map.name, name))
			continue;
		if (colon && (strlen(on) != ol || strncmp(on, spec, ol)))
			continue;
		return m;
	}
	return NULL;
}

/* The mapping offset of the element a hash link names, or 0 for the end
 * of a chain or a link that names no element (a torn or foreign value:
 * every link is checked before it is followed, so the mapping alone can
 * never lead outside it). */
static uint64_t hash_elem_at(const struct shm_map *m, uint64_t link)
{
	uint64_t off, rel;

	if ((link & 1) || link < m->d.shm.addr)
		return 0;
	off = link - m->d.shm.addr;
	if (off < m->d.shm.data_off)
		return 0;
	rel = off - m->d.shm.data_off;
	if (rel % m->d.shm.elem_size || rel / m->d.shm.elem_size >= m->d.shm.n_elems)
		return 0;
	return off;
}

/* A shared hash map's entries, bucket by bucket along each chain (the
 * order get_next_key gives), without a lock: see BPFRT_MAP_SHM_HASH. */
static void shm_dump_hash(struct shm_map *m, struct dumper *dp, uint8_t *entry)
{
	const struct agent_map *am = &m->d.map;
	size_t ks = am->key_size, vs = am->value_buf_size, vround = (am->value_size + 7) & ~7u;
	uint64_t pool_end = m->d.shm.data_off + (uint64_t)m->d.shm.n_elems * m->d.shm.elem_size;

	if (m->d.shm.buckets_off + (uint64_t)m->d.shm.n_buckets * 16 > m->d.shm.size || pool_end > m->d.shm.size ||
	    m->d.shm.elem_size < (uint64_t)m->d.shm.key_off + ks || m->d.shm.next_off + 8 > m->d.shm.elem_size ||
	    m->d.shm.index_off + 4 > m->d.shm.elem_size ||
	    (m->d.shm.value_off && m->d.shm.value_off + am->value_size > m->d.shm.elem_size))
		return;                 /* a description that does not fit the mapping */
	for (uint32_t b = 0; b < m->d.shm.n_buckets; b++) {
		const uint64_t *first = (const uint64_t *)(m->base + m->d.shm.buckets_off + b * 16ull + 8);
		uint64_t link = __atomic_load_n(first, __ATOMIC_ACQUIRE), off;

		for (uint32_t steps = 0; (off = hash_elem_at(m, link)) && steps < m->d.shm.n_elems;
		     steps++) {
			const uint8_t *e = m->base + off;

			copy_out(entry, e + m->d.shm.key_off, ks);
			if (m->d.shm.value_off) {
				copy_out(entry + ks, e + m->d.shm.value_off, am->value_size);
			} else {
				uint32_t index = __atomic_load_n((const uint32_t *)(e + m->d.shm.index_off),
								 __ATOMIC_RELAXED);

				if (index >= m->d.shm.n_elems)
					break;
				for (uint32_t c = 0; c < m->d.shm.nr_cpus && (c + 1) * vround <= vs; c++) {
					uint64_t at = m->d.shm.pcpu_off + c * m->d.shm.cpu_stride + index * vround;

					if (at + vround > m->d.shm.size)
						break;
					copy_out(entry + ks + c * vround, m->base + at, vround);
				}
			}
			dump_entry(dp, entry, ks + vs);
			link = __atomic_load_n((const uint64_t *)(e + m->d.shm.next_off), __ATOMIC_ACQUIRE);
		}
	}
}

bool shm_dumpable(const struct shm_map *m)
{
	return m->base && (m->d.shm.layout == BPFRT_MAP_SHM_ARRAY ||
			   m->d.shm.layout == BPFRT_MAP_SHM_HASH);
}

void shm_dump(struct shm_map *m, struct dumper *dp)
{
	const struct agent_map *am = &m->d.map;
	size_t ks = am->key_size, vs = am->value_buf_size;
	uint8_t *entry = calloc(1, ks + vs);

	dump_begin(dp, am);
	if (entry && m->d.shm.layout == BPFRT_MAP_SHM_HASH)
		shm_dump_hash(m, dp, entry);
	if (!entry || ks != 4 || m->d.shm.layout != BPFRT_MAP_SHM_ARRAY)
		goto out;
	for (uint32_t i = 0; i < am->max_entries; i++) {
		memcpy(entry, &i, 4);
		for (uint32_t c = 0; c < m->d.shm.nr_cpus && (c + 1) * m->d.shm.elem_size <= vs; c++)
			copy_out(entry + ks + c * m->d.shm.elem_size,
				 m->base + m->d.shm.data_off + c * m->d.shm.cpu_stride + i * m->d.shm.elem_size,
				 m->d.shm.nr_cpus == 1 ? am->value_size : m->d.shm.elem_size);
		dump_entry(dp, entry, ks + vs);
	}
out:
	free(entry);
}

/* Linux's consumer, restated for the mapping: records in order up to the
 * producer position, each header read with acquire (its contents were
 * written before it stopped being BUSY), the position given back with
 * release once the record was read. */
static int drain_ring(struct shm_map *m)
{
	uint64_t *cpos = (uint64_t *)(m->base + m->d.shm.consumer_pos_off);
	const uint64_t *ppos = (const uint64_t *)(m->base + m->d.shm.producer_pos_off);
	uint64_t mask = m->d.shm.data_size - 1;
	uint64_t cons = __atomic_load_n(cpos, __ATOMIC_ACQUIRE);
	uint64_t prod = __atomic_load_n(ppos, __ATOMIC_ACQUIRE);
	int count = 0;

	while (cons < prod) {
		const uint8_t *hdr = m->base + m->d.shm.data_off + (cons & mask);
		uint32_t len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
		uint32_t size = len & ~(RB_BUSY | RB_DISCARD);

		if (len & RB_BUSY)
			break;          /* still being written, or its writer died */
		if (size > m->d.shm.data_size - RB_HDR)
			break;          /* not a record: leave the ring alone */
		if (!(len & RB_DISCARD)) {
			printf("%s:", m->d.map.name);
			for (uint32_t i = 0; i < size; i++)
				printf(" %02x", hdr[RB_HDR + i]);
			printf("\n");
			count++;
		}
		cons += ((uint64_t)size + RB_HDR + 7) & ~7ull;
		__atomic_store_n(cpos, cons, __ATOMIC_RELEASE);
	}
	if (count)
		fflush(stdout);
	return count;
}

int shm_drain_rings(struct shm_set *set)
{
	int n = 0;

	for (int i = 0; i < set->cnt; i++)
		if (set->maps[i].base && set->maps[i].d.shm.layout == BPFRT_MAP_SHM_RINGBUF)
			n += drain_ring(&set->maps[i]);
	return n;
}

int shm_write(struct shm_map *m, uint32_t idx, const void *value, size_t off, size_t len)
{
	if (m->d.shm.layout != BPFRT_MAP_SHM_ARRAY || !m->base || idx >= m->d.map.max_entries ||
	    off + len > m->d.map.value_size)
		return -EINVAL;
	/* every CPU's copy of a per-CPU value gets it, as a user-space update
	 * of one value would */
	for (uint32_t c = 0; c < m->d.shm.nr_cpus; c++)
		copy_in(m->base + m->d.shm.data_off + c * m->d.shm.cpu_stride + idx * m->d.shm.elem_size + off,
			value, len);
	return 0;
}
