/* The machine code bpfrt generates, as placement-independent digests
 * (jit_images.h): JIT images of the conformance suite, trampolines of
 * every kind and kprobe trampolines at fixed fake addresses.
 *
 * With BPFRT_JIT_IMAGES=FILE every image's line "LABEL LEN INSNS HASH" is
 * appended to FILE (BPFRT_JIT_IMAGES_LIST=1 adds listings); test_differential
 * does the same for its generated programs. Run before and after a change
 * of code generation that must not change the code, and compare:
 *
 *   rm -f a; BPFRT_JIT_IMAGES=a build/tests/test_jit_images
 *   BPFRT_JIT_IMAGES=a build/tests/test_differential
 *
 * Without it the digest itself is tested, and the trampolines' digests
 * against tests/jit_images.expected (fast). The CPU features the JIT uses
 * (BMI1/2) change its code: compare JIT images on one machine. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "jit_images.h"
#include "attach/kprobe.h"
#include "attach/trampoline.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "isa/conformance.h"
#include "isa/datafile.h"
#include "jit/backend.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Fake addresses: in the user half, unmapped, and clear of AddressSanitizer's
 * shadow (below 0x10007fff8000) and allocator (0x600000000000). */
#define FAKE_IMAGE 0x500000000000ull    /* where trampolines "run" */
#define FAKE_NEAR  (FAKE_IMAGE + 0x100000) /* C functions within rel32 reach */
#define FAKE_FAR   0x300000000000ull    /* and beyond it */
#define FAKE_PROBE 0x200000000000ull    /* kprobe sites */

/* Programs a trampoline calls inline: in the executable's bss, so their
 * addresses are "obj" in the digests. */
static struct bpfrt_prog fake_progs[4];

/* The digests decode x86-64 (the only architecture with trampolines and
 * kprobes); elsewhere every test here skips. */
static bool have_capstone(void)
{
#if defined(__x86_64__)
	static const uint8_t ret = 0xc3;
	size_t n;

	jit_images_digest(&ret, 1, 0x1000, NULL, &n);
	return n == 1;
#else
	return false;
#endif
}

static bool images_wanted(void)
{
	if (!jit_images_enabled()) {
		tl_skip("BPFRT_JIT_IMAGES not set");
		return false;
	}
	if (!have_capstone()) {
		tl_skip("x86-64 with capstone only");
		return false;
	}
	return true;
}

static int note_prog(const char *label, const struct bpfrt_prog *p)
{
	size_t len;
	const void *code = bpfrt_prog_jited(p, &len);

	if (!code)
		return -ENOENT;
	jit_images_note(label, code, len, (uintptr_t)code);
	return 0;
}

/* ---- the digest ------------------------------------------------------ */

static struct bpfrt_prog *load_jit(const struct bpf_insn *insns, size_t n)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .jit = true);
	struct bpfrt_prog *p = NULL;

	CHECK(bpfrt_prog_load(insns, n, &o, &p) == 0, "%s", bpfrt_last_error());
	return p;
}

static uint64_t prog_digest(const struct bpfrt_prog *p)
{
	size_t len;
	const void *code = bpfrt_prog_jited(p, &len);

	return code ? jit_images_digest(code, len, (uintptr_t)code, NULL, NULL) : 0;
}

#define IMAGES_HELPER_ID 101

static uint64_t images_helper_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return r1 + 1;
}

static const struct bpfrt_helper images_helper = {
	.name = "images_inc",
	.fn = images_helper_fn,
	.ret = BPFRT_RET_INTEGER,
	.args = { BPFRT_ARG_ANYTHING },
};

/* A helper call (to an address in the executable) and a loop: the same
 * program loaded twice lands at two addresses and digests the same; one
 * constant changed digests differently. */
