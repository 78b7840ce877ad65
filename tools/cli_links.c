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

/* Prints pid's listing if it has one; returns 1 if printed, 0 if none,
 * -ESRCH if there is no such process, -EACCES (or another -errno) if its
 * descriptors cannot be read. */
static int show_pid(int pid)
{
	char dir[64], path[PATH_MAX], target[PATH_MAX], line[1024], comm[64];
	struct dirent *de;
	int shown = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
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
		printf("usage: bpfrt links [PID...]   links of processes that embed bpfrt\n"
		       "exit status 1 if a PID is no process or cannot be read\n");
		return 0;
	}
	if (argc > 0) {
		int failed = 0;

		for (int i = 0; i < argc; i++) {
			char *end;
			long pid = strtol(argv[i], &end, 10);

			if (*end || pid <= 0 || pid > INT_MAX) {
				fprintf(stderr, "bpfrt links: bad pid '%s'\n", argv[i]);
				return 2;
			}
		}
		for (int i = 0; i < argc; i++) {
			int pid = atoi(argv[i]), r = show_pid(pid);

			if (r == 0) {
				printf("pid %d: no bpfrt links\n", pid);
			} else if (r < 0) {
				fprintf(stderr, "bpfrt links: pid %d: %s\n", pid,
					r == -ESRCH ? "no such process" : strerror(-r));
				failed = 1;
			}
		}
		return failed;
	}
	DIR *proc = opendir("/proc");
	struct dirent *de;

	if (!proc) {
		fprintf(stderr, "bpfrt links: /proc: %s\n", strerror(errno));
		return 1;
	}
	/* processes that went away or are not ours to read are skipped */
	while ((de = readdir(proc)))
		if (isdigit((unsigned char)de->d_name[0]) && show_pid(atoi(de->d_name)) > 0)
			found++;
	closedir(proc);
	if (!found)
		printf("no process with bpfrt links\n");
	return 0;
}
