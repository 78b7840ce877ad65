/* libbpf's section names and the kinds they map to, written down apart
 * from the kind table (every name of libbpf's section_defs[], and every
 * name of the table has a row here); the kernel-only kinds' context
 * rules, one accepted and one refused access per kind at least (the field
 * rules of Linux's is_valid_access callbacks); their runs and attach
 * refused naming the kind; the no-autoload '?' prefix; probe targets. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "core/prog.h"
#include "core/prog_kind.h"
#include "core/ctx_rules.h"

#include <errno.h>
#include <linux/bpf_perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define S BPFRT_SEC_SLEEPABLE
#define R BPFRT_SEC_RETPROBE
#define SS BPFRT_SEC_SESSION
#define F BPFRT_SEC_XDP_FRAGS

static const struct sec_case {
	const char *sec;
	enum bpfrt_prog_kind kind;
	const char *target;
	uint8_t flags;
	uint8_t variant;
} secs[] = {
	{ "socket", BPFRT_PROG_SOCKET, "" },
	{ "sk_reuseport/migrate", BPFRT_PROG_SK_REUSEPORT, "" },
	{ "sk_reuseport", BPFRT_PROG_SK_REUSEPORT, "" },
	{ "kprobe/do_work+8", BPFRT_PROG_KPROBE, "do_work+8" },
	{ "kprobe", BPFRT_PROG_KPROBE, "" },
	{ "uprobe/libc.so.6:malloc", BPFRT_PROG_UPROBE, "libc.so.6:malloc" },
	{ "uprobe//usr/bin/app:main", BPFRT_PROG_UPROBE, "/usr/bin/app:main" },
	{ "uprobe.s/app:f", BPFRT_PROG_UPROBE, "app:f", S },
	{ "kretprobe/f", BPFRT_PROG_KRETPROBE, "f", R },
	{ "uretprobe/app:f", BPFRT_PROG_UPROBE, "app:f", R },
	{ "uretprobe.s/app:f", BPFRT_PROG_UPROBE, "app:f", S | R },
	{ "kprobe.multi/vfs_*", BPFRT_PROG_KPROBE_MULTI, "vfs_*" },
	{ "kretprobe.multi/vfs_*", BPFRT_PROG_KPROBE_MULTI, "vfs_*", R },
	{ "kprobe.session/vfs_*", BPFRT_PROG_KPROBE_MULTI, "vfs_*", SS },
	{ "uprobe.multi/app:f*", BPFRT_PROG_UPROBE_MULTI, "app:f*" },
	{ "uretprobe.multi/app:f*", BPFRT_PROG_UPROBE_MULTI, "app:f*", R },
	{ "uprobe.session/app:f*", BPFRT_PROG_UPROBE_MULTI, "app:f*", SS },
	{ "uprobe.multi.s/app:f*", BPFRT_PROG_UPROBE_MULTI, "app:f*", S },
	{ "uretprobe.multi.s/app:f*", BPFRT_PROG_UPROBE_MULTI, "app:f*", S | R },
	{ "uprobe.session.s/app:f*", BPFRT_PROG_UPROBE_MULTI, "app:f*", S | SS },
	{ "ksyscall/write", BPFRT_PROG_KSYSCALL, "write" },
	{ "kretsyscall/write", BPFRT_PROG_KSYSCALL, "write", R },
	{ "usdt/app:prov:probe", BPFRT_PROG_UPROBE, "app:prov:probe" },
	{ "usdt.s/app:prov:probe", BPFRT_PROG_UPROBE, "app:prov:probe", S },
	{ "tc/ingress", BPFRT_PROG_SCHED_CLS, "" },
	{ "tc/egress", BPFRT_PROG_SCHED_CLS, "" },
	{ "tcx/ingress", BPFRT_PROG_SCHED_CLS, "" },
	{ "tcx/egress", BPFRT_PROG_SCHED_CLS, "" },
	{ "tc", BPFRT_PROG_SCHED_CLS, "" },
	{ "classifier", BPFRT_PROG_SCHED_CLS, "" },
	{ "action", BPFRT_PROG_SCHED_ACT, "" },
	{ "netkit/primary", BPFRT_PROG_SCHED_CLS, "" },
	{ "netkit/peer", BPFRT_PROG_SCHED_CLS, "" },
	{ "tracepoint/sched/sched_switch", BPFRT_PROG_TRACEPOINT, "sched/sched_switch" },
	{ "tp/sched/sched_switch", BPFRT_PROG_TRACEPOINT, "sched/sched_switch" },
	{ "tracepoint.s/syscalls/sys_enter_x", BPFRT_PROG_TRACEPOINT, "syscalls/sys_enter_x", S },
	{ "tp.s/syscalls/sys_enter_x", BPFRT_PROG_TRACEPOINT, "syscalls/sys_enter_x", S },
	{ "raw_tracepoint/sched_switch", BPFRT_PROG_RAW_TRACEPOINT, "sched_switch" },
	{ "raw_tp/sched_switch", BPFRT_PROG_RAW_TRACEPOINT, "sched_switch" },
	{ "raw_tp", BPFRT_PROG_RAW_TRACEPOINT, "" },
	{ "raw_tracepoint.s/x", BPFRT_PROG_RAW_TRACEPOINT, "x", S },
	{ "raw_tp.s/x", BPFRT_PROG_RAW_TRACEPOINT, "x", S },
	{ "raw_tracepoint.w/x", BPFRT_PROG_RAW_TRACEPOINT, "x" },
	{ "raw_tp.w/x", BPFRT_PROG_RAW_TRACEPOINT, "x" },
	{ "tp_btf/sched_switch", BPFRT_PROG_RAW_TRACEPOINT, "sched_switch" },
	{ "tp_btf.s/x", BPFRT_PROG_RAW_TRACEPOINT, "x", S },
	{ "fentry/f", BPFRT_PROG_FENTRY, "f" },
	{ "fmod_ret/f", BPFRT_PROG_FMOD_RET, "f" },
	{ "fexit/f", BPFRT_PROG_FEXIT, "f" },
	{ "fentry.s/f", BPFRT_PROG_FENTRY, "f", S },
	{ "fmod_ret.s/f", BPFRT_PROG_FMOD_RET, "f", S },
	{ "fexit.s/f", BPFRT_PROG_FEXIT, "f", S },
	{ "fsession/f", BPFRT_PROG_FSESSION, "f" },
	{ "fsession.s/f", BPFRT_PROG_FSESSION, "f", S },
	{ "fsession.multi/f*", BPFRT_PROG_FEXIT_MULTI, "f*", SS },
	{ "fsession.multi.s/f*", BPFRT_PROG_FEXIT_MULTI, "f*", S | SS },
	{ "fentry.multi/f*", BPFRT_PROG_FENTRY_MULTI, "f*" },
	{ "fexit.multi/f*", BPFRT_PROG_FEXIT_MULTI, "f*" },
	{ "fentry.multi.s/f*", BPFRT_PROG_FENTRY_MULTI, "f*", S },
	{ "fexit.multi.s/f*", BPFRT_PROG_FEXIT_MULTI, "f*", S },
	{ "freplace/f", BPFRT_PROG_EXT, "f" },
	{ "lsm/file_open", BPFRT_PROG_LSM, "file_open" },
	{ "lsm.s/file_open", BPFRT_PROG_LSM, "file_open", S },
	{ "lsm_cgroup/socket_bind", BPFRT_PROG_LSM, "socket_bind" },
	{ "iter/task", BPFRT_PROG_ITER, "task" },
	{ "iter.s/task", BPFRT_PROG_ITER, "task", S },
	{ "syscall", BPFRT_PROG_SYSCALL, "", S },
	{ "xdp.frags/devmap", BPFRT_PROG_XDP, "", F },
	{ "xdp/devmap", BPFRT_PROG_XDP, "devmap" },
	{ "xdp.frags/cpumap", BPFRT_PROG_XDP, "", F },
	{ "xdp/cpumap", BPFRT_PROG_XDP, "cpumap" },
	{ "xdp.frags", BPFRT_PROG_XDP, "", F },
	{ "xdp", BPFRT_PROG_XDP, "" },
	{ "perf_event", BPFRT_PROG_PERF_EVENT, "" },
	{ "lwt_in", BPFRT_PROG_LWT, "" },
	{ "lwt_out", BPFRT_PROG_LWT, "" },
	{ "lwt_xmit", BPFRT_PROG_LWT, "", 0, BPFRT_VARIANT_LWT_XMIT },
	{ "lwt_seg6local", BPFRT_PROG_LWT, "" },
	{ "sockops", BPFRT_PROG_SOCK_OPS, "" },
	{ "sk_skb/stream_parser", BPFRT_PROG_SK_SKB, "" },
	{ "sk_skb/stream_verdict", BPFRT_PROG_SK_SKB, "" },
	{ "sk_skb/verdict", BPFRT_PROG_SK_SKB, "" },
	{ "sk_skb", BPFRT_PROG_SK_SKB, "" },
	{ "sk_msg", BPFRT_PROG_SK_MSG, "" },
	{ "lirc_mode2", BPFRT_PROG_LIRC_MODE2, "" },
	{ "flow_dissector", BPFRT_PROG_FLOW_DISSECTOR, "" },
	{ "cgroup_skb/ingress", BPFRT_PROG_CGROUP_SKB, "" },
	{ "cgroup_skb/egress", BPFRT_PROG_CGROUP_SKB, "", 0, BPFRT_VARIANT_SKB_EGRESS },
	{ "cgroup/skb", BPFRT_PROG_CGROUP_SKB, "" },
	{ "cgroup/sock_create", BPFRT_PROG_CGROUP_SOCK, "", 0, BPFRT_VARIANT_SOCK_CREATE },
	{ "cgroup/sock_release", BPFRT_PROG_CGROUP_SOCK, "", 0, BPFRT_VARIANT_SOCK_RELEASE },
	{ "cgroup/sock", BPFRT_PROG_CGROUP_SOCK, "", 0, BPFRT_VARIANT_SOCK_CREATE },
	{ "cgroup/post_bind4", BPFRT_PROG_CGROUP_SOCK, "", 0, BPFRT_VARIANT_POST_BIND4 },
	{ "cgroup/post_bind6", BPFRT_PROG_CGROUP_SOCK, "", 0, BPFRT_VARIANT_POST_BIND6 },
	{ "cgroup/bind4", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_BIND4 },
	{ "cgroup/bind6", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_BIND6 },
	{ "cgroup/connect4", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR4 },
	{ "cgroup/connect6", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR6 },
	{ "cgroup/connect_unix", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR_UNIX },
	{ "cgroup/sendmsg4", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_SENDMSG4 },
	{ "cgroup/sendmsg6", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_SENDMSG6 },
	{ "cgroup/sendmsg_unix", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR_UNIX },
	{ "cgroup/recvmsg4", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR4_PEER },
	{ "cgroup/recvmsg6", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR6_PEER },
	{ "cgroup/recvmsg_unix", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR_UNIX_PEER },
	{ "cgroup/getpeername4", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR4_PEER },
	{ "cgroup/getpeername6", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR6_PEER },
	{ "cgroup/getpeername_unix", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR_UNIX_PEER },
	{ "cgroup/getsockname4", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR4_PEER },
	{ "cgroup/getsockname6", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR6_PEER },
	{ "cgroup/getsockname_unix", BPFRT_PROG_CGROUP_SOCK_ADDR, "", 0, BPFRT_VARIANT_ADDR_UNIX_PEER },
	{ "cgroup/sysctl", BPFRT_PROG_CGROUP_SYSCTL, "" },
	{ "cgroup/getsockopt", BPFRT_PROG_CGROUP_SOCKOPT, "", 0, BPFRT_VARIANT_GETSOCKOPT },
	{ "cgroup/setsockopt", BPFRT_PROG_CGROUP_SOCKOPT, "", 0, BPFRT_VARIANT_SETSOCKOPT },
	{ "cgroup/dev", BPFRT_PROG_CGROUP_DEVICE, "" },
	{ "struct_ops/tcp_init", BPFRT_PROG_STRUCT_OPS, "tcp_init" },
	{ "struct_ops.s/op", BPFRT_PROG_STRUCT_OPS, "op", S },
	{ "struct_ops", BPFRT_PROG_STRUCT_OPS, "" },
	{ "sk_lookup", BPFRT_PROG_SK_LOOKUP, "" },
	{ "netfilter", BPFRT_PROG_NETFILTER, "" },
};

/* the table's name for a definition, as this list spells its section */
static bool case_uses_def(const struct sec_case *c, const struct bpfrt_sec_def *def)
{
	size_t n = strlen(def->name);

	return !strncmp(c->sec, def->name, n) && (c->sec[n] == '\0' || c->sec[n] == '/') &&
	       (def->syntax != BPFRT_SEC_EXACT || c->sec[n] == '\0');
}

