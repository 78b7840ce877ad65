/* bpfrt links [PID...]: the links of processes that embed bpfrt.
 *
 * Each such process keeps its link listing in a memfd named "bpfrt-links"
 * (src/host/attach/link.c); we find it among /proc/PID/fd and read it through
 * that path (same user or root). A listing whose "pid N" header names
 * another process was inherited across fork() and is skipped. */
#define _GNU_SOURCE
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINKS_MEMFD_TARGET "/memfd:bpfrt-links (deleted)"

static void read_comm(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* Prints pid's listing if it has one; returns 1 if printed, 0 if none. */
static int show_pid(int pid)
{
	char dir[64], path[PATH_MAX], target[PATH_MAX], line[1024], comm[64];
	struct dirent *de;
	int shown = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!shown && (de = readdir(d))) {
		ssize_t n;
		FILE *f;
		int owner = -1;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, LINKS_MEMFD_TARGET))
			continue;
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f) || sscanf(line, "pid %d", &owner) != 1 ||
		    owner != pid) {
			fclose(f);
			continue;
		}
		read_comm(pid, comm, sizeof(comm));
		printf("pid %d (%s):\n", pid, comm);
		while (fgets(line, sizeof(line), f))
			printf("  %s", line);
		fclose(f);
		shown = 1;
	}
	closedir(d);
	return shown;
}

int cli_links(int argc, char **argv)
{
	int found = 0;

	if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
		printf("usage: bpfrt links [PID...]   links of processes that embed bpfrt\n");
		return 0;
	}
	if (argc > 0) {
		for (int i = 0; i < argc; i++) {
			int pid = atoi(argv[i]);

			if (pid <= 0) {
				fprintf(stderr, "bpfrt links: bad pid '%s'\n", argv[i]);
				return 2;
			}
			if (!show_pid(pid))
				printf("pid %d: no bpfrt links (or not readable)\n", pid);
		}
		return 0;
	}
	DIR *proc = opendir("/proc");
	struct dirent *de;

	if (!proc) {
		fprintf(stderr, "bpfrt links: /proc: %s\n", strerror(errno));
		return 1;
	}
	while ((de = readdir(proc)))
		if (isdigit((unsigned char)de->d_name[0]))
			found += show_pid(atoi(de->d_name));
	closedir(proc);
	if (!found)
		printf("no process with bpfrt links\n");
	return 0;
}
