/* Linux's own verifier test programs as bpfrt's conformance suite.
 *
 * tests/kernel_verifier/objects.sh builds tools/testing/selftests/bpf/
 * progs/verifier_*.c from Debian's linux-source package into
 * BUILD/kernel-verifier/obj (cached). Every program in them carries its
 * expected verdict as BTF decl tags on its function (bpf_misc.h's
 * "comment:test_expect_failure", "comment:test_expect_msg=N=text", ...;
 * read here with the selftests' test_loader rules: which tags select the
 * privileged and the unprivileged run, and what an unprivileged run
 * inherits). Each program is verified by bpfrt in the same mode:
 *
 *   privileged    loaded with BPFRT_F_ALLOW_PTR_LEAKS (Linux's
 *                 allow_ptr_leaks, which privileged loads have)
 *   unprivileged  bpfrt's default rules (no pointer leaks)
 *
 * and the verdict (accept / reject / noload: the object did not load as
 * far as the verifier / wrongret: accepted, but a program the kernel's test
 * runs for its __retval returned another value or failed in bpfrt's
 * checking interpreter) compared with the kernel's. bpfrt's messages are
 * its own, so __msg texts are shown, not matched.
 *
 * Every difference must be listed in tests/kernel_verifier/differences.txt
 * with a reason key defined in tests/kernel_verifier/reasons.txt, and every
 * listed difference must still differ in the recorded way, so the table
 * stays true. A program the kernel rejects and bpfrt accepts needs a
 * "looser-" reason with an argument (the note after the key); the
 * arguments live in tests/kernel_verifier/arguments.txt, also for programs
 * bpfrt does not load yet, and BPFRT_KV_UPDATE copies them over.
 *
 *   BPFRT_KV_UPDATE=1  rewrite differences.txt from this run: entries that
 *                      still differ the same way keep their reason and
 *                      note; new ones get their argument (arguments.txt)
 *                      or the first reason whose pattern matches bpfrt's
 *                      message, else "unreviewed" (which the check refuses)
 *   BPFRT_KV_ONE=FILE/PROG  also print bpfrt's log (level 2) of one program
 *   BPFRT_KV_LIST=1    print every case with both verdicts */
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum mode { PRIV, UNPRIV, NMODES };
/* wrongret: accepted, but the run did not return the kernel's __retval */
enum verdict { V_ACCEPT, V_REJECT, V_NOLOAD, V_WRONGRET, NVERDICTS };
static const char *const mode_name[NMODES] = { "priv", "unpriv" };
static const char *const verdict_name[NVERDICTS] = { "accept", "reject", "noload", "wrongret" };

/* One program in one mode: what the kernel's annotations say and what
 * bpfrt answered. */
struct kcase {
	char id[192];            /* FILE/PROG, FILE without verifier_ and .bpf.o */
	char sec[96];
	enum mode mode;
	enum verdict kernel;     /* V_ACCEPT or V_REJECT */
	enum verdict got;
	char msg[160];           /* the first expected __msg of this mode, if any */
	char flags[96];          /* __flag values, space-separated */
	char why[320];           /* bpfrt's message (reject, noload) */
	char retval[32];         /* __retval of this mode, "" if none */
	char btf_path[64];       /* __btf_path: the CO-RE target's object, "" if none */
	double ms;               /* bpfrt's verification time */
	int entry;               /* its differences.txt entry, -1 if none */
};

/* A program's annotations, as test_loader reads them. */
struct spec {
	bool mode[NMODES];       /* which runs the tags select */
	bool fail[NMODES];
	bool has_result[NMODES];
	bool aux;
	bool other_arch;         /* only for architectures other than x86-64 */
	char msg[NMODES][160];
	char flags[96];
	char retval[NMODES][32]; /* __retval text, "" if none */
	char btf_path[64];       /* __btf_path */
};

struct reason {
	char key[48];
	char pattern[160];       /* "-": none */
	regex_t re;
	bool has_re;
	int count;
};

struct entry {
	char id[192];
	enum mode mode;
	enum verdict kernel, got;
	char key[48];
	char note[400];
	int line;
	bool used;
};

static struct kcase *cases;
static int ncases, cap_cases;
static struct reason reasons[64];
static int nreasons;
static struct entry *entries;
static int nentries;
static int files_built, files_skipped, unpriv_skipped, aux_skipped, arch_skipped;
static char setup_error[512];
#define MAX_AUX 16
static char aux_names[MAX_AUX][128]; /* the current file's auxiliary programs */
static int naux;
static double verify_seconds;
static int runs;                 /* accepted programs run for their __retval */

/* ---- files ------------------------------------------------------------------ */

static const char *src_path(const char *rel)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", rel);
	if (access(buf, R_OK) == 0)
		return buf;
	snprintf(buf, sizeof(buf), "%s", tl_test_path("../../"));
	strncat(buf, rel, sizeof(buf) - strlen(buf) - 1);
	return buf;
}

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = '\0';
	if (s[0] == ' ' || s[0] == '\t') {
		size_t k = strspn(s, " \t");

		memmove(s, s + k, n - k + 1);
	}
}

