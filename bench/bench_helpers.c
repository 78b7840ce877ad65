/* `bpfrt-bench helpers`: nanoseconds per call of every helper bpfrt
 * registers, in bpfrt's interpreter and JIT and, where the kernel offers
 * the helper to a raw_tracepoint program, in the kernel.
 *
 * Every engine runs the same bytecode: a program that calls bpf_loop(L,
 * cb) where cb sets up the helper's arguments and calls it K times
 * (unrolled), and a baseline program that is the same instruction for
 * instruction except that each call is `r0 = 0`. A cell is
 * (time(program) - time(baseline)) / (L * K), the median over the
 * repetitions, so the loop, the argument set-up and the run's entry cost
 * cancel. The bpf_loop row is the baseline's own cost per iteration (a
 * callback of K argument set-ups).
 *
 * bpfrt runs its programs with bpfrt_prog_run (loaded trusted: raw
 * instructions, map pointers in lddw); the kernel loads them as
 * BPF_PROG_TYPE_RAW_TRACEPOINT (which has the tracing helpers) and runs
 * them with BPF_PROG_TEST_RUN, one syscall per run (raw_tp test runs take
 * no repeat count). Both are timed in the calling thread's CPU time, on
 * one pinned CPU. Helpers the kernel refuses to a raw_tracepoint program
 * (or that it would write to the machine's trace buffer for) get no
 * kernel figure, and the table says why. */
#define _GNU_SOURCE
#include "bench.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define K_CALLS 32   /* helper calls per callback, unrolled */
#define MAX_INSNS 1024
#define MAX_REPS 101
#define RB_SIZE (16u << 20)
#define LOG_SIZE (64u << 10)

/* ---- program builder ---------------------------------------------------- */

enum engine_id { ENG_INTERP, ENG_JIT, ENG_KERNEL, ENG_CNT };
static const char *const engine_names[ENG_CNT] = { "interpreter", "bpfrt JIT", "kernel JIT" };

/* The maps a case may use, one set per side (bpfrt pointers, kernel fds). */
struct hb_maps {
	struct bpfrt_map *hash, *rb, *rodata;
	int khash, krb, krodata;
};

struct hb_builder {
	struct bpf_insn v[MAX_INSNS];
	int n;
	bool kernel;  /* map references as fds (kernel) or pointers (bpfrt) */
	bool real;    /* the calls (program) or `r0 = 0` (baseline) */
	const struct hb_maps *maps;
	bool overflow;
};

static void emit(struct hb_builder *b, struct bpf_insn insn)
{
	if (b->n >= MAX_INSNS) {
		b->overflow = true;
		return;
	}
	b->v[b->n++] = insn;
}

#define I(CODE, DST, SRC, OFF, IMM) \
	((struct bpf_insn){ .code = (CODE), .dst_reg = (DST), .src_reg = (SRC), .off = (OFF), \
			    .imm = (IMM) })

static void mov_imm(struct hb_builder *b, int reg, int32_t imm)
{
	emit(b, I(BPF_ALU64 | BPF_MOV | BPF_K, reg, 0, 0, imm));
}

static void mov_reg(struct hb_builder *b, int dst, int src)
{
	emit(b, I(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0));
}

static void add_imm(struct hb_builder *b, int reg, int32_t imm)
{
	emit(b, I(BPF_ALU64 | BPF_ADD | BPF_K, reg, 0, 0, imm));
}

/* reg = r10 + off */
static void fp_ptr(struct hb_builder *b, int reg, int32_t off)
{
	mov_reg(b, reg, BPF_REG_10);
	add_imm(b, reg, off);
}

static void st_dw(struct hb_builder *b, int16_t off, int32_t imm)
{
	emit(b, I(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, off, imm));
}

static void lddw(struct hb_builder *b, int reg, uint8_t src, uint32_t lo, uint32_t hi)
{
	emit(b, I(BPF_LD | BPF_DW | BPF_IMM, reg, src, 0, (int32_t)lo));
	emit(b, I(0, 0, 0, 0, (int32_t)hi));
}

enum hb_map { MAP_HASH, MAP_RB };

static void ld_map(struct hb_builder *b, int reg, enum hb_map which)
{
	if (b->kernel) {
		lddw(b, reg, BPF_PSEUDO_MAP_FD, which == MAP_HASH ? b->maps->khash : b->maps->krb, 0);
	} else {
		uintptr_t p = (uintptr_t)(which == MAP_HASH ? b->maps->hash : b->maps->rb);

		lddw(b, reg, 0, (uint32_t)p, (uint32_t)((uint64_t)p >> 32));
	}
}

/* The snprintf format: a string in a frozen read-only map (the kernel
 * wants ARG_PTR_TO_CONST_STR). */
static const char snprintf_fmt[16] = "v=%llu";

