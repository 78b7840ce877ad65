/* USDT probes in this process (bpfrt/usdt.h) on <sys/sdt.h> sites built
 * with plain gcc -O2 (tests/trace/usdt_sites.c, usdt_guarded.c), read by
 * a program using libbpf's usdt.bpf.h unmodified: constants, registers
 * and stack memory of 1, 2, 4 and 8 bytes, signed and unsigned, argument
 * counts, the usdt cookie, a semaphore raised while attached and
 * restored at detach, exact hit counts from 4 threads, probes of a
 * library named before dlopen loads it (tests/trace/usdt_late.c: pending,
 * then placed with the library's own semaphore), and refusals that name
 * the probe. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "usdt/usdt_spec.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
void usdt_consts(void);
long usdt_regs(long a, int b, unsigned char c, short d);
void usdt_mem(long a, int b, unsigned short c, signed char d);
int usdt_guarded(int x);
extern unsigned short bpfrt_test_guarded_semaphore;

static struct bpfrt_object *open_progs(bool jit)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);

	return load_object("usdt.bpf.o", &lo);
}

static struct bpfrt_link *attach_sec(struct bpfrt_object *obj, const char *prog, uint64_t cookie)
{
	struct bpfrt_prog *p = bpfrt_object_find_prog(obj, prog);
	BPFRT_OPTS(bpfrt_attach_opts, ao, .cookie = cookie);
	struct bpfrt_link *l = NULL;
	int err;

	if (!p)
		return NULL;
	err = bpfrt_prog_attach(p, &ao, &l);
	CHECK(!err && l, "attach %s (%s): %d %s", prog, bpfrt_prog_section(p), err,
	      bpfrt_last_error());
	return l;
}

TEST(parse_arg_specs)
{
	struct usdt_spec s;

	REQUIRE_EQ(usdt_parse_args("-4@$-5 8@$0x10 -8@%rdi 1@%dl -2@%r9w 4@-12(%rsp) -1@(%rbx)",
				   "p:n", &s), 0, "%s", bpfrt_last_error());
	CHECK_EQ(s.arg_cnt, 7);
	CHECK_EQ(s.args[0].arg_type, USDT_ARG_CONST);
	CHECK_EQ((int64_t)s.args[0].val_off, -5);
	CHECK(s.args[0].arg_signed, "-4 is signed");
	CHECK_EQ(s.args[0].arg_bitshift, 32);
	CHECK_EQ(s.args[1].val_off, 16);
	CHECK_EQ(s.args[1].arg_bitshift, 0);
	CHECK_EQ(s.args[2].arg_type, USDT_ARG_REG);
	CHECK_EQ(s.args[2].reg_off, offsetof(struct bpfrt_pt_regs, di));
	CHECK_EQ(s.args[3].reg_off, offsetof(struct bpfrt_pt_regs, dx));
	CHECK_EQ(s.args[3].arg_bitshift, 56);
	CHECK(!s.args[3].arg_signed, "1@ is unsigned");
	CHECK_EQ(s.args[4].reg_off, offsetof(struct bpfrt_pt_regs, r9));
	CHECK_EQ(s.args[5].arg_type, USDT_ARG_REG_DEREF);
	CHECK_EQ(s.args[5].reg_off, offsetof(struct bpfrt_pt_regs, sp));
	CHECK_EQ((int64_t)s.args[5].val_off, -12);
	CHECK_EQ(s.args[6].arg_type, USDT_ARG_REG_DEREF);
	CHECK_EQ(s.args[6].val_off, 0);
	REQUIRE_EQ(usdt_parse_args("", "p:n", &s), 0);
	CHECK_EQ(s.arg_cnt, 0);

	static const char *bad[] = { "4", "3@%eax", "4@%xyz", "4@$", "4@$5x", "8@12(%rax",
				     "8@sym(%rip)", "-4@%eax 16@%rbx", "x@%eax" };
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		CHECK_EQ(usdt_parse_args(bad[i], "prov:probe", &s), -EINVAL, "'%s' accepted", bad[i]);
		CHECK(strstr(bpfrt_last_error(), "prov:probe"), "'%s': %s", bad[i],
		      bpfrt_last_error());
	}
	CHECK_EQ(usdt_parse_args("1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1",
				 "p:n", &s), -E2BIG);
}

/* The sites in this executable: every argument's value, exactly. */
static void values(bool jit)
{
	struct bpfrt_object *obj = open_progs(jit);
	struct bpfrt_link *lc, *lr, *lm;

	if (!obj)
		return;
	volatile long *g = object_global(obj, "consts_hits");
	lc = attach_sec(obj, "on_consts", 0);
	lr = attach_sec(obj, "on_regs", 0xfeedbeefcafeULL);
	lm = attach_sec(obj, "on_mem", 0);
	if (g && lc && lr && lm) {
		CHECK_STR_EQ(bpfrt_link_kind(lc), "usdt");
		usdt_consts();
		CHECK_EQ(*(long *)object_global(obj, "consts_hits"), 1);
		CHECK_EQ(*(long *)object_global(obj, "consts_a"), -5);
		CHECK_EQ(*(long *)object_global(obj, "consts_b"), 0x123456789aLL);
		CHECK_EQ(*(long *)object_global(obj, "consts_c"), -3);
		CHECK_EQ(*(long *)object_global(obj, "consts_cnt"), 3);

		CHECK_EQ(usdt_regs(-7L * (1L << 40), -100000, 200, -300), (-7L * (1L << 40)) - 100000 + 200 - 300);
		CHECK_EQ(*(long *)object_global(obj, "regs_hits"), 1);
		CHECK_EQ(*(long *)object_global(obj, "regs_a"), -7L * (1L << 40));
		CHECK_EQ(*(long *)object_global(obj, "regs_b"), -100000);
		CHECK_EQ(*(long *)object_global(obj, "regs_c"), 200);
		CHECK_EQ(*(long *)object_global(obj, "regs_d"), -300);
		CHECK_EQ(*(unsigned long *)object_global(obj, "regs_cookie"), 0xfeedbeefcafeULL);

		usdt_mem(1L << 50, -2, 65000, -9);
		CHECK_EQ(*(long *)object_global(obj, "mem_hits"), 1);
		CHECK_EQ(*(long *)object_global(obj, "mem_a"), 1L << 50);
		CHECK_EQ(*(long *)object_global(obj, "mem_b"), -2);
		CHECK_EQ(*(long *)object_global(obj, "mem_c"), 65000);
		CHECK_EQ(*(long *)object_global(obj, "mem_d"), -9);
		CHECK_EQ(*(long *)object_global(obj, "mem_bad_arg"), -ENOENT);
	}
	bpfrt_link_destroy(lc);
	bpfrt_link_destroy(lr);
	bpfrt_link_destroy(lm);
	usdt_consts();
	CHECK_EQ(*(long *)object_global(obj, "consts_hits"), 1, "a hit after detach");
	bpfrt_object_close(obj);
}

