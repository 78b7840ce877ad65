/* The host's half of the program kind table (core/prog_kind.h): which
 * attach function bpfrt_prog_attach calls for each kind. The engine table
 * says whether a kind is attachable; this one says how, and the two agree
 * (bpfrt_attach_kind_fn is non-NULL exactly for the attachable kinds,
 * which tests/test_prog_kinds.c walks). */
#ifndef BPFRT_ATTACH_KIND_H
#define BPFRT_ATTACH_KIND_H

#include "attach/link.h"

/* The attach function of kind, NULL if the kind cannot attach in this
 * process (or is no kind). */
bpfrt_attach_fn bpfrt_attach_kind_fn(int kind);

#endif
