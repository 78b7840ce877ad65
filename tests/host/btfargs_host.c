/* Host functions whose pointer arguments BPF programs read typed
 * (tests/test_btf_args.c, the verifier corpus's vbtfargs.bpf.c): built
 * with -g, its DWARF encoded as .BTF by pahole, both in the object (the
 * host's own lookup) and beside it (btf_custom_path), mk/test-objects.mk. */
struct btfargs_req {
	int len;
	unsigned short flags;
	unsigned char prio : 3, busy : 1;
	struct btfargs_req *next;
	struct btfargs_inner {
		long a, b;
	} inner;
	char name[8];
	void *opaque;
};

volatile long btfargs_sink;

__attribute__((noinline, used)) int btfargs_f(struct btfargs_req *r)
{
	btfargs_sink = (long)r;
	return 7;
}

/* fexit's typed return value */
__attribute__((noinline, used)) struct btfargs_req *btfargs_next(struct btfargs_req *r, long n)
{
	btfargs_sink = n;
	return r ? r->next : 0;
}
