/* Test runs (Linux's BPF_PROG_TEST_RUN): a program run once or repeat
 * times on a context bpfrt builds for its kind.
 *
 * Ownership: the caller owns every buffer in the options (data_in/out,
 * ctx_in/out); bpfrt reads and writes them only during the call and runs
 * the program on private copies (the packet, the context), freed before
 * it returns.
 *
 * Thread safety: any number of threads may test-run the same program at
 * once, each with its own options structure. */
#ifndef BPFRT_PUBLIC_TEST_RUN_H
#define BPFRT_PUBLIC_TEST_RUN_H

#include "bpfrt/export.h"

#include <stddef.h>
#include <stdint.h>

#include "bpfrt/prog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_prog;

/* libbpf's struct bpf_test_run_opts, plus the engine to run in. The
 * context is built for the program's kind:
 *  - XDP: data_in is the packet (14 .. BPFRT_TEST_RUN_MAX_DATA bytes).
 *    The program gets an xdp_md whose data/data_end point at a private
 *    copy of it, mapped below 4 GiB (xdp_md's fields are 32 bits; where no
 *    such memory can be mapped the run fails with -ENOMEM and says so);
 *    data_meta is where the metadata before the packet starts (data
 *    itself: none, unless ctx_in gives some). ctx_in, optional, is an
 *    xdp_md as Linux takes it: data the metadata's length (a multiple of
 *    4, at most 32: data_in's first bytes are the metadata, the packet
 *    follows), data_meta 0, data_end equal to data_size_in, egress_ifindex
 *    0; ingress_ifindex and rx_queue_index are passed on (default
 *    ingress_ifindex 1, loopback, as Linux). data_out gets the metadata
 *    and the packet after the run, ctx_out the xdp_md with offsets from
 *    data_meta (data = the metadata's length, data_end = the whole
 *    length) as Linux reports them.
 *  - SOCKET: data_in is the packet (>= 14 bytes); the program gets a
 *    struct __sk_buff with len, protocol (the Ethernet type, network
 *    order), pkt_type and ifindex filled from it (data/data_end 0: a
 *    socket filter reads the packet through no pointer). ctx_in,
 *    optional, may set mark, priority, ingress_ifindex, ifindex, cb[],
 *    tstamp, wire_len, gso_segs, gso_size and hwtstamp (as Linux); any
 *    other field non-zero is refused. The program may write cb[] (Linux's
 *    socket filter rules); ctx_out gets the settable fields after the run.
 *    data_out as XDP.
 *  - TRACEPOINT, RAW_TRACEPOINT, FENTRY, FEXIT, FMOD_RET, FENTRY_MULTI,
 *    KPROBE, KRETPROBE, UPROBE: no data_in/data_out; the context is
 *    ctx_in, or without it a zeroed one of the size the program was
 *    verified for (bpfrt_prog_ctx_size). A ctx_in shorter than the bytes
 *    the program reads (bpfrt_prog_ctx_access) or longer than its kind's
 *    context is refused (-EINVAL naming the program and both sizes). The
 *    context is read-only to these kinds: no ctx_out.
 *  - SYSCALL, UNSPEC: the context is ctx_in, at least the verified
 *    ctx_size bytes (a copy: the caller's buffer is not written); no
 *    data_in. ctx_out gets the context after the run.
 * repeat 0 runs once; duration is the mean wall time of one run in ns.
 * data_size_out/ctx_size_out are, as in Linux, the buffer sizes in and
 * the full lengths out; a buffer too small gets what fits and -ENOSPC.
 * data_size_out 0 means large enough (Linux's old behaviour); ctx_size_out
 * has no such convention: ctx_out with ctx_size_out 0 gets nothing and
 * -ENOSPC. Repetitions run on the same packet and context.
 * Programs that were not verified (trusted loads) need ctx_in or data_in
 * of their own contract. Returns 0 or -errno with bpfrt_last_error(). */
#define BPFRT_TEST_RUN_MAX_DATA 65535u /* the verifier's largest packet offset */
#define BPFRT_TEST_RUN_MAX_CTX  65535u /* SYSCALL/UNSPEC context, as Linux's U16_MAX */

struct bpfrt_test_run_opts {
	size_t sz;              /* sizeof(struct bpfrt_test_run_opts) */
	const void *data_in;
	void *data_out;
	uint32_t data_size_in;
	uint32_t data_size_out; /* in: size of data_out (0: large enough); out: packet length */
	const void *ctx_in;
	void *ctx_out;
	uint32_t ctx_size_in;
	uint32_t ctx_size_out;  /* in: size of ctx_out (0: nothing copied); out: context length */
	uint64_t retval;        /* out: r0 of the last run (Linux: its low 32 bits) */
	int repeat;             /* runs; 0 = 1 */
	uint32_t duration;      /* out: mean ns per run */
	uint32_t flags;         /* none defined yet: must be 0 */
	enum bpfrt_exec_mode mode; /* engine, as bpfrt_prog_run */
};
#define bpfrt_test_run_opts__last_field mode

BPFRT_API int bpfrt_prog_test_run_opts(struct bpfrt_prog *prog, struct bpfrt_test_run_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
