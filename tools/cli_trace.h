/* bpfrt trace's parts: the session (cli_trace.c), the dump's formatting
 * (cli_trace_dump.c), the target's maps in shared memory
 * (cli_trace_shm.c), the commands that reach a traced process from
 * another CLI (cli_trace_live.c: map dump/update -p, trace --detach) and
 * the injection into a running process (cli_trace_inject.c), whose
 * architecture-specific half is struct inject_arch
 * (cli_trace_inject_ARCH.c). */
#ifndef BPFRT_CLI_TRACE_H
#define BPFRT_CLI_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/user.h>
#include <limits.h>

#include "agent/proto.h"  /* -Isrc (mk/agent.mk) */

/* One thread's registers as ptrace reads and writes them. */
struct inject_regs {
#if defined(__x86_64__)
	struct user_regs_struct r;
#else
	unsigned long r[64];
#endif
};

struct inject_arch {
	bool supported;
	int (*get)(pid_t tid, struct inject_regs *regs);      /* 0 or -errno */
	int (*set)(pid_t tid, const struct inject_regs *regs);
	uintptr_t (*sp)(const struct inject_regs *regs);
	/* regs made to call fn(a0, a1) returning to 0, whose slot (x86-64:
	 * the stack word at ret_slot) the caller zeroed; no syscall restart */
	void (*setup_call)(struct inject_regs *regs, uintptr_t fn, uintptr_t a0, uintptr_t a1,
			   uintptr_t ret_slot);
	uintptr_t (*result)(const struct inject_regs *regs);
};
extern const struct inject_arch inject_arch;

/* Loads agent (an absolute path) into process pid with its own dlopen,
 * then calls the agent's connect function (connect_off bytes into its
 * file's mapping), which connects to the controller's socket. 0, or
 * -errno with the cause in why. */
int trace_inject(pid_t pid, const char *agent, uintptr_t connect_off, char *why, size_t cap);

/* ---- formatting (cli_trace_dump.c) ---- */

struct dumper {
	struct btf *btf;
	struct btf_dump *d;
	char *buf;              /* the value being formatted */
	size_t len, cap;
	struct agent_map map;   /* the map whose entries come now */
	int key_type, value_type;        /* BTF ids, 0: unknown (hex) */
	int datasec;            /* BTF id of a global-data section, else 0 */
	bool quiet;
	char obj[PATH_MAX];     /* the object's path: its symbols place the globals */
};

/* The object's BTF (hex without it). quiet: nothing printed. */
int dumper_open(struct dumper *dp, const char *obj, bool quiet);
void dumper_close(struct dumper *dp);
/* A map's entries come next (MAP), one of them (ENTRY: key, value). */
void dump_begin(struct dumper *dp, const struct agent_map *m);
void dump_entry(struct dumper *dp, const uint8_t *data, size_t len);
/* The offset of global var in section sec of the object, or -1. */
long var_offset(const char *path, const char *sec, const char *var);

/* ---- shared-memory maps (cli_trace_shm.c) ---- */

struct shm_map {
	struct agent_shm d;     /* as the agent described it */
	int obj;                /* index in shm_set.objs */
	uint8_t *base;          /* the mapping; NULL: read through the channel */
	size_t len;
};

struct shm_set {
	struct shm_map maps[256];
	int cnt;
	struct { char name[64]; int fd; char path[64]; } objs[16];
	int obj_cnt;
};

/* Handles a message a MAPS reply is interleaved with (printk lines...). */
typedef void (*agent_other_fn)(void *ctx, const struct agent_msg *h, uint8_t *buf);

/* Asks the agent for the maps (AGENT_MAPS with flags) and maps those in
 * shared memory. buf: AGENT_MAX_PAYLOAD bytes. 0 or -errno. */
int shm_collect(int sock, uint32_t flags, struct shm_set *set, uint8_t *buf, int timeout_ms,
		agent_other_fn other, void *ctx);
void shm_release(struct shm_set *set);
/* The map [OBJ:]NAME (first match), or NULL. */
struct shm_map *shm_find(struct shm_set *set, const char *spec);
/* Whether shm_dump can print the map from its mapping (an array or a
 * hash map in shared memory). */
bool shm_dumpable(const struct shm_map *m);
/* Prints a shared map's entries as the agent's dump would. */
void shm_dump(struct shm_map *m, struct dumper *dp);
/* Consumes the records of every shared ring buffer, printed as the
 * agent's RINGBUF messages are. The number consumed. */
int shm_drain_rings(struct shm_set *set);
/* Writes value (value_buf_size bytes) into element idx in place. */
int shm_write(struct shm_map *m, uint32_t idx, const void *value, size_t off, size_t len);

/* ---- the commands on a traced process (cli_trace_live.c) ---- */

/* Connects to the agent of process pid (its listener). The socket, or
 * -errno (-ECONNREFUSED / -ENOENT: no agent there). */
int agent_dial(pid_t pid);
/* bpfrt map dump|update -p PID ...; bpfrt trace --detach PID */
int cli_map_live(int argc, char **argv);
int cli_trace_detach(pid_t pid);

#endif
