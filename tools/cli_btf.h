/* The BTF of a BPF object file, for the CLI's map dumps: the key and value
 * types of its maps (BTF-defined .maps, and the global-data sections laid
 * out by their symbols) and a JSON writer that formats values by type as
 * bpftool's btf_dumper does. */
#ifndef BPFRT_CLI_BTF_H
#define BPFRT_CLI_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* JSON out: pretty (bpftool's plain output with BTF) or compact (-j). */
struct jw {
	FILE *f;
	bool pretty;
	int depth;
	bool need_comma;
	bool after_key;
};

void jw_open(struct jw *w, char c);    /* '{' or '[' */
void jw_close(struct jw *w, char c);   /* '}' or ']' */
void jw_key(struct jw *w, const char *key);
void jw_u64(struct jw *w, uint64_t v);
void jw_s64(struct jw *w, int64_t v);
void jw_str(struct jw *w, const char *s, size_t max); /* at most max bytes, up to a NUL */
void jw_raw(struct jw *w, const char *text);         /* true, false, a number */
/* ["0x2a","0x00",...] as bpftool -j shows raw bytes */
void jw_hex(struct jw *w, const void *buf, size_t len);

struct cli_btf;

/* The object's BTF and symbols; NULL when it has none (or cannot be read):
 * the dump then shows bytes. */
struct cli_btf *cli_btf_open(const char *path);
void cli_btf_close(struct cli_btf *b);

/* How a map's key and value are printed. */
struct cli_map_types {
	uint32_t key, value;   /* BTF type ids; 0: unknown (bytes) */
	bool section;          /* value is a global-data section (by its variables) */
	const char *sec_name;
};
/* The types of map name; false if the BTF does not describe it. */
bool cli_btf_map_types(struct cli_btf *b, const char *name, struct cli_map_types *t);

/* Writes the value at data (size bytes) of BTF type id (or the section's
 * variables) as JSON. */
void cli_btf_write(struct cli_btf *b, struct jw *w, uint32_t id, const void *data, size_t size);
void cli_btf_write_section(struct cli_btf *b, struct jw *w, const char *sec, const void *data,
			   size_t size);

#endif
