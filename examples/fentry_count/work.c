/* The host code to hook: built with the flags of bpfrt-host.mk
 * (BPFRT_HOST_CLANG_CFLAGS: a patchable 5-byte nop at each function's
 * entry, which fentry/fexit turn into a call). */
#include "work.h"

__attribute__((noinline)) int work(int x)
{
	return x * 2;
}
