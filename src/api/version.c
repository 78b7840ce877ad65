/* bpfrt_version: the library's own version, from the header it was built
 * with (a program compiled against another version sees the difference
 * between its BPFRT_VERSION_* macros and this string). */
#include "bpfrt/version.h"

#define BPFRT_STR_(x) #x
#define BPFRT_STR(x) BPFRT_STR_(x)

const char *bpfrt_version(void)
{
	return BPFRT_STR(BPFRT_VERSION_MAJOR) "." BPFRT_STR(BPFRT_VERSION_MINOR) "."
	       BPFRT_STR(BPFRT_VERSION_PATCH);
}