static void ld_fmt(struct hb_builder *b, int reg)
{
	if (b->kernel) {
		lddw(b, reg, BPF_PSEUDO_MAP_VALUE, b->maps->krodata, 0);
	} else {
		uintptr_t p = (uintptr_t)snprintf_fmt;

		lddw(b, reg, 0, (uint32_t)p, (uint32_t)((uint64_t)p >> 32));
	}
}

static void call(struct hb_builder *b, int32_t id)
{
	if (b->real)
		emit(b, I(BPF_JMP | BPF_CALL, 0, 0, 0, id));
	else
		mov_imm(b, BPF_REG_0, 0);
}

/* ---- the cases -------------------------------------------------------- */

/* In a case's callback: r6 = a pointer to 16 readable bytes of the
 * process (user memory, for probe_read_user), r7 = the callback's stack
 * address fp-64 (kernel-side memory, for probe_read_kernel); fp-8 = 0 (a
 * u64 key/value, fp-4 the u32 key 0), fp-64..-17 scratch. */
struct hb_case {
	uint32_t id;
	const char *label;   /* NULL: bpf_NAME (ID) from the registry */
	void (*emit_call)(struct hb_builder *b, const struct hb_case *c);
	uint32_t id2;        /* a second helper the case calls (pairs) */
	const char *note;
	const char *no_kernel; /* why the kernel column is empty, or NULL */
};

static void call_noargs(struct hb_builder *b, const struct hb_case *c)
{
	call(b, (int32_t)c->id);
}

static void call_map_key(struct hb_builder *b, const struct hb_case *c)
{
	ld_map(b, BPF_REG_1, MAP_HASH);
	fp_ptr(b, BPF_REG_2, -4);
	call(b, (int32_t)c->id);
}

static void call_map_update(struct hb_builder *b, const struct hb_case *c)
{
	ld_map(b, BPF_REG_1, MAP_HASH);
	fp_ptr(b, BPF_REG_2, -4);
	fp_ptr(b, BPF_REG_3, -16);
	mov_imm(b, BPF_REG_4, BPF_ANY);
	call(b, (int32_t)c->id);
}

static void call_read_user(struct hb_builder *b, const struct hb_case *c)
{
	fp_ptr(b, BPF_REG_1, -32);
	mov_imm(b, BPF_REG_2, 8);
	mov_reg(b, BPF_REG_3, BPF_REG_6);
	call(b, (int32_t)c->id);
}

static void call_read_kernel(struct hb_builder *b, const struct hb_case *c)
{
	fp_ptr(b, BPF_REG_1, -32);
	mov_imm(b, BPF_REG_2, 8);
	mov_reg(b, BPF_REG_3, BPF_REG_7);
	call(b, (int32_t)c->id);
}

static void call_comm(struct hb_builder *b, const struct hb_case *c)
{
	fp_ptr(b, BPF_REG_1, -32);
	mov_imm(b, BPF_REG_2, 16);
	call(b, (int32_t)c->id);
}

static void call_snprintf(struct hb_builder *b, const struct hb_case *c)
{
	fp_ptr(b, BPF_REG_1, -48);
	mov_imm(b, BPF_REG_2, 16);
	ld_fmt(b, BPF_REG_3);
	fp_ptr(b, BPF_REG_4, -8);
	mov_imm(b, BPF_REG_5, 8);
	call(b, (int32_t)c->id);
}

static void call_strncmp(struct hb_builder *b, const struct hb_case *c)
{
	fp_ptr(b, BPF_REG_1, -32);
	mov_imm(b, BPF_REG_2, 8);
	ld_fmt(b, BPF_REG_3);
	call(b, (int32_t)c->id);
}

/* 8 bytes from the stack into the process's buffer r6 points to */
static void call_write_user(struct hb_builder *b, const struct hb_case *c)
{
	mov_reg(b, BPF_REG_1, BPF_REG_6);
	fp_ptr(b, BPF_REG_2, -8);
	mov_imm(b, BPF_REG_3, 8);
	call(b, (int32_t)c->id);
}

static void call_printk(struct hb_builder *b, const struct hb_case *c)
{
	/* "hb\n" at fp-24 */
	st_dw(b, -24, 0x0a6268);
	fp_ptr(b, BPF_REG_1, -24);
	mov_imm(b, BPF_REG_2, 4);
	mov_imm(b, BPF_REG_3, 0);
	mov_imm(b, BPF_REG_4, 0);
	call(b, (int32_t)c->id);
}

static void call_ringbuf_output(struct hb_builder *b, const struct hb_case *c)
{
	ld_map(b, BPF_REG_1, MAP_RB);
	fp_ptr(b, BPF_REG_2, -8);
	mov_imm(b, BPF_REG_3, 8);
	mov_imm(b, BPF_REG_4, BPF_RB_NO_WAKEUP);
	call(b, (int32_t)c->id);
}

