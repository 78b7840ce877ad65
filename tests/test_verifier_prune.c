/* Pruning on the shapes that used to walk far more than Linux's verifier:
 * each program is verified and its processed-instruction count asserted
 * below what it took before the change that fixed its shape (and well
 * above what it takes now, so the bound is no measurement of speed). The
 * corpus (tests/verifier/corpus_asm.inc, "prune_*") holds the cases whose
 * pruning must not happen. */
#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "verifier/vharness.h"
#include "verifier/vsupport.h"

#include <stdlib.h>

/* Verifies text (an UNSPEC program over 64 bytes of context) and returns
 * the instructions the walk processed, or 0 if it was rejected. */
static uint64_t processed(const char *text)
{
	BPFRT_OPTS(bpfrt_verify_opts, vo, .ctx_size = 64);
	struct bpfrt_prog *prog = NULL;
	struct built b;
	char err[256];
	int rc;

	maps_init();
	if (build_case(text, &b, err, sizeof(err))) {
		tl_fail(__FILE__, __LINE__, "%s", err);
		return 0;
	}
	rc = load_verified("prune", BPFRT_PROG_UNSPEC, 0, b.refs, b.ref_cnt, b.insns, b.cnt,
			   false, &vo, &prog);
	free(b.insns);
	if (rc) {
		tl_fail(__FILE__, __LINE__, "rejected: %s", bpfrt_last_error());
		return 0;
	}
	bpfrt_prog_free(prog);
	printf("# %llu insns processed, %u states\n", (unsigned long long)vo.insn_processed,
	       vo.states);
	return vo.insn_processed;
}

/* Linux's loop4.c: a bit of the returned mask per iteration, set or not.
 * The mask decides nothing, so each iteration's two paths prune at once
 * (184 insns); before imprecise scalars matched any, joins waited for 8
 * states at a point (6464 insns). */
TEST(imprecise_bitmask_loop_prunes_at_once)
{
	uint64_t n = processed(
		"mov %r2, 0\nmov %r3, 0\nloop:\nldxw %r4, [%r1+0]\nmov %r0, 0\n"
		"jeq %r4, 0, skip\nmov %r0, 1\nlsh %r0, %r2\nskip:\nor %r3, %r0\n"
		"add %r2, 1\njne %r2, 20, loop\nmov %r0, %r3\nexit\n");

	CHECK(n && n < 2000, "%llu insns", (unsigned long long)n);
}

/* Slots written on each side of a branch and never read again (scratch
 * buffers, as pyperf's probe_read targets): twelve diamonds, each writing
 * its own slot 1 or 2. Slots nobody reads are not compared (the read
 * marks), so each diamond's two paths prune where they meet (74 insns);
 * before, the slots kept them apart until joins widened them (28667). */
TEST(dead_stack_slots_do_not_keep_paths_apart)
{
	char text[4096];
	size_t len = 0;
	uint64_t n;

	for (int k = 0; k < 12; k++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"call 7\njset %%r0, 1, a%d\nstdw [%%r10-%d], 1\nja b%d\n"
					"a%d:\nstdw [%%r10-%d], 2\nb%d:\n", k, 8 * (k + 1), k, k,
					8 * (k + 1), k);
	snprintf(text + len, sizeof(text) - len, "mov %%r0, 0\nexit\n");
	n = processed(text);
	CHECK(n && n < 2000, "%llu insns", (unsigned long long)n);
}
