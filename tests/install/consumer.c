/* A program outside the tree using the installed libbpfrt: built with
 * nothing but `pkg-config --cflags --libs libbpfrt` (tests/test_install.sh).
 * Loads one program from assembly and one from raw instructions, runs
 * them in the interpreter and the JIT, and checks the results, the error
 * path and that the library is the version its headers say. */
#include <bpfrt/bpfrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "consumer: %s: %d (%s)\n", what, err, bpfrt_last_error());
	return 1;
}

/* Runs prog in both engines and checks r0 against want. */
static int run_both(const struct bpfrt_prog *prog, uint64_t arg1, uint64_t arg2, uint64_t want)
{
	const enum bpfrt_exec_mode modes[] = { BPFRT_EXEC_INTERP, BPFRT_EXEC_JIT };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		uint64_t r0 = 0;
		int err = bpfrt_prog_run(prog, modes[i], arg1, arg2, &r0);

		if (err)
			return fail(bpfrt_prog_name(prog), err);
		if (r0 != want) {
			fprintf(stderr, "consumer: %s in mode %d returned %llu, want %llu\n",
				bpfrt_prog_name(prog), (int)modes[i], (unsigned long long)r0,
				(unsigned long long)want);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	char want_version[32];
	struct bpf_insn *insns = NULL;
	size_t cnt = 0;
	struct bpfrt_prog *asm_prog = NULL, *raw_prog = NULL, *bad = NULL;
	struct bpfrt_prog_load_opts opts = { .sz = sizeof(opts), .name = "from_asm", .jit = true };
	/* r0 = first byte of the memory r1 points to */
	const struct bpf_insn load_byte[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_B, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const struct bpf_insn no_exit[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
	};
	unsigned char packet[4] = { 0xa5, 1, 2, 3 };
	int err;

	snprintf(want_version, sizeof(want_version), "%d.%d.%d", BPFRT_VERSION_MAJOR,
		 BPFRT_VERSION_MINOR, BPFRT_VERSION_PATCH);
	if (strcmp(bpfrt_version(), want_version)) {
		fprintf(stderr, "consumer: library %s, headers %s\n", bpfrt_version(), want_version);
		return 1;
	}

	err = bpfrt_asm("mov %r0, 6\nmul %r0, 7\nexit\n", &insns, &cnt);
	if (err)
		return fail("bpfrt_asm", err);
	err = bpfrt_prog_load(insns, cnt, &opts, &asm_prog);
	free(insns);
	if (err)
		return fail("bpfrt_prog_load from_asm", err);
	if (run_both(asm_prog, 0, 0, 42))
		return 1;

	opts.name = "from_raw";
	err = bpfrt_prog_load(load_byte, sizeof(load_byte) / sizeof(load_byte[0]), &opts, &raw_prog);
	if (err)
		return fail("bpfrt_prog_load from_raw", err);
	if (run_both(raw_prog, (uint64_t)(uintptr_t)packet, sizeof(packet), 0xa5))
		return 1;

	/* bad input: a negative errno and a message */
	opts.name = "no_exit";
	err = bpfrt_prog_load(no_exit, 1, &opts, &bad);
	if (err >= 0 || !*bpfrt_last_error()) {
		fprintf(stderr, "consumer: a program without exit loaded (%d)\n", err);
		return 1;
	}

	bpfrt_prog_free(asm_prog);
	bpfrt_prog_free(raw_prog);
	printf("consumer: libbpfrt %s: 42 and 0xa5 in the interpreter and the JIT\n",
	       bpfrt_version());
	return 0;
}
