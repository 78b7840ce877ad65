/* The program kind table (core/prog_kind.h) walked kind by kind, against
 * what each module that reads it does: the loader gives every SEC() name
 * of a kind that kind and the target after the '/', the verifier allows
 * the kind's context exactly ([0, size), read-only where the table says,
 * packet pointers only where it has packet fields, r0 == 0 where the kind
 * must return it), tracing-like kinds get private stacks by default, test
 * runs take a packet or give ctx_out as the table says, and attach
 * refuses a kind it cannot attach, naming it, while every kind it can has
 * a host attach function. */
#define _GNU_SOURCE
#include "testlib.h"
#include "insns.h"
#include "bpfrt/bpfrt.h"
#include "bpfrt/attach.h"
#include "bpfrt/kprobe.h"
#include "bpfrt/tracepoint.h"
#include "core/prog.h"
#include "core/prog_kind.h"
#include "attach/attach_kind.h"

#include <errno.h>
#include <linux/bpf_perf_event.h>
#include <stdlib.h>
#include <string.h>

#define CALLER_CTX_SIZE 40 /* the ctx_size given to UNSPEC/SYSCALL loads */

/* The context size the verifier should allow a raw load of kind (no
 * attach target: a tracepoint kind gets the most arguments any has). */
static uint32_t expected_ctx_size(const struct bpfrt_prog_kind_desc *d)
{
	switch (d->ctx.sizing) {
	case BPFRT_CTX_FIXED:
		return d->ctx.size;
	case BPFRT_CTX_TP_ARGS:
		return d->ctx.size + 8 * BPFRT_TP_MAX_ARGS;
	case BPFRT_CTX_CALLER:
		return CALLER_CTX_SIZE;
	}
	return 0;
}

static int load_kind(int kind, const struct bpf_insn *insns, size_t cnt, struct bpfrt_prog **p)
{
	struct bpfrt_prog_load_opts o = { .sz = sizeof(o), .name = "kind_prog", .verify = true,
					  .kind = (enum bpfrt_prog_kind)kind,
					  .ctx_size = CALLER_CTX_SIZE };

	*p = NULL;
	return bpfrt_prog_load(insns, cnt, &o, p);
}

/* Loads (verified, as kind) a program accessing width bytes of the
 * context at off, a store if write; the load's result, the program freed. */
static int ctx_access(int kind, int16_t off, int width, bool write)
{
	int size = width == 8 ? BPF_DW : width == 4 ? BPF_W : width == 2 ? BPF_H : BPF_B;
	struct bpf_insn insns[] = {
		write ? ST(size, 1, off, 0) : LDX(size, 2, 1, off),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	struct bpfrt_prog *p;
	int err = load_kind(kind, insns, ARRAY_LEN(insns), &p);

	bpfrt_prog_free(p);
	return err;
}

/* Does a program of a SEC() section match the table's definition? */
static bool sec_is(const char *sec, const struct bpfrt_sec_def *def, bool with_target)
{
	size_t n = strlen(def->name);

	if (strncmp(sec, def->name, n))
		return false;
	return with_target ? sec[n] == '/' : !sec[n];
}

static void check_sec_form(struct bpfrt_object *obj, int kind, const struct bpfrt_sec_def *def,
			   bool with_target)
{
	struct bpfrt_prog *p = NULL;
	bool found = false;

	while ((p = bpfrt_object_next_prog(obj, p))) {
		const char *sec = bpfrt_prog_section(p);

		if (!sec_is(sec, def, with_target))
			continue;
		found = true;
		CHECK(bpfrt_prog_kind(p) == (enum bpfrt_prog_kind)kind, "SEC(\"%s\"): kind %d, "
		      "the table says %d (%s)", sec, bpfrt_prog_kind(p), kind,
		      bpfrt_prog_kind_str(kind));
		CHECK(!strcmp(bpfrt_prog_attach_target(p),
			      with_target ? sec + strlen(def->name) + 1 : ""),
		      "SEC(\"%s\"): target '%s'", sec, bpfrt_prog_attach_target(p));
	}
	CHECK(found, "prog_kinds.bpf.o has no program in a section '%s%s' (kind %s): add one",
	      def->name, with_target ? "/TARGET" : "", bpfrt_prog_kind_str(kind));
}

TEST(every_sec_name_loads_as_its_kind)
{
	struct bpfrt_object *obj = NULL;
	int defs = 0;

	REQUIRE(bpfrt_object_open(tl_prog_path("prog_kinds.bpf.o"), NULL, &obj) == 0, "%s",
		bpfrt_last_error());
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);

		REQUIRE(d, "kind %d has no description", k);
		if (d->load_refused) /* prog_kinds.bpf.o could not load: tests/test_sec_names.c */
			continue;
		for (const struct bpfrt_sec_def *def = d->secs; def && def->name; def++, defs++) {
			if (def->syntax != BPFRT_SEC_TARGET)
				check_sec_form(obj, k, def, false);
			if (def->syntax != BPFRT_SEC_EXACT)
				check_sec_form(obj, k, def, true);
		}
	}
	CHECK(defs >= 110, "only %d SEC() names in the table", defs);
	/* and the whole object loads: each program verifies as its kind */
	CHECK(bpfrt_object_load(obj, NULL) == 0, "%s", bpfrt_last_error());
	bpfrt_object_close(obj);
}

