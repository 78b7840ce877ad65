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
$(BUILD)/tests/test_verifier: $(BUILD)/tests/verifier/vsupport.o
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
