/* bpfrt command-line tool. */
#include "bpfrt/bpfrt.h"
#include "cli.h"
#include "isa/conformance.h"
#include "isa/datafile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One line per command (tests/test_cli_help.sh checks that every command
 * main() knows is here); `bpfrt COMMAND --help` prints the command's. */
static const char usage_text[] =
		"usage: bpfrt COMMAND [ARGS...]\n"
		"commands:\n"
		"  asm FILE [-o OUT]                              assemble text (or a .data file's asm) to raw instructions\n"
		"  disasm FILE                                    disassemble raw instructions (8 bytes each)\n"
		"  run FILE [--jit|--interp] [--mem HEX] [--repeat N]  validate and run; prints r0 in hex\n"
		"  dump [--jited|--xlated] FILE                   the native code or the BPF instructions of FILE\n"
		"  prog list|dump|run|verify OBJ ...              the programs of a clang-built object (bpfrt prog for the options)\n"
		"  map dump OBJ NAME [--after PROG] [--interp] [--json|-j]  a map's entries formatted by BTF, optionally after one run\n"
		"  map dump|update -p PID [OBJ:]NAME [KEY VALUE]  a map of a process bpfrt trace traces, read or written live\n"
		"  gen skeleton OBJ [name NAME]                   a C header: the object embedded, typed programs, maps, globals\n"
		"  links [PID...]                                 the attach links of processes that embed bpfrt\n"
		"  trace [--no-dump] OBJ -- CMD [ARGS...]         run CMD with OBJ's uprobes attached inside it, print the maps at its end\n"
		"  trace OBJ -p PID | trace --detach PID          attach to a running process; detach every bpfrt trace of it\n"
		"  conformance [DIR] [--interp|--jit|--both] [--negative DIR]  the bpf_conformance suite's summary\n"
		"  execmem [--no-pack] [--copies N] [FILE...]     load FILEs JIT'ed, print the prog packs and their backing (alias prog-pack)\n"
		"  config [--markdown]                            the BPFRT_* environment variables and the values in effect (alias --help-env)\n"
		"  features [--markdown]                          the helpers, kfuncs, map types and program kinds supported (docs/SUPPORTED.md)\n"
		"  kinds [--markdown]                             the program kinds: SEC() names, context, loads / verifies / runs / attaches\n"
		"  help, --help, -h                               this text\n"
		"  --version                                      the library's version\n"
		"FILE is raw instructions (8 bytes each), assembly (.s, .asm) or a conformance .data file;\n"
		"OBJ a BPF ELF object (clang -O2 -g -target bpf).\n"
		"exit status: 0 done; 1 the operation failed (the reason on stderr); 2 usage error\n"
		"(unknown command or option, missing or bad argument).\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

/* `bpfrt COMMAND --help`: that command's line of the usage text; -1 if
 * there is none. */
static int command_help(const char *cmd)
{
	size_t len = strlen(cmd);

	for (const char *l = usage_text; *l; l = strchr(l, '\n') + 1) {
		const char *end = strchr(l, '\n');

		if (!strncmp(l, "  ", 2) && !strncmp(l + 2, cmd, len) && (l[2 + len] == ' ')) {
			printf("usage: bpfrt %.*s\n", (int)(end - l - 2), l + 2);
			printf("exit status: 0 done; 1 the operation failed; 2 usage error\n");
			return 0;
		}
	}
	return -1;
}

