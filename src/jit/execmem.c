/* Executable memory with W^X: every region is one memfd mapped twice, a
 * writable alias that is never executable and an executable view that is
 * never writable. Code reaches the executable view only through the alias
 * (bpfrt_execmem_copy), the userspace counterpart of text_poke. */
#define _GNU_SOURCE
#include "jit/execmem.h"
#include "jit/backend.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct bpfrt_execmem {
	void *exec;     /* PROT_READ|PROT_EXEC view: the address code runs at */
	void *alias;    /* PROT_READ|PROT_WRITE view of the same pages */
	size_t size;    /* bytes the caller asked for */
	size_t map_len; /* page-rounded length of both views */
};

static void fill_traps(void *dst, size_t len)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();

	if (be && be->fill_traps) {
		be->fill_traps(dst, len);
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	memset(dst, 0xcc, len); /* int3 until the backend provides its own */
#else
	memset(dst, 0, len);    /* an all-zero word is undefined on arm64/riscv */
#endif
}

static size_t page_round(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (size + page - 1) & ~(page - 1);
}

struct bpfrt_execmem *bpfrt_execmem_alloc(size_t size)
{
	struct bpfrt_execmem *mem;
	int fd, err;

	if (size == 0 || size > SIZE_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return NULL;
	mem->size = size;
	mem->map_len = page_round(size);
	fd = memfd_create("bpfrt-jit", MFD_CLOEXEC);
	if (fd < 0)
		goto fail_free;
	if (ftruncate(fd, (off_t)mem->map_len) < 0)
		goto fail_close;
	mem->alias = mmap(NULL, mem->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem->alias == MAP_FAILED)
		goto fail_close;
	mem->exec = mmap(NULL, mem->map_len, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (mem->exec == MAP_FAILED)
		goto fail_unmap;
	close(fd); /* the mappings keep the memory alive */
	fill_traps(mem->alias, mem->map_len);
	__builtin___clear_cache((char *)mem->exec, (char *)mem->exec + mem->map_len);
	return mem;

fail_unmap:
	err = errno;
	munmap(mem->alias, mem->map_len);
	errno = err;
fail_close:
	err = errno;
	close(fd);
	errno = err;
fail_free:
	err = errno;
	free(mem);
	errno = err;
	return NULL;
}

void *bpfrt_execmem_addr(const struct bpfrt_execmem *mem)
{
	return mem ? mem->exec : NULL;
}

size_t bpfrt_execmem_size(const struct bpfrt_execmem *mem)
{
	return mem ? mem->size : 0;
}

int bpfrt_execmem_copy(struct bpfrt_execmem *mem, size_t off, const void *src, size_t len)
{
	if (!mem || (!src && len))
		return -EINVAL;
	if (off > mem->size || len > mem->size - off)
		return -ERANGE;
	memcpy((char *)mem->alias + off, src, len);
	__builtin___clear_cache((char *)mem->exec + off, (char *)mem->exec + off + len);
	return 0;
}

void bpfrt_execmem_free(struct bpfrt_execmem *mem)
{
	if (!mem)
		return;
	fill_traps(mem->alias, mem->map_len);
	munmap(mem->exec, mem->map_len);
	munmap(mem->alias, mem->map_len);
	free(mem);
}
