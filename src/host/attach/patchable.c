/* Finding patchable host functions: for every module of the process
 * (dl_iterate_phdr: the executable and each loaded library), the records
 * the compiler left in __patchable_function_entries or __mcount_loc (read
 * from memory, where the dynamic loader has relocated them) and the
 * function symbols (.symtab, else .dynsym, read with libelf from the file
 * /proc/self/maps names; the executable through /proc/self/exe). A function
 * is patchable when a record points at its entry (or up to 64 bytes before
 * it: the padding of -fpatchable-function-entry=N,M) and its entry is a
 * 5-byte nop. Libraries loaded later are scanned on the next lookup; a
 * library must not be unloaded while programs are attached to it. */
#define _GNU_SOURCE
#include "attach/trampoline.h"
#include "core/error.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_PAD 64

struct module {
	char *path;
	uintptr_t base;
};

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *modules;
static size_t module_cnt;
static unsigned long long scan_adds = ~0ull;   /* dl_iterate_phdr generation seen */
static struct bpfrt_patchable_func **funcs;    /* in discovery order; each entry
						* allocated once, never moved */
static size_t func_cnt, func_cap;

/* Name index: open addressing on a string hash, load <= 1/2, one slot per
 * name (the function of that name with the lowest entry; the others hang
 * off it through same_name). A hash rather than a sort by name: sorting
 * 32,768 names that share long prefixes was a third of the first attach. */
static struct bpfrt_patchable_func **name_slots;
static size_t name_mask;                        /* slots - 1; 0: no table */
static size_t name_cnt;

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static struct bpfrt_patchable_func **name_slot(const char *name)
{
	size_t i = (size_t)name_hash(name) & name_mask;

	while (name_slots[i] && strcmp(name_slots[i]->name, name))
		i = (i + 1) & name_mask;
	return &name_slots[i];
}

/* Grows the index to at least min_size slots (a power of two). */
static int name_index_grow(size_t min_size)
{
	size_t size = name_mask ? 2 * (name_mask + 1) : 4096;

	while (size < min_size)
		size *= 2;
	struct bpfrt_patchable_func **old = name_slots;
	size_t old_size = name_mask ? name_mask + 1 : 0;

	name_slots = calloc(size, sizeof(*name_slots));
	if (!name_slots) {
		name_slots = old;
		return -ENOMEM;
	}
	name_mask = size - 1;
	for (size_t i = 0; i < old_size; i++)
		if (old[i])
			*name_slot(old[i]->name) = old[i];
	free(old);
	return 0;
}

/* Indexes f by name. Returns 1 if an identical function (same name and
 * entry: a symbol table can list one twice) is already known. */
static int name_index_add(struct bpfrt_patchable_func *f)
{
	struct bpfrt_patchable_func **slot, *g;

	if ((name_cnt + 1) * 2 > (name_mask ? name_mask + 1 : 0) && name_index_grow(0))
		return -ENOMEM;
	slot = name_slot(f->name);
	for (g = *slot; g; g = g->same_name)
		if (g->entry == f->entry)
			return 1;
	if (!*slot) {
		*slot = f;
		name_cnt++;
	} else if (f->entry < (*slot)->entry) {
		f->same_name = *slot;   /* the lowest entry answers lookups */
		*slot = f;
	} else {
		f->same_name = (*slot)->same_name;
		(*slot)->same_name = f;
	}
	return 0;
}

static bool module_known(const char *path, uintptr_t base)
{
	for (size_t i = 0; i < module_cnt; i++)
		if (modules[i].base == base && !strcmp(modules[i].path, path))
			return true;
	return false;
}

static int addr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Collects the relocated records of the sections that hold them:
 * recs[0] from __patchable_function_entries (where each function's nops
 * start: entry - M), recs[1] from __mcount_loc (gcc's entry nop5). */
static int read_records(Elf *elf, uintptr_t base, uintptr_t *recs[2], size_t cnt[2])
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		int k;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, "__patchable_function_entries"))
			k = 0;
		else if (!strcmp(name, "__mcount_loc"))
			k = 1;
		else
			continue;
		size_t n = sh.sh_size / sizeof(uintptr_t);
		uintptr_t *grown = realloc(recs[k], (cnt[k] + n) * sizeof(uintptr_t));

		if (!grown)
			return -ENOMEM;
		recs[k] = grown;
		memcpy(recs[k] + cnt[k], (const void *)(base + sh.sh_addr), n * sizeof(uintptr_t));
		cnt[k] += n;
	}
	return 0;
}

static bool addrs_sorted(const uintptr_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (a[i - 1] > a[i])
			return false;
	return true;
}