/* reasons.txt: "key | pattern | explanation", '#' comments. */
static int read_reasons(void)
{
	FILE *f = fopen(src_path("tests/kernel_verifier/reasons.txt"), "r");
	char line[1024];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && nreasons < (int)(sizeof(reasons) / sizeof(reasons[0]))) {
		struct reason *r = &reasons[nreasons];
		char *a, *b;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		a = strstr(line, " | ");
		b = a ? strstr(a + 3, " | ") : NULL;
		if (!a || !b)
			continue;
		*a = *b = '\0';
		snprintf(r->key, sizeof(r->key), "%.47s", line);
		snprintf(r->pattern, sizeof(r->pattern), "%.159s", a + 3);
		trim(r->key);
		trim(r->pattern);
		r->has_re = strcmp(r->pattern, "-") && !regcomp(&r->re, r->pattern, REG_EXTENDED | REG_NOSUB);
		nreasons++;
	}
	fclose(f);
	return 0;
}

static struct reason *find_reason(const char *key)
{
	for (int i = 0; i < nreasons; i++)
		if (!strcmp(reasons[i].key, key))
			return &reasons[i];
	return NULL;
}

static int parse_enum(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* differences.txt: "FILE/PROG MODE KERNEL BPFRT KEY [note]". */
static int read_entries(void)
{
	FILE *f = fopen(src_path("tests/kernel_verifier/differences.txt"), "r");
	char line[1024];
	int cap = 0, lineno = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char id[192], mode[16], kernel[16], got[16], key[48];
		int off = 0;
		struct entry *e;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%191s %15s %15s %15s %47s %n", id, mode, kernel, got, key, &off) < 5)
			continue;
		if (nentries == cap) {
			cap = cap ? 2 * cap : 256;
			entries = realloc(entries, cap * sizeof(*entries));
			if (!entries)
				return -ENOMEM;
		}
		e = &entries[nentries++];
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", id);
		e->mode = parse_enum(mode, mode_name, NMODES);
		e->kernel = parse_enum(kernel, verdict_name, NVERDICTS);
		e->got = parse_enum(got, verdict_name, NVERDICTS);
		snprintf(e->key, sizeof(e->key), "%s", key);
		snprintf(e->note, sizeof(e->note), "%s", line + off);
		trim(e->note);
		e->line = lineno;
	}
	fclose(f);
	return 0;
}

/* arguments.txt: "FILE/PROG MODE KEY note", the argued reasons of programs
 * the kernel rejects and bpfrt accepts (or will once it loads them), which
 * BPFRT_KV_UPDATE copies into differences.txt when such a difference
 * appears: a landing that makes them reachable needs no new review. */
static struct entry *args;
static int nargs;

static int read_arguments(void)
{
	FILE *f = fopen(src_path("tests/kernel_verifier/arguments.txt"), "r");
	char line[1024];
	int cap = 0, lineno = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char id[192], mode[16], key[48];
		int off = 0;
		struct entry *e;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%191s %15s %47s %n", id, mode, key, &off) < 3)
			continue;
		if (nargs == cap) {
			cap = cap ? 2 * cap : 64;
			args = realloc(args, cap * sizeof(*args));
			if (!args)
				return -ENOMEM;
		}
		e = &args[nargs++];
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", id);
		e->mode = parse_enum(mode, mode_name, NMODES);
		e->kernel = V_REJECT;
		e->got = V_ACCEPT;
		snprintf(e->key, sizeof(e->key), "%s", key);
		snprintf(e->note, sizeof(e->note), "%s", line + off);
		trim(e->note);
		e->line = lineno;
	}
	fclose(f);
	return 0;
}

static const struct entry *find_argument(const char *id, enum mode mode)
{
	for (int i = 0; i < nargs; i++)
		if (args[i].mode == mode && !strcmp(args[i].id, id))
			return &args[i];
	return NULL;
}

/* ---- the kernel's expectations (BTF decl tags) ------------------------------- */

static bool has_pfx(const char *s, const char *pfx, const char **rest)
{
	size_t n = strlen(pfx);

	if (strncmp(s, pfx, n))
		return false;
	if (rest)
		*rest = s + n;
	return true;
}

/* "comment:test_expect_msg=COUNTER=text": the text. */
static const char *skip_counter(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? eq + 1 : s;
}

static void add_flag(struct spec *sp, const char *v)
{
	size_t n = strlen(sp->flags);

	snprintf(sp->flags + n, sizeof(sp->flags) - n, "%s%s", n ? " " : "", v);
}

/* test_loader's rules: __success/__failure/__msg/__retval/__auxiliary
 * select the privileged run, their _unpriv forms the unprivileged one,
 * none at all the privileged one; the unprivileged run inherits the
 * privileged verdict when it has none of its own. */
