/* Assembler, disassembler and .data reader: the conformance files round
 * trip byte for byte, negative files are rejected with a line number, and
 * each instruction family encodes as RFC 9669 says. */
#include "testlib.h"
#include "insns.h"

#include "bpfrt/bpfrt.h"
#include "isa/datafile.h"
#include "isa/disasm.h"
#include "isa/isa.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONF_TESTS "tests/conformance/tests"
#define CONF_NEGATIVE "tests/conformance/negative"

/* ---- helpers ----------------------------------------------------------- */

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted malloc'd paths of the .data files in dir. */
static char **list_data_files(const char *dir, size_t *cnt)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;

	*cnt = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 5, ".data"))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(strlen(dir) + len + 2);
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare_names);
	*cnt = n;
	return names;
}

static void free_list(char **names, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
}

/* Plain (index-free) disassembly of a whole program. */
static char *disasm_text(const struct bpf_insn *insns, size_t cnt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return NULL;
	err = bpfrt_disasm_write(insns, cnt, f, false);
	fclose(f);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

/* disasm -> asm gives back exactly insns; returns the text for inspection
 * (caller frees) or NULL after reporting a failure. */
static char *check_roundtrip(const char *what, const struct bpf_insn *insns, size_t cnt)
{
	struct bpf_insn *again = NULL;
	size_t again_cnt = 0;
	char *text = disasm_text(insns, cnt);
	int err;

	CHECK(text != NULL, "%s: disasm failed: %s", what, bpfrt_last_error());
	if (!text)
		return NULL;
	err = bpfrt_asm(text, &again, &again_cnt);
	CHECK(err == 0, "%s: re-assembly failed: %s\n%s", what, bpfrt_last_error(), text);
	if (!err) {
		CHECK(again_cnt == cnt, "%s: %zu insns became %zu", what, cnt, again_cnt);
		CHECK(again_cnt != cnt || !memcmp(again, insns, cnt * sizeof(*insns)),
		      "%s: bytes differ after round trip:\n%s", what, text);
	}
	free(again);
	if (tl_failed()) {
		free(text);
		return NULL;
	}
	return text;
}

static int asm1(const char *text, struct bpf_insn *out, size_t *cnt)
{
	struct bpf_insn *insns = NULL;
	int err = bpfrt_asm(text, &insns, cnt);

	if (!err) {
		memcpy(out, insns, (*cnt > 4 ? 4 : *cnt) * sizeof(*insns));
		free(insns);
	}
	return err;
}

static bool insn_eq(struct bpf_insn a, struct bpf_insn b)
{
	return !memcmp(&a, &b, sizeof(a));
}

/* Assembles text and expects exactly one instruction equal to want. */
#define CHECK_ENCODES(text, want)                                               \
	do {                                                                    \
		struct bpf_insn got_[4];                                        \
		size_t cnt_ = 0;                                                \
		int err_ = asm1(text, got_, &cnt_);                             \
		CHECK(err_ == 0, "'%s': %s", text, bpfrt_last_error());         \
		if (!err_) {                                                    \
			CHECK(cnt_ == 1, "'%s' gave %zu insns", text, cnt_);    \
			CHECK(insn_eq(got_[0], want), "'%s' encoded as %016llx", text, \
			      (unsigned long long)bpfrt_insn_to_word(&got_[0]));   \
		}                                                               \
	} while (0)

/* Expects the assembler to reject text with a message containing what. */
#define CHECK_REJECTS(text, what)                                               \
	do {                                                                    \
		struct bpf_insn *i_ = (void *)1;                                \
		size_t c_ = 99;                                                 \
		int err_ = bpfrt_asm(text, &i_, &c_);                           \
		CHECK(err_ == -EINVAL, "'%s' gave %d", text, err_);             \
		CHECK(i_ == NULL && c_ == 0, "'%s': outputs not cleared", text); \
		CHECK(strstr(bpfrt_last_error(), what) != NULL,                 \
		      "'%s': message '%s' lacks '%s'", text, bpfrt_last_error(), what); \
		if (!err_)                                                      \
			free(i_);                                               \
	} while (0)

/* ---- the conformance files --------------------------------------------- */

/* The program of a .data file: assembled text if present, else raw. */
static int load_program(const struct bpfrt_datafile *df, struct bpf_insn **insns, size_t *cnt)
{
	if (df->asm_text)
		return bpfrt_asm(df->asm_text, insns, cnt);
	if (!df->raw)
		return -ENOENT;
	*insns = malloc(df->raw_len + 1);
	memcpy(*insns, df->raw, df->raw_len);
	*cnt = df->raw_len / sizeof(struct bpf_insn);
	return 0;
}

TEST(conformance_tests_round_trip)
{
	size_t n, both = 0;
	char **files = list_data_files(CONF_TESTS, &n);

	REQUIRE(n >= 313, "found %zu files in " CONF_TESTS " (run from the repo root)", n);
	for (size_t i = 0; i < n && !tl_failed(); i++) {
		struct bpfrt_datafile df;
		struct bpf_insn *insns = NULL;
		size_t cnt = 0;
		char *text;
		int err = bpfrt_datafile_load(files[i], &df);

		CHECK(err == 0, "%s", bpfrt_last_error());
		if (err)
			continue;
		err = load_program(&df, &insns, &cnt);
		CHECK(err == 0, "%s: %s", files[i], bpfrt_last_error());
		if (!err && df.asm_text && df.raw) {
			both++;
			CHECK(df.raw_len == cnt * 8 && !memcmp(df.raw, insns, df.raw_len),
			      "%s: assembled bytes differ from the raw section", files[i]);
		}
		if (!err) {
			text = check_roundtrip(files[i], insns, cnt);
			/* Valid programs need no raw fallback. */
			CHECK(!text || !strstr(text, ".insn"), "%s:\n%s", files[i], text);
			free(text);
		}
		free(insns);
		bpfrt_datafile_free(&df);
	}
	CHECK(both >= 1, "no file with both asm and raw");
	free_list(files, n);
}

/* Negative files the assembler or the .data reader must reject itself. */
static const char *const asm_level_negatives[] = {
	"invalid_imm32_dec_range", "invalid_imm32_hex_range", "invalid_label",
	"invalid_lock", "invalid_lock2", "invalid_mnemonic", "invalid_offset",
	"invalid_offset_range", "invalid_operand_count", "invalid_register",
	"invalid_unknown_directive",
};

static bool is_asm_level_negative(const char *path)
{
	for (size_t i = 0; i < ARRAY_LEN(asm_level_negatives); i++) {
		char name[128];

		snprintf(name, sizeof(name), "/%s.data", asm_level_negatives[i]);
		if (strstr(path, name))
			return true;
	}
	return false;
}

TEST(conformance_negative_assembler_level_rejected)
{
	for (size_t i = 0; i < ARRAY_LEN(asm_level_negatives); i++) {
		char path[256];
		struct bpfrt_datafile df;
		struct bpf_insn *insns = NULL;
		size_t cnt = 0;
		int err;

		snprintf(path, sizeof(path), CONF_NEGATIVE "/%s.data", asm_level_negatives[i]);
		err = bpfrt_datafile_load(path, &df);
		if (!err) {
			CHECK(df.asm_text != NULL, "%s: no asm section", path);
			err = df.asm_text ? bpfrt_asm(df.asm_text, &insns, &cnt) : -EINVAL;
			bpfrt_datafile_free(&df);
		}
		CHECK(err == -EINVAL, "%s: accepted (%d)", path, err);
		CHECK(insns == NULL);
		CHECK(strstr(bpfrt_last_error(), "line ") != NULL, "%s: message '%s'", path,
		      bpfrt_last_error());
		free(insns);
	}
}

TEST(conformance_negative_messages_name_the_problem)
{
	static const struct { const char *file, *what; } cases[] = {
		{ "invalid_imm32_dec_range", "line 5: immediate 2147483648 out of 32-bit range" },
		{ "invalid_imm32_hex_range", "line 5: immediate 0x100000000 out of 32-bit range" },
		{ "invalid_label", "line 4: unknown label 'NOT_A_LABEL'" },
		{ "invalid_lock", "line 4: invalid number of operands for lock" },
		{ "invalid_lock2", "line 4: invalid number of operands for lock" },
		{ "invalid_mnemonic", "line 5: invalid mnemonic 'ldxq'" },
		{ "invalid_offset", "line 4: expected a memory operand" },
		{ "invalid_offset_range", "line 5: offset +0x10000 out of 16-bit range" },
		{ "invalid_operand_count", "line 4: invalid number of operands for 'lddw'" },
		{ "invalid_register", "line 4: invalid register '%r50'" },
		{ "invalid_unknown_directive", "line 4: unknown directive" },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		char path[256];
		struct bpfrt_datafile df;
		struct bpf_insn *insns = NULL;
		size_t cnt;
		int err;

		snprintf(path, sizeof(path), CONF_NEGATIVE "/%s.data", cases[i].file);
		err = bpfrt_datafile_load(path, &df);
		if (!err) {
			err = bpfrt_asm(df.asm_text ? df.asm_text : "", &insns, &cnt);
			bpfrt_datafile_free(&df);
		}
		CHECK(err == -EINVAL);
		CHECK(strstr(bpfrt_last_error(), cases[i].what), "%s: '%s'", cases[i].file,
		      bpfrt_last_error());
		free(insns);
	}
}

TEST(conformance_negative_empty_files_have_no_program)
{
	static const char *const files[] = { "empty", "empty_instructions" };

	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		char path[256];
		struct bpfrt_datafile df;

		snprintf(path, sizeof(path), CONF_NEGATIVE "/%s.data", files[i]);
		REQUIRE(bpfrt_datafile_load(path, &df) == 0, "%s", bpfrt_last_error());
		CHECK(!df.asm_text && !df.raw, "%s has a program", path);
		bpfrt_datafile_free(&df);
	}
	/* And the assembler itself refuses an empty program. */
	CHECK_REJECTS("", "no instructions");
	CHECK_REJECTS("# only a comment\n\nlabel:\n", "line 3: no instructions");
}

