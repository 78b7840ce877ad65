# Verifier fuzzing. libFuzzer is not available with this toolchain, so the
# fuzz target is tests/test_verifier_fuzz.c (programs from the generator in
# tests/verifier/vgen.c: every instruction, kind, context and helper
# prototype; accepted ones run in the checking interpreter and the JIT) run
# for longer under ASan+UBSan (BPFRT_FUZZ_SEED=N|time picks the seed):
#   make fuzz-verifier [FUZZ_SECONDS=300]
# The kernel-differential check (root) runs longer by hand:
#   BPFRT_DIFF_SECONDS=600 build/tests/test_verifier_linux_diff
FUZZ_SECONDS ?= 300

.PHONY: fuzz-verifier
fuzz-verifier:
	@$(MAKE) --no-print-directory BUILD=build-fuzz-verifier SAN=1 build-fuzz-verifier/tests/test_verifier_fuzz
	BPFRT_FUZZ_SECONDS=$(FUZZ_SECONDS) build-fuzz-verifier/tests/test_verifier_fuzz

# The BPF C verifier corpus (tests/verifier/progs/*.bpf.c, expected verdicts
# in each file's header), built next to the test binaries like tests/progs.
VERIFIER_C_PROGS := $(patsubst %.bpf.c,$(BUILD)/%.bpf.o,$(wildcard tests/verifier/progs/*.bpf.c))
all: $(VERIFIER_C_PROGS)

# Attach-time context checks (tests/test_verifier_attach.c) hook the
# trampoline tests' patchable host functions.
$(BUILD)/tests/test_verifier_attach: $(BUILD)/tests/host/tramp_funcs_clang.o

# What the verifier tests share (maps, assembling, contexts, Linux's verdict).
$(BUILD)/tests/test_verifier: $(BUILD)/tests/verifier/vsupport.o
# and the fuzzers' program generator (tests/verifier/vgen.c).
$(BUILD)/tests/test_verifier_fuzz $(BUILD)/tests/test_verifier_linux_diff: \
	$(BUILD)/tests/verifier/vsupport.o $(BUILD)/tests/verifier/vgen.o
