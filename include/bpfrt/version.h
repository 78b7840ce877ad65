/* The bpfrt version: the one place the number is written (the Makefile
 * reads it from here for the shared library's SONAME and libbpfrt.pc).
 *
 * The macros are the version the caller was compiled against,
 * bpfrt_version() the version of the library it runs with. The major
 * number is the SONAME's (libbpfrt.so.MAJOR): it changes when the ABI
 * does.
 *
 * Lifetime and thread safety: bpfrt_version() returns a static string,
 * callable from any thread at any time. */
#ifndef BPFRT_PUBLIC_VERSION_H
#define BPFRT_PUBLIC_VERSION_H

#include "bpfrt/export.h"

#define BPFRT_VERSION_MAJOR 0
#define BPFRT_VERSION_MINOR 1
#define BPFRT_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the library in use, e.g. "0.1.0". */
BPFRT_API const char *bpfrt_version(void);

#ifdef __cplusplus
}
#endif
#endif
