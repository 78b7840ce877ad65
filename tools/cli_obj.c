/* bpfrt prog / map subcommands: objects built by clang, loaded and run
 * in this process like BPF_PROG_TEST_RUN, maps dumped after the run. */
#include "cli.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *kind_name(enum bpfrt_prog_kind k)
{
	static const char *const names[] = {
		[BPFRT_PROG_UNSPEC] = "unspec", [BPFRT_PROG_TRACEPOINT] = "tracepoint",
		[BPFRT_PROG_RAW_TRACEPOINT] = "raw_tracepoint", [BPFRT_PROG_FENTRY] = "fentry",
		[BPFRT_PROG_FEXIT] = "fexit", [BPFRT_PROG_FMOD_RET] = "fmod_ret",
		[BPFRT_PROG_FENTRY_MULTI] = "fentry.multi", [BPFRT_PROG_KPROBE] = "kprobe",
		[BPFRT_PROG_KRETPROBE] = "kretprobe", [BPFRT_PROG_UPROBE] = "uprobe",
		[BPFRT_PROG_SOCKET] = "socket", [BPFRT_PROG_XDP] = "xdp",
		[BPFRT_PROG_SYSCALL] = "syscall",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) && names[k] ? names[k] : "?";
}

static const char *map_type_name(enum bpf_map_type t)
{
	switch (t) {
	case BPF_MAP_TYPE_ARRAY: return "array";
	case BPF_MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case BPF_MAP_TYPE_HASH: return "hash";
	case BPF_MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	case BPF_MAP_TYPE_LRU_HASH: return "lru_hash";
	case BPF_MAP_TYPE_RINGBUF: return "ringbuf";
	case BPF_MAP_TYPE_PROG_ARRAY: return "prog_array";
	default: return "?";
	}
}

static struct bpfrt_object *open_obj(const char *path, bool load, bool jit)
{
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(path, NULL, &obj);

	if (!err && load)
		err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
			.sz = sizeof(struct bpfrt_object_load_opts), .jit = jit });
	if (err) {
		fprintf(stderr, "bpfrt: %s (%s)\n", bpfrt_last_error(), strerror(-err));
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

static int prog_list(int argc, char **argv)
{
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;

	if (argc != 1) {
		fprintf(stderr, "usage: bpfrt prog list OBJ\n");
		return 2;
	}
	obj = open_obj(argv[0], false, false);
	if (!obj)
		return 1;
	printf("%-24s %-16s %-32s %s\n", "name", "kind", "section", "attach target");
	for (p = bpfrt_object_next_prog(obj, NULL); p; p = bpfrt_object_next_prog(obj, p))
		printf("%-24s %-16s %-32s %s\n", bpfrt_prog_name(p), kind_name(bpfrt_prog_kind(p)),
		       bpfrt_prog_section(p), bpfrt_prog_attach_target(p));
	bpfrt_object_close(obj);
	return 0;
}

static void hex(const void *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		printf("%02x%s", ((const uint8_t *)buf)[i], i + 1 < len ? " " : "");
}

/* Prints every entry as "key: .. value: ..", per CPU for per-CPU maps. */
static int dump_map(struct bpfrt_map *map)
{
	uint32_t ks = bpfrt_map_key_size(map);
	size_t vs = bpfrt_map_value_buf_size(map);
	enum bpf_map_type t = bpfrt_map_type(map);
	void *key = calloc(1, ks ? ks : 1), *next = calloc(1, ks ? ks : 1), *val = calloc(1, vs ? vs : 1);
	bool first = true;
	int n = 0;

	printf("map %s (%s, key %u, value %u, max_entries %u)\n", bpfrt_map_name(map),
	       map_type_name(t), ks, bpfrt_map_value_size(map), bpfrt_map_max_entries(map));
	if (t == BPF_MAP_TYPE_RINGBUF || t == BPF_MAP_TYPE_PROG_ARRAY || !key || !next || !val)
		goto out;
	while (bpfrt_map_get_next_key(map, first ? NULL : key, next) == 0) {
		first = false;
		memcpy(key, next, ks);
		if (bpfrt_map_lookup_elem(map, key, val))
			continue;
		printf("  key: ");
		hex(key, ks);
		printf("  value: ");
		hex(val, vs);
		printf("\n");
		n++;
	}
	printf("  %d entries\n", n);
out:
	free(key);
	free(next);
	free(val);
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			char *n = realloc(buf, cap = cap ? cap * 2 : 4096);
			if (!n)
				break;
			buf = n;
		}
		size_t got = fread(buf + *len, 1, cap - *len, f);
		if (!got)
			break;
		*len += got;
	}
	fclose(f);
	return buf ? buf : calloc(1, 1);
}

