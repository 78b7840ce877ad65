/* USDT probes (bpfrt/usdt.h): libbpf's usdt attach for this process.
 *
 * Attaching reads the .note.stapsdt sites of the loaded module (the
 * executable or a library) that are PROVIDER:NAME, gives each site a
 * spec id (a slot of the object's __bpf_usdt_specs map, which usdt.bpf.h
 * reads), writes its parsed argument spec and the user's usdt cookie
 * there, records ip -> spec id in __bpf_usdt_ip_to_spec_id (the path of
 * kernels without BPF cookies), places a uprobe at the site through the
 * uprobe module with the spec id as its BPF cookie, and then raises the
 * site's semaphore, so guarded sites start computing their arguments
 * only once a program runs there. Detach undoes it in reverse order.
 *
 * A named binary that is not loaded yet leaves the link waiting on the
 * uprobe module's list (uprobe.h's waiter): bpfrt_uprobe_refresh(), which
 * the agent calls after every dlopen, places its sites and raises the
 * library's semaphores once the library is there, before the caller of
 * dlopen runs any of its code (a probe in the library's constructors is
 * missed: they run inside dlopen).
 *
 * Spec ids are per specs map: a bitmap per map in use, under usdt_lock;
 * an id is reused only after its site's probe is gone. */
#define _GNU_SOURCE
#include "bpfrt/usdt.h"
#include "bpfrt/attach.h"
#include "bpfrt/uprobe.h"
#include "bpfrt/map.h"
#include "bpfrt/object.h"
#include "usdt/usdt.h"
#include "usdt/usdt_spec.h"
#include "uprobe/uprobe.h"
#include "attach/link.h"
#include "core/error.h"
#include "core/opts.h"
#include "core/prog.h"
#include "sym/symbols.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPECS_MAP "__bpf_usdt_specs"
#define IP_MAP "__bpf_usdt_ip_to_spec_id"

struct usdt_probe {
	struct bpfrt_link *inner;   /* the uprobe at the site */
	uintptr_t ip;
	int spec_id;                /* -1: none taken */
	uint16_t *sema;             /* NULL: no semaphore (or not raised) */
};

struct usdt_link {
	struct bpfrt_link link;
	struct bpfrt_map *specs, *ips;
	char *binary;               /* as given; NULL: the first module with the probe */
	char *binary_real;          /* a path's real path; NULL for a name */
	char *provider, *name;
	uint64_t usdt_cookie;
	struct uprobe_waiter wait;  /* placement; queued while the binary is not loaded */
	/* written by usdt_place under the uprobe lock, read after unwait */
	int cnt;
	struct usdt_probe *probes;
};

/* ---- spec ids --------------------------------------------------------------- */

struct id_pool {
	const struct bpfrt_map *map;
	uint32_t cap, used;
	struct id_pool *next;
	uint8_t bits[];
};

static pthread_mutex_t usdt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct id_pool *pools;

static int id_take(struct bpfrt_map *map, const char *probe)
{
	uint32_t cap = bpfrt_map_max_entries(map);
	struct id_pool *p;
	int id = -1;

	pthread_mutex_lock(&usdt_lock);
	for (p = pools; p && p->map != map; p = p->next)
		;
	if (!p && (p = calloc(1, sizeof(*p) + (cap + 7) / 8))) {
		p->map = map;
		p->cap = cap;
		p->next = pools;
		pools = p;
	}
	for (uint32_t i = 0; p && i < p->cap; i++) {
		if (!(p->bits[i / 8] & (1u << (i % 8)))) {
			p->bits[i / 8] |= (uint8_t)(1u << (i % 8));
			p->used++;
			id = (int)i;
			break;
		}
	}
	pthread_mutex_unlock(&usdt_lock);
	if (id < 0)
		return bpfrt_err(p ? -E2BIG : -ENOMEM, "usdt %s: %s", probe,
				 p ? "all " SPECS_MAP " slots are in use (BPF_USDT_MAX_SPEC_CNT)" :
				     "out of memory");
	return id;
}

static void id_put(const struct bpfrt_map *map, int id)
{
	pthread_mutex_lock(&usdt_lock);
	for (struct id_pool **pp = &pools; *pp; pp = &(*pp)->next) {
		struct id_pool *p = *pp;

		if (p->map != map)
			continue;
		p->bits[id / 8] &= (uint8_t)~(1u << (id % 8));
		if (!--p->used) {   /* the map may be freed next: forget it */
			*pp = p->next;
			free(p);
		}
		break;
	}
	pthread_mutex_unlock(&usdt_lock);
}

/* ---- modules ---------------------------------------------------------------- */

