/* What the verifier tests share (tests/verifier/vsupport.c): the maps
 * every case may use (bpfrt's and, for comparisons, Linux's copies of the
 * same shapes), assembling and loading a case, the context a run gets,
 * Linux's verdict on a case, and the random-number generator of the
 * fuzzers. Linked into test_verifier, test_verifier_fuzz and
 * test_verifier_linux_diff (mk/test-objects.mk). */
#ifndef BPFRT_TESTS_VSUPPORT_H
#define BPFRT_TESTS_VSUPPORT_H

#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "vharness.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- maps shared by the cases ------------------------------------------ */

struct tmap {
	const char *name;
	enum bpf_map_type type;
	uint32_t key, value, max;
	struct bpfrt_map *map;
	int kfd;                 /* Linux's copy (comparison tests), or -1 */
	uint32_t flags;          /* map_flags */
	bool freeze;             /* frozen after rodata_image is written to entry 0 */
	const char *bpfrt_name;  /* the bpfrt map's name if not name */
	int inner;               /* map-in-map: 1 + the tmaps index of the inner map
				  * (its template, and the map in slot 0) */
	int lock_off;            /* 1 + the offset of a struct bpf_spin_lock in the
				  * value (0: none; Linux's copy has none: no BTF) */
};

/* hash, array, big, rb, progs, rodata, ro, frozen, ro4, rodata_rw, rohash,
 * wo, wohash, xdp_progs, queue, stack, bloom, lru_pcpu, roqueue, lpm, aom, hom, pea, cga,
 * stm, pcpu, locked, hlocked: see
 * tests/verifier/corpus_asm.inc */
extern struct tmap tmaps[];
extern const size_t tmap_cnt;
#define NMAPS tmap_cnt
extern const char rodata_image[16];

void maps_init(void);
int tmap_find(const char *name, size_t len);

/* ---- assembling and loading a case ----------------------------------------- */

#define MAGIC_MAP   0x7eadbe0000000000ull
#define MAGIC_FUNC  0x5eed0000u

struct built {
	struct bpf_insn *insns;
	size_t cnt;
	struct bpfrt_map_ref refs[16];
	uint32_t ref_cnt;
	uint32_t ref_map[16];    /* tmaps index per ref */
	bool has_kfunc;
};

/* Rewrites map:NAME, mapval:NAME+OFF and func:LABEL operands into what
 * bpfrt_asm knows, assembles, then patches the results back. */
int build_case(const char *text, struct built *b, char *err, size_t errlen);
/* Loads insns through the internal path the object loader uses, verified
 * as kind with the given load flags, map references and verify options
 * (the program keeps its own copy of refs). Returns 0 and *out, or -errno. */
int load_verified(const char *name, enum bpfrt_prog_kind kind, uint32_t flags,
		  const struct bpfrt_map_ref *refs, uint32_t nref, const struct bpf_insn *insns,
		  size_t n, bool jit, struct bpfrt_verify_opts *vo, struct bpfrt_prog **out);
/* load_verified with the case's name, kind, flags and map references. */
/* The environment load_verified and load_case load in; NULL: the default. */
extern struct bpfrt_env *load_env;

int load_case(const struct vcase *c, const struct built *b, bool jit,
	      struct bpfrt_prog **out, char *log, size_t log_size, uint32_t level);

/* ---- running accepted programs ------------------------------------------------ */

/* The context for a run of a program of c->kind (an xdp_md over a 64-byte
 * packet below 4 GiB for XDP, else 512 zeroed bytes) and its length; 0
 * when none can be made (XDP without MAP_32BIT). */
uint64_t ctx_for(const struct vcase *c, uint64_t *len);

/* ---- Linux's verifier (root only) ---------------------------------------------- */

/* Creates Linux's copies of tmaps (kfd); 0 or -errno. */
int kernel_maps_init(void);
/* BPF_PROG_TYPE_* for a kind, -1 if none compares. */
int kernel_prog_type(enum bpfrt_prog_kind k);
/* Linux's verdict on a case: 1 accepted, 0 rejected (log holds why), -1
 * not comparable. */
int kernel_verdict(const struct vcase *c, char *log, size_t log_size);

/* ---- random numbers for the fuzzers (xorshift64) ------------------------------- */

extern uint64_t fz_state;
uint64_t fz_next(void);
uint32_t fz(uint32_t n);         /* 0 .. n-1 */

#endif