static int prog_run(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *data_path = NULL;
	const char *dumps[16];
	int ndumps = 0;
	long repeat = 1;
	bool jit = true;
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	char *data = NULL;
	size_t data_len = 0;
	uint64_t r0 = 0;
	int err = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--data") && i + 1 < argc)
			data_path = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--dump-map") && i + 1 < argc && ndumps < 16)
			dumps[ndumps++] = argv[++i];
		else if (!strcmp(argv[i], "--jit"))
			jit = true;
		else if (!strcmp(argv[i], "--interp"))
			jit = false;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "bpfrt prog run: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!path || !name || repeat < 1) {
		fprintf(stderr, "usage: bpfrt prog run OBJ --prog NAME [--data FILE] [--repeat N] "
				"[--jit|--interp] [--dump-map NAME]...\n");
		return 2;
	}
	if (data_path && !(data = read_all(data_path, &data_len))) {
		fprintf(stderr, "bpfrt: %s: %s\n", data_path, strerror(errno));
		return 1;
	}
	obj = open_obj(path, true, jit);
	if (!obj) {
		free(data);
		return 1;
	}
	p = bpfrt_object_find_prog(obj, name);
	if (!p) {
		fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
		err = -ENOENT;
		goto out;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < repeat && !err; i++)
		err = bpfrt_prog_run(p, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP,
				     (uint64_t)(uintptr_t)data, data_len, &r0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		fprintf(stderr, "bpfrt: run failed: %s\n", bpfrt_last_error());
		goto out;
	}
	printf("retval %" PRIu64 " (0x%" PRIx64 "), %.1f ns per run over %ld runs (%s)\n", r0, r0,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / repeat, repeat,
	       jit ? "jit" : "interpreter");
	/* what bpf_printk wrote, as trace_pipe would show it */
	fflush(stdout);
	bpfrt_trace_pipe(stdout);
	for (int i = 0; i < ndumps; i++) {
		struct bpfrt_map *m = bpfrt_object_find_map(obj, dumps[i]);

		if (!m) {
			fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
			err = -ENOENT;
			continue;
		}
		dump_map(m);
	}
out:
	bpfrt_object_close(obj);
	free(data);
	return err ? 1 : 0;
}

/* bpfrt prog verify OBJ [--prog NAME] [--log-level 0|1|2]: loads the
 * object trusted, then runs the verifier on each program (or NAME) and
 * prints its verdict, and the log of a rejected program. */
static int prog_verify(int argc, char **argv)
{
	const char *path = NULL, *name = NULL;
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	long level = 1;
	size_t log_size = 16u << 20;
	char *log;
	int bad = 0, err, seen = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--log-level") && i + 1 < argc)
			level = strtol(argv[++i], NULL, 0);
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path || level < 0 || level > 2) {
		fprintf(stderr, "usage: bpfrt prog verify OBJ [--prog NAME] [--log-level 0|1|2]\n");
		return 2;
	}
	err = bpfrt_object_open(path, NULL, &obj);
	if (!err)
		err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
			.sz = sizeof(struct bpfrt_object_load_opts), .trusted = true });
	if (err) {
		fprintf(stderr, "bpfrt: %s (%s)\n", bpfrt_last_error(), strerror(-err));
		bpfrt_object_close(obj);
		return 1;
	}
	log = malloc(log_size);
	for (p = bpfrt_object_next_prog(obj, NULL); p && log; p = bpfrt_object_next_prog(obj, p)) {
		struct bpfrt_verify_opts vo = { .sz = sizeof(vo), .log_buf = log,
						.log_size = log_size, .log_level = (uint32_t)level };

		if (name && strcmp(bpfrt_prog_name(p), name))
			continue;
		seen++;
		err = bpfrt_prog_verify(p, &vo);
		if (err) {
			bad++;
			printf("%s", log);
			printf("%s: rejected: %s\n", bpfrt_prog_name(p), bpfrt_last_error());
		} else {
			if (level >= 2)
				printf("%s", log);
			printf("%s: verified (%" PRIu64 " insns processed, %u states)\n",
			       bpfrt_prog_name(p), vo.insn_processed, vo.states);
		}
	}
	if (name && !seen) {
		fprintf(stderr, "bpfrt: %s: no program %s\n", path, name);
		bad = 1;
	}
	free(log);
	bpfrt_object_close(obj);
	return bad ? 1 : 0;
}

