/* `bpfrt kinds [--markdown]`: the program kind table
 * (src/engine/core/prog_kind.c): each kind's SEC() names, its context,
 * and whether bpfrt loads, verifies, runs and attaches it. --markdown
 * prints docs/PROGRAM_KINDS.md, which tests/test_kinds_doc.sh keeps equal
 * to it. */
#include "cli.h"
#include "core/prog_kind.h"

#include <stdio.h>
#include <string.h>

/* "name", "name/TARGET" or "name[/TARGET]", with the name's flags */
static void print_sec(const struct bpfrt_sec_def *def, bool markdown)
{
	const char *q = markdown ? "`" : "";

	printf("%s%s%s%s", q, def->name,
	       def->syntax == BPFRT_SEC_TARGET ? "/TARGET" :
	       def->syntax == BPFRT_SEC_TARGET_OPT ? "[/TARGET]" : "", q);
	if (def->flags & BPFRT_SEC_SLEEPABLE)
		printf(" (sleepable)");
	if (def->flags & BPFRT_SEC_RETPROBE)
		printf(" (on return)");
	if (def->flags & BPFRT_SEC_SESSION)
		printf(" (session)");
	if (def->flags & BPFRT_SEC_XDP_FRAGS)
		printf(" (frags)");
}

static const char *verifies(const struct bpfrt_prog_kind_desc *d)
{
	if (d->load_refused)
		return "no";
	return d->ctx.rule ? "yes (the kernel's field rules)" : "yes";
}

static const char *runs(const struct bpfrt_prog_kind_desc *d)
{
	if (!d->info.runs)
		return "no (a kernel's context)";
	return d->info.attachable ? "yes" : "yes (test runs, bpfrt_prog_run)";
}

static void print_markdown(void)
{
	printf("# Program kinds\n\n"
	       "The kinds of program bpfrt knows, with the `SEC()` names libbpf gives them (a\n"
	       "leading `?` on any of them: opened, not loaded unless asked, as libbpf's\n"
	       "autoload), the context `r1` points to, and what bpfrt does with each. This file\n"
	       "is the kind table (`src/engine/core/prog_kind.c`), printed by `bpfrt kinds\n"
	       "--markdown > docs/PROGRAM_KINDS.md`; `tests/test_kinds_doc.sh` fails when the two\n"
	       "differ. Kinds whose context only a kernel builds load and verify with the\n"
	       "kernel's field rules for that context (`src/engine/core/ctx_rules.c`; fields that\n"
	       "load kernel object pointers are refused, but `__sk_buff->sk`: a socket or NULL to\n"
	       "the verifier, always NULL here); running or attaching them fails with\n"
	       "`-EOPNOTSUPP`, naming the kind. Sleepable (`.s`) names change nothing here:\n"
	       "every program runs where it may block.\n\n"
	       "| Kind | SEC() names | Context | Loads | Verifies | Runs | Attaches |\n"
	       "|---|---|---|---|---|---|---|\n");
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);

		printf("| `%s` | ", d->short_name);
		if (!d->secs || !d->secs->name)
			printf("(raw instructions only)");
		for (const struct bpfrt_sec_def *def = d->secs; def && def->name; def++) {
			if (def != d->secs)
				printf(", ");
			print_sec(def, true);
		}
		printf(" | %s | %s | %s | %s | %s |\n", d->info.ctx_type,
		       d->load_refused ? "no" : "yes", verifies(d), runs(d),
		       d->info.attachable ? "yes" : "no");
	}
	printf("\n");
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);

		if (d->load_refused)
			printf("`%s` is refused at load: %s.\n", d->short_name, d->load_refused);
	}
}

int cli_kinds(int argc, char **argv)
{
	if (argc == 1 && !strcmp(argv[0], "--markdown")) {
		print_markdown();
		return 0;
	}
	if (argc) {
		fprintf(stderr, "bpfrt kinds: unknown argument '%s' (only --markdown)\n", argv[0]);
		return 2;
	}
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);

		printf("%-16s loads %-3s verifies %-3s runs %-3s attaches %-3s  %s\n",
		       d->short_name, d->load_refused ? "no" : "yes",
		       d->load_refused ? "no" : "yes", d->info.runs ? "yes" : "no",
		       d->info.attachable ? "yes" : "no", d->info.ctx_type);
		if (!d->secs || !d->secs->name)
			continue;
		printf("    ");
		for (const struct bpfrt_sec_def *def = d->secs; def && def->name; def++) {
			if (def != d->secs)
				printf(", ");
			print_sec(def, false);
		}
		printf("\n");
	}
	return 0;
}
