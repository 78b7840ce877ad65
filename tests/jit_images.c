/* Placement-independent digests of machine code (jit_images.h). */
#define _GNU_SOURCE
#include "jit_images.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* capstone through dlopen: every test links this file, and none but the
 * image checks needs the library. */
static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	csh h;
	bool ok;
} cs;

static void cs_load(void)
{
	void *lib = dlopen("libcapstone.so.4", RTLD_NOW);

	if (!lib)
		lib = dlopen("libcapstone.so", RTLD_NOW);
	if (!lib)
		return;
	cs.open = (cs_err (*)(cs_arch, cs_mode, csh *))dlsym(lib, "cs_open");
	cs.option = (cs_err (*)(csh, cs_opt_type, size_t))dlsym(lib, "cs_option");
	cs.disasm = (size_t (*)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **))
		dlsym(lib, "cs_disasm");
	cs.free = (void (*)(cs_insn *, size_t))dlsym(lib, "cs_free");
	if (!cs.open || !cs.option || !cs.disasm || !cs.free ||
	    cs.open(CS_ARCH_X86, CS_MODE_64, &cs.h) != CS_ERR_OK)
		return;
	cs.option(cs.h, CS_OPT_DETAIL, CS_OPT_ON);
	cs.ok = true;
}

struct obj_range_ctx {
	uintptr_t addr;
	bool found;
};

static int obj_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj_range_ctx *c = arg;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && c->addr >= lo && c->addr < lo + ph->p_memsz) {
			c->found = true;
			return 1;
		}
	}
	return 0;
}

/* Inside a loaded object (its text, data or bss)? */
static bool in_object(uintptr_t addr)
{
	struct obj_range_ctx c = { .addr = addr };

	dl_iterate_phdr(obj_range_cb, &c);
	return c.found;
}

/* The process's mappings, read once per digest: a pointer into one (heap,
 * a program's helper table, a map) moves from run to run. */
static struct range {
	uintptr_t lo, hi;
} maps[4096];
static size_t map_cnt;

static void maps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];

	map_cnt = 0;
	while (f && fgets(line, sizeof(line), f) && map_cnt < sizeof(maps) / sizeof(maps[0]))
		/* not reservations of 1 TiB and more (sanitizer shadows) */
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo < (1ul << 40))
			maps[map_cnt++] = (struct range){ lo, hi };
	if (f)
		fclose(f);
}

static bool in_mapping(uintptr_t v)
{
	for (size_t i = 0; i < map_cnt; i++)
		if (v >= maps[i].lo && v < maps[i].hi)
			return true;
	return false;
}

static void name_addr(char *buf, size_t len, uintptr_t v, uintptr_t at, size_t code_len)
{
	if (v >= at && v < at + code_len)
		snprintf(buf, len, "+%#" PRIxPTR, v - at);
	else if (in_object(v))
		snprintf(buf, len, "obj");
	else if (in_mapping(v))
		snprintf(buf, len, "mem");
	else
		snprintf(buf, len, "%#" PRIxPTR, v);
}

/* The executable's TLS symbols: offset in its TLS block, size, name. */
static struct tls_sym {
	uint64_t off, size;
	char *name;
} *tls_syms;
static size_t tls_sym_cnt;
static uintptr_t tls_block;     /* this thread's block of the executable */

static int tls_block_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	tls_block = (uintptr_t)info->dlpi_tls_data;
	return 1; /* the first object is the executable */
}

static void tls_load(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;

	dl_iterate_phdr(tls_block_cb, NULL);
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			struct tls_sym *n;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS)
				continue;
			n = realloc(tls_syms, (tls_sym_cnt + 1) * sizeof(*n));
			if (!n)
				break;
			tls_syms = n;
			tls_syms[tls_sym_cnt++] = (struct tls_sym){
				sym.st_value, sym.st_size,
				strdup(elf_strptr(e, sh.sh_link, sym.st_name)),
			};
		}
	}
	elf_end(e);
	close(fd);
}

/* fs:[disp] as "SYMBOL+OFF", or the raw displacement. */
static void name_tls(char *buf, size_t len, int64_t disp)
{
	uintptr_t addr = (uintptr_t)__builtin_thread_pointer() + (uintptr_t)disp;

	for (size_t i = 0; tls_block && i < tls_sym_cnt; i++) {
		uint64_t off = addr - tls_block;

		if (addr >= tls_block && off >= tls_syms[i].off &&
		    off < tls_syms[i].off + (tls_syms[i].size ? tls_syms[i].size : 1)) {
			snprintf(buf, len, "%s+%" PRIu64, tls_syms[i].name ? tls_syms[i].name : "?",
				 off - tls_syms[i].off);
			return;
		}
	}
	snprintf(buf, len, "%#" PRIx64, (uint64_t)disp);
}

