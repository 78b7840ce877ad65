/* bpfrt prog / map subcommands: objects built by clang, loaded and run
 * in this process through bpfrt_prog_test_run_opts (BPF_PROG_TEST_RUN),
 * maps dumped after the run. */
#include "cli.h"
#include "cli_btf.h"
#include "bpfrt/bpfrt.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum bpfrt_prog_kind k)
{
	const struct bpfrt_prog_kind_info *info = bpfrt_prog_kind_info(k);

	return info ? info->name : "?";
}

/* Linux's names ("hash", "lpm_trie", ...), from libbpf's table, so every
 * map type bpfrt gains is named without a list here. */
static const char *map_type_name(enum bpf_map_type t)
{
	const char *name = libbpf_bpf_map_type_str(t);

	return name ? name : "?";
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

/* One key or value: formatted by its BTF type, or the bytes. */
static void write_formatted(struct cli_btf *btf, struct jw *w, uint32_t id, const void *buf,
			    size_t len)
{
	if (btf && id)
		cli_btf_write(btf, w, id, buf, len);
	else
		jw_hex(w, buf, len);
}

static void write_value(struct cli_btf *btf, struct jw *w, const struct cli_map_types *t,
			const void *val, size_t len)
{
	if (t->section)
		cli_btf_write_section(btf, w, t->sec_name, val, len);
	else
		write_formatted(btf, w, t->value, val, len);
}

/* One entry as bpftool shows it: {"key": .., "value": ..}, per-CPU maps
 * {"key": .., "values": [{"cpu": N, "value": ..}...]}. raw: the bytes as
 * hex lists, and the formatted view under "formatted" (bpftool -j). */
static void write_entry(struct cli_btf *btf, struct jw *w, struct bpfrt_map *map,
			const struct cli_map_types *t, const void *key, const void *val, bool raw)
{
	uint32_t ks = bpfrt_map_key_size(map), vs = bpfrt_map_value_size(map);
	enum bpf_map_type type = bpfrt_map_type(map);
	bool percpu = type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
		      type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	int cpus = percpu ? bpfrt_num_possible_cpus() : 1;
	size_t stride = ((size_t)vs + 7) / 8 * 8;
	bool formatted = btf && (t->key || t->value || t->section);

	jw_open(w, '{');
	for (int pass = 0; pass < 2; pass++) {
		bool fmt = raw ? pass == 1 : true;

		if (raw && pass == 1) {
			if (!formatted)
				break;
			jw_key(w, "formatted");
			jw_open(w, '{');
		}
		if (!raw && pass == 1)
			break;
		jw_key(w, "key");
		if (fmt && t->section && ks == 4) /* the one index of a data section */
			jw_u64(w, *(const uint32_t *)key);
		else if (fmt)
			write_formatted(btf, w, t->key, key, ks);
		else
			jw_hex(w, key, ks);
		if (percpu) {
			jw_key(w, "values");
			jw_open(w, '[');
			for (int c = 0; c < cpus; c++) {
				jw_open(w, '{');
				jw_key(w, "cpu");
				jw_u64(w, (uint64_t)c);
				jw_key(w, "value");
				if (fmt)
					write_value(btf, w, t, (const uint8_t *)val + c * stride, vs);
				else
					jw_hex(w, (const uint8_t *)val + c * stride, vs);
				jw_close(w, '}');
			}
			jw_close(w, ']');
		} else {
			jw_key(w, "value");
			if (fmt)
				write_value(btf, w, t, val, vs);
			else
				jw_hex(w, val, vs);
		}
		if (raw && pass == 1)
			jw_close(w, '}');
	}
	jw_close(w, '}');
}

struct ring_dump {
	struct jw *w;
	bool json;
	int n;
};

static int dump_record(void *ctx, void *data, size_t len)
{
	struct ring_dump *d = ctx;

	if (d->json) {
		jw_open(d->w, '{');
		jw_key(d->w, "record");
		jw_u64(d->w, (uint64_t)d->n);
		jw_key(d->w, "len");
		jw_u64(d->w, len);
		jw_key(d->w, "data");
		jw_hex(d->w, data, len);
		jw_close(d->w, '}');
	} else {
		printf("  record %d (%zu bytes): ", d->n, len);
		hex(data, len);
		printf("\n");
	}
	d->n++;
	return 0;
}

/* Prints every entry of map: formatted by the object's BTF when it
 * describes the map (bpftool's plain output), else the bytes; json:
 * bpftool -j's array (bytes, and "formatted"). Ring buffers show the
 * records waiting in them (consumed). */
static int dump_map(struct bpfrt_map *map, struct cli_btf *btf, bool json)
{
	uint32_t ks = bpfrt_map_key_size(map);
	size_t vs = bpfrt_map_value_buf_size(map);
	enum bpf_map_type t = bpfrt_map_type(map);
	void *key = calloc(1, ks ? ks : 1), *next = calloc(1, ks ? ks : 1), *val = calloc(1, vs ? vs : 1);
	struct jw w = { .f = stdout, .pretty = !json };
	struct cli_map_types types;
	bool first = true, typed = cli_btf_map_types(btf, bpfrt_map_name(map), &types);
	int n = 0, err = 0;

	if (!key || !next || !val) {
		fprintf(stderr, "bpfrt: out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	if (!json)
		printf("map %s (%s, key %u, value %u, max_entries %u)\n", bpfrt_map_name(map),
		       map_type_name(t), ks, bpfrt_map_value_size(map), bpfrt_map_max_entries(map));
	if (t == BPF_MAP_TYPE_RINGBUF) {
		struct ring_dump d = { .w = &w, .json = json };

		if (json)
			jw_open(&w, '[');
		err = bpfrt_ringbuf_consume(map, dump_record, &d);
		if (json)
			jw_close(&w, ']');
		if (err < 0)
			fprintf(stderr, "bpfrt: %s: %s\n", bpfrt_map_name(map), bpfrt_last_error());
		else if (!json)
			printf("  %d records\n", d.n);
		err = err < 0 ? err : 0;
		goto out;
	}
	if (t == BPF_MAP_TYPE_QUEUE || t == BPF_MAP_TYPE_STACK) {
		/* keyless: the values in pop order (popped: the object is this
		 * process's own) */
		if (json || typed)
			jw_open(&w, '[');
		while (bpfrt_map_lookup_and_delete_elem(map, NULL, val, 0) == 0) {
			if (json || typed) {
				jw_open(&w, '{');
				jw_key(&w, "value");
				if (json)
					jw_hex(&w, val, vs);
				else
					write_formatted(btf, &w, types.value, val, vs);
				if (json && typed) {
					jw_key(&w, "formatted");
					jw_open(&w, '{');
					jw_key(&w, "value");
					write_formatted(btf, &w, types.value, val, vs);
					jw_close(&w, '}');
				}
				jw_close(&w, '}');
			} else {
				printf("  value: ");
				hex(val, vs);
				printf("\n");
			}
			n++;
		}
		if (json || typed)
			jw_close(&w, ']');
		if (!json)
			printf("  %d values\n", n);
		goto out;
	}
	if (t == BPF_MAP_TYPE_BLOOM_FILTER) {
		/* membership answers only: nothing to list */
		if (json)
			printf("[]\n");
		else
			printf("  a bloom filter has no entries to list (bpfrt_map_lookup_elem tests a value)\n");
		goto out;
	}
	if (t == BPF_MAP_TYPE_PROG_ARRAY) {
		/* slots hold programs, not bytes */
		if (json)
			printf("[]\n");
		goto out;
	}
	if (json || typed)
		jw_open(&w, '[');
	while (bpfrt_map_get_next_key(map, first ? NULL : key, next) == 0) {
		first = false;
		memcpy(key, next, ks);
		if (bpfrt_map_lookup_elem(map, key, val))
			continue;
		if (json || typed) {
			write_entry(typed ? btf : NULL, &w, map, &types, key, val, json);
		} else {
			printf("  key: ");
			hex(key, ks);
			printf("  value: ");
			hex(val, vs);
			printf("\n");
		}
		n++;
	}
	if (json || typed)
		jw_close(&w, ']');
	if (!json)
		printf("  %d entries\n", n);
out:
	free(key);
	free(next);
	free(val);
	return err;
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

/* Hex dump, 16 bytes a line with the offset first. */
static void hex_lines(const char *what, const void *buf, uint32_t len)
{
	printf("%s (%u bytes):\n", what, len);
	for (uint32_t off = 0; off < len; off += 16) {
		printf("  %04x: ", off);
		hex((const uint8_t *)buf + off, len - off < 16 ? len - off : 16);
		printf("\n");
	}
}

/* One test run (bpfrt_prog_test_run_opts) of p with the packet and
 * context given (either may be NULL); what the program returned and left
 * in the packet or context goes to o. The message says what failed. */
static int test_run(struct bpfrt_prog *p, enum bpfrt_exec_mode mode, const void *data,
		    size_t data_len,
		    const void *ctx, size_t ctx_len, long repeat, struct bpfrt_test_run_opts *o,
		    void *data_out, void *ctx_out)
{
	const struct bpfrt_prog_kind_info *kind = bpfrt_prog_kind_info(bpfrt_prog_kind(p));
	/* the context comes back only where it is the caller's memory */
	bool has_ctx_out = kind && kind->ctx_writable;
	bool packet = kind && kind->packet;
	int err;

	*o = (struct bpfrt_test_run_opts){
		.sz = sizeof(*o), .data_in = data, .data_size_in = (uint32_t)data_len,
		.ctx_in = ctx, .ctx_size_in = (uint32_t)ctx_len, .repeat = (int)repeat,
		.mode = mode,
	};
	if (data_len > BPFRT_TEST_RUN_MAX_DATA || ctx_len > BPFRT_TEST_RUN_MAX_CTX) {
		fprintf(stderr, "bpfrt: run failed: %s: %s of %zu bytes, at most %u\n",
			bpfrt_prog_name(p), data_len > BPFRT_TEST_RUN_MAX_DATA ? "--data" : "--ctx",
			data_len > BPFRT_TEST_RUN_MAX_DATA ? data_len : ctx_len,
			data_len > BPFRT_TEST_RUN_MAX_DATA ? BPFRT_TEST_RUN_MAX_DATA
							   : BPFRT_TEST_RUN_MAX_CTX);
		return -EINVAL;
	}
	if (data) {
		o->data_out = data_out;
		o->data_size_out = (uint32_t)data_len;
	}
	if (has_ctx_out && ctx) {
		o->ctx_out = ctx_out;
		o->ctx_size_out = (uint32_t)ctx_len;
	}
	err = bpfrt_prog_test_run_opts(p, o);
	if (err) {
		const char *hint = "";

		if (data && !packet)
			hint = " (--data is a packet, for xdp and socket programs; the context is --ctx FILE)";
		else if (!data && packet)
			hint = " (give the packet with --data FILE)";
		fprintf(stderr, "bpfrt: run failed: %s%s\n", bpfrt_last_error(), hint);
	}
	return err;
}

static int prog_run(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *data_path = NULL, *ctx_path = NULL;
	const char *dumps[16];
	int ndumps = 0;
	long repeat = 1;
	bool jit = true, checked = false;
	struct bpfrt_object *obj = NULL;
	struct bpfrt_test_run_opts o;
	struct bpfrt_prog *p;
	char *data = NULL, *ctx = NULL, *data_out = NULL, *ctx_out = NULL;
	size_t data_len = 0, ctx_len = 0;
	char *end;
	int err = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--data") && i + 1 < argc)
			data_path = argv[++i];
		else if (!strcmp(argv[i], "--ctx") && i + 1 < argc)
			ctx_path = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
			repeat = strtol(argv[++i], &end, 0);
			if (*end || !*argv[i])
				repeat = -1;
		} else if (!strcmp(argv[i], "--dump-map") && i + 1 < argc && ndumps < 16)
			dumps[ndumps++] = argv[++i];
		else if (!strcmp(argv[i], "--jit"))
			jit = true;
		else if (!strcmp(argv[i], "--interp"))
			jit = false;
		else if (!strcmp(argv[i], "--checked"))
			jit = false, checked = true;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "bpfrt prog run: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!path || !name || repeat < 1 || repeat > INT32_MAX) {
		fprintf(stderr, "usage: bpfrt prog run OBJ --prog NAME [--data FILE] [--ctx FILE] "
				"[--repeat N] [--jit|--interp|--checked] [--dump-map NAME]...\n");
		return 2;
	}
	if (data_path && !(data = read_all(data_path, &data_len))) {
		fprintf(stderr, "bpfrt: %s: %s\n", data_path, strerror(errno));
		return 1;
	}
	if (ctx_path && !(ctx = read_all(ctx_path, &ctx_len))) {
		fprintf(stderr, "bpfrt: %s: %s\n", ctx_path, strerror(errno));
		err = -errno;
		goto out;
	}
	data_out = malloc(data_len ? data_len : 1);
	ctx_out = malloc(ctx_len ? ctx_len : 1);
	if (!data_out || !ctx_out) {
		fprintf(stderr, "bpfrt: out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	obj = open_obj(path, true, jit);
	if (!obj) {
		err = -EINVAL;
		goto out;
	}
	p = bpfrt_object_find_prog(obj, name);
	if (!p) {
		fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
		err = -ENOENT;
		goto out;
	}
	err = test_run(p, jit ? BPFRT_EXEC_JIT : checked ? BPFRT_EXEC_CHECKED : BPFRT_EXEC_INTERP,
		       data_path ? data : NULL, data_len, ctx_path ? ctx : NULL, ctx_len, repeat, &o,
		       data_out, ctx_out);
	if (err)
		goto out;
	printf("retval %" PRIu64 " (0x%" PRIx64 "), %u ns per run over %ld runs (%s)\n",
	       o.retval, o.retval, o.duration, repeat,
	       jit ? "jit" : checked ? "checking interpreter" : "interpreter");
	if (o.data_out)
		hex_lines("data_out", data_out, o.data_size_out);
	if (o.ctx_out && o.ctx_size_out)
		hex_lines("ctx_out", ctx_out, o.ctx_size_out);
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
		struct cli_btf *btf = cli_btf_open(path);

		if (dump_map(m, btf, false))
			err = -EIO;
		cli_btf_close(btf);
	}
out:
	bpfrt_object_close(obj);
	free(data);
	free(ctx);
	free(data_out);
	free(ctx_out);
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
		BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log,
			   .log_size = log_size, .log_level = (uint32_t)level);

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

/* bpfrt map dump OBJ NAME [--after PROG] [--interp] [--json|-j]: the map
 * as loaded, or after one run of PROG; formatted by the object's BTF. */
int cli_map(int argc, char **argv)
{
	struct bpfrt_object *obj;
	struct bpfrt_map *m;
	const char *after = NULL;
	bool jit = true, json = false;
	int err = 0;

	/* a process traced by bpfrt trace, live (cli_trace_live.c) */
	if (argc >= 2 && !strcmp(argv[1], "-p"))
		return cli_map_live(argc, argv);
	if (argc < 3 || strcmp(argv[0], "dump")) {
		fprintf(stderr, "usage: bpfrt map dump OBJ NAME [--after PROG] [--interp] [--json]\n"
				"       bpfrt map dump -p PID [OBJ:]NAME | map update -p PID [OBJ:]NAME "
				"KEY VALUE\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--after") && i + 1 < argc)
			after = argv[++i];
		else if (!strcmp(argv[i], "--interp"))
			jit = false;
		else if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = true;
		else {
			fprintf(stderr, "bpfrt map dump: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	obj = open_obj(argv[1], true, jit);
	if (!obj)
		return 1;
	if (after) {
		/* one test run with the program's default context */
		struct bpfrt_prog *p = bpfrt_object_find_prog(obj, after);
		struct bpfrt_test_run_opts o;

		if (!p) {
			fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
			err = -ENOENT;
		} else {
			err = test_run(p, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP, NULL, 0, NULL, 0, 1,
				       &o, NULL, NULL);
			/* what the program printed goes to stderr: stdout is the dump */
			if (!err)
				bpfrt_trace_pipe(stderr);
		}
	}
	m = err ? NULL : bpfrt_object_find_map(obj, argv[2]);
	if (!err && !m) {
		fprintf(stderr, "bpfrt: %s\n", bpfrt_last_error());
		err = -ENOENT;
	}
	if (m) {
		struct cli_btf *btf = cli_btf_open(argv[1]);

		err = dump_map(m, btf, json);
		cli_btf_close(btf);
	}
	bpfrt_object_close(obj);
	return err ? 1 : 0;
}
