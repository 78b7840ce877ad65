/* Finding patchable host functions: for every module of the process (the
 * shared symbol table's, sym/symbols.h: the executable and each loaded
 * library), the records the compiler left in __patchable_function_entries
 * or __mcount_loc (section headers read with libelf from the module's
 * file, contents from memory, where the dynamic loader has relocated
 * them), matched against the module's function symbols. A function is
 * patchable when a record points at its entry (or up to 64 bytes before
 * it: the padding of -fpatchable-function-entry=N,M) and its entry is a
 * 5-byte nop. Libraries loaded later are scanned on the next lookup; a
 * library must not be unloaded while programs are attached to it. */
#define _GNU_SOURCE
#include "attach/trampoline.h"
#include "core/error.h"
#include "sym/symbols.h"

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

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t modules_scanned;                /* symbol-table module ids below are done */
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

/* name and module belong to the symbol table (never freed). */
static int add_func(const char *name, const struct bpfrt_sym_module *module, uintptr_t entry,
		    uint32_t pad)
{
	struct bpfrt_patchable_func *f;
	int dup;

	if (func_cnt == func_cap) {
		size_t cap = func_cap ? 2 * func_cap : 1024;
		struct bpfrt_patchable_func **grown = realloc(funcs, cap * sizeof(*funcs));

		if (!grown)
			return -ENOMEM;
		funcs = grown;
		func_cap = cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->name = name;
	f->module = module->path;
	f->mod = module;
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

/* The module's functions (in address order, so fentry.multi hands
 * text_poke its sites already sorted) that a record marks. */
static int scan_symbols(const struct bpfrt_sym_module *m, uintptr_t *recs[2], size_t cnt[2])
{
	/* Room for every function at once: one rehash instead of one per
	 * doubling. */
	if ((name_cnt + m->sym_cnt) * 2 > (name_mask ? name_mask + 1 : 0) &&
	    name_index_grow((name_cnt + m->sym_cnt) * 2))
		return -ENOMEM;
	for (size_t i = 0; i < m->sym_cnt; i++) {
		const struct bpfrt_sym *sym = &m->syms[i];
		uintptr_t entry = sym->addr;
		ssize_t p = last_at_or_before(recs[0], cnt[0], entry);
		ssize_t mc = last_at_or_before(recs[1], cnt[1], entry);
		bool mcount = mc >= 0 && recs[1][mc] == entry;
		uint32_t pad = 0;
		int err;

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
		if ((err = add_func(sym->name, m, entry, pad)))
			return err;
	}
	return 0;
}

/* Reads the module's records; modules without any have nothing to patch. */
static int scan_module(void *ctx, const struct bpfrt_sym_module *m)
{
	uintptr_t *recs[2] = { NULL, NULL };
	size_t rec_cnt[2] = { 0, 0 };
	int fd, err = 0;
	Elf *elf;

	if (m->id < modules_scanned)
		return 0;
	fd = open(m->executable ? "/proc/self/exe" : m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		modules_scanned = m->id + 1;
		return 0; /* vdso and friends: nothing to patch */
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		err = read_records(elf, m->base, recs, rec_cnt);
		if (!err && (rec_cnt[0] || rec_cnt[1])) {
			for (int k = 0; k < 2; k++)
				if (rec_cnt[k] && !addrs_sorted(recs[k], rec_cnt[k]))
					qsort(recs[k], rec_cnt[k], sizeof(uintptr_t), addr_cmp);
			err = scan_symbols(m, recs, rec_cnt);
		}
		elf_end(elf);
	}
	close(fd);
	free(recs[0]);
	free(recs[1]);
	if (!err)
		modules_scanned = m->id + 1;    /* a failed one is read again next time */
	return err;
}

int bpfrt_patchable_scan(void)
{
	int err;

	pthread_mutex_lock(&scan_lock);
	elf_version(EV_CURRENT);
	err = bpfrt_sym_foreach_module(scan_module, NULL);
	pthread_mutex_unlock(&scan_lock);
	if (err)
		return bpfrt_err(err, "patchable: scanning the loaded modules failed");
	return 0;
}

/* The scan only appends modules and indexes them, under scan_lock;
 * callers hold bpfrt_tramp_lock, which serialises every scan after the
 * first. */
const struct bpfrt_patchable_func *bpfrt_patchable_lookup(const char *name)
{
	const char *colon = strrchr(name, ':');
	int err = bpfrt_patchable_scan();

	if (err)
		return NULL;
	if (colon) {
		/* LIB:NAME: the symbol table picks the function, if patchable */
		const struct bpfrt_sym *sym;

		if (bpfrt_sym_lookup(name, &sym))
			return NULL;
		for (struct bpfrt_patchable_func *f = name_mask ? *name_slot(sym->name) : NULL; f;
		     f = f->same_name)
			if (f->entry == sym->addr)
				return f;
	} else if (name_mask && *name_slot(name)) {
		return *name_slot(name);
	}
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