TEST(digest_ignores_placement_only)
{
	struct bpf_insn a[] = {
		MOV64_IMM(BPF_R6, 10), MOV64_IMM(BPF_R1, 1),
		CALL_HELPER(IMAGES_HELPER_ID),
		ALU64_IMM(BPF_SUB, BPF_R6, 1), JMP_IMM(BPF_JNE, BPF_R6, 0, -4),
		MOV64_IMM(BPF_R0, 7), EXIT(),
	};
	struct bpf_insn b[ARRAY_LEN(a)];
	struct bpfrt_prog *p1, *p2, *p3;

	if (!have_capstone()) {
		tl_skip("x86-64 with capstone only");
		return;
	}
	REQUIRE(bpfrt_helper_register(IMAGES_HELPER_ID, &images_helper) == 0, "%s",
		bpfrt_last_error());
	memcpy(b, a, sizeof(a));
	b[5].imm = 8;
	p1 = load_jit(a, ARRAY_LEN(a));
	p2 = load_jit(a, ARRAY_LEN(a));
	p3 = load_jit(b, ARRAY_LEN(b));
	REQUIRE(p1 && p2 && p3);
	CHECK(bpfrt_prog_jited(p1, NULL) != bpfrt_prog_jited(p2, NULL));
	CHECK(prog_digest(p1) == prog_digest(p2), "same program, different digests");
	CHECK(prog_digest(p1) != prog_digest(p3), "different programs, one digest");
	bpfrt_prog_free(p1);
	bpfrt_prog_free(p2);
	bpfrt_prog_free(p3);
}

/* A rel32 call and a rip-relative load of the same targets from two
 * places: the same digest; another opcode byte: a different one. */
TEST(digest_masks_relative_fields)
{
	uint8_t c1[11] = { 0xe8 }, c2[11] = { 0xe8 };
	uintptr_t target = (uintptr_t)&fake_progs[0];
	int32_t rel;

	if (!have_capstone()) {
		tl_skip("x86-64 with capstone only");
		return;
	}
	/* call target; mov rax, [rip -> target] */
	rel = (int32_t)(target - (0x400000 + 5));
	memcpy(c1 + 1, &rel, 4);
	rel = (int32_t)(target - (0x500000 + 5));
	memcpy(c2 + 1, &rel, 4);
	c1[5] = c2[5] = 0x48; c1[6] = c2[6] = 0x8b; c1[7] = c2[7] = 0x05;
	CHECK(jit_images_digest(c1, 8, 0x400000, NULL, NULL) ==
	      jit_images_digest(c2, 8, 0x500000, NULL, NULL));
	c2[6] = 0x89;
	CHECK(jit_images_digest(c1, 8, 0x400000, NULL, NULL) !=
	      jit_images_digest(c2, 8, 0x500000, NULL, NULL));
}

/* ---- the image sets (BPFRT_JIT_IMAGES) ------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .data file of dir that assembles and JIT-compiles. */
static void note_conformance_dir(const char *dir, const char *tag, size_t *noted)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;

	REQUIRE(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l < 6 || strcmp(e->d_name + l - 5, ".data"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			REQUIRE(names);
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[1024], label[600];
		struct bpfrt_datafile df;
		struct bpf_insn *insns = NULL;
		size_t cnt = 0;
		BPFRT_OPTS(bpfrt_prog_load_opts, o, .jit = true);
		struct bpfrt_prog *p;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		memset(&df, 0, sizeof(df));
		if (bpfrt_datafile_load(path, &df) == 0) {
			if (df.asm_text) {
				if (bpfrt_asm(df.asm_text, &insns, &cnt))
					insns = NULL;
			} else if (df.raw && df.raw_len % 8 == 0 && (insns = malloc(df.raw_len))) {
				memcpy(insns, df.raw, df.raw_len);
				cnt = df.raw_len / 8;
			}
			if (insns && bpfrt_prog_load(insns, cnt, &o, &p) == 0) {
				snprintf(label, sizeof(label), "%s:%s", tag, names[i]);
				if (note_prog(label, p) == 0)
					(*noted)++;
				bpfrt_prog_free(p);
			}
			free(insns);
		}
		bpfrt_datafile_free(&df);
		free(names[i]);
	}
	free(names);
}

static const char *conformance_path(const char *sub)
{
	static char buf[1024];
	struct stat st;

	snprintf(buf, sizeof(buf), "tests/conformance/%s", sub);
	if (!stat(buf, &st))
		return buf;
	snprintf(buf, sizeof(buf), "%s", tl_test_path("../../tests/conformance"));
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%s", sub);
	return buf;
}

