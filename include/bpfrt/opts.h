/* Options structs: how every bpfrt_*_opts is passed.
 *
 * Each one starts with `size_t sz`, the size of the struct the caller was
 * compiled with (as libbpf's). A program built against another bpfrt
 * version keeps working: a smaller sz (an older caller) gets the defaults
 * for the fields past it; a larger sz (a newer caller) is accepted when
 * every byte past the fields this bpfrt knows is zero, else the call fails
 * with -EINVAL and bpfrt_last_error() naming the struct. NULL options mean
 * every default. Declare them with BPFRT_OPTS, which zeroes the struct
 * (padding included) and sets sz:
 *
 *   BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "mine", .jit = true);
 *   err = bpfrt_prog_load(insns, cnt, &opts, &prog);
 *
 * Ownership: bpfrt reads the options during the call only (output fields
 * are written before it returns); pointers in them are the caller's. */
#ifndef BPFRT_PUBLIC_OPTS_H
#define BPFRT_PUBLIC_OPTS_H

#include <string.h>

/* libbpf's LIBBPF_OPTS: a zeroed struct TYPE named NAME with sz set and
 * the given designated initialisers. */
#define BPFRT_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = ({                                                  \
		memset(&NAME, 0, sizeof(struct TYPE));                         \
		(struct TYPE){                                                 \
			.sz = sizeof(struct TYPE),                             \
			__VA_ARGS__                                            \
		};                                                             \
	})

#endif
