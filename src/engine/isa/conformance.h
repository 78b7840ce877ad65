/* Runner for the bpf_conformance .data files (../shared/conformance/README.md):
 * one file in one mode, a whole directory with a summary, and the
 * `bpfrt conformance` command built on them. The conformance plugin and
 * the tests use the same entry points so every path runs a test the same
 * way. */
#ifndef BPFRT_CONFORMANCE_H
#define BPFRT_CONFORMANCE_H

#include "bpfrt/bpfrt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The suite's only helper: call_unwind_fail and callx call id 5 with
 * r1 = -1 and expect the program to continue. Ours returns r1 unchanged
 * (the reference runner's helper only unwinds when r1 == 0, which no test
 * in the suite does). */
#define BPFRT_CONF_HELPER_ID 5

enum bpfrt_conf_status {
	BPFRT_CONF_PASS,
	BPFRT_CONF_FAIL,
	BPFRT_CONF_SKIP,
};

/* How far a test got; rejections are judged by where they happened. */
enum bpfrt_conf_stage {
	BPFRT_CONF_STAGE_PARSE,    /* .data reader, or no program section */
	BPFRT_CONF_STAGE_ASM,      /* assembler, or raw bytes not a multiple of 8 */
	BPFRT_CONF_STAGE_LOAD,     /* bpfrt_prog_load (validator, JIT) */
	BPFRT_CONF_STAGE_RUN,      /* the run (bpfrt_prog_exec) aborted */
	BPFRT_CONF_STAGE_DONE,     /* ran to exit; r0 is valid */
};

#define BPFRT_CONF_REASON_LEN 256

struct bpfrt_conf_result {
	char name[BPFRT_NAME_LEN];          /* file name without directory */
	enum bpfrt_conf_status status;
	enum bpfrt_conf_stage stage;
	uint64_t r0;                        /* valid when stage == DONE */
	char reason[BPFRT_CONF_REASON_LEN]; /* why it failed or was skipped */
};

struct bpfrt_conf_summary {
	enum bpfrt_exec_mode mode;
	bool negative;
	size_t files, passed, failed, skipped;
	struct bpfrt_conf_result *results;  /* one per file, sorted by name */
};

/* Registers helper BPFRT_CONF_HELPER_ID (returns r1). Safe to call again. */
int bpfrt_conf_register_helpers(void);

/* Loads insns (JIT-compiled when mode is BPFRT_EXEC_JIT) and runs them once
 * with r1 = a private writable copy of mem (0 when mem_len is 0) and
 * r2 = mem_len. Returns 0 and *r0, or -errno with bpfrt_last_error() set
 * and *stage saying whether loading or running failed. */
int bpfrt_conf_exec(const struct bpf_insn *insns, size_t insn_cnt,
		    const uint8_t *mem, size_t mem_len, enum bpfrt_exec_mode mode,
		    uint64_t *r0, enum bpfrt_conf_stage *stage);

/* Runs one .data file. A normal file passes when its result matches (or,
 * for "-- error", when assembling or loading rejects it). A negative file
 * passes when it fails the way its name says: "incorrect_*" files must run
 * and give a different result, every other one must be rejected before
 * running. A program using callx that fails to load is skipped, not
 * failed, while the engines lack callx. Fills *res; returns its status. */
enum bpfrt_conf_status bpfrt_conf_run_file(const char *path, enum bpfrt_exec_mode mode,
					   bool negative, struct bpfrt_conf_result *res);

/* Runs every *.data file of dir in name order. Returns 0, or -errno when
 * the directory cannot be read (message in bpfrt_last_error()). */
int bpfrt_conf_run_dir(const char *dir, enum bpfrt_exec_mode mode, bool negative,
		       struct bpfrt_conf_summary *sum);
void bpfrt_conf_summary_free(struct bpfrt_conf_summary *sum);

/* `bpfrt conformance [DIR] [--interp|--jit|--both] [--negative DIR]`:
 * prints a table per mode and the failures; returns the exit status
 * (0 all passed, 1 failures, 2 usage or unreadable directory). */
int bpfrt_conf_cli(int argc, char **argv, FILE *out);

#endif
