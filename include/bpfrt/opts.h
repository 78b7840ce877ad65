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
 * Output structs (info and stats a call fills in: bpfrt_privstack_info,
 * bpfrt_privstack_stats, bpfrt_execmem_stats, bpfrt_helper_info) start
 * with sz too, set by the caller the same way. bpfrt writes only the
 * fields wholly within sz (an older caller's struct gets the fields it
 * knows, nothing past its end) and zeroes the bytes of a newer caller's
 * struct past the fields it knows; NULL, an sz that does not reach the
 * first field after sz, or one above 4096 fail with -EINVAL naming the
 * struct, nothing written.
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
