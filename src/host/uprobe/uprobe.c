/* uprobes: libbpf's uprobe/uretprobe targets resolved in this process's
 * own modules and placed as kprobes (attach/kprobe.c does the patching).
 *
 * A uprobe link wraps the kprobe link that implements it (inner), so one
 * object names the probe as the user wrote it for its whole life, also
 * while it is pending: a binary that is not loaded yet leaves inner NULL
 * and the link on the pending list, and bpfrt_uprobe_refresh() (the agent
 * calls it after every dlopen) places it once the binary appears. USDT
 * links waiting for their library are on a second list (waiters, see
 * uprobe.h) that the same refresh tries. Links and lists are changed
 * under uprobe_lock only, and uprobe_lock is taken before kprobe.c's
 * lock (and usdt.c's), never inside it. */
#define _GNU_SOURCE
#include "uprobe/uprobe.h"
#include "attach/kprobe.h"
#include "attach/link.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/prog.h"
#include "sym/symbols.h"
#include "usdt/usdt.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct uprobe_link {
	struct bpfrt_link link;
	struct bpfrt_link *inner;      /* the kprobe placed; NULL while pending */
	char *binary;                  /* NULL: any module (or an address) */
	char *func;                    /* NULL: offset is a file offset or an address */
	uint64_t offset;
	bool retprobe;
	enum bpfrt_kprobe_mode mode;
	int last_err;                  /* why the last placement failed (pending) */
	struct uprobe_link *next_pending;
};

static pthread_mutex_t uprobe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uprobe_link *pending_head;
static struct uprobe_waiter *waiters_head;
/* Set while this thread holds uprobe_lock: placing a probe may dlopen
 * (the kprobe engine's decoder), and the agent's dlopen calls
 * bpfrt_uprobe_refresh, which must then not wait for the lock it holds;
 * and a waiter's place() attaches and destroys uprobes itself. */
static __thread bool holding_lock;

static void lock(void)
{
	pthread_mutex_lock(&uprobe_lock);
	holding_lock = true;
}

static void unlock(void)
{
	holding_lock = false;
	pthread_mutex_unlock(&uprobe_lock);
}

/* The lock for attach and detach, which a waiter's place() calls with it
 * held: true if taken here (unlock_taken releases it then). */
static bool lock_unless_held(void)
{
	if (holding_lock)
		return false;
	lock();
	return true;
}

static void unlock_taken(bool taken)
{
	if (taken)
		unlock();
}

/* ---- targets --------------------------------------------------------------- */

static int parse_offset(const char *s, const char *target, uint64_t *off)
{
	char *end;

	errno = 0;
	*off = strtoull(s, &end, 0);
	if (!*s || *end || errno)
		return bpfrt_err(-EINVAL, "uprobe: bad offset or address in '%s'", target);
	return 0;
}

int bpfrt_uprobe_parse_target(const char *target, char *buf, size_t cap, const char **binary,
			      const char **func, uint64_t *offset)
{
	char *colon, *rest, *plus;

	*binary = *func = NULL;
	*offset = 0;
	if (!target || !*target)
		return bpfrt_err(-EINVAL, "uprobe: no target (uprobe/[BINARY:]FUNC[+OFF])");
	if (strlen(target) >= cap)
		return bpfrt_err(-EINVAL, "uprobe: target too long: %.64s...", target);
	strcpy(buf, target);
	colon = strchr(buf, ':');
	rest = buf;
	if (colon) {
		*colon = 0;
		rest = colon + 1;
		if (!*buf)
			return bpfrt_err(-EINVAL, "uprobe: empty binary in '%s'", target);
		*binary = buf;
	}
	if (!strncmp(rest, "0x", 2) || !strncmp(rest, "0X", 2))
		return parse_offset(rest, target, offset);
	plus = strrchr(rest, '+');
	if (plus) {
		*plus = 0;
		int err = parse_offset(plus + 1, target, offset);

		if (err)
			return err;
	}
	if (!*rest)
		return bpfrt_err(-EINVAL, "uprobe: no function in '%s'", target);
	*func = rest;
	return 0;
}

struct module_match {
	const char *spec;
	char spec_real[PATH_MAX];        /* spec resolved, for a path */
	const struct bpfrt_sym_module *found;
};