TEST(every_libbpf_section_name_maps_to_its_kind)
{
	for (size_t i = 0; i < ARRAY_LEN(secs); i++) {
		const struct sec_case *c = &secs[i];
		struct bpfrt_sec_parsed p;
		int err = bpfrt_prog_sec_parse(c->sec, &p);

		CHECK(!err, "SEC(\"%s\") unknown", c->sec);
		if (err)
			continue;
		CHECK(p.kind == c->kind && !strcmp(p.target, c->target) && p.autoload &&
		      p.def->flags == c->flags && p.def->variant == c->variant,
		      "SEC(\"%s\"): kind %s target '%s' flags %#x variant %u; want %s '%s' %#x %u",
		      c->sec, bpfrt_prog_kind_str(p.kind), p.target, p.def->flags, p.def->variant,
		      bpfrt_prog_kind_str(c->kind), c->target, c->flags, c->variant);
		/* and with the no-autoload prefix */
		{
			char q[128];

			snprintf(q, sizeof(q), "?%s", c->sec);
			CHECK(!bpfrt_prog_sec_parse(q, &p) && p.kind == c->kind && !p.autoload &&
			      !strcmp(p.target, c->target), "SEC(\"%s\")", q);
		}
	}
}

/* the other way: every name of the table has a row above */
TEST(every_table_name_is_in_the_list)
{
	int defs = 0;

	for (int k = 0; k < bpfrt_prog_kind_count(); k++)
		for (const struct bpfrt_sec_def *def = bpfrt_prog_kind_desc(k)->secs;
		     def && def->name; def++, defs++) {
			bool found = false;

			for (size_t i = 0; i < ARRAY_LEN(secs) && !found; i++)
				found = case_uses_def(&secs[i], def) && (int)secs[i].kind == k;
			CHECK(found, "SEC(\"%s\") (kind %s) has no row in this test", def->name,
			      bpfrt_prog_kind_str(k));
		}
	CHECK(defs >= (int)ARRAY_LEN(secs) - 12, "%d names in the table, %zu rows", defs,
	      ARRAY_LEN(secs));
}

