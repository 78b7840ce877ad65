/* USDT probe sites and their argument specs (usdt_spec.c): what the
 * .note.stapsdt notes of an ELF file say, and the records libbpf's
 * usdt.bpf.h reads from the __bpf_usdt_specs map. */
#ifndef BPFRT_USDT_SPEC_H
#define BPFRT_USDT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* usdt.bpf.h's struct __bpf_usdt_arg_spec and struct __bpf_usdt_spec,
 * field for field (BPF and x86-64 lay them out alike): the value of
 * the __bpf_usdt_specs array map. */
enum usdt_arg_type { USDT_ARG_CONST, USDT_ARG_REG, USDT_ARG_REG_DEREF };

struct usdt_arg_spec {
	uint64_t val_off;      /* the constant, or the offset from the register */
	int32_t arg_type;      /* enum usdt_arg_type */
	int16_t reg_off;       /* offsetof(struct pt_regs, reg) */
	bool arg_signed;
	int8_t arg_bitshift;   /* 64 - 8 * size: bits cleared or sign-extended */
};

#define USDT_MAX_ARGS 12   /* BPF_USDT_MAX_ARG_CNT */
struct usdt_spec {
	struct usdt_arg_spec args[USDT_MAX_ARGS];
	uint64_t usdt_cookie;
	int16_t arg_cnt;
};

/* One probe site of a file: addresses are the file's virtual addresses
 * (prelink's base adjustment applied), sema 0 if it has none. */
struct usdt_site {
	uint64_t pc, sema;
	char *provider, *name, *args;
};

/* Every site of path's .note.stapsdt that is provider:name. Returns the
 * count (0: the file has none) and *sites (free with usdt_sites_free),
 * or -errno with a message naming the file or the note. */
int usdt_read_sites(const char *path, const char *provider, const char *name,
		    struct usdt_site **sites);
void usdt_sites_free(struct usdt_site *sites, int cnt);

/* Parses a site's argument string ("-4@%eax 8@-8(%rbp) -4@$5") into
 * spec. Returns 0, or -EINVAL with a message naming probe (the
 * "PROVIDER:NAME" the caller gives) and the argument. */
int usdt_parse_args(const char *args, const char *probe, struct usdt_spec *spec);

#endif
