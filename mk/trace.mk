# Programs and libraries the uprobe and trace tests probe, built with plain
# `gcc -O2` (no bpfrt flags): what users trace (included by the Makefile).
#   tests/trace/uprobe_funcs.c  functions test_uprobe probes in its own
#                               executable
#   tests/trace/uprobe_late.c   libuprobe_late.so, which test_uprobe loads
#                               with dlopen after attaching to it
TRACE_CC_FLAGS := -O2

$(BUILD)/tests/trace/%.o: tests/trace/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TRACE_CC_FLAGS) -c $< -o $@

$(BUILD)/tests/trace/libuprobe_late.so: tests/trace/uprobe_late.c
	@mkdir -p $(dir $@)
	$(CC) $(TRACE_CC_FLAGS) -fPIC -shared $< -o $@

$(BUILD)/tests/test_uprobe: $(BUILD)/tests/trace/uprobe_funcs.o | $(BUILD)/tests/trace/libuprobe_late.so
$(BUILD)/tests/test_uprobe.o: CFLAGS += \
	-DUPROBE_LATE_LIB='"$(abspath $(BUILD))/tests/trace/libuprobe_late.so"'

# Targets of tests/test_trace.sh (`bpfrt trace -- CMD`), plain gcc -O2 too:
#   work        threads calling work() (trace/work_fn.c), malloc(777) x100
#   plugin_host dlopen()s libtrace_plugin.so after it started
#   forker      work() in a fork child and in the parent
#   crasher     work(), then a NULL dereference
#   own_segv    its own SIGSEGV handler, a probed peek(), a NULL dereference
#   ticker      runs for seconds printing work() results (bpfrt trace -p)
#   stepper     work(), fork and its own code bytes on commands from stdin
#               (test_trace_live.sh sequences it through a fifo)
TRACE_TARGETS := $(addprefix $(BUILD)/tests/trace/,work plugin_host forker crasher ticker \
	stepper own_segv libtrace_plugin.so)
all: $(TRACE_TARGETS)

$(BUILD)/tests/trace/work $(BUILD)/tests/trace/ticker $(BUILD)/tests/trace/stepper: %: %.o \
		$(BUILD)/tests/trace/work_fn.o
	$(CC) -O2 -pthread -o $@ $^
$(BUILD)/tests/trace/forker $(BUILD)/tests/trace/crasher: %: %.o $(BUILD)/tests/trace/work_fn.o
	$(CC) -O2 -o $@ $^
$(BUILD)/tests/trace/own_segv: $(BUILD)/tests/trace/own_segv.o
	$(CC) -O2 -o $@ $^
$(BUILD)/tests/trace/plugin_host: $(BUILD)/tests/trace/plugin_host.o
	$(CC) -O2 -o $@ $^ -ldl
$(BUILD)/tests/trace/libtrace_plugin.so: tests/trace/plugin.c
	@mkdir -p $(dir $@)
	$(CC) $(TRACE_CC_FLAGS) -fPIC -shared $< -o $@

# USDT sites (<sys/sdt.h>) test_usdt probes in its own executable and
# test_trace_usdt.sh in usdt_work:
#   tests/trace/usdt_sites.c    constants, registers and stack memory
#   tests/trace/usdt_guarded.c  a semaphore-guarded site
#   tests/trace/usdt_late.c     libusdt_late.so, which test_usdt loads with
#                               dlopen after attaching to its probes
# x86-64 only: USDT sites are probed by the x86-64 kprobe engine (the test
# says it skips elsewhere), and the cross sysroots have no <sys/sdt.h>.
ifeq ($(firstword $(subst -, ,$(shell $(CC) -dumpmachine))),x86_64)
USDT_SITE_OBJS := $(BUILD)/tests/trace/usdt_sites.o $(BUILD)/tests/trace/usdt_guarded.o
$(BUILD)/tests/test_usdt: $(USDT_SITE_OBJS)
TRACE_TARGETS += $(BUILD)/tests/trace/usdt_work
all: $(BUILD)/tests/trace/usdt_work
$(BUILD)/tests/trace/usdt_work: $(BUILD)/tests/trace/usdt_work.o $(USDT_SITE_OBJS)
	$(CC) -O2 -o $@ $^
$(BUILD)/tests/trace/libusdt_late.so: tests/trace/usdt_late.c
	@mkdir -p $(dir $@)
	$(CC) $(TRACE_CC_FLAGS) -fPIC -shared $< -o $@
$(BUILD)/tests/test_usdt: | $(BUILD)/tests/trace/libusdt_late.so
$(BUILD)/tests/test_usdt.o: CFLAGS += \
	-DUSDT_GUARDED_OBJ='"$(abspath $(BUILD))/tests/trace/usdt_guarded.o"' \
	-DUSDT_LATE_LIB='"$(abspath $(BUILD))/tests/trace/libusdt_late.so"'
endif
