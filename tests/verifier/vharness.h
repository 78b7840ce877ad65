/* Table-driven verifier corpus: each case is assembly text (the
 * bpf_conformance syntax plus map:NAME, mapval:NAME+OFF and func:LABEL
 * operands of lddw), a program kind, and the expected verdict: NULL for
 * accept, else a substring of the rejection message. `linux` records how
 * Linux's verifier answers when it differs on purpose (checked by the
 * verifier_agrees_with_linux test when run as root). */
#ifndef BPFRT_TESTS_VHARNESS_H
#define BPFRT_TESTS_VHARNESS_H

#include "bpfrt/bpfrt.h"

enum linux_verdict {
	LX_SAME = 0,     /* Linux gives the same verdict */
	LX_ACCEPTS,      /* bpfrt rejects, Linux accepts (why says why) */
	LX_REJECTS,      /* bpfrt accepts, Linux rejects */
	LX_SKIP,         /* no Linux equivalent to compare with */
};

#define RET_ANY INT64_MIN

struct vcase {
	const char *name;
	enum bpfrt_prog_kind kind;
	uint32_t ctx_size;        /* BPFRT_PROG_UNSPEC: bytes at r1 */
	const char *text;
	const char *reject;       /* NULL: accepted */
	int64_t ret;              /* expected r0 of an accepted program, or RET_ANY */
	enum linux_verdict lx;
	const char *why;          /* for a Linux difference */
	uint32_t flags;           /* BPFRT_F_* load flags (e.g. BPFRT_F_ALLOW_PTR_LEAKS) */
};

#endif