/* The other negative files are well-formed: they must fail later (at
 * load or run), so the reader and assembler accept and round-trip them. */
TEST(conformance_negative_other_files_round_trip)
{
	size_t n, raw_files = 0;
	char **files = list_data_files(CONF_NEGATIVE, &n);

	REQUIRE(n >= 60, "found %zu files", n);
	for (size_t i = 0; i < n && !tl_failed(); i++) {
		struct bpfrt_datafile df;
		struct bpf_insn *insns = NULL;
		size_t cnt = 0;
		int err;

		if (is_asm_level_negative(files[i]) || strstr(files[i], "/empty"))
			continue;
		err = bpfrt_datafile_load(files[i], &df);
		CHECK(err == 0, "%s", bpfrt_last_error());
		if (err)
			continue;
		err = load_program(&df, &insns, &cnt);
		CHECK(err == 0, "%s: %s", files[i], bpfrt_last_error());
		if (!err)
			free(check_roundtrip(files[i], insns, cnt));
		raw_files += df.raw != NULL;
		free(insns);
		bpfrt_datafile_free(&df);
	}
	CHECK(raw_files >= 40, "only %zu raw negative files", raw_files);
	free_list(files, n);
}

/* The unused-* files set one reserved field; the disassembler must not
 * give them a mnemonic (that would hide the fault in listings). */
TEST(disasm_reserved_fields_print_raw)
{
	struct bpfrt_datafile df;
	char buf[BPFRT_DISASM_LINE_MAX];
	const struct bpf_insn *insn;

	REQUIRE(bpfrt_datafile_load(CONF_NEGATIVE "/unused-add64_imm-offset.data", &df) == 0);
	REQUIRE(df.raw && df.raw_len == 16);
	insn = (const struct bpf_insn *)df.raw;
	CHECK(bpfrt_disasm_insn(insn, 2, buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, ".insn 0x0000000100010007"), "got '%s'", buf);
	CHECK(bpfrt_disasm_insn(insn + 1, 1, buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, "exit"), "got '%s'", buf);
	bpfrt_datafile_free(&df);
}

/* ---- encodings of each family ------------------------------------------ */