static int match_cb(void *ctx, const struct bpfrt_sym_module *m)
{
	struct module_match *mm = ctx;
	size_t len = strlen(mm->spec);
	char real[PATH_MAX];

	if (mm->spec[0] == '/') {
		if (!strcmp(m->path, mm->spec) || !strcmp(m->path, mm->spec_real) ||
		    (realpath(m->path, real) && !strcmp(real, mm->spec_real)))
			mm->found = m;
	} else if (!strcmp(m->name, mm->spec) ||
		   (!strncmp(m->name, mm->spec, len) && m->name[len] == '.')) {
		mm->found = m;
	}
	return mm->found ? 1 : 0;
}

/* The loaded module binary names: NULL and 0 if none (yet), -ENOENT for a
 * path naming no file, or a scan's error. */
static int find_module(const char *binary, const struct bpfrt_sym_module **m)
{
	struct module_match mm = { .spec = binary };
	int err;

	*m = NULL;
	if (binary[0] == '/' && !realpath(binary, mm.spec_real))
		return bpfrt_err(-ENOENT, "uprobe: %s: %s", binary, strerror(errno));
	err = bpfrt_sym_foreach_module(match_cb, &mm);
	if (err < 0)
		return err;
	*m = mm.found;
	return 0;
}

struct offset_ctx {
	const struct bpfrt_sym_module *m;
	uint64_t off;
	uintptr_t addr;
};

static int offset_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct offset_ctx *c = ctx;

	if (info->dlpi_addr != c->m->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && c->off >= ph->p_offset &&
		    c->off < ph->p_offset + ph->p_filesz &&
		    info->dlpi_addr + ph->p_vaddr <= c->m->hi &&
		    info->dlpi_addr + ph->p_vaddr + ph->p_memsz >= c->m->lo) {
			c->addr = info->dlpi_addr + ph->p_vaddr + (c->off - ph->p_offset);
			return 1;
		}
	}
	return 0;
}

/* A file offset in m (libbpf's BINARY:0xOFF, as Linux's uprobes take
 * them) to the address its segment is loaded at. */
static int file_offset_addr(const struct bpfrt_sym_module *m, uint64_t off, uintptr_t *addr)
{
	struct offset_ctx c = { .m = m, .off = off };

	dl_iterate_phdr(offset_cb, &c);
	if (!c.addr)
		return bpfrt_err(-EINVAL, "uprobe: file offset %#llx is in no loaded segment of %s",
				 (unsigned long long)off, m->path);
	*addr = c.addr;
	return 0;
}

/* Where ul's probe goes: 0 and *addr, 1 if its binary is not loaded (yet),
 * or -errno. */
static int resolve(const struct uprobe_link *ul, uintptr_t *addr)
{
	const struct bpfrt_sym_module *m = NULL;
	const struct bpfrt_sym *sym;
	int err;

	if (!ul->binary) {
		if (!ul->func) {
			*addr = (uintptr_t)ul->offset;
			return 0;
		}
		if ((err = bpfrt_sym_lookup(ul->func, &sym)))
			return err;
	} else {
		if ((err = find_module(ul->binary, &m)))
			return err;
		if (!m)
			return 1;
		if (!ul->func)
			return file_offset_addr(m, ul->offset, addr);
		if ((err = bpfrt_sym_lookup_in(m, ul->func, &sym)))
			return err;
	}
	if (sym->size && ul->offset >= sym->size)
		return bpfrt_err(-EINVAL, "uprobe: %s+%#llx is past the function's end (%zu bytes)",
				 ul->func, (unsigned long long)ul->offset, sym->size);
	*addr = sym->addr + ul->offset;
	return 0;
}

/* Places ul's kprobe if its binary is there. Under uprobe_lock. Returns
 * 0 (placed), 1 (still pending) or -errno. */
static int place_locked(struct uprobe_link *ul)
{
	struct bpfrt_kprobe_opts ko = {
		.sz = sizeof(ko), .cookie = ul->link.cookie, .retprobe = ul->retprobe,
		.mode = ul->mode,
	};
	uintptr_t addr = 0;
	int err = resolve(ul, &addr);

	if (err)
		return err;
	return bpfrt_kprobe_attach(ul->link.prog, NULL, addr, &ko, &ul->inner);
}

static void unlink_pending_locked(struct uprobe_link *ul)
{
	for (struct uprobe_link **p = &pending_head; *p; p = &(*p)->next_pending) {
		if (*p == ul) {
			*p = ul->next_pending;
			ul->next_pending = NULL;
			return;
		}
	}
}