static void read_spec(const struct btf *btf, int func_id, struct spec *sp)
{
	bool arch_x86 = false, arch_any = false;
	const char *v;

	memset(sp, 0, sizeof(*sp));
	for (uint32_t i = 1; i < btf__type_cnt(btf); i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const char *s;

		if (!btf_is_decl_tag(t) || (int)t->type != func_id || btf_decl_tag(t)->component_idx != -1)
			continue;
		s = btf__str_by_offset(btf, t->name_off);
		if (!strcmp(s, "comment:test_expect_failure")) {
			sp->fail[PRIV] = sp->mode[PRIV] = sp->has_result[PRIV] = true;
		} else if (!strcmp(s, "comment:test_expect_success")) {
			sp->fail[PRIV] = false;
			sp->mode[PRIV] = sp->has_result[PRIV] = true;
		} else if (!strcmp(s, "comment:test_expect_failure_unpriv")) {
			sp->fail[UNPRIV] = sp->mode[UNPRIV] = sp->has_result[UNPRIV] = true;
		} else if (!strcmp(s, "comment:test_expect_success_unpriv")) {
			sp->fail[UNPRIV] = false;
			sp->mode[UNPRIV] = sp->has_result[UNPRIV] = true;
		} else if (!strcmp(s, "comment:test_auxiliary") || !strcmp(s, "comment:test_auxiliary_unpriv")) {
			sp->aux = true;
		} else if (has_pfx(s, "comment:test_expect_msg_unpriv=", &v)) {
			sp->mode[UNPRIV] = true;
			if (!sp->msg[UNPRIV][0])
				snprintf(sp->msg[UNPRIV], sizeof(sp->msg[UNPRIV]), "%s", skip_counter(v));
		} else if (has_pfx(s, "comment:test_expect_msg=", &v)) {
			sp->mode[PRIV] = true;
			if (!sp->msg[PRIV][0])
				snprintf(sp->msg[PRIV], sizeof(sp->msg[PRIV]), "%s", skip_counter(v));
		} else if (has_pfx(s, "comment:test_retval_unpriv=", &v)) {
			sp->mode[UNPRIV] = true;
			snprintf(sp->retval[UNPRIV], sizeof(sp->retval[UNPRIV]), "%s", v);
		} else if (has_pfx(s, "comment:test_retval=", &v)) {
			sp->mode[PRIV] = true;
			snprintf(sp->retval[PRIV], sizeof(sp->retval[PRIV]), "%s", v);
		} else if (has_pfx(s, "comment:test_expect_xlated_unpriv=", NULL) ||
			   has_pfx(s, "comment:test_jited_unpriv=", NULL)) {
			sp->mode[UNPRIV] = true;
		} else if (has_pfx(s, "comment:test_expect_xlated=", NULL) ||
			   has_pfx(s, "comment:test_jited=", NULL)) {
			sp->mode[PRIV] = true;
		} else if (has_pfx(s, "comment:test_btf_path=", &v)) {
			snprintf(sp->btf_path, sizeof(sp->btf_path), "%s", v);
		} else if (has_pfx(s, "comment:test_prog_flags=", &v)) {
			add_flag(sp, v);
		} else if (has_pfx(s, "comment:test_arch=", &v)) {
			arch_any = true;
			arch_x86 |= !strcmp(v, "X86_64");
		}
	}
	if (!sp->mode[PRIV] && !sp->mode[UNPRIV])
		sp->mode[PRIV] = true;
	if (!sp->has_result[UNPRIV])
		sp->fail[UNPRIV] = sp->fail[PRIV];
	if (!sp->msg[UNPRIV][0])
		memcpy(sp->msg[UNPRIV], sp->msg[PRIV], sizeof(sp->msg[PRIV]));
	if (!sp->retval[UNPRIV][0])
		memcpy(sp->retval[UNPRIV], sp->retval[PRIV], sizeof(sp->retval[PRIV]));
	sp->other_arch = arch_any && !arch_x86;
}

/* A BTF map definition's __uint(name, N) member: N (-1 if absent). */
static long map_def_uint(const struct btf *btf, const struct btf_type *def, const char *name)
{
	const struct btf_member *m = btf_members(def);

	for (int i = 0; i < btf_vlen(def); i++, m++) {
		const struct btf_type *t;

		if (strcmp(btf__str_by_offset(btf, m->name_off), name))
			continue;
		t = btf__type_by_id(btf, m->type);
		if (!t || !btf_is_ptr(t))
			return -1;
		t = btf__type_by_id(btf, t->type);
		return t && btf_is_array(t) ? (long)btf_array(t)->nelems : -1;
	}
	return -1;
}

/* test_loader runs the unprivileged case only if every map of the object
 * is one unprivileged users may create (its is_unpriv_capable_map list:
 * hash without BPF_F_ZERO_SEED, percpu hash, hash of maps, arrays of all
 * kinds, ringbufs, prog/cgroup/perf-event arrays, cgroup storage). */
static bool maps_unpriv_capable(const struct btf *btf)
{
	int sec = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	const struct btf_type *ds;
	const struct btf_var_secinfo *vs;

	if (sec < 0)
		return true;
	ds = btf__type_by_id(btf, sec);
	vs = btf_var_secinfos(ds);
	for (int i = 0; i < btf_vlen(ds); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		const struct btf_type *def = var ? btf__type_by_id(btf, var->type) : NULL;
		long type, flags;

		while (def && (btf_is_typedef(def) || btf_is_const(def) || btf_is_volatile(def)))
			def = btf__type_by_id(btf, def->type);
		if (!def || !btf_is_struct(def))
			continue;
		type = map_def_uint(btf, def, "type");
		flags = map_def_uint(btf, def, "map_flags");
		switch (type) {
		case 1: case 5: case 13: /* hash, percpu hash, hash of maps */
			if (flags > 0 && (flags & 0x40)) /* BPF_F_ZERO_SEED */
				return false;
			break;
		case 19: case 21: case 2: case 27: case 3: case 8: case 6: case 31: case 12: case 4:
			/* percpu cgroup storage, cgroup storage, array, ringbuf,
			 * prog array, cgroup array, percpu array, user ringbuf,
			 * array of maps, perf event array */
			break;
		default:
			return false;
		}
	}
	return true;
}