/* Index of the last record <= addr, or -1. */
static ssize_t last_at_or_before(const uintptr_t *recs, size_t cnt, uintptr_t addr)
{
	size_t lo = 0, hi = cnt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (recs[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

static bool is_nop5(const uint8_t *p)
{
	return p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x44 && p[3] == 0x00;
}

static bool is_nops1(const uint8_t *p)
{
	return p[0] == 0x90 && p[1] == 0x90 && p[2] == 0x90 && p[3] == 0x90 && p[4] == 0x90;
}

static int add_func(const char *name, const char *module, uintptr_t entry, uint32_t pad)
{
	struct bpfrt_patchable_func *f;

	if (func_cnt == func_cap) {
		size_t cap = func_cap ? 2 * func_cap : 1024;
		struct bpfrt_patchable_func **grown = realloc(funcs, cap * sizeof(*funcs));

		if (!grown)
			return -ENOMEM;
		funcs = grown;
		func_cap = cap;
	}
	/* One allocation for the function and its name. */
	size_t len = strlen(name) + 1;
	int dup;

	f = calloc(1, sizeof(*f) + len);
	if (!f)
		return -ENOMEM;
	memcpy(f + 1, name, len);
	f->name = (const char *)(f + 1);
	f->module = module;
	f->entry = entry;
	f->pad = pad;
	f->nops1 = is_nops1((const uint8_t *)entry);
	dup = name_index_add(f);
	if (dup) {
		free(f);
		return dup < 0 ? dup : 0;
	}
	funcs[func_cnt++] = f;
	return 0;
}

/* A matched symbol; bucket ranks its record by address. */
struct cand {
	size_t bucket;
	const char *name;
	uintptr_t entry;
	uint32_t pad;
};

/* Adds the module's functions in address order (a counting sort on the
 * records' ranks, since symbol tables are in hash order), so fentry.multi
 * hands text_poke its sites already sorted. Frees cands. */
static int add_in_address_order(struct cand *cands, size_t n, size_t buckets,
				const char *module)
{
	size_t *start = calloc(buckets + 1, sizeof(*start));
	struct cand **order = malloc((n ? n : 1) * sizeof(*order));
	int err = 0;

	if (!start || !order) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		start[cands[i].bucket + 1]++;
	for (size_t b = 0; b < buckets; b++)
		start[b + 1] += start[b];
	for (size_t i = 0; i < n; i++)
		order[start[cands[i].bucket]++] = &cands[i];
	for (size_t i = 0; i < n && !err; i++)
		err = add_func(order[i]->name, module, order[i]->entry, order[i]->pad);
out:
	free(start);
	free(order);
	free(cands);
	return err;
}

static int scan_symbols(Elf *elf, uintptr_t base, const char *module,
			uintptr_t *recs[2], size_t cnt[2])
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	struct cand *cands = NULL;
	size_t cand_cnt = 0, cand_cap = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	scn = symtab ? symtab : dynsym;
	if (!scn)
		return 0;
	GElf_Shdr sh;
	Elf_Data *data = elf_getdata(scn, NULL);

	if (!gelf_getshdr(scn, &sh) || !data || !sh.sh_entsize)
		return 0;
	size_t n = sh.sh_size / sh.sh_entsize;
	/* Native 64-bit symbols are read in place (gelf_getsym copies each
	 * one); the string table is bounds-checked here instead of by
	 * elf_strptr. */
	Elf_Data *strs = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
	bool direct = gelf_getclass(elf) == ELFCLASS64 && sh.sh_entsize == sizeof(Elf64_Sym) &&
		      data->d_size >= n * sizeof(Elf64_Sym) && strs && strs->d_buf &&
		      data->d_type == ELF_T_SYM;

	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (direct) {
			sym = ((const Elf64_Sym *)data->d_buf)[i];
		} else if (!gelf_getsym(data, (int)i, &sym)) {
			continue;
		}
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		if (direct)
			name = sym.st_name < strs->d_size &&
			       memchr((const char *)strs->d_buf + sym.st_name, 0,
				      strs->d_size - sym.st_name) ?
			       (const char *)strs->d_buf + sym.st_name : NULL;
		else
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		uintptr_t entry = base + sym.st_value;
		ssize_t p = last_at_or_before(recs[0], cnt[0], entry);
		ssize_t m = last_at_or_before(recs[1], cnt[1], entry);
		bool mcount = m >= 0 && recs[1][m] == entry;
		uint32_t pad = 0;

		/* The function's own nops start at most MAX_PAD before it, and
		 * everything from there to the entry is still 1-byte nops (so
		 * a record of the function before is never taken for ours). */
		if (p >= 0 && entry - recs[0][p] <= MAX_PAD) {
			uint32_t len = (uint32_t)(entry - recs[0][p]);

			pad = len;
			for (uint32_t k = 0; k < len; k++)
				if (((const uint8_t *)recs[0][p])[k] != 0x90)
					pad = UINT32_MAX;
		} else if (!mcount) {
			continue;
		}
		if (pad == UINT32_MAX) {
			if (!mcount)
				continue;
			pad = 0;
		}
		if (!is_nop5((const uint8_t *)entry) && !is_nops1((const uint8_t *)entry))
			continue;
		if (cand_cnt == cand_cap) {
			size_t cap = cand_cap ? 2 * cand_cap : 1024;
			struct cand *grown = realloc(cands, cap * sizeof(*cands));

			if (!grown) {
				free(cands);
				return -ENOMEM;
			}
			cands = grown;
			cand_cap = cap;
		}
		/* bucket: the record's rank in address order */
		cands[cand_cnt++] = (struct cand){
			.bucket = mcount ? cnt[0] + (size_t)m : (size_t)p,
			.name = name, .entry = entry, .pad = pad,
		};
	}
	/* Room for them all at once: one rehash instead of one per doubling. */
	if ((name_cnt + cand_cnt) * 2 > (name_mask ? name_mask + 1 : 0) &&
	    name_index_grow((name_cnt + cand_cnt) * 2)) {
		free(cands);
		return -ENOMEM;
	}
	return add_in_address_order(cands, cand_cnt, cnt[0] + cnt[1], module);
}

static int scan_module(const char *path, uintptr_t base)
{
	uintptr_t *recs[2] = { NULL, NULL };
	size_t rec_cnt[2] = { 0, 0 };
	struct module *grown;
	int fd, err = 0;
	Elf *elf;

	grown = realloc(modules, (module_cnt + 1) * sizeof(*modules));
	if (!grown)
		return -ENOMEM;
	modules = grown;
	modules[module_cnt].path = strdup(path);
	modules[module_cnt].base = base;
	if (!modules[module_cnt].path)
		return -ENOMEM;
	module_cnt++;

	fd = open(*path ? path : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* vdso and friends: nothing to patch */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		err = read_records(elf, base, recs, rec_cnt);
		if (!err && (rec_cnt[0] || rec_cnt[1])) {
			for (int k = 0; k < 2; k++)
				if (rec_cnt[k] && !addrs_sorted(recs[k], rec_cnt[k]))
					qsort(recs[k], rec_cnt[k], sizeof(uintptr_t), addr_cmp);
			err = scan_symbols(elf, base, modules[module_cnt - 1].path, recs, rec_cnt);
		}
		elf_end(elf);
	}
	close(fd);
	free(recs[0]);
	free(recs[1]);
	return err;
}

struct phdr_walk {
	int err;
	bool added;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct phdr_walk *w = ctx;
	const char *path = info->dlpi_name ? info->dlpi_name : "";

	if (module_known(path, info->dlpi_addr))
		return 0;
	w->err = scan_module(path, info->dlpi_addr);
	w->added = true;
	return w->err;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	*(unsigned long long *)ctx = info->dlpi_adds;
	return 1;
}

int bpfrt_patchable_scan(void)
{
	unsigned long long adds = 0;
	struct phdr_walk w = { 0 };

	dl_iterate_phdr(adds_cb, &adds);
	pthread_mutex_lock(&scan_lock);
	if (adds != scan_adds) {
		elf_version(EV_CURRENT);
		dl_iterate_phdr(phdr_cb, &w);
		if (!w.err)
			scan_adds = adds;
	}
	pthread_mutex_unlock(&scan_lock);
	if (w.err)
		return bpfrt_err(w.err, "patchable: scanning the loaded modules failed");
	return 0;
}

/* The scan only appends modules and indexes them, under scan_lock;
 * callers hold bpfrt_tramp_lock, which serialises every scan after the
 * first. */
const struct bpfrt_patchable_func *bpfrt_patchable_lookup(const char *name)
{
	int err = bpfrt_patchable_scan();

	if (err)
		return NULL;
	if (name_mask && *name_slot(name))
		return *name_slot(name);
	bpfrt_err(-ENOENT, "no patchable function %s (build it with the flags of mk/bpfrt-host.mk)",
		  name);
	return NULL;
}

/* The literal start of a glob (up to its first special character). A glob
 * that is that prefix and one final '*' matches by the prefix alone. */
static size_t glob_prefix(const char *glob, bool *prefix_only)
{
	size_t n = strcspn(glob, "*?[\\");

	*prefix_only = glob[n] == '*' && !glob[n + 1];
	return n;
}

/* Calls fn in discovery order (module by module, symbol table order). */
int bpfrt_patchable_foreach(const char *glob,
			    int (*fn)(void *ctx, const struct bpfrt_patchable_func *f),
			    void *ctx)
{
	int err = bpfrt_patchable_scan(), n = 0;
	bool prefix_only;
	size_t plen = glob_prefix(glob, &prefix_only);

	if (err)
		return err;
	for (size_t i = 0; i < func_cnt; i++) {
		const char *name = funcs[i]->name;

		if (strncmp(name, glob, plen))
			continue;
		if (!prefix_only && fnmatch(glob, name, 0))
			continue;
		err = fn(ctx, funcs[i]);
		if (err < 0)
			return err;
		n++;
	}
	return n;
}

size_t bpfrt_patchable_count(void)
{
	bpfrt_patchable_scan();
	return func_cnt;
}
