/* Attach functions per program kind, indexed by enum bpfrt_prog_kind.
 * Several kinds share one module's entry point, which tells them apart
 * by the kind it is handed (fentry/fexit/fmod_ret, kprobe/kretprobe,
 * tp/raw_tp). A kind the engine table marks attachable gets an entry
 * here; a kind without one is refused by bpfrt_prog_attach, naming it. */
#include "attach/attach_kind.h"
#include "attach/kprobe.h"
#include "attach/trampoline.h"
#include "uprobe/uprobe.h"

static const bpfrt_attach_fn attach_fns[] = {
	[BPFRT_PROG_TRACEPOINT]     = bpfrt_tracepoint_attach_prog,
	[BPFRT_PROG_RAW_TRACEPOINT] = bpfrt_tracepoint_attach_prog,
	[BPFRT_PROG_FENTRY]         = bpfrt_trampoline_attach_prog,
	[BPFRT_PROG_FEXIT]          = bpfrt_trampoline_attach_prog,
	[BPFRT_PROG_FMOD_RET]       = bpfrt_trampoline_attach_prog,
	[BPFRT_PROG_FENTRY_MULTI]   = bpfrt_multi_attach_prog,
	[BPFRT_PROG_KPROBE]         = bpfrt_kprobe_attach_prog,
	[BPFRT_PROG_KRETPROBE]      = bpfrt_kprobe_attach_prog,
	[BPFRT_PROG_UPROBE]         = bpfrt_uprobe_attach_prog,
	/* socket, xdp, syscall and unspec have no hook here, nor the kinds
	 * after syscall (other processes' probes, the kernel's) */
	[BPFRT_PROG_EXT]            = NULL,
};

_Static_assert(sizeof(attach_fns) / sizeof(attach_fns[0]) == BPFRT_PROG_EXT + 1,
	       "one slot per enum bpfrt_prog_kind value");

bpfrt_attach_fn bpfrt_attach_kind_fn(int kind)
{
	if (kind < 0 || (unsigned int)kind >= sizeof(attach_fns) / sizeof(attach_fns[0]))
		return NULL;
	return attach_fns[kind];
}
