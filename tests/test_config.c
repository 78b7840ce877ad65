/* The environment variables of src/engine/core/config.h: how each kind is
 * read, and that a value is seen only once read (again). */
#include "testlib.h"
#include "core/config.h"

#include <stdlib.h>
#include <string.h>

static const struct bpfrt_config *with(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	bpfrt_config_reread();
	return bpfrt_config();
}

TEST(flags_are_off_for_zero_and_default_when_unset_or_empty)
{
	CHECK_EQ(with("BPFRT_NO_PACK", NULL)->no_pack, false);
	CHECK_EQ(with("BPFRT_NO_PACK", "")->no_pack, false);
	CHECK_EQ(with("BPFRT_NO_PACK", "1")->no_pack, true);
	CHECK_EQ(with("BPFRT_NO_PACK", "yes")->no_pack, true);
	CHECK_EQ(with("BPFRT_NO_PACK", "0")->no_pack, false);
	/* a default-on flag */
	CHECK_EQ(with("BPFRT_RCU_MEMBARRIER", NULL)->rcu_membarrier, true);
	CHECK_EQ(with("BPFRT_RCU_MEMBARRIER", "")->rcu_membarrier, true);
	CHECK_EQ(with("BPFRT_RCU_MEMBARRIER", "0")->rcu_membarrier, false);
	with("BPFRT_NO_PACK", NULL);
	with("BPFRT_RCU_MEMBARRIER", NULL);
}

TEST(sizes_take_binary_suffixes_and_malformed_ones_are_ignored)
{
	static const struct { const char *text; uint64_t bytes; } good[] = {
		{ "0", 0 }, { "4096", 4096 }, { "64k", 64 << 10 }, { "512M", 512u << 20 },
		{ "2g", 2ull << 30 }, { "1tb", 1ull << 40 }, { "3KB", 3 << 10 },
	};
	static const char *const bad[] = { "", "-1", "12x", "k", "1kk", "99999999999t" };
	const struct bpfrt_config *c;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		c = with("BPFRT_MAP_MEMORY_LIMIT", good[i].text);
		CHECK(c->map_memory_limit.set, "%s", good[i].text);
		CHECK_EQ(c->map_memory_limit.bytes, good[i].bytes, "%s", good[i].text);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!with("BPFRT_MAP_MEMORY_LIMIT", bad[i])->map_memory_limit.set, "'%s'", bad[i]);
	CHECK(!with("BPFRT_MAP_MEMORY_LIMIT", NULL)->map_memory_limit.set);
}

TEST(text_is_kept_as_given_and_set_even_when_empty)
{
	const struct bpfrt_config *c = with("BPFRT_RISCV_EXT", NULL);

	CHECK(!c->riscv_ext.set);
	c = with("BPFRT_RISCV_EXT", "");
	CHECK(c->riscv_ext.set);
	CHECK_STR_EQ(c->riscv_ext.value, "");
	c = with("BPFRT_RISCV_EXT", "zba,zbb");
	CHECK_STR_EQ(c->riscv_ext.value, "zba,zbb");
	with("BPFRT_RISCV_EXT", NULL);
}

/* Read once: a change after the first read is not seen until reread. */
TEST(values_are_read_once)
{
	with("BPFRT_TRAMP_NO_FAST", NULL);
	setenv("BPFRT_TRAMP_NO_FAST", "1", 1);
	CHECK_EQ(bpfrt_config()->tramp_no_fast, false);
	bpfrt_config_reread();
	CHECK_EQ(bpfrt_config()->tramp_no_fast, true);
	with("BPFRT_TRAMP_NO_FAST", NULL);
}

TEST(every_table_row_names_a_variable_with_a_meaning)
{
	char text[96];

	CHECK_EQ(bpfrt_config_var_count, 9u, "update this test with the table");
	for (size_t i = 0; i < bpfrt_config_var_count; i++) {
		const struct bpfrt_config_var *v = &bpfrt_config_vars[i];

		CHECK(!strncmp(v->name, "BPFRT_", 6), "%s", v->name);
		CHECK(v->def[0] && strlen(v->meaning) > 20, "%s", v->name);
		CHECK(!strcmp(v->kind, "flag") || !strcmp(v->kind, "size") ||
		      !strcmp(v->kind, "text"), "%s: %s", v->name, v->kind);
		bpfrt_config_value_text(i, text, sizeof(text));
		CHECK(text[0] && strcmp(text, "?"), "%s: %s", v->name, text);
	}
}
