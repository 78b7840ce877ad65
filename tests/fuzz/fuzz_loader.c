/* libFuzzer target for the ELF loader (make fuzz-loader, mk/fuzz.mk).
 *
 * Each input is written to a memfd and given to bpfrt_object_open as a
 * file, or (every other size) to bpfrt_object_open_mem as a skeleton
 * gives its embedded image; if it opens, the object is inspected as a skeleton would be
 * (programs, maps, a global), loaded (JIT when the input's size is odd,
 * so both engines' preparation runs) and closed. Programs are not run:
 * bpfrt trusts loaded bytecode as the kernel trusts verified code, and the
 * loader's job is to refuse what it cannot load, not to verify safety.
 *
 * Aborts on an error that comes without a message, and on a non-negative
 * error code, so "a clear error" is checked as well as "no crash". */
#define _GNU_SOURCE
#include "bpfrt/bpfrt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t host_add(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return (uint32_t)((int)a + (int)b);
}

/* Maps are preallocated from max_entries, as Linux does, so a mutated
 * max_entries of 16M takes seconds and gigabytes: allocations above
 * 256 MiB fail instead (the loader then reports -ENOMEM, which is tested
 * too) and the fuzzer keeps its pace. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const struct bpfrt_helper k = {
		.fn = host_add,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};

	/* globals.bpf.o calls this kfunc: seeds load all the way. */
	bpfrt_kfunc_register("host_add", &k);
	memfd = memfd_create("fuzz_loader.bpf.o", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void check_error(int err, const char *what)
{
	if (err > 0 || (err < 0 && !bpfrt_last_error()[0])) {
		fprintf(stderr, "%s returned %d with message '%s'\n", what, err, bpfrt_last_error());
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	struct bpfrt_map *m;
	int err;

	if (size & 2) {
		err = bpfrt_object_open_mem(data, size, NULL, &obj);
		check_error(err, "bpfrt_object_open_mem");
	} else {
		if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
			abort();
		err = bpfrt_object_open(path, NULL, &obj);
		check_error(err, "bpfrt_object_open");
	}
	if (err)
		return 0;
	for (p = bpfrt_object_next_prog(obj, NULL); p; p = bpfrt_object_next_prog(obj, p))
		(void)(bpfrt_prog_section(p)[0] + bpfrt_prog_attach_target(p)[0]);
	(void)bpfrt_object_global(obj, "hits", NULL);
	(void)bpfrt_object_global_data(obj, ".bss", NULL);
	err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = size & 1 });
	check_error(err, "bpfrt_object_load");
	/* a skeleton's section pointers, after load */
	{
		size_t sz = 0;
		char *bss = bpfrt_object_global_data(obj, ".bss", &sz);

		if (!err && bss && sz)
			bss[sz - 1] ^= 1;
	}
	/* After load: every map answers a lookup of key 0 without crashing. */
	for (m = err ? NULL : bpfrt_object_next_map(obj, NULL); m; m = bpfrt_object_next_map(obj, m)) {
		size_t ks = bpfrt_map_key_size(m), vs = bpfrt_map_value_buf_size(m);
		void *key = calloc(1, ks ? ks : 1), *val = calloc(1, vs ? vs : 1);

		if (key && val)
			(void)bpfrt_map_lookup_elem(m, key, val);
		free(key);
		free(val);
	}
	bpfrt_object_close(obj);
	return 0;
}
