/* JIT listings through GNU objdump (jit.c), what riscv64 gets because
 * capstone 4 has no RISC-V; BPFRT_JIT_DISASM=objdump forces that path on
 * every architecture, so it runs natively and under ASan too: grouping
 * per BPF instruction, the native mnemonics, no temporary file, child or
 * descriptor left behind, and raw words with a note when no objdump runs
 * (none in PATH, no writable TMPDIR). */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "jit_support.h"
#include "bpfrt/bpfrt.h"
#include "core/config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct bpf_insn prog[] = {
	MOV64_IMM(0, 1),
	ST(BPF_DW, 10, -8, 5),
	CALL_LOCAL(1),
	EXIT(),
	MOV64_IMM(0, 2),
	EXIT(),
};

static struct bpfrt_prog *load(void)
{
	return load_insns("listing", prog, ARRAY_LEN(prog), true, 0);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Native lines ("  <hex>:  <text>") that are raw words or bytes. */
static int raw_lines(const char *text)
{
	int n = 0;

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n'), *c = strstr(l, ":  ");

		if (!strncmp(l, "  ", 2) && c && (!nl || c < nl))
			n += !strncmp(c + 3, ".word ", 6) || !strncmp(c + 3, ".byte ", 6);
		l = nl ? nl + 1 : NULL;
	}
	return n;
}

/* The environment variable name=value for one listing, then restored. */
static char *listing_with(const struct bpfrt_prog *p, const char *name, const char *value)
{
	char *old = getenv(name) ? strdup(getenv(name)) : NULL;
	char *text;

	setenv(name, value, 1);
	bpfrt_config_reread();
	text = jited_listing(p);
	if (old)
		setenv(name, old, 1);
	else
		unsetenv(name);
	bpfrt_config_reread();
	free(old);
	return text;
}

TEST(objdump_listing_groups_native_code_per_insn)
{
	struct bpfrt_prog *p = load();
	char dir[] = "/tmp/bpfrt-listing-XXXXXX", *text;
	int fds_before, fds_after;

	REQUIRE(p, "%s", bpfrt_last_error());
	REQUIRE(mkdtemp(dir));
	fds_before = count_entries("/proc/self/fd");
	setenv("BPFRT_JIT_DISASM", "objdump", 1);
	bpfrt_config_reread();
	text = listing_with(p, "TMPDIR", dir);
	unsetenv("BPFRT_JIT_DISASM");
	bpfrt_config_reread();
	fds_after = count_entries("/proc/self/fd");
	REQUIRE(text);
	if (strstr(text, "raw instruction words")) {
		free(text);
		rmdir(dir);
		bpfrt_prog_free(p);
		SKIP("no objdump for this architecture here (binutils for it)");
	}
	CHECK(strstr(text, "; disassembled by ") && strstr(text, "objdump"), "%s", text);
	/* a BPF instruction, then its native code right below */
	{
		const char *at = strstr(text, "\n4: mov %r0, 2\n");

		CHECK(strstr(text, "\n; subprog 1 (insn 4)"), "%s", text);
		CHECK(at && !strncmp(strchr(at + 1, '\n') + 1, "  ", 2), "%s", text);
	}
	/* every architecture's functions return with "ret" */
	CHECK(strstr(text, ":  ret"), "%s", text);
	CHECK(raw_lines(text) == 0, "undecoded code: %s", text);
	CHECK(count_entries(dir) == 0, "temporary file left in %s", dir);
	CHECK(fds_after == fds_before, "descriptors %d -> %d", fds_before, fds_after);
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child left unreaped");
	free(text);
	rmdir(dir);
	bpfrt_prog_free(p);
}

TEST(no_objdump_degrades_to_raw_words)
{
	static const char *const env[][2] = {
		{ "PATH", "/nonexistent" },     /* no objdump */
		{ "TMPDIR", "/nonexistent" },   /* nowhere to write the image */
	};
	struct bpfrt_prog *p = load();

	REQUIRE(p, "%s", bpfrt_last_error());
	setenv("BPFRT_JIT_DISASM", "objdump", 1);
	bpfrt_config_reread();
	for (size_t i = 0; i < ARRAY_LEN(env); i++) {
		char *text = listing_with(p, env[i][0], env[i][1]);

		REQUIRE(text);
		CHECK(strstr(text, "; no ") && strstr(text, " disassembler (") &&
		      strstr(text, "objdump") && strstr(text, "raw instruction words"),
		      "%s=%s: %s", env[i][0], env[i][1], text);
		CHECK(strstr(text, "\n0: mov %r0, 1\n") && raw_lines(text) > 0, "%s", text);
		CHECK(!strstr(text, ":  ret"), "%s", text);
		free(text);
	}
	unsetenv("BPFRT_JIT_DISASM");
	bpfrt_config_reread();
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child left unreaped");
	bpfrt_prog_free(p);
}

/* Fake objdumps first in PATH (every name jit.c tries): output from one
 * that fails is not trusted; one that succeeds is what the listing shows,
 * in the capstone path's columns. */
static void fake_objdumps(const char *dir, const char *script)
{
	static const char *const names[] = {
		"objdump", "riscv64-linux-gnu-objdump", "aarch64-linux-gnu-objdump",
		"x86_64-linux-gnu-objdump",
	};

	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		f = fopen(path, "w");
		REQUIRE(f);
		fputs(script, f);
		fclose(f);
		REQUIRE(chmod(path, 0755) == 0);
	}
}

static void remove_fakes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

TEST(objdump_exit_status_and_columns)
{
	struct bpfrt_prog *p = load();
	char dir[] = "/tmp/bpfrt-fake-objdump-XXXXXX", *text;

	REQUIRE(p, "%s", bpfrt_last_error());
	REQUIRE(mkdtemp(dir));
	setenv("BPFRT_JIT_DISASM", "objdump", 1);
	bpfrt_config_reread();

	fake_objdumps(dir, "#!/bin/sh\nprintf '   0:\\t00000000 \\tfakeinsn\\tx,y\\n'\nexit 1\n");
	text = listing_with(p, "PATH", dir);
	REQUIRE(text);
	CHECK(strstr(text, "raw instruction words") && !strstr(text, "fakeinsn"), "%s", text);
	free(text);

	fake_objdumps(dir, "#!/bin/sh\nprintf '\\n0000000000000000 <.data>:\\n"
		      "   0:\\t00000000 \\tfakeinsn\\tx,y <.data+0x10>\\n'\n");
	text = listing_with(p, "PATH", dir);
	REQUIRE(text);
	CHECK(strstr(text, "; disassembled by ") && strstr(text, "\n         0:  fakeinsn x,y\n"),
	      "%s", text);
	/* the rest of the image, which the fake did not decode: raw */
	CHECK(raw_lines(text) > 0, "%s", text);
	free(text);

	unsetenv("BPFRT_JIT_DISASM");
	bpfrt_config_reread();
	remove_fakes(dir);
	bpfrt_prog_free(p);
}
