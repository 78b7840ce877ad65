/* The options convention (bpfrt/opts.h) at the entry points: NULL means
 * defaults, a smaller sz gets the defaults of the fields past it, a larger
 * sz is accepted with a zero tail and refused, naming the struct, with a
 * non-zero byte past the fields this bpfrt knows. Output structs: only
 * the fields within sz are written, a newer caller's tail is zeroed, NULL
 * and an unset sz are refused naming the struct. */
#include "testlib.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static bool has(const char *s)
{
	return strstr(bpfrt_last_error(), s) != NULL;
}

static const struct bpf_insn ret_7[] = { MOV64_IMM(BPF_R0, 7), EXIT() };

/* A newer caller's struct: the known one, then fields this bpfrt lacks. */
struct newer_load_opts {
	struct bpfrt_prog_load_opts known;
	uint64_t future;
};

TEST(bpfrt_opts_zeroes_and_sizes)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "opts", .jit = true);
	BPFRT_OPTS(bpfrt_attach_opts, attach);
	const unsigned char *bytes = (const unsigned char *)&attach;
	size_t nonzero = 0;

	CHECK(opts.sz == sizeof(opts) && opts.jit && !opts.verify && !opts.env);
	CHECK(attach.sz == sizeof(attach));
	for (size_t i = sizeof(attach.sz); i < sizeof(attach); i++)
		nonzero += bytes[i] != 0;
	CHECK(nonzero == 0, "%zu bytes of a BPFRT_OPTS struct not zero", nonzero);
}

TEST(prog_load_opts_sizes)
{
	struct newer_load_opts newer = { 0 };
	struct bpfrt_prog *p = NULL;
	uint64_t r0 = 0;

	/* NULL: defaults */
	REQUIRE(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), NULL, &p) == 0, "%s", bpfrt_last_error());
	CHECK(!strcmp(bpfrt_prog_name(p), "prog") && !bpfrt_prog_jited(p, NULL));
	bpfrt_prog_free(p);

	/* larger, zero tail: accepted, its known fields used */
	newer.known.sz = sizeof(newer);
	newer.known.name = "newer";
	REQUIRE(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), &newer.known, &p) == 0, "%s",
		bpfrt_last_error());
	CHECK(!strcmp(bpfrt_prog_name(p), "newer"));
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 0, 0, &r0) == 0 && r0 == 7);
	bpfrt_prog_free(p);

	/* a field this bpfrt does not have is set: refused, naming the struct */
	newer.future = 1;
	p = NULL;
	CHECK(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), &newer.known, &p) == -EINVAL && !p);
	CHECK(has("struct bpfrt_prog_load_opts") && has("not zero"), "%s", bpfrt_last_error());

	/* an older caller's struct ending before jit: jit stays off whatever
	 * the bytes past its sz hold */
	newer.future = 0;
	newer.known.jit = true;
	newer.known.sz = offsetof(struct bpfrt_prog_load_opts, jit);
	REQUIRE(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), &newer.known, &p) == 0, "%s",
		bpfrt_last_error());
	CHECK(!strcmp(bpfrt_prog_name(p), "newer") && !bpfrt_prog_jited(p, NULL));
	bpfrt_prog_free(p);

	/* sz that does not even cover itself, or garbage */
	newer.known.sz = 4;
	CHECK(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), &newer.known, &p) == -EINVAL);
	CHECK(has("struct bpfrt_prog_load_opts") && has("sz 4"), "%s", bpfrt_last_error());
	newer.known.sz = (size_t)1 << 40;
	CHECK(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), &newer.known, &p) == -EINVAL);
	CHECK(has("struct bpfrt_prog_load_opts"), "%s", bpfrt_last_error());
}

struct newer_map_opts {
	struct bpfrt_map_create_opts known;
	uint32_t future[2];
};

