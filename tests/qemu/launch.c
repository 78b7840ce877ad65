/* Stand-in for a cross-built binary: BUILD/qemu-wrap/PATH (or
 * BUILD/qemu-run/PATH) starts BUILD/PATH under the emulator named in
 * BPFRT_CROSS_QEMU ("qemu-aarch64 -cpu max"). Copied once per binary by
 * tests/run-qemu.sh. A host ELF rather
 * than a script, so tests that hand "$BUILD/bpfrt" to the loader as a
 * non-BPF ELF still get an ELF. Built with the host compiler. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const wrap_dirs[] = { "/qemu-wrap/", "/qemu-run/" };
#define MAX_QEMU_ARGS 16

int main(int argc, char **argv)
{
	char self[PATH_MAX], qemu[1024];
	char *args[MAX_QEMU_ARGS + 2 + argc];
	const char *env = getenv("BPFRT_CROSS_QEMU");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *cut = NULL, *tok, *save;
	size_t skip = 0;
	int k = 0;

	if (n <= 0 || !env || !*env || strlen(env) >= sizeof(qemu)) {
		fprintf(stderr, "qemu-launch: needs /proc/self/exe and BPFRT_CROSS_QEMU\n");
		return 126;
	}
	self[n] = '\0';
	for (size_t i = 0; i < 2 && !cut; i++) {
		cut = strstr(self, wrap_dirs[i]);
		skip = strlen(wrap_dirs[i]);
	}
	if (!cut) {
		fprintf(stderr, "qemu-launch: %s is not under qemu-wrap/ or qemu-run/\n", self);
		return 126;
	}
	/* drop the "qemu-wrap/" path component */
	memmove(cut + 1, cut + skip, strlen(cut + skip) + 1);
	strcpy(qemu, env);
	for (tok = strtok_r(qemu, " ", &save); tok && k < MAX_QEMU_ARGS;
	     tok = strtok_r(NULL, " ", &save))
		args[k++] = tok;
	args[k++] = self;
	for (int i = 1; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	execvp(args[0], args);
	perror(args[0]);
	return 127;
}