TEST(conformance_images)
{
	size_t noted = 0;

	if (!images_wanted())
		return;
	REQUIRE(bpfrt_conf_register_helpers() == 0, "%s", bpfrt_last_error());
	note_conformance_dir(conformance_path("tests"), "conf", &noted);
	note_conformance_dir(conformance_path("negative"), "conf-neg", &noted);
	printf("# %zu conformance images\n", noted);
	CHECK(noted > 200, "only %zu images", noted);
}

/* ---- trampolines at a fixed fake address ----------------------------- */

static size_t tramp_noted;
/* where the lines go: $BPFRT_JIT_IMAGES (NULL) or a stream */
static FILE *sink;

static void note(const char *label, const uint8_t *code, size_t len, uintptr_t at)
{
	if (sink)
		jit_images_line(sink, label, code, len, at);
	else
		jit_images_note(label, code, len, at);
}

static void note_tramp(const char *label, const struct bpfrt_tramp_desc *d, uintptr_t image)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();
	static uint8_t buf[16384];
	char l[128];
	int n;

	REQUIRE(be && be->arch_prepare_trampoline);
	n = be->arch_prepare_trampoline(buf, sizeof(buf), image, d);
	CHECK(n > 0, "%s: %d", label, n);
	if (n <= 0)
		return;
	snprintf(l, sizeof(l), "tramp:%s@%s", label, image == FAKE_IMAGE ? "near" : "far");
	note(l, buf, (size_t)n, image);
	tramp_noted++;
}

static uint64_t fake_enter(struct bpfrt_tramp_frame *f, void *md) { return 0; }

/* Where the run-path state is, pinned: the code must not change with the
 * host's structure layouts or the TLS layout of a build. The TLS offsets
 * are above the thread pointer, where x86-64 keeps no TLS block: a fake
 * offset below it could land on a real TLS variable as the static TLS
 * grows, and the listing would name it. */
static const struct bpfrt_tramp_layout fake_layout = {
	.tls_depth = 0x2000, .tls_active = 0x2008,
	.arr_cnt = 0, .arr_items = 24, .item_shift = 5,
	.item_prog = 0, .item_cookie = 8, .item_flags = 20,
	.prog_jit_func = 0x98,
	.func_ip = 0, .func_multi = 48,
	.hash_shift = 0, .hash_mask = 8, .hash_slots = 16,
	.slot_shift = 4, .slot_ip = 0, .slot_func = 8,
	.hash_mul = 0x9e3779b97f4a7c15ull,
};

/* Fake C functions and data, at fixed addresses (never called). */
#define FAKE_FN(type, off) ((type)(uintptr_t)(FAKE_NEAR + (off)))