/* ---- context rules ---- */

/* load flags of the next loads (BPFRT_F_ALLOW_PTR_LEAKS: privileged rules) */
static uint32_t flags;

static int load_kind(int kind, const struct bpf_insn *insns, size_t cnt, struct bpfrt_prog **p)
{
	struct bpfrt_prog_load_opts o = { .sz = sizeof(o), .name = "kk", .verify = true,
					  .kind = (enum bpfrt_prog_kind)kind, .flags = flags };

	*p = NULL;
	return bpfrt_prog_load(insns, cnt, &o, p);
}

static int load_free(int kind, const struct bpf_insn *insns, size_t cnt)
{
	struct bpfrt_prog *p;
	int err = load_kind(kind, insns, cnt, &p);

	bpfrt_prog_free(p);
	return err;
}

static int bpf_size(int width)
{
	return width == 8 ? BPF_DW : width == 4 ? BPF_W : width == 2 ? BPF_H : BPF_B;
}

/* a load (write: a store from a register) of width bytes at off */
static int access(int kind, int16_t off, int width, bool write)
{
	struct bpf_insn insns[] = {
		MOV64_IMM(3, 0),
		write ? STX(bpf_size(width), 1, 3, off) : LDX(bpf_size(width), 2, 1, off),
		MOV64_IMM(0, 0),
		EXIT(),
	};

	return load_free(kind, insns, ARRAY_LEN(insns));
}

/* read the packet's first byte between the context's data and data_end
 * fields (width bytes each); a store to it if write */
