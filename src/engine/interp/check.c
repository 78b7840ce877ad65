/* The checking interpreter's regions, checks and reports (see check.h). */
#include "interp/check.h"
#include "core/run.h"
#include "core/thread_mem.h"
#include "helpers/callback.h"
#include "helpers/dynptr.h"
#include "helpers/iter.h"
#include "isa/disasm.h"
#include "isa/isa.h"
#include "maps/map.h"
#include "verifier/verifier.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This thread's last report, outside static TLS (core/thread_mem.h). */
#define REPORT_SIZE 1024
static __thread void *check_report __attribute__((tls_model("initial-exec")));
static const char report_lost[] = "checking interpreter: violation (no memory for the report)";

static char *report_buf(void)
{
	return bpfrt_thread_mem(&check_report, REPORT_SIZE);
}

const char *bpfrt_check_report(void)
{
	return check_report ? check_report : "";
}

/* ---- regions ------------------------------------------------------------ */

static const char *const region_names[] = {
	[BPFRT_REGION_CTX] = "context",
	[BPFRT_REGION_PACKET] = "packet",
	[BPFRT_REGION_STACK] = "stack",
	[BPFRT_REGION_MAP_VALUE] = "map value",
	[BPFRT_REGION_RINGBUF] = "ringbuf record",
	[BPFRT_REGION_DYNPTR] = "dynptr",
	[BPFRT_REGION_PACKET_META] = "packet metadata",
};

static bool region_holds(const struct bpfrt_check_region *r, uint64_t addr, uint64_t size)
{
	return addr >= r->start && addr <= r->end && size <= r->end - addr;
}

/* Adds a live region unless the same one is live already (a lookup in a
 * loop returns the same value again and again). */
static void region_add(struct bpfrt_check_run *cr, uint64_t start, uint64_t size, uint8_t kind,
		       bool writable, const struct bpfrt_map *map)
{
	bool readable = !map || !(map->map_flags & BPF_F_WRONLY_PROG);

	struct bpfrt_check_region *r;

	for (uint32_t i = cr->region_cnt; i-- > 0;) {
		r = &cr->regions[i];
		if (r->start == start && r->end == start + size && r->kind == kind && !r->released) {
			r->writable = writable;
			r->readable = readable;
			return;
		}
	}
	if (cr->region_cnt == cr->region_cap) {
		uint32_t cap = cr->region_cap ? cr->region_cap * 2 : 16;
		struct bpfrt_check_region *n = realloc(cr->regions, cap * sizeof(*n));

		if (!n) {
			cr->regions_full = true;
			return;
		}
		cr->regions = n;
		cr->region_cap = cap;
	}
	cr->regions[cr->region_cnt++] = (struct bpfrt_check_region){
		.start = start, .end = start + size, .kind = kind, .writable = writable,
		.readable = readable, .map = map,
	};
}

bool bpfrt_check_add_region(struct bpfrt_check_run *cr, uint64_t start, uint64_t size,
			    uint8_t kind, bool writable, const struct bpfrt_map *map)
{
	region_add(cr, start, size, kind, writable, map);
	return !cr->regions_full;
}

void bpfrt_check_release_region(struct bpfrt_check_run *cr, uint64_t start)
{
	for (uint32_t i = 0; i < cr->region_cnt; i++)
		if (cr->regions[i].start == start)
			cr->regions[i].released = true;
}

static struct bpfrt_check_region *region_find(struct bpfrt_check_run *cr, uint64_t addr,
					      uint64_t size)
{
	if (region_holds(&cr->ctx_region, addr, size))
		return &cr->ctx_region;
	if (cr->pkt_region.end && region_holds(&cr->pkt_region, addr, size))
		return &cr->pkt_region;
	if (cr->meta_region.end && region_holds(&cr->meta_region, addr, size))
		return &cr->meta_region;
	for (uint32_t i = cr->region_cnt; i-- > 0;)
		if (!cr->regions[i].released && region_holds(&cr->regions[i], addr, size))
			return &cr->regions[i];
	return NULL;
}

