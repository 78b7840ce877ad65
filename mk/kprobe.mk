# kprobes (src/host/attach/kprobe.c, insn_x86.c): Zydis decodes the displaced
# instructions. Only its headers are needed to build (libzydis-dev):
# insn_x86.c loads the library with dlopen at the first decode, so
# libbpfrt.so does not need it and a process that never attaches a kprobe
# never loads it (without it, a kprobe attach fails with -ENOTSUP naming
# the library).

# Host functions the kprobe tests probe: plain code (no patchable entries),
# some written in assembly for known first instructions.
$(BUILD)/tests/test_kprobe: $(BUILD)/tests/host/kprobe_targets.o
