# Cross builds of bpfrt tested under qemu-user (included by the Makefile).
#
#   make test-arm64      build into build-arm64/ with aarch64-linux-gnu-gcc
#                        and run every test under qemu-aarch64 -cpu max
#                        (tests/run-qemu.sh; it says what it skips and why)
#   make build-arm64     only the build: library, tools, test binaries,
#                        BPF objects (bench/ is x86-64 only)
#   CROSS_BUILD_arm64=DIR  builds and tests in DIR instead (parallel work)
#
# One line per architecture instantiates the rules:
#   $(eval $(call cross_arch,NAME,GNU-TRIPLE,QEMU-COMMAND))
# plus optionally CROSS_CC_NAME / CROSS_LDLIBS_NAME where the defaults
# (GNU-TRIPLE-gcc, the Makefile's LDLIBS) do not fit, as for riscv64 at the
# end. Every test program is built; the x86-64-only ones report their skip.
#
# The target's libcapstone, libelf, libbpf and zlib are Debian multiarch
# packages (scripts/deps.sh installs them); binaries run with the
# multiarch loader in /lib, so qemu gets no -L: the cross toolchain's
# /usr/TRIPLE loader must not be mixed with the multiarch libc (threads
# hang when they are).

# Built inside the cross make (BUILD is the cross directory there).
.PHONY: cross-bins
cross-bins: $(BUILD)/libbpfrt.a $(BUILD)/bpfrt $(BUILD)/bpfrt-conformance $(BPF_PROGS) \
	$(TEST_BINS) $(TEST_OBJECTS)

define cross_arch
.PHONY: build-$(1) test-$(1)
CROSS_BUILD_$(1) ?= build-$(1)
build-$(1):
	@$$(MAKE) --no-print-directory BUILD=$$(CROSS_BUILD_$(1)) CC="$$(or $$(CROSS_CC_$(1)),$(2)-gcc)" SAN= \
		$$(if $$(CROSS_LDLIBS_$(1)),LDLIBS="$$(CROSS_LDLIBS_$(1))") cross-bins

test-$(1): deps build-$(1)
	@tests/run-qemu.sh $(1) $$(CROSS_BUILD_$(1)) "$(3)"
endef

$(eval $(call cross_arch,arm64,aarch64-linux-gnu,qemu-aarch64 -cpu max))

# riscv64 (make test-riscv64): Debian 12 has no riscv64 port, so there are
# no multiarch libraries: mk/riscv64-target-libs.sh builds static zlib, libelf and
# libbpf from Debian's source packages into build-riscv64-libs/ (once, ~1
# min). Capstone 4 has no RISC-V: BPFRT_NO_CAPSTONE, listings come from the
# host's riscv64-linux-gnu-objdump (qemu-user hands the exec to the host
# kernel; src/engine/jit/jit.c), raw words without it (the x86-64 backend
# compiles against the host's capstone headers).
# -latomic: GCC's sub-word atomics. qemu gets -L for the cross toolchain's
# libc, the only riscv64 libc here.
RISCV64_LIBS := $(CURDIR)/build-riscv64-libs
CROSS_CC_riscv64 := riscv64-linux-gnu-gcc -I$(RISCV64_LIBS)/include \
	-idirafter $(RISCV64_LIBS)/host-include -DBPFRT_NO_CAPSTONE
CROSS_LDLIBS_riscv64 := -L$(RISCV64_LIBS)/lib -lbpf -lelf -lz -latomic -lpthread -lm
build-riscv64: $(RISCV64_LIBS)/.done
$(RISCV64_LIBS)/.done:
	@mk/riscv64-target-libs.sh $(RISCV64_LIBS)
$(eval $(call cross_arch,riscv64,riscv64-linux-gnu,qemu-riscv64 -cpu rv64 -L /usr/riscv64-linux-gnu))
