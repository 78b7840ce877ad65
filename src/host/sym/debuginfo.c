/* Host function shapes from debug info (see debuginfo.h).
 *
 * The register count follows the x86-64 SysV classification as far as the
 * trampoline needs it: its context is the six integer argument registers,
 * so an integer, enum or pointer argument takes one, a 16-byte integer two,
 * and a float none (it travels in an xmm register, which the trampoline
 * saves but does not show). What cannot be told from the types alone
 * (structs and unions by value, variadic functions, a struct returned
 * through a hidden pointer in rdi, a signature the compiler rewrote) is
 * refused rather than guessed: the caller then needs nr_args. */
#define _GNU_SOURCE
#include "sym/debuginfo.h"
#include "sym/symbols.h"
#include "core/error.h"

#include <bpf/btf.h>
#ifdef BPFRT_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#else
typedef struct Dwarf Dwarf;
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct func_index;

/* One module's debug info, opened on first use, kept (never closed: the
 * symbol table keeps its modules too, and attaches come back to them). */
struct dbg_module {
	const struct bpfrt_sym_module *m;
	Dwarf *dw;              /* NULL: none found */
	struct func_index *funcs; /* dw's functions by address, on first use */
	struct btf *btf;        /* NULL: no .BTF */
	struct dbg_module *next;
};

static pthread_mutex_t dbg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dbg_module *dbg_modules;

#ifdef BPFRT_HAVE_LIBDW
static Dwarf *dwarf_of_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dw;

	if (fd < 0)
		return NULL;
	dw = dwarf_begin(fd, DWARF_C_READ);     /* keeps fd open while it lives */
	if (!dw)
		close(fd);
	return dw;
}

/* The separate debug file of a stripped module, by its build id (where
 * Debian's -dbgsym packages put it). */
static Dwarf *dwarf_by_build_id(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const unsigned char *id = NULL;
	char dbg[4096];
	Elf *elf;
	ssize_t len;
	int n;

	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	len = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	if (len < 2) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	n = snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (ssize_t i = 1; i < len && n < (int)sizeof(dbg) - 8; i++)
		n += snprintf(dbg + n, sizeof(dbg) - (size_t)n, "%02x", id[i]);
	snprintf(dbg + n, sizeof(dbg) - (size_t)n, ".debug");
	elf_end(elf);
	close(fd);
	return dwarf_of_file(dbg);
}

#endif

static bool has_btf_section(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) &&
			    (name = elf_strptr(elf, shstrndx, sh.sh_name)))
				found = !strcmp(name, ".BTF");
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

static struct dbg_module *dbg_module_get(const struct bpfrt_sym_module *m)
{
	struct dbg_module *d;

	for (d = dbg_modules; d; d = d->next)
		if (d->m == m)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->m = m;
#ifdef BPFRT_HAVE_LIBDW
	elf_version(EV_CURRENT);
	d->dw = dwarf_of_file(m->path);
	if (!d->dw)
		d->dw = dwarf_by_build_id(m->path);
#endif
	/* asked only where there is a .BTF, as libbpf logs a miss */
	d->btf = has_btf_section(m->path) ? btf__parse_elf(m->path, NULL) : NULL;
	d->next = dbg_modules;
	dbg_modules = d;
	return d;
}

/* ---- DWARF ------------------------------------------------------------------ */
enum type_class { TC_VOID, TC_INT, TC_FLOAT, TC_AGGREGATE, TC_BAD };

#ifdef BPFRT_HAVE_LIBDW

/* Every function the DWARF describes by its entry address, built on the
 * module's first lookup (one walk over its units), so that attaching to
 * thousands of functions costs a binary search each. */
struct func_entry {
	Dwarf_Addr pc;
	Dwarf_Off die;          /* its DIE, read again for the answer */
};

struct func_index {
	struct func_entry *v;
	size_t cnt, cap;
	bool failed;            /* out of memory while building */
};

