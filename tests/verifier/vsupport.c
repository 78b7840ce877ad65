/* What the verifier tests share: see vsupport.h. */
#include "vsupport.h"
#include "maps/map.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- maps shared by the cases ------------------------------------------ */

struct tmap tmaps[] = {
	{ "hash", BPF_MAP_TYPE_HASH, 4, 8, 16, NULL, -1 },
	{ "array", BPF_MAP_TYPE_ARRAY, 4, 16, 4, NULL, -1 },
	{ "big", BPF_MAP_TYPE_ARRAY, 4, 64, 1, NULL, -1 },
	{ "rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, NULL, -1 },
	{ "progs", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, NULL, -1 },
	{ "rodata", BPF_MAP_TYPE_ARRAY, 4, 16, 1, NULL, -1, BPF_F_RDONLY_PROG, true, ".rodata" },
	{ "ro", BPF_MAP_TYPE_ARRAY, 4, 16, 1, NULL, -1, BPF_F_RDONLY_PROG, false },
	{ "frozen", BPF_MAP_TYPE_ARRAY, 4, 16, 1, NULL, -1, 0, true },
	{ "ro4", BPF_MAP_TYPE_ARRAY, 4, 16, 4, NULL, -1, BPF_F_RDONLY_PROG, true },
	{ "rodata_rw", BPF_MAP_TYPE_ARRAY, 4, 16, 1, NULL, -1, 0, false, ".rodata.rw" },
	{ "rohash", BPF_MAP_TYPE_HASH, 4, 8, 16, NULL, -1, BPF_F_RDONLY_PROG, false },
	{ "wo", BPF_MAP_TYPE_ARRAY, 4, 16, 1, NULL, -1, BPF_F_WRONLY_PROG, false },
	{ "wohash", BPF_MAP_TYPE_HASH, 4, 8, 16, NULL, -1, BPF_F_WRONLY_PROG, false },
	{ "xdp_progs", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, NULL, -1 },
	{ "queue", BPF_MAP_TYPE_QUEUE, 0, 8, 4, NULL, -1 },
	{ "stack", BPF_MAP_TYPE_STACK, 0, 8, 4, NULL, -1 },
	{ "bloom", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 16, NULL, -1 },
	{ "lru_pcpu", BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 16, NULL, -1 },
	{ "roqueue", BPF_MAP_TYPE_QUEUE, 0, 8, 4, NULL, -1, BPF_F_RDONLY_PROG, false },
	{ "lpm", BPF_MAP_TYPE_LPM_TRIE, 8, 8, 16, NULL, -1, BPF_F_NO_PREALLOC, false },
	{ "aom", BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 4, NULL, -1, 0, false, NULL, 1 + 1 },
	{ "hom", BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 4, NULL, -1, 0, false, NULL, 1 + 1 },
	{ "pea", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, NULL, -1 },
	{ "cga", BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, NULL, -1 },
	{ "stm", BPF_MAP_TYPE_STACK_TRACE, 4, 32, 4, NULL, -1 },
	{ "pcpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, NULL, -1 },
	{ "locked", BPF_MAP_TYPE_ARRAY, 4, 16, 2, NULL, -1, 0, false, NULL, 0, 1 + 4 },
	{ "hlocked", BPF_MAP_TYPE_HASH, 4, 16, 4, NULL, -1, 0, false, NULL, 0, 1 + 0 },
	{ "urb", BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 4096, NULL, -1 },
	{ "cgs", BPF_MAP_TYPE_CGROUP_STORAGE, 16, 16, 0, NULL, -1 },
	{ "cgs2", BPF_MAP_TYPE_CGROUP_STORAGE, 8, 16, 0, NULL, -1 },
	{ "pcgs", BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 16, 8, 0, NULL, -1 },
	{ "sockmap", BPF_MAP_TYPE_SOCKMAP, 4, 8, 4, NULL, -1 },
	{ "sockhash", BPF_MAP_TYPE_SOCKHASH, 4, 8, 4, NULL, -1 },
	{ "xsks", BPF_MAP_TYPE_XSKMAP, 4, 4, 4, NULL, -1 },
	{ "devs", BPF_MAP_TYPE_DEVMAP, 4, 4, 4, NULL, -1 },
	{ "cpus", BPF_MAP_TYPE_CPUMAP, 4, 4, 4, NULL, -1 },
	{ "sks", BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, NULL, -1, BPF_F_NO_PREALLOC, false },
};
const size_t tmap_cnt = sizeof(tmaps) / sizeof(tmaps[0]);
const char rodata_image[16] = "hello\0\0\0\x2a";

void maps_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	for (size_t i = 0; i < NMAPS; i++) {
		struct tmap *m = &tmaps[i];
		const char *name = m->bpfrt_name ? m->bpfrt_name : m->name;
		BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = m->flags,
			   .inner_map = m->inner ? tmaps[m->inner - 1].map : NULL,
			   .has_spin_lock = m->lock_off > 0,
			   .spin_lock_off = m->lock_off > 0 ? (uint32_t)m->lock_off - 1 : 0);
		int err = bpfrt_map_create(m->type, name, m->key, m->value, m->max, &o, &m->map);
		uint32_t slot0 = 0;

		if (!err && m->inner)
			err = bpfrt_map_update_inner(m->map, &slot0, tmaps[m->inner - 1].map, BPF_ANY);

		if (!err && m->freeze) {
			memcpy(bpfrt_map_value_ptr(m->map, 0), rodata_image, sizeof(rodata_image));
			err = bpfrt_map_freeze(m->map);
		}
		if (err)
			fprintf(stderr, "# map %s: %s\n", m->name, bpfrt_last_error());
	}
}