/* A usage error: says which argument, exits 2. */
static int bad_arg(const char *cmd, const char *arg)
{
	fprintf(stderr, "bpfrt %s: unexpected argument '%s' (bpfrt --help)\n", cmd, arg);
	return 2;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "bpfrt: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				fprintf(stderr, "bpfrt: out of memory\n");
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* Loads instructions from raw bytes, assembly text or a .data file. */
static int load_insns(const char *path, struct bpf_insn **insns, size_t *cnt)
{
	size_t len;
	char *buf = read_file(path, &len);
	int err = 0;

	if (!buf)
		return -errno ? -errno : -EIO;
	if (has_suffix(path, ".data")) {
		struct bpfrt_datafile df;

		err = bpfrt_datafile_parse(buf, &df);
		if (!err) {
			if (df.asm_text) {
				err = bpfrt_asm(df.asm_text, insns, cnt);
			} else if (df.raw) {
				*insns = malloc(df.raw_len ? df.raw_len : 1);
				memcpy(*insns, df.raw, df.raw_len);
				*cnt = df.raw_len / 8;
			} else {
				err = -EINVAL;
				fprintf(stderr, "bpfrt: %s: no program section\n", path);
			}
			bpfrt_datafile_free(&df);
		}
	} else if (has_suffix(path, ".s") || has_suffix(path, ".asm")) {
		err = bpfrt_asm(buf, insns, cnt);
	} else {
		if (len % sizeof(struct bpf_insn)) {
			fprintf(stderr, "bpfrt: %s: %zu bytes is not a multiple of 8\n", path, len);
			free(buf);
			return -EINVAL;
		}
		*insns = (struct bpf_insn *)buf;
		*cnt = len / sizeof(struct bpf_insn);
		return 0;
	}
	free(buf);
	if (err && bpfrt_last_error()[0])
		fprintf(stderr, "bpfrt: %s: %s\n", path, bpfrt_last_error());
	return err;
}

static int parse_hex_bytes(const char *hex, uint8_t **out, size_t *len)
{
	size_t n = 0, cap = strlen(hex) / 2 + 1;
	uint8_t *b = malloc(cap);

	for (const char *p = hex; *p;) {
		unsigned v;
		int used;

		if (*p == ' ' || *p == '\n' || *p == '\t') {
			p++;
			continue;
		}
		if (sscanf(p, "%2x%n", &v, &used) != 1 || used != 2) {
			free(b);
			return -EINVAL;
		}
		b[n++] = (uint8_t)v;
		p += used;
	}
	*out = b;
	*len = n;
	return 0;
}

static int cmd_asm(int argc, char **argv)
{
	const char *in = NULL, *outp = NULL;
	struct bpf_insn *insns;
	size_t cnt;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			outp = argv[++i];
		else if (argv[i][0] == '-' || in)
			return bad_arg("asm", argv[i]);
		else
			in = argv[i];
	}
	if (!in) {
		usage(stderr);
		return 2;
	}
	if (load_insns(in, &insns, &cnt))
		return 1;
	FILE *f = outp ? fopen(outp, "wb") : stdout;
	if (!f) {
		fprintf(stderr, "bpfrt: %s: %s\n", outp, strerror(errno));
		free(insns);
		return 1;
	}
	fwrite(insns, sizeof(*insns), cnt, f);
	if (outp)
		fclose(f);
	free(insns);
	return 0;
}

static int cmd_disasm(int argc, char **argv)
{
	struct bpf_insn *insns;
	size_t cnt;
	int err;

	if (argc != 1) {
		usage(stderr);
		return 2;
	}
	if (load_insns(argv[0], &insns, &cnt))
		return 1;
	err = bpfrt_disasm(insns, cnt, stdout);
	if (err)
		fprintf(stderr, "bpfrt: %s: %s\n", argv[0], bpfrt_last_error());
	free(insns);
	return err ? 1 : 0;
}

static int load_prog(const char *path, bool jit, struct bpfrt_prog **prog)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = path, .jit = jit);
	struct bpf_insn *insns;
	size_t cnt;
	int err;

	if (load_insns(path, &insns, &cnt))
		return -EINVAL;
	/* conformance files call the suite's helper (id 5) */
	if (has_suffix(path, ".data"))
		bpfrt_conf_register_helpers();
	err = bpfrt_prog_load(insns, cnt, &opts, prog);
	if (err)
		fprintf(stderr, "bpfrt: %s: load failed (%s): %s\n", path, strerror(-err),
			bpfrt_last_error());
	free(insns);
	return err;
}