/* What the syntax flags refuse: a name that needs a target without one,
 * a target after an exact name, a name glued to more letters. */
TEST(sec_names_outside_the_syntax_are_unknown)
{
	static const char *const bad[] = {
		"syscall/x", "syscalls", "xdpfoo", "socket_filter", "uprobes/x", "fentry.multix/y",
		"tpx/y", "", "?", "tc/x", "tcx", "cgroup/skbx", "sockops/x", "lsmx/y",
		"kprobe.multix", "cgroup/", "??tc", "sk_msg/x", "perf_event/x",
	};
	static const struct { const char *sec, *target; enum bpfrt_prog_kind kind; } good[] = {
		{ "tp/", "", BPFRT_PROG_TRACEPOINT },
		{ "fentry.multi/a*", "a*", BPFRT_PROG_FENTRY_MULTI },
		{ "fentry/fentry.multi", "fentry.multi", BPFRT_PROG_FENTRY },
		{ "tp_btf/x", "x", BPFRT_PROG_RAW_TRACEPOINT },
		{ "uretprobe", "", BPFRT_PROG_UPROBE },
		{ "tp", "", BPFRT_PROG_TRACEPOINT }, { "raw_tp", "", BPFRT_PROG_RAW_TRACEPOINT },
		{ "fentry", "", BPFRT_PROG_FENTRY }, { "kprobe", "", BPFRT_PROG_KPROBE },
		{ "?tc", "", BPFRT_PROG_SCHED_CLS }, { "xdp/devmap", "devmap", BPFRT_PROG_XDP },
	};
	enum bpfrt_prog_kind kind;
	const char *target;

	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		CHECK(bpfrt_prog_kind_from_sec(bad[i], &kind, &target) == -ENOENT,
		      "SEC(\"%s\") parsed as %s", bad[i], bpfrt_prog_kind_str(kind));
	for (size_t i = 0; i < ARRAY_LEN(good); i++) {
		kind = BPFRT_PROG_UNSPEC;
		target = NULL;
		CHECK(bpfrt_prog_kind_from_sec(good[i].sec, &kind, &target) == 0 &&
		      kind == good[i].kind && target && !strcmp(target, good[i].target),
		      "SEC(\"%s\"): kind %s target '%s'", good[i].sec, bpfrt_prog_kind_str(kind),
		      target ? target : "(none)");
	}
}

/* The sizes themselves, written down apart from the table: Linux's
 * layouts (struct pt_regs, xdp_md, __sk_buff), the tracepoint entry and
 * u64 arguments, the trampoline frame's 6 arguments (and the return value). */
