/* .note.stapsdt parsing and x86-64 USDT argument specs.
 *
 * A site is one ELF note (owner "stapsdt", type 3) whose descriptor holds
 * three addresses (the probe's pc, the .stapsdt.base address the file
 * was linked with, the semaphore or 0) and three strings: provider, name
 * and the arguments, each "SIZE@OPERAND" with SIZE negative for signed
 * values and OPERAND one of GNU as's: $IMM, %REG, OFF(%REG) or (%REG).
 * A prelinked file moved .stapsdt.base: pc and semaphore move with it. */
#define _GNU_SOURCE
#include "usdt/usdt_spec.h"
#include "core/error.h"
#include "bpfrt/kprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(struct usdt_arg_spec) == 16, "usdt.bpf.h's struct __bpf_usdt_arg_spec");
_Static_assert(sizeof(struct usdt_spec) == 208, "usdt.bpf.h's struct __bpf_usdt_spec");

#define NT_STAPSDT 3

/* ---- argument specs ------------------------------------------------------- */

#define REG(field) ((int16_t)offsetof(struct bpfrt_pt_regs, field))

/* Every name of each x86-64 general register, by the pt_regs field that
 * holds it (a narrower name reads the low bytes, as the size says). */
static const struct { const char *names[4]; int16_t off; } regs[] = {
	{ { "rax", "eax", "ax", "al" }, REG(ax) },
	{ { "rbx", "ebx", "bx", "bl" }, REG(bx) },
	{ { "rcx", "ecx", "cx", "cl" }, REG(cx) },
	{ { "rdx", "edx", "dx", "dl" }, REG(dx) },
	{ { "rsi", "esi", "si", "sil" }, REG(si) },
	{ { "rdi", "edi", "di", "dil" }, REG(di) },
	{ { "rbp", "ebp", "bp", "bpl" }, REG(bp) },
	{ { "rsp", "esp", "sp", "spl" }, REG(sp) },
	{ { "r8", "r8d", "r8w", "r8b" }, REG(r8) },
	{ { "r9", "r9d", "r9w", "r9b" }, REG(r9) },
	{ { "r10", "r10d", "r10w", "r10b" }, REG(r10) },
	{ { "r11", "r11d", "r11w", "r11b" }, REG(r11) },
	{ { "r12", "r12d", "r12w", "r12b" }, REG(r12) },
	{ { "r13", "r13d", "r13w", "r13b" }, REG(r13) },
	{ { "r14", "r14d", "r14w", "r14b" }, REG(r14) },
	{ { "r15", "r15d", "r15w", "r15b" }, REG(r15) },
	{ { "rip", "eip", "ip", NULL }, REG(ip) },
};

static int reg_offset(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int k = 0; k < 4; k++)
			if (regs[i].names[k] && strlen(regs[i].names[k]) == len &&
			    !strncmp(regs[i].names[k], name, len))
				return regs[i].off;
	return -1;
}

/* "%NAME" at s: its pt_regs offset, *end past it; -1 if not a register. */
static int parse_reg(const char *s, const char **end)
{
	size_t len = 0;

	if (*s != '%')
		return -1;
	s++;
	while ((s[len] >= 'a' && s[len] <= 'z') || (s[len] >= '0' && s[len] <= '9'))
		len++;
	*end = s + len;
	return reg_offset(s, len);
}

static int parse_one(const char *arg, size_t len, const char *probe, int idx,
		     struct usdt_arg_spec *a)
{
	char buf[128], *p, *end;
	long size;
	int off;

	if (len >= sizeof(buf))
		return bpfrt_err(-EINVAL, "usdt %s: argument %d too long", probe, idx);
	memcpy(buf, arg, len);
	buf[len] = 0;
	errno = 0;
	size = strtol(buf, &end, 10);
	if (end == buf || *end != '@' || errno)
		return bpfrt_err(-EINVAL, "usdt %s: argument %d '%s': no SIZE@", probe, idx, buf);
	a->arg_signed = size < 0;
	if (size < 0)
		size = -size;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return bpfrt_err(-EINVAL, "usdt %s: argument %d '%s': size %ld (1, 2, 4 or 8)",
				 probe, idx, buf, size);
	a->arg_bitshift = (int8_t)(64 - 8 * size);
	p = end + 1;
	if (*p == '$') {                  /* $IMM */
		errno = 0;
		a->val_off = (uint64_t)strtoll(p + 1, &end, 0);
		if (end == p + 1 || *end || errno)
			goto bad;
		a->arg_type = USDT_ARG_CONST;
		return 0;
	}
	if (*p == '%') {                  /* %REG */
		const char *e;

		if ((off = parse_reg(p, &e)) < 0 || *e)
			goto bad;
		a->arg_type = USDT_ARG_REG;
		a->reg_off = (int16_t)off;
		return 0;
	}
	a->val_off = 0;                   /* [OFF](%REG) */
	if (*p != '(') {
		errno = 0;
		a->val_off = (uint64_t)strtoll(p, &end, 0);
		if (end == p || *end != '(' || errno)
			goto bad;
		p = end;
	}
	{
		const char *e;

		if ((off = parse_reg(p + 1, &e)) < 0 || e[0] != ')' || e[1])
			goto bad;
		/* %rip-relative operands name a symbol's address, which the
		 * probe's pt_regs cannot give (ip is the int3's): refused */
		if (off == REG(ip))
			goto bad;
	}
	a->arg_type = USDT_ARG_REG_DEREF;
	a->reg_off = (int16_t)off;
	return 0;
bad:
	return bpfrt_err(-EINVAL, "usdt %s: argument %d '%s': unsupported operand", probe, idx, buf);
}

