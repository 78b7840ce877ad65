# What test binaries need beyond tests/*.c and tests/progs/*.bpf.c
# (included by the Makefile). TEST_OBJECTS: the extra BPF objects, built by
# `all` and by the cross builds (mk/cross.mk).
#
# maps_nobtf.bpf.o: tests/progs/maps.bpf.c built without -g, so its .maps
# section has no BTF (test_loader_badinput).
# The BPF C verifier corpus (tests/verifier/progs/*.bpf.c, expected verdicts
# in each file's header), built next to the test binaries like tests/progs.
TEST_OBJECTS := $(BUILD)/tests/progs/maps_nobtf.bpf.o \
	$(patsubst %.bpf.c,$(BUILD)/%.bpf.o,$(wildcard tests/verifier/progs/*.bpf.c))
all: $(TEST_OBJECTS)

$(BUILD)/tests/progs/maps_nobtf.bpf.o: tests/progs/maps.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) -O2 -target bpf $(BPF_CFLAGS) -Iinclude -I/usr/include/$(shell gcc -dumpmachine) -c $< -o $@

# What the verifier tests share (maps, assembling, contexts, Linux's
# verdict), and the fuzzers' program generator (tests/verifier/vgen.c).
$(BUILD)/tests/test_verifier $(BUILD)/tests/test_verifier_prune: $(BUILD)/tests/verifier/vsupport.o
$(BUILD)/tests/test_verifier_fuzz $(BUILD)/tests/test_verifier_linux_diff: \
	$(BUILD)/tests/verifier/vsupport.o $(BUILD)/tests/verifier/vgen.o

# CO-RE (tests/test_core.c): two builds of a host program's struct, each
# with the BTF pahole generates from its DWARF, the recipe of
# mk/bpfrt-host.mk. Without pahole the .btf files are missing and the test
# skips, saying so.
CORE_HOSTS := $(BUILD)/tests/core/host_v1.o $(BUILD)/tests/core/host_v2.o
PAHOLE ?= $(shell command -v pahole 2>/dev/null)
$(BUILD)/tests/core/%.o: tests/core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -g -c $< -o $@
	$(if $(PAHOLE),$(PAHOLE) --btf_encode_detached=$(@:.o=.btf) $@,@echo "no pahole: $(@:.o=.btf) not made")
$(BUILD)/tests/test_core: $(CORE_HOSTS)

# Typed arguments (tests/test_btf_args.c, the verifier corpus's
# vbtfargs.bpf.c): host functions built with -g whose pahole BTF is both
# in the object (.BTF: the host's own lookup) and beside it
# (btfargs_host.btf: btf_custom_path). x86-64 builds them with clang and a
# nop5 entry, so fentry attaches for real; elsewhere test runs only.
# Without pahole neither exists and the tests skip, saying so.
BTFARGS_HOST := $(BUILD)/tests/host/btfargs_host.o
BTFARGS_ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
$(BTFARGS_HOST): tests/host/btfargs_host.c
	@mkdir -p $(dir $@)
	$(if $(filter x86_64,$(BTFARGS_ARCH)),$(HOST_CLANG) $(HOST_OPT) -fPIC $(BPFRT_HOST_CLANG_CFLAGS),$(CC) $(CFLAGS) -g) -c $< -o $@
	$(if $(PAHOLE),$(PAHOLE) --btf_encode_detached=$(@:.o=.btf) $@ && $(PAHOLE) -J $@,@echo "no pahole: $@ has no BTF")
$(BUILD)/tests/test_btf_args $(BUILD)/tests/test_verifier: $(BTFARGS_HOST)
$(BUILD)/tests/test_btf_args.o $(BUILD)/tests/test_verifier.o: CFLAGS += $(if $(PAHOLE),-DBTFARGS_BTF_ENCODED=1)