static void call_ringbuf_query(struct hb_builder *b, const struct hb_case *c)
{
	ld_map(b, BPF_REG_1, MAP_RB);
	mov_imm(b, BPF_REG_2, BPF_RB_AVAIL_DATA);
	call(b, (int32_t)c->id);
}

/* reserve 8 bytes, then submit or discard (c->id2) the record */
static void call_reserve_pair(struct hb_builder *b, const struct hb_case *c)
{
	ld_map(b, BPF_REG_1, MAP_RB);
	mov_imm(b, BPF_REG_2, 8);
	mov_imm(b, BPF_REG_3, 0);
	call(b, (int32_t)c->id);
	emit(b, I(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0));
	mov_reg(b, BPF_REG_1, BPF_REG_0);
	mov_imm(b, BPF_REG_2, BPF_RB_NO_WAKEUP);
	call(b, (int32_t)c->id2);
}

/* Tracing helpers outside an attached run: bpfrt answers 0 / -EINVAL for
 * any ctx; the kernel offers them to fentry/kprobe programs only. */
static void call_ctx(struct hb_builder *b, const struct hb_case *c)
{
	mov_reg(b, BPF_REG_1, BPF_REG_8);
	call(b, (int32_t)c->id);
}

static void call_ctx_long(struct hb_builder *b, const struct hb_case *c)
{
	mov_reg(b, BPF_REG_1, BPF_REG_8);
	if (c->id == BPF_FUNC_get_func_arg) {
		mov_imm(b, BPF_REG_2, 0);
		fp_ptr(b, BPF_REG_3, -32);
	} else {
		fp_ptr(b, BPF_REG_2, -32);
	}
	call(b, (int32_t)c->id);
}

#define TRACING_ONLY "the kernel offers it to fentry/kprobe programs, which BPF_PROG_TEST_RUN cannot loop"
#define WRITES_TRACE "not run in the kernel: it would write the machine's trace buffer"

static const struct hb_case cases[] = {
	{ BPF_FUNC_map_lookup_elem, NULL, call_map_key, 0, "hash map, key present" },
	{ BPF_FUNC_map_update_elem, NULL, call_map_update, 0, "hash map, existing key, BPF_ANY" },
	{ BPF_FUNC_map_delete_elem, NULL, call_map_key, 0, "hash map, key absent (-ENOENT)" },
	{ BPF_FUNC_probe_read, NULL, call_read_user, 0, "8 bytes" },
	{ BPF_FUNC_ktime_get_ns, NULL, call_noargs },
	{ BPF_FUNC_trace_printk, NULL, call_printk, 0, "\"hb\\n\"", WRITES_TRACE },
	{ BPF_FUNC_get_prandom_u32, NULL, call_noargs },
	{ BPF_FUNC_get_smp_processor_id, NULL, call_noargs },
	{ BPF_FUNC_get_current_pid_tgid, NULL, call_noargs },
	{ BPF_FUNC_get_current_uid_gid, NULL, call_noargs },
	{ BPF_FUNC_get_current_comm, NULL, call_comm, 0, "16 bytes" },
	{ BPF_FUNC_probe_read_str, NULL, call_read_user, 0, "8 bytes" },
	{ BPF_FUNC_probe_read_user, NULL, call_read_user, 0, "8 bytes" },
	{ BPF_FUNC_probe_read_kernel, NULL, call_read_kernel, 0, "8 bytes of the BPF stack" },
	{ BPF_FUNC_probe_read_user_str, NULL, call_read_user, 0, "8 bytes" },
	{ BPF_FUNC_probe_read_kernel_str, NULL, call_read_kernel, 0, "8 bytes of the BPF stack" },
	{ BPF_FUNC_ktime_get_boot_ns, NULL, call_noargs },
	{ BPF_FUNC_ringbuf_output, NULL, call_ringbuf_output, 0, "8 bytes, BPF_RB_NO_WAKEUP" },
	{ BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve + submit (131, 132)", call_reserve_pair,
	  BPF_FUNC_ringbuf_submit, "8 bytes, BPF_RB_NO_WAKEUP" },
	{ BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve + discard (131, 133)", call_reserve_pair,
	  BPF_FUNC_ringbuf_discard, "8 bytes, BPF_RB_NO_WAKEUP" },
	{ BPF_FUNC_ringbuf_query, NULL, call_ringbuf_query, 0, "BPF_RB_AVAIL_DATA" },
	{ BPF_FUNC_snprintf, NULL, call_snprintf, 0, "\"v=%llu\" into 16 bytes" },
	{ BPF_FUNC_trace_vprintk, NULL, call_printk, 0, "\"hb\\n\", no arguments", WRITES_TRACE },
	{ BPF_FUNC_get_numa_node_id, NULL, call_noargs },
	{ BPF_FUNC_get_current_cgroup_id, NULL, call_noargs },
	{ BPF_FUNC_jiffies64, NULL, call_noargs },
	{ BPF_FUNC_ktime_get_coarse_ns, NULL, call_noargs },
	{ BPF_FUNC_ktime_get_tai_ns, NULL, call_noargs },
	{ BPF_FUNC_probe_write_user, NULL, call_write_user, 0, "8 bytes" },
	{ BPF_FUNC_strncmp, NULL, call_strncmp, 0, "8 bytes against \"v=%llu\"" },
	{ BPF_FUNC_get_func_ip, NULL, call_ctx, 0, "outside an attached run", TRACING_ONLY },
	{ BPF_FUNC_get_attach_cookie, NULL, call_ctx, 0, "outside an attached run",
	  "the kernel wants the program's ctx in r1, which a bpf_loop callback does not have" },
	{ BPF_FUNC_get_func_arg, NULL, call_ctx_long, 0, "outside an attached run",
	  TRACING_ONLY },
	{ BPF_FUNC_get_func_ret, NULL, call_ctx_long, 0, "outside an attached run",
	  TRACING_ONLY },
	{ BPF_FUNC_get_func_arg_cnt, NULL, call_ctx, 0, "outside an attached run",
	  TRACING_ONLY },
};