static int packet(int kind, int16_t data, int16_t end, int width, bool write)
{
	struct bpf_insn insns[] = {
		LDX(bpf_size(width), 2, 1, data),
		LDX(bpf_size(width), 3, 1, end),
		MOV64_REG(4, 2),
		ALU64_IMM(BPF_ADD, 4, 1),
		MOV64_IMM(0, 0),
		JMP_REG(BPF_JGT, 4, 3, 1),
		write ? ST(BPF_B, 2, 0, 1) : LDX(BPF_B, 5, 2, 0),
		EXIT(),
	};

	return load_free(kind, insns, ARRAY_LEN(insns));
}

#define ACCEPT(expr) CHECK((expr) == 0, "%s: %s", #expr, bpfrt_last_error())
#define REFUSE(expr, msg) do { \
	int err_ = (expr); \
	CHECK(err_ == -EACCES && strstr(bpfrt_last_error(), msg), "%s: %d %s (want '%s')", \
	      #expr, err_, bpfrt_last_error(), msg); \
} while (0)

#define SKB(f) ((int16_t)offsetof(struct __sk_buff, f))

TEST(tc_and_action_contexts)
{
	int kinds[] = { BPFRT_PROG_SCHED_CLS, BPFRT_PROG_SCHED_ACT };

	for (size_t i = 0; i < ARRAY_LEN(kinds); i++) {
		int k = kinds[i];

		ACCEPT(access(k, SKB(len), 4, false));
		ACCEPT(access(k, SKB(len), 1, false));  /* a narrow load */
		ACCEPT(access(k, SKB(mark), 4, true));
		ACCEPT(access(k, SKB(cb[2]), 8, true));
		ACCEPT(access(k, SKB(tc_classid), 4, true));
		ACCEPT(access(k, SKB(tstamp), 8, false));
		ACCEPT(packet(k, SKB(data), SKB(data_end), 4, false));
		ACCEPT(packet(k, SKB(data), SKB(data_end), 4, true));
		REFUSE(access(k, SKB(len), 4, true), "may not write");
		REFUSE(access(k, SKB(family), 4, false), "socket fields");
		REFUSE(access(k, SKB(tstamp), 4, false), "width");
		REFUSE(access(k, SKB(data), 2, false), "loaded whole");
		ACCEPT(access(k, SKB(sk), 8, false)); /* a socket or NULL */
		REFUSE(access(k, SKB(sk), 4, false), "width");
		REFUSE(access(k, SKB(sk), 8, true), "may not write");
		REFUSE(access(k, SKB(data_meta), 4, false), "data_meta");
		REFUSE(access(k, SKB(cb[4]), 8, true), "width");
		REFUSE(access(k, SKB(mark), 2, true), "width");
	}
	/* immediate stores into the context, as Linux */
	{
		struct bpf_insn st[] = { ST(BPF_W, 1, SKB(mark), 1), MOV64_IMM(0, 0), EXIT() };

		REFUSE(load_free(BPFRT_PROG_SCHED_CLS, st, ARRAY_LEN(st)), "BPF_ST stores");
	}
}

TEST(cgroup_skb_sk_skb_lwt_flow_dissector_contexts)
{
	ACCEPT(access(BPFRT_PROG_CGROUP_SKB, SKB(mark), 4, true));
	ACCEPT(access(BPFRT_PROG_CGROUP_SKB, SKB(family), 4, false));
	/* the packet only with the privileged rules (Linux: CAP_BPF) */
	REFUSE(packet(BPFRT_PROG_CGROUP_SKB, SKB(data), SKB(data_end), 4, false), "unprivileged");
	REFUSE(access(BPFRT_PROG_CGROUP_SKB, SKB(tstamp), 8, true), "unprivileged");
	flags = BPFRT_F_ALLOW_PTR_LEAKS;
	ACCEPT(packet(BPFRT_PROG_CGROUP_SKB, SKB(data), SKB(data_end), 4, false));
	ACCEPT(access(BPFRT_PROG_CGROUP_SKB, SKB(tstamp), 8, true));
	REFUSE(packet(BPFRT_PROG_CGROUP_SKB, SKB(data), SKB(data_end), 4, true),
	       "cannot write into packet");
	flags = 0;
	REFUSE(access(BPFRT_PROG_CGROUP_SKB, SKB(tc_index), 4, true), "may not write");
	REFUSE(access(BPFRT_PROG_CGROUP_SKB, SKB(tc_classid), 4, false), "cgroup skb");

	ACCEPT(access(BPFRT_PROG_SK_SKB, SKB(len), 4, false));
	ACCEPT(access(BPFRT_PROG_SK_SKB, SKB(priority), 4, true));
	ACCEPT(packet(BPFRT_PROG_SK_SKB, SKB(data), SKB(data_end), 4, true));
	REFUSE(access(BPFRT_PROG_SK_SKB, SKB(mark), 4, false), "mark");
	REFUSE(access(BPFRT_PROG_SK_SKB, SKB(cb[0]), 4, true), "may not write");

	ACCEPT(access(BPFRT_PROG_LWT, SKB(len), 4, false));
	ACCEPT(access(BPFRT_PROG_LWT, SKB(cb[0]), 4, true));
	ACCEPT(packet(BPFRT_PROG_LWT, SKB(data), SKB(data_end), 4, false));
	REFUSE(access(BPFRT_PROG_LWT, SKB(family), 4, false), "lwt");
	REFUSE(packet(BPFRT_PROG_LWT, SKB(data), SKB(data_end), 4, true), "cannot write");

	ACCEPT(packet(BPFRT_PROG_FLOW_DISSECTOR, SKB(data), SKB(data_end), 4, false));
	REFUSE(access(BPFRT_PROG_FLOW_DISSECTOR, SKB(len), 4, false), "flow dissector");
	REFUSE(access(BPFRT_PROG_FLOW_DISSECTOR, SKB(flow_keys), 8, false), "kernel object");
	REFUSE(access(BPFRT_PROG_FLOW_DISSECTOR, SKB(cb[0]), 4, true), "read-only");
}