static struct bpfrt_check_stack *stack_find(struct bpfrt_check_run *cr, uint64_t addr)
{
	for (struct bpfrt_check_stack *s = cr->stack; s; s = s->outer)
		if (addr >= s->base && addr < s->top)
			return s;
	return NULL;
}

static bool map_writable_by_prog(const struct bpfrt_map *map)
{
	return !(map->map_flags & BPF_F_RDONLY_PROG);
}

void bpfrt_check_set_prog(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog)
{
	bool rdonly = false;
	uint32_t kind_size = bpfrt_verify_ctx_size(prog, cr->ctx_given, &rdonly);
	uint32_t len = cr->ctx_given;

	if (kind_size < len)
		len = kind_size;
	if (prog->verified && prog->max_ctx_access < len)
		len = prog->max_ctx_access;
	cr->ctx_prog = prog;
	cr->ctx_region = (struct bpfrt_check_region){
		.start = cr->ctx, .end = cr->ctx + len, .kind = BPFRT_REGION_CTX,
		.writable = !rdonly, .readable = true,
	};
}

/* One packet-pointer field of the context (zero-extended, as the
 * verifier types a whole-field load of it). */
static uint64_t ctx_pointer_field(uint64_t ctx, const struct bpfrt_ctx_packet_field *f)
{
	const void *at = (const void *)(uintptr_t)(ctx + f->off);
	uint32_t v32;
	uint64_t v64;

	if (f->width == 4) {
		memcpy(&v32, at, 4);
		return v32;
	}
	memcpy(&v64, at, 8);
	return v64;
}

/* The packet [data, data_end) a context of prog's kind points to, if its
 * kind has one and the run gave the fields, and where its metadata starts
 * (*data_meta: data if the kind has none). */
static bool ctx_packet(const struct bpfrt_prog *prog, uint64_t ctx, uint32_t ctx_given,
		       uint64_t *data, uint64_t *data_end, uint64_t *data_meta)
{
	const struct bpfrt_prog_kind_desc *desc = bpfrt_prog_kind_desc(prog->kind);
	bool have_data = false, have_end = false, have_meta = false;

	if (!desc)
		return false;
	for (unsigned int i = 0; i < desc->ctx.packet_field_cnt; i++) {
		const struct bpfrt_ctx_packet_field *f = &desc->ctx.packet_fields[i];

		if ((uint32_t)f->off + f->width > ctx_given)
			return false;
		switch (f->role) {
		case BPFRT_PKT_END:
			*data_end = ctx_pointer_field(ctx, f);
			have_end = true;
			break;
		case BPFRT_PKT_META:
			*data_meta = ctx_pointer_field(ctx, f);
			have_meta = true;
			break;
		default:
			*data = ctx_pointer_field(ctx, f);
			have_data = true;
			break;
		}
	}
	if (!have_meta)
		*data_meta = *data;
	return have_data && have_end;
}

void bpfrt_check_run_init(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			  uint64_t ctx, uint64_t ctx_len)
{
	uint64_t data = 0, data_end = 0, data_meta = 0;

	memset(cr, 0, sizeof(*cr));
	cr->ctx = ctx;
	cr->ctx_given = ctx && ctx_len < UINT32_MAX ? (uint32_t)ctx_len : ctx ? UINT32_MAX : 0;
	bpfrt_check_set_prog(cr, prog);
	/* the packet between the context's packet-pointer fields (xdp_md's
	 * u32 data and data_end: the packet lies below 4 GiB, as the
	 * verifier's packet pointers assume) */
	if (ctx_packet(prog, ctx, cr->ctx_given, &data, &data_end, &data_meta) &&
	    data <= data_end) {
		cr->pkt_region = (struct bpfrt_check_region){
			.start = data, .end = data_end, .kind = BPFRT_REGION_PACKET,
			.writable = true, .readable = true,
		};
		/* the metadata ends where the packet starts (a context
		 * whose data_meta lies past data has none) */
		if (data_meta < data)
			cr->meta_region = (struct bpfrt_check_region){
				.start = data_meta, .end = data, .kind = BPFRT_REGION_PACKET_META,
				.writable = true, .readable = true,
			};
	}
}

