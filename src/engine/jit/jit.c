/* Arch-neutral JIT driver: picks the backend for this machine and writes
 * annotated listings of JIT images (BPF instruction, then the native code
 * it became, via capstone, loaded with dlopen on the first listing, or
 * GNU objdump where capstone is missing or lacks the architecture). */
#define _GNU_SOURCE /* pipe2 */
#include "jit/jit.h"

#include "core/config.h"
#include "core/error.h"
#include "jit/backend.h"
#include "jit/capstone_dl.h"

/* BPFRT_NO_CAPSTONE: builds for machines without a capstone library
 * (riscv64 on Debian 12) disassemble with objdump only. */
#ifdef BPFRT_NO_CAPSTONE
typedef size_t csh;
struct bpfrt_capstone;
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const struct bpfrt_jit_backend *bpfrt_jit_native_backend(void)
{
#if defined(__x86_64__)
	return &bpfrt_jit_x86_64;
#elif defined(__aarch64__)
	return &bpfrt_jit_arm64;
#elif defined(__riscv) && __riscv_xlen == 64
	return &bpfrt_jit_riscv64;
#else
	return NULL;
#endif
}

static void dump_raw(FILE *out, const uint8_t *code, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		fprintf(out, "  %8" PRIx64 ":  .byte", addr + i);
		for (size_t k = i; k < len && k < i + 8; k++)
			fprintf(out, " 0x%02x", code[k]);
		fputc('\n', out);
	}
}

/* 32-bit instruction words (arm64, riscv64) when capstone cannot decode. */
static void dump_words(FILE *out, const uint8_t *image, size_t from, size_t to)
{
	for (; from + 4 <= to; from += 4) {
		uint32_t w;

		memcpy(&w, image + from, 4);
		fprintf(out, "  %8zx:  .word    0x%08" PRIx32 "\n", from, w);
	}
	if (from < to)
		dump_raw(out, image + from, from, to - from);
}

/* ---- objdump ---------------------------------------------------------- *
 *
 * Capstone 4 (Debian 12) has no RISC-V: there the whole image is written
 * to a temporary file and disassembled once by GNU binutils
 *	objdump -D -z -b binary -m MACHINE FILE
 * (the cross package's prefixed objdump first, then plain objdump, which
 * on a native machine knows its own architecture). Its lines
 *	"   1c:\t00008067          \tret"
 * become one entry per instruction, addressed by image offset as in the
 * capstone listing. BPFRT_JIT_DISASM=objdump uses it even where capstone
 * could decode (tests of this path on any host). */

struct od_insn {
	uint32_t off, size;
	const char *mn, *ops;
};

struct od_listing {
	char *text;             /* objdump's output, cut into the strings */
	struct od_insn *insns;  /* by offset */
	size_t n;
	const char *tool;       /* the objdump that worked */
};

struct od_arch {
	const char *arch;       /* backend name */
	const char *machine;    /* objdump -m */
	const char *opts;       /* extra option, or NULL */
	const char *tools[2];
};

static const struct od_arch od_arches[] = {
	{ "riscv64", "riscv:rv64", NULL, { "riscv64-linux-gnu-objdump", "objdump" } },
	{ "arm64", "aarch64", NULL, { "aarch64-linux-gnu-objdump", "objdump" } },
	{ "x86_64", "i386:x86-64", "-Mintel", { "x86_64-linux-gnu-objdump", "objdump" } },
};

static const struct od_arch *od_arch_of(const char *arch)
{
	for (size_t i = 0; i < sizeof(od_arches) / sizeof(od_arches[0]); i++)
		if (!strcmp(od_arches[i].arch, arch))
			return &od_arches[i];
	return NULL;
}

/* Runs argv with stdout into a malloc'd string (stderr dropped). Returns
 * it, NUL-terminated, if the program exited with status 0, else NULL. */