static int index_func(Dwarf_Die *die, void *arg)
{
	struct func_index *ix = arg;
	Dwarf_Addr pc;

	if (dwarf_entrypc(die, &pc) != 0 && dwarf_lowpc(die, &pc) != 0)
		return DWARF_CB_OK;
	if (ix->cnt == ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 256;
		struct func_entry *grown = realloc(ix->v, cap * sizeof(*grown));

		if (!grown) {
			ix->failed = true;
			return DWARF_CB_ABORT;
		}
		ix->v = grown;
		ix->cap = cap;
	}
	ix->v[ix->cnt++] = (struct func_entry){ pc, dwarf_dieoffset(die) };
	return DWARF_CB_OK;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct func_entry *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static struct func_index *dwarf_index(Dwarf *dw)
{
	struct func_index *ix = calloc(1, sizeof(*ix));
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;

	if (!ix)
		return NULL;
	while (!ix->failed &&
	       dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0)
		if (unit_type == DW_UT_compile || unit_type == DW_UT_partial)
			dwarf_getfuncs(&cudie, index_func, ix, 0);
	if (ix->failed) {
		free(ix->v);
		free(ix);
		return NULL;
	}
	qsort(ix->v, ix->cnt, sizeof(*ix->v), entry_cmp);
	return ix;
}

static bool dwarf_find_func(Dwarf *dw, const struct func_index *ix, Dwarf_Addr pc,
			    Dwarf_Die *out)
{
	size_t lo = 0, hi = ix->cnt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->cnt && ix->v[lo].pc == pc && dwarf_offdie(dw, ix->v[lo].die, out);
}

/* The declaration an out-of-line instance refers to (it has the whole
 * signature; the instance may leave unused parameters out). */
static Dwarf_Die *decl_of(Dwarf_Die *die, Dwarf_Die *buf)
{
	Dwarf_Attribute a;

	for (int depth = 0; depth < 8; depth++) {
		if (!dwarf_attr(die, DW_AT_abstract_origin, &a) &&
		    !dwarf_attr(die, DW_AT_specification, &a))
			return die;
		if (!dwarf_formref_die(&a, buf))
			return die;
		die = buf;
	}
	return die;
}

/* The class and size of die's DW_AT_type (typedefs and qualifiers peeled). */
static enum type_class dwarf_type_class(Dwarf_Die *die, Dwarf_Word *size)
{
	Dwarf_Attribute a, enc;
	Dwarf_Die t, peeled;
	Dwarf_Word e = 0;

	*size = 0;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a))
		return TC_VOID;
	if (!dwarf_formref_die(&a, &t) || dwarf_peel_type(&t, &peeled) != 0)
		return TC_BAD;
	if (dwarf_aggregate_size(&peeled, size) != 0)
		*size = 8;      /* pointers and enums without a byte size */
	switch (dwarf_tag(&peeled)) {
	case DW_TAG_base_type:
		if (dwarf_attr(&peeled, DW_AT_encoding, &enc))
			dwarf_formudata(&enc, &e);
		return e == DW_ATE_float || e == DW_ATE_complex_float ? TC_FLOAT : TC_INT;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type:
		*size = 8;
		return TC_INT;
	case DW_TAG_enumeration_type:
		return TC_INT;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		return TC_AGGREGATE;
	default:
		return TC_BAD;
	}
}

static int dwarf_proto(Dwarf_Die *fn, const char *name, const char *path,
		       struct bpfrt_func_proto *p)
{
	Dwarf_Attribute a;
	Dwarf_Word cc = 0, size;
	Dwarf_Die buf, child, *decl = decl_of(fn, &buf);
	int argno = 0;

