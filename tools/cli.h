/* Subcommands of the bpfrt CLI that live in their own files. */
#ifndef BPFRT_CLI_H
#define BPFRT_CLI_H

/* bpfrt prog list|run|verify ... */
int cli_prog(int argc, char **argv);
/* bpfrt map dump OBJ NAME [--after PROG] */
int cli_map(int argc, char **argv);
/* bpfrt links [PID...] (cli_links.c) */
int cli_links(int argc, char **argv);
/* bpfrt gen skeleton OBJ [name NAME] (cli_gen.c) */
int cli_gen(int argc, char **argv);
/* bpfrt config [--markdown] (cli_config.c) */
int cli_config(int argc, char **argv);
/* bpfrt features [--markdown] (cli_features.c) */
int cli_features(int argc, char **argv);
/* bpfrt kinds [--markdown] (cli_kinds.c) */
int cli_kinds(int argc, char **argv);

/* bpfrt trace [OPTIONS] OBJ -- CMD ARGS... (cli_trace.c) */
int cli_trace(int argc, char **argv);
/* bpfrt map dump|update -p PID ... (cli_trace_live.c) */
int cli_map_live(int argc, char **argv);

#endif