/* ---- links ----------------------------------------------------------------- */

static int uprobe_detach(struct bpfrt_link *link)
{
	struct uprobe_link *ul = (struct uprobe_link *)link;
	struct bpfrt_link *inner;
	bool taken = lock_unless_held();

	unlink_pending_locked(ul);
	inner = ul->inner;
	ul->inner = NULL;
	unlock_taken(taken);
	/* the kprobe's detach waits until no thread runs the program */
	bpfrt_link_destroy(inner);
	return 0;
}

static void uprobe_dealloc(struct bpfrt_link *link)
{
	struct uprobe_link *ul = (struct uprobe_link *)link;

	bpfrt_link_release(link);
	free(ul->binary);
	free(ul->func);
	free(ul);
}

static void uprobe_show(const struct bpfrt_link *link, FILE *out)
{
	const struct uprobe_link *ul = (const struct uprobe_link *)link;

	if (ul->inner)
		fprintf(out, "  addr %#lx  %s", (unsigned long)bpfrt_kprobe_addr(ul->inner),
			bpfrt_kprobe_optimized(ul->inner) ? "jmp" : "int3");
	else
		fprintf(out, "  pending");
}

static const struct bpfrt_link_ops uprobe_ops = {
	.kind = "uprobe", .detach = uprobe_detach, .dealloc = uprobe_dealloc, .show = uprobe_show,
};
static const struct bpfrt_link_ops uretprobe_ops = {
	.kind = "uretprobe", .detach = uprobe_detach, .dealloc = uprobe_dealloc, .show = uprobe_show,
};

static int attach(struct bpfrt_prog *prog, const char *binary, const char *func, uint64_t offset,
		  const char *target, uint64_t cookie, bool retprobe, enum bpfrt_kprobe_mode mode,
		  struct bpfrt_link **linkp)
{
	struct uprobe_link *ul;
	int err;

	if (retprobe && offset && func)
		return bpfrt_err(-EINVAL, "uretprobe %s: a uretprobe goes at a function's entry "
				 "(no +offset)", target);
	if (!func && !offset)
		return bpfrt_err(-EINVAL, "uprobe %s: no function, offset or address", target);
	ul = calloc(1, sizeof(*ul));
	if (!ul)
		return bpfrt_err(-ENOMEM, "uprobe: out of memory");
	ul->binary = binary ? strdup(binary) : NULL;
	ul->func = func ? strdup(func) : NULL;
	ul->offset = offset;
	ul->retprobe = retprobe;
	ul->mode = mode;
	if ((binary && !ul->binary) || (func && !ul->func)) {
		err = bpfrt_err(-ENOMEM, "uprobe: out of memory");
		goto fail;
	}
	err = bpfrt_link_init(&ul->link, retprobe ? &uretprobe_ops : &uprobe_ops, prog, target,
			      cookie);
	if (err)
		goto fail;
	/* refused at once, as Linux does, for a program of another context */
	err = bpfrt_prog_check_kind(prog, retprobe ? BPFRT_PROG_KRETPROBE : BPFRT_PROG_KPROBE,
				    target);
	if (err)
		goto fail_link;
	bool taken = lock_unless_held();

	err = place_locked(ul);
	if (err == 1) {
		ul->next_pending = pending_head;
		pending_head = ul;
		err = 0;
	}
	unlock_taken(taken);
	if (err)
		goto fail_link;
	bpfrt_link_publish(&ul->link);
	*linkp = &ul->link;
	return 0;

fail_link:
	bpfrt_link_release(&ul->link);
fail:
	free(ul->binary);
	free(ul->func);
	free(ul);
	return err;
}