void bpfrt_check_run_fini(struct bpfrt_check_run *cr)
{
	free(cr->regions);
	cr->regions = NULL;
}

void bpfrt_check_frame_enter(struct bpfrt_check_stack *cs, uint64_t lo, uint64_t fp)
{
	cs->lo = lo;
	if (fp > lo)
		memset(cs->init + (lo - cs->base), 0, fp - lo);
}

/* ---- reports ---------------------------------------------------------- */

/* Aborts the run with the report (the first violation of a run wins). */
static void abort_run(const struct bpfrt_prog *prog, const struct bpf_insn *insn)
{
	struct bpfrt_run_state *rs = &bpfrt_run_state;

	if (rs->abort_err)
		return;
	rs->abort_err = EFAULT;
	rs->abort_pc = (uint32_t)(insn - prog->insns);
	rs->abort_arg = 0;
	rs->abort_msg = check_report ? check_report : report_lost;
}

/* "prog: insn N (text): " */
static int report_head(const struct bpfrt_prog *prog, const struct bpf_insn *insn)
{
	char text[BPFRT_DISASM_LINE_MAX];
	uint32_t pc = (uint32_t)(insn - prog->insns);

	if (pc >= prog->insn_cnt ||
	    bpfrt_disasm_insn(insn, prog->insn_cnt - pc, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "?");
	char *buf = report_buf();

	if (!buf)
		return -1;
	return snprintf(buf, REPORT_SIZE, "%s: insn %u (%s): ", prog->name, pc, text);
}

static void report_tail(int at, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_tail(int at, const char *fmt, ...)
{
	char *buf = check_report;
	va_list ap;

	if (!buf || at < 0 || (size_t)at >= REPORT_SIZE)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + at, REPORT_SIZE - (size_t)at, fmt, ap);
	va_end(ap);
}

static void describe_region(char *buf, size_t len, const struct bpfrt_check_region *r)
{
	const char *name = r->kind < sizeof(region_names) / sizeof(region_names[0])
				   ? region_names[r->kind] : "region";

	if (r->map)
		snprintf(buf, len, "%s%s of map '%s' [%#llx, %#llx)",
			 r->released ? "released " : "", name, r->map->name,
			 (unsigned long long)r->start, (unsigned long long)r->end);
	else
		snprintf(buf, len, "%s%s [%#llx, %#llx)", r->released ? "released " : "", name,
			 (unsigned long long)r->start, (unsigned long long)r->end);
}

static uint64_t distance(uint64_t addr, uint64_t size, uint64_t start, uint64_t end)
{
	if (addr + size <= start)
		return start - addr;
	if (addr >= end)
		return addr - end + 1;
	return 0;
}

/* The region nearest [addr, addr + size), described into buf. */
static void nearest_region(struct bpfrt_check_run *cr, uint64_t addr, uint64_t size, char *buf,
			   size_t len)
{
	const struct bpfrt_check_region *best = NULL;
	struct bpfrt_check_region stack_region;
	uint64_t best_d = UINT64_MAX, d;

	snprintf(buf, len, "no region");
#define CONSIDER(r) do {                                                       \
	d = distance(addr, size, (r)->start, (r)->end);                        \
	if (d < best_d) {                                                      \
		best_d = d;                                                    \
		best = (r);                                                    \
	}                                                                      \
} while (0)
	if (cr->ctx)
		CONSIDER(&cr->ctx_region);
	if (cr->pkt_region.end)
		CONSIDER(&cr->pkt_region);
	if (cr->meta_region.end)
		CONSIDER(&cr->meta_region);
	for (uint32_t i = 0; i < cr->region_cnt; i++)
		CONSIDER(&cr->regions[i]);
	for (const struct bpfrt_check_stack *s = cr->stack; s; s = s->outer) {
		d = distance(addr, size, s->lo, s->top);
		if (d < best_d) {
			best_d = d;
			stack_region = (struct bpfrt_check_region){
				.start = s->lo, .end = s->top, .kind = BPFRT_REGION_STACK,
			};
			best = &stack_region;
		}
	}
#undef CONSIDER
	if (!best)
		return;
	describe_region(buf, len, best);
	if (addr + size > best->end && addr >= best->start)
		snprintf(buf + strlen(buf), len - strlen(buf), ", %llu bytes past its end",
			 (unsigned long long)(addr + size - best->end));
	else if (addr < best->start)
		snprintf(buf + strlen(buf), len - strlen(buf), ", %llu bytes before its start",
			 (unsigned long long)(best->start - addr));
}