#define CASE_CNT (int)(sizeof(cases) / sizeof(cases[0]))

/* Helpers with no row, and why (every registered helper is either in
 * cases[], here, or listed as "no benchmark yet"). */
static const struct {
	uint32_t id;
	const char *why;
} unmeasured[] = {
	{ BPF_FUNC_tail_call, "does not return to its caller (a jump, not a call)" },
	{ BPF_FUNC_for_each_map_elem, "a walk of callbacks, not one call: the bpf_loop row is the "
				      "cost of a callback iteration" },
};

/* The program: main calls bpf_loop(loops, cb, &fp[-8] holding ctx[0], 0);
 * cb runs the case's set-up and K_CALLS calls, returns 0. */
static int build(struct hb_builder *b, const struct hb_case *c, uint32_t loops, int *cb_insn)
{
	int cb_at;

	b->n = 0;
	b->overflow = false;
	/* main */
	emit(b, I(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_1, 0, 0)); /* ctx[0] */
	emit(b, I(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_2, -8, 0));
	mov_imm(b, BPF_REG_1, (int32_t)loops);
	cb_at = b->n;
	lddw(b, BPF_REG_2, BPF_PSEUDO_FUNC, 0, 0); /* imm patched below */
	fp_ptr(b, BPF_REG_3, -8);
	mov_imm(b, BPF_REG_4, 0);
	emit(b, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_loop));
	mov_imm(b, BPF_REG_0, 0);
	emit(b, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	b->v[cb_at].imm = b->n - cb_at - 1;
	*cb_insn = b->n;
	/* callback(index, ctx) */
	mov_reg(b, BPF_REG_8, BPF_REG_2);  /* a pointer for the tracing helpers' ctx */
	emit(b, I(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_6, BPF_REG_2, 0, 0));
	fp_ptr(b, BPF_REG_7, -64);
	for (int off = -64; off < 0; off += 8)
		st_dw(b, (int16_t)off, 0);
	if (c)
		for (int k = 0; k < K_CALLS; k++)
			c->emit_call(b, c);
	mov_imm(b, BPF_REG_0, 0);
	emit(b, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	return b->overflow ? -E2BIG : 0;
}

/* ---- engines ------------------------------------------------------------ */

struct hb_opts {
	int reps;
	uint32_t loops[ENG_CNT];
	int cpu;
	bool kernel;
	const char *only; /* comma-separated helper names, or NULL */
};

struct hb_side {
	/* index 0: baseline, 1: the case */
	struct bpfrt_prog *prog[2][2]; /* [interp/jit][base/case] */
	int kfd[2];
	char kwhy[160];
};

struct hb_ctx {
	uint64_t args[2]; /* raw_tp context: args[0] = user buffer */
	char user_buf[16];
	struct hb_maps maps;
	struct ring_buffer *krb_consumer;
	char *log;
	/* BTF the kernel wants for a program with a callback (func_info) */
	int btf_fd;
	uint32_t btf_main, btf_cb;
};

static int load_bpfrt(const struct hb_case *c, struct hb_ctx *x, uint32_t loops, bool real,
		      bool jit, struct bpfrt_prog **prog)
{
	static struct hb_builder b;
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "helper_bench", .jit = jit);
	int err;

	int cb_insn;

	b = (struct hb_builder){ .kernel = false, .real = real, .maps = &x->maps };
	err = build(&b, c, loops, &cb_insn);
	if (err)
		return err;
	return bpfrt_prog_load(b.v, (size_t)b.n, &opts, prog);
}