struct module_pick {
	const char *spec;             /* binary as given; NULL: every module */
	const char *real;             /* spec resolved, for a path */
	struct { char *path; uintptr_t base; } *mods;
	int cnt;
};

static int pick_cb(void *ctx, const struct bpfrt_sym_module *m)
{
	struct module_pick *mp = ctx;
	char real[PATH_MAX];
	bool match = !mp->spec;

	if (mp->spec && mp->spec[0] == '/')
		match = !strcmp(m->path, mp->spec) || !strcmp(m->path, mp->real) ||
			(realpath(m->path, real) && !strcmp(real, mp->real));
	else if (mp->spec) {
		size_t len = strlen(mp->spec);

		match = !strcmp(m->name, mp->spec) ||
			(!strncmp(m->name, mp->spec, len) && m->name[len] == '.');
	}
	if (!match || !m->path[0])
		return 0;
	void *n = realloc(mp->mods, (mp->cnt + 1) * sizeof(*mp->mods));

	if (!n)
		return -ENOMEM;
	mp->mods = n;
	mp->mods[mp->cnt].base = m->base;
	if (!(mp->mods[mp->cnt].path = strdup(m->path)))
		return -ENOMEM;
	mp->cnt++;
	return mp->spec ? 1 : 0;   /* a named binary: the first match */
}

static void pick_free(struct module_pick *mp)
{
	for (int i = 0; i < mp->cnt; i++)
		free(mp->mods[i].path);
	free(mp->mods);
}

/* ---- links ------------------------------------------------------------------ */

static void undo_probe(struct usdt_link *ul, struct usdt_probe *p)
{
	if (p->sema) {
		__atomic_fetch_sub(p->sema, 1, __ATOMIC_SEQ_CST);
		p->sema = NULL;
	}
	/* the uprobe's detach waits until no thread runs the program */
	bpfrt_link_destroy(p->inner);
	p->inner = NULL;
	if (p->spec_id >= 0) {
		long key = (long)p->ip;

		if (ul->ips)
			bpfrt_map_delete_elem(ul->ips, &key);
		id_put(ul->specs, p->spec_id);
		p->spec_id = -1;
	}
}

static void undo_all(struct usdt_link *ul)
{
	for (int i = ul->cnt - 1; i >= 0; i--)
		undo_probe(ul, &ul->probes[i]);
	free(ul->probes);
	ul->probes = NULL;
	ul->cnt = 0;
}

static int usdt_detach(struct bpfrt_link *link)
{
	struct usdt_link *ul = (struct usdt_link *)link;

	/* no placement runs once this returns: the probes are ours */
	uprobe_unwait(&ul->wait);
	undo_all(ul);
	return 0;
}

static void usdt_dealloc(struct bpfrt_link *link)
{
	struct usdt_link *ul = (struct usdt_link *)link;

	bpfrt_link_release(link);
	free(ul->binary);
	free(ul->binary_real);
	free(ul->provider);
	free(ul->name);
	free(ul);
}

static void usdt_show(const struct bpfrt_link *link, FILE *out)
{
	const struct usdt_link *ul = (const struct usdt_link *)link;
	int cnt = __atomic_load_n(&ul->cnt, __ATOMIC_ACQUIRE);

	/* no uprobe lock here: a placement may publish links meanwhile */
	if (!cnt) {
		fprintf(out, "  pending");
		return;
	}
	fprintf(out, "  %d site%s", cnt, cnt == 1 ? "" : "s");
	for (int i = 0; i < cnt && i < 4; i++)
		fprintf(out, " %#lx", (unsigned long)ul->probes[i].ip);
}

static const struct bpfrt_link_ops usdt_ops = {
	.kind = "usdt", .detach = usdt_detach, .dealloc = usdt_dealloc, .show = usdt_show,
};

const struct uprobe_waiter *usdt_link_waiter(const struct bpfrt_link *link)
{
	return link->ops == &usdt_ops ? &((const struct usdt_link *)link)->wait : NULL;
}

