/* What the bench's BPF programs need, without system headers: clang
 * -target bpf does not search the host's multiarch asm/ directory that
 * <linux/bpf.h> pulls in. Layouts and values equal Linux's UAPI. */
#ifndef BPFRT_BENCH_XDP_H
#define BPFRT_BENCH_XDP_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

/* Linux's struct xdp_md. The kernel rewrites loads of data/data_end into
 * pointer loads; bpfrt (no context rewriting yet) gets a context whose
 * u32 fields already hold pointers to a packet below 4 GiB. */
struct xdp_md {
	__u32 data;
	__u32 data_end;
	__u32 data_meta;
	__u32 ingress_ifindex;
	__u32 rx_queue_index;
	__u32 egress_ifindex;
};

#define XDP_ABORTED 0
#define XDP_DROP 1
#define XDP_PASS 2

#define SEC(name) __attribute__((section(name), used))

/* Hides a value from the optimiser so clang cannot fold the benchmark away. */
#define opaque(x) asm volatile("" : "+r"(x))

#endif