static const char *access_name(int access)
{
	return access == BPFRT_CHECK_READ ? "read" : access == BPFRT_CHECK_WRITE ? "write"
									     : "atomic access";
}

/* "WHAT of SIZE bytes at ADDR[DETAIL]: nearest region: ..." */
static bool violation_in(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			 const struct bpf_insn *insn, const char *what, uint64_t addr,
			 uint64_t size, const char *detail)
{
	char near[256];
	int at = report_head(prog, insn);

	nearest_region(cr, addr, size, near, sizeof(near));
	report_tail(at, "%s of %llu bytes at %#llx%s: nearest region: %s", what,
		    (unsigned long long)size, (unsigned long long)addr, detail, near);
	abort_run(prog, insn);
	return false;
}

static bool violation(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		      const struct bpf_insn *insn, const char *what, uint64_t addr, uint64_t size)
{
	return violation_in(cr, prog, insn, what, addr, size, "");
}

void bpfrt_check_control(const struct bpfrt_prog *prog, const struct bpf_insn *insn,
			 const char *what)
{
	char *buf = report_buf();
	int at = buf ? snprintf(buf, REPORT_SIZE, "%s: insn %lld: ", prog->name,
				(long long)(insn - prog->insns)) : -1;

	report_tail(at, "%s (the program has %u insns)", what, prog->insn_cnt);
	if (!bpfrt_run_state.abort_err) {
		bpfrt_run_state.abort_err = EFAULT;
		bpfrt_run_state.abort_pc = (uint32_t)(insn - prog->insns);
		bpfrt_run_state.abort_msg = check_report ? check_report : report_lost;
	}
}

/* ---- accesses ------------------------------------------------------------ */

/* The stack part of an access that falls in activation stack s. */
static bool stack_access(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			 const struct bpf_insn *insn, struct bpfrt_check_stack *s, uint64_t addr,
			 uint64_t size, int access, const char *who)
{
	char what[128], detail[64];
	uint8_t *init;

	if (addr < s->lo || addr + size > s->top || addr + size < addr) {
		snprintf(what, sizeof(what), "%sstack %s", who, access_name(access));
		return violation_in(cr, prog, insn, what, addr, size,
				    addr < s->lo ? ", below the live frames"
						 : ", past the live frames");
	}
	init = s->init + (addr - s->base);
	if (access & BPFRT_CHECK_READ)
		for (uint64_t i = 0; i < size; i++)
			if (!init[i]) {
				snprintf(what, sizeof(what), "%sread of uninitialised stack", who);
				snprintf(detail, sizeof(detail), " (byte %#llx never written)",
					 (unsigned long long)(addr + i));
				return violation_in(cr, prog, insn, what, addr, size, detail);
			}
	if (access & BPFRT_CHECK_WRITE)
		memset(init, 1, size);
	return true;
}

static bool check_range(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			const struct bpf_insn *insn, uint64_t addr, uint64_t size, int access,
			const char *who)
{
	struct bpfrt_check_stack *s = stack_find(cr, addr);
	const struct bpfrt_check_region *r;
	char what[128];

	if (cr->regions_full) {
		snprintf(what, sizeof(what), "%sout of memory tracking regions: cannot check", who);
		return violation(cr, prog, insn, what, addr, size);
	}
	if (s)
		return stack_access(cr, prog, insn, s, addr, size, access, who);
	r = region_find(cr, addr, size);
	if (!r) {
		snprintf(what, sizeof(what), "%sout-of-bounds %s", who, access_name(access));
		return violation(cr, prog, insn, what, addr, size);
	}
	if ((access & BPFRT_CHECK_WRITE) && !r->writable) {
		snprintf(what, sizeof(what), "%s%s of read-only %s", who, access_name(access),
			 region_names[r->kind]);
		return violation(cr, prog, insn, what, addr, size);
	}
	if ((access & BPFRT_CHECK_READ) && !r->readable) {
		snprintf(what, sizeof(what), "%s%s of write-only %s", who, access_name(access),
			 region_names[r->kind]);
		return violation(cr, prog, insn, what, addr, size);
	}
	return true;
}