static struct kcase *new_case(void)
{
	if (ncases == cap_cases) {
		cap_cases = cap_cases ? 2 * cap_cases : 1024;
		cases = realloc(cases, cap_cases * sizeof(*cases));
		if (!cases)
			return NULL;
	}
	memset(&cases[ncases], 0, sizeof(cases[ncases]));
	cases[ncases].entry = -1;
	return &cases[ncases++];
}

/* The programs of an object as libbpf finds them (global functions in
 * executable sections other than .text), with their annotations: cases
 * appended for the file's modes. Returns the index of its first case. */
static int collect_cases(const char *path, const char *file)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), first = ncases;
	struct btf *btf = btf__parse_elf(path, NULL);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool unpriv_ok;

	if (!elf || !btf || elf_getshdrstrndx(elf, &shstrndx)) {
		snprintf(setup_error, sizeof(setup_error), "%.400s: cannot read ELF/BTF", path);
		goto out;
	}
	unpriv_ok = maps_unpriv_capable(btf);
	naux = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			GElf_Shdr psh;
			Elf_Scn *ps;
			const char *name, *sec;
			struct spec sp;
			int func;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    GELF_ST_BIND(sym.st_info) != STB_GLOBAL || sym.st_shndx == SHN_UNDEF)
				continue;
			ps = elf_getscn(elf, sym.st_shndx);
			if (!ps || !gelf_getshdr(ps, &psh) || !(psh.sh_flags & SHF_EXECINSTR))
				continue;
			sec = elf_strptr(elf, shstrndx, psh.sh_name);
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!sec || !name || !strcmp(sec, ".text"))
				continue;
			func = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
			if (func < 0)
				continue;
			read_spec(btf, func, &sp);
			if (sp.aux) { /* loaded for the others (tail-call targets), no test itself */
				aux_skipped++;
				if (naux < MAX_AUX)
					snprintf(aux_names[naux++], sizeof(aux_names[0]), "%s", name);
				continue;
			}
			if (sp.other_arch) {
				arch_skipped++;
				continue;
			}
			for (int m = 0; m < NMODES; m++) {
				struct kcase *c;

				if (!sp.mode[m])
					continue;
				if (m == UNPRIV && !unpriv_ok) {
					unpriv_skipped++;
					continue;
				}
				c = new_case();
				if (!c)
					goto out;
				snprintf(c->id, sizeof(c->id), "%s/%s", file, name);
				snprintf(c->sec, sizeof(c->sec), "%s", sec);
				c->mode = m;
				c->kernel = sp.fail[m] ? V_REJECT : V_ACCEPT;
				snprintf(c->msg, sizeof(c->msg), "%s", sp.msg[m]);
				snprintf(c->flags, sizeof(c->flags), "%s", sp.flags);
				snprintf(c->retval, sizeof(c->retval), "%s", sp.retval[m]);
				snprintf(c->btf_path, sizeof(c->btf_path), "%s", sp.btf_path);
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	btf__free(btf);
	return first;
}

/* ---- bpfrt's verdicts --------------------------------------------------------- */

static void one_line(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
	for (char *p = dst; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A message without the build directory (the table must not depend on it). */
static void clean_msg(char *dst, size_t n, const char *msg, const char *objdir)
{
	size_t k = strlen(objdir);
	const char *p;

	one_line(dst, n, msg);
	while (k && (p = strstr(dst, objdir)))
		memmove((char *)p, p + k + 1, strlen(p + k + 1) + 1);
}

static bool is_aux(const char *name)
{
	for (int i = 0; i < naux; i++)
		if (!strcmp(aux_names[i], name))
			return true;
	return false;
}

/* The kernel's runner fills the 48-byte array values of these two files
 * before their runs (struct test_val: index 28, foo[6] 0xabcdef12, what
 * their __retval expectations read back); the same here. */
static void init_maps_as_the_runner(struct bpfrt_object *obj, const char *path)
{
	struct { uint32_t index; int32_t foo[11]; } val = { .index = (6 + 1) * 4 };
	const char *base = strrchr(path, '/');
	uint32_t key = 0;

	base = base ? base + 1 : path;
	if (strcmp(base, "verifier_array_access.bpf.o") && strcmp(base, "verifier_value_ptr_arith.bpf.o"))
		return;
	val.foo[6] = (int32_t)0xabcdef12u;
	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); m; m = bpfrt_object_next_map(obj, m))
		if (bpfrt_map_type(m) == BPF_MAP_TYPE_ARRAY && bpfrt_map_value_size(m) == sizeof(val) &&
		    bpfrt_map_key_size(m) == sizeof(key))
			bpfrt_map_update_elem(m, &key, &val, 0);
}

/* The verifier budget of every load here: Linux's 1M is the same verdict
 * at four times the cost. The kernel's verifier tests are small programs
 * (the largest bpfrt accepts walks well under this); the few it rejects
 * for a precision gap exhaust any budget (without a cap they cost most of
 * the suite's time, under ASan minutes), and a program that runs out is
 * rejected either way, so no verdict depends on the difference. */
