/* The host symbol table (see symbols.h for what it holds and promises).
 *
 * Layout: an append-only list of modules; each module owns one array of
 * its function symbols sorted by address and copies of the string tables
 * its names point into, all allocated when the module is read and never
 * freed (a library unloaded and loaded again is a new module). Lookups by
 * address find the module by its segment span, then binary-search its
 * array. Lookups by name go through one open-addressing index over every
 * live module (a string hash: sorting tens of thousands of names that
 * share long prefixes costs more than hashing them), rebuilt whenever the
 * set of modules changes; each slot heads a chain of the symbols of that
 * name in lookup order (module order, global first, address). */
#define _GNU_SOURCE
#include "sym/symbols.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct module {
	struct bpfrt_sym_module pub;
	bool live;                      /* still loaded (as of the last scan) */
	char *strs[2];                  /* copies of the string tables */
};

static pthread_rwlock_t sym_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct module **modules;
static size_t module_cnt;
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;

struct name_slot {
	struct bpfrt_sym *head, *tail;
};

static struct name_slot *name_slots;
static size_t name_mask;                /* slots - 1; no table while name_slots is NULL */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static struct name_slot *name_slot(const char *name)
{
	size_t i = (size_t)name_hash(name) & name_mask;

	while (name_slots[i].head && strcmp(name_slots[i].head->name, name))
		i = (i + 1) & name_mask;
	return &name_slots[i];
}

static void index_add(struct bpfrt_sym *s)
{
	struct name_slot *slot = name_slot(s->name);

	s->same_name = NULL;
	if (slot->tail)
		slot->tail->same_name = s;
	else
		slot->head = s;
	slot->tail = s;
}

/* Indexes every live module's symbols, in lookup order. */
static int index_rebuild(void)
{
	size_t total = 0, size = 4096;
	struct name_slot *slots;

	for (size_t i = 0; i < module_cnt; i++)
		if (modules[i]->live)
			total += modules[i]->pub.sym_cnt;
	while (size < 2 * total)
		size *= 2;
	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	free(name_slots);
	name_slots = slots;
	name_mask = size - 1;
	for (size_t i = 0; i < module_cnt; i++) {
		struct module *m = modules[i];
		struct bpfrt_sym *syms = (struct bpfrt_sym *)m->pub.syms;

		if (!m->live)
			continue;
		for (int global = 1; global >= 0; global--)
			for (size_t k = 0; k < m->pub.sym_cnt; k++)
				if (syms[k].global == global)
					index_add(&syms[k]);
	}
	return 0;
}

/* ---- reading one module ------------------------------------------------ */

struct sym_buf {
	struct bpfrt_sym *v;
	size_t cnt, cap;
};

static int sym_push(struct sym_buf *b, uintptr_t addr, size_t size, const char *name, bool global)
{
	if (b->cnt == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		struct bpfrt_sym *grown = realloc(b->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		b->v = grown;
		b->cap = cap;
	}
	b->v[b->cnt++] = (struct bpfrt_sym){ .addr = addr, .size = size, .name = name,
					     .global = global };
	return 0;
}

/* Appends the functions of one symbol section, their names pointing into
 * a copy of its string table (*strs_out). Native 64-bit symbols are read
 * in place (gelf_getsym copies each one) and their names bounds-checked
 * here instead of by elf_strptr. */
static int read_symbols(Elf *elf, Elf_Scn *scn, uintptr_t base, struct sym_buf *b,
			char **strs_out)
{
	GElf_Shdr sh;
	Elf_Data *data, *strs;
	char *copy;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return 0;
	strs = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
	if (!strs || !strs->d_buf || !strs->d_size)
		return 0;
	copy = malloc(strs->d_size + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, strs->d_buf, strs->d_size);
	copy[strs->d_size] = '\0';      /* a table not ending in NUL stays bounded */
	*strs_out = copy;

	size_t n = sh.sh_size / sh.sh_entsize;
	bool direct = gelf_getclass(elf) == ELFCLASS64 && sh.sh_entsize == sizeof(Elf64_Sym) &&
		      data->d_size >= n * sizeof(Elf64_Sym) && data->d_type == ELF_T_SYM;

	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		int err;

		if (direct)
			sym = ((const Elf64_Sym *)data->d_buf)[i];
		else if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value || sym.st_name >= strs->d_size || !copy[sym.st_name])
			continue;
		err = sym_push(b, base + sym.st_value, sym.st_size, copy + sym.st_name,
			       GELF_ST_BIND(sym.st_info) != STB_LOCAL);
		if (err)
			return err;
	}
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct bpfrt_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;      /* sized ones first */
	if (x->global != y->global)
		return x->global ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sorts by address and drops the copies (.symtab and .dynsym both list
 * an exported function). */