/* The verifier's last line: its reason. */
static void last_line(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *start;

	for (;;) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		start = end;
		while (start > log && start[-1] != '\n')
			start--;
		/* the summary lines after the reason */
		if (start == log || (strncmp(start, "processed ", 10) &&
				     strncmp(start, "verification time", 17)))
			break;
		end = start;
	}
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

static int load_kernel(const struct hb_case *c, struct hb_ctx *x, uint32_t loops, bool real,
		       char *why, size_t why_len)
{
	static struct hb_builder b;
	struct bpf_func_info fi[2] = { { 0, x->btf_main }, { 0, x->btf_cb } };
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = x->log, .log_size = LOG_SIZE,
		    .log_level = 1, .prog_btf_fd = x->btf_fd, .func_info = fi,
		    .func_info_rec_size = sizeof(fi[0]), .func_info_cnt = 2);
	int fd, err, cb_insn;

	b = (struct hb_builder){ .kernel = true, .real = real, .maps = &x->maps };
	err = build(&b, c, loops, &cb_insn);
	if (err)
		return err;
	fi[1].insn_off = (uint32_t)cb_insn;
	x->log[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "helper_bench", "GPL", b.v,
			   (size_t)b.n, &opts);
	if (fd < 0) {
		char line[120];

		err = -errno;
		last_line(x->log, line, sizeof(line));
		snprintf(why, why_len, "the kernel refuses it to raw_tp programs (%s%s%s)",
			 strerror(-err), line[0] ? ": " : "", line);
	}
	return fd < 0 ? err : fd;
}

static int drop_sample(void *ctx, void *data, size_t len)
{
	return 0;
}

/* Runs once; returns thread CPU ns, or a negative errno. */
static int64_t time_bpfrt(struct bpfrt_prog *prog, bool jit, struct hb_ctx *x)
{
	uint64_t r0, t0 = bench_thread_ns();
	int err = bpfrt_prog_run(prog, jit ? BPFRT_EXEC_JIT : BPFRT_EXEC_INTERP,
				 (uintptr_t)x->args, sizeof(x->args), &r0);
	uint64_t t1 = bench_thread_ns();

	if (x->maps.rb)
		bpfrt_ringbuf_consume(x->maps.rb, drop_sample, NULL);
	return err ? err : (int64_t)(t1 - t0);
}

static int64_t time_kernel(int fd, struct hb_ctx *x)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts, .ctx_in = x->args, .ctx_size_in = sizeof(x->args));
	uint64_t t0 = bench_thread_ns();
	int err = bpf_prog_test_run_opts(fd, &topts);
	uint64_t t1 = bench_thread_ns();

	if (x->krb_consumer)
		ring_buffer__consume(x->krb_consumer);
	return err ? -errno : (int64_t)(t1 - t0);
}

/* ---- maps ------------------------------------------------------------------- */

static int rb_drop(void *ctx, void *data, size_t size)
{
	return 0;
}

/* int main(void *ctx); static int cb(u64 index, void *ctx) */
static int make_btf(struct hb_ctx *x)
{
	struct btf *btf = btf__new_empty();
	int i32, u64, ptr, proto_main, proto_cb, err = -1;

	if (!btf)
		return -1;
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u64 = btf__add_int(btf, "unsigned long long", 8, 0);
	ptr = btf__add_ptr(btf, 0);
	proto_main = btf__add_func_proto(btf, i32);
	if (i32 < 0 || u64 < 0 || ptr < 0 || proto_main < 0 ||
	    btf__add_func_param(btf, "ctx", ptr))
		goto out;
	x->btf_main = (uint32_t)btf__add_func(btf, "helper_bench", BTF_FUNC_GLOBAL, proto_main);
	proto_cb = btf__add_func_proto(btf, i32);
	if (proto_cb < 0 || btf__add_func_param(btf, "index", u64) ||
	    btf__add_func_param(btf, "ctx", ptr))
		goto out;
	x->btf_cb = (uint32_t)btf__add_func(btf, "cb", BTF_FUNC_STATIC, proto_cb);
	if ((int)x->btf_main < 0 || (int)x->btf_cb < 0 || btf__load_into_kernel(btf))
		goto out;
	x->btf_fd = dup(btf__fd(btf));
	err = x->btf_fd < 0 ? -1 : 0;
out:
	btf__free(btf);
	return err;
}

