/* Reader for the bpf_conformance .data format (see
 * ../shared/conformance/README.md): sections "-- asm", "-- raw", "-- mem",
 * "-- result", "-- error"; '#' starts a comment. */
#ifndef BPFRT_DATAFILE_H
#define BPFRT_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpfrt_datafile {
	char *asm_text;        /* "-- asm" section, or NULL */
	uint8_t *raw;          /* "-- raw" bytes (8 per instruction), or NULL */
	size_t raw_len;
	uint8_t *mem;          /* "-- mem" bytes, or NULL */
	size_t mem_len;
	bool has_result;
	uint64_t result;
	bool expect_error;     /* "-- error" present */
	char *error_text;      /* text after "-- error", may be "" */
};

/* Parses text; returns 0 or -EINVAL with bpfrt_last_error() set. */
int bpfrt_datafile_parse(const char *text, struct bpfrt_datafile *df);
/* Reads and parses a file. */
int bpfrt_datafile_load(const char *path, struct bpfrt_datafile *df);
void bpfrt_datafile_free(struct bpfrt_datafile *df);

#endif
