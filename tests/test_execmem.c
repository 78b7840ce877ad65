/* Executable memory: W^X double mapping, trap fill, copy and execute. */
#define _GNU_SOURCE
#include "testlib.h"
#include "jit/execmem.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t ret42[] = { 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 }; /* mov eax, 42; ret */

/* True if some mapping of this process is both writable and executable. */
static bool have_wx_mapping(char *line_out, size_t out_len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%*s %7s", perms) != 1)
			continue;
		if (perms[1] == 'w' && perms[2] == 'x') {
			found = true;
			snprintf(line_out, out_len, "%s", line);
			break;
		}
	}
	fclose(f);
	return found;
}

TEST(execmem_alloc_copy_execute)
{
	struct bpfrt_execmem *mem = bpfrt_execmem_alloc(sizeof(ret42));
	char bad[512];

	REQUIRE(mem != NULL, "errno %d", errno);
	CHECK(bpfrt_execmem_size(mem) == sizeof(ret42));
	REQUIRE(bpfrt_execmem_copy(mem, 0, ret42, sizeof(ret42)) == 0);
#if defined(__x86_64__)
	int (*fn)(void) = (int (*)(void))bpfrt_execmem_addr(mem);
	CHECK(fn() == 42);
#endif
	CHECK(!have_wx_mapping(bad, sizeof(bad)), "w+x mapping: %s", bad);
	bpfrt_execmem_free(mem);
}

TEST(execmem_new_memory_is_trap_filled)
{
	struct bpfrt_execmem *mem = bpfrt_execmem_alloc(100);
	const uint8_t *code;

	REQUIRE(mem != NULL);
	code = bpfrt_execmem_addr(mem);
#if defined(__x86_64__)
	for (size_t i = 0; i < 100; i++)
		CHECK(code[i] == 0xcc, "byte %zu is %#x", i, code[i]);
#endif
	bpfrt_execmem_free(mem);
}

TEST(execmem_copy_bounds)
{
	struct bpfrt_execmem *mem = bpfrt_execmem_alloc(16);

	REQUIRE(mem != NULL);
	CHECK(bpfrt_execmem_copy(mem, 10, ret42, sizeof(ret42)) == 0);
	CHECK(bpfrt_execmem_copy(mem, 11, ret42, sizeof(ret42)) == -ERANGE);
	CHECK(bpfrt_execmem_copy(mem, SIZE_MAX, ret42, 1) == -ERANGE);
	CHECK(bpfrt_execmem_copy(NULL, 0, ret42, 1) == -EINVAL);
	CHECK(memcmp((const uint8_t *)bpfrt_execmem_addr(mem) + 10, ret42, sizeof(ret42)) == 0);
	bpfrt_execmem_free(mem);
	bpfrt_execmem_free(NULL);
}

TEST(execmem_zero_size_rejected)
{
	errno = 0;
	CHECK(bpfrt_execmem_alloc(0) == NULL);
	CHECK(errno == EINVAL);
}