TEST(map_create_opts_sizes)
{
	struct newer_map_opts newer = { .known = { .sz = sizeof(newer),
						   .map_flags = BPF_F_RDONLY } };
	struct bpfrt_map *m = NULL;
	uint32_t key = 0, val = 1;

	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "newer", 4, 4, 1, &newer.known, &m) == 0,
		"%s", bpfrt_last_error());
	CHECK(bpfrt_map_flags(m) == BPF_F_RDONLY);
	bpfrt_map_free(m);
	newer.future[1] = 0x100;
	CHECK(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "newer", 4, 4, 1, &newer.known, &m) == -EINVAL);
	CHECK(has("struct bpfrt_map_create_opts"), "%s", bpfrt_last_error());
	/* older: no map_flags, so not read-only whatever the bytes say */
	newer.future[1] = 0;
	newer.known.sz = offsetof(struct bpfrt_map_create_opts, map_flags);
	REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "older", 4, 4, 1, &newer.known, &m) == 0,
		"%s", bpfrt_last_error());
	CHECK(bpfrt_map_flags(m) == 0);
	CHECK(bpfrt_map_update_elem(m, &key, &val, BPF_ANY) == 0);
	bpfrt_map_free(m);
}

/* The peak of the states kept for pruning: how many and their memory, at
 * most the total saved and at least one state's worth each. */
TEST(verify_opts_report_peak_states)
{
	static const struct bpf_insn branchy[] = {
		MOV64_IMM(BPF_R0, 0),
		JMP_IMM(BPF_JEQ, BPF_R2, 0, 1),
		MOV64_IMM(BPF_R0, 1),
		JMP_IMM(BPF_JGT, BPF_R2, 7, 1),
		MOV64_IMM(BPF_R0, 2),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .name = "peak_states");
	BPFRT_OPTS(bpfrt_verify_opts, vo);
	struct bpfrt_prog *p;

	REQUIRE(bpfrt_prog_load(branchy, ARRAY_LEN(branchy), &lo, &p) == 0, "%s",
		bpfrt_last_error());
	CHECK(bpfrt_prog_verify(p, &vo) == 0, "%s", bpfrt_last_error());
	CHECK(vo.states > 0);
	CHECK(vo.peak_states > 0 && vo.peak_states <= vo.states, "peak %u of %u", vo.peak_states,
	      vo.states);
	CHECK(vo.peak_state_bytes >= vo.peak_states * 128ull, "%llu bytes for %u states",
	      (unsigned long long)vo.peak_state_bytes, vo.peak_states);
	bpfrt_prog_free(p);
}

/* Output fields are written only where the caller's struct has them. */
TEST(verify_opts_outputs_stop_at_sz)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .name = "verify_sz");
	struct {
		struct bpfrt_verify_opts vo;
		uint32_t canary;
	} older;
	struct bpfrt_prog *p;
	char log[256];

	REQUIRE(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), &lo, &p) == 0, "%s", bpfrt_last_error());
	memset(&older, 0, sizeof(older));
	older.vo.sz = offsetof(struct bpfrt_verify_opts, states);
	older.vo.states = 0xdead;
	older.canary = 0xbeef;
	CHECK(bpfrt_prog_verify(p, &older.vo) == 0, "%s", bpfrt_last_error());
	CHECK(older.vo.insn_processed > 0);
	CHECK(older.vo.states == 0xdead && older.canary == 0xbeef, "wrote past sz");
	CHECK(bpfrt_prog_verify(p, NULL) == 0, "%s", bpfrt_last_error());
	{
		BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log, .log_size = 8, .log_level = 2);

		CHECK(bpfrt_prog_verify(p, &vo) == 0, "%s", bpfrt_last_error());
		CHECK(vo.log_true_size > 8 && strlen(log) == 7, "true size %u, kept %zu",
		      vo.log_true_size, strlen(log));
	}
	bpfrt_prog_free(p);
}

