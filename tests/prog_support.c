#include "prog_support.h"
#include "testlib.h"
#include "insns.h"

#include <stdlib.h>
#include <string.h>

void pb_add(struct pb *p, struct bpf_insn insn)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->i = realloc(p->i, p->cap * sizeof(*p->i));
		if (!p->i)
			abort();
	}
	p->i[p->n++] = insn;
}

void pb_lddw(struct pb *p, uint8_t reg, uint64_t v)
{
	struct bpf_insn two[] = { LDDW(reg, v) };

	pb_add(p, two[0]);
	pb_add(p, two[1]);
}

void pb_ldptr(struct pb *p, uint8_t reg, const void *ptr)
{
	pb_lddw(p, reg, (uint64_t)(uintptr_t)ptr);
}

void pb_free(struct pb *p)
{
	free(p->i);
	memset(p, 0, sizeof(*p));
}

struct bpfrt_prog *load_insns(const char *name, const struct bpf_insn *insns, size_t n,
			      bool jit, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = name, .jit = jit,
		   .flags = flags);
	struct bpfrt_prog *p = NULL;

	if (bpfrt_prog_load(insns, n, &o, &p))
		return NULL;
	return p;
}

struct bpfrt_prog *pb_load_at(const char *file, int line, struct pb *b, const char *name,
			      bool jit)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .name = name, .jit = jit);
	struct bpfrt_prog *p = NULL;
	int err = bpfrt_prog_load(b->i, b->n, &o, &p);

	if (err)
		tl_fail(file, line, "load %s: %d %s", name, err, bpfrt_last_error());
	pb_free(b);
	return p;
}

struct bpfrt_prog *load_asm_at(const char *file, int line, const char *name, const char *text,
			       bool jit, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = name, .jit = jit,
		   .flags = flags);
	struct bpf_insn *insns = NULL;
	struct bpfrt_prog *prog = NULL;
	size_t cnt = 0;
	int err = bpfrt_asm(text, &insns, &cnt);

	if (err) {
		tl_fail(file, line, "asm %s: %s", name, bpfrt_last_error());
		return NULL;
	}
	err = bpfrt_prog_load(insns, cnt, &opts, &prog);
	free(insns);
	if (err)
		tl_fail(file, line, "load %s: %d %s", name, err, bpfrt_last_error());
	return prog;
}

struct bpfrt_object *load_object_at(const char *file, int line, const char *obj_file,
				    const struct bpfrt_object_load_opts *opts)
{
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(tl_prog_path(obj_file), NULL, &obj);

	if (err) {
		tl_fail(file, line, "open %s: %d %s", obj_file, err, bpfrt_last_error());
		return NULL;
	}
	err = bpfrt_object_load(obj, opts);
	if (err) {
		tl_fail(file, line, "load %s: %d %s", obj_file, err, bpfrt_last_error());
		bpfrt_object_close(obj);
		return NULL;
	}
	return obj;
}

void *object_global_at(const char *file, int line, struct bpfrt_object *obj, const char *name)
{
	void *p = bpfrt_object_global(obj, name, NULL);

	if (!p)
		tl_fail(file, line, "global %s: %s", name, bpfrt_last_error());
	return p;
}

int run_zero_ctx(const struct bpfrt_prog *prog, enum bpfrt_exec_mode mode, uint64_t *r0)
{
	/* per thread: a context-writing (UNSPEC) program cannot leave
	 * anything for another run, as the buffer is cleared each time */
	static __thread uint64_t ctx[64];

	memset(ctx, 0, sizeof(ctx));
	return bpfrt_prog_run(prog, mode, (uint64_t)(uintptr_t)ctx, sizeof(ctx), r0);
}

uint64_t call_helper_at(const char *file, int line, enum bpfrt_exec_mode mode, int32_t id,
			const uint64_t args[5])
{
	const struct bpf_insn insns[] = {
		MOV64_REG(BPF_R6, BPF_R1),
		LDX(BPF_DW, BPF_R1, BPF_R6, 0),
		LDX(BPF_DW, BPF_R2, BPF_R6, 8),
		LDX(BPF_DW, BPF_R3, BPF_R6, 16),
		LDX(BPF_DW, BPF_R4, BPF_R6, 24),
		LDX(BPF_DW, BPF_R5, BPF_R6, 32),
		CALL_HELPER(id),
		EXIT(),
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, opts, .name = "call_helper",
		   .jit = mode == BPFRT_EXEC_JIT);
	uint64_t copy[5], r0 = 0xdeadbeef;
	struct bpfrt_prog *prog;
	int err = bpfrt_prog_load(insns, sizeof(insns) / sizeof(insns[0]), &opts, &prog);

	memcpy(copy, args, sizeof(copy));
	if (!err) {
		err = bpfrt_prog_run(prog, mode == BPFRT_EXEC_CHECKED ? BPFRT_EXEC_INTERP : mode,
				     (uintptr_t)copy, 0, &r0);
		bpfrt_prog_free(prog);
	}
	if (err)
		tl_fail(file, line, "helper %d (%s): %d %s", id,
			mode == BPFRT_EXEC_JIT ? "jit" : "interp", err, bpfrt_last_error());
	return r0;
}