int tmap_find(const char *name, size_t len)
{
	for (size_t i = 0; i < NMAPS; i++)
		if (strlen(tmaps[i].name) == len && !strncmp(tmaps[i].name, name, len))
			return (int)i;
	return -1;
}

/* ---- assembling a case ---------------------------------------------------- */

int build_case(const char *text, struct built *b, char *err, size_t errlen)
{
	size_t cap = strlen(text) * 2 + 256, n = 0;
	char *out = malloc(cap);
	const char *p = text;
	int rc;

	memset(b, 0, sizeof(*b));
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[200];
		char *op;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (eol ? 1 : 0);
		if ((op = strstr(line, "func:"))) {
			char reg[8] = "";

			sscanf(line, " lddw %%r%7[0-9]", reg);
			n += (size_t)snprintf(out + n, cap - n, "call local %s\n.insn 0x%08x%08x\n",
					      op + 5, MAGIC_FUNC, (unsigned)atoi(reg) << 8);
			continue;
		}
		if ((op = strstr(line, "map:")) || (op = strstr(line, "mapval:"))) {
			bool val = op[3] != ':';
			const char *nm = op + (val ? 7 : 4);
			const char *plus = strchr(nm, '+');
			size_t nlen = plus ? (size_t)(plus - nm) : strcspn(nm, " \t");
			int idx = tmap_find(nm, nlen);
			uint32_t off = plus ? (uint32_t)strtoul(plus + 1, NULL, 0) : 0;

			if (idx < 0 || b->ref_cnt >= 16) {
				snprintf(err, errlen, "bad map operand in '%s'", line);
				free(out);
				return -EINVAL;
			}
			b->ref_map[b->ref_cnt] = (uint32_t)idx;
			b->refs[b->ref_cnt].kind = val ? BPF_PSEUDO_MAP_VALUE : BPF_PSEUDO_MAP_FD;
			b->refs[b->ref_cnt].off = off;
			b->refs[b->ref_cnt].map = tmaps[idx].map;
			*op = 0;
			n += (size_t)snprintf(out + n, cap - n, "%s0x%llx\n", line,
					      (unsigned long long)(MAGIC_MAP | b->ref_cnt));
			b->ref_cnt++;
			continue;
		}
		n += (size_t)snprintf(out + n, cap - n, "%s\n", line);
	}
	rc = bpfrt_asm(out, &b->insns, &b->cnt);
	free(out);
	if (rc) {
		snprintf(err, errlen, "asm: %s", bpfrt_last_error());
		return rc;
	}
	for (size_t i = 0; i + 1 < b->cnt; i++) {
		struct bpf_insn *in = &b->insns[i];

		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL &&
		    in[1].code == 0 && (uint32_t)in[1].imm == MAGIC_FUNC) {
			in->code = BPF_LD | BPF_DW | BPF_IMM;
			in->dst_reg = in[1].dst_reg;
			in->src_reg = BPF_PSEUDO_FUNC;
			in[1] = (struct bpf_insn){ 0 };
			i++;
			continue;
		}
		if (in->code == (BPF_LD | BPF_DW | BPF_IMM) && !in->src_reg) {
			uint64_t v = (uint32_t)in[0].imm | (uint64_t)(uint32_t)in[1].imm << 32;

			if ((v & ~0xffull) == MAGIC_MAP) {
				uint32_t r = (uint32_t)(v & 0xff);
				struct bpfrt_map_ref *ref = &b->refs[r];
				uint64_t addr = ref->kind == BPF_PSEUDO_MAP_VALUE
					? (uint64_t)(uintptr_t)bpfrt_map_value_ptr(ref->map, 0) + ref->off
					: (uint64_t)(uintptr_t)ref->map;

				ref->insn = (uint32_t)i;
				in[0].imm = (int32_t)(uint32_t)addr;
				in[1].imm = (int32_t)(uint32_t)(addr >> 32);
			}
			i++;
		}
	}
	return 0;
}