static int cmd_run(int argc, char **argv)
{
	enum bpfrt_exec_mode mode = BPFRT_EXEC_INTERP;
	const char *path = NULL, *memhex = NULL;
	uint8_t *mem = NULL;
	size_t mem_len = 0;
	long repeat = 1;
	struct bpfrt_prog *prog;
	uint64_t r0 = 0;
	int err = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--jit"))
			mode = BPFRT_EXEC_JIT;
		else if (!strcmp(argv[i], "--interp"))
			mode = BPFRT_EXEC_INTERP;
		else if (!strcmp(argv[i], "--mem") && i + 1 < argc)
			memhex = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = strtol(argv[++i], NULL, 0);
		else if (argv[i][0] == '-' || path)
			return bad_arg("run", argv[i]);
		else
			path = argv[i];
	}
	if (!path || repeat < 1) {
		usage(stderr);
		return 2;
	}
	if (memhex && parse_hex_bytes(memhex, &mem, &mem_len)) {
		fprintf(stderr, "bpfrt: --mem: not hex bytes\n");
		return 2;
	}
	if (!memhex && has_suffix(path, ".data")) {
		struct bpfrt_datafile df;

		if (!bpfrt_datafile_load(path, &df)) {
			if (df.mem) {
				mem = df.mem;
				mem_len = df.mem_len;
				df.mem = NULL;
			}
			bpfrt_datafile_free(&df);
		}
	}
	if (load_prog(path, mode == BPFRT_EXEC_JIT, &prog)) {
		free(mem);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < repeat && !err; i++)
		err = bpfrt_prog_run(prog, mode, (uint64_t)(uintptr_t)mem, mem_len, &r0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		fprintf(stderr, "bpfrt: run failed: %s\n", bpfrt_last_error());
	} else {
		printf("%" PRIx64 "\n", r0);
		if (repeat > 1)
			fprintf(stderr, "%.1f ns/run over %ld runs\n",
				((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / repeat,
				repeat);
	}
	bpfrt_prog_free(prog);
	free(mem);
	return err ? 1 : 0;
}

static int cmd_dump(int argc, char **argv)
{
	bool jited = false;
	const char *path = NULL;
	struct bpfrt_prog *prog;
	int err;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--jited"))
			jited = true;
		else if (!strcmp(argv[i], "--xlated"))
			jited = false;
		else if (argv[i][0] == '-' || path)
			return bad_arg("dump", argv[i]);
		else
			path = argv[i];
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	if (load_prog(path, jited, &prog))
		return 1;
	err = jited ? bpfrt_prog_dump_jited(prog, stdout) : bpfrt_prog_dump_xlated(prog, stdout);
	if (err)
		fprintf(stderr, "bpfrt: dump: %s\n", bpfrt_last_error());
	bpfrt_prog_free(prog);
	return err ? 1 : 0;
}

/* Loads every FILE JIT-compiled, copies times each, then prints where the
 * images went: packs (and whether huge pages back them) or mappings of
 * their own. */
static int cmd_execmem(int argc, char **argv)
{
	struct bpfrt_prog **progs;
	long copies = 1, nprogs = 0, nfiles = 0;
	int err = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--no-pack")) {
			bpfrt_execmem_set_packing(false);
		} else if (!strcmp(argv[i], "--copies") && i + 1 < argc) {
			char *end;

			copies = strtol(argv[++i], &end, 0);
			if (*end || copies < 1 || copies > 100000) {
				fprintf(stderr, "bpfrt: execmem: --copies takes 1..100000\n");
				return 2;
			}
		} else if (argv[i][0] == '-') {
			usage(stderr);
			return 2;
		} else {
			nfiles++;
		}
	}
	progs = calloc((size_t)(nfiles * copies) + 1, sizeof(*progs));
	if (!progs) {
		fprintf(stderr, "bpfrt: out of memory\n");
		return 1;
	}
	for (int i = 0; i < argc && !err; i++) {
		if (argv[i][0] == '-') {
			i += !strcmp(argv[i], "--copies");
			continue;
		}
		for (long c = 0; c < copies && !err; c++) {
			size_t len = 0;
			const void *image;

			err = load_prog(argv[i], true, &progs[nprogs]);
			if (err)
				break;
			image = bpfrt_prog_jited(progs[nprogs++], &len);
			if (c == 0)
				printf("%s: %zu bytes of native code at %p\n", argv[i], len, image);
		}
	}
	if (!err && bpfrt_execmem_dump(stdout)) {
		fprintf(stderr, "bpfrt: execmem: cannot write the dump\n");
		err = -EIO;
	}
	while (nprogs)
		bpfrt_prog_free(progs[--nprogs]);
	free(progs);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) &&
	    !command_help(argv[1]))
		return 0;
	if (!strcmp(argv[1], "asm"))
		return cmd_asm(argc - 2, argv + 2);
	if (!strcmp(argv[1], "disasm"))
		return cmd_disasm(argc - 2, argv + 2);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "prog"))
		return cli_prog(argc - 2, argv + 2);
	if (!strcmp(argv[1], "map"))
		return cli_map(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 2, argv + 2);
	if (!strcmp(argv[1], "gen"))
		return cli_gen(argc - 2, argv + 2);
	if (!strcmp(argv[1], "links"))
		return cli_links(argc - 2, argv + 2);
	if (!strcmp(argv[1], "trace"))
		return cli_trace(argc - 2, argv + 2);
	if (!strcmp(argv[1], "conformance"))
		return bpfrt_conf_cli(argc - 2, argv + 2, stdout);
	if (!strcmp(argv[1], "execmem") || !strcmp(argv[1], "prog-pack"))
		return cmd_execmem(argc - 2, argv + 2);
	if (!strcmp(argv[1], "config") || !strcmp(argv[1], "--help-env"))
		return cli_config(argc - 2, argv + 2);
	if (!strcmp(argv[1], "features"))
		return cli_features(argc - 2, argv + 2);
	if (!strcmp(argv[1], "kinds"))
		return cli_kinds(argc - 2, argv + 2);
	if (!strcmp(argv[1], "--version")) {
		printf("bpfrt %s\n", bpfrt_version());
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "bpfrt: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