int usdt_parse_args(const char *args, const char *probe, struct usdt_spec *spec)
{
	const char *s = args;
	int n = 0;

	memset(spec, 0, sizeof(*spec));
	for (;;) {
		size_t len;
		int err;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (n == USDT_MAX_ARGS)
			return bpfrt_err(-E2BIG, "usdt %s: more than %d arguments", probe,
					 USDT_MAX_ARGS);
		len = strcspn(s, " ");
		if ((err = parse_one(s, len, probe, n, &spec->args[n])))
			return err;
		n++;
		s += len;
	}
	spec->arg_cnt = (int16_t)n;
	return 0;
}

/* ---- notes ---------------------------------------------------------------- */

void usdt_sites_free(struct usdt_site *sites, int cnt)
{
	for (int i = 0; sites && i < cnt; i++) {
		free(sites[i].provider);
		free(sites[i].name);
		free(sites[i].args);
	}
	free(sites);
}

/* The three strings after the three addresses of a descriptor. */
static int split_desc(const char *d, size_t n, const char *strs[3])
{
	size_t pos = 24;

	for (int i = 0; i < 3; i++) {
		const char *z;

		if (pos >= n || !(z = memchr(d + pos, 0, n - pos)))
			return -1;
		strs[i] = d + pos;
		pos = (size_t)(z - d) + 1;
	}
	return 0;
}

static int read_notes(const char *path, Elf *elf, uint64_t base_addr, bool have_base,
		      const char *provider, const char *name, struct usdt_site **out)
{
	struct usdt_site *sites = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int cnt = 0, err = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return bpfrt_err(-EINVAL, "usdt: %s: bad ELF (%s)", path, elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *sname;
		size_t off = 0, noff, doff, nameoff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt") || !(data = elf_getdata(scn, NULL)))
			continue;
		while ((noff = gelf_getnote(data, off, &nh, &nameoff, &doff)) > 0) {
			const char *d = (const char *)data->d_buf + doff, *strs[3];
			uint64_t a[3];

			off = noff;
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + nameoff, "stapsdt", 8))
				continue;
			if (nh.n_descsz < 24 || split_desc(d, nh.n_descsz, strs)) {
				err = bpfrt_err(-EINVAL, "usdt: %s: a .note.stapsdt note at offset "
						"%zu is malformed", path, doff);
				goto fail;
			}
			if (strcmp(strs[0], provider) || strcmp(strs[1], name))
				continue;
			memcpy(a, d, sizeof(a));
			if (have_base && a[1]) {    /* prelink moved .stapsdt.base */
				a[0] += base_addr - a[1];
				if (a[2])
					a[2] += base_addr - a[1];
			}
			struct usdt_site *ns = realloc(sites, (cnt + 1) * sizeof(*sites));

			if (!ns) {
				err = bpfrt_err(-ENOMEM, "usdt: out of memory");
				goto fail;
			}
			sites = ns;
			sites[cnt] = (struct usdt_site){ .pc = a[0], .sema = a[2] };
			sites[cnt].provider = strdup(strs[0]);
			sites[cnt].name = strdup(strs[1]);
			sites[cnt].args = strdup(strs[2]);
			cnt++;
			if (!sites[cnt - 1].provider || !sites[cnt - 1].name || !sites[cnt - 1].args) {
				err = bpfrt_err(-ENOMEM, "usdt: out of memory");
				goto fail;
			}
		}
	}
	*out = sites;
	return cnt;
fail:
	usdt_sites_free(sites, cnt);
	return err;
}

int usdt_read_sites(const char *path, const char *provider, const char *name,
		    struct usdt_site **sites)
{
	uint64_t base_addr = 0;
	bool have_base = false;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;
	int fd, ret;

	*sites = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return bpfrt_err(-ENOTSUP, "usdt: libelf too old");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bpfrt_err(-errno, "usdt: %s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		ret = bpfrt_err(-EINVAL, "usdt: %s: not an ELF file", path);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(sname, ".stapsdt.base")) {
			base_addr = sh.sh_addr;
			have_base = true;
		}
	}
	ret = read_notes(path, elf, base_addr, have_base, provider, name, sites);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}