TEST(encode_alu)
{
	CHECK_ENCODES("add %r1, 2", ALU64_IMM(BPF_ADD, 1, 2));
	CHECK_ENCODES("add32 %r1, %r2", ALU32_REG(BPF_ADD, 1, 2));
	CHECK_ENCODES("sub %r9, -7", ALU64_IMM(BPF_SUB, 9, -7));
	CHECK_ENCODES("mul32 %r0, 0xffffffff", ALU32_IMM(BPF_MUL, 0, -1));
	CHECK_ENCODES("div %r3, %r4", ALU64_REG(BPF_DIV, 3, 4));
	CHECK_ENCODES("or %r0, %r10", ALU64_REG(BPF_OR, 0, 10));
	CHECK_ENCODES("and32 %r5, 0xff", ALU32_IMM(BPF_AND, 5, 0xff));
	CHECK_ENCODES("lsh %r1, 63", ALU64_IMM(BPF_LSH, 1, 63));
	CHECK_ENCODES("rsh32 %r1, %r2", ALU32_REG(BPF_RSH, 1, 2));
	CHECK_ENCODES("arsh %r1, 3", ALU64_IMM(BPF_ARSH, 1, 3));
	CHECK_ENCODES("mod %r1, 3", ALU64_IMM(BPF_MOD, 1, 3));
	CHECK_ENCODES("xor32 %r1, %r1", ALU32_REG(BPF_XOR, 1, 1));
	CHECK_ENCODES("mov %r0, -1", MOV64_IMM(0, -1));
	CHECK_ENCODES("mov32 %r7, %r8", MOV32_REG(7, 8));
	CHECK_ENCODES("neg %r2", ALU64_IMM(BPF_NEG, 2, 0));
	CHECK_ENCODES("neg32 %r2", ALU32_IMM(BPF_NEG, 2, 0));
	CHECK_ENCODES("sdiv %r1, 5", SDIV64_IMM(1, 5));
	CHECK_ENCODES("smod %r1, 5", SMOD64_IMM(1, 5));
	CHECK_ENCODES("sdiv32 %r1, %r2", INSN(BPF_ALU | BPF_DIV | BPF_X, 1, 2, 1, 0));
	CHECK_ENCODES("smod32 %r1, %r2", INSN(BPF_ALU | BPF_MOD | BPF_X, 1, 2, 1, 0));
	CHECK_ENCODES("movsx832 %r0, %r1", MOVSX32_REG(0, 1, 8));
	CHECK_ENCODES("movsx1632 %r0, %r1", MOVSX32_REG(0, 1, 16));
	CHECK_ENCODES("movsx864 %r0, %r1", MOVSX64_REG(0, 1, 8));
	CHECK_ENCODES("movsx1664 %r0, %r1", MOVSX64_REG(0, 1, 16));
	CHECK_ENCODES("movsx3264 %r0, %r1", MOVSX64_REG(0, 1, 32));
	CHECK_REJECTS("movsx3232 %r0, %r1", "invalid mnemonic");
	CHECK_REJECTS("neg %r1, 2", "invalid number of operands for 'neg'");
	CHECK_REJECTS("add %r1", "invalid number of operands for 'add'");
	CHECK_REJECTS("sadd %r1, 1", "invalid mnemonic 'sadd'");
}

TEST(encode_byte_swaps)
{
	CHECK_ENCODES("be16 %r0", ENDIAN(BPF_TO_BE, 0, 16));
	CHECK_ENCODES("be32 %r1", ENDIAN(BPF_TO_BE, 1, 32));
	CHECK_ENCODES("be64 %r2", ENDIAN(BPF_TO_BE, 2, 64));
	CHECK_ENCODES("le16 %r0", ENDIAN(BPF_TO_LE, 0, 16));
	CHECK_ENCODES("le64 %r0", ENDIAN(BPF_TO_LE, 0, 64));
	CHECK_ENCODES("bswap16 %r3", BSWAP(3, 16));
	CHECK_ENCODES("bswap64 %r3", BSWAP(3, 64));
	CHECK_ENCODES("swap32 %r3", BSWAP(3, 32));
	CHECK_REJECTS("be8 %r0", "invalid mnemonic");
	CHECK_REJECTS("bswap16 %r0, 1", "invalid number of operands");
}

TEST(encode_memory)
{
	CHECK_ENCODES("ldxb %r0, [%r1+2]", LDX(BPF_B, 0, 1, 2));
	CHECK_ENCODES("ldxh %r0, [%r1]", LDX(BPF_H, 0, 1, 0));
	CHECK_ENCODES("ldxw %r0, [%r10-4]", LDX(BPF_W, 0, 10, -4));
	CHECK_ENCODES("ldxdw %r0, [%r1+0x10]", LDX(BPF_DW, 0, 1, 16));
	CHECK_ENCODES("ldxdw %r0, [ %r1 + 32767 ]", LDX(BPF_DW, 0, 1, 32767));
	CHECK_ENCODES("ldxsb %r0, [%r10-1]", LDXSX(BPF_B, 0, 10, -1));
	CHECK_ENCODES("ldxsh %r0, [%r10-2]", LDXSX(BPF_H, 0, 10, -2));
	CHECK_ENCODES("ldxsw %r0, [%r10-32768]", LDXSX(BPF_W, 0, 10, -32768));
	CHECK_ENCODES("stb [%r10-1], 0x80", ST(BPF_B, 10, -1, 0x80));
	CHECK_ENCODES("sth [%r1+2], -2", ST(BPF_H, 1, 2, -2));
	CHECK_ENCODES("stw [%r1], 7", ST(BPF_W, 1, 0, 7));
	CHECK_ENCODES("stdw [%r1+8], 0x7fffffff", ST(BPF_DW, 1, 8, 0x7fffffff));
	CHECK_ENCODES("stxb [%r1+1], %r2", STX(BPF_B, 1, 2, 1));
	CHECK_ENCODES("stxh [%r1+1], %r2", STX(BPF_H, 1, 2, 1));
	CHECK_ENCODES("stxw [%r1+1], %r2", STX(BPF_W, 1, 2, 1));
	CHECK_ENCODES("stxdw [%r10-8], %r9", STX(BPF_DW, 10, 9, -8));
	CHECK_REJECTS("ldxsdw %r0, [%r1]", "invalid mnemonic");
	CHECK_REJECTS("ldxb %r0, %r1", "expected a memory operand");
	CHECK_REJECTS("stxb [%r1], 1", "expected a register");
	CHECK_REJECTS("ldxb %r0, [%r1+2", "missing ']'");
	CHECK_REJECTS("ldxb %r0, [%r1+x]", "invalid offset");
	CHECK_REJECTS("ldxb %r0, [%r1+32768]", "out of 16-bit range");
	CHECK_REJECTS("ldxb %r0, [%r1-32769]", "out of 16-bit range");
	CHECK_REJECTS("ldxb %r0, [%r11]", "invalid register '%r11'");
}