bool bpfrt_check_access(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			const struct bpf_insn *insn, uint64_t addr, uint32_t size, int access)
{
	struct bpfrt_check_stack *s = cr->stack;

	/* the common case: the current activation's live frames */
	if (addr >= s->lo && addr + size <= s->top && addr + size > addr) {
		uint8_t *init = s->init + (addr - s->base);

		if (access & BPFRT_CHECK_READ)
			for (uint32_t i = 0; i < size; i++)
				if (!init[i])
					return stack_access(cr, prog, insn, s, addr, size, access,
							    "");
		if (access & BPFRT_CHECK_WRITE)
			memset(init, 1, size);
		return true;
	}
	return check_range(cr, prog, insn, addr, size, access, "");
}

/* ---- helper and kfunc calls ------------------------------------------------ */

static struct bpfrt_map *known_map(const struct bpfrt_check_run *cr,
				   const struct bpfrt_prog *prog, uint64_t ptr)
{
	for (uint32_t i = 0; i < prog->map_ref_cnt; i++)
		if (prog->map_refs[i].kind == BPF_PSEUDO_MAP_FD &&
		    (uint64_t)(uintptr_t)prog->map_refs[i].map == ptr)
			return prog->map_refs[i].map;
	for (uint32_t i = 0; i < cr->inner_cnt; i++)
		if ((uint64_t)(uintptr_t)cr->inner_maps[i] == ptr)
			return cr->inner_maps[i];
	return NULL;
}

/* Is v the interpreter's handle of one of prog's subprograms (what
 * lddw BPF_PSEUDO_FUNC leaves in a register)? */
static bool callback_of(const struct bpfrt_prog *prog, uint64_t v)
{
	uint64_t start = v & ~BPFRT_CALLBACK_INTERP_TAG;

	return (v & BPFRT_CALLBACK_INTERP_TAG) && start < prog->insn_cnt &&
	       prog->subprogs[prog->insn_subprog[start]].start == start;
}

/* The map argument of the call (the first CONST_MAP_PTR), or NULL. */
static struct bpfrt_map *call_map(const struct bpfrt_check_run *cr,
				  const struct bpfrt_prog *prog, const struct bpfrt_helper *h,
				  const uint64_t *args)
{
	for (int i = 0; i < 5; i++)
		if (h->args[i] == BPFRT_ARG_CONST_MAP_PTR)
			return known_map(cr, prog, args[i]);
	return NULL;
}

static bool is_size_arg(enum bpfrt_arg_type t)
{
	return t == BPFRT_ARG_CONST_SIZE || t == BPFRT_ARG_CONST_SIZE_OR_ZERO;
}

static struct bpfrt_check_region *ringbuf_record(struct bpfrt_check_run *cr, uint64_t ptr)
{
	for (uint32_t i = cr->region_cnt; i-- > 0;)
		if (cr->regions[i].kind == BPFRT_REGION_RINGBUF && !cr->regions[i].released &&
		    cr->regions[i].start == ptr)
			return &cr->regions[i];
	return NULL;
}

static bool bad_arg(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		    const struct bpf_insn *insn, const char *who, const char *what, uint64_t v)
{
	char near[256];
	int at = report_head(prog, insn);

	nearest_region(cr, v, 1, near, sizeof(near));
	report_tail(at, "%s%s (%#llx): nearest region: %s", who, what, (unsigned long long)v,
		    near);
	abort_run(prog, insn);
	return false;
}