static char *run_capture(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = 0;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	pid_t pid;
	bool ok;

	if (pipe2(pipefd, O_CLOEXEC))
		return NULL;
	if (posix_spawn_file_actions_init(&fa)) {
		close(pipefd[0]);
		close(pipefd[1]);
		return NULL;
	}
	ok = !posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO) &&
	     !posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0) &&
	     !posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (!ok) {
		close(pipefd[0]);
		return NULL;
	}
	for (;;) {
		ssize_t got;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap ? 2 * cap : 65536);

			if (!nb) {
				ok = false;
				break;
			}
			buf = nb;
			cap = cap ? 2 * cap : 65536;
		}
		got = read(pipefd[0], buf + len, cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ok || !buf || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static size_t hex_bytes(const char *p, const char *end)
{
	size_t digits = 0;

	for (; p < end; p++)
		digits += isxdigit((unsigned char)*p) != 0;
	return digits / 2;
}

/* Cuts objdump's output into instruction entries (in place). Lines that
 * only continue the previous instruction's bytes (x86-64) add to its
 * size. Returns the number of entries. */
static size_t od_parse(struct od_listing *od, size_t image_len)
{
	size_t cap = 0;

	for (char *line = od->text, *next; line && *line; line = next) {
		char *colon, *tab, *end;
		unsigned long off;
		size_t bytes;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "   1c:\t<bytes>\t<insn>" */
		off = strtoul(line, &end, 16);
		colon = end;
		if (end == line || *colon != ':' || colon[1] != '\t' || off >= image_len)
			continue;
		tab = strchr(colon + 2, '\t');
		bytes = hex_bytes(colon + 2, tab ? tab : colon + 2 + strlen(colon + 2));
		if (!tab) {
			if (od->n && od->insns[od->n - 1].off + od->insns[od->n - 1].size == off)
				od->insns[od->n - 1].size += (uint32_t)bytes;
			continue;
		}
		if (od->n == cap) {
			struct od_insn *ni = realloc(od->insns, (cap ? 2 * cap : 256) * sizeof(*ni));

			if (!ni)
				break;
			od->insns = ni;
			cap = cap ? 2 * cap : 256;
		}
		/* mnemonic, then operands after the first blank run; a
		 * " <.data+0x..>" annotation of a target says nothing here */
		char *mn = tab + 1, *ops = mn + strcspn(mn, " \t"), *ann;

		if (*ops) {
			*ops++ = '\0';
			ops += strspn(ops, " \t");
		}
		if ((ann = strstr(ops, " <")))
			*ann = '\0';
		od->insns[od->n++] = (struct od_insn){ .off = (uint32_t)off,
						       .size = (uint32_t)bytes, .mn = mn, .ops = ops };
	}
	return od->n;
}

/* Disassembles image with the first objdump that knows the backend's
 * architecture. Returns false (od empty) if none does. */
static bool od_disassemble(struct od_listing *od, const struct bpfrt_jit_backend *be,
			   const uint8_t *image, size_t len)
{
	const struct od_arch *a = od_arch_of(be->arch);
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;
	bool written;

	memset(od, 0, sizeof(*od));
	if (!a)
		return false;
	snprintf(path, sizeof(path), "%s/bpfrt-jited-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	written = true;
	for (size_t done = 0; done < len && written;) {
		ssize_t w = write(fd, image + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		written = w > 0;
		done += w > 0 ? (size_t)w : 0;
	}
	close(fd);
	for (size_t t = 0; written && t < 2 && !od->n; t++) {
		char *argv[10];
		int k = 0;

		argv[k++] = (char *)a->tools[t];
		argv[k++] = "-D";
		argv[k++] = "-z"; /* runs of zero bytes too, not "..." */
		argv[k++] = "-b";
		argv[k++] = "binary";
		argv[k++] = "-m";
		argv[k++] = (char *)a->machine;
		if (a->opts)
			argv[k++] = (char *)a->opts;
		argv[k++] = path;
		argv[k] = NULL;
		od->text = run_capture(argv);
		if (od->text && od_parse(od, len)) {
			od->tool = a->tools[t];
			break;
		}
		free(od->insns);
		free(od->text);
		od->insns = NULL;
		od->text = NULL;
		od->n = 0;
	}
	unlink(path);
	return od->n != 0;
}

static void od_free(struct od_listing *od)
{
	free(od->insns);
	free(od->text);
}

/* Native instructions in [from, to) from objdump's entries; bytes no
 * entry covers as raw words. */
static void dump_objdump(const struct od_listing *od, FILE *out, const uint8_t *image,
			 size_t from, size_t to)
{
	size_t lo = 0, hi = od->n, pos = from;

	while (lo < hi) { /* first entry at or after from */
		size_t mid = lo + (hi - lo) / 2;

		if (od->insns[mid].off < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < od->n && od->insns[i].off < to; i++) {
		const struct od_insn *e = &od->insns[i];

		if (e->off > pos)
			dump_words(out, image, pos, e->off);
		if (e->off < pos)
			continue;
		fprintf(out, "  %8" PRIx32 ":  %-8s %s\n", e->off, e->mn, e->ops);
		pos = e->off + (e->size ? e->size : 1);
	}
	if (pos < to)
		dump_words(out, image, pos, to);
}

/* Native instructions in [from, to) of the image: capstone, else
 * objdump's entries, else raw words. */
static void dump_native(const struct bpfrt_capstone *capstone, csh cs,
			const struct od_listing *od, FILE *out, const uint8_t *image,
			size_t from, size_t to)
{
	if (!cs) {
		if (od->n)
			dump_objdump(od, out, image, from, to);
		else
			dump_words(out, image, from, to);
		return;
	}
#ifndef BPFRT_NO_CAPSTONE
	while (from < to) {
		cs_insn *ci;
		size_t cnt = capstone->disasm(cs, image + from, to - from, (uint64_t)from, 0, &ci);
		size_t done = 0;

		for (size_t k = 0; k < cnt; k++) {
			fprintf(out, "  %8" PRIx64 ":  %-8s %s\n", ci[k].address, ci[k].mnemonic,
				ci[k].op_str);
			done += ci[k].size;
		}
		if (cnt)
			capstone->free(ci, cnt);
		from += done;
		if (from < to && !cnt) {
			/* undecodable: show one byte raw and go on */
			dump_raw(out, image + from, from, 1);
			from++;
		}
	}
#endif
}

static void dump_bpf(FILE *out, const struct bpfrt_prog *prog, uint32_t pc, int *slots)
{
	char text[128];
	int n = bpfrt_disasm_insn(prog->insns + pc, prog->insn_cnt - pc, text, sizeof(text));

	if (n > 0) {
		fprintf(out, "%u: %s\n", pc, text);
		*slots = n;
		return;
	}
	const uint8_t *raw = (const uint8_t *)&prog->insns[pc];

	fprintf(out, "%u: .raw", pc);
	for (unsigned k = 0; k < sizeof(struct bpf_insn); k++)
		fprintf(out, " %02x", raw[k]);
	fputc('\n', out);
	*slots = 1;
}

int bpfrt_prog_dump_jited(const struct bpfrt_prog *prog, FILE *out)
{
	const struct bpfrt_jit_backend *be = bpfrt_jit_native_backend();
	const uint32_t *off;
	const uint8_t *image;
	bool forced = !strcmp(bpfrt_config()->jit_disasm.value, "objdump");
	struct od_listing od = { 0 };
	const struct od_arch *oa;
	size_t len;
	csh cs = 0;
	const struct bpfrt_capstone *capstone = NULL;
	const char *no_capstone = forced ? "BPFRT_JIT_DISASM=objdump" : "none in this capstone";

	if (!prog || !out)
		return bpfrt_err(-EINVAL, "dump --jited: NULL argument");
	image = bpfrt_prog_jited(prog, &len);
	if (!image || !prog->jit_insn_off)
		return bpfrt_err(-ENOENT, "dump --jited: %s was not JIT-compiled", prog->name);
	if (!be)
		return bpfrt_err(-ENOTSUP, "dump --jited: no JIT backend for this machine");
#ifndef BPFRT_NO_CAPSTONE
	/* cs_arch < 0: this capstone has no decoder for the backend */
	if (be->cs_arch >= 0 && !forced) {
		capstone = bpfrt_capstone_get(&no_capstone);
		if (capstone &&
		    capstone->open((cs_arch)be->cs_arch, (cs_mode)be->cs_mode, &cs) != CS_ERR_OK)
			return bpfrt_err(-ENOTSUP, "dump --jited: capstone cannot open %s", be->arch);
	}
#endif
	off = prog->jit_insn_off;

	fprintf(out, "; %s: %zu bytes of %s code at %p\n", prog->name, len, be->arch, (void *)image);
	if (be->cs_arch >= 0 && !forced && !capstone)
		fprintf(out, "; capstone not loaded (%s): the next disassembler is used\n",
			no_capstone);
	oa = od_arch_of(be->arch);
	if (!cs && od_disassemble(&od, be, image, len))
		fprintf(out, "; disassembled by %s\n", od.tool);
	else if (!cs)
		fprintf(out, "; no %s disassembler (%s, and no objdump for %s ran: %s in PATH "
			"and a writable TMPDIR): raw instruction words\n", be->arch,
			no_capstone,
			oa ? oa->machine : be->arch, oa ? oa->tools[0] : "objdump");
	for (uint32_t s = 0; s < prog->subprog_cnt; s++) {
		const struct bpfrt_subprog *sp = &prog->subprogs[s];
		uint32_t fstart = off[BPFRT_JIT_FUNC_START(prog, s)];
		uint32_t bend = off[BPFRT_JIT_BODY_END(prog, s)];
		uint32_t fend = s + 1 < prog->subprog_cnt ?
				off[BPFRT_JIT_FUNC_START(prog, s + 1)] : off[prog->insn_cnt];

		fprintf(out, "\n; subprog %u (insn %u), stack %u bytes\n", s, sp->start,
			sp->stack_depth);
		fprintf(out, "; prologue\n");
		dump_native(capstone, cs, &od, out, image, fstart, off[sp->start]);
		for (uint32_t pc = sp->start; pc < sp->end;) {
			int slots;
			uint32_t next;

			dump_bpf(out, prog, pc, &slots);
			next = pc + (uint32_t)slots < sp->end ? off[pc + slots] : bend;
			dump_native(capstone, cs, &od, out, image, off[pc], next);
			pc += (uint32_t)slots;
		}
		if (fend > bend) {
			fprintf(out, "; epilogue (abort unwinding)\n");
			dump_native(capstone, cs, &od, out, image, bend, fend);
		}
	}
#ifndef BPFRT_NO_CAPSTONE
	if (cs)
		capstone->close(&cs);
#endif
	od_free(&od);
	return 0;
}