TEST(encode_atomics)
{
	CHECK_ENCODES("lock add [%r10-8], %r1", ATOMIC(BPF_DW, BPF_ADD, 10, 1, -8));
	CHECK_ENCODES("lock or32 [%r10-4], %r1", ATOMIC(BPF_W, BPF_OR, 10, 1, -4));
	CHECK_ENCODES("lock and [%r1], %r2", ATOMIC(BPF_DW, BPF_AND, 1, 2, 0));
	CHECK_ENCODES("lock xor32 [%r1+4], %r2", ATOMIC(BPF_W, BPF_XOR, 1, 2, 4));
	CHECK_ENCODES("lock fetch add [%r10-8], %r1",
		      ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 10, 1, -8));
	CHECK_ENCODES("lock fetch xor32 [%r10-4], %r3",
		      ATOMIC(BPF_W, BPF_XOR | BPF_FETCH, 10, 3, -4));
	CHECK_ENCODES("lock xchg [%r10-8], %r1", ATOMIC(BPF_DW, BPF_XCHG, 10, 1, -8));
	CHECK_ENCODES("lock xchg32 [%r10-8], %r1", ATOMIC(BPF_W, BPF_XCHG, 10, 1, -8));
	CHECK_ENCODES("lock cmpxchg [%r10-8], %r1", ATOMIC(BPF_DW, BPF_CMPXCHG, 10, 1, -8));
	CHECK_ENCODES("lock cmpxchg32 [%r10-8], %r1", ATOMIC(BPF_W, BPF_CMPXCHG, 10, 1, -8));
	CHECK_REJECTS("lock", "invalid number of operands for lock");
	CHECK_REJECTS("lock or [%r10-8]", "invalid number of operands for lock");
	CHECK_REJECTS("lock fetch [%r10-8], %r1", "invalid number of operands for lock");
	CHECK_REJECTS("lock sub [%r10-8], %r1", "invalid atomic operation 'sub'");
	CHECK_REJECTS("lock add %r10, %r1", "expected a memory operand");
}

TEST(encode_jumps_and_calls)
{
	CHECK_ENCODES("ja +3", JA(3));
	CHECK_ENCODES("ja -1", JA(-1));
	CHECK_ENCODES("ja32 +70000", GOTOL(70000));
	CHECK_ENCODES("gotol -2", GOTOL(-2));
	CHECK_ENCODES("jeq %r1, 5, +2", JMP_IMM(BPF_JEQ, 1, 5, 2));
	CHECK_ENCODES("jne32 %r1, %r2, -4", JMP32_REG(BPF_JNE, 1, 2, -4));
	CHECK_ENCODES("jgt %r1, %r2, +0", JMP_REG(BPF_JGT, 1, 2, 0));
	CHECK_ENCODES("jge %r1, -1, +1", JMP_IMM(BPF_JGE, 1, -1, 1));
	CHECK_ENCODES("jset32 %r1, 0x80000000, +1", JMP32_IMM(BPF_JSET, 1, INT32_MIN, 1));
	CHECK_ENCODES("jsgt %r1, 1, +1", JMP_IMM(BPF_JSGT, 1, 1, 1));
	CHECK_ENCODES("jsge %r1, 1, +1", JMP_IMM(BPF_JSGE, 1, 1, 1));
	CHECK_ENCODES("jlt %r1, 1, +1", JMP_IMM(BPF_JLT, 1, 1, 1));
	CHECK_ENCODES("jle32 %r1, 1, +1", JMP32_IMM(BPF_JLE, 1, 1, 1));
	CHECK_ENCODES("jslt %r1, 1, +1", JMP_IMM(BPF_JSLT, 1, 1, 1));
	CHECK_ENCODES("jsle32 %r1, %r9, +1", JMP32_REG(BPF_JSLE, 1, 9, 1));
	CHECK_ENCODES("call 5", CALL_HELPER(5));
	CHECK_ENCODES("call helper 7", CALL_HELPER(7));
	CHECK_ENCODES("call local +4", CALL_LOCAL(4));
	CHECK_ENCODES("call local -3", CALL_LOCAL(-3));
	CHECK_ENCODES("call runtime 9", INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 9));
	CHECK_ENCODES("call %r2", CALLX(2));
	CHECK_ENCODES("callx %r8", CALLX(8));
	CHECK_ENCODES("exit", EXIT());
	CHECK_REJECTS("ja +32768", "out of 16-bit range");
	CHECK_REJECTS("jeq %r1, 1, -32769", "out of 16-bit range");
	CHECK_REJECTS("ja32 +2147483648", "out of 32-bit range");
	CHECK_REJECTS("call far 1", "invalid call kind 'far'");
	CHECK_REJECTS("call", "invalid number of operands for 'call'");
	CHECK_REJECTS("exit 1", "invalid number of operands for 'exit'");
	CHECK_REJECTS("jeq %r1, 1", "invalid number of operands for 'jeq'");
	CHECK_REJECTS("jeq %r1, 1, !x", "invalid jump target '!x'");
}

TEST(encode_lddw_and_raw)
{
	struct bpf_insn want[] = { LDDW(3, 0x1122334455667788ull) };
	struct bpf_insn neg[] = { LDDW(1, -2) };
	struct bpf_insn got[4];
	size_t cnt;

	REQUIRE(asm1("lddw %r3, 0x1122334455667788", got, &cnt) == 0);
	CHECK(cnt == 2 && !memcmp(got, want, sizeof(want)));
	REQUIRE(asm1("lddw %r1, -2", got, &cnt) == 0);
	CHECK(cnt == 2 && !memcmp(got, neg, sizeof(neg)));
	REQUIRE(asm1("lddw %r1, 18446744073709551615", got, &cnt) == 0);
	CHECK(cnt == 2 && got[0].imm == -1 && got[1].imm == -1);
	REQUIRE(asm1("lddw %r0, 2147483648", got, &cnt) == 0);
	CHECK(cnt == 2 && got[0].imm == INT32_MIN && got[1].imm == 0);
	CHECK_REJECTS("lddw %r1, 0x10000000000000000", "invalid immediate");
	CHECK_REJECTS("lddw %r1, -9223372036854775809", "out of 64-bit range");
	CHECK_REJECTS("lddw %r0", "invalid number of operands for 'lddw'");
	CHECK_ENCODES(".insn 0x0000000100010007", INSN(0x07, 0, 0, 1, 1));
	CHECK_ENCODES(".insn 0xffffffffffffffff", INSN(0xff, 15, 15, -1, -1));
}

