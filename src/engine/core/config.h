/* The environment variables (BPFRT_*) that tune the library: each is read
 * once, on the first bpfrt_config() call from any thread, into one const
 * struct; the code that a variable tunes reads the struct's field. The
 * table BPFRT_CONFIG_VARS is the one list: the struct, the parsing, `bpfrt
 * config` and docs/CONFIG.md (`bpfrt config --markdown`, checked by
 * tests/test_config.sh) all come from it.
 *
 * Kinds: FLAG is off for "0", on for any other non-empty value, its
 * default when unset or empty; SIZE is bytes, with an optional k/m/g/t
 * (powers of 1024) and b suffix, a malformed value is reported on stderr
 * and ignored; TEXT is the value as given (at most 63 bytes). */
#ifndef BPFRT_CORE_CONFIG_H
#define BPFRT_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(field, variable, kind, default, meaning). A FLAG's default is "on" or
 * "off"; the others' default is text for the reader (the code that uses
 * an unset SIZE or TEXT decides). */
#define BPFRT_CONFIG_VARS(X)                                                          \
	X(no_pack, "BPFRT_NO_PACK", FLAG, "off",                                      \
	  "JIT images get an executable mapping each instead of sharing prog packs "  \
	  "(bpfrt_execmem_set_packing() overrides it)")                                \
	X(map_memory_limit, "BPFRT_MAP_MEMORY_LIMIT", SIZE, "half of RAM",            \
	  "most bytes all maps of the process may hold together; map creation past "  \
	  "it fails with -ENOMEM (bpfrt_set_map_memory_limit() replaces it)")         \
	X(rcu_membarrier, "BPFRT_RCU_MEMBARRIER", FLAG, "on",                         \
	  "RCU readers without fences, grace periods through membarrier(2) where "    \
	  "the kernel has it; off: fenced readers")                                   \
	X(jit_disasm, "BPFRT_JIT_DISASM", TEXT, "capstone",                           \
	  "\"objdump\": JIT listings (dump --jited) from GNU objdump even where "     \
	  "capstone knows the architecture")                                          \
	X(arm64_no_lse, "BPFRT_ARM64_NO_LSE", FLAG, "off",                            \
	  "arm64 JIT: ldaxr/stlxr loops for atomics even on CPUs with LSE atomics")   \
	X(riscv_ext, "BPFRT_RISCV_EXT", TEXT, "what riscv_hwprobe reports",           \
	  "riscv64 JIT: the extensions to use, e.g. \"zba,zbb\" (\"\" for none), "    \
	  "instead of asking the kernel")                                             \
	X(tramp_no_fast, "BPFRT_TRAMP_NO_FAST", FLAG, "off",                          \
	  "fentry and fentry.multi through the trampoline's run path in C instead "   \
	  "of the generated one (for benchmarks to compare)")                         \
	X(no_link_snapshot, "BPFRT_NO_LINK_SNAPSHOT", FLAG, "off",                    \
	  "no memfd listing of the process's links (bpfrt links then sees none)")     \
	X(agent_fd, "BPFRT_AGENT_FD", TEXT, "unset",                                  \
	  "set by `bpfrt trace` for the command it starts: the descriptor of the "    \
	  "control socket libbpfrt-agent.so serves (the agent does nothing without)")

struct bpfrt_config_size {
	bool set;       /* given (and well-formed) */
	uint64_t bytes;
};

struct bpfrt_config_text {
	bool set;       /* given, even empty */
	char value[64];
};

typedef bool bpfrt_config_FLAG;
typedef struct bpfrt_config_size bpfrt_config_SIZE;
typedef struct bpfrt_config_text bpfrt_config_TEXT;

struct bpfrt_config {
#define BPFRT_CONFIG_FIELD(field, var, kind, def, meaning) bpfrt_config_##kind field;
	BPFRT_CONFIG_VARS(BPFRT_CONFIG_FIELD)
#undef BPFRT_CONFIG_FIELD
};

/* The settings, read from the environment on the first call. */
const struct bpfrt_config *bpfrt_config(void);

/* Reads the environment again: for tests that change a variable between
 * two runs of the code it tunes. Not safe while other threads use the
 * library. */
void bpfrt_config_reread(void);

/* The table, for `bpfrt config`. */
struct bpfrt_config_var {
	const char *name;
	const char *kind;       /* "flag", "size", "text" */
	const char *def;
	const char *meaning;
};
extern const struct bpfrt_config_var bpfrt_config_vars[];
extern const size_t bpfrt_config_var_count;

/* The value in effect of bpfrt_config_vars[i] as text ("on", "65536",
 * "objdump", "(default)"). */
void bpfrt_config_value_text(size_t i, char *buf, size_t len);

#endif
