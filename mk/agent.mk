# libbpfrt-agent.so: the library `bpfrt trace` preloads into the command
# it traces (src/agent/agent.c, the control channel in src/agent/proto.h).
# It carries the whole of libbpfrt.a (constructors included), linked in
# with hidden symbols; mk/libbpfrt-agent.map exports only its dlopen.
AGENT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/agent/*.c))
all: $(BUILD)/libbpfrt-agent.so

$(BUILD)/libbpfrt-agent.so: $(AGENT_OBJS) $(BUILD)/libbpfrt.a mk/libbpfrt-agent.map
	$(CC) $(LDFLAGS) -shared -Wl,--version-script=mk/libbpfrt-agent.map -Wl,-z,defs \
		-o $@ $(AGENT_OBJS) -Wl,--whole-archive $(BUILD)/libbpfrt.a -Wl,--no-whole-archive \
		$(LIB_LDLIBS) -ldl

# bpfrt trace finds the agent next to itself
$(BUILD)/bpfrt: | $(BUILD)/libbpfrt-agent.so
$(BUILD)/tools/cli_trace.o $(BUILD)/tools/cli_trace_%.o: CFLAGS += -Isrc