TEST(immediate_ranges)
{
	CHECK_ENCODES("mov32 %r0, 2147483647", MOV32_IMM(0, INT32_MAX));
	CHECK_ENCODES("mov32 %r0, -2147483648", MOV32_IMM(0, INT32_MIN));
	CHECK_ENCODES("mov32 %r0, 0xffffffff", MOV32_IMM(0, -1));
	CHECK_ENCODES("mov32 %r0, -0x80000000", MOV32_IMM(0, INT32_MIN));
	CHECK_ENCODES("mov %r0, 0X7F", MOV64_IMM(0, 0x7f));
	CHECK_REJECTS("mov32 %r0, 2147483648", "out of 32-bit range");
	CHECK_REJECTS("mov32 %r0, -2147483649", "out of 32-bit range");
	CHECK_REJECTS("mov32 %r0, 0x100000000", "out of 32-bit range");
	CHECK_REJECTS("mov32 %r0, -0x80000001", "out of 32-bit range");
	CHECK_REJECTS("mov %r0, 99999999999999999999", "invalid immediate");
	CHECK_REJECTS("mov %r0, 12abc", "invalid immediate");
	CHECK_REJECTS("mov %r0, 0x", "invalid immediate");
	CHECK_REJECTS("stw [%r1], 4294967296", "out of 32-bit range");
	CHECK_REJECTS("call 0x1ffffffff", "out of 32-bit range");
	CHECK_REJECTS("mov %r0, %r", "expected a register");
	CHECK_REJECTS("mov %r0, %r010x", "invalid register");
	CHECK_REJECTS("mov %r0, %r99999999999", "invalid register");
}

/* ---- labels ------------------------------------------------------------ */

TEST(labels_forward_backward_and_lddw_counting)
{
	const char *text =
		"# comment line\n"
		"start:\n"
		"  mov %r0, 0          # trailing comment\n"
		"  jeq %r1, 0, skip\n"        /* 1: over lddw (2 slots) + 1 -> 5 */
		"  lddw %r2, 0x100000000\n"  /* 2-3 */
		"  add %r0, 1\n"             /* 4 */
		"skip: ja32 end\n"           /* 5 -> 8 */
		"back:\n"
		"  call local start\n"       /* 6 -> 0 */
		"  ja back\n"                /* 7 -> 6 */
		"end:\n"
		"  exit\n";                  /* 8 */
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;

	REQUIRE(bpfrt_asm(text, &insns, &cnt) == 0, "%s", bpfrt_last_error());
	REQUIRE(cnt == 9, "%zu", cnt);
	CHECK(insns[1].off == 3, "%d", insns[1].off);
	CHECK(insns[5].code == (BPF_JMP32 | BPF_JA) && insns[5].imm == 2);
	CHECK(insn_is_local_call(&insns[6]) && insns[6].imm == -7);
	CHECK(insns[7].off == -2);
	CHECK(insn_is_exit(&insns[8]));
	free(check_roundtrip("labels", insns, cnt));
	free(insns);
}

TEST(labels_implicit_exit_and_explicit_override)
{
	struct bpf_insn *insns = NULL;
	size_t cnt;

	/* "exit" names the first exit when no label has that name. */
	REQUIRE(bpfrt_asm("ja exit\nmov %r0, 1\nexit\nexit\n", &insns, &cnt) == 0);
	CHECK(cnt == 4 && insns[0].off == 1);
	free(insns);
	REQUIRE(bpfrt_asm("ja exit\nexit\nexit:\nexit\n", &insns, &cnt) == 0,
		"%s", bpfrt_last_error());
	CHECK(cnt == 3 && insns[0].off == 1);
	free(insns);
	/* A label at the very end is allowed (the verifier judges the jump). */
	REQUIRE(bpfrt_asm("ja out\nexit\nout:\n", &insns, &cnt) == 0);
	CHECK(cnt == 2 && insns[0].off == 1);
	free(insns);
}

TEST(labels_errors)
{
	CHECK_REJECTS("mov %r0, 0\nja nowhere\nexit\n", "line 2: unknown label 'nowhere'");
	CHECK_REJECTS("a:\nmov %r0, 0\n\na:\nexit\n",
		      "line 4: duplicate label 'a' (first defined at line 1)");
	CHECK_REJECTS("1abc:\nexit\n", "line 1: invalid label name '1abc'");
	CHECK_REJECTS("call local nowhere\nexit\n", "unknown label 'nowhere'");
	CHECK_REJECTS("ja exit\nmov %r0, 0\n", "unknown label 'exit'");
}

/* A jump, 40000 instructions and its label. */
static char *far_jump_text(const char *jump)
{
	size_t n = 40000, len = 0;
	char *text = malloc(n * 12 + 64);

	len += sprintf(text + len, "%s far\n", jump);
	for (size_t i = 0; i < n; i++)
		len += sprintf(text + len, "mov %%r0, 1\n");
	sprintf(text + len, "far:\nexit\n");
	return text;
}

TEST(labels_out_of_range)
{
	char *text = far_jump_text("ja");
	struct bpf_insn *insns = NULL;
	size_t cnt;

	CHECK_REJECTS(text, "line 1: label 'far' is 40000 instructions away, out of range");
	free(text);
	/* ja32 keeps its target in imm and reaches it. */
	text = far_jump_text("ja32");
	REQUIRE(bpfrt_asm(text, &insns, &cnt) == 0, "%s", bpfrt_last_error());
	CHECK(cnt == 40002 && insns[0].imm == 40000);
	free(insns);
	free(text);
}

TEST(messages_name_the_line)
{
	CHECK_REJECTS("mov %r0, 1\n\n  # c\nfoo %r1\nexit\n", "line 4: invalid mnemonic 'foo'");
	CHECK_REJECTS("mov %r0, 1\r\nmov %r0, %r11\r\n", "line 2: invalid register '%r11'");
	CHECK_REJECTS("mov %r0, 1, 2, 3, 4, 5, 6, 7, 8\n", "line 1: too many operands");
	CHECK_REJECTS("ldxb %r0, [%r1]x\n", "line 1: unexpected 'x' after ']'");
}

/* ---- disassembler API -------------------------------------------------- */

