/* bpf_for_each_map_elem run through programs in the interpreter and the
 * JIT: every element once, the callback's return stops the walk and is
 * counted, values are the elements' own (writes stay), flags refused as
 * Linux, and a callback that deletes the elements it visits ends. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <string.h>

#define LDDW_FUNC(DST, REL) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, DST, BPF_PSEUDO_FUNC, 0, REL), INSN(0, 0, 0, 0, 0)

static const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT };
static const char *const mode_names[] = { "interp", "jit" };
#define FOR_EACH_MODE(m) for (size_t m = 0; m < ARRAY_LEN(modes); m++)

/* What the callback sees and does, through ctx (r4). */
struct walk_ctx {
	uint64_t calls;
	uint64_t key_sum;
	uint64_t value_sum;
	uint64_t stop_at;   /* return 1 on this call (1-based; 0: never) */
	uint64_t flags;     /* the helper's flags argument */
	uint64_t del;       /* delete the element visited */
};

/* main(ctx = &walk_ctx): r0 = for_each_map_elem(map, cb, &fp[-8] holding
 * the walk_ctx pointer, ctx->flags). cb adds the u32 key and the u64 at
 * value+0 into the sums, increments the value, maybe deletes the element,
 * and returns 1 at stop_at. */
static void build(struct bpf_insn *out, size_t *cnt, struct bpfrt_map *map)
{
	const struct bpf_insn insns[] = {
		STX(BPF_DW, BPF_R10, BPF_R1, -8),
		LDX(BPF_DW, BPF_R4, BPF_R1, 32),     /* flags */
		LDDW(BPF_R1, (uintptr_t)map),
		LDDW_FUNC(BPF_R2, 5),
		MOV64_REG(BPF_R3, BPF_R10),
		ALU64_IMM(BPF_ADD, BPF_R3, -8),
		CALL_HELPER(BPF_FUNC_for_each_map_elem),
		EXIT(),
		/* cb(map, key, value, ctx) */
		LDX(BPF_DW, BPF_R6, BPF_R4, 0),      /* r6 = walk_ctx */
		LDX(BPF_DW, BPF_R7, BPF_R6, 0),
		ALU64_IMM(BPF_ADD, BPF_R7, 1),
		STX(BPF_DW, BPF_R6, BPF_R7, 0),      /* calls++ */
		LDX(BPF_W, BPF_R8, BPF_R2, 0),
		LDX(BPF_DW, BPF_R9, BPF_R6, 8),
		ALU64_REG(BPF_ADD, BPF_R9, BPF_R8),
		STX(BPF_DW, BPF_R6, BPF_R9, 8),      /* key_sum += key */
		LDX(BPF_DW, BPF_R8, BPF_R3, 0),
		LDX(BPF_DW, BPF_R9, BPF_R6, 16),
		ALU64_REG(BPF_ADD, BPF_R9, BPF_R8),
		STX(BPF_DW, BPF_R6, BPF_R9, 16),     /* value_sum += *value */
		ALU64_IMM(BPF_ADD, BPF_R8, 1),
		STX(BPF_DW, BPF_R3, BPF_R8, 0),      /* (*value)++ */
		LDX(BPF_DW, BPF_R8, BPF_R6, 40),
		JMP_IMM(BPF_JEQ, BPF_R8, 0, 1),
		CALL_HELPER(BPF_FUNC_map_delete_elem), /* r1 = map, r2 = key still */
		MOV64_IMM(BPF_R0, 0),
		LDX(BPF_DW, BPF_R8, BPF_R6, 24),
		JMP_REG(BPF_JNE, BPF_R8, BPF_R7, 1),
		MOV64_IMM(BPF_R0, 1),
		EXIT(),
	};

	memcpy(out, insns, sizeof(insns));
	*cnt = ARRAY_LEN(insns);
}

static int64_t walk(size_t m, struct bpfrt_map *map, struct walk_ctx *x)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "for_each", .jit = modes[m] == BPFRT_EXEC_JIT);
	struct bpf_insn insns[64];
	struct bpfrt_prog *prog;
	uint64_t r0 = 0xdeadbeef;
	size_t cnt;
	int err;

	build(insns, &cnt, map);
	err = bpfrt_prog_load(insns, cnt, &opts, &prog);
	if (!err) {
		err = bpfrt_prog_run(prog, modes[m], (uintptr_t)x, sizeof(*x), &r0);
		bpfrt_prog_free(prog);
	}
	if (err)
		tl_fail(__FILE__, __LINE__, "%s: %d %s", mode_names[m], err, bpfrt_last_error());
	return (int64_t)r0;
}

