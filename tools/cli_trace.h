/* bpfrt trace's parts: the session (cli_trace.c) and the injection into a
 * running process (cli_trace_inject.c), whose architecture-specific half
 * is struct inject_arch (cli_trace_inject_ARCH.c). */
#ifndef BPFRT_CLI_TRACE_H
#define BPFRT_CLI_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/user.h>

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

#endif
