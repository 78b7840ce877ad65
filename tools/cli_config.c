/* `bpfrt config [--markdown]`: the environment variables of the library
 * (src/engine/core/config.h), with the values in effect; --markdown prints
 * docs/CONFIG.md, which tests/test_config.sh keeps equal to it. */
#include "cli.h"
#include "core/config.h"

#include <stdio.h>
#include <string.h>

static void print_markdown(void)
{
	printf("# Configuration\n\n"
	       "Environment variables the library reads, all at once, the first time one is\n"
	       "needed (`src/engine/core/config.h`; this file is its table, made by `bpfrt\n"
	       "config --markdown > docs/CONFIG.md`). `bpfrt config` shows the values in effect.\n"
	       "A flag is off for `0`, on for any other non-empty value, and its default when\n"
	       "unset or empty; a size is bytes, with an optional `k`, `m`, `g` or `t` (powers\n"
	       "of 1024) and `b`; a malformed size is reported on stderr and ignored.\n\n"
	       "| Variable | Kind | Default | Meaning |\n"
	       "|---|---|---|---|\n");
	for (size_t i = 0; i < bpfrt_config_var_count; i++) {
		const struct bpfrt_config_var *v = &bpfrt_config_vars[i];

		printf("| `%s` | %s | %s | %s |\n", v->name, v->kind, v->def, v->meaning);
	}
}

int cli_config(int argc, char **argv)
{
	if (argc == 1 && !strcmp(argv[0], "--markdown")) {
		print_markdown();
		return 0;
	}
	if (argc) {
		fprintf(stderr, "bpfrt config: unknown argument '%s' (only --markdown)\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < bpfrt_config_var_count; i++) {
		const struct bpfrt_config_var *v = &bpfrt_config_vars[i];
		char now[96];

		bpfrt_config_value_text(i, now, sizeof(now));
		printf("%s=%s (%s, default %s)\n    %s\n", v->name, now, v->kind, v->def, v->meaning);
	}
	return 0;
}