TEST(env_and_object_opts_checked)
{
	struct {
		struct bpfrt_env_opts known;
		uint8_t future;
	} newer = { .known = { .sz = sizeof(newer) }, .future = 1 };
	struct {
		struct bpfrt_object_open_opts known;
		uint64_t future;
	} open_newer = { .known = { .sz = sizeof(open_newer) }, .future = 3 };
	struct bpfrt_object *obj = NULL;
	struct bpfrt_env *env = NULL;

	CHECK(bpfrt_env_new(&newer.known, &env) == -EINVAL && !env);
	CHECK(has("struct bpfrt_env_opts"), "%s", bpfrt_last_error());
	newer.future = 0;
	REQUIRE(bpfrt_env_new(&newer.known, &env) == 0, "%s", bpfrt_last_error());
	bpfrt_env_free(env);
	/* refused before the file is even looked at */
	CHECK(bpfrt_object_open("/nonexistent.bpf.o", &open_newer.known, &obj) == -EINVAL);
	CHECK(has("struct bpfrt_object_open_opts"), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_attach(NULL, NULL, NULL) == -EINVAL);
}

/* ---- output structs: bpfrt writes only what the caller's sz covers ---- */

#define END_OF(type, field) (offsetof(struct type, field) + sizeof(((struct type *)0)->field))
#define CANARY 0xa5

/* Bytes of p in [from, to) that are not the canary. */
static size_t canary_broken(const void *p, size_t from, size_t to)
{
	const unsigned char *b = p;
	size_t n = 0;

	for (size_t i = from; i < to; i++)
		n += b[i] != CANARY;
	return n;
}

TEST(privstack_stats_writes_only_within_sz)
{
	struct bpfrt_privstack_stats st;
	struct {
		struct bpfrt_privstack_stats known;
		uint64_t future;
	} newer;
	size_t older = END_OF(bpfrt_privstack_stats, bytes_mapped);

	/* an older caller's struct: live and bytes_mapped, nothing past them */
	memset(&st, CANARY, sizeof(st));
	st.sz = older;
	REQUIRE(bpfrt_privstack_stats(&st) == 0, "%s", bpfrt_last_error());
	CHECK(st.sz == older);
	CHECK(canary_broken(&st, offsetof(struct bpfrt_privstack_stats, live), older) > 0,
	      "the fields within sz were not written");
	CHECK(canary_broken(&st, older, sizeof(st)) == 0, "%zu bytes past sz written",
	      canary_broken(&st, older, sizeof(st)));

	/* a newer caller's struct: every known field, the unknown tail zeroed */
	memset(&newer, CANARY, sizeof(newer));
	newer.known.sz = sizeof(newer);
	REQUIRE(bpfrt_privstack_stats(&newer.known) == 0, "%s", bpfrt_last_error());
	CHECK(newer.future == 0, "tail %#llx", (unsigned long long)newer.future);
	CHECK(newer.known.frees <= newer.known.allocs && newer.known.live != 0xa5a5a5a5a5a5a5a5ull);

	/* NULL, sz unset, sz garbage: refused naming the struct, nothing written */
	CHECK(bpfrt_privstack_stats(NULL) == -EINVAL);
	CHECK(has("struct bpfrt_privstack_stats"), "%s", bpfrt_last_error());
	memset(&st, CANARY, sizeof(st));
	st.sz = 0;
	CHECK(bpfrt_privstack_stats(&st) == -EINVAL);
	CHECK(has("struct bpfrt_privstack_stats") && has("sz 0"), "%s", bpfrt_last_error());
	st.sz = sizeof(size_t); /* reaches no field */
	CHECK(bpfrt_privstack_stats(&st) == -EINVAL);
	st.sz = 1u << 20;
	CHECK(bpfrt_privstack_stats(&st) == -EINVAL);
	CHECK(has("struct bpfrt_privstack_stats"), "%s", bpfrt_last_error());
	CHECK(canary_broken(&st, sizeof(st.sz), sizeof(st)) == 0, "a refused call wrote");
}