TEST(disasm_insn_api)
{
	struct bpf_insn prog[] = { LDDW(1, 0xdeadbeefcafe), MOV64_IMM(0, -1), JA(-4), EXIT() };
	char buf[BPFRT_DISASM_LINE_MAX];
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(bpfrt_disasm_insn(prog, 4, buf, sizeof(buf)) == 2);
	CHECK(!strcmp(buf, "lddw %r1, 0xdeadbeefcafe"), "'%s'", buf);
	/* A lddw cut off at the end is one raw slot. */
	CHECK(bpfrt_disasm_insn(prog, 1, buf, sizeof(buf)) == 1);
	CHECK(!strncmp(buf, ".insn ", 6), "'%s'", buf);
	CHECK(bpfrt_disasm_insn(prog + 2, 2, buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, "mov %r0, -1"), "'%s'", buf);
	CHECK(bpfrt_disasm_insn(prog + 2, 2, buf, 5) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "too small"));
	CHECK(bpfrt_disasm_insn(prog, 0, buf, sizeof(buf)) == -EINVAL);

	f = open_memstream(&out, &len);
	REQUIRE(f);
	CHECK(bpfrt_disasm(prog, ARRAY_LEN(prog), f) == 0);
	fclose(f);
	CHECK(!strcmp(out,
		      "    0: lddw %r1, 0xdeadbeefcafe\n"
		      "    2: mov %r0, -1\n"
		      "    3: ja -4                                    # -> 0\n"
		      "    4: exit\n"), "got:\n%s", out);
	free(out);
}

TEST(disasm_spelling)
{
	static const struct { struct bpf_insn insn; const char *text; } cases[] = {
		{ SDIV64_IMM(1, -3), "sdiv %r1, -3" },
		{ INSN(BPF_ALU | BPF_MOD | BPF_X, 1, 2, 1, 0), "smod32 %r1, %r2" },
		{ MOVSX64_REG(1, 2, 32), "movsx3264 %r1, %r2" },
		{ MOVSX32_REG(1, 2, 8), "movsx832 %r1, %r2" },
		{ ENDIAN(BPF_TO_BE, 4, 32), "be32 %r4" },
		{ BSWAP(4, 16), "bswap16 %r4" },
		{ LDXSX(BPF_H, 0, 10, -2), "ldxsh %r0, [%r10-2]" },
		{ ST(BPF_DW, 1, 0, 5), "stdw [%r1], 5" },
		{ ATOMIC(BPF_W, BPF_AND | BPF_FETCH, 10, 3, -4), "lock fetch and32 [%r10-4], %r3" },
		{ ATOMIC(BPF_DW, BPF_CMPXCHG, 10, 1, -8), "lock cmpxchg [%r10-8], %r1" },
		{ GOTOL(-1), "ja32 -1" },
		{ JMP32_IMM(BPF_JSLT, 1, 0, 0), "jslt32 %r1, 0, +0" },
		{ CALL_LOCAL(4), "call local +4" },
		{ CALLX(2), "callx %r2" },
		{ CALL_HELPER(-1), "call -1" },
		{ INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 1), "ldabsw 1" },
		{ INSN(BPF_LD | BPF_IND | BPF_H, 0, 3, 0, -4), "ldindh %r3, -4" },
		/* Not valid encodings: */
		{ INSN(BPF_ALU | BPF_END | BPF_TO_LE, 1, 0, 0, 8), ".insn 0x00000008000001d4" },
		{ MOVSX32_REG(1, 2, 32), ".insn 0x00000000002021bc" },
		{ INSN(BPF_ALU64 | BPF_END | BPF_TO_BE, 1, 0, 0, 16), ".insn 0x00000010000001df" },
		{ LDXSX(BPF_DW, 0, 1, 0), ".insn 0x0000000000001099" },
		{ ATOMIC(BPF_B, BPF_ADD, 1, 2, 0), ".insn 0x00000000000021d3" },
		{ ATOMIC(BPF_DW, BPF_SUB, 1, 2, 0), ".insn 0x00000010000021db" },
		{ MOV64_IMM(11, 0), ".insn 0x0000000000000bb7" },
		{ INSN(BPF_JMP32 | BPF_CALL, 0, 0, 0, 1), ".insn 0x0000000100000086" },
		{ INSN(BPF_JMP | BPF_CALL, 0, 3, 0, 1), ".insn 0x0000000100003085" },
		{ INSN(BPF_LD | BPF_ABS | BPF_B, 0, 2, 0, 0), ".insn 0x0000000000002030" },
		{ INSN(BPF_LD | BPF_IND | BPF_W, 1, 2, 0, 0), ".insn 0x0000000000002140" },
	};
	char buf[BPFRT_DISASM_LINE_MAX];

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		CHECK(bpfrt_disasm_insn(&cases[i].insn, 1, buf, sizeof(buf)) == 1);
		CHECK(!strcmp(buf, cases[i].text), "case %zu: '%s' != '%s'", i, buf, cases[i].text);
		free(check_roundtrip(cases[i].text, &cases[i].insn, 1));
	}
}

/* Random slots, biased towards real opcodes and meaningful field values:
 * every one of them, valid or not, must survive disasm -> asm unchanged. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Opcodes that have a mnemonic for some field values, found by asking
 * the disassembler itself. */
static uint8_t valid_codes[256];
static size_t valid_code_cnt;

static void find_valid_codes(void)
{
	static const int16_t offs[] = { 0, 1, 8 };
	static const int32_t imms[] = { 0, 16, 0x41, 0xe1 };
	char buf[BPFRT_DISASM_LINE_MAX];

	if (valid_code_cnt)
		return;
	for (int code = 0; code < 256; code++) {
		bool found = false;

		for (size_t o = 0; o < ARRAY_LEN(offs) && !found; o++) {
			for (size_t i = 0; i < ARRAY_LEN(imms) && !found; i++) {
				struct bpf_insn insn[2] = { INSN(code, 1, 0, offs[o], imms[i]),
							    INSN(0, 0, 0, 0, 0) };

				bpfrt_disasm_insn(insn, 2, buf, sizeof(buf));
				found = strncmp(buf, ".insn", 5) != 0;
			}
		}
		if (found)
			valid_codes[valid_code_cnt++] = (uint8_t)code;
	}
}