/* bpfrt prog dump OBJ [--prog NAME] [--jited|--xlated]: bpftool's
 * `prog dump xlated|jited` for the programs of an object as loaded. */
static int prog_dump(int argc, char **argv)
{
	const char *path = NULL, *name = NULL;
	bool jited = false;
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	int seen = 0, err = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--jited"))
			jited = true;
		else if (!strcmp(argv[i], "--xlated"))
			jited = false;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path) {
		fprintf(stderr, "usage: bpfrt prog dump OBJ [--prog NAME] [--jited|--xlated]\n");
		return 2;
	}
	obj = open_obj(path, true, jited);
	if (!obj)
		return 1;
	for (p = bpfrt_object_next_prog(obj, NULL); p && !err; p = bpfrt_object_next_prog(obj, p)) {
		if (name && strcmp(bpfrt_prog_name(p), name))
			continue;
		printf("%s%s: (%s)\n", seen++ ? "\n" : "", bpfrt_prog_name(p), bpfrt_prog_section(p));
		err = jited ? bpfrt_prog_dump_jited(p, stdout) : bpfrt_prog_dump_xlated(p, stdout);
		if (err)
			fprintf(stderr, "bpfrt: %s (%s)\n", bpfrt_last_error(), strerror(-err));
	}
	if (name && !seen) {
		fprintf(stderr, "bpfrt: %s: no program %s\n", path, name);
		err = -ENOENT;
	}
	bpfrt_object_close(obj);
	return err ? 1 : 0;
}

int cli_prog(int argc, char **argv)
{
	if (argc >= 1 && !strcmp(argv[0], "dump"))
		return prog_dump(argc - 1, argv + 1);
	if (argc >= 1 && !strcmp(argv[0], "verify"))
		return prog_verify(argc - 1, argv + 1);
	if (argc >= 1 && !strcmp(argv[0], "list"))
		return prog_list(argc - 1, argv + 1);
	if (argc >= 1 && !strcmp(argv[0], "run"))
		return prog_run(argc - 1, argv + 1);
	fprintf(stderr, "usage: bpfrt prog list OBJ | bpfrt prog run OBJ --prog NAME ... | "
			"bpfrt prog verify OBJ [--prog NAME] [--log-level 0|1|2] | "
			"bpfrt prog dump OBJ [--prog NAME] [--jited|--xlated]\n");
	return 2;
}

/* bpfrt map dump OBJ NAME [--after PROG [--interp]]: the map as loaded, or
 * after one run of PROG. */
int cli_map(int argc, char **argv)
{
	struct bpfrt_object *obj;
	struct bpfrt_map *m;
	const char *after = NULL;
	bool jit = true;
	int err = 0;

	if (argc < 3 || strcmp(argv[0], "dump")) {
		fprintf(stderr, "usage: bpfrt map dump OBJ NAME [--after PROG] [--interp]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--after") && i + 1 < argc)
			after = argv[++i];
		else if (!strcmp(argv[i], "--interp"))
			jit = false;
		else {
			fprintf(stderr, "bpfrt map dump: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	obj = open_obj(argv[1], true, jit);
	if (!obj)
		return 1;
	if (after) {
		struct bpfrt_prog *p = bpfrt_object_find_prog(obj, after);
		uint64_t r0;

		err = p ? bpfrt_prog_run(p, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, 0, 0, &r0)
			: -ENOENT;
		if (err)
			fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
	}
	m = err ? NULL : bpfrt_object_find_map(obj, argv[2]);
	if (!err && !m) {
		fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
		err = -ENOENT;
	}
	if (m)
		dump_map(m);
	bpfrt_object_close(obj);
	return err ? 1 : 0;
}