TEST(context_sizes_are_the_hooks_layouts)
{
	const uint32_t tp_args = 8 * BPFRT_TP_MAX_ARGS;
	static const struct { enum bpfrt_prog_kind kind; uint32_t size; } want[] = {
		{ BPFRT_PROG_TRACEPOINT, sizeof(struct bpfrt_tp_entry) + 8 * BPFRT_TP_MAX_ARGS },
		{ BPFRT_PROG_RAW_TRACEPOINT, 8 * BPFRT_TP_MAX_ARGS },
		{ BPFRT_PROG_FENTRY, 48 }, { BPFRT_PROG_FEXIT, 56 }, { BPFRT_PROG_FMOD_RET, 56 },
		{ BPFRT_PROG_FENTRY_MULTI, 48 },
		{ BPFRT_PROG_KPROBE, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_KRETPROBE, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_UPROBE, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_SOCKET, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_XDP, sizeof(struct xdp_md) },
		{ BPFRT_PROG_UNSPEC, CALLER_CTX_SIZE }, { BPFRT_PROG_SYSCALL, CALLER_CTX_SIZE },
		{ BPFRT_PROG_KPROBE_MULTI, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_UPROBE_MULTI, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_USDT, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_KSYSCALL, sizeof(struct bpfrt_pt_regs) },
		{ BPFRT_PROG_PERF_EVENT, sizeof(struct bpf_perf_event_data) },
		{ BPFRT_PROG_SCHED_CLS, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_SCHED_ACT, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_CGROUP_SKB, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_CGROUP_SOCK, sizeof(struct bpf_sock) },
		{ BPFRT_PROG_CGROUP_SOCK_ADDR, sizeof(struct bpf_sock_addr) },
		{ BPFRT_PROG_CGROUP_SYSCTL, sizeof(struct bpf_sysctl) },
		{ BPFRT_PROG_CGROUP_SOCKOPT, sizeof(struct bpf_sockopt) },
		{ BPFRT_PROG_CGROUP_DEVICE, sizeof(struct bpf_cgroup_dev_ctx) },
		{ BPFRT_PROG_SOCK_OPS, sizeof(struct bpf_sock_ops) },
		{ BPFRT_PROG_SK_SKB, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_SK_MSG, sizeof(struct sk_msg_md) },
		{ BPFRT_PROG_SK_LOOKUP, sizeof(struct bpf_sk_lookup) },
		{ BPFRT_PROG_SK_REUSEPORT, sizeof(struct sk_reuseport_md) },
		{ BPFRT_PROG_FLOW_DISSECTOR, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_LWT, sizeof(struct __sk_buff) },
		{ BPFRT_PROG_LIRC_MODE2, 4 },
		{ BPFRT_PROG_LSM, 48 }, { BPFRT_PROG_ITER, 16 }, { BPFRT_PROG_STRUCT_OPS, 96 },
		{ BPFRT_PROG_NETFILTER, 16 }, { BPFRT_PROG_FEXIT_MULTI, 56 },
		{ BPFRT_PROG_FSESSION, 56 }, { BPFRT_PROG_EXT, 8 },
	};

	CHECK(ARRAY_LEN(want) == (size_t)bpfrt_prog_kind_count(), "a kind without a size here");
	CHECK(sizeof(struct bpfrt_pt_regs) == 168 && tp_args == 96);
	for (size_t i = 0; i < ARRAY_LEN(want); i++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(want[i].kind);

		CHECK(d && expected_ctx_size(d) == want[i].size, "%s: %u bytes, want %u",
		      bpfrt_prog_kind_str(want[i].kind), d ? expected_ctx_size(d) : 0,
		      want[i].size);
	}
}

/* Kinds with the kernel's field rules are checked field by field in
 * tests/test_kernel_kinds.c; these are the ones whose whole context is
 * one region. */
TEST(context_size_is_what_the_verifier_allows)
{
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		uint32_t size = expected_ctx_size(d);

		if (d->ctx.rule || d->load_refused)
			continue;
		int width = d->ctx.u64_only ? 8 : 1;
		struct bpf_insn last[] = {
			LDX(d->ctx.u64_only ? BPF_DW : BPF_B, 2, 1, (int16_t)(size - width)),
			MOV64_IMM(0, 0),
			EXIT(),
		};
		struct bpfrt_prog *p;
		int err;

		REQUIRE(size >= 8, "%s: context of %u bytes", d->short_name, size);
		err = load_kind(k, last, ARRAY_LEN(last), &p);
		CHECK(!err, "%s: a %d-byte read at %u (the last) refused: %s", d->short_name, width,
		      size - width, bpfrt_last_error());
		if (p)
			CHECK(bpfrt_prog_ctx_size(p) == size && bpfrt_prog_ctx_access(p) == size,
			      "%s: verified for %u bytes, reads %u; the table says %u",
			      d->short_name, bpfrt_prog_ctx_size(p), bpfrt_prog_ctx_access(p), size);
		bpfrt_prog_free(p);
		err = ctx_access(k, (int16_t)size, width, false);
		CHECK(err == -EACCES && strstr(bpfrt_last_error(), "invalid bpf_context access"),
		      "%s: a read at %u (past the end) gave %d: %s", d->short_name, size, err,
		      bpfrt_last_error());
		if (d->ctx.u64_only)
			CHECK(ctx_access(k, 4, 4, false) == -EACCES,
			      "%s: a 4-byte read of a trampoline frame accepted", d->short_name);
		/* writes: only where the context is the caller's memory */
		err = ctx_access(k, 0, 8, true);
		if (d->ctx.rdonly)
			CHECK(err == -EACCES && strstr(bpfrt_last_error(), "read-only"),
			      "%s: a context write gave %d: %s", d->short_name, err,
			      bpfrt_last_error());
		else
			CHECK(!err, "%s: a context write refused: %s", d->short_name,
			      bpfrt_last_error());
		CHECK(d->ctx.rdonly == !d->info.ctx_writable, "%s: read-only %d, ctx_writable %d",
		      d->short_name, d->ctx.rdonly, d->info.ctx_writable);
	}
}