struct bpfrt_env *load_env;

int load_verified(const char *name, enum bpfrt_prog_kind kind, uint32_t flags,
		  const struct bpfrt_map_ref *refs, uint32_t nref, const struct bpf_insn *insns,
		  size_t n, bool jit, struct bpfrt_verify_opts *vo, struct bpfrt_prog **out)
{
	struct bpfrt_prog *prog = calloc(1, sizeof(*prog));
	int err;

	if (!prog)
		return -ENOMEM;
	snprintf(prog->name, sizeof(prog->name), "%s", name);
	prog->kind = kind;
	prog->load_flags = flags;
	if (nref) {
		prog->map_refs = malloc(nref * sizeof(*refs));
		if (!prog->map_refs) {
			free(prog);
			return -ENOMEM;
		}
		memcpy(prog->map_refs, refs, nref * sizeof(*refs));
		prog->map_ref_cnt = nref;
	}
	err = bpfrt_prog_prepare(prog, insns, n,
				 &(struct bpfrt_prepare){ .jit = jit, .verify = vo, .env = load_env });
	if (err) {
		free(prog->map_refs);
		free(prog);
		return err;
	}
	*out = prog;
	return 0;
}

int load_case(const struct vcase *c, const struct built *b, bool jit,
	      struct bpfrt_prog **out, char *log, size_t log_size, uint32_t level)
{
	BPFRT_OPTS(bpfrt_verify_opts, vo, .log_buf = log, .log_size = log_size,
		   .log_level = level, .ctx_size = c->ctx_size);

	return load_verified(c->name, c->kind, c->flags, b->refs, b->ref_cnt, b->insns, b->cnt,
			     jit, &vo, out);
}

/* ---- running accepted programs ------------------------------------------------ */

struct xdp_md_ctx {
	uint32_t data, data_end, data_meta, ifindex, rxq, egress;
};

/* below 4 GiB: 16 bytes of metadata, then the 64-byte packet */
#define META_LEN 16
static uint8_t *packet;
static uint64_t ctx_buf[64];

uint64_t ctx_for(const struct vcase *c, uint64_t *len)
{
	static struct xdp_md_ctx xdp;

	if (!bpfrt_prog_kind_info(c->kind)->runs)
		return 0; /* verified only: its context is a kernel's */
	memset(ctx_buf, 0, sizeof(ctx_buf));
	*len = sizeof(ctx_buf);
	if (c->kind == BPFRT_PROG_XDP) {
#ifdef MAP_32BIT
		/* xdp_md holds u32 data/data_end: the packet must sit below 4 GiB */
		if (!packet) {
			packet = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
			if (packet == MAP_FAILED)
				packet = NULL;
		}
#endif
		if (!packet)
			return 0;
		memset(packet, 0xab, META_LEN + 64);
		xdp.data_meta = (uint32_t)(uintptr_t)packet;
		xdp.data = xdp.data_meta + META_LEN;
		xdp.data_end = xdp.data + 64;
		*len = sizeof(xdp);
		return (uint64_t)(uintptr_t)&xdp;
	}
	return (uint64_t)(uintptr_t)ctx_buf;
}

/* ---- Linux's verifier (root only) ---------------------------------------------- */

int kernel_maps_init(void)
{
	for (size_t i = 0; i < NMAPS; i++) {
		struct tmap *m = &tmaps[i];
		LIBBPF_OPTS(bpf_map_create_opts, mo);

		if (m->kfd >= 0)
			continue;
		/* Linux makes a socket storage only with BTF for its key and
		 * value, which these copies have not: the cases using it are
		 * not compared (LX_SKIP) */
		if (m->type == BPF_MAP_TYPE_SK_STORAGE)
			continue;
		mo.map_flags = m->flags;
		mo.inner_map_fd = m->inner ? (uint32_t)tmaps[m->inner - 1].kfd : 0;
		m->kfd = bpf_map_create(m->type, m->name, m->key, m->value, m->max, &mo);
		if (m->kfd < 0)
			return -errno;
		if (m->inner) {
			uint32_t k = 0, fd = (uint32_t)tmaps[m->inner - 1].kfd;

			if (bpf_map_update_elem(m->kfd, &k, &fd, 0))
				return -errno;
		}
		if (m->freeze) {
			uint32_t k = 0;

			bpf_map_update_elem(m->kfd, &k, rodata_image, 0);
			bpf_map_freeze(m->kfd);
		}
	}
	return 0;
}