/* A NUL-terminated string wholly inside one readable region. */
static bool check_str(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		      const struct bpf_insn *insn, uint64_t p, const char *who)
{
	struct bpfrt_check_stack *s = stack_find(cr, p);
	const struct bpfrt_check_region *r = s ? NULL : region_find(cr, p, 1);
	uint64_t end = s ? s->top : r ? r->end : 0;

	if (!s && !r)
		return bad_arg(cr, prog, insn, who, "string outside every region", p);
	for (uint64_t a = p; a < end; a++)
		if (*(const char *)(uintptr_t)a == 0)
			return check_range(cr, prog, insn, p, a - p + 1, BPFRT_CHECK_READ, who);
	return bad_arg(cr, prog, insn, who, "string not NUL-terminated inside its region", p);
}

/* A dynptr argument: its 16 bytes readable, and the memory it names (if
 * it is not null) inside one live region, writable unless read-only; a
 * released one must name a live ringbuf record, which it releases. */
static bool check_dynptr(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			 const struct bpf_insn *insn, uint64_t v, bool release, const char *who)
{
	const struct bpfrt_dynptr *p = (const struct bpfrt_dynptr *)(uintptr_t)v;
	struct bpfrt_check_region *r;
	uint64_t start;

	if (!check_range(cr, prog, insn, v, sizeof(*p), BPFRT_CHECK_READ, who))
		return false;
	if (!p->data)
		return true;
	start = p->data + p->offset;
	if (release) {
		r = ringbuf_record(cr, p->data);
		if (!r)
			return bad_arg(cr, prog, insn, who, "dynptr of no live ringbuf record",
				       p->data);
		r->released = true; /* the helper submits or discards it */
		return true;
	}
	return check_range(cr, prog, insn, start, bpfrt_dynptr_size(p),
			   bpfrt_dynptr_rdonly(p) ? BPFRT_CHECK_READ : BPFRT_CHECK_RW, who);
}