static void sort_unique(struct sym_buf *b)
{
	size_t out = 0;

	qsort(b->v, b->cnt, sizeof(*b->v), sym_cmp);
	for (size_t i = 0; i < b->cnt; i++) {
		if (out && b->v[out - 1].addr == b->v[i].addr &&
		    !strcmp(b->v[out - 1].name, b->v[i].name))
			continue;
		b->v[out++] = b->v[i];
	}
	b->cnt = out;
}

static int module_read(struct module *m, const char *file)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	struct sym_buf b = { 0 };
	int fd = open(file, O_RDONLY | O_CLOEXEC), err = 0;
	Elf *elf;

	if (fd < 0)
		return 0;       /* the vdso, deleted files: nothing to name */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return 0;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	if (symtab)
		err = read_symbols(elf, symtab, m->pub.base, &b, &m->strs[0]);
	if (!err && dynsym)
		err = read_symbols(elf, dynsym, m->pub.base, &b, &m->strs[1]);
	elf_end(elf);
	close(fd);
	if (err) {
		free(b.v);
		return err;
	}
	sort_unique(&b);
	for (size_t i = 0; i < b.cnt; i++)
		b.v[i].module = &m->pub;
	m->pub.syms = b.v;
	m->pub.sym_cnt = b.cnt;
	return 0;
}

/* ---- scanning the process ------------------------------------------------ */

struct loaded {
	char *path;             /* NULL: the executable */
	uintptr_t base, lo, hi;
};

struct loaded_list {
	struct loaded *v;
	size_t cnt;
	bool exe_seen;
	int err;
};

static int collect_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct loaded_list *l = ctx;
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : NULL;
	struct loaded *grown, *o;

	if (!name) {
		/* the first unnamed object is the executable */
		if (l->exe_seen)
			return 0;
		l->exe_seen = true;
	}
	grown = realloc(l->v, (l->cnt + 1) * sizeof(*grown));
	if (!grown || (name && !(name = strdup(name)))) {
		l->v = grown ? grown : l->v;
		l->err = -ENOMEM;
		return 1;
	}
	l->v = grown;
	o = &l->v[l->cnt++];
	*o = (struct loaded){ .path = (char *)name, .base = info->dlpi_addr, .lo = UINTPTR_MAX };
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < o->lo)
			o->lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > o->hi)
			o->hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (o->lo > o->hi)
		o->lo = o->hi = 0;
	return 0;
}

static int counts_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	unsigned long long *c = ctx;

	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static struct module *module_new(const struct loaded *o, uint32_t id)
{
	char exe[PATH_MAX];
	const char *path = o->path;
	struct module *m;
	size_t len;

	if (!path) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		path = n > 0 ? exe : "/proc/self/exe";
	}
	len = strlen(path) + 1;
	m = calloc(1, sizeof(*m) + len);
	if (!m)
		return NULL;
	memcpy(m + 1, path, len);
	m->pub.path = (const char *)(m + 1);
	m->pub.name = base_name(m->pub.path);
	m->pub.base = o->base;
	m->pub.lo = o->lo;
	m->pub.hi = o->hi;
	m->pub.executable = !o->path;
	m->pub.id = id;
	m->live = true;
	return m;
}

