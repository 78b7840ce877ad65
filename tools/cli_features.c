/* `bpfrt features [--markdown]`: what this bpfrt supports, read from the
 * live tables (the default environment's helpers and kfuncs after
 * bpfrt_helpers_init, the map type table, the program kind table), named
 * as Linux names them. --markdown prints docs/SUPPORTED.md, which
 * tests/test_features.sh keeps equal to it. */
#include "cli.h"
#include "bpfrt/bpfrt.h"
#include "core/prog_kind.h"
#include "isa/linux_names.h"
#include "maps/map.h"

#include <stdio.h>
#include <string.h>

/* The Linux name of a helper id, else the name it was registered under. */
static const char *helper_name(uint32_t id, const struct bpfrt_helper_info *h, char *buf,
			       size_t len)
{
	const char *linux_name = bpfrt_linux_helper_name(id);

	if (linux_name)
		return linux_name;
	snprintf(buf, len, "%s", h->name ? h->name : "?");
	return buf;
}

static void list_helpers(bool md, bool kfuncs)
{
	uint32_t lo = kfuncs ? BPFRT_KFUNC_ID_BASE : 1;
	uint32_t hi = kfuncs ? BPFRT_MAX_HELPER_ID : BPFRT_KFUNC_ID_BASE;
	unsigned n = 0;

	for (uint32_t id = lo; id < hi; id++) {
		BPFRT_OPTS(bpfrt_helper_info, h);
		char buf[96];

		if (bpfrt_helper_info(id, &h))
			continue;
		n++;
		if (md && kfuncs)
			printf("| `%s` | %u |\n", h.name ? h.name : "?", id);
		else if (md)
			printf("| %u | `%s` |\n", id, helper_name(id, &h, buf, sizeof(buf)));
		else
			printf("  %4u  %s\n", id, kfuncs ? (h.name ? h.name : "?") :
			       helper_name(id, &h, buf, sizeof(buf)));
	}
	if (!n)
		printf(md ? "| (none) | |\n" : "  (none)\n");
}

static void list_map_types(bool md)
{
	for (uint32_t t = 1; t < 64; t++) {
		const char *name = bpfrt_linux_map_type_name(t);

		if (!name || !bpfrt_map_type_supported(t))
			continue;
		if (md)
			printf("| `%s` | %u |\n", name, t);
		else
			printf("  %4u  %s\n", t, name);
	}
}

static void list_kinds(bool md)
{
	for (int k = 1; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		char secs[160] = "";
		size_t n = 0;

		if (!d)
			continue;
		for (const struct bpfrt_sec_def *s = d->secs; s && s->name && n < sizeof(secs); s++)
			n += (size_t)snprintf(secs + n, sizeof(secs) - n, "%s%s%s%s", n ? ", " : "",
					      md ? "`" : "", s->name, md ? "`" : "");
		if (md)
			printf("| %s | %s | %s |\n", d->info.name, secs,
			       d->info.attachable ? "yes" : "test runs only");
		else
			printf("  %-16s SEC %s%s\n", d->info.name, secs,
			       d->info.attachable ? "" : " (test runs only)");
	}
}

static void print_markdown(void)
{
	printf("# Supported helpers, kfuncs, map types and program kinds\n\n"
	       "What this bpfrt runs, listed from the tables in the code (`bpfrt features\n"
	       "--markdown > docs/SUPPORTED.md`; `tests/test_features.sh` checks that this\n"
	       "file is current). Helpers and map types carry their Linux ids and names; a\n"
	       "program calling a helper not listed is rejected naming it (\"bpf_get_current_task\n"
	       "(35) is not available\"), and so is a map type or program type not listed.\n\n"
	       "## Helpers\n\n| Id | Helper |\n|---|---|\n");
	list_helpers(true, false);
	printf("\nSockets: a process has no kernel sockets, so `bpf_sk_lookup_tcp`, `_udp` and\n"
	       "`bpf_skc_lookup_tcp` find none and return NULL (what Linux returns for a tuple\n"
	       "nothing listens on), and `__sk_buff->sk` reads NULL (the load is rewritten into\n"
	       "`r = 0` once verified, whatever a caller's context holds there). The verifier\n"
	       "still checks Linux's rules, so a program written for the kernel loads unchanged:\n"
	       "a lookup's socket is a reference to release with `bpf_sk_release` on every path\n"
	       "that got one (a leak, a release without the NULL check, a second release and\n"
	       "a tail call or `LD_ABS` while holding one are refused), the casts\n"
	       "(`bpf_sk_fullsock`, `bpf_tcp_sock`, `bpf_skc_to_tcp_sock`) share it,\n"
	       "`bpf_get_listener_sock`'s listener holds none, and `struct bpf_sock` and\n"
	       "`struct bpf_tcp_sock` fields are read at Linux's widths, never written.\n"
	       "`bpf_skc_to_tcp_sock` gives the `struct bpf_tcp_sock` view (Linux: the kernel's\n"
	       "`tcp_sock` by BTF). `bpf_get_socket_cookie` is 0 (no socket) and\n"
	       "`bpf_get_netns_cookie` the kernel's cookie of the process's network namespace\n"
	       "(`SO_NETNS_COOKIE`), for a NULL context too (Linux: the initial namespace's).\n");
	printf("\n## Kfuncs\n\nHost functions BPF code declares `extern ... __ksym` and calls by name:\n"
	       "Linux's generic open-coded iterators, which every environment has (libbpf's\n"
	       "`bpf_for`, `bpf_repeat` and `bpf_for_each(num|bits, ...)`; the verifier proves their\n"
	       "loops by convergence at the next call, whatever the trip count), bpfrt's own\n"
	       "(`bpfrt_nest_kfunc_register()` adds `bpfrt_run_children`); an embedder\n"
	       "registers its own with `bpfrt_kfunc_register`. Ids are given out in registration\n"
	       "order from 512.\n\n| Kfunc | Id |\n|---|---|\n");
	list_helpers(true, true);
	printf("\n## Map types\n\n| Map type | Id |\n|---|---|\n");
	list_map_types(true);
	printf("\n## Program kinds\n\n| Kind | SEC() names | Attach in the process |\n"
	       "|---|---|---|\n");
	list_kinds(true);
}

int cli_features(int argc, char **argv)
{
	bool md = argc == 1 && !strcmp(argv[0], "--markdown");

	if (argc && !md) {
		fprintf(stderr, "bpfrt features: unknown argument '%s' (only --markdown)\n", argv[0]);
		return 2;
	}
	bpfrt_helpers_init();
	/* bpfrt's own kfunc, which embedders register with one call */
	if (bpfrt_nest_kfunc_register() < 0) {
		fprintf(stderr, "bpfrt features: %s\n", bpfrt_last_error());
		return 1;
	}
	if (md) {
		print_markdown();
		return 0;
	}
	printf("helpers (Linux id, name):\n");
	list_helpers(false, false);
	printf("kfuncs (id, name):\n");
	list_helpers(false, true);
	printf("map types (Linux id, name):\n");
	list_map_types(false);
	printf("program kinds:\n");
	list_kinds(false);
	return 0;
}
