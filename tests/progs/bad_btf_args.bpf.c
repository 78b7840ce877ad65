/* A typed argument where no BTF describes the function (tests/test_btf_args.c):
 * getpid is libc's, which has no .BTF, so its argument stays a number and
 * the load through it is refused, saying why. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct some { int len; };

long seen;

SEC("fentry/getpid")
int BPF_PROG(no_btf, struct some *s)
{
	seen = s->len;
	return 0;
}
