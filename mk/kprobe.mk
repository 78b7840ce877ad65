# kprobes (src/host/attach/kprobe.c, insn_x86.c): Zydis decodes the displaced
# instructions (libzydis-dev; its pkg-config file may be missing, so link
# it by name). x86-64 builds only: other targets get stubs.
ifeq ($(firstword $(subst -, ,$(shell $(CC) -dumpmachine))),x86_64)
LDLIBS += -lZydis
endif

# Host functions the kprobe tests probe: plain code (no patchable entries),
# some written in assembly for known first instructions.
$(BUILD)/tests/test_kprobe: $(BUILD)/tests/host/kprobe_targets.o