int bpfrt_uprobe_attach(struct bpfrt_prog *prog, const char *binary, size_t func_offset,
			const struct bpfrt_uprobe_opts *opts, struct bpfrt_link **link)
{
	const char *func = OPTS_GET(opts, func_name, NULL);
	char target[512];

	bpfrt_err_clear();
	if (!prog || !link)
		return bpfrt_err(-EINVAL, "uprobe_attach: NULL argument");
	*link = NULL;
	if (!OPTS_VALID(opts, bpfrt_uprobe_opts))
		return -EINVAL;
	if (!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE))
		return bpfrt_err(-EINVAL, "uprobe_attach: %s is not loaded", prog->name);
	if (binary && !*binary)
		return bpfrt_err(-EINVAL, "uprobe_attach: empty binary name");
	if (func && !*func)
		func = NULL;
	int n = snprintf(target, sizeof(target), "%s%s", binary ? binary : "", binary ? ":" : "");

	if (n >= (int)sizeof(target) - 32 || (func && strlen(func) >= sizeof(target) - 32 - n))
		return bpfrt_err(-EINVAL, "uprobe_attach: binary or function name too long");
	if (func && func_offset)
		snprintf(target + n, sizeof(target) - n, "%s+%#llx", func,
			 (unsigned long long)func_offset);
	else if (func)
		snprintf(target + n, sizeof(target) - n, "%s", func);
	else
		snprintf(target + n, sizeof(target) - n, "%#llx", (unsigned long long)func_offset);
	return attach(prog, binary, func, func_offset, target, OPTS_GET(opts, cookie, 0),
		      OPTS_GET(opts, retprobe, false), OPTS_GET(opts, mode, BPFRT_KPROBE_AUTO), link);
}

/* The program's section says which of the two it is (one kind, as in
 * libbpf: BPF_PROG_TYPE_KPROBE for both). */
static bool sec_is_retprobe(const struct bpfrt_prog *prog)
{
	return prog->sec_name && !strncmp(prog->sec_name, "uretprobe", 9);
}

int bpfrt_uprobe_attach_prog(struct bpfrt_prog *prog, enum bpfrt_prog_kind kind,
			     const char *target, uint64_t cookie, uint32_t nr_args,
			     struct bpfrt_link **link)
{
	const char *binary, *func;
	uint64_t offset;
	char buf[512];
	int err;

	/* SEC("usdt/...") is a uprobe per site, placed by the usdt module */
	if (prog->sec_name && !strncmp(prog->sec_name, "usdt", 4))
		return bpfrt_usdt_attach_prog(prog, target, cookie, link);
	err = bpfrt_uprobe_parse_target(target, buf, sizeof(buf), &binary, &func, &offset);
	if (err)
		return err;
	return attach(prog, binary, func, offset, target, cookie, sec_is_retprobe(prog),
		      BPFRT_KPROBE_AUTO, link);
}

int bpfrt_uprobe_refresh(void)
{
	int placed = 0, first_err = 0;

	if (holding_lock)   /* a dlopen from inside an attach: it places its own */
		return 0;
	lock();
	for (struct uprobe_link **p = &pending_head; *p;) {
		struct uprobe_link *ul = *p;
		int err = place_locked(ul);

		if (err == 0) {
			*p = ul->next_pending;
			ul->next_pending = NULL;
			placed++;
			continue;
		}
		if (err < 0) {
			ul->last_err = err;
			if (!first_err)
				first_err = err;
		}
		p = &ul->next_pending;
	}
	for (struct uprobe_waiter **p = &waiters_head; *p;) {
		struct uprobe_waiter *w = *p;
		int err = w->place(w);

		if (err == 0) {
			*p = w->next;
			w->next = NULL;
			w->queued = false;
			placed++;
			continue;
		}
		if (err < 0) {
			w->last_err = err;
			if (!first_err)
				first_err = err;
		}
		p = &w->next;
	}
	unlock();
	return first_err ? first_err : placed;
}

int uprobe_wait(struct uprobe_waiter *w)
{
	int err;

	lock();
	err = w->place(w);
	if (err == 1) {
		w->next = waiters_head;
		waiters_head = w;
		w->queued = true;
		err = 0;
	}
	unlock();
	return err;
}

void uprobe_unwait(struct uprobe_waiter *w)
{
	lock();
	for (struct uprobe_waiter **p = &waiters_head; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	w->next = NULL;
	w->queued = false;
	unlock();
}

bool uprobe_waiting(const struct uprobe_waiter *w)
{
	bool queued;

	lock();
	queued = w->queued;
	unlock();
	return queued;
}

bool bpfrt_uprobe_pending(const struct bpfrt_link *link)
{
	const struct uprobe_waiter *w = link ? usdt_link_waiter(link) : NULL;
	bool pending;

	if (w)
		return uprobe_waiting(w);
	if (!link || (link->ops != &uprobe_ops && link->ops != &uretprobe_ops))
		return false;
	lock();
	pending = !((const struct uprobe_link *)link)->inner;
	unlock();
	return pending;
}
