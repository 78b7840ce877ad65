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

