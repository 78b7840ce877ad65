# Fuzzing, included by the Makefile.
#
# make fuzz-loader: the libFuzzer harness tests/fuzz/fuzz_loader.c with
# bpfrt built by clang with ASan+UBSan and coverage, into $(FUZZ_BUILD);
# the clang-built objects of tests/progs and bench/progs are its seed
# corpus. make fuzz-loader-run FUZZ_TIME=240 runs it.
#
# make fuzz-verifier [FUZZ_SECONDS=300]: libFuzzer cannot link the
# verifier's generator-driven target, so it is tests/test_verifier_fuzz.c
# (programs from tests/verifier/vgen.c: every instruction, kind, context
# and helper prototype; accepted ones run in the checking interpreter and
# the JIT) run for longer under ASan+UBSan (BPFRT_FUZZ_SEED=N|time picks
# the RNG seed). The kernel-differential check (root) runs longer by hand:
#   BPFRT_DIFF_SECONDS=600 build/tests/test_verifier_linux_diff
FUZZ_CC      ?= $(firstword $(shell command -v clang-19 clang-14 clang 2>/dev/null) clang)
FUZZ_BUILD   ?= build-fuzz
FUZZ_TIME    ?= 240
FUZZ_SECONDS ?= 300
FUZZ_FLAGS   := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer -O1 -g

.PHONY: fuzz-loader fuzz-loader-run fuzz-verifier
fuzz-loader:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) SAN=1 \
		CC="$(FUZZ_CC) -fsanitize=fuzzer-no-link" $(FUZZ_BUILD)/libbpfrt.a \
		$(patsubst $(BUILD)/%,$(FUZZ_BUILD)/%,$(BPF_PROGS))
	$(FUZZ_CC) $(FUZZ_FLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Iinclude -Isrc/engine -Isrc/host \
		tests/fuzz/fuzz_loader.c $(FUZZ_BUILD)/libbpfrt.a $(LDLIBS) -o $(FUZZ_BUILD)/fuzz_loader
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/seeds
	cp $(patsubst $(BUILD)/%,$(FUZZ_BUILD)/%,$(BPF_PROGS)) $(FUZZ_BUILD)/seeds/

# New inputs go to corpus/, crashes to $(FUZZ_BUILD)/crash-*.
fuzz-loader-run: fuzz-loader
	$(FUZZ_BUILD)/fuzz_loader -max_total_time=$(FUZZ_TIME) -rss_limit_mb=4096 \
		-artifact_prefix=$(FUZZ_BUILD)/ -print_final_stats=1 \
		$(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/seeds

fuzz-verifier:
	@$(MAKE) --no-print-directory BUILD=build-fuzz-verifier SAN=1 build-fuzz-verifier/tests/test_verifier_fuzz
	BPFRT_FUZZ_SECONDS=$(FUZZ_SECONDS) build-fuzz-verifier/tests/test_verifier_fuzz