#define SUITE_PROCESSED_INSNS 250000

static struct bpfrt_env *suite_env(void)
{
	static struct bpfrt_env *env;

	if (!env) {
		struct bpfrt_env_opts eo = { .sz = sizeof(eo),
					     .max_processed_insns = SUITE_PROCESSED_INSNS };

		if (bpfrt_env_new(&eo, &env))
			env = NULL; /* the default environment, Linux's budget */
	}
	return env;
}

/* Opens and loads, verified (the loader's work, maps, relocations, kfunc
 * and helper resolution, the structural validator, the verifier), the
 * file with only `only` and the auxiliary programs autoloaded, as the
 * kernel's harness loads each test; log: the level-2 log, or NULL. */
static int load_object(const char *path, enum mode mode, const char *only, const char *btf_path,
		       char *log, struct bpfrt_object **obj)
{
	char btf[PATH_MAX + 80];
	const char *dir = strrchr(path, '/');
	struct bpfrt_object_open_opts oo = { .sz = sizeof(oo) };
	struct bpfrt_object_load_opts lo = { .sz = sizeof(lo),
					     .prog_flags = mode == PRIV ? BPFRT_F_ALLOW_PTR_LEAKS : 0,
					     .log_buf = log, .log_size = log ? 1 << 20 : 0,
					     .log_level = log ? 2 : 0, .env = suite_env() };
	int err;

	/* __btf_path: the object objects.sh built into ../btf, as the
	 * kernel's harness hands it to libbpf (btf_custom_path) */
	if (btf_path[0] && dir) {
		snprintf(btf, sizeof(btf), "%.*s/../btf/%s", (int)(dir - path), path, btf_path);
		oo.btf_custom_path = btf;
	}
	err = bpfrt_object_open(path, &oo, obj);
	if (err)
		return err;
	for (struct bpfrt_prog *p = bpfrt_object_next_prog(*obj, NULL); p;
	     p = bpfrt_object_next_prog(*obj, p)) {
		const char *name = bpfrt_prog_name(p);

		bpfrt_prog_set_autoload(p, !strcmp(name, only) || is_aux(name));
	}
	err = bpfrt_object_load(*obj, &lo);
	if (!err)
		init_maps_as_the_runner(*obj, path);
	return err;
}

/* A __retval text as the kernel's harness reads it: a decimal or 0x hex
 * number, or one of bpf_misc.h's names. */
static bool parse_retval(const char *s, int *val)
{
	static const struct { const char *name; int val; } named[] = {
		{ "INT_MIN", INT_MIN }, { "POINTER_VALUE", (int)0xcafe4a11u }, { "TEST_DATA_LEN", 64 },
	};
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(s, named[i].name)) {
			*val = named[i].val;
			return true;
		}
	errno = 0;
	v = !strncmp(s, "0x", 2) ? strtol(s + 2, &end, 16) : strtol(s, &end, 10);
	if (errno || *end)
		return false;
	*val = (int)v;
	return true;
}

/* Runs an accepted program the kernel's test expects to return __retval
 * as the kernel's harness does (once, on 64 zero bytes of packet for the
 * packet kinds) in the checking interpreter, which also stops any access
 * the verifier should not have allowed (packet kinds). A different result or a failed
 * run makes the verdict wrongret. POINTER_VALUE means "some pointer" to
 * the harness, which then does not compare. */
