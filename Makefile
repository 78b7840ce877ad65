# bpfrt build. `make run` and `make test` are the two entry points (README);
# `make check` is the quick native subset of `make test`.
# SAN=1 builds into build-san/ with AddressSanitizer + UBSan.
CC      ?= gcc
# -mcpu=v4 needs clang >= 18 (Debian 12: clang-19; its clang is 14).
CLANG   ?= $(firstword $(shell command -v clang-19 clang-18 clang 2>/dev/null) clang)
SAN     ?=
BUILD   ?= $(if $(SAN),build-san,build)

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
           -fPIC -Iinclude -Isrc/engine -Isrc/host -MMD -MP
LDLIBS  += -lbpf -lelf -lz -lpthread -lm
# libdw: host functions' argument counts from their DWARF
# (src/host/sym/debuginfo.c), where the target has it (the cross builds'
# sysroots do not; there only BTF is read).
HAVE_LIBDW ?= $(if $(wildcard $(shell $(CC) -print-file-name=libdw.so)),1)
ifneq ($(HAVE_LIBDW),)
CFLAGS  += -DBPFRT_HAVE_LIBDW
LDLIBS  += -ldw
endif
ifneq ($(SAN),)
CFLAGS  += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

# src/agent/ is the agent library's own code (mk/agent.mk), not libbpfrt's
LIB_SRCS   := $(shell find src -name '*.c' -not -path 'src/agent/*' | sort)
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
TOOL_BINS  := $(BUILD)/bpfrt $(BUILD)/bpfrt-conformance
TEST_SUPPORT := $(filter-out tests/test_%.c,$(wildcard tests/*.c))
TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
BENCH_SRCS := $(wildcard bench/*.c)
BPF_PROGS  := $(patsubst %.bpf.c,$(BUILD)/%.bpf.o,$(wildcard tests/progs/*.bpf.c bench/progs/*.bpf.c))

.PHONY: print-ldlibs all deps deps-run run run-bins test check test-bins test-san clean
all: $(BUILD)/libbpfrt.a $(BUILD)/libbpfrt.so $(TOOL_BINS) $(TEST_BINS) $(BPF_PROGS) \
     $(if $(BENCH_SRCS),$(BUILD)/bpfrt-bench)

deps:
	@scripts/deps.sh test

deps-run:
	@scripts/deps.sh run

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libbpfrt.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The shared library exports the public API only: its objects are
# compiled with hidden visibility, BPFRT_API (include/bpfrt/export.h)
# marks what is public, and the version script mk/libbpfrt.map names the
# version node. The same objects make libbpfrt.a, where hidden symbols
# still link (the tests and tools call internals). The version is
# include/bpfrt/version.h's; the SONAME changes with its major number.
version_part = $(shell sed -n 's/^\#define BPFRT_VERSION_$(1) *\([0-9]*\).*/\1/p' include/bpfrt/version.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME  := libbpfrt.so.$(VERSION_MAJOR)
# What the library links: the binaries' flags without what only tools use.
LIB_LDLIBS = $(filter-out -lcapstone,$(LDLIBS))
$(LIB_OBJS): CFLAGS += -fvisibility=hidden
# (the objects rebuild when the export rules change)
$(LIB_OBJS): mk/libbpfrt.map

$(BUILD)/libbpfrt.so.$(VERSION): $(LIB_OBJS) mk/libbpfrt.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=mk/libbpfrt.map \
		-o $@ $(LIB_OBJS) $(LIB_LDLIBS)

$(BUILD)/$(SONAME): $(BUILD)/libbpfrt.so.$(VERSION)
	ln -sf $(notdir $<) $@

$(BUILD)/libbpfrt.so: $(BUILD)/$(SONAME)
	ln -sf $(notdir $<) $@

# Objects first, then the archive: objects that mk/*.mk add as
# prerequisites after libbpfrt.a still get their references resolved from it.
LINK_INPUTS = $(filter-out %.a,$^) $(filter %.a,$^)

$(BUILD)/bpfrt: $(BUILD)/tools/bpfrt.o $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/cli_*.c)) $(BUILD)/libbpfrt.a
	$(CC) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(LDLIBS)

$(BUILD)/bpfrt-conformance: $(BUILD)/tools/conformance_plugin.o $(BUILD)/libbpfrt.a
	$(CC) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(LDLIBS)

# bench_cpu lists JIT code with capstone directly.
$(BUILD)/bpfrt-bench: $(BENCH_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/libbpfrt.a
	$(CC) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(LDLIBS) -lcapstone

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT:%.c=$(BUILD)/%.o) $(BUILD)/libbpfrt.a
	$(CC) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(LDLIBS)

# BPF C: the same command line users give for Linux (clang 14: cpu v1-v3;
# BPF_CFLAGS=-mcpu=v3 to opt in).
$(BUILD)/%.bpf.o: %.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) -O2 -g -target bpf $(BPF_CFLAGS) -Iinclude -I/usr/include/$(shell gcc -dumpmachine) -c $< -o $@

# What the main job runs: the library, the CLI with its agent, the benchmarks
# and the BPF objects (not the tests, whose build needs the test packages:
# pahole, <sys/sdt.h>, the cross toolchains).
run-bins: $(BUILD)/libbpfrt.a $(BUILD)/libbpfrt.so $(BUILD)/bpfrt $(BPF_PROGS) \
	  $(if $(BENCH_SRCS),$(BUILD)/bpfrt-bench)

run: deps-run
	@$(MAKE) --no-print-directory -j2 run-bins
	@scripts/run.sh $(BUILD)

test-bins: all

# The whole suite: normal build, the same tests under ASan+UBSan, then the
# arm64 and riscv64 suites under qemu-user (scripts/test-all.sh).
test: deps
	@$(MAKE) --no-print-directory -j2 all
	@$(MAKE) --no-print-directory -j2 SAN=1 all
	@scripts/test-all.sh

# The quick native run: the normal build and its tests only (no ASan, no
# cross builds), two at a time, with the same last line "N passed, N failed".
check: deps
	@$(MAKE) --no-print-directory -j2 all
	@tests/run.sh $(BUILD)

clean:
	rm -rf build build-san

# The link flags every binary gets (mk/*.mk add to them): for scripts that
# link against libbpfrt.a themselves (tests/test_fuzz_smoke.sh).
print-ldlibs:
	@echo $(LDLIBS)

include mk/host-targets.mk
include mk/test-objects.mk
include mk/fuzz.mk
include mk/cross.mk
include mk/install.mk
include mk/trace.mk
include mk/agent.mk
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
