/* One program per SEC() name the program kind table knows (the names of
 * every kind, with a target where the name takes one, alone where it may
 * stand alone): tests/test_prog_kinds.c checks that each loads as its
 * kind with the target after the '/'. The programs only return 0. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define KIND_PROG(sec, fn) SEC(sec) int fn(void *ctx) { return 0; }

KIND_PROG("tp/kinds/tp_event", tp_prog)
KIND_PROG("tracepoint/kinds/tracepoint_event", tracepoint_prog)
KIND_PROG("raw_tp/kinds_raw", raw_tp_prog)
KIND_PROG("raw_tracepoint/kinds_raw", raw_tracepoint_prog)
KIND_PROG("tp_btf/kinds_btf", tp_btf_prog)
KIND_PROG("fentry/kinds_func", fentry_prog)
KIND_PROG("fexit/kinds_func", fexit_prog)
KIND_PROG("fmod_ret/kinds_func", fmod_ret_prog)
KIND_PROG("fentry.multi/kinds_*", fentry_multi_prog)
KIND_PROG("kprobe/kinds_func+4", kprobe_prog)
KIND_PROG("kretprobe/kinds_func", kretprobe_prog)
KIND_PROG("uprobe", uprobe_bare_prog)
KIND_PROG("uprobe/bin:kinds_func", uprobe_prog)
KIND_PROG("uretprobe", uretprobe_bare_prog)
KIND_PROG("uretprobe/bin:kinds_func", uretprobe_prog)
KIND_PROG("usdt", usdt_bare_prog)
KIND_PROG("usdt/bin:kinds_provider:kinds_probe", usdt_prog)
KIND_PROG("socket", socket_bare_prog)
KIND_PROG("socket/kinds", socket_prog)
KIND_PROG("xdp", xdp_bare_prog)
KIND_PROG("xdp/kinds", xdp_prog)
KIND_PROG("syscall", syscall_prog)