/* r2 = data, r3 = data_end (whole-field loads); if (r2 + 1 <= r3) read
 * the packet's first byte: verifies only where the fields are packet
 * pointers. */
TEST(packet_fields_are_packet_pointers_only_where_the_table_says)
{
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		const struct bpfrt_ctx_packet_field *data = NULL, *end = NULL;
		int16_t data_off = 0, end_off = 8;
		struct bpfrt_prog *p;
		int err;

		if (d->ctx.rule || d->load_refused) /* tests/test_kernel_kinds.c */
			continue;
		for (unsigned int i = 0; i < d->ctx.packet_field_cnt; i++) {
			if (d->ctx.packet_fields[i].role == BPFRT_PKT_END)
				end = &d->ctx.packet_fields[i];
			else if (d->ctx.packet_fields[i].role == BPFRT_PKT_DATA)
				data = &d->ctx.packet_fields[i];
		}
		/* xdp_md alone holds packet pointers (a socket filter reads
		 * its packet through helpers) */
		CHECK(!!d->ctx.packet_field_cnt == (k == BPFRT_PROG_XDP), "%s: %u packet fields",
		      d->short_name, d->ctx.packet_field_cnt);
		CHECK(!d->ctx.packet_field_cnt || (data && end && data->width == 4 &&
						   end->width == 4),
		      "%s: packet fields should be u32 data and data_end", d->short_name);
		if (data && end) {
			data_off = (int16_t)data->off;
			end_off = (int16_t)end->off;
		}
		{
			struct bpf_insn insns[] = {
				LDX(d->ctx.u64_only ? BPF_DW : BPF_W, 2, 1, data_off),
				LDX(d->ctx.u64_only ? BPF_DW : BPF_W, 3, 1, end_off),
				MOV64_REG(4, 2),
				ALU64_IMM(BPF_ADD, 4, 1),
				MOV64_IMM(0, 0),
				JMP_REG(BPF_JGT, 4, 3, 1),
				LDX(BPF_B, 0, 2, 0),
				EXIT(),
			};

			err = load_kind(k, insns, ARRAY_LEN(insns), &p);
			bpfrt_prog_free(p);
		}
		if (d->ctx.packet_field_cnt) {
			CHECK(!err, "%s: packet read refused: %s", d->short_name, bpfrt_last_error());
			CHECK(d->info.packet, "%s: packet fields, but test runs take no packet",
			      d->short_name);
			/* half a pointer is a number made of address bits */
			err = ctx_access(k, (int16_t)(data_off + 2), 2, false);
			CHECK(err == -EACCES, "%s: a 2-byte read of data accepted", d->short_name);
		} else {
			CHECK(err == -EACCES, "%s: a packet read through context fields accepted",
			      d->short_name);
		}
	}
}

/* 72 bytes of stack (more than 64): a private stack by default exactly
 * for the tracing-like kinds. */
TEST(tracing_kinds_get_private_stacks_by_default)
{
	struct bpf_insn insns[] = {
		ST(BPF_DW, 10, -72, 0),
		LDX(BPF_DW, 0, 10, -72),
		EXIT(),
	};
	int tracing = 0;

	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		struct bpfrt_prog *p;
		int err;

		if (d->load_refused)
			continue;
		err = load_kind(k, insns, ARRAY_LEN(insns), &p);
		CHECK(!err, "%s: %s", d->short_name, bpfrt_last_error());
		if (!p)
			continue;
		CHECK(bpfrt_prog_stack_depth(p) == 72, "%s: stack %u", d->short_name,
		      bpfrt_prog_stack_depth(p));
		CHECK(p->privstack == d->info.tracing, "%s: private stack %d, tracing %d",
		      d->short_name, p->privstack, d->info.tracing);
		CHECK(bpfrt_prog_kind_is_tracing(k) == d->info.tracing, "%s", d->short_name);
		tracing += d->info.tracing;
		bpfrt_prog_free(p);
	}
	CHECK(tracing == 16, "%d tracing kinds (tp, raw_tp, fentry, fexit, fmod_ret, "
	      "fentry.multi, kprobe, kretprobe, uprobe, kprobe.multi, uprobe.multi, usdt, "
	      "ksyscall, perf_event, fexit.multi, fsession)", tracing);
}