static bool same_object(const struct module *m, const struct loaded *o)
{
	if (m->pub.base != o->base || m->pub.lo != o->lo || m->pub.executable != !o->path)
		return false;
	return !o->path || !strcmp(m->pub.path, o->path);
}

/* Under the write lock: reads the new objects, retires the unloaded. */
static int rescan(void)
{
	struct loaded_list l = { 0 };
	bool changed = false;
	int err = 0;

	dl_iterate_phdr(collect_cb, &l);
	err = l.err;
	for (size_t i = 0; i < module_cnt; i++)
		modules[i]->live = false;
	for (size_t k = 0; k < l.cnt && !err; k++) {
		struct module *found = NULL, **grown;

		for (size_t i = 0; i < module_cnt && !found; i++)
			if (!modules[i]->live && same_object(modules[i], &l.v[k]))
				found = modules[i];
		if (found) {
			found->live = true;
			continue;
		}
		grown = realloc(modules, (module_cnt + 1) * sizeof(*modules));
		if (!grown || !(found = module_new(&l.v[k], (uint32_t)module_cnt))) {
			if (grown)
				modules = grown;
			err = -ENOMEM;
			break;
		}
		modules = grown;
		err = module_read(found, l.v[k].path ? l.v[k].path : "/proc/self/exe");
		if (err) {
			free(found->strs[0]);
			free(found->strs[1]);
			free(found);
			break;
		}
		modules[module_cnt++] = found;
		changed = true;
	}
	if (err) {
		/* keep what was known: retired modules answer until a scan works */
		for (size_t i = 0; i < module_cnt; i++)
			modules[i]->live = true;
	}
	for (size_t k = 0; k < l.cnt; k++)
		free(l.v[k].path);
	free(l.v);
	for (size_t i = 0; i < module_cnt && !changed; i++)
		changed = !modules[i]->live;
	if (!err && (changed || !name_slots))
		err = index_rebuild();
	return err;
}

static int refresh_locked_read(void)
{
	unsigned long long c[2] = { 0, 0 };
	int err = 0;

	dl_iterate_phdr(counts_cb, c);
	pthread_rwlock_rdlock(&sym_lock);
	if (c[0] == seen_adds && c[1] == seen_subs)
		return 0;       /* read lock held */
	pthread_rwlock_unlock(&sym_lock);
	pthread_rwlock_wrlock(&sym_lock);
	if (c[0] != seen_adds || c[1] != seen_subs) {
		elf_version(EV_CURRENT);
		err = rescan();
		if (!err) {
			seen_adds = c[0];
			seen_subs = c[1];
		}
	}
	pthread_rwlock_unlock(&sym_lock);
	if (err)
		return bpfrt_err(err, "symbols: cannot read the symbol tables of the loaded objects");
	pthread_rwlock_rdlock(&sym_lock);
	return 0;
}

int bpfrt_sym_refresh(void)
{
	int err = refresh_locked_read();

	if (!err)
		pthread_rwlock_unlock(&sym_lock);
	return err;
}

/* ---- lookups ---------------------------------------------------------------- */

static bool module_matches(const struct bpfrt_sym_module *m, const char *lib, size_t len)
{
	if ((strlen(m->path) == len && !strncmp(m->path, lib, len)) ||
	    (strlen(m->name) == len && !strncmp(m->name, lib, len)))
		return true;
	return !strncmp(m->name, lib, len) && m->name[len] == '.';
}

static const struct bpfrt_sym *find_name(const char *name, const char *lib, size_t lib_len,
					 const struct bpfrt_sym_module *only)
{
	struct name_slot *slot;

	if (!name_slots)
		return NULL;
	slot = name_slot(name);
	for (const struct bpfrt_sym *s = slot->head; s; s = s->same_name) {
		if (only && s->module != only)
			continue;
		if (lib && !module_matches(s->module, lib, lib_len))
			continue;
		return s;
	}
	return NULL;
}