static struct bpf_insn random_insn(void)
{
	static const int16_t offs[] = { 1, 8, 16, 32, -1, 2, -32768, 32767 };
	static const int32_t imms[] = { 1, 16, 32, 64, 8, -1, 0x01, 0x41, 0x51,
					0xa1, 0xe1, 0xf1, 0x40, INT32_MIN, INT32_MAX };
	uint64_t r = rng();
	struct bpf_insn insn = bpfrt_word_to_insn(rng());
	unsigned pick = r % 10;
	uint8_t cls;

	if (pick < 7 && valid_code_cnt)
		insn.code = valid_codes[(r >> 8) % valid_code_cnt];
	if ((r >> 16) % 10 < 9)
		insn.dst_reg = (r >> 20) % 11;
	pick = (r >> 24) % 10;
	insn.src_reg = pick < 5 ? 0 : pick < 9 ? (r >> 28) % 11 : insn.src_reg;
	pick = (r >> 32) % 10;
	if (pick < 5)
		insn.off = 0;
	else if (pick < 8)
		insn.off = offs[(r >> 36) % ARRAY_LEN(offs)];
	pick = (r >> 40) % 10;
	if (pick < 4)
		insn.imm = 0;
	else if (pick < 7)
		insn.imm = imms[(r >> 44) % ARRAY_LEN(imms)];
	/* Often leave unused what the source bit says is unused. */
	cls = BPF_CLASS(insn.code);
	if ((r >> 48) % 2 && (cls == BPF_ALU || cls == BPF_ALU64 ||
			      cls == BPF_JMP || cls == BPF_JMP32)) {
		if (BPF_SRC(insn.code) == BPF_X)
			insn.imm = 0;
		else
			insn.src_reg = 0;
	}
	return insn;
}

TEST(random_encodings_round_trip)
{
	enum { PROGS = 3000, LEN = 32 };
	struct bpf_insn prog[LEN];
	size_t lines = 0, raw_lines = 0;

	find_valid_codes();
	CHECK(valid_code_cnt > 100 && valid_code_cnt < 200, "%zu valid opcodes", valid_code_cnt);
	for (int p = 0; p < PROGS && !tl_failed(); p++) {
		char *text;

		for (int i = 0; i < LEN; i++) {
			prog[i] = random_insn();
			/* Give lddw a well-formed second half most of the time. */
			if (i > 0 && insn_is_lddw(&prog[i - 1]) && (rng() & 3))
				prog[i] = INSN(0, 0, 0, 0, (int32_t)rng());
		}
		text = check_roundtrip("random program", prog, LEN);
		for (char *l = text; l && *l; l = strchr(l, '\n') + 1) {
			lines++;
			raw_lines += !strncmp(l, ".insn", 5);
		}
		free(text);
	}
	/* The mix must exercise the mnemonic forms, not only the fallback. */
	CHECK(raw_lines * 10 < lines * 8 && raw_lines * 10 > lines,
	      "%zu of %zu lines raw", raw_lines, lines);
}

/* Garbage text must be rejected or accepted, never crash or leak. */
TEST(random_text_does_not_crash)
{
	static const char *const pieces[] = {
		"mov", "lock", "fetch", "add32", "[", "]", "%r1", "%r", "+", "-", "0x",
		"1", ",", " ", "\n", "#", ":", "lbl", "ja", "call", "local", "lddw",
		"[%r1+", "exit", "\t", "-99999999999999999999", "movsx1664", ".insn",
	};
	char text[256];

	for (int n = 0; n < 20000; n++) {
		struct bpf_insn *insns = NULL;
		size_t cnt, len = 0;
		int err;

		while (len < 200) {
			const char *p = pieces[rng() % ARRAY_LEN(pieces)];

			if (len + strlen(p) >= sizeof(text) - 1)
				break;
			memcpy(text + len, p, strlen(p));
			len += strlen(p);
			if (rng() % 8 == 0)
				break;
		}
		text[len] = '\0';
		err = bpfrt_asm(text, &insns, &cnt);
		CHECK(err == 0 || err == -EINVAL);
		CHECK(err || insns);
		free(insns);
	}
}

/* ---- .data reader ------------------------------------------------------ */

TEST(datafile_sections)
{
	const char *text =
		"# header comment\n"
		"-- c\n"
		"int main() { return 0; }\n"
		"-- asm\n"
		"mov %r0, 1 # keep\n"
		"exit\n"
		"-- raw\n"
		"0x00000001000000b7\n"
		"95 00 00 00 00 00 00 00  # bytes\n"
		"-- mem\n"
		"aa bb\n"
		"0xcc dd\n"
		"-- no register offset\n"
		"whatever text\n"
		"-- result\n"
		"0x1122334455667788\n";
	struct bpfrt_datafile df;
	struct bpf_insn *insns = NULL;
	size_t cnt;

	REQUIRE(bpfrt_datafile_parse(text, &df) == 0, "%s", bpfrt_last_error());
	REQUIRE(df.asm_text);
	/* The asm text keeps the file's line numbers. */
	CHECK(!strcmp(df.asm_text, "\n\n\n\nmov %r0, 1 # keep\nexit\n"), "'%s'", df.asm_text);
	REQUIRE(df.raw && df.raw_len == 16);
	REQUIRE(bpfrt_asm(df.asm_text, &insns, &cnt) == 0);
	CHECK(cnt == 2 && !memcmp(insns, df.raw, 16));
	free(insns);
	REQUIRE(df.mem && df.mem_len == 4);
	CHECK(!memcmp(df.mem, "\xaa\xbb\xcc\xdd", 4));
	CHECK(df.has_result && df.result == 0x1122334455667788ull);
	CHECK(!df.expect_error && !df.error_text);
	bpfrt_datafile_free(&df);
	CHECK(df.asm_text == NULL && df.raw == NULL);
}

TEST(datafile_error_section)
{
	struct bpfrt_datafile df;

	REQUIRE(bpfrt_datafile_parse("-- asm\nexit\n-- error\nInvalid\n  second line\n", &df) == 0);
	CHECK(df.expect_error && df.error_text && !strcmp(df.error_text, "Invalid\nsecond line"),
	      "'%s'", df.error_text);
	CHECK(!df.has_result);
	bpfrt_datafile_free(&df);
	REQUIRE(bpfrt_datafile_parse("-- raw\n95 00 00 00 00 00 00 00\n-- error", &df) == 0);
	CHECK(df.expect_error && df.error_text && !df.error_text[0]);
	CHECK(df.raw_len == 8 && df.raw[0] == 0x95);
	bpfrt_datafile_free(&df);
}