static void run_case(struct kcase *c, struct bpfrt_prog *prog)
{
	static uint8_t data[64];
	struct bpfrt_test_run_opts o = { .sz = sizeof(o), .mode = BPFRT_EXEC_CHECKED };
	const struct bpfrt_prog_kind_info *k = bpfrt_prog_kind_info(bpfrt_prog_kind(prog));
	int err, want = 0;

	/* only the packet kinds for now: the others' test runs need the
	 * context size of a verified (not trusted) load */
	if (!parse_retval(c->retval, &want) || want == (int)0xcafe4a11u || !k || !k->packet)
		return;
	o.data_in = data;
	o.data_size_in = sizeof(data);
	err = bpfrt_prog_test_run_opts(prog, &o);
	runs++;
	if (!err && want == (int)(uint32_t)o.retval)
		return;
	c->got = V_WRONGRET;
	if (err)
		snprintf(c->why, sizeof(c->why), "%.180s: the run failed: %.120s", c->id, bpfrt_last_error());
	else
		snprintf(c->why, sizeof(c->why), "%.180s: returned %d, the kernel's test expects %s",
			 c->id, (int)(uint32_t)o.retval, c->retval);
	for (char *p = c->why; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
}

/* bpfrt's verdict on one case: the object loaded (verified: only the
 * program and the file's auxiliary programs autoloaded), or the load's
 * error: a refusal naming the program and an instruction is the verifier
 * or the validator refusing its code; anything else kept it from them. */
static void verify_case(struct kcase *c, struct bpfrt_object *obj, int err, const char *objdir,
			const char *log, double ms)
{
	const char *name = strchr(c->id, '/') + 1;
	const char *show = getenv("BPFRT_KV_ONE");
	struct bpfrt_prog *prog;
	char own[256];

	c->ms = ms;
	verify_seconds += ms / 1e3;
	if (err) {
		char cause[200];
		const char *at;

		/* "program NAME (section S): NAME: ..." or "...): insn N: ...": the
		 * validator or the verifier refusing its code; the linker's
		 * causes (maps, kfuncs, relocations) name the object instead,
		 * and a poisoned CO-RE relocation is the loader's */
		snprintf(own, sizeof(own), "program %s (section ", name);
		snprintf(cause, sizeof(cause), "): %s: ", name);
		clean_msg(c->why, sizeof(c->why), bpfrt_last_error(), objdir);
		at = strstr(c->why, own);
		c->got = at && (strstr(at, cause) || strstr(at, "): insn ")) &&
			 !strstr(c->why, "CO-RE relocation") ? V_REJECT : V_NOLOAD;
	} else if (!(prog = bpfrt_object_find_prog(obj, name))) {
		c->got = V_NOLOAD;
		snprintf(c->why, sizeof(c->why), "no program %s after load", name);
	} else {
		c->got = V_ACCEPT;
		if (c->kernel == V_ACCEPT && c->retval[0])
			run_case(c, prog);
	}
	if (show && !strcmp(show, c->id))
		printf("# %s %s: %s: %s\n%s\n", c->id, mode_name[c->mode], verdict_name[c->got], c->why,
		       log ? log : "");
}

/* The file's cases of one mode. */
static void verify_mode(const char *path, const char *objdir, int first, int last, enum mode mode,
			const char *one)
{
	static char log[1 << 20];

	for (int i = first; i < last; i++) {
		struct bpfrt_object *obj = NULL;
		bool show = one && !strcmp(one, cases[i].id);
		double t0;
		int err;

		if (cases[i].mode != mode)
			continue;
		log[0] = '\0';
		t0 = now_ms();
		err = load_object(path, mode, strchr(cases[i].id, '/') + 1, cases[i].btf_path,
				  show ? log : NULL, &obj);
		verify_case(&cases[i], obj, err, objdir, show ? log : NULL, now_ms() - t0);
		bpfrt_object_close(obj);
	}
}

/* ---- the run --------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool build_objects(char *objdir, size_t n)
{
	char cmd[PATH_MAX * 2], line[512];
	/* BPFRT_KV_OBJECTS: a cache shared by several builds (the BPF objects
	 * are the same for every one; tests/run.sh sets it) */
	const char *out = getenv("BPFRT_KV_OBJECTS") ? getenv("BPFRT_KV_OBJECTS") :
			  tl_test_path("../kernel-verifier");
	char outdir[PATH_MAX - 8];
	FILE *p;
	int rc;

	snprintf(outdir, sizeof(outdir), "%s", out);
	snprintf(cmd, sizeof(cmd), "sh '%s' '%s' 2>&1", src_path("tests/kernel_verifier/objects.sh"), outdir);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(setup_error, sizeof(setup_error), "popen: %s", strerror(errno));
		return false;
	}
	while (fgets(line, sizeof(line), p)) {
		trim(line);
		if (sscanf(line, "built %d, skipped %d", &files_built, &files_skipped) == 2)
			continue;
		snprintf(setup_error, sizeof(setup_error), "%s", line);
	}
	rc = pclose(p);
	if (rc) {
		if (!setup_error[0])
			snprintf(setup_error, sizeof(setup_error), "objects.sh failed (status %d)", rc);
		return false;
	}
	snprintf(objdir, n, "%s/obj", outdir);
	return true;
}

static bool ran;

static void run_all(void)
{
	char objdir[PATH_MAX + 8], **names = NULL;
	const char *one = getenv("BPFRT_KV_ONE");
	FILE *ls;
	char cmd[PATH_MAX + 64], line[PATH_MAX];
	int nnames = 0;

	if (ran)
		return;
	ran = true;
	elf_version(EV_CURRENT);
	if (read_reasons() || read_entries() || read_arguments()) {
		snprintf(setup_error, sizeof(setup_error),
			 "tests/kernel_verifier/{reasons,differences,arguments}.txt unreadable");
		return;
	}
	if (!build_objects(objdir, sizeof(objdir)))
		return;
	snprintf(cmd, sizeof(cmd), "ls '%s'", objdir);
	ls = popen(cmd, "r");
	while (ls && fgets(line, sizeof(line), ls)) {
		trim(line);
		if (strlen(line) > 6 && !strcmp(line + strlen(line) - 6, ".bpf.o")) {
			names = realloc(names, (nnames + 1) * sizeof(*names));
			names[nnames++] = strdup(line);
		}
	}
	if (ls)
		pclose(ls);
	qsort(names, nnames, sizeof(*names), cmp_str);
	for (int f = 0; f < nnames; f++) {
		char path[PATH_MAX * 2], file[128];
		int first;

		snprintf(path, sizeof(path), "%s/%s", objdir, names[f]);
		snprintf(file, sizeof(file), "%s", names[f] + (strncmp(names[f], "verifier_", 9) ? 0 : 9));
		file[strlen(file) - 6] = '\0';
		first = collect_cases(path, file);
		verify_mode(path, objdir, first, ncases, PRIV, one);
		verify_mode(path, objdir, first, ncases, UNPRIV, one);
		free(names[f]);
	}
	free(names);
	/* each case to its entry */
	for (int i = 0; i < ncases; i++)
		for (int e = 0; e < nentries; e++)
			if (!entries[e].used && entries[e].mode == cases[i].mode && !strcmp(entries[e].id, cases[i].id)) {
				cases[i].entry = e;
				entries[e].used = true;
				break;
			}
}