TEST(values_jit) { values(true); }
TEST(values_interp) { values(false); }

#define THREADS 4
#define CALLS 5000

static void *fire(void *arg)
{
	for (int i = 0; i < CALLS; i++)
		usdt_guarded(i);
	return NULL;
}

/* The semaphore counts attachments; the guarded site fires only then,
 * from every thread, and is quiet again after detach. */
TEST(semaphore_and_threads)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_prog *p = obj ? bpfrt_object_find_prog(obj, "on_guarded") : NULL;
	struct bpfrt_link *l = NULL, *l2 = NULL;
	pthread_t t[THREADS];

	if (!p)
		goto out;
	CHECK_EQ(bpfrt_test_guarded_semaphore, 0);
	CHECK_EQ(usdt_guarded(1), 0, "the guarded site runs with no tracer");
	l = attach_sec(obj, "on_guarded", 0);
	if (!l)
		goto out;
	CHECK_EQ(bpfrt_test_guarded_semaphore, 1);
	REQUIRE_EQ(bpfrt_usdt_attach(p, NULL, "bpfrt_test", "guarded", NULL, &l2), 0, "%s",
		   bpfrt_last_error());
	CHECK_EQ(bpfrt_test_guarded_semaphore, 2);
	bpfrt_link_destroy(l2);
	CHECK_EQ(bpfrt_test_guarded_semaphore, 1);
	for (long i = 0; i < THREADS; i++)
		REQUIRE(!pthread_create(&t[i], NULL, fire, NULL));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(*(long *)object_global(obj, "guarded_hits"), THREADS * CALLS);
	CHECK_EQ(*(long *)object_global(obj, "guarded_sum"),
		 THREADS * 3L * CALLS * (CALLS - 1) / 2);
	bpfrt_link_destroy(l);
	l = NULL;
	CHECK_EQ(bpfrt_test_guarded_semaphore, 0, "the semaphore after detach");
	CHECK_EQ(usdt_guarded(1), 0);
	CHECK_EQ(*(long *)object_global(obj, "guarded_hits"), THREADS * CALLS);
out:
	bpfrt_link_destroy(l);
	bpfrt_object_close(obj);
}