/* Spec, spec map slot, uprobe, semaphore for one site. */
static int arm_site(struct usdt_link *ul, struct usdt_probe *p, const struct usdt_site *s,
		    uintptr_t base, uint64_t usdt_cookie, const char *probe)
{
	struct usdt_spec spec;
	uint32_t key;
	int err;

	p->spec_id = -1;
	p->ip = base + s->pc;
	if ((err = usdt_parse_args(s->args, probe, &spec)))
		return err;
	spec.usdt_cookie = usdt_cookie;
	if ((err = id_take(ul->specs, probe)) < 0)
		return err;
	p->spec_id = err;
	key = (uint32_t)p->spec_id;
	if ((err = bpfrt_map_update_elem(ul->specs, &key, &spec, 0)))
		return bpfrt_err(err, "usdt %s: writing " SPECS_MAP "[%d]: %s", probe,
				 p->spec_id, bpfrt_last_error());
	if (ul->ips) {
		/* the ip a probe's pt_regs show: the int3's, one past the site */
		long ip = (long)(p->ip + 1);
		uint32_t id = (uint32_t)p->spec_id;

		if ((err = bpfrt_map_update_elem(ul->ips, &ip, &id, 0)))
			return bpfrt_err(err, "usdt %s: writing " IP_MAP ": %s", probe,
					 bpfrt_last_error());
	}
	BPFRT_OPTS(bpfrt_uprobe_opts, uo, .cookie = (uint64_t)p->spec_id);
	if ((err = bpfrt_uprobe_attach(ul->link.prog, NULL, p->ip, &uo, &p->inner)))
		return bpfrt_err(err, "usdt %s: site %#lx: %s", probe, (unsigned long)p->ip,
				 bpfrt_last_error());
	if (s->sema) {
		p->sema = (uint16_t *)(base + s->sema);
		__atomic_fetch_add(p->sema, 1, __ATOMIC_SEQ_CST);
	}
	return 0;
}

/* Reads the sites of PROVIDER:NAME from the picked modules: the first
 * module that has any. */
static int find_sites(struct module_pick *mp, const char *provider, const char *name,
		      struct usdt_site **sites, uintptr_t *base, const char **path)
{
	for (int i = 0; i < mp->cnt; i++) {
		int n = usdt_read_sites(mp->mods[i].path, provider, name, sites);

		if (n < 0 && mp->spec)
			return n;
		if (n > 0) {
			*base = mp->mods[i].base;
			*path = mp->mods[i].path;
			return n;
		}
	}
	return 0;
}

/* The waiter's place(), under the uprobe lock: every site of the probe
 * armed (0), the binary not loaded yet (1), or -errno with none armed. */