/* The socket filter's rules (Linux's sk_filter_is_valid_access), which
 * the socket kind does not apply yet (its test runs hand it wire_len). */
TEST(socket_filter_rules)
{
	struct bpfrt_ctx_access a = { .off = SKB(len), .size = 4 };

	CHECK(!bpfrt_ctx_rule_sk_filter_skb(&a));
	a.off = SKB(tc_classid);
	CHECK(bpfrt_ctx_rule_sk_filter_skb(&a));
	a.off = SKB(data);
	CHECK(bpfrt_ctx_rule_sk_filter_skb(&a));
	a = (struct bpfrt_ctx_access){ .off = SKB(cb[0]), .size = 4, .write = true };
	CHECK(!bpfrt_ctx_rule_sk_filter_skb(&a));
	a.off = SKB(mark);
	CHECK(bpfrt_ctx_rule_sk_filter_skb(&a));
}

TEST(socket_address_contexts)
{
	typedef struct bpf_sock_addr A;
	typedef struct bpf_sock K;

	/* raw loads have no attach type: the family's own fields are refused */
	ACCEPT(access(BPFRT_PROG_CGROUP_SOCK_ADDR, offsetof(A, user_family), 4, false));
	ACCEPT(access(BPFRT_PROG_CGROUP_SOCK_ADDR, offsetof(A, user_port), 4, true));
	ACCEPT(access(BPFRT_PROG_CGROUP_SOCK_ADDR, offsetof(A, user_port), 2, false));
	REFUSE(access(BPFRT_PROG_CGROUP_SOCK_ADDR, offsetof(A, user_ip4), 4, false), "IPv4");
	REFUSE(access(BPFRT_PROG_CGROUP_SOCK_ADDR, offsetof(A, family), 4, true), "may not write");
	REFUSE(access(BPFRT_PROG_CGROUP_SOCK_ADDR, offsetof(A, sk), 8, false), "kernel object");

	ACCEPT(access(BPFRT_PROG_CGROUP_SOCK, offsetof(K, family), 4, false));
	ACCEPT(access(BPFRT_PROG_CGROUP_SOCK, offsetof(K, dst_port), 2, false));
	/* a raw load is sock_create, as Linux loads one without an attach type */
	ACCEPT(access(BPFRT_PROG_CGROUP_SOCK, offsetof(K, mark), 4, true));
	REFUSE(access(BPFRT_PROG_CGROUP_SOCK, offsetof(K, src_ip4), 4, false), "post_bind4");
	REFUSE(access(BPFRT_PROG_CGROUP_SOCK, offsetof(K, family), 4, true), "may not write");
	REFUSE(access(BPFRT_PROG_CGROUP_SOCK, offsetof(K, dst_port) + 2, 2, false), "padding");

	/* the attach-type rules themselves */
	{
		struct bpfrt_ctx_access a = { .off = offsetof(A, user_ip4), .size = 4,
					      .variant = BPFRT_VARIANT_ADDR4 };

		CHECK(!bpfrt_ctx_rule_sock_addr(&a));
		a.write = true;
		CHECK(!bpfrt_ctx_rule_sock_addr(&a));
		a.variant = BPFRT_VARIANT_ADDR6;
		CHECK(bpfrt_ctx_rule_sock_addr(&a));
		a = (struct bpfrt_ctx_access){ .off = offsetof(A, user_ip6[2]), .size = 8,
					       .variant = BPFRT_VARIANT_ADDR6 };
		CHECK(!bpfrt_ctx_rule_sock_addr(&a), "8-byte user_ip6 access");
		a = (struct bpfrt_ctx_access){ .off = offsetof(A, msg_src_ip4), .size = 4,
					       .variant = BPFRT_VARIANT_ADDR4 };
		CHECK(bpfrt_ctx_rule_sock_addr(&a), "msg_src_ip4 outside sendmsg4");
		a.variant = BPFRT_VARIANT_SENDMSG4;
		CHECK(!bpfrt_ctx_rule_sock_addr(&a));
		a = (struct bpfrt_ctx_access){ .off = offsetof(K, mark), .size = 4, .write = true,
					       .variant = BPFRT_VARIANT_SOCK_CREATE };
		CHECK(!bpfrt_ctx_rule_sock(&a));
		a = (struct bpfrt_ctx_access){ .off = offsetof(K, src_ip4), .size = 4,
					       .variant = BPFRT_VARIANT_POST_BIND4 };
		CHECK(!bpfrt_ctx_rule_sock(&a));
		a.variant = BPFRT_VARIANT_POST_BIND6;
		CHECK(bpfrt_ctx_rule_sock(&a));
		a = (struct bpfrt_ctx_access){ .off = offsetof(struct bpf_sockopt, retval), .size = 4,
					       .write = true, .variant = BPFRT_VARIANT_GETSOCKOPT };
		CHECK(!bpfrt_ctx_rule_sockopt(&a));
		a.variant = BPFRT_VARIANT_SETSOCKOPT;
		CHECK(bpfrt_ctx_rule_sockopt(&a));
	}
}