static int make_maps(struct hb_ctx *x, bool kernel, char *why, size_t why_len)
{
	uint32_t key = 0;
	uint64_t val = 0;

	x->maps.khash = x->maps.krb = x->maps.krodata = x->btf_fd = -1;
	if (bpfrt_map_create(BPF_MAP_TYPE_HASH, "hb_hash", 4, 8, 16, NULL, &x->maps.hash) ||
	    bpfrt_map_update_elem(x->maps.hash, &key, &val, BPF_ANY) ||
	    bpfrt_map_create(BPF_MAP_TYPE_RINGBUF, "hb_rb", 0, 0, RB_SIZE, NULL, &x->maps.rb)) {
		fprintf(stderr, "helpers: bpfrt maps: %s\n", bpfrt_last_error());
		return -1;
	}
	if (!kernel)
		return 0;
	LIBBPF_OPTS(bpf_map_create_opts, ro, .map_flags = BPF_F_RDONLY_PROG);
	x->maps.khash = bpf_map_create(BPF_MAP_TYPE_HASH, "hb_hash", 4, 8, 16, NULL);
	x->maps.krb = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "hb_rb", 0, 0, RB_SIZE, NULL);
	x->maps.krodata = bpf_map_create(BPF_MAP_TYPE_ARRAY, "hb_ro", 4, sizeof(snprintf_fmt), 1,
					 &ro);
	if (x->maps.khash < 0 || x->maps.krb < 0 || x->maps.krodata < 0 ||
	    bpf_map_update_elem(x->maps.khash, &key, &val, BPF_ANY) ||
	    bpf_map_update_elem(x->maps.krodata, &key, snprintf_fmt, BPF_ANY) ||
	    bpf_map_freeze(x->maps.krodata)) {
		snprintf(why, why_len, "kernel maps: %s", strerror(errno));
		return 1;
	}
	if (make_btf(x)) {
		snprintf(why, why_len, "kernel BTF: %s", strerror(errno));
		return 1;
	}
	x->krb_consumer = ring_buffer__new(x->maps.krb, rb_drop, NULL, NULL);
	if (!x->krb_consumer) {
		snprintf(why, why_len, "kernel ringbuf consumer: %s", strerror(errno));
		return 1;
	}
	return 0;
}

static void free_maps(struct hb_ctx *x)
{
	ring_buffer__free(x->krb_consumer);
	bpfrt_map_free(x->maps.hash);
	bpfrt_map_free(x->maps.rb);
	if (x->maps.khash >= 0)
		close(x->maps.khash);
	if (x->maps.krb >= 0)
		close(x->maps.krb);
	if (x->maps.krodata >= 0)
		close(x->maps.krodata);
	if (x->btf_fd >= 0)
		close(x->btf_fd);
}

/* ---- measurement ----------------------------------------------------------- */