/* Refusals name the probe (and, for files, the binary). */
TEST(refusals)
{
	struct bpfrt_object *obj = open_progs(true);
	struct bpfrt_prog *p = obj ? bpfrt_object_find_prog(obj, "on_consts") : NULL;
	struct bpfrt_link *l = NULL;
	BPFRT_OPTS(bpfrt_attach_opts, ao);

	if (!p)
		goto out;
	CHECK_EQ(bpfrt_usdt_attach(p, NULL, "bpfrt_test", "nosuch", NULL, &l), -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "bpfrt_test:nosuch"), "%s", bpfrt_last_error());
	/* a library by name is waited for, whatever it will turn out to hold */
	REQUIRE_EQ(bpfrt_usdt_attach(p, "libnotloaded.so", "bpfrt_test", "consts", NULL, &l), 0,
		   "%s", bpfrt_last_error());
	CHECK(bpfrt_uprobe_pending(l));
	bpfrt_link_destroy(l);
	l = NULL;
	CHECK_EQ(bpfrt_usdt_attach(p, "/nonexistent/bin", "bpfrt_test", "consts", NULL, &l),
		 -ENOENT);
	CHECK_EQ(bpfrt_usdt_attach(p, "libc.so.6", "bpfrt_test", "consts", NULL, &l), -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "libc.so.6"), "%s", bpfrt_last_error());
	ao.target = "justone";
	CHECK_EQ(bpfrt_prog_attach(p, &ao, &l), -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "justone"), "%s", bpfrt_last_error());
	ao.target = "bin::name";
	CHECK_EQ(bpfrt_prog_attach(p, &ao, &l), -EINVAL);
	CHECK(!l, "a link after a refusal");
out:
	bpfrt_object_close(obj);
}

/* A .note.stapsdt note too short for its three addresses (written with
 * objcopy over the one of a copy of usdt_guarded.o): refused, naming the
 * file and the note. */