static bool differs(const struct kcase *c)
{
	return c->kernel != c->got;
}

/* ---- rewriting the table ---------------------------------------------------------- */

static const char *classify(const struct kcase *c, const char **note)
{
	char own[256];

	*note = "";
	if (c->got == V_ACCEPT) {
		/* the kernel rejects it: only a person may argue it safe */
		const struct entry *a = find_argument(c->id, c->mode);

		if (!a)
			return "unreviewed";
		*note = a->note;
		return a->key;
	}
	snprintf(own, sizeof(own), "program %s ", strchr(c->id, '/') + 1);
	if (c->got == V_NOLOAD && strstr(c->why, "program ") && !strstr(c->why, own))
		return "other-program-in-file";
	for (int i = 0; i < nreasons; i++)
		if (reasons[i].has_re && !regexec(&reasons[i].re, c->why, 0, NULL, 0))
			return reasons[i].key;
	return "unreviewed";
}

static void update_table(void)
{
	const char *path = src_path("tests/kernel_verifier/differences.txt");
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "# Where bpfrt's verifier answers Linux's verifier test programs\n"
		   "# (tools/testing/selftests/bpf/progs/verifier_*.c) differently from\n"
		   "# their annotations; checked by tests/test_kernel_verifier.c, reason keys\n"
		   "# in reasons.txt. Regenerate with BPFRT_KV_UPDATE=1 (keeps reasons and\n"
		   "# notes of entries that still differ the same way).\n"
		   "# FILE/PROGRAM MODE KERNEL BPFRT REASON [note]\n");
	for (int i = 0; i < ncases; i++) {
		const struct kcase *c = &cases[i];
		const struct entry *e = c->entry >= 0 ? &entries[c->entry] : NULL;
		bool keep = e && e->kernel == c->kernel && e->got == c->got;
		const char *key, *note;

		if (!differs(c))
			continue;
		key = classify(c, &note);
		/* the automatic keys follow the message: a program that no
		 * longer fails for another program's sake, or one nobody has
		 * filed yet, is filed anew */
		if (keep && (!strcmp(e->key, "other-program-in-file") || !strcmp(e->key, "unreviewed")) &&
		    strcmp(key, e->key))
			keep = false;
		/* so does a key with a pattern bpfrt's message no longer matches
		 * (the program now fails for another reason) */
		if (keep && c->got != V_ACCEPT) {
			const struct reason *r = find_reason(e->key);

			if (r && r->has_re && regexec(&r->re, c->why, 0, NULL, 0))
				keep = false;
		}
		if (keep) {
			key = e->key;
			note = e->note;
		}
		fprintf(f, "%s %s %s %s %s", c->id, mode_name[c->mode], verdict_name[c->kernel],
			verdict_name[c->got], key);
		if (note[0])
			fprintf(f, " %s", note);
		fprintf(f, "\n");
	}
	fclose(f);
	if (rename(tmp, path) == 0)
		printf("# rewrote %s\n", path);
}

/* ---- tests ------------------------------------------------------------------------- */

/* The verifier is the same code on every architecture, and the objects
 * are built for x86-64 (__TARGET_ARCH_x86): the native suite runs it. */
__attribute__((constructor)) static void only_native(void)
{
#if !defined(__x86_64__)
	tl_skip_all("the verifier is the same code on every architecture: the native x86-64 suite runs it");
#endif
}

static bool ready(void)
{
	run_all();
	if (files_built == 0 && !ncases) {
		tl_skip("no kernel verifier test objects: %s", setup_error[0] ? setup_error : "none built");
		return false;
	}
	return true;
}

TEST(kernel_verifier_objects_build)
{
	if (!ready())
		return;
	CHECK(files_built > 0, "no verifier_*.c built");
	CHECK_EQ(files_skipped, 0, "files that did not compile (BUILD/kernel-verifier/obj/*.skip)");
	CHECK(ncases > 0, "no annotated programs read");
	printf("# %d files built, %d not; %d cases (program x mode); %d auxiliary programs, "
	       "%d for other architectures, %d unprivileged runs the kernel's harness skips (map types); "
	       "verification took %.1f s; %d accepted programs run for their __retval\n", files_built,
	       files_skipped, ncases, aux_skipped, arch_skipped, unpriv_skipped, verify_seconds, runs);
	if (getenv("BPFRT_KV_LIST"))
		for (int i = 0; i < ncases; i++)
			printf("# %-60s %-6s kernel %-6s bpfrt %-6s %6.1f ms %s%s%s%s%s\n", cases[i].id,
			       mode_name[cases[i].mode], verdict_name[cases[i].kernel],
			       verdict_name[cases[i].got], cases[i].ms, cases[i].why,
			       cases[i].retval[0] ? " retval " : "", cases[i].retval, "", "");
}