static void note_tramp_set(uintptr_t image)
{
	uint32_t tail_off, slot_off, c_path_off;
	struct bpfrt_tramp_item items[4];
	char label[64];

	(void)fake_enter;
	for (int fp = 0; fp < 2; fp++) {
		struct bpfrt_tramp_desc d = {
			.type = BPFRT_TRAMP_CLASSIC,
			.md = (const void *)(uintptr_t)0x4d4400,
			.enter = FAKE_FN(uint64_t (*)(struct bpfrt_tramp_frame *, void *), 0x100),
			.exit = FAKE_FN(void (*)(struct bpfrt_tramp_frame *, void *), 0x200),
			.no_fp = fp,
		};

		/* fentry (no body), fexit/fmod_ret (the body called) */
		snprintf(label, sizeof(label), "classic-fentry%s", fp ? "-nofp" : "");
		note_tramp(label, &d, image);
		d.body = FAKE_NEAR - 0x800;
		snprintf(label, sizeof(label), "classic-fexit%s", fp ? "-nofp" : "");
		note_tramp(label, &d, image);
		d.body = FAKE_FAR;
		snprintf(label, sizeof(label), "classic-fexit-farbody%s", fp ? "-nofp" : "");
		note_tramp(label, &d, image);
	}
	{
		struct bpfrt_tramp_desc d = {
			.type = BPFRT_TRAMP_STUB,
			.md = (const void *)(uintptr_t)0x4d4400,
			.enter = FAKE_FN(uint64_t (*)(struct bpfrt_tramp_frame *, void *), 0x300),
			.tail_off = &tail_off, .slot_off = &slot_off, .c_path_off = &c_path_off,
		};

		note_tramp("stub", &d, image);
		d.enter = (uint64_t (*)(struct bpfrt_tramp_frame *, void *))(uintptr_t)FAKE_FAR;
		note_tramp("stub-farenter", &d, image);
	}
	for (int i = 0; i < 4; i++) {
		fake_progs[i].jit_func = (bpfrt_jit_fn)(uintptr_t)(FAKE_NEAR + 0x1000 * (i + 1));
		items[i] = (struct bpfrt_tramp_item){ .prog = &fake_progs[i], .cookie = 0xc00c1e + i,
						      .inline_run = i % 2 == 0 };
	}
	fake_progs[3].jit_func = (bpfrt_jit_fn)(uintptr_t)FAKE_FAR;
	for (uint32_t cnt = 0; cnt <= 4; cnt++) {
		for (int all_c = 0; all_c < 2; all_c++) {
			struct bpfrt_tramp_item it[4];
			struct bpfrt_tramp_desc d = {
				.type = BPFRT_TRAMP_IMAGE,
				.md = (const void *)(uintptr_t)0x4d4400,
				.tail = image - 0x40,
				.items = it,
				.item_cnt = cnt,
				.run_item = FAKE_FN(void (*)(struct bpfrt_tramp_frame *, void *,
							     struct bpfrt_prog *, uint64_t), 0x400),
				.layout = &fake_layout,
			};

			memcpy(it, items, sizeof(it));
			for (int i = 0; i < 4; i++)
				it[i].inline_run = all_c ? false : items[i].inline_run;
			snprintf(label, sizeof(label), "image-%u%s", cnt, all_c ? "-c" : "");
			note_tramp(label, &d, image);
		}
	}
	for (int pad = 0; pad < 2; pad++) {
		for (int table = 0; table < 2; table++) {
			struct bpfrt_tramp_desc d = {
				.type = BPFRT_TRAMP_MULTI,
				.run_item = FAKE_FN(void (*)(struct bpfrt_tramp_frame *, void *,
							     struct bpfrt_prog *, uint64_t), 0x500),
				.pad = pad,
				.pad_chunks = (const void *)(uintptr_t)0x7ad000,
				.pad_chunk_bits = 10, .pad_chunk_cnt = 64,
				.lookup = FAKE_FN(void *(*)(uintptr_t), 0x600),
				.layout = &fake_layout,
				.md_table = table ? (const void *)(uintptr_t)(FAKE_NEAR + 0x7000) : NULL,
			};

			snprintf(label, sizeof(label), "multi%s%s", pad ? "-pad" : "",
				 table ? "-table" : "-c");
			note_tramp(label, &d, image);
		}
	}
	{
		struct bpfrt_tramp_desc d = { .type = BPFRT_TRAMP_RCU_LOCK_FN };

		note_tramp("rcu-lock", &d, image);
		d.type = BPFRT_TRAMP_RCU_UNLOCK_FN;
		note_tramp("rcu-unlock", &d, image);
	}
}

TEST(trampoline_images)
{
	if (!images_wanted())
		return;
	tramp_noted = 0;
	note_tramp_set(FAKE_IMAGE);
	note_tramp_set(FAKE_FAR + 0x80000000ull); /* everything out of rel32 reach */
	printf("# %zu trampoline images\n", tramp_noted);
}

/* ---- kprobe trampolines ---------------------------------------------- */

struct probe_case {
	const char *name;
	bool entry;
	uint8_t len;
	uint8_t code[24];
};

static const struct probe_case probe_cases[] = {
	/* push rbp; mov rbp, rsp; push rbx */
	{ "entry-frame", true, 5, { 0x55, 0x48, 0x89, 0xe5, 0x53 } },
	/* endbr64; push r15 */
	{ "entry-endbr", true, 6, { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57 } },
	/* mov rax, [rip + 0x1234] */
	{ "rip-load", false, 7, { 0x48, 0x8b, 0x05, 0x34, 0x12, 0x00, 0x00 } },
	/* test eax, eax; je +0x10; nop */
	{ "jcc", false, 5, { 0x85, 0xc0, 0x74, 0x10, 0x90 } },
	/* call rel32 */
	{ "call", false, 5, { 0xe8, 0x00, 0x01, 0x00, 0x00 } },
	/* jmp rel32 */
	{ "jmp", false, 5, { 0xe9, 0x00, 0x02, 0x00, 0x00 } },
	/* add rsp, 8; ret */
	{ "ret", false, 5, { 0x48, 0x83, 0xc4, 0x08, 0xc3 } },
	/* mov rdi, rbx; call [rip + 0x40] */
	{ "call-ind", false, 9, { 0x48, 0x89, 0xdf, 0xff, 0x15, 0x40, 0x00, 0x00, 0x00 } },
};