TEST(privstack_info_writes_only_within_sz)
{
	struct bpfrt_privstack_info info;
	struct bpfrt_prog *p = NULL;
	size_t older = END_OF(bpfrt_privstack_info, faulted);

	REQUIRE(bpfrt_prog_load(ret_7, ARRAY_LEN(ret_7), NULL, &p) == 0, "%s", bpfrt_last_error());
	memset(&info, CANARY, sizeof(info));
	info.sz = older;
	REQUIRE(bpfrt_prog_privstack_info(p, &info) == 0, "%s", bpfrt_last_error());
	CHECK(canary_broken(&info, offsetof(struct bpfrt_privstack_info, enabled),
			    END_OF(bpfrt_privstack_info, faulted)) == 2, "enabled, faulted not written");
	CHECK(canary_broken(&info, older, sizeof(info)) == 0, "%zu bytes past sz written",
	      canary_broken(&info, older, sizeof(info)));

	info.sz = 0;
	CHECK(bpfrt_prog_privstack_info(p, &info) == -EINVAL);
	CHECK(has("struct bpfrt_privstack_info"), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_privstack_info(p, NULL) == -EINVAL);
	CHECK(has("struct bpfrt_privstack_info"), "%s", bpfrt_last_error());
	info.sz = sizeof(info);
	CHECK(bpfrt_prog_privstack_info(NULL, &info) == -EINVAL);
	CHECK(has("program"), "%s", bpfrt_last_error());
	bpfrt_prog_free(p);
}

TEST(execmem_stats_writes_only_within_sz)
{
	struct bpfrt_execmem_stats st;
	struct {
		struct bpfrt_execmem_stats known;
		uint32_t future;
	} newer;
	size_t older = END_OF(bpfrt_execmem_stats, own_cnt);

	memset(&st, CANARY, sizeof(st));
	st.sz = older;
	REQUIRE(bpfrt_execmem_stats(&st) == 0, "%s", bpfrt_last_error());
	CHECK(st.packing == bpfrt_execmem_packing());
	CHECK(canary_broken(&st, older, sizeof(st)) == 0, "%zu bytes past sz written",
	      canary_broken(&st, older, sizeof(st)));

	memset(&newer, CANARY, sizeof(newer));
	newer.known.sz = sizeof(newer);
	REQUIRE(bpfrt_execmem_stats(&newer.known) == 0, "%s", bpfrt_last_error());
	CHECK(newer.future == 0 && newer.known.pack_info_cnt <= BPFRT_EXECMEM_STATS_PACKS);
	CHECK(canary_broken(&newer, sizeof(newer.known), sizeof(newer)) == sizeof(newer) -
	      sizeof(newer.known), "the tail past the known fields is not zeroed");

	CHECK(bpfrt_execmem_stats(NULL) == -EINVAL);
	CHECK(has("struct bpfrt_execmem_stats"), "%s", bpfrt_last_error());
	st.sz = 0;
	CHECK(bpfrt_execmem_stats(&st) == -EINVAL);
	CHECK(has("struct bpfrt_execmem_stats") && has("sz 0"), "%s", bpfrt_last_error());
}

TEST(helper_info_writes_only_within_sz)
{
	struct bpfrt_helper_info h;
	size_t older = END_OF(bpfrt_helper_info, name);

	bpfrt_helpers_init();
	memset(&h, CANARY, sizeof(h));
	h.sz = older;
	REQUIRE(bpfrt_helper_info(BPF_FUNC_map_lookup_elem, &h) == 0, "%s", bpfrt_last_error());
	CHECK(!strcmp(h.name, "map_lookup_elem"));
	CHECK(canary_broken(&h, older, sizeof(h)) == 0, "%zu bytes past sz written",
	      canary_broken(&h, older, sizeof(h)));

	h.sz = sizeof(h);
	CHECK(bpfrt_helper_info(BPFRT_MAX_HELPER_ID, &h) == -ENOENT);
	CHECK(has("helper 1024"), "%s", bpfrt_last_error());
	h.sz = 0;
	CHECK(bpfrt_helper_info(BPF_FUNC_map_lookup_elem, &h) == -EINVAL);
	CHECK(has("struct bpfrt_helper_info"), "%s", bpfrt_last_error());
	CHECK(bpfrt_helper_info(BPF_FUNC_map_lookup_elem, NULL) == -EINVAL);
	CHECK(has("struct bpfrt_helper_info"), "%s", bpfrt_last_error());
}