TEST(cgroup_sysctl_sockopt_device_contexts)
{
	typedef struct bpf_sockopt O;

	ACCEPT(access(BPFRT_PROG_CGROUP_SYSCTL, offsetof(struct bpf_sysctl, write), 1, false));
	ACCEPT(access(BPFRT_PROG_CGROUP_SYSCTL, offsetof(struct bpf_sysctl, file_pos), 4, true));
	REFUSE(access(BPFRT_PROG_CGROUP_SYSCTL, offsetof(struct bpf_sysctl, write), 4, true),
	       "may not write");

	ACCEPT(access(BPFRT_PROG_CGROUP_SOCKOPT, offsetof(O, level), 4, false));
	ACCEPT(access(BPFRT_PROG_CGROUP_SOCKOPT, offsetof(O, optlen), 4, true));
	ACCEPT(packet(BPFRT_PROG_CGROUP_SOCKOPT, offsetof(O, optval), offsetof(O, optval_end), 8,
		      true));
	REFUSE(access(BPFRT_PROG_CGROUP_SOCKOPT, offsetof(O, sk), 8, false), "kernel object");
	REFUSE(access(BPFRT_PROG_CGROUP_SOCKOPT, offsetof(O, retval), 4, false), "getsockopt");
	REFUSE(access(BPFRT_PROG_CGROUP_SOCKOPT, offsetof(O, optval), 4, false), "whole");

	ACCEPT(access(BPFRT_PROG_CGROUP_DEVICE, 0, 2, false));
	ACCEPT(access(BPFRT_PROG_CGROUP_DEVICE, 8, 4, false));
	REFUSE(access(BPFRT_PROG_CGROUP_DEVICE, 4, 2, false), "width");
	REFUSE(access(BPFRT_PROG_CGROUP_DEVICE, 4, 4, true), "read-only");
}

TEST(sock_ops_sk_msg_sk_lookup_sk_reuseport_contexts)
{
	typedef struct bpf_sock_ops O;
	typedef struct sk_msg_md M;
	typedef struct bpf_sk_lookup L;
	typedef struct sk_reuseport_md P;

	ACCEPT(access(BPFRT_PROG_SOCK_OPS, offsetof(O, op), 4, false));
	ACCEPT(access(BPFRT_PROG_SOCK_OPS, offsetof(O, reply), 4, true));
	ACCEPT(access(BPFRT_PROG_SOCK_OPS, offsetof(O, bytes_acked), 8, false));
	REFUSE(access(BPFRT_PROG_SOCK_OPS, offsetof(O, op), 4, true), "may not write");
	REFUSE(access(BPFRT_PROG_SOCK_OPS, offsetof(O, family), 2, false), "width");
	ACCEPT(packet(BPFRT_PROG_SOCK_OPS, offsetof(O, skb_data), offsetof(O, skb_data_end), 8,
		      false));
	REFUSE(packet(BPFRT_PROG_SOCK_OPS, offsetof(O, skb_data), offsetof(O, skb_data_end), 8,
		      true), "cannot write into packet");

	ACCEPT(access(BPFRT_PROG_SK_MSG, offsetof(M, family), 4, false));
	ACCEPT(packet(BPFRT_PROG_SK_MSG, offsetof(M, data), offsetof(M, data_end), 8, true));
	REFUSE(access(BPFRT_PROG_SK_MSG, offsetof(M, family), 2, false), "width");
	REFUSE(access(BPFRT_PROG_SK_MSG, offsetof(M, size), 4, true), "read-only");

	ACCEPT(access(BPFRT_PROG_SK_LOOKUP, offsetof(L, remote_port), 2, false));
	ACCEPT(access(BPFRT_PROG_SK_LOOKUP, offsetof(L, remote_port), 4, false));
	ACCEPT(access(BPFRT_PROG_SK_LOOKUP, offsetof(L, local_ip6[1]), 1, false));
	REFUSE(access(BPFRT_PROG_SK_LOOKUP, offsetof(L, sk), 8, false), "kernel object");

	ACCEPT(access(BPFRT_PROG_SK_REUSEPORT, offsetof(P, len), 1, false));
	ACCEPT(packet(BPFRT_PROG_SK_REUSEPORT, offsetof(P, data), offsetof(P, data_end), 8, false));
	REFUSE(access(BPFRT_PROG_SK_REUSEPORT, offsetof(P, hash), 2, false), "width");
	REFUSE(access(BPFRT_PROG_SK_REUSEPORT, offsetof(P, eth_protocol), 1, false), "width");
	REFUSE(packet(BPFRT_PROG_SK_REUSEPORT, offsetof(P, data), offsetof(P, data_end), 8, true),
	       "cannot write");
}