/* A test run builds the context the table says: a packet kind needs
 * data_in, every other refuses it; ctx_out only where the context is not
 * a tracing hook's. */
TEST(test_runs_take_what_the_table_says)
{
	struct bpf_insn ret0[] = { MOV64_IMM(0, 0), EXIT() };
	uint8_t pkt[64] = { 0 }, ctx[256] = { 0 }, ctx_out[256];

	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		uint32_t size = expected_ctx_size(d);
		struct bpfrt_test_run_opts o = { .sz = sizeof(o) };
		struct bpfrt_prog *p;
		int err;

		if (d->load_refused)
			continue;
		REQUIRE(!load_kind(k, ret0, ARRAY_LEN(ret0), &p), "%s: %s", d->short_name,
			bpfrt_last_error());
		if (!d->info.runs) {
			/* a kernel's context: refused, naming the kind */
			o.ctx_in = ctx;
			o.ctx_size_in = size;
			err = bpfrt_prog_test_run_opts(p, &o);
			CHECK(err == -EOPNOTSUPP && strstr(bpfrt_last_error(), d->short_name) &&
			      strstr(bpfrt_last_error(), "cannot run"),
			      "%s: %d %s", d->short_name, err, bpfrt_last_error());
			bpfrt_prog_free(p);
			continue;
		}
		if (d->info.packet) {
			o.data_in = pkt;
			o.data_size_in = sizeof(pkt);
		} else if (!d->info.tracing) {
			o.ctx_in = ctx;
			o.ctx_size_in = size;
		}
		err = bpfrt_prog_test_run_opts(p, &o);
		CHECK(!err, "%s: %s", d->short_name, bpfrt_last_error());
		/* the other input refused, naming the kind */
		o = (struct bpfrt_test_run_opts){ .sz = sizeof(o) };
		if (!d->info.packet) {
			o.data_in = pkt;
			o.data_size_in = sizeof(pkt);
		}
		err = bpfrt_prog_test_run_opts(p, &o);
		CHECK(err == -EINVAL && strstr(bpfrt_last_error(), d->info.name),
		      "%s: run without its input: %d %s", d->short_name, err, bpfrt_last_error());
		/* ctx_out */
		o = (struct bpfrt_test_run_opts){ .sz = sizeof(o), .ctx_out = ctx_out,
						  .ctx_size_out = sizeof(ctx_out) };
		if (d->info.packet) {
			o.data_in = pkt;
			o.data_size_in = sizeof(pkt);
		} else if (!d->info.tracing) {
			o.ctx_in = ctx;
			o.ctx_size_in = size;
		}
		err = bpfrt_prog_test_run_opts(p, &o);
		if (d->info.tracing)
			CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "read-only"),
			      "%s: ctx_out: %d %s", d->short_name, err, bpfrt_last_error());
		else
			CHECK(!err && o.ctx_size_out == (d->info.packet ? d->ctx.size : size),
			      "%s: ctx_out: %d (%u bytes) %s", d->short_name, err, o.ctx_size_out,
			      bpfrt_last_error());
		bpfrt_prog_free(p);
	}
}

TEST(attach_refuses_the_kinds_it_cannot_attach_naming_them)
{
	struct bpf_insn ret0[] = { MOV64_IMM(0, 0), EXIT() };
	int attachable = 0;

	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		struct bpfrt_link *l = NULL;
		struct bpfrt_prog *p;
		int err;

		CHECK(d->info.attachable == (bpfrt_attach_kind_fn(k) != NULL),
		      "%s: attachable %d in the engine table, a host attach function: %s",
		      d->short_name, d->info.attachable, bpfrt_attach_kind_fn(k) ? "yes" : "no");
		if (d->load_refused)
			continue;
		REQUIRE(!load_kind(k, ret0, ARRAY_LEN(ret0), &p), "%s: %s", d->short_name,
			bpfrt_last_error());
		err = bpfrt_prog_attach(p, NULL, &l);
		if (d->info.attachable) {
			/* raw loads have no target: refused for that, not the kind */
			CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "no attach target"),
			      "%s: %d %s", d->short_name, err, bpfrt_last_error());
			attachable++;
		} else {
			char want[64];

			snprintf(want, sizeof(want), "kind %s cannot attach", d->short_name);
			CHECK(err == -EOPNOTSUPP && strstr(bpfrt_last_error(), want),
			      "%s: %d %s", d->short_name, err, bpfrt_last_error());
		}
		CHECK(!l);
		bpfrt_prog_free(p);
	}
	CHECK(attachable == 9, "%d attachable kinds", attachable);
	CHECK(!bpfrt_attach_kind_fn(-1) && !bpfrt_attach_kind_fn(bpfrt_prog_kind_count()));
}

