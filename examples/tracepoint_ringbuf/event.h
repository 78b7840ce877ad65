/* The record the BPF program writes into the ring buffer and the host
 * reads: shared by requests.bpf.c and main.c. */
#ifndef EVENT_H
#define EVENT_H
#include <linux/types.h>

struct event {
	__u32 tid;       /* thread that fired the tracepoint */
	__s32 status;
	char path[32];
};
#endif