TEST(tracing_and_argument_contexts)
{
	typedef struct bpf_perf_event_data E;

	ACCEPT(access(BPFRT_PROG_PERF_EVENT, offsetof(E, sample_period), 4, false));
	ACCEPT(access(BPFRT_PROG_PERF_EVENT, 8, 8, false));
	REFUSE(access(BPFRT_PROG_PERF_EVENT, 8, 4, false), "registers are read whole");
	REFUSE(access(BPFRT_PROG_PERF_EVENT, offsetof(E, addr), 8, true), "read-only");

	ACCEPT(access(BPFRT_PROG_LIRC_MODE2, 0, 4, false));
	REFUSE(access(BPFRT_PROG_LIRC_MODE2, 0, 2, false), "width");

	ACCEPT(access(BPFRT_PROG_LSM, 40, 8, false));
	REFUSE(access(BPFRT_PROG_LSM, 0, 4, false), "invalid bpf_context access");
	ACCEPT(access(BPFRT_PROG_ITER, 8, 8, false));
	REFUSE(access(BPFRT_PROG_ITER, 16, 8, false), "invalid bpf_context access");
	ACCEPT(access(BPFRT_PROG_STRUCT_OPS, 88, 8, false));
	REFUSE(access(BPFRT_PROG_STRUCT_OPS, 0, 8, true), "read-only");
	ACCEPT(access(BPFRT_PROG_NETFILTER, 8, 8, false));
	REFUSE(access(BPFRT_PROG_NETFILTER, 16, 8, false), "invalid bpf_context access");
}

/* ---- runs, attach and loads refused, naming the kind ---- */

TEST(kernel_only_kinds_refuse_runs_and_attach_naming_the_kind)
{
	struct bpf_insn ret0[] = { MOV64_IMM(0, 0), EXIT() };
	uint8_t ctx[512] = { 0 };
	int refused = 0;

	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		struct bpfrt_link *l = NULL;
		struct bpfrt_prog *p;
		uint64_t r0 = 0;
		char want[96];
		int err;

		if (d->info.runs || d->load_refused)
			continue;
		CHECK(!d->info.attachable && !d->info.tracing && !d->info.packet, "%s",
		      d->short_name);
		err = load_kind(k, ret0, ARRAY_LEN(ret0), &p);
		CHECK(!err, "%s: %s", d->short_name, bpfrt_last_error());
		if (err)
			continue;
		snprintf(want, sizeof(want), "kind %s cannot run", d->short_name);
		err = bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uintptr_t)ctx, sizeof(ctx), &r0);
		CHECK(err == -EOPNOTSUPP && strstr(bpfrt_last_error(), want), "%s: run: %d %s",
		      d->short_name, err, bpfrt_last_error());
		err = bpfrt_prog_run(p, BPFRT_EXEC_CHECKED, (uintptr_t)ctx, sizeof(ctx), &r0);
		CHECK(err == -EOPNOTSUPP, "%s: checked run: %d %s", d->short_name, err,
		      bpfrt_last_error());
		snprintf(want, sizeof(want), "kind %s cannot attach", d->short_name);
		err = bpfrt_prog_attach(p, NULL, &l);
		CHECK(err == -EOPNOTSUPP && strstr(bpfrt_last_error(), want) && !l,
		      "%s: attach: %d %s", d->short_name, err, bpfrt_last_error());
		refused++;
		bpfrt_prog_free(p);
	}
	CHECK(refused == 20, "%d kernel-only kinds", refused);
}

TEST(freplace_load_is_refused_naming_the_kind)
{
	struct bpf_insn ret0[] = { MOV64_IMM(0, 0), EXIT() };
	struct bpfrt_prog *p;
	int err = load_kind(BPFRT_PROG_EXT, ret0, ARRAY_LEN(ret0), &p);

	CHECK(err == -EOPNOTSUPP && !p && strstr(bpfrt_last_error(), "kind freplace cannot load"),
	      "%d %s", err, bpfrt_last_error());
}

/* ---- the object loader: '?' and sleepable names ---- */

