/* The options convention of every public *_opts struct (libbpf's): the
 * struct starts with `size_t sz`, the caller's sizeof (BPFRT_OPTS sets it),
 * so a program built against an older or newer bpfrt keeps working:
 *  - NULL opts mean every default;
 *  - a smaller sz (an older caller) gets the defaults for the fields past
 *    it: read every field with OPTS_GET, never directly;
 *  - a larger sz (a newer caller) is accepted if every byte past the
 *    fields this bpfrt knows is zero (the caller asked for nothing it
 *    cannot do), else -EINVAL naming the struct.
 * Each struct's last known field is TYPE__last_field, defined next to it
 * in the public header. Entry points check with OPTS_VALID first. */
#ifndef BPFRT_CORE_OPTS_H
#define BPFRT_CORE_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define bpfrt_offsetofend(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* Larger than any options struct will grow: an sz beyond it is garbage
 * (an uninitialised struct), refused before the tail is read. */
#define BPFRT_OPTS_SZ_MAX 4096u

/* True if opts is NULL or valid (as above); otherwise false with a
 * message naming the struct in bpfrt_last_error(). */
bool bpfrt_opts_valid(const void *opts, size_t known, size_t user_sz, const char *type_name);

#define OPTS_VALID(opts, type)                                                 \
	(!(opts) || bpfrt_opts_valid((opts), bpfrt_offsetofend(struct type, type##__last_field), \
				     (opts)->sz, #type))
/* The caller's struct reaches field. */
#define OPTS_HAS(opts, field)                                                  \
	((opts) && (opts)->sz >= bpfrt_offsetofend(__typeof__(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))
/* Output fields: written only where the caller's struct has them. */
#define OPTS_SET(opts, field, value)                                           \
	do {                                                                   \
		if (OPTS_HAS(opts, field))                                     \
			(opts)->field = (value);                               \
	} while (0)

#endif
