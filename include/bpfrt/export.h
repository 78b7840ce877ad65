/* BPFRT_API: the mark on every function of the public API. libbpfrt is
 * compiled with -fvisibility=hidden, so what libbpfrt.so exports is what
 * carries this mark (and matches the version script mk/libbpfrt.map);
 * everything else stays inside the library. The static libbpfrt.a is
 * unaffected: hidden symbols still link statically.
 *
 * Nothing here allocates or has state. */
#ifndef BPFRT_PUBLIC_EXPORT_H
#define BPFRT_PUBLIC_EXPORT_H

#ifndef BPFRT_API
#define BPFRT_API __attribute__((visibility("default")))
#endif

#endif