static bool lib_loaded(const char *lib, size_t len)
{
	for (size_t i = 0; i < module_cnt; i++)
		if (modules[i]->live && module_matches(&modules[i]->pub, lib, len))
			return true;
	return false;
}

int bpfrt_sym_lookup(const char *name, const struct bpfrt_sym **sym)
{
	const char *colon = name ? strrchr(name, ':') : NULL;
	const char *fn = colon ? colon + 1 : name;
	size_t lib_len = colon ? (size_t)(colon - name) : 0;
	int err;

	*sym = NULL;
	if (!fn || !*fn || (colon && !lib_len))
		return bpfrt_err(-EINVAL, "symbols: bad function name '%s' (NAME or LIB:NAME)",
				 name ? name : "(null)");
	if ((err = refresh_locked_read()))
		return err;
	*sym = find_name(fn, colon ? name : NULL, lib_len, NULL);
	if (*sym) {
		pthread_rwlock_unlock(&sym_lock);
		return 0;
	}
	bool have_lib = colon && lib_loaded(name, lib_len);

	pthread_rwlock_unlock(&sym_lock);
	if (!colon)
		return bpfrt_err(-ENOENT, "no function %s in the executable or its loaded libraries",
				 fn);
	if (!have_lib)
		return bpfrt_err(-ENOENT, "no function %s: no loaded object is %.*s", fn,
				 (int)lib_len, name);
	return bpfrt_err(-ENOENT, "no function %s in %.*s", fn, (int)lib_len, name);
}

int bpfrt_sym_lookup_in(const struct bpfrt_sym_module *m, const char *name,
			const struct bpfrt_sym **sym)
{
	int err;

	*sym = NULL;
	if (!m || !name || !*name)
		return bpfrt_err(-EINVAL, "symbols: no module or name");
	if ((err = refresh_locked_read()))
		return err;
	*sym = find_name(name, NULL, 0, m);
	pthread_rwlock_unlock(&sym_lock);
	if (!*sym)
		return bpfrt_err(-ENOENT, "no function %s in %s", name, m->path);
	return 0;
}

int bpfrt_sym_at(uintptr_t addr, const struct bpfrt_sym **sym)
{
	const struct bpfrt_sym_module *m = NULL;
	int err;

	*sym = NULL;
	if ((err = refresh_locked_read()))
		return err;
	for (size_t i = 0; i < module_cnt && !m; i++)
		if (modules[i]->live && addr >= modules[i]->pub.lo && addr < modules[i]->pub.hi)
			m = &modules[i]->pub;
	if (m) {
		const struct bpfrt_sym *v = m->syms;
		size_t lo = 0, hi = m->sym_cnt;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid].addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* the last symbol at or below addr; aliases and nested
		 * local labels sit just below: look back a few */
		for (size_t i = lo; i-- > 0 && lo - i <= 16;) {
			if (v[i].size && addr - v[i].addr < v[i].size) {
				/* the first (global, then by name) of its aliases */
				while (i > 0 && v[i - 1].addr == v[i].addr && v[i - 1].size == v[i].size)
					i--;
				*sym = &v[i];
				break;
			}
		}
	}
	pthread_rwlock_unlock(&sym_lock);
	if (!*sym)
		return bpfrt_err(-ENOENT, "no function contains %#lx%s%s", (unsigned long)addr,
				 m ? " in " : " (not in a loaded object)", m ? m->path : "");
	return 0;
}

int bpfrt_sym_foreach_module(int (*fn)(void *ctx, const struct bpfrt_sym_module *m), void *ctx)
{
	int err = refresh_locked_read();

	if (err)
		return err;
	for (size_t i = 0; i < module_cnt && !err; i++)
		if (modules[i]->live)
			err = fn(ctx, &modules[i]->pub);
	pthread_rwlock_unlock(&sym_lock);
	return err;
}