TEST(public_kind_info_and_names)
{
	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_info *info =
			bpfrt_prog_kind_info((enum bpfrt_prog_kind)k);

		REQUIRE(info && info->name && *info->name, "kind %d", k);
		CHECK(info == &bpfrt_prog_kind_desc(k)->info);
		for (int j = 0; j < k; j++) {
			CHECK(strcmp(info->name, bpfrt_prog_kind_info((enum bpfrt_prog_kind)j)->name),
			      "kinds %d and %d are both %s", j, k, info->name);
			CHECK(strcmp(bpfrt_prog_kind_str(k), bpfrt_prog_kind_str(j)),
			      "kinds %d and %d are both %s", j, k, bpfrt_prog_kind_str(k));
		}
	}
	CHECK(!bpfrt_prog_kind_info((enum bpfrt_prog_kind)-1));
	CHECK(!bpfrt_prog_kind_info((enum bpfrt_prog_kind)bpfrt_prog_kind_count()));
	CHECK(!strcmp(bpfrt_prog_kind_str(bpfrt_prog_kind_count()), "unknown"));
	CHECK(!strcmp(bpfrt_prog_kind_info(BPFRT_PROG_RAW_TRACEPOINT)->name, "raw_tracepoint"));
	CHECK(!strcmp(bpfrt_prog_kind_str(BPFRT_PROG_RAW_TRACEPOINT), "raw_tp"));
	/* pt_regs kinds share their context, nothing else does */
	CHECK(bpfrt_prog_kinds_share_ctx(BPFRT_PROG_KPROBE, BPFRT_PROG_UPROBE));
	CHECK(bpfrt_prog_kinds_share_ctx(BPFRT_PROG_KRETPROBE, BPFRT_PROG_KPROBE));
	CHECK(!bpfrt_prog_kinds_share_ctx(BPFRT_PROG_FENTRY, BPFRT_PROG_FEXIT));
	CHECK(!bpfrt_prog_kinds_share_ctx(BPFRT_PROG_SOCKET, BPFRT_PROG_XDP));
	CHECK(!bpfrt_prog_kinds_share_ctx(BPFRT_PROG_KPROBE, bpfrt_prog_kind_count()));
}

TEST(raw_load_refuses_a_value_that_is_no_kind)
{
	struct bpf_insn ret0[] = { MOV64_IMM(0, 0), EXIT() };
	struct bpfrt_prog *p;
	int err = load_kind(bpfrt_prog_kind_count(), ret0, ARRAY_LEN(ret0), &p);

	CHECK(err == -EINVAL && !p && strstr(bpfrt_last_error(), "no program kind"), "%d %s",
	      err, bpfrt_last_error());
}

/* r0 = 1 at exit: refused exactly where the table says the kind must
 * return 0 (fentry and fexit, as Linux). */
TEST(return_value_rule_is_the_tables)
{
	struct bpf_insn ret1[] = { MOV64_IMM(0, 1), EXIT() };

	for (int k = 0; k < bpfrt_prog_kind_count(); k++) {
		const struct bpfrt_prog_kind_desc *d = bpfrt_prog_kind_desc(k);
		struct bpfrt_prog *p;
		int err;

		if (d->load_refused)
			continue;
		err = load_kind(k, ret1, ARRAY_LEN(ret1), &p);

		CHECK(d->returns_zero == (k == BPFRT_PROG_FENTRY || k == BPFRT_PROG_FEXIT), "%s",
		      d->short_name);
		if (d->returns_zero)
			CHECK(err == -EACCES && strstr(bpfrt_last_error(), "should have been in [0, 0]"),
			      "%s: returning 1: %d %s", d->short_name, err, bpfrt_last_error());
		else
			CHECK(!err, "%s: returning 1: %s", d->short_name, bpfrt_last_error());
		bpfrt_prog_free(p);
	}
}