static struct bpfrt_map *filled(enum bpf_map_type type, uint32_t n, uint32_t max)
{
	struct bpfrt_map *map;

	if (bpfrt_map_create(type, "walked", 4, 8, max, NULL, &map))
		return NULL;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t v = 100 + k;

		if (bpfrt_map_update_elem(map, &k, &v, BPF_ANY)) {
			bpfrt_map_free(map);
			return NULL;
		}
	}
	return map;
}

TEST(array_every_element_once_and_values_are_the_elements)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map = filled(BPF_MAP_TYPE_ARRAY, 4, 4);
		struct walk_ctx x = { 0 };
		uint64_t v;
		uint32_t k = 2;

		REQUIRE(map, "%s", bpfrt_last_error());
		CHECK_EQ(walk(m, map, &x), 4);
		CHECK_EQ(x.calls, 4);
		CHECK_EQ(x.key_sum, 0 + 1 + 2 + 3);
		CHECK_EQ(x.value_sum, 100 + 101 + 102 + 103);
		REQUIRE(bpfrt_map_lookup_elem(map, &k, &v) == 0);
		CHECK_EQ(v, 103, "%s: the callback's write went to the element", mode_names[m]);
		bpfrt_map_free(map);
	}
}

TEST(callback_returning_1_stops_and_is_counted)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map = filled(BPF_MAP_TYPE_HASH, 5, 16);
		struct walk_ctx x = { .stop_at = 2 };

		REQUIRE(map, "%s", bpfrt_last_error());
		CHECK_EQ(walk(m, map, &x), 2);
		CHECK_EQ(x.calls, 2);
		bpfrt_map_free(map);
	}
}

TEST(hash_every_element_once)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map = filled(BPF_MAP_TYPE_HASH, 7, 16);
		struct walk_ctx x = { 0 };

		REQUIRE(map, "%s", bpfrt_last_error());
		CHECK_EQ(walk(m, map, &x), 7);
		CHECK_EQ(x.key_sum, 0 + 1 + 2 + 3 + 4 + 5 + 6);
		CHECK_EQ(x.value_sum, 7 * 100 + 21);
		bpfrt_map_free(map);
	}
}

TEST(empty_map_and_flags)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map = filled(BPF_MAP_TYPE_HASH, 0, 16);
		struct walk_ctx x = { 0 };

		REQUIRE(map, "%s", bpfrt_last_error());
		CHECK_EQ(walk(m, map, &x), 0);
		CHECK_EQ(x.calls, 0);
		bpfrt_map_free(map);
		map = filled(BPF_MAP_TYPE_ARRAY, 2, 2);
		REQUIRE(map);
		x = (struct walk_ctx){ .flags = 1 };
		CHECK_EQ(walk(m, map, &x), -EINVAL);
		CHECK_EQ(x.calls, 0);
		bpfrt_map_free(map);
	}
}

/* Deleting the visited element makes get_next_key start over; the walk
 * still visits each element once and ends with the map empty. */
TEST(callback_deleting_its_elements_ends)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map = filled(BPF_MAP_TYPE_HASH, 6, 8);
		struct walk_ctx x = { .del = 1 };
		uint32_t k;

		REQUIRE(map, "%s", bpfrt_last_error());
		CHECK_EQ(walk(m, map, &x), 6);
		CHECK_EQ(x.key_sum, 0 + 1 + 2 + 3 + 4 + 5);
		CHECK_EQ(bpfrt_map_get_next_key(map, NULL, &k), -ENOENT);
		bpfrt_map_free(map);
	}
}

TEST(percpu_array_value_is_this_cpus)
{
	FOR_EACH_MODE(m) {
		struct bpfrt_map *map;
		struct walk_ctx x = { 0 };

		REQUIRE(bpfrt_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "pcpu", 4, 8, 3, NULL, &map) ==
			0);
		CHECK_EQ(walk(m, map, &x), 3);
		CHECK_EQ(x.value_sum, 0); /* zeroed values */
		bpfrt_map_free(map);
	}
}