TEST(no_autoload_prefix_opens_without_loading)
{
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p, *tc, *lsm_s;
	uint64_t r0;

	REQUIRE(!bpfrt_object_open(tl_prog_path("prog_kinds.bpf.o"), NULL, &obj), "%s",
		bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "tc_noautoload_prog");
	tc = bpfrt_object_find_prog(obj, "tc_bare_prog");
	lsm_s = bpfrt_object_find_prog(obj, "lsm_s_prog");
	REQUIRE(p && tc && lsm_s, "%s", bpfrt_last_error());
	CHECK(!bpfrt_prog_autoload(p) && bpfrt_prog_autoload(tc));
	CHECK(bpfrt_prog_kind(p) == BPFRT_PROG_SCHED_CLS && !strcmp(bpfrt_prog_section(p), "?tc"));
	CHECK(bpfrt_prog_sleepable(lsm_s) && !bpfrt_prog_sleepable(tc));
	CHECK(!bpfrt_object_load(obj, NULL), "%s", bpfrt_last_error());
	CHECK(bpfrt_prog_set_autoload(p, true) == -EBUSY);
	CHECK(!p->loaded && tc->loaded, "loaded: ?tc %d, tc %d", p->loaded, tc->loaded);
	CHECK(bpfrt_prog_run(p, BPFRT_EXEC_INTERP, 1, 0, &r0) == -EINVAL &&
	      strstr(bpfrt_last_error(), "not loaded"), "%s", bpfrt_last_error());
	bpfrt_object_close(obj);

	/* set before the load, it is loaded */
	REQUIRE(!bpfrt_object_open(tl_prog_path("prog_kinds.bpf.o"), NULL, &obj), "%s",
		bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "tc_noautoload_prog");
	CHECK(!bpfrt_prog_set_autoload(p, true));
	CHECK(!bpfrt_object_load(obj, NULL) && p->loaded, "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

/* ---- probe targets (the agent attaches them; the names are parsed here) ---- */

TEST(probe_targets_are_split_as_libbpf_does)
{
	struct bpfrt_probe_target t;
	char buf[128];

	CHECK(!bpfrt_probe_target_parse(BPFRT_PROG_UPROBE, "/usr/lib/libc.so.6:malloc+0x10", buf,
					sizeof(buf), &t) &&
	      !strcmp(t.path, "/usr/lib/libc.so.6") && !strcmp(t.func, "malloc") &&
	      t.offset == 0x10 && !t.name);
	CHECK(!bpfrt_probe_target_parse(BPFRT_PROG_UPROBE_MULTI, "libc.so.6:str*", buf,
					sizeof(buf), &t) &&
	      !strcmp(t.path, "libc.so.6") && !strcmp(t.func, "str*") && !t.offset);
	CHECK(!bpfrt_probe_target_parse(BPFRT_PROG_USDT, "/bin/app:prov:probe", buf, sizeof(buf),
					&t) &&
	      !strcmp(t.path, "/bin/app") && !strcmp(t.func, "prov") && !strcmp(t.name, "probe"));
	CHECK(bpfrt_probe_target_parse(BPFRT_PROG_UPROBE, "malloc", buf, sizeof(buf), &t) ==
	      -EINVAL && strstr(bpfrt_last_error(), "PATH:FUNC"), "%s", bpfrt_last_error());
	CHECK(bpfrt_probe_target_parse(BPFRT_PROG_USDT, "app:prov", buf, sizeof(buf), &t) ==
	      -EINVAL && strstr(bpfrt_last_error(), "PROVIDER:NAME"), "%s", bpfrt_last_error());
	CHECK(bpfrt_probe_target_parse(BPFRT_PROG_UPROBE, "app:f+x", buf, sizeof(buf), &t) ==
	      -EINVAL && strstr(bpfrt_last_error(), "offset"), "%s", bpfrt_last_error());
	CHECK(bpfrt_probe_target_parse(BPFRT_PROG_UPROBE, "", buf, sizeof(buf), &t) == -EINVAL &&
	      strstr(bpfrt_last_error(), "no target"), "%s", bpfrt_last_error());
	CHECK(bpfrt_probe_target_parse(BPFRT_PROG_KPROBE, "f", buf, sizeof(buf), &t) == -EINVAL);
	CHECK(bpfrt_probe_target_parse(BPFRT_PROG_UPROBE, "a:b", buf, 3, &t) == -ENAMETOOLONG);
}

/* Linux's return-value rules for the kinds whose verdict the kernel acts
 * on (check_return_code): [0, 1], egress skb programs [0, 3], the
 * peer-address hooks exactly 1. */
TEST(return_ranges_of_the_kernel_kinds)
{
	const struct bpfrt_prog_kind_desc *skb = bpfrt_prog_kind_desc(BPFRT_PROG_CGROUP_SKB);
	const struct bpfrt_prog_kind_desc *addr = bpfrt_prog_kind_desc(BPFRT_PROG_CGROUP_SOCK_ADDR);
	int64_t lo = 9, hi = 9;

	for (int r = 0; r <= 2; r++) {
		struct bpf_insn ret[] = { MOV64_IMM(0, r), EXIT() };
		int err = load_free(BPFRT_PROG_CGROUP_SKB, ret, ARRAY_LEN(ret));

		if (r <= 1)
			CHECK(!err, "cgroup_skb returning %d: %s", r, bpfrt_last_error());
		else
			CHECK(err == -EACCES && strstr(bpfrt_last_error(), "should have been in [0, 1]"),
			      "cgroup_skb returning 2: %d %s", err, bpfrt_last_error());
	}
	CHECK(bpfrt_prog_kind_ret_range(skb, BPFRT_VARIANT_SKB_EGRESS, NULL, &lo, &hi) && lo == 0 &&
	      hi == 3, "egress [%lld, %lld]", (long long)lo, (long long)hi);
	CHECK(bpfrt_prog_kind_ret_range(addr, BPFRT_VARIANT_BIND6, NULL, &lo, &hi) && lo == 0 &&
	      hi == 3, "bind6 [%lld, %lld]", (long long)lo, (long long)hi);
	CHECK(bpfrt_prog_kind_packet_rdonly(bpfrt_prog_kind_desc(BPFRT_PROG_LWT), 0) &&
	      !bpfrt_prog_kind_packet_rdonly(bpfrt_prog_kind_desc(BPFRT_PROG_LWT),
					     BPFRT_VARIANT_LWT_XMIT));
	CHECK(bpfrt_prog_kind_ret_range(addr, BPFRT_VARIANT_ADDR4_PEER, NULL, &lo, &hi) && lo == 1 &&
	      hi == 1, "getpeername4 [%lld, %lld]", (long long)lo, (long long)hi);
	CHECK(!bpfrt_prog_kind_ret_range(bpfrt_prog_kind_desc(BPFRT_PROG_SCHED_CLS), 0, NULL, &lo,
					 &hi), "tc return values are the classifier's verdicts");
	/* lsm: by hook (0 or -errno; bool hooks 0/1; void hooks anything) */
	CHECK(bpfrt_prog_kind_ret_range(bpfrt_prog_kind_desc(BPFRT_PROG_LSM), 0, "file_open", &lo,
					&hi) && lo == -4095 && hi == 0);
	CHECK(bpfrt_prog_kind_ret_range(bpfrt_prog_kind_desc(BPFRT_PROG_LSM), 0, "audit_rule_known",
					&lo, &hi) && lo == 0 && hi == 1);
	CHECK(!bpfrt_prog_kind_ret_range(bpfrt_prog_kind_desc(BPFRT_PROG_LSM), 0, "task_free", &lo,
					 &hi));
	CHECK(bpfrt_lsm_hook_disabled("getprocattr") && !bpfrt_lsm_hook_disabled("file_open"));
}