static int usdt_place(struct uprobe_waiter *w)
{
	struct usdt_link *ul = (struct usdt_link *)((char *)w - offsetof(struct usdt_link, wait));
	struct module_pick mp = { .spec = ul->binary, .real = ul->binary_real ? ul->binary_real : "" };
	struct usdt_site *sites = NULL;
	const char *path = NULL;
	char probe[256];
	uintptr_t base = 0;
	int n = 0, err;

	snprintf(probe, sizeof(probe), "%s:%s", ul->provider, ul->name);
	if ((err = bpfrt_sym_foreach_module(pick_cb, &mp)) < 0) {
		err = bpfrt_err(err, "usdt %s: listing loaded modules failed", probe);
		goto out;
	}
	if (!mp.cnt) {
		err = ul->binary ? 1 : bpfrt_err(-ENOENT, "usdt %s: no loaded module", probe);
		goto out;
	}
	n = find_sites(&mp, ul->provider, ul->name, &sites, &base, &path);
	if (n <= 0) {
		err = n < 0 ? n : bpfrt_err(-ENOENT, "usdt %s: no such probe in %s", probe,
					    ul->binary ? mp.mods[0].path : "any loaded module");
		goto out;
	}
	if (!(ul->probes = calloc((size_t)n, sizeof(ul->probes[0])))) {
		err = bpfrt_err(-ENOMEM, "usdt: out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		ul->probes[i].spec_id = -1;
		err = arm_site(ul, &ul->probes[i], &sites[i], base, ul->usdt_cookie, probe);
		ul->cnt = i + 1;
		if (err) {
			if (!strstr(bpfrt_last_error(), path))
				err = bpfrt_err(err, "%s (in %s)", bpfrt_last_error(), path);
			undo_all(ul);
			goto out;
		}
	}
	__atomic_store_n(&ul->cnt, n, __ATOMIC_RELEASE);
	err = 0;
out:
	usdt_sites_free(sites, n > 0 ? n : 0);
	pick_free(&mp);
	return err;
}

static int attach(struct bpfrt_prog *prog, const char *binary, const char *provider,
		  const char *name, uint64_t usdt_cookie, const char *target,
		  struct bpfrt_link **linkp)
{
	struct bpfrt_map *specs;
	struct usdt_link *ul;
	char probe[256], real[PATH_MAX];
	int err;

	snprintf(probe, sizeof(probe), "%s:%s", provider, name);
	err = bpfrt_prog_check_kind(prog, BPFRT_PROG_KPROBE, target);
	if (err)
		return err;
	specs = prog->obj ? bpfrt_object_find_map(prog->obj, SPECS_MAP) : NULL;
	if (!specs || bpfrt_map_value_size(specs) != sizeof(struct usdt_spec) ||
	    bpfrt_map_key_size(specs) != 4)
		return bpfrt_err(-EINVAL, "usdt %s: program %s has no " SPECS_MAP " map as "
				 "usdt.bpf.h defines it (include <bpf/usdt.bpf.h>)", probe,
				 prog->name);
	if (binary && binary[0] == '/') {
		struct usdt_site *sites = NULL;
		int n;

		if (!realpath(binary, real))
			return bpfrt_err(-ENOENT, "usdt %s: %s: %s", probe, binary, strerror(errno));
		/* a file without the probe is refused now, not waited for */
		if ((n = usdt_read_sites(real, provider, name, &sites)) < 0)
			return n;
		usdt_sites_free(sites, n);
		if (!n)
			return bpfrt_err(-ENOENT, "usdt %s: no such probe in %s", probe, binary);
	}
	if (!(ul = calloc(1, sizeof(*ul))))
		return bpfrt_err(-ENOMEM, "usdt: out of memory");
	ul->binary = binary ? strdup(binary) : NULL;
	ul->binary_real = binary && binary[0] == '/' ? strdup(real) : NULL;
	ul->provider = strdup(provider);
	ul->name = strdup(name);
	ul->usdt_cookie = usdt_cookie;
	ul->wait.place = usdt_place;
	if ((binary && !ul->binary) || (binary && binary[0] == '/' && !ul->binary_real) ||
	    !ul->provider || !ul->name) {
		err = bpfrt_err(-ENOMEM, "usdt: out of memory");
		goto out_free;
	}
	if ((err = bpfrt_link_init(&ul->link, &usdt_ops, prog, target, usdt_cookie)))
		goto out_free;
	ul->specs = specs;
	ul->ips = bpfrt_object_find_map(prog->obj, IP_MAP);
	if (ul->ips && (bpfrt_map_key_size(ul->ips) != sizeof(long) ||
			bpfrt_map_value_size(ul->ips) != 4))
		ul->ips = NULL;
	if ((err = uprobe_wait(&ul->wait))) {
		bpfrt_link_release(&ul->link);
		goto out_free;
	}
	bpfrt_link_publish(&ul->link);
	*linkp = &ul->link;
	return 0;
out_free:
	free(ul->binary);
	free(ul->binary_real);
	free(ul->provider);
	free(ul->name);
	free(ul);
	return err;
}

int bpfrt_usdt_attach(struct bpfrt_prog *prog, const char *binary, const char *provider,
		      const char *name, const struct bpfrt_usdt_opts *opts,
		      struct bpfrt_link **link)
{
	char target[512];

	bpfrt_err_clear();
	if (!prog || !provider || !name || !link)
		return bpfrt_err(-EINVAL, "usdt_attach: NULL argument");
	*link = NULL;
	if (!OPTS_VALID(opts, bpfrt_usdt_opts))
		return -EINVAL;
	if (!__atomic_load_n(&prog->loaded, __ATOMIC_ACQUIRE))
		return bpfrt_err(-EINVAL, "usdt_attach: %s is not loaded", prog->name);
	if (!*provider || !*name || (binary && !*binary))
		return bpfrt_err(-EINVAL, "usdt_attach: empty binary, provider or name");
	if ((size_t)snprintf(target, sizeof(target), "%s%s%s:%s", binary ? binary : "",
			     binary ? ":" : "", provider, name) >= sizeof(target))
		return bpfrt_err(-EINVAL, "usdt_attach: names too long");
	return attach(prog, binary, provider, name, OPTS_GET(opts, usdt_cookie, 0), target, link);
}

int bpfrt_usdt_attach_prog(struct bpfrt_prog *prog, const char *target, uint64_t cookie,
			   struct bpfrt_link **link)
{
	char buf[512], *provider, *name, *binary = NULL, *c;

	if (!target || !*target)
		return bpfrt_err(-EINVAL, "usdt %s: no target (usdt/[BINARY:]PROVIDER:NAME)",
				 prog->name);
	if (strlen(target) >= sizeof(buf))
		return bpfrt_err(-EINVAL, "usdt: target too long: %.64s...", target);
	strcpy(buf, target);
	/* the last two fields are provider and name; a path may hold ':' */
	if (!(c = strrchr(buf, ':')))
		return bpfrt_err(-EINVAL, "usdt '%s': not [BINARY:]PROVIDER:NAME", target);
	*c = 0;
	name = c + 1;
	provider = buf;
	if ((c = strrchr(buf, ':'))) {
		*c = 0;
		provider = c + 1;
		binary = buf;
	}
	if (!*provider || !*name || (binary && !*binary))
		return bpfrt_err(-EINVAL, "usdt '%s': empty binary, provider or name", target);
	return attach(prog, binary, provider, name, cookie, target, link);
}