	if (dwarf_attr_integrate(fn, DW_AT_calling_convention, &a) &&
	    dwarf_formudata(&a, &cc) == 0 && cc == DW_CC_nocall)
		return bpfrt_err(-EOPNOTSUPP, "%s: the compiler changed its calling convention "
				 "(DW_CC_nocall in the DWARF of %s): its arguments are not where "
				 "its type says", name, path);
	switch (dwarf_type_class(decl, &size)) {
	case TC_VOID:
		p->ret_size = 0;
		break;
	case TC_INT:
	case TC_FLOAT:
		p->ret_size = (uint32_t)size;
		p->ret_float = dwarf_type_class(decl, &size) == TC_FLOAT;
		break;
	case TC_AGGREGATE:
		if (size > 16)
			return bpfrt_err(-EOPNOTSUPP, "%s returns a %llu-byte struct through a hidden "
					 "pointer in rdi: give nr_args", name,
					 (unsigned long long)size);
		return bpfrt_err(-EOPNOTSUPP, "%s returns a struct by value: its registers depend "
				 "on its fields; give nr_args", name);
	default:
		return bpfrt_err(-EOPNOTSUPP, "%s: the DWARF of %s has a return type bpfrt does "
				 "not read", name, path);
	}
	if (dwarf_child(decl, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_unspecified_parameters)
			return bpfrt_err(-EOPNOTSUPP, "%s is variadic: give nr_args", name);
		if (tag != DW_TAG_formal_parameter)
			continue;
		argno++;
		switch (dwarf_type_class(&child, &size)) {
		case TC_INT:
			p->nr_args += size > 8 ? 2 : 1;
			break;
		case TC_FLOAT:
			break;
		case TC_AGGREGATE:
			return bpfrt_err(-EOPNOTSUPP, "%s: argument %d is a struct or union by value: "
					 "its registers depend on its fields; give nr_args", name, argno);
		default:
			return bpfrt_err(-EOPNOTSUPP, "%s: argument %d has a type bpfrt does not read "
					 "in the DWARF of %s", name, argno, path);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

#endif

/* ---- BTF -------------------------------------------------------------------- */

static enum type_class btf_type_class(const struct btf *btf, uint32_t id, uint32_t *size)
{
	const struct btf_type *t;
	int rid;

	*size = 0;
	if (!id)
		return TC_VOID;
	rid = btf__resolve_type(btf, id);
	t = rid < 0 ? NULL : btf__type_by_id(btf, (uint32_t)rid);
	if (!t)
		return TC_BAD;
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		*size = t->size;
		return TC_INT;
	case BTF_KIND_PTR:
		*size = 8;
		return TC_INT;
	case BTF_KIND_FLOAT:
		*size = t->size;
		return TC_FLOAT;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		*size = t->size;
		return TC_AGGREGATE;
	default:
		return TC_BAD;
	}
}

static int btf_proto(const struct btf *btf, const char *name, const char *path,
		     struct bpfrt_func_proto *p)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	const struct btf_type *fn = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	const struct btf_type *proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	const struct btf_param *params;
	uint32_t size;

	if (!proto || !btf_is_func_proto(proto))
		return -ENODATA;
	switch (btf_type_class(btf, proto->type, &size)) {
	case TC_VOID:
		break;
	case TC_INT:
	case TC_FLOAT:
		p->ret_size = size;
		p->ret_float = btf_type_class(btf, proto->type, &size) == TC_FLOAT;
		break;
	default:
		return bpfrt_err(-EOPNOTSUPP, "%s returns a struct by value (BTF of %s): give "
				 "nr_args", name, path);
	}
	params = btf_params(proto);
	for (uint16_t i = 0; i < btf_vlen(proto); i++) {
		if (!params[i].type)
			return bpfrt_err(-EOPNOTSUPP, "%s is variadic: give nr_args", name);
		switch (btf_type_class(btf, params[i].type, &size)) {
		case TC_INT:
			p->nr_args += size > 8 ? 2 : 1;
			break;
		case TC_FLOAT:
			break;
		default:
			return bpfrt_err(-EOPNOTSUPP, "%s: argument %u is a struct or union by value "
					 "(BTF of %s): give nr_args", name, i + 1u, path);
		}
	}
	return 0;
}

/* True if d's DWARF describes the function at pc (then *err is its answer). */
static bool dwarf_lookup(struct dbg_module *d, uintptr_t pc, const char *name,
			 struct bpfrt_func_proto *proto, int *err)
{
#ifdef BPFRT_HAVE_LIBDW
	Dwarf_Die die;

	if (d->dw && !d->funcs)
		d->funcs = dwarf_index(d->dw);
	if (d->dw && d->funcs && dwarf_find_func(d->dw, d->funcs, pc, &die)) {
		proto->source = "DWARF";
		*err = dwarf_proto(&die, name, d->m->path, proto);
		return true;
	}
#endif
	return false;
}

/* ---- the lookup ------------------------------------------------------------- */

const struct btf *bpfrt_module_btf(const struct bpfrt_sym_module *m)
{
	struct dbg_module *d;
	const struct btf *btf;

	pthread_mutex_lock(&dbg_lock);
	d = dbg_module_get(m);
	btf = d ? d->btf : NULL;
	pthread_mutex_unlock(&dbg_lock);
	return btf;
}

int bpfrt_func_proto_get(const struct bpfrt_sym_module *m, uintptr_t addr, const char *name,
			 struct bpfrt_func_proto *proto)
{
	const struct bpfrt_sym *sym;
	struct dbg_module *d;
	int err;

	memset(proto, 0, sizeof(*proto));
	if (!m) {
		err = bpfrt_sym_at(addr, &sym);
		if (err)
			return bpfrt_err(err, "%s: no symbol at %#lx to find its debug info by",
					 name, (unsigned long)addr);
		m = sym->module;
	}
	pthread_mutex_lock(&dbg_lock);
	d = dbg_module_get(m);
	if (!d) {
		err = bpfrt_err(-ENOMEM, "%s: out of memory reading debug info", name);
	} else if (dwarf_lookup(d, addr - m->base, name, proto, &err)) {
		/* err is the DWARF's answer */
	} else if (d->btf && (err = btf_proto(d->btf, name, m->path, proto)) != -ENODATA) {
		proto->source = "BTF";
	} else {
		err = bpfrt_err(-ENODATA, "%s: no DWARF or BTF in %s describes it, so its argument "
				"count is unknown: build it with -g or give bpfrt_attach_opts.nr_args",
				name, m->path);
	}
	pthread_mutex_unlock(&dbg_lock);
	if (!err && proto->nr_args > 6)
		err = bpfrt_err(-EOPNOTSUPP, "%s takes %u integer argument registers (%s): only "
				"six reach the trampoline", name, proto->nr_args, proto->source);
	return err;
}
