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
#include <string.h>

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

/* Output structs (stats and info a call fills in) follow the same
 * convention from the other side: the caller sets sz (BPFRT_OPTS, or
 * `= { .sz = sizeof(x) }`) and bpfrt writes only the fields that lie
 * wholly within it, so an older caller's smaller struct gets the fields it
 * knows and nothing past its end. A newer caller's larger struct gets the
 * bytes past the fields this bpfrt knows zeroed (a field this bpfrt does
 * not report reads 0, whatever the struct held). Each struct names its
 * first reported field TYPE__first_field (sz must reach past it) and its
 * last TYPE__last_field. */

/* True if out is valid for type_name: non-NULL, first_end <= user_sz <=
 * BPFRT_OPTS_SZ_MAX; then zeroes its bytes [known, user_sz). Otherwise
 * false with a message naming the struct in bpfrt_last_error(). */
bool bpfrt_out_valid(void *out, size_t first_end, size_t known, size_t user_sz,
		     const char *type_name);

#define OUT_VALID(out, type)                                                   \
	bpfrt_out_valid((out), bpfrt_offsetofend(struct type, type##__first_field), \
			bpfrt_offsetofend(struct type, type##__last_field),     \
			(out) ? (out)->sz : 0, #type)
/* Copies field (any type, arrays too) from the complete struct *src into
 * the caller's *out when out's sz reaches past it. */
#define OUT_COPY(out, src, field)                                              \
	do {                                                                   \
		if (OPTS_HAS(out, field))                                      \
			memcpy(&(out)->field, &(src)->field, sizeof((out)->field)); \
	} while (0)

#endif