static bool is_rel_branch(const cs_insn *in)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == CS_GRP_BRANCH_RELATIVE)
			return true;
	return false;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* One instruction: its bytes with the masked fields as "..", then what
 * they point at. */
static uint64_t note_insn(uint64_t h, const cs_insn *in, uintptr_t at, size_t code_len,
			  FILE *out)
{
	const cs_x86 *x = &in->detail->x86;
	bool mask[16] = { false };
	char line[256], what[160] = "", name[64];
	size_t n = 0;

	if (is_rel_branch(in) && x->encoding.imm_offset) {
		for (int i = 0; i < x->encoding.imm_size; i++)
			mask[x->encoding.imm_offset + i] = true;
		name_addr(name, sizeof(name), (uintptr_t)x->operands[0].imm, at, code_len);
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " ->%s", name);
	} else if (x->encoding.imm_offset && x->encoding.imm_size == 8) {
		uint64_t v;

		memcpy(&v, in->bytes + x->encoding.imm_offset, 8);
		name_addr(name, sizeof(name), (uintptr_t)v, at, code_len);
		for (int i = 0; i < 8; i++)
			mask[x->encoding.imm_offset + i] = true;
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " imm=%s", name);
	}
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && op->mem.segment == X86_REG_FS &&
		    op->mem.base == X86_REG_INVALID && x->encoding.disp_offset) {
			for (int k = 0; k < x->encoding.disp_size; k++)
				mask[x->encoding.disp_offset + k] = true;
			name_tls(name, sizeof(name), op->mem.disp);
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " fs=%s", name);
			continue;
		}
		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP || !x->encoding.disp_offset)
			continue;
		for (int k = 0; k < x->encoding.disp_size; k++)
			mask[x->encoding.disp_offset + k] = true;
		name_addr(name, sizeof(name), (uintptr_t)(in->address + in->size + op->mem.disp), at,
			  code_len);
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " rip=%s", name);
	}
	for (uint16_t i = 0; i < in->size && n + 3 < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, mask[i] ? ".." : "%02x",
				      in->bytes[i]);
	snprintf(line + n, sizeof(line) - n, "%s\n", what);
	/* the text shows absolute addresses: listings only, not the hash */
	if (out)
		fprintf(out, "  %4" PRIx64 ": %.*s  %s %s\n", in->address - at,
			(int)strlen(line) - 1, line, in->mnemonic, in->op_str);
	return fnv(h, line);
}

uint64_t jit_images_digest(const uint8_t *code, size_t len, uintptr_t at, FILE *out,
			   size_t *insns)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT, tls_once = PTHREAD_ONCE_INIT;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t off = 0, cnt = 0;

	pthread_once(&once, cs_load);
	pthread_once(&tls_once, tls_load);
	if (insns)
		*insns = 0;
	if (!cs.ok)
		return 0;
	maps_load();
	while (off < len) {
		cs_insn *in;
		size_t got = cs.disasm(cs.h, code + off, len - off, at + off, 0, &in);
		size_t used = 0;

		for (size_t i = 0; i < got; i++) {
			h = note_insn(h, &in[i], at, len, out);
			used += in[i].size;
		}
		if (got)
			cs.free(in, got);
		cnt += got;
		off += used;
		if (off < len) {
			/* not an instruction (data such as a stub's slot): the byte */
			char line[16];

			snprintf(line, sizeof(line), "%02x  .byte\n", code[off]);
			if (out)
				fprintf(out, "  %4zx: %s", off, line);
			h = fnv(h, line);
			off++;
			cnt++;
		}
	}
	if (insns)
		*insns = cnt;
	return h;
}

bool jit_images_enabled(void)
{
	const char *path = getenv("BPFRT_JIT_IMAGES");

	return path && *path;
}

void jit_images_line(FILE *out, const char *label, const uint8_t *code, size_t len,
		     uintptr_t at)
{
	size_t insns;
	uint64_t h = jit_images_digest(code, len, at, NULL, &insns);

	fprintf(out, "%s %zu %zu %016" PRIx64 "\n", label, len, insns, h);
}

void jit_images_note(const char *label, const uint8_t *code, size_t len, uintptr_t at)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const char *path = getenv("BPFRT_JIT_IMAGES");
	const char *list = getenv("BPFRT_JIT_IMAGES_LIST");
	bool with_list = list && !strcmp(list, "1");
	char *text = NULL;
	size_t text_len = 0, insns;
	FILE *mem = NULL, *f;
	uint64_t h;

	if (!path || !*path)
		return;
	if (with_list)
		mem = open_memstream(&text, &text_len);
	h = jit_images_digest(code, len, at, mem, &insns);
	if (mem)
		fclose(mem);
	pthread_mutex_lock(&lock);
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%s %zu %zu %016" PRIx64 "\n", label, len, insns, h);
		if (text)
			fputs(text, f);
		fclose(f);
	}
	pthread_mutex_unlock(&lock);
	free(text);
}