struct hb_cell {
	bool ok;
	double ns;       /* per call */
	double spread;   /* half the min..max range, % of the median */
	char why[200];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void finish_cell(struct hb_cell *cell, double *samples, int n)
{
	qsort(samples, (size_t)n, sizeof(*samples), cmp_double);
	cell->ns = samples[n / 2];
	cell->spread = cell->ns > 0 ? (samples[n - 1] - samples[0]) / 2 / cell->ns * 100 : 0;
	cell->ok = true;
}

/* Measures one case (c == NULL: bpf_loop per iteration) on every engine. */
static void measure(const struct hb_case *c, struct hb_ctx *x, const struct hb_opts *o,
		    bool kernel_ok, const char *kernel_why, struct hb_cell cells[ENG_CNT])
{
	struct bpfrt_prog *bp[2][2] = { { NULL } };
	int kfd[2] = { -1, -1 };
	static double samples[ENG_CNT][MAX_REPS];

	memset(cells, 0, sizeof(*cells) * ENG_CNT);
	for (int e = ENG_INTERP; e <= ENG_JIT; e++)
		for (int real = 0; real < 2; real++)
			if (load_bpfrt(c, x, o->loops[e], real, e == ENG_JIT, &bp[e][real])) {
				snprintf(cells[e].why, sizeof(cells[e].why), "load: %s",
					 bpfrt_last_error());
				bp[e][real] = NULL;
			}
	if (!kernel_ok)
		snprintf(cells[ENG_KERNEL].why, sizeof(cells[ENG_KERNEL].why), "%s", kernel_why);
	else if (c && c->no_kernel)
		snprintf(cells[ENG_KERNEL].why, sizeof(cells[ENG_KERNEL].why), "%s", c->no_kernel);
	else
		for (int real = 0; real < 2 && (real == 0 || kfd[0] >= 0); real++)
			kfd[real] = load_kernel(c, x, o->loops[ENG_KERNEL], real,
						cells[ENG_KERNEL].why,
						sizeof(cells[ENG_KERNEL].why));
	/* warm-up: one run each */
	for (int e = ENG_INTERP; e <= ENG_JIT; e++)
		for (int real = 0; real < 2; real++)
			if (bp[e][real])
				time_bpfrt(bp[e][real], e == ENG_JIT, x);
	for (int real = 0; real < 2; real++)
		if (kfd[real] >= 0)
			time_kernel(kfd[real], x);
	for (int r = 0; r < o->reps; r++) {
		for (int e = 0; e < ENG_CNT; e++) {
			int64_t t[2] = { -1, -1 };
			double calls = (double)o->loops[e] * (c ? K_CALLS : 1);

			for (int real = 0; real < 2; real++) {
				if (e == ENG_KERNEL) {
					if (kfd[real] >= 0)
						t[real] = time_kernel(kfd[real], x);
				} else if (bp[e][real]) {
					t[real] = time_bpfrt(bp[e][real], e == ENG_JIT, x);
				}
			}
			if (t[0] < 0 || t[1] < 0)
				continue;
			/* bpf_loop's row: the baseline itself, per iteration */
			samples[e][r] = c ? (double)(t[1] - t[0]) / calls : (double)t[0] / calls;
		}
	}
	for (int e = 0; e < ENG_CNT; e++) {
		bool have = e == ENG_KERNEL ? kfd[0] >= 0 && kfd[1] >= 0 : bp[e][0] && bp[e][1];

		if (have)
			finish_cell(&cells[e], samples[e], o->reps);
	}
	for (int e = ENG_INTERP; e <= ENG_JIT; e++)
		for (int real = 0; real < 2; real++)
			bpfrt_prog_free(bp[e][real]);
	for (int real = 0; real < 2; real++)
		if (kfd[real] >= 0)
			close(kfd[real]);
}

/* ---- table ------------------------------------------------------------------- */

static void helper_label(uint32_t id, char *out, size_t len)
{
	BPFRT_OPTS(bpfrt_helper_info, h);

	if (!bpfrt_helper_info(id, &h) && h.name)
		snprintf(out, len, "bpf_%s (%u)", h.name, id);
	else
		snprintf(out, len, "helper %u", id);
}

static void print_cell(const struct hb_cell *c)
{
	if (c->ok)
		printf(" %8.1f ±%3.0f%%", c->ns, c->spread);
	else
		printf(" %14s", "-");
}

static bool selected(const struct hb_opts *o, uint32_t id)
{
	BPFRT_OPTS(bpfrt_helper_info, h);
	const char *p;
	size_t len;

	if (!o->only)
		return true;
	if (bpfrt_helper_info(id, &h) || !h.name)
		return false;
	len = strlen(h.name);
	for (p = o->only; (p = strstr(p, h.name)); p += len)
		if ((p == o->only || p[-1] == ',') && (p[len] == 0 || p[len] == ','))
			return true;
	return false;
}

static void print_header(const struct hb_opts *o, bool kernel_ok)
{
	struct utsname u;
	char cpu_model[128] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(cpu_model, sizeof(cpu_model), "%s", colon + 2);
			cpu_model[strcspn(cpu_model, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	printf("Helper microbenchmark: nanoseconds per helper call\n");
	printf("CPU: %s (%ld online), kernel %s, pinned to CPU %d\n", cpu_model,
	       sysconf(_SC_NPROCESSORS_ONLN), u.release, o->cpu);
	printf("Each cell: median over %d runs of (a bpf_loop of L iterations x %d calls,\n"
	       "minus the same program with each call replaced by r0 = 0) / (L x %d);\n"
	       "L = %u (interpreter), %u (bpfrt JIT), %u (kernel). ±: half the min..max\n"
	       "range as %% of the median. bpfrt: bpfrt_prog_run; kernel: a raw_tracepoint\n"
	       "program run with BPF_PROG_TEST_RUN%s.\n\n",
	       o->reps, K_CALLS, K_CALLS, o->loops[ENG_INTERP], o->loops[ENG_JIT],
	       o->loops[ENG_KERNEL], kernel_ok ? "" : " (not run: see below)");
	printf("%-42s %14s %14s %14s %9s  %s\n", "helper (Linux id)", engine_names[0],
	       engine_names[1], engine_names[2], "JIT/kern", "what one call does");
}

static void print_row(const char *label, const struct hb_cell cells[ENG_CNT], const char *note)
{
	printf("%-42s", label);
	for (int e = 0; e < ENG_CNT; e++)
		print_cell(&cells[e]);
	if (cells[ENG_JIT].ok && cells[ENG_KERNEL].ok && cells[ENG_KERNEL].ns > 0.5)
		printf(" %9.2f", cells[ENG_JIT].ns / cells[ENG_KERNEL].ns);
	else
		printf(" %9s", "-");
	printf("  %s\n", note ? note : "");
}

/* ---- main ------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bpfrt-bench helpers [-r REPS] [-l LOOPS] [--cpu N] [--no-kernel]\n"
		"                           [--only NAME,NAME...]\n"
		"  ns per call of every helper bpfrt registers: interpreter, JIT, kernel\n"
		"  -r REPS       runs per cell (default 11, at most %d); the median is shown\n"
		"  -l LOOPS      bpf_loop iterations of %d calls per JIT/kernel run (default 2000;\n"
		"                the interpreter runs a quarter)\n"
		"  --cpu N       pin to CPU N (default: the current one)\n"
		"  --no-kernel   bpfrt only (the kernel column needs root)\n"
		"  --only NAMES  only these helpers (names without bpf_, as bpfrt lists them)\n",
		MAX_REPS, K_CALLS);
}

static int run_helpers(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "cpu", required_argument, NULL, 'C' },
		{ "no-kernel", no_argument, NULL, 'N' },
		{ "only", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct hb_opts o = { .reps = 11, .cpu = -1, .kernel = true };
	struct hb_ctx x = { 0 };
	char kernel_why[200] = "";
	bool kernel_ok;
	static bool covered[BPFRT_MAX_HELPER_ID];
	int opt, rc = 0;
	long loops = 2000;

	while ((opt = getopt_long(argc, argv, "r:l:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'r': o.reps = atoi(optarg); break;
		case 'l': loops = atol(optarg); break;
		case 'C': o.cpu = atoi(optarg); break;
		case 'N': o.kernel = false; break;
		case 'O': o.only = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (o.reps < 1 || o.reps > MAX_REPS || loops < 4 || loops > (1 << 20)) {
		usage(stderr);
		return 2;
	}
	o.loops[ENG_JIT] = o.loops[ENG_KERNEL] = (uint32_t)loops;
	o.loops[ENG_INTERP] = (uint32_t)loops / 4;
	o.cpu = bench_pin_cpu(o.cpu);
	bpfrt_helpers_init();
	x.log = calloc(1, LOG_SIZE);
	x.args[0] = (uintptr_t)x.user_buf;
	memcpy(x.user_buf, "helper bench", 13);
	if (!x.log)
		return 1;
	kernel_ok = o.kernel;
	if (!o.kernel)
		snprintf(kernel_why, sizeof(kernel_why), "--no-kernel");
	else if (geteuid() != 0)
		snprintf(kernel_why, sizeof(kernel_why), "needs root (BPF_PROG_LOAD)");
	kernel_ok = o.kernel && geteuid() == 0;
	switch (make_maps(&x, kernel_ok, kernel_why, sizeof(kernel_why))) {
	case -1: free(x.log); return 1;
	case 1: kernel_ok = false; break;
	}
	print_header(&o, kernel_ok);
	for (int i = 0; i < CASE_CNT; i++) {
		const struct hb_case *c = &cases[i];
		struct hb_cell cells[ENG_CNT];
		char label[64];

		covered[c->id] = true;
		if (c->id2)
			covered[c->id2] = true;
		if (!selected(&o, c->id))
			continue;
		if (c->label)
			snprintf(label, sizeof(label), "%s", c->label);
		else
			helper_label(c->id, label, sizeof(label));
		measure(c, &x, &o, kernel_ok, kernel_why, cells);
		print_row(label, cells, c->note);
		for (int e = 0; e < ENG_CNT; e++)
			if (!cells[e].ok && cells[e].why[0] && (e != ENG_KERNEL || kernel_ok))
				printf("%42s   %s: %s\n", "", engine_names[e], cells[e].why);
	}
	covered[BPF_FUNC_loop] = true;
	if (selected(&o, BPF_FUNC_loop)) {
		struct hb_cell cells[ENG_CNT];

		measure(NULL, &x, &o, kernel_ok, kernel_why, cells);
		print_row("bpf_loop (181), per iteration", cells,
			  "the baseline's callback: argument set-up only");
	}
	printf("\n");
	if (!kernel_ok)
		printf("kernel column empty: %s\n", kernel_why);
	for (size_t i = 0; i < sizeof(unmeasured) / sizeof(unmeasured[0]); i++) {
		char label[64];

		covered[unmeasured[i].id] = true;
		helper_label(unmeasured[i].id, label, sizeof(label));
		printf("not measured: %s: %s\n", label, unmeasured[i].why);
	}
	for (uint32_t id = 1; id < BPFRT_KFUNC_ID_BASE; id++) {
		BPFRT_OPTS(bpfrt_helper_info, h);
		char label[64];

		if (covered[id] || bpfrt_helper_info(id, &h))
			continue;
		helper_label(id, label, sizeof(label));
		printf("not measured: %s: this benchmark has no case for it yet\n", label);
	}
	free_maps(&x);
	free(x.log);
	return rc;
}

const struct bench bench_helpers = {
	.name = "helpers",
	.summary = "ns per call of every helper: interpreter, JIT, kernel",
	.run = run_helpers,
};