static size_t note_kprobe_set(void)
{
	static const uint32_t xsaves[] = { 0, 832, 2696 };
	size_t noted = 0;

	for (size_t i = 0; i < ARRAY_LEN(probe_cases); i++) {
		const struct probe_case *c = &probe_cases[i];

		for (size_t x = 0; x < ARRAY_LEN(xsaves); x++) {
			uint8_t out[2048];
			char label[96];
			uintptr_t at = FAKE_PROBE + 0x10000;
			int n = bpfrt_kprobe_tramp_code(FAKE_PROBE, c->code, c->len, c->entry,
							xsaves[x], 0x5173000, at, out, sizeof(out));

			CHECK(n > 0, "%s: %s", c->name, bpfrt_last_error());
			if (n <= 0)
				continue;
			snprintf(label, sizeof(label), "kprobe:%s-xsave%u", c->name, xsaves[x]);
			note(label, out, (size_t)n, at);
			noted++;
			if (c->entry)
				break; /* an entry saves xmm0-7 whatever the xsave size */
		}
	}
	return noted;
}

TEST(kprobe_trampoline_images)
{
	if (!images_wanted())
		return;
	printf("# %zu kprobe trampoline images\n", note_kprobe_set());
}

/* ---- the stored digests ------------------------------------------------ */

/* Trampolines and kprobe trampolines depend on no CPU feature (the xsave
 * size is pinned above) and, at fake addresses with TLS and objects named,
 * on no placement: their digests are the same on every x86-64 machine and
 * stored in tests/jit_images.expected. A change of their code (on purpose)
 * updates that file:
 *   BPFRT_JIT_IMAGES=/tmp/i build/tests/test_jit_images
 *   grep -E '^(tramp|kprobe):' /tmp/i > tests/jit_images.expected
 * (JIT images depend on BMI1/BMI2 and are compared before/after on one
 * machine instead.) */
static const char *expected_path(void)
{
	static char buf[1024];
	struct stat st;

	snprintf(buf, sizeof(buf), "tests/jit_images.expected");
	if (!stat(buf, &st))
		return buf;
	snprintf(buf, sizeof(buf), "%s", tl_test_path("../../tests/jit_images.expected"));
	return buf;
}

TEST(trampoline_digests_match_the_stored_ones)
{
	char *text = NULL, *want = NULL;
	size_t text_len = 0, want_len = 0, mismatched = 0, lines = 0;
	FILE *f;

	if (!have_capstone()) {
		tl_skip("x86-64 with capstone only");
		return;
	}
	f = fopen(expected_path(), "r");
	REQUIRE(f, "%s: %s", expected_path(), strerror(errno));
	want_len = (size_t)getdelim(&want, &want_len, '\0', f);
	fclose(f);
	sink = open_memstream(&text, &text_len);
	REQUIRE(sink);
	note_tramp_set(FAKE_IMAGE);
	note_tramp_set(FAKE_FAR + 0x80000000ull);
	note_kprobe_set();
	fclose(sink);
	sink = NULL;
	/* line by line, so a failure names the trampolines that changed */
	for (char *save1 = NULL, *line = strtok_r(text, "\n", &save1); line;
	     line = strtok_r(NULL, "\n", &save1)) {
		char label[128];
		const char *at;

		lines++;
		snprintf(label, sizeof(label), "%.*s ", (int)strcspn(line, " "), line);
		at = strstr(want, label);
		if (!at || strncmp(at, line, strlen(line)) || (at[strlen(line)] != '\n' &&
								 at[strlen(line)] != '\0')) {
			if (++mismatched <= 10)
				tl_fail(__FILE__, __LINE__, "%.*s changed: now \"%s\"",
					(int)strcspn(line, " "), line, line);
		}
	}
	CHECK(lines == 68, "%zu trampolines generated", lines);
	CHECK(mismatched == 0, "%zu of %zu trampoline digests differ from %s", mismatched, lines,
	      expected_path());
	free(text);
	free(want);
}