int kernel_prog_type(enum bpfrt_prog_kind k)
{
	switch (k) {
	case BPFRT_PROG_UNSPEC: return BPF_PROG_TYPE_SOCKET_FILTER;
	case BPFRT_PROG_TRACEPOINT: return BPF_PROG_TYPE_TRACEPOINT;
	case BPFRT_PROG_RAW_TRACEPOINT: return BPF_PROG_TYPE_RAW_TRACEPOINT;
	case BPFRT_PROG_KPROBE: return BPF_PROG_TYPE_KPROBE;
	case BPFRT_PROG_XDP: return BPF_PROG_TYPE_XDP;
	/* the kinds whose Linux type loads without an expected attach type
	 * or attach BTF (a raw case has neither) */
	case BPFRT_PROG_KPROBE_MULTI:
	case BPFRT_PROG_UPROBE_MULTI:
	case BPFRT_PROG_USDT:
	case BPFRT_PROG_KSYSCALL: return BPF_PROG_TYPE_KPROBE;
	case BPFRT_PROG_PERF_EVENT: return BPF_PROG_TYPE_PERF_EVENT;
	case BPFRT_PROG_SCHED_CLS: return BPF_PROG_TYPE_SCHED_CLS;
	case BPFRT_PROG_SCHED_ACT: return BPF_PROG_TYPE_SCHED_ACT;
	case BPFRT_PROG_CGROUP_SKB: return BPF_PROG_TYPE_CGROUP_SKB;
	case BPFRT_PROG_CGROUP_SOCK: return BPF_PROG_TYPE_CGROUP_SOCK;
	case BPFRT_PROG_CGROUP_SYSCTL: return BPF_PROG_TYPE_CGROUP_SYSCTL;
	case BPFRT_PROG_CGROUP_DEVICE: return BPF_PROG_TYPE_CGROUP_DEVICE;
	case BPFRT_PROG_SOCK_OPS: return BPF_PROG_TYPE_SOCK_OPS;
	case BPFRT_PROG_SK_SKB: return BPF_PROG_TYPE_SK_SKB;
	case BPFRT_PROG_SK_MSG: return BPF_PROG_TYPE_SK_MSG;
	case BPFRT_PROG_SK_REUSEPORT: return BPF_PROG_TYPE_SK_REUSEPORT;
	case BPFRT_PROG_FLOW_DISSECTOR: return BPF_PROG_TYPE_FLOW_DISSECTOR;
	case BPFRT_PROG_LWT: return BPF_PROG_TYPE_LWT_IN;
	default: return -1;
	}
}

int kernel_verdict(const struct vcase *c, char *log, size_t log_size)
{
	struct built b;
	char err[256];
	int type = kernel_prog_type(c->kind), fd;
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = log, .log_size = (uint32_t)log_size,
		    .log_level = 1);

	if (type < 0 || c->ctx_size || build_case(c->text, &b, err, sizeof(err)))
		return -1;
	for (uint32_t r = 0; r < b.ref_cnt; r++) {
		struct bpf_insn *in = &b.insns[b.refs[r].insn];

		in->src_reg = b.refs[r].kind;
		in[0].imm = tmaps[b.ref_map[r]].kfd;
		in[1].imm = b.refs[r].kind == BPF_PSEUDO_MAP_VALUE ? (int32_t)b.refs[r].off : 0;
	}
	log[0] = 0;
	fd = bpf_prog_load(type, "vcase", "GPL", b.insns, b.cnt, &po);
	free(b.insns);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return 0;
}

/* ---- random numbers for the fuzzers ------------------------------------------------ */

uint64_t fz_state = 0x9e3779b97f4a7c15ull;

uint64_t fz_next(void)
{
	fz_state ^= fz_state << 13;
	fz_state ^= fz_state >> 7;
	fz_state ^= fz_state << 17;
	return fz_state;
}

uint32_t fz(uint32_t n)
{
	return (uint32_t)(fz_next() % n);
}
