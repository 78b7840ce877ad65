/* ELF object loader: clang-built objects opened, linked and run unmodified,
 * skeleton-style globals, kfuncs, and malformed files. */
#define _GNU_SOURCE
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/attach.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/tracepoint.h"
#include "maps/map.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t host_add(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return (uint32_t)((int)a + (int)b);
}

static void register_kfuncs(void)
{
	static const struct bpfrt_helper k = {
		.fn = host_add,
		.args = { BPFRT_ARG_ANYTHING, BPFRT_ARG_ANYTHING },
	};

	CHECK(bpfrt_kfunc_register("host_add", &k) >= BPFRT_KFUNC_ID_BASE);
}

TEST(open_lists_programs_sections_and_maps)
{
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	int n = 0;

	REQUIRE(bpfrt_object_open(tl_prog_path("globals.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	for (p = bpfrt_object_next_prog(obj, NULL); p; p = bpfrt_object_next_prog(obj, p))
		n++;
	CHECK(n == 3, "%d programs", n);
	p = bpfrt_object_find_prog(obj, "count_hits");
	REQUIRE(p);
	CHECK(!strcmp(bpfrt_prog_section(p), "tp/bpfrt/test_event"));
	CHECK(bpfrt_prog_kind(p) == BPFRT_PROG_TRACEPOINT);
	CHECK(!strcmp(bpfrt_prog_attach_target(p), "bpfrt/test_event"));
	p = bpfrt_object_find_prog(obj, "read_greeting");
	REQUIRE(p);
	CHECK(bpfrt_prog_kind(p) == BPFRT_PROG_RAW_TRACEPOINT);
	CHECK(!strcmp(bpfrt_prog_attach_target(p), "bpfrt_raw"));
	p = bpfrt_object_find_prog(obj, "on_entry");
	REQUIRE(p);
	CHECK(bpfrt_prog_kind(p) == BPFRT_PROG_FENTRY);
	CHECK(!strcmp(bpfrt_prog_attach_target(p), "host_function"));
	CHECK(bpfrt_object_find_prog(obj, "nope") == NULL);
	CHECK(strstr(bpfrt_last_error(), "nope"));
	CHECK(!strcmp(bpfrt_object_license(obj), "GPL"));
	/* Maps exist only after load. */
	CHECK(bpfrt_object_find_map(obj, ".bss") == NULL);
	bpfrt_object_close(obj);
}

/* .rodata after load: frozen with the value set before load, refused to
 * user space, read-only memory behind bpfrt_object_global(). */
static void rodata_frozen_after_load(struct bpfrt_object *obj, int *knob_before_load)
{
	struct bpfrt_map *ro = bpfrt_object_find_map(obj, ".rodata");
	struct bpfrt_map *data = bpfrt_object_find_map(obj, ".data");
	int *knob = bpfrt_object_global(obj, "batch_iters", NULL);
	char img[64] = { 0 };
	uint32_t key = 0;

	REQUIRE(ro && data && knob && bpfrt_map_value_size(ro) <= sizeof(img));
	CHECK(knob != knob_before_load && *knob == *knob_before_load);
	CHECK(bpfrt_map_is_frozen(ro));
	CHECK(bpfrt_map_flags(ro) & BPF_F_RDONLY_PROG);
	CHECK(!bpfrt_map_is_frozen(data) && !(bpfrt_map_flags(data) & BPF_F_RDONLY_PROG));
	CHECK(bpfrt_map_lookup_elem(ro, &key, img) == 0);
	CHECK(bpfrt_map_update_elem(ro, &key, img, BPF_ANY) == -EPERM);
	CHECK(strstr(bpfrt_last_error(), ".rodata"), "%s", bpfrt_last_error());
	CHECK(!tl_memory_writable(knob), "a write to .rodata after load must fault");
	CHECK(tl_memory_writable(bpfrt_object_global(obj, "seeded", NULL)));
}

static void run_globals(bool jit)
{
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	int *iters, *seeded, *counter;
	long *hits;
	uint64_t r0;
	size_t sz;

	register_kfuncs();
	REQUIRE(bpfrt_object_open(tl_prog_path("globals.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	iters = bpfrt_object_global(obj, "batch_iters", &sz);
	REQUIRE(iters && sz == sizeof(int));
	CHECK(*iters == 1);
	*iters = 5; /* a const volatile knob, set before load */
	REQUIRE(bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = jit }) == 0,
		"%s", bpfrt_last_error());
	CHECK(bpfrt_object_find_map(obj, ".bss") != NULL);
	CHECK(bpfrt_object_find_map(obj, ".data") != NULL);
	CHECK(bpfrt_object_find_map(obj, ".rodata") != NULL);
	rodata_frozen_after_load(obj, iters);

	hits = bpfrt_object_global(obj, "hits", &sz);
	counter = bpfrt_object_global(obj, "counter", NULL);
	seeded = bpfrt_object_global(obj, "seeded", NULL);
	REQUIRE(hits && counter && seeded && sz == sizeof(long));
	CHECK(*seeded == 7);
	p = bpfrt_object_find_prog(obj, "count_hits");
	REQUIRE(p);
	CHECK(run_zero_ctx(p, mode, &r0) == 0, "%s", bpfrt_last_error());
	CHECK(*hits == 5, "hits %ld", *hits);
	CHECK(*counter == 1);
	CHECK(r0 == 8, "r0 %llu", (unsigned long long)r0);
	*seeded = 100; /* written from user space after load */
	CHECK(run_zero_ctx(p, mode, &r0) == 0);
	CHECK(*hits == 10 && *counter == 2 && r0 == 102, "hits %ld counter %d r0 %llu",
	      *hits, *counter, (unsigned long long)r0);

	p = bpfrt_object_find_prog(obj, "read_greeting");
	REQUIRE(p);
	CHECK(run_zero_ctx(p, mode, &r0) == 0);
	CHECK(r0 == 'e' + 6, "r0 %llu", (unsigned long long)r0);
	bpfrt_object_close(obj);
}

TEST(globals_subprograms_kfuncs_interp)
{
	run_globals(false);
}

TEST(globals_subprograms_kfuncs_jit)
{
	run_globals(true);
}

/* One load attempt per object, as libbpf's bpf_object__load: a second
 * call after a success is refused, naming the object. */
TEST(double_load_is_refused)
{
	struct bpfrt_object *obj;

	register_kfuncs();
	REQUIRE(bpfrt_object_open(tl_prog_path("globals.bpf.o"), NULL, &obj) == 0);
	CHECK(bpfrt_object_load(obj, NULL) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_object_load(obj, NULL) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "load can't be attempted twice") &&
	      strstr(bpfrt_last_error(), bpfrt_object_name(obj)), "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

/* ... and after a failure too: programs loaded before the failing one may
 * be in prog array slots or attached by then, and a retry would re-verify
 * and re-link them under their users. The object is opened again instead. */
TEST(load_after_a_failed_load_is_refused)
{
	struct bpfrt_object *obj;

	register_kfuncs();
	REQUIRE(bpfrt_object_open(tl_prog_path("globals.bpf.o"), NULL, &obj) == 0);
	CHECK(bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .prog_flags = 0x40000000u }) == -EINVAL);
	CHECK(strstr(bpfrt_last_error(), "unknown load flags"), "%s", bpfrt_last_error());
	CHECK(bpfrt_object_load(obj, NULL) == -EINVAL, "a failed load was retried");
	CHECK(strstr(bpfrt_last_error(), "load can't be attempted twice") &&
	      strstr(bpfrt_last_error(), bpfrt_object_name(obj)), "%s", bpfrt_last_error());
	CHECK(bpfrt_object_find_map(obj, ".bss") == NULL, "the refused retry created maps");
	bpfrt_object_close(obj);

	REQUIRE(bpfrt_object_open(tl_prog_path("globals.bpf.o"), NULL, &obj) == 0);
	CHECK(bpfrt_object_load(obj, NULL) == 0, "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

/* ---- lifetimes: a failing load, programs outliving their object ------- */

BPFRT_DECLARE_TRACEPOINT(lt_probe, long a);
BPFRT_DEFINE_TRACEPOINT(lt_probe);

/* A thread that keeps offering a program of an object being loaded to a
 * prog array slot, to an attach and to a run, counting what succeeds. */
struct offer {
	struct bpfrt_map *jmp;
	struct bpfrt_prog *prog;
	_Atomic bool done;
	_Atomic int slotted, attached, ran;
};

static void *offer_prog(void *arg)
{
	struct offer *o = arg;
	uint64_t args[16] = { 0 }, r0;
	struct bpfrt_link *l;

	while (!atomic_load(&o->done)) {
		if (!bpfrt_map_update_prog(o->jmp, 0, o->prog)) {
			atomic_fetch_add(&o->slotted, 1);
			bpfrt_map_delete_prog(o->jmp, 0);
		}
		l = NULL;
		if (!bpfrt_prog_attach(o->prog, NULL, &l)) {
			atomic_fetch_add(&o->attached, 1);
			bpfrt_link_destroy(l);
		}
		if (!bpfrt_prog_run(o->prog, BPFRT_EXEC_DEFAULT, (uintptr_t)args, sizeof(args),
				    &r0))
			atomic_fetch_add(&o->ran, 1);
	}
	return NULL;
}

/* bad_late_verify.bpf.o: fine is prepared, then unbounded fails the
 * verifier and the load strips both. Until the whole load succeeded fine
 * must not be usable: a slot, a link or a run taking it in between kept
 * running it after its code was freed. The old code took it (ASan:
 * heap-use-after-free once a slot or link ran the stripped program). */
TEST(programs_are_unusable_until_their_whole_object_loaded)
{
	struct bpfrt_object *owner = load_object("lifetimes.bpf.o", NULL);
	struct offer o = { 0 };
	int rounds = 0;

	if (!owner)
		return;
	o.jmp = bpfrt_object_find_map(owner, "jmp");
	REQUIRE(o.jmp);
	for (; rounds < 1500; rounds++) {
		struct bpfrt_object *obj = NULL;
		pthread_t t;
		int err;

		REQUIRE(!bpfrt_object_open(tl_prog_path("bad_late_verify.bpf.o"), NULL, &obj));
		o.prog = bpfrt_object_find_prog(obj, "fine");
		REQUIRE(o.prog);
		atomic_store(&o.done, false);
		REQUIRE(!pthread_create(&t, NULL, offer_prog, &o));
		err = bpfrt_object_load(obj, NULL);
		atomic_store(&o.done, true);
		pthread_join(t, NULL);
		CHECK(err == -EACCES || err == -EINVAL, "bad_late_verify loaded: %d", err);
		CHECK(strstr(bpfrt_last_error(), "unbounded"), "%s", bpfrt_last_error());
		/* whatever took it meanwhile would now run freed code */
		CHECK(bpfrt_prog_array_get(o.jmp, 0) == NULL, "fine is in a slot after the failure");
		bpfrt_map_delete_prog(o.jmp, 0);
		bpfrt_object_close(obj);
		if (atomic_load(&o.slotted) || atomic_load(&o.attached) || atomic_load(&o.ran))
			break;
	}
	CHECK(!o.slotted && !o.attached && !o.ran,
	      "during a failing load fine was slotted %d, attached %d, run %d times (round %d)",
	      o.slotted, o.attached, o.ran, rounds);
	bpfrt_object_close(owner);
}

/* lifetimes.bpf.o opened twice: A's target in B's prog array keeps A's
 * program alive after bpfrt_object_close(A), and with it A's map and
 * global, which it updates when B's caller tail-calls it. The old code
 * freed A's maps at close (ASan: heap-use-after-free in target). Closing
 * B then frees everything (ASan's leak checker). */
BOTH_ENGINES(a_closed_objects_program_keeps_its_maps)
{
	BPFRT_OPTS(bpfrt_object_load_opts, lo, .jit = jit);
	uint64_t base = bpfrt_map_memory_used();
	struct bpfrt_object *a = load_object("lifetimes.bpf.o", &lo);
	struct bpfrt_object *b = load_object("lifetimes.bpf.o", &lo);
	struct bpfrt_prog *target, *caller;
	enum bpfrt_exec_mode mode = jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP;
	uint64_t args[16] = { 0 }, r0 = 0;
	uint64_t mem;

	if (!a || !b) {
		bpfrt_object_close(a);
		bpfrt_object_close(b);
		return;
	}
	target = bpfrt_object_find_prog(a, "target");
	caller = bpfrt_object_find_prog(b, "caller");
	REQUIRE(target && caller);
	REQUIRE(!bpfrt_map_update_prog(bpfrt_object_find_map(b, "jmp"), 0, target), "%s",
		bpfrt_last_error());
	CHECK(!bpfrt_prog_run(caller, mode, (uintptr_t)args, sizeof(args), &r0) && r0 == 101,
	      "%llu %s", (unsigned long long)r0, bpfrt_last_error());
	mem = bpfrt_map_memory_used();
	bpfrt_object_close(a);
	CHECK(bpfrt_map_memory_used() == mem, "A's maps went with A: %llu -> %llu bytes",
	      (unsigned long long)mem, (unsigned long long)bpfrt_map_memory_used());
	for (int i = 2; i <= 4; i++)
		CHECK(!bpfrt_prog_run(caller, mode, (uintptr_t)args, sizeof(args), &r0) &&
		      r0 == (uint64_t)i * 101, "run %d: %llu %s", i, (unsigned long long)r0,
		      bpfrt_last_error());
	bpfrt_object_close(b);
	CHECK(bpfrt_map_memory_used() == base, "left after B's close: %llu bytes",
	      (unsigned long long)(bpfrt_map_memory_used() - base));
}

/* Each object's own array holding its own programs (the usual tail-call
 * layout) and two objects holding each other's: closing empties an
 * object's prog arrays, so neither keeps itself alive (ASan's leak
 * checker: no map, program or object left). */
TEST(objects_holding_their_own_or_each_others_programs_are_freed)
{
	uint64_t base = bpfrt_map_memory_used();
	struct bpfrt_object *a = load_object("lifetimes.bpf.o", NULL);
	struct bpfrt_object *b = load_object("lifetimes.bpf.o", NULL);

	if (!a || !b) {
		bpfrt_object_close(a);
		bpfrt_object_close(b);
		return;
	}
	REQUIRE(!bpfrt_map_update_prog(bpfrt_object_find_map(a, "jmp"), 0,
				       bpfrt_object_find_prog(a, "target")));
	REQUIRE(!bpfrt_map_update_prog(bpfrt_object_find_map(a, "jmp"), 1,
				       bpfrt_object_find_prog(b, "target")));
	REQUIRE(!bpfrt_map_update_prog(bpfrt_object_find_map(b, "jmp"), 0,
				       bpfrt_object_find_prog(a, "caller")));
	REQUIRE(!bpfrt_map_update_prog(bpfrt_object_find_map(b, "jmp"), 1,
				       bpfrt_object_find_prog(b, "target")));
	bpfrt_object_close(a);
	bpfrt_object_close(b);
	CHECK(bpfrt_map_memory_used() == base, "left: %llu bytes",
	      (unsigned long long)(bpfrt_map_memory_used() - base));
}

static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	fwrite(buf, 1, len, f);
	fclose(f);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(*len ? *len : 1);
	if (buf && fread(buf, 1, *len, f) != *len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Open+load must fail cleanly (or succeed) and never crash or leak. */
static int try_object(const char *path)
{
	struct bpfrt_object *obj;
	int err = bpfrt_object_open(path, NULL, &obj);

	if (err)
		return err;
	err = bpfrt_object_load(obj, NULL);
	bpfrt_object_close(obj);
	return err;
}

TEST(malformed_objects_are_rejected)
{
	char tmp[] = "/tmp/bpfrt-loader-XXXXXX";
	size_t len;
	char *img = slurp(tl_prog_path("globals.bpf.o"), &len);
	int fd = mkstemp(tmp);
	unsigned seed = 1;

	REQUIRE(img && fd >= 0);
	close(fd);
	register_kfuncs();

	CHECK(try_object("/nonexistent/x.o") == -ENOENT);
	CHECK(try_object("/proc/self/exe") == -EINVAL, "%s", bpfrt_last_error());
	CHECK(strstr(bpfrt_last_error(), "BPF"));

	/* Every truncation point in the first 4 KiB, then coarser. */
	for (size_t cut = 0; cut < len; cut += cut < 4096 ? 7 : 401) {
		write_file(tmp, img, cut);
		CHECK(try_object(tmp) < 0, "truncated at %zu accepted", cut);
	}
	/* Random byte flips: any outcome but a crash. */
	for (int round = 0; round < 300; round++) {
		char *m = malloc(len);

		memcpy(m, img, len);
		for (int k = 0; k < 8; k++)
			m[rand_r(&seed) % len] = (char)rand_r(&seed);
		write_file(tmp, m, len);
		(void)try_object(tmp);
		free(m);
	}
	unlink(tmp);
	free(img);
}

TEST(missing_kfunc_names_the_symbol)
{
	struct bpfrt_object *obj;
	size_t len;
	char *img = slurp(tl_prog_path("globals.bpf.o"), &len);
	char tmp[] = "/tmp/bpfrt-loader-XXXXXX";
	int fd = mkstemp(tmp);
	char *at;

	REQUIRE(img && fd >= 0);
	close(fd);
	/* Rename the extern (symbol and BTF strings) so no kfunc matches it. */
	at = memmem(img, len, "host_add", 8);
	REQUIRE(at);
	for (; at; at = memmem(at, len - (size_t)(at - img), "host_add", 8))
		memcpy(at, "host_xyz", 8);
	write_file(tmp, img, len);
	REQUIRE(bpfrt_object_open(tmp, NULL, &obj) == 0, "%s", bpfrt_last_error());
	CHECK(bpfrt_object_load(obj, NULL) == -ENOENT);
	CHECK(strstr(bpfrt_last_error(), "host_xyz"), "%s", bpfrt_last_error());
	CHECK(bpfrt_object_find_map(obj, ".bss") == NULL); /* nothing half-loaded */
	bpfrt_object_close(obj);
	unlink(tmp);
	free(img);
}
