/* Line-by-line reading of a text, shared by the assembler and the
 * bpf_conformance .data reader. */
#ifndef BPFRT_LINES_H
#define BPFRT_LINES_H

/* Calls fn(ctx, line) on each line of text (NUL-terminated, without its
 * '\n'; the buffer is reused) after counting it in *lineno, until fn
 * returns an error, which is returned. who prefixes the out-of-memory
 * message ("asm", "data"). */
int bpfrt_for_each_line(const char *text, unsigned *lineno,
			int (*fn)(void *ctx, char *line), void *ctx, const char *who);

#endif
