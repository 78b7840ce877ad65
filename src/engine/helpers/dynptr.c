/* The dynptr helpers, under Linux's ids, prototypes and error codes:
 * dynptr_from_mem (197), ringbuf_reserve_dynptr (198), ringbuf_submit_dynptr
 * (199), ringbuf_discard_dynptr (200), dynptr_read (201), dynptr_write (202),
 * dynptr_data (203). The layout is bpfrt/dynptr.h's; the verifier proves a
 * dynptr argument is one these helpers (or user_ringbuf_drain) made and
 * nothing else wrote (verifier/dynptr.c), and every offset and length is
 * checked here against its size at run time: past it is -E2BIG, a null or
 * read-only dynptr (or flags) -EINVAL, as Linux. Unlike Linux, a failed
 * dynptr_read zeroes its destination (the verifier counts it written
 * either way: never stale stack). */
#include "helpers/dynptr.h"
#include "maps/map.h"

#include <errno.h>
#include <string.h>

#define PTR(x) ((void *)(uintptr_t)(x))

void bpfrt_dynptr_init(struct bpfrt_dynptr *p, void *data, enum bpfrt_dynptr_kind kind,
		       uint32_t size, bool rdonly)
{
	p->data = (uint64_t)(uintptr_t)data;
	p->size = (size & BPFRT_DYNPTR_SIZE_MASK) | ((uint32_t)kind << BPFRT_DYNPTR_KIND_SHIFT) |
		  (rdonly ? BPFRT_DYNPTR_RDONLY : 0);
	p->offset = 0;
}

void bpfrt_dynptr_set_null(struct bpfrt_dynptr *p)
{
	memset(p, 0, sizeof(*p));
}

uint32_t bpfrt_dynptr_size(const struct bpfrt_dynptr *p)
{
	return p->size & BPFRT_DYNPTR_SIZE_MASK;
}

bool bpfrt_dynptr_rdonly(const struct bpfrt_dynptr *p)
{
	return p->size & BPFRT_DYNPTR_RDONLY;
}

/* [offset, offset + len) within the dynptr: 0 or -E2BIG. */
static int check_off_len(const struct bpfrt_dynptr *p, uint64_t offset, uint64_t len)
{
	uint32_t size = bpfrt_dynptr_size(p);

	return len > size || offset > size - len ? -E2BIG : 0;
}

static char *at(const struct bpfrt_dynptr *p, uint64_t offset)
{
	return (char *)PTR(p->data) + p->offset + offset;
}

uint64_t bpfrt_bpf_dynptr_from_mem(uint64_t data, uint64_t size, uint64_t flags, uint64_t ptr,
				   uint64_t r5)
{
	struct bpfrt_dynptr *p = PTR(ptr);

	if ((uint32_t)size > BPFRT_DYNPTR_MAX_SIZE) {
		bpfrt_dynptr_set_null(p);
		return (uint64_t)-E2BIG;
	}
	if (flags) {
		bpfrt_dynptr_set_null(p);
		return (uint64_t)-EINVAL;
	}
	bpfrt_dynptr_init(p, PTR(data), BPFRT_DYNPTR_LOCAL, (uint32_t)size, false);
	return 0;
}

/* Whether it succeeds or not, the program must submit or discard the
 * dynptr (the verifier holds it to that): a null one is a no-op there. */
uint64_t bpfrt_bpf_ringbuf_reserve_dynptr(uint64_t map, uint64_t size, uint64_t flags,
					  uint64_t ptr, uint64_t r5)
{
	struct bpfrt_dynptr *p = PTR(ptr);
	void *rec;

	bpfrt_dynptr_set_null(p);
	if (flags)
		return (uint64_t)-EINVAL;
	if ((uint32_t)size > BPFRT_DYNPTR_MAX_SIZE)
		return (uint64_t)-E2BIG;
	rec = bpfrt_ringbuf_reserve(PTR(map), (uint32_t)size, 0);
	if (!rec)
		return (uint64_t)-EINVAL;
	bpfrt_dynptr_init(p, rec, BPFRT_DYNPTR_RINGBUF, (uint32_t)size, false);
	return 0;
}

static void commit(uint64_t ptr, uint64_t flags, bool discard)
{
	struct bpfrt_dynptr *p = PTR(ptr);

	if (!p->data)
		return;
	if (discard)
		bpfrt_ringbuf_discard(PTR(p->data), flags);
	else
		bpfrt_ringbuf_submit(PTR(p->data), flags);
	bpfrt_dynptr_set_null(p);
}

uint64_t bpfrt_bpf_ringbuf_submit_dynptr(uint64_t ptr, uint64_t flags, uint64_t r3,
					 uint64_t r4, uint64_t r5)
{
	commit(ptr, flags, false);
	return 0;
}

uint64_t bpfrt_bpf_ringbuf_discard_dynptr(uint64_t ptr, uint64_t flags, uint64_t r3,
					  uint64_t r4, uint64_t r5)
{
	commit(ptr, flags, true);
	return 0;
}

uint64_t bpfrt_bpf_dynptr_read(uint64_t dst, uint64_t len, uint64_t src, uint64_t offset,
			       uint64_t flags)
{
	const struct bpfrt_dynptr *p = PTR(src);
	int err = 0;

	if (!p->data || flags)
		err = -EINVAL;
	else
		err = check_off_len(p, (uint32_t)offset, (uint32_t)len);
	if (err) {
		if ((uint32_t)len)
			memset(PTR(dst), 0, (uint32_t)len);
		return (uint64_t)(int64_t)err;
	}
	/* the two may overlap (two dynptrs over one map value) */
	memmove(PTR(dst), at(p, (uint32_t)offset), (uint32_t)len);
	return 0;
}

uint64_t bpfrt_bpf_dynptr_write(uint64_t dst, uint64_t offset, uint64_t src, uint64_t len,
				uint64_t flags)
{
	const struct bpfrt_dynptr *p = PTR(dst);
	int err;

	if (!p->data || bpfrt_dynptr_rdonly(p))
		return (uint64_t)-EINVAL;
	if ((err = check_off_len(p, (uint32_t)offset, (uint32_t)len)))
		return (uint64_t)(int64_t)err;
	if (flags)
		return (uint64_t)-EINVAL;
	memmove(at(p, (uint32_t)offset), PTR(src), (uint32_t)len);
	return 0;
}

uint64_t bpfrt_bpf_dynptr_data(uint64_t ptr, uint64_t offset, uint64_t len, uint64_t r4,
			       uint64_t r5)
{
	const struct bpfrt_dynptr *p = PTR(ptr);

	if (!p->data || check_off_len(p, (uint32_t)offset, (uint32_t)len) ||
	    bpfrt_dynptr_rdonly(p))
		return 0;
	return (uint64_t)(uintptr_t)at(p, (uint32_t)offset);
}