bool bpfrt_check_call(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		      const struct bpf_insn *insn, const struct bpfrt_helper *h,
		      const uint64_t *args)
{
	struct bpfrt_map *map = NULL;
	struct bpfrt_iter_kfunc it = bpfrt_iter_kfunc_of(h->fn);
	char who[96];

	/* an open-coded iterator's object: stack the kfunc writes (new) or
	 * reads and writes (next, destroy) whole */
	if (it.type != BPFRT_ITER_NONE) {
		snprintf(who, sizeof(who), "%s argument 1: ", h->name ? h->name : "iterator kfunc");
		if (!stack_find(cr, args[0]))
			return bad_arg(cr, prog, insn, who, "iterator not on the stack", args[0]);
		return check_range(cr, prog, insn, args[0], bpfrt_iter_size(it.type),
				   it.op == BPFRT_ITER_OP_NEW ? BPFRT_CHECK_WRITE
							      : BPFRT_CHECK_READ | BPFRT_CHECK_WRITE,
				   who);
	}
	for (int i = 0; i < 5; i++) {
		enum bpfrt_arg_type t = h->args[i];
		uint64_t v = args[i];
		uint64_t size = i < 4 && is_size_arg(h->args[i + 1]) ? args[i + 1] : 0;

		snprintf(who, sizeof(who), "%s argument %d: ", h->name ? h->name : "helper", i + 1);
		switch (t) {
		case BPFRT_ARG_PTR_TO_CTX_OR_NULL:
			if (!v)
				break;
			/* fall through */
		case BPFRT_ARG_PTR_TO_CTX:
			if (v != cr->ctx || !cr->ctx)
				return bad_arg(cr, prog, insn, who, "not the context", v);
			/* a host kfunc may read all of its kind's context (the
			 * verifier counts it so; bpfrt's helpers read none) */
			if (h - prog->helpers >= BPFRT_KFUNC_ID_BASE &&
			    !check_range(cr, prog, insn, v,
					 prog->verified ? prog->ctx_size
							: bpfrt_verify_ctx_size(prog, cr->ctx_given,
										NULL),
					 BPFRT_CHECK_READ, who))
				return false;
			break;
		case BPFRT_ARG_CONST_MAP_PTR:
			map = known_map(cr, prog, v);
			if (!map)
				return bad_arg(cr, prog, insn, who,
					       "not a map the program references", v);
			break;
		case BPFRT_ARG_PTR_TO_MEM:
			if (size && !check_range(cr, prog, insn, v, size, BPFRT_CHECK_READ, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_UNINIT_MEM:
			if (size && !check_range(cr, prog, insn, v, size, BPFRT_CHECK_WRITE, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_LONG:
			if (!check_range(cr, prog, insn, v, 8, BPFRT_CHECK_WRITE, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_MAP_KEY:
		case BPFRT_ARG_PTR_TO_MAP_VALUE:
			if (!map)
				return bad_arg(cr, prog, insn, who, "no map argument before it", v);
			if (!check_range(cr, prog, insn, v,
					 t == BPFRT_ARG_PTR_TO_MAP_KEY ? map->key_size
								       : map->value_size,
					 BPFRT_CHECK_READ, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_UNINIT_MAP_VALUE:
			if (!map)
				return bad_arg(cr, prog, insn, who, "no map argument before it", v);
			/* as the verifier: a bloom filter's peek reads it */
			if (!check_range(cr, prog, insn, v, map->value_size,
					 map->type == BPF_MAP_TYPE_BLOOM_FILTER ? BPFRT_CHECK_READ
										: BPFRT_CHECK_WRITE, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_STACK_OR_NULL:
			/* a handle the helper passes on, never dereferences: any
			 * address of a run's stack, its end (r10 itself) included
			 * (the verifier holds it to the 512-byte frame); what the
			 * callback reads through it is checked access by access */
			if (v && !stack_find(cr, v) && !stack_find(cr, v - 1))
				return bad_arg(cr, prog, insn, who, "not on the stack", v);
			break;
		case BPFRT_ARG_PTR_TO_RINGBUF_MEM:
			if (!ringbuf_record(cr, v))
				return bad_arg(cr, prog, insn, who, "not a live ringbuf record", v);
			break;
		case BPFRT_ARG_PTR_TO_DYNPTR:
		case BPFRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE:
			if (!check_dynptr(cr, prog, insn, v,
					  t == BPFRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_LOCAL:
		case BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF:
			if (!check_range(cr, prog, insn, v, sizeof(struct bpfrt_dynptr),
					 BPFRT_CHECK_WRITE, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_CONST_STR:
			if (!check_str(cr, prog, insn, v, who))
				return false;
			break;
		case BPFRT_ARG_PTR_TO_SPIN_LOCK:
			/* the lock word of a map value the run may write */
			if ((v & 3) || !check_range(cr, prog, insn, v, 4, BPFRT_CHECK_WRITE, who))
				return (v & 3) ? bad_arg(cr, prog, insn, who, "a misaligned lock", v)
					       : false;
			break;
		case BPFRT_ARG_PTR_TO_SOCK_COMMON:
		case BPFRT_ARG_PTR_TO_SOCK_RELEASE:
			/* bpfrt's lookups find no socket and skb->sk reads 0:
			 * no run holds a socket pointer to pass */
			return bad_arg(cr, prog, insn, who, "no socket exists in bpfrt", v);
		case BPFRT_ARG_PTR_TO_FUNC:
			/* the interpreter's callbacks are tagged insn indexes:
			 * an untagged value would be called as native code */
			if (!callback_of(prog, v))
				return bad_arg(cr, prog, insn, who,
					       "not a subprogram of the program", v);
			break;
		default:
			break;
		}
	}
	return true;
}

/* Marks stack bytes a helper wrote as initialised. */
static void helper_wrote(struct bpfrt_check_run *cr, uint64_t p, uint64_t size)
{
	struct bpfrt_check_stack *s = stack_find(cr, p);

	if (s && p >= s->lo && p + size <= s->top)
		memset(s->init + (p - s->base), 1, size);
}

bool bpfrt_check_call_done(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
			   const struct bpf_insn *insn, const struct bpfrt_helper *h,
			   const uint64_t *args, uint64_t r0)
{
	struct bpfrt_map *map = call_map(cr, prog, h, args);
	struct bpfrt_check_region *rec;

	if (bpfrt_run_state.abort_err) /* a callback aborted */
		return false;
	if (cr->ctx_prog != prog) /* a callback tail-called elsewhere */
		bpfrt_check_set_prog(cr, prog);
	{
		struct bpfrt_iter_kfunc it = bpfrt_iter_kfunc_of(h->fn);

		if (it.op == BPFRT_ITER_OP_NEW)
			helper_wrote(cr, args[0], bpfrt_iter_size(it.type));
		if (it.type != BPFRT_ITER_NONE)
			return true; /* its element points into the object */
	}
	for (int i = 0; i < 5; i++) {
		uint64_t size = i < 4 && is_size_arg(h->args[i + 1]) ? args[i + 1] : 0;

		switch (h->args[i]) {
		case BPFRT_ARG_PTR_TO_UNINIT_MEM:
			helper_wrote(cr, args[i], size);
			break;
		case BPFRT_ARG_PTR_TO_LONG:
			helper_wrote(cr, args[i], 8);
			break;
		case BPFRT_ARG_PTR_TO_UNINIT_MAP_VALUE:
			if (map)
				helper_wrote(cr, args[i], map->value_size);
			break;
		case BPFRT_ARG_PTR_TO_RINGBUF_MEM:
			rec = ringbuf_record(cr, args[i]);
			if (rec)
				rec->released = true;
			break;
		case BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_LOCAL:
		case BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF: {
			const struct bpfrt_dynptr *p =
				(const struct bpfrt_dynptr *)(uintptr_t)args[i];

			helper_wrote(cr, args[i], sizeof(*p));
			if (h->args[i] == BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF && p->data)
				region_add(cr, p->data, bpfrt_dynptr_size(p), BPFRT_REGION_RINGBUF,
					   true, map);
			break;
		}
		default:
			break;
		}
	}
	if (!r0)
		return true;
	if (h->ret == BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL && map && bpfrt_map_is_map_in_map(map)) {
		/* an inner map, not memory: the program may pass it on */
		if (cr->inner_cnt < sizeof(cr->inner_maps) / sizeof(cr->inner_maps[0]))
			cr->inner_maps[cr->inner_cnt++] = (struct bpfrt_map *)(uintptr_t)r0;
		else
			return violation(cr, prog, insn, "too many inner maps looked up in one run",
					 r0, 0);
	} else if ((h->ret == BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL ||
		    h->ret == BPFRT_RET_PTR_TO_MAP_VALUE) && map)
		region_add(cr, r0, map->value_size, BPFRT_REGION_MAP_VALUE, map_writable_by_prog(map),
			   map);
	else if (h->ret == BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL)
		for (int i = 0; i < 5; i++)
			if (is_size_arg(h->args[i])) {
				region_add(cr, r0, args[i], BPFRT_REGION_RINGBUF, true, map);
				break;
			}
	if (cr->regions_full)
		return violation(cr, prog, insn, "out of memory tracking regions", r0, 0);
	return true;
}

bool bpfrt_check_lddw(struct bpfrt_check_run *cr, const struct bpfrt_prog *prog,
		      const struct bpf_insn *insn)
{
	uint32_t pc = (uint32_t)(insn - prog->insns);

	for (uint32_t i = 0; i < prog->map_ref_cnt; i++) {
		const struct bpfrt_map_ref *ref = &prog->map_refs[i];
		uint64_t addr;

		if (ref->insn != pc || ref->kind != BPF_PSEUDO_MAP_VALUE || !ref->map)
			continue;
		addr = insn_lddw_imm(insn) - ref->off;
		region_add(cr, addr, ref->map->value_size, BPFRT_REGION_MAP_VALUE,
			   map_writable_by_prog(ref->map), ref->map);
		if (cr->regions_full)
			return violation(cr, prog, insn, "out of memory tracking regions", addr, 0);
		break;
	}
	return true;
}
