# Host code the trampoline tests and benchmarks hook, built with
# the flags of mk/bpfrt-host.mk. Included by the Makefile.
include mk/bpfrt-host.mk

HOST_CLANG ?= $(firstword $(shell command -v clang-19 clang-18 clang 2>/dev/null) clang)
HOST_OPT   := -O2 -g -Iinclude -Isrc/engine -Isrc/host -fno-omit-frame-pointer

# tests/host/*_clang.c: clang, nop5 entries.
$(BUILD)/tests/host/%_clang.o: tests/host/%_clang.c
	@mkdir -p $(dir $@)
	$(HOST_CLANG) $(HOST_OPT) -fPIC $(BPFRT_HOST_CLANG_CFLAGS) -c $< -o $@

# N tiny functions with padding (fentry.multi), generated.
$(BUILD)/tests/host/multi_funcs.c: mk/gen_funcs.sh
	@mkdir -p $(dir $@)
	sh mk/gen_funcs.sh 10000 multi_fn > $@

$(BUILD)/bench/host/bench_funcs.c: mk/gen_funcs.sh
	@mkdir -p $(dir $@)
	sh mk/gen_funcs.sh 32768 bench_fn > $@

# No debug info for the generated files: it would triple their build time.
$(BUILD)/tests/host/multi_funcs.o $(BUILD)/bench/host/bench_funcs.o: %.o: %.c
	$(HOST_CLANG) -O2 -fPIC $(BPFRT_HOST_CLANG_PAD_CFLAGS) -c $< -o $@

$(BUILD)/tests/test_trampoline: $(BUILD)/tests/host/tramp_funcs_clang.o
$(BUILD)/tests/test_multi: $(BUILD)/tests/host/multi_funcs.o
$(BUILD)/bpfrt-bench: $(BUILD)/bench/host/bench_funcs.o $(BUILD)/bench/host/bench_target_clang.o

$(BUILD)/bench/host/%_clang.o: bench/host/%_clang.c
	@mkdir -p $(dir $@)
	$(HOST_CLANG) $(HOST_OPT) -fPIC $(BPFRT_HOST_CLANG_PAD_CFLAGS) -c $< -o $@

# A library test_symbols loads with dlopen after its first lookups (an
# order-only prerequisite: never linked in); the test gets its path.
$(BUILD)/tests/host/libsym_late.so: tests/host/sym_late.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared $< -o $@
$(BUILD)/tests/test_symbols: | $(BUILD)/tests/host/libsym_late.so
$(BUILD)/tests/test_symbols.o: CFLAGS += -DSYM_LATE_LIB='"$(abspath $(BUILD))/tests/host/libsym_late.so"'