/* Counts by outcome and by reason, then every difference with no entry. */
TEST(kernel_verifier_verdicts_match_or_recorded)
{
	int matched[NMODES] = { 0 }, total[NMODES] = { 0 }, unrecorded = 0, shown = 0;

	if (!ready())
		return;
	if (getenv("BPFRT_KV_UPDATE"))
		update_table();
	for (int i = 0; i < ncases; i++) {
		const struct kcase *c = &cases[i];
		const struct entry *e = c->entry >= 0 ? &entries[c->entry] : NULL;
		struct reason *r = e ? find_reason(e->key) : NULL;

		total[c->mode]++;
		if (!differs(c)) {
			matched[c->mode]++;
			continue;
		}
		if (r && e->kernel == c->kernel && e->got == c->got) {
			r->count++;
			continue;
		}
		unrecorded++;
		if (shown++ < 40)
			printf("# unrecorded: %s %s kernel %s, bpfrt %s%s%s (kernel's message: \"%s\") %s%s\n",
			       c->id, mode_name[c->mode], verdict_name[c->kernel], verdict_name[c->got],
			       c->why[0] ? ": " : "", c->why, c->msg,
			       e && !r ? "unknown reason key " : "", e && !r ? e->key : "");
	}
	printf("# privileged: %d of %d matched (%.1f%%); unprivileged: %d of %d matched (%.1f%%); "
	       "all: %d of %d (%.1f%%)\n", matched[PRIV], total[PRIV],
	       total[PRIV] ? 100.0 * matched[PRIV] / total[PRIV] : 0.0, matched[UNPRIV], total[UNPRIV],
	       total[UNPRIV] ? 100.0 * matched[UNPRIV] / total[UNPRIV] : 0.0,
	       matched[PRIV] + matched[UNPRIV], ncases,
	       ncases ? 100.0 * (matched[PRIV] + matched[UNPRIV]) / ncases : 0.0);
	for (int i = 0; i < nreasons; i++)
		if (reasons[i].count)
			printf("# recorded %-28s %d\n", reasons[i].key, reasons[i].count);
	CHECK_EQ(unrecorded, 0, "differences not in tests/kernel_verifier/differences.txt "
		 "(BPFRT_KV_UPDATE=1 rewrites it; review what it marks unreviewed)");
}

/* Every entry must still be a difference of the recorded shape. */
TEST(kernel_verifier_recorded_differences_still_differ)
{
	int stale = 0;

	if (!ready())
		return;
	for (int e = 0; e < nentries; e++) {
		const struct entry *en = &entries[e];
		const struct kcase *c = NULL;

		for (int i = 0; i < ncases; i++)
			if (cases[i].entry == e)
				c = &cases[i];
		if (c && differs(c) && c->kernel == en->kernel && c->got == en->got)
			continue;
		stale++;
		if (stale <= 40)
			printf("# stale: differences.txt:%d %s %s: %s\n", en->line, en->id, mode_name[en->mode],
			       !c ? "no such case" : !differs(c) ? "now matches the kernel" : "verdicts changed");
	}
	CHECK_EQ(stale, 0, "entries of tests/kernel_verifier/differences.txt that no longer hold");
}

/* Every argument must be about a case the kernel rejects (a typo, or a
 * program the kernel's sources dropped or now accept, would leave an
 * argument for nothing), with a looser- reason and a note. */
TEST(kernel_verifier_arguments_name_rejected_cases)
{
	int bad = 0;

	if (!ready())
		return;
	for (int a = 0; a < nargs; a++) {
		const struct kcase *c = NULL;

		for (int i = 0; i < ncases; i++)
			if (cases[i].mode == args[a].mode && !strcmp(cases[i].id, args[a].id))
				c = &cases[i];
		if (c && c->kernel == V_REJECT && !strncmp(args[a].key, "looser-", 7) &&
		    find_reason(args[a].key) && args[a].note[0])
			continue;
		bad++;
		printf("# arguments.txt:%d %s %s: %s\n", args[a].line, args[a].id, mode_name[args[a].mode],
		       !c ? "no such case" : c->kernel != V_REJECT ? "the kernel accepts it"
		       : "needs a defined looser- reason and a note");
	}
	CHECK_EQ(bad, 0, "entries of tests/kernel_verifier/arguments.txt about no rejected case");
}

/* A program the kernel rejects and bpfrt accepts is a possible hole: its
 * entry must argue why it is safe ("looser-" reasons, with a note). */
TEST(kernel_verifier_no_unargued_unsafe_accept)
{
	int unargued = 0, argued = 0;

	if (!ready())
		return;
	for (int i = 0; i < ncases; i++) {
		const struct kcase *c = &cases[i];
		const struct entry *e = c->entry >= 0 ? &entries[c->entry] : NULL;

		if (c->kernel != V_REJECT || c->got != V_ACCEPT)
			continue;
		if (e && !strncmp(e->key, "looser-", 7) && find_reason(e->key) && e->note[0]) {
			argued++;
			continue;
		}
		unargued++;
		if (unargued <= 40)
			printf("# accepted, kernel rejects: %s %s (kernel's message: \"%s\")\n", c->id,
			       mode_name[c->mode], c->msg);
	}
	printf("# kernel rejects, bpfrt accepts: %d argued, %d not\n", argued, unargued);
	CHECK_EQ(unargued, 0, "programs the kernel rejects that bpfrt accepts without an argued reason");
}
