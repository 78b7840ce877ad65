// The installed headers from C++: every declaration has C linkage, so a
// C++ program links against libbpfrt (tests/test_install.sh).
#include <bpfrt/bpfrt.h>
#include <bpfrt/tracepoint.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main()
{
	struct bpf_insn *insns = nullptr;
	size_t cnt = 0;
	int err = bpfrt_asm("mov %r0, 1\nexit\n", &insns, &cnt);

	if (err || cnt != 2) {
		std::fprintf(stderr, "consumer_cxx: bpfrt_asm: %d (%s)\n", err, bpfrt_last_error());
		return 1;
	}
	std::free(insns);
	std::printf("consumer_cxx: libbpfrt %s\n", bpfrt_version());
	return 0;
}