TEST(datafile_errors)
{
	static const struct { const char *text, *what; } cases[] = {
		{ "-- asm\nexit\n-- bogus\n", "line 3: unknown directive '-- bogus'" },
		{ "-- raw\n95 00 00\n", "not a multiple of 8" },
		{ "-- raw\n950\n", "line 2: invalid raw byte '950'" },
		{ "-- raw\n0x1g\n", "invalid raw instruction word '0x1g'" },
		{ "-- raw\n0x00000000000000950\n", "invalid raw instruction word" },
		{ "-- mem\n1 2 zz\n", "line 2: invalid memory byte 'zz'" },
		{ "-- result\n0x1\n0x2\n", "line 3: more than one result" },
		{ "-- result\nabc\n", "invalid result 'abc'" },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct bpfrt_datafile df;

		CHECK(bpfrt_datafile_parse(cases[i].text, &df) == -EINVAL, "case %zu", i);
		CHECK(strstr(bpfrt_last_error(), cases[i].what), "case %zu: '%s'", i,
		      bpfrt_last_error());
		CHECK(!df.asm_text && !df.raw && !df.mem && !df.error_text);
	}
}

TEST(datafile_load_reports_path)
{
	struct bpfrt_datafile df;

	CHECK(bpfrt_datafile_load("tests/conformance/no-such-file.data", &df) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "no-such-file.data"));
	CHECK(bpfrt_datafile_load(CONF_NEGATIVE "/invalid_unknown_directive.data", &df) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "invalid_unknown_directive.data: data: line 4"),
	      "'%s'", bpfrt_last_error());
}

/* ---- the kernel's syntax (verifier logs) --------------------------------- */

static const char *kname(void *ctx, const struct bpf_insn *insn)
{
	return insn->imm == 1 ? "bpf_map_lookup_elem" : NULL;
}

static const char *kimm(void *ctx, const struct bpf_insn *insn, uint32_t pc, char *buf,
			size_t len)
{
	if (insn->src_reg != BPF_PSEUDO_MAP_FD)
		return NULL;
	snprintf(buf, len, "map[counts]");
	return buf;
}

TEST(kernel_syntax_as_print_bpf_insn_prints)
{
	static const struct {
		struct bpf_insn insn[2];
		const char *text;
	} cases[] = {
		{ { LDX(BPF_DW, 1, 7, 0) }, "r1 = *(u64 *)(r7 +0)" },
		{ { LDXSX(BPF_H, 2, 1, -6) }, "r2 = *(s16 *)(r1 -6)" },
		{ { STX(BPF_W, 10, 1, -4) }, "*(u32 *)(r10 -4) = r1" },
		{ { ST(BPF_B, 10, -1, 7) }, "*(u8 *)(r10 -1) = 7" },
		{ { MOV64_IMM(0, 0) }, "r0 = 0" },
		{ { ALU32_IMM(BPF_ADD, 0, -1) }, "w0 += -1" },
		{ { ALU64_REG(BPF_ARSH, 3, 4) }, "r3 s>>= r4" },
		{ { INSN(BPF_ALU64 | BPF_DIV | BPF_K, 1, 0, 1, 3) }, "r1 s/= 3" },
		{ { INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 2, 8, 0) }, "r1 = (s8)r2" },
		{ { INSN(BPF_ALU | BPF_NEG, 5, 0, 0, 0) }, "w5 = -w5" },
		{ { INSN(BPF_ALU | BPF_END | BPF_TO_BE, 1, 0, 0, 16) }, "r1 = be16 r1" },
		{ { INSN(BPF_ALU64 | BPF_END, 1, 0, 0, 32) }, "r1 = bswap32 r1" },
		{ { JMP_IMM(BPF_JGT, 1, 16, 3) }, "if r1 > 0x10 goto pc+3" },
		{ { INSN(BPF_JMP32 | BPF_JSLE | BPF_X, 1, 2, -2, 0) }, "if w1 s<= w2 goto pc-2" },
		{ { INSN(BPF_JMP | BPF_JA, 0, 0, -1, 0) }, "goto pc-1" },
		{ { INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, 1000) }, "gotol pc+1000" },
		{ { INSN(BPF_JMP | BPF_CALL, 0, 0, 0, 1) }, "call bpf_map_lookup_elem#1" },
		{ { INSN(BPF_JMP | BPF_CALL, 0, 0, 0, 4242) }, "call unknown#4242" },
		{ { INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 5) }, "call pc+5" },
		{ { INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) }, "exit" },
		{ { ATOMIC(BPF_DW, BPF_ADD, 1, 2, 8) }, "lock *(u64 *)(r1 +8) += r2" },
		{ { ATOMIC(BPF_W, BPF_OR | BPF_FETCH, 1, 2, 0) },
		  "r2 = atomic_fetch_or((u32 *)(r1 +0), r2)" },
		{ { ATOMIC(BPF_DW, BPF_XCHG, 1, 3, 0) }, "r3 = atomic64_xchg((u64 *)(r1 +0), r3)" },
		{ { ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 3, -8) },
		  "r0 = atomic64_cmpxchg((u64 *)(r1 -8), r0, r3)" },
		{ { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 0x10), INSN(0, 0, 0, 0, 0x2) },
		  "r1 = 0x200000010" },
		{ { INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 3), INSN(0, 0, 0, 0, 0) },
		  "r1 = map[counts]" },
	};
	const struct bpfrt_kdisasm_names names = { kname, kimm, NULL };
	char buf[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int slots = bpfrt_disasm_kernel(cases[i].insn, 2, 0, &names, buf, sizeof(buf));

		CHECK_EQ(slots, insn_is_lddw(cases[i].insn) ? 2 : 1);
		CHECK(!strcmp(buf, cases[i].text), "case %zu: got '%s', want '%s'", i, buf,
		      cases[i].text);
	}
	/* no names given: numbers, and still no crash on a short buffer */
	CHECK_EQ(bpfrt_disasm_kernel(cases[16].insn, 1, 0, NULL, buf, sizeof(buf)), 1);
	CHECK(!strcmp(buf, "call unknown#1"), "%s", buf);
	CHECK_EQ(bpfrt_disasm_kernel(cases[0].insn, 1, 0, NULL, buf, 4), 1);
	CHECK_EQ(strlen(buf), 3);
}
