/* bpfrt: an in-process eBPF runtime. The public API: this header includes
 * every public header but one, so #include "bpfrt/bpfrt.h" is enough; each
 * header can also be included on its own.
 *
 *   bpfrt/version.h     the version, compiled against and running
 *   bpfrt/error.h       -errno returns and bpfrt_last_error()
 *   bpfrt/opts.h        options structs: sz, BPFRT_OPTS
 *   bpfrt/prog.h        loading and running programs, their kinds and flags
 *   bpfrt/verify.h      the verifier on a loaded program, its findings
 *   bpfrt/test_run.h    Linux's BPF_PROG_TEST_RUN
 *   bpfrt/privstack.h   private-stack state and counters
 *   bpfrt/nest.h        programs that run child programs
 *   bpfrt/helpers.h     helper and kfunc registration
 *   bpfrt/env.h         environments: helper tables and limits of their own
 *   bpfrt/trace.h       the bpf_trace_printk buffer
 *   bpfrt/asm.h         assembler and disassembler
 *   bpfrt/execmem.h     executable memory of JIT images
 *   bpfrt/map.h         maps
 *   bpfrt/object.h      ELF objects (libbpf conventions)
 *   bpfrt/attach.h      attaching programs: links
 *   bpfrt/kprobe.h      kprobes and kretprobes
 *   bpfrt/export.h      BPFRT_API, the mark of what libbpfrt.so exports
 * Not included: bpfrt/tracepoint.h (static tracepoints in host code), as
 * every file including it gets a constructor registering its module's
 * tracepoint sites: include it only where tracepoints are placed.
 *
 * Each header says who owns what it returns, how long it lives and which
 * calls may run concurrently. Conventions (as libbpf): opaque objects,
 * functions return 0 or a negative errno; on failure bpfrt_last_error()
 * gives a one-line message naming the instruction, section or symbol at
 * fault (per thread). */
#ifndef BPFRT_PUBLIC_BPFRT_H
#define BPFRT_PUBLIC_BPFRT_H

#include "bpfrt/export.h"
#include "bpfrt/version.h"
#include "bpfrt/error.h"
#include "bpfrt/opts.h"
#include "bpfrt/prog.h"
#include "bpfrt/verify.h"
#include "bpfrt/test_run.h"
#include "bpfrt/privstack.h"
#include "bpfrt/nest.h"
#include "bpfrt/helpers.h"
#include "bpfrt/dynptr.h"
#include "bpfrt/env.h"
#include "bpfrt/trace.h"
#include "bpfrt/asm.h"
#include "bpfrt/execmem.h"
#include "bpfrt/map.h"
#include "bpfrt/perf_buffer.h"
#include "bpfrt/user_ringbuf.h"
#include "bpfrt/object.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"
#include "bpfrt/uprobe.h"
#include "bpfrt/usdt.h"

#endif
