#include "core/opts.h"
#include "core/error.h"
#include "bpfrt/bpfrt.h"

#include <stdint.h>
#include <string.h>

bool bpfrt_opts_valid(const void *opts, size_t known, size_t user_sz, const char *type_name)
{
	const uint8_t *p = opts;

	if (user_sz < sizeof(size_t)) {
		bpfrt_err(-EINVAL, "struct %s: sz %zu is smaller than its first field (sz not set?)",
			  type_name, user_sz);
		return false;
	}
	if (user_sz > BPFRT_OPTS_SZ_MAX) {
		bpfrt_err(-EINVAL, "struct %s: sz %zu is not the size of an options struct "
			  "(uninitialised?)", type_name, user_sz);
		return false;
	}
	for (size_t i = known; i < user_sz; i++)
		if (p[i]) {
			bpfrt_err(-EINVAL, "struct %s: byte %zu is not zero, and this bpfrt knows "
				  "only its first %zu bytes (sz %zu): a field it does not have "
				  "is set", type_name, i, known, user_sz);
			return false;
		}
	return true;
}

bool bpfrt_out_valid(void *out, size_t first_end, size_t known, size_t user_sz,
		     const char *type_name)
{
	if (!out) {
		bpfrt_err(-EINVAL, "struct %s: NULL", type_name);
		return false;
	}
	if (user_sz < first_end) {
		bpfrt_err(-EINVAL, "struct %s: sz %zu does not reach its first field (%zu bytes; "
			  "sz not set?)", type_name, user_sz, first_end);
		return false;
	}
	if (user_sz > BPFRT_OPTS_SZ_MAX) {
		bpfrt_err(-EINVAL, "struct %s: sz %zu is not the size of an output struct "
			  "(uninitialised?)", type_name, user_sz);
		return false;
	}
	if (user_sz > known)
		memset((uint8_t *)out + known, 0, user_sz - known);
	return true;
}

/* No public options struct has padding after its last field: bytes there
 * would not be zeroed by a plain `= { .sz = sizeof(...), ... }`
 * initialiser, and OPTS_VALID would refuse them at random. */
#define NO_TAIL_PADDING(type)                                                  \
	_Static_assert(sizeof(struct type) ==                                  \
		       bpfrt_offsetofend(struct type, type##__last_field),     \
		       "struct " #type " has padding after its last field")
NO_TAIL_PADDING(bpfrt_prog_load_opts);
NO_TAIL_PADDING(bpfrt_verify_opts);
NO_TAIL_PADDING(bpfrt_test_run_opts);
NO_TAIL_PADDING(bpfrt_map_create_opts);
NO_TAIL_PADDING(bpfrt_object_open_opts);
NO_TAIL_PADDING(bpfrt_object_load_opts);
NO_TAIL_PADDING(bpfrt_attach_opts);
NO_TAIL_PADDING(bpfrt_kprobe_opts);
NO_TAIL_PADDING(bpfrt_env_opts);
NO_TAIL_PADDING(bpfrt_privstack_info);
NO_TAIL_PADDING(bpfrt_privstack_stats);
NO_TAIL_PADDING(bpfrt_execmem_stats);
NO_TAIL_PADDING(bpfrt_helper_info);
NO_TAIL_PADDING(bpfrt_map_shm);