TEST(malformed_note)
{
	/* n_namesz 8, n_descsz 10, type 3, "stapsdt\0", 10 bytes + padding */
	static const unsigned char note[] = { 8, 0, 0, 0, 10, 0, 0, 0, 3, 0, 0, 0,
		's', 't', 'a', 'p', 's', 'd', 't', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0 };
	char dir[] = "/tmp/bpfrt-usdt-XXXXXX", cmd[512], bin[64], obj[64];
	struct usdt_site *sites = NULL;
	FILE *f;

	if (system("objcopy --version >/dev/null 2>&1"))
		SKIP("no objcopy to build the malformed object with");
	REQUIRE(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/note.bin", dir);
	snprintf(obj, sizeof(obj), "%s/bad.o", dir);
	REQUIRE((f = fopen(bin, "wb")));
	fwrite(note, 1, sizeof(note), f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "objcopy --update-section .note.stapsdt=%s %s %s", bin,
		 USDT_GUARDED_OBJ, obj);
	if (!system(cmd)) {
		CHECK_EQ(usdt_read_sites(obj, "bpfrt_test", "guarded", &sites), -EINVAL);
		CHECK(strstr(bpfrt_last_error(), "malformed") && strstr(bpfrt_last_error(), obj),
		      "%s", bpfrt_last_error());
		CHECK(!sites, "sites returned with an error");
	} else {
		CHECK(0, "%s failed", cmd);
	}
	CHECK_EQ(usdt_read_sites("/nonexistent/usdt", "p", "n", &sites), -ENOENT);
	unlink(bin);
	unlink(obj);
	rmdir(dir);
}

static long late_global(struct bpfrt_object *obj, const char *name)
{
	volatile long *g = object_global(obj, name);

	return g ? *g : -1;
}

/* Probes of a library named before it is loaded: pending, then placed by
 * the refresh after dlopen (the agent's dlopen runs it) with the
 * library's own semaphore raised; exact hits and values; a link detached
 * while pending is never placed; detach undoes the rest. */
TEST(pending_until_dlopen)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = true);
	struct bpfrt_object *obj = load_object("usdt_late.bpf.o", &lo);
	struct bpfrt_prog *pf = obj ? bpfrt_object_find_prog(obj, "on_late_fire") : NULL;
	struct bpfrt_link *lf = NULL, *lg = NULL, *lpath = NULL;
	BPFRT_OPTS(bpfrt_usdt_opts, uo, .usdt_cookie = 99);
	long (*fire)(long, int);
	int (*guarded)(int);
	unsigned short *sema;
	void *h = NULL;

	if (!pf)
		goto out;
	REQUIRE(!dlopen(USDT_LATE_LIB, RTLD_NOW | RTLD_NOLOAD), "loaded before the test");
	lf = attach_sec(obj, "on_late_fire", 0xabcdef);
	lg = attach_sec(obj, "on_late_guarded", 0);
	if (!lf || !lg)
		goto out;
	CHECK_STR_EQ(bpfrt_link_kind(lf), "usdt");
	CHECK(bpfrt_uprobe_pending(lf) && bpfrt_uprobe_pending(lg), "placed before dlopen");
	/* by path: the file is read now, so a probe it lacks is refused now */
	CHECK_EQ(bpfrt_usdt_attach(pf, USDT_LATE_LIB, "bpfrt_late", "nosuch", &uo, &lpath),
		 -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "bpfrt_late:nosuch") &&
	      strstr(bpfrt_last_error(), USDT_LATE_LIB), "%s", bpfrt_last_error());
	REQUIRE_EQ(bpfrt_usdt_attach(pf, USDT_LATE_LIB, "bpfrt_late", "fire", &uo, &lpath), 0,
		   "%s", bpfrt_last_error());
	CHECK(bpfrt_uprobe_pending(lpath));
	bpfrt_link_destroy(lpath);   /* while pending: never placed */
	CHECK_EQ(bpfrt_uprobe_refresh(), 0, "nothing to place yet");

	h = dlopen(USDT_LATE_LIB, RTLD_NOW | RTLD_LOCAL);
	REQUIRE(h, "dlopen %s: %s", USDT_LATE_LIB, dlerror());
	fire = (long (*)(long, int))dlsym(h, "usdt_late_fire");
	guarded = (int (*)(int))dlsym(h, "usdt_late_guarded");
	sema = (unsigned short *)dlsym(h, "bpfrt_late_guarded_semaphore");
	REQUIRE(fire && guarded && sema);
	CHECK_EQ(fire(1, 2), 3);
	CHECK_EQ(*sema, 0, "the semaphore raised before the refresh");
	CHECK_EQ(guarded(1), 0);
	CHECK_EQ(late_global(obj, "fire_hits"), 0, "ran while pending");

	CHECK_EQ(bpfrt_uprobe_refresh(), 2, "the two waiting links, not the detached one");
	CHECK(!bpfrt_uprobe_pending(lf) && !bpfrt_uprobe_pending(lg));
	CHECK_EQ(*sema, 1, "the library's semaphore while attached");
	for (int i = 0; i < 100; i++)
		CHECK_EQ(fire(-(1L << 40) + i, -7 * i), -(1L << 40) + i - 7 * i);
	CHECK_EQ(late_global(obj, "fire_hits"), 100);
	CHECK_EQ(late_global(obj, "fire_a"), -(1L << 40) + 99);
	CHECK_EQ(late_global(obj, "fire_b"), -7 * 99);
	CHECK_EQ(late_global(obj, "fire_cookie"), 0xabcdef);
	for (int i = 0; i < 50; i++)
		CHECK_EQ(guarded(i), 1);
	CHECK_EQ(late_global(obj, "guarded_hits"), 50);
	CHECK_EQ(late_global(obj, "guarded_sum"), 5L * 49 * 50 / 2);
	CHECK_EQ(bpfrt_uprobe_refresh(), 0, "placed once");

	bpfrt_link_destroy(lf);
	bpfrt_link_destroy(lg);
	lf = lg = NULL;
	CHECK_EQ(*sema, 0, "the semaphore after detach");
	CHECK_EQ(fire(5, 6), 11);
	CHECK_EQ(guarded(2), 0);
	CHECK_EQ(late_global(obj, "fire_hits"), 100, "a hit after detach");
out:
	bpfrt_link_destroy(lf);
	bpfrt_link_destroy(lg);
	if (h)
		dlclose(h);
	bpfrt_object_close(obj);
}

/* A program without usdt.bpf.h's maps cannot read specs: refused. */
TEST(no_spec_maps)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = true);
	struct bpfrt_object *obj = load_object("uprobe.bpf.o", &lo);
	struct bpfrt_prog *p = obj ? bpfrt_object_find_prog(obj, "on_any") : NULL;
	struct bpfrt_link *l = NULL;

	if (p) {
		CHECK_EQ(bpfrt_usdt_attach(p, NULL, "bpfrt_test", "consts", NULL, &l), -EINVAL);
		CHECK(strstr(bpfrt_last_error(), "__bpf_usdt_specs"), "%s", bpfrt_last_error());
	}
	bpfrt_object_close(obj);
}
#else
TL_SKIP_ALL("USDT sites are probed by the x86-64 kprobe engine")
#endif
