/* CO-RE against a host's own types: tests/progs/core_host.bpf.c, built
 * once, reads struct host_task through BPF_CORE_READ; it is run against
 * two host builds whose layouts differ (tests/core/host_v1.c and
 * host_v2.c: fields reordered, inserted, widened), each with the BTF
 * pahole generated from that build's DWARF (mk/test-objects.mk). The
 * same object reads the right fields in both. A field no build has is
 * poisoned: dead, the load succeeds; reached, it fails naming the field.
 * Context structs read through CO-RE resolve to their UAPI layout. */
#define _GNU_SOURCE
#include "testlib.h"
#include "bpfrt/bpfrt.h"

#include <linux/bpf.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

size_t host_v1_fill(void *buf, size_t size);
size_t host_v2_fill(void *buf, size_t size);

static const char *btf_path(const char *name)
{
	static char path[2][4096];
	static int which;
	char *p = path[which++ & 1];

	snprintf(p, sizeof(path[0]), "%s/../core/%s", tl_prog_path(""), name);
	return p;
}

struct want {
	uint64_t pid, uid, prio, prio_size;
	const char *comm;
	uint64_t nice, pid_off, size;
};

static void run_against(const char *btf, size_t (*fill)(void *, size_t), const struct want *w)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .btf_custom_path = btf);
	struct bpfrt_object *obj = NULL;
	struct bpfrt_prog *p;
	uint64_t buf[16] = { 0 }, args[1], r0 = 1, *out;
	char comm[9] = { 0 };
	int err;

	REQUIRE(fill(buf, sizeof(buf)), "host struct larger than the test's buffer");
	REQUIRE(!bpfrt_object_open(tl_prog_path("core_host.bpf.o"), &oo, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = true });
	REQUIRE(!err, "%s: %s", btf, bpfrt_last_error());
	p = bpfrt_object_find_prog(obj, "read_task");
	REQUIRE(p);
	args[0] = (uintptr_t)buf;
	for (int mode = 0; mode < 2; mode++) {
		out = bpfrt_object_global(obj, "out", NULL);
		memset(out, 0, 8 * 8);
		CHECK(!bpfrt_prog_run(p, mode ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT, (uintptr_t)args,
				      sizeof(args), &r0) && r0 == 0, "%s", bpfrt_last_error());
		CHECK_EQ(out[0], w->pid);
		CHECK_EQ(out[1], w->uid);
		CHECK_EQ(out[2], w->prio);
		CHECK_EQ(out[3], w->prio_size);
		memcpy(comm, &out[4], 8);
		CHECK(!strcmp(comm, w->comm), "comm '%s', want '%s'", comm, w->comm);
		CHECK_EQ(out[5], w->nice);
		CHECK_EQ(out[6], w->pid_off);
		CHECK_EQ(out[7], w->size);
	}
	/* pt_regs from the kernel-layout types bpfrt provides */
	{
		uint64_t regs[21] = { 0 };
		uint64_t *ro;

		regs[14] = 0x1111; /* di */
		regs[13] = 0x2222; /* si */
		p = bpfrt_object_find_prog(obj, "read_regs");
		REQUIRE(p);
		CHECK(!bpfrt_prog_run(p, BPFRT_EXEC_INTERP, (uintptr_t)regs, sizeof(regs), &r0),
		      "%s", bpfrt_last_error());
		ro = bpfrt_object_global(obj, "regs_out", NULL);
		CHECK_EQ(ro[0], 0x1111);
		CHECK_EQ(ro[1], 0x2222);
	}
	bpfrt_object_close(obj);
}

static bool have_btf(void)
{
	return !access(btf_path("host_v1.btf"), R_OK) && !access(btf_path("host_v2.btf"), R_OK);
}

TEST(one_object_reads_two_host_layouts)
{
	const struct want v1 = { 1234, 77, (uint64_t)-5, 2, "worker1", 1, 0, 28 };
	const struct want v2 = { 4321, 88, (uint64_t)-7, 4, "worker2", 1009, 36, 40 };

	if (!have_btf()) {
		SKIP("no BTF of the host builds (pahole from Debian's dwarves makes it)");
		return;
	}
	run_against(btf_path("host_v1.btf"), host_v1_fill, &v1);
	run_against(btf_path("host_v2.btf"), host_v2_fill, &v2);
}

TEST(an_unresolvable_reached_field_fails_naming_it)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .btf_custom_path = btf_path("host_v2.btf"));
	struct bpfrt_object *obj = NULL;
	char log[4096] = "";
	int err;

	if (!have_btf()) {
		SKIP("no BTF of the host builds (pahole from Debian's dwarves makes it)");
		return;
	}
	REQUIRE(!bpfrt_object_open(tl_prog_path("bad_core_field.bpf.o"), &oo, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .log_buf = log,
		.log_size = sizeof(log) });
	CHECK(err == -EACCES && strstr(bpfrt_last_error(), "struct host_task.not_in_any_build") &&
	      strstr(bpfrt_last_error(), "CO-RE relocation") &&
	      strstr(bpfrt_last_error(), "0xbad2310"), "%d %s", err, bpfrt_last_error());
	bpfrt_object_close(obj);
	/* trusted: not verified, so the poison cannot be proven dead */
	REQUIRE(!bpfrt_object_open(tl_prog_path("bad_core_field.bpf.o"), &oo, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .trusted = true });
	CHECK(err == -EINVAL && strstr(bpfrt_last_error(), "not_in_any_build"), "%d %s", err,
	      bpfrt_last_error());
	bpfrt_object_close(obj);
}

TEST(a_missing_target_btf_file_is_named)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .btf_custom_path = "/nonexistent/host.btf");
	struct bpfrt_object *obj = NULL;
	int err = bpfrt_object_open(tl_prog_path("core_host.bpf.o"), &oo, &obj);

	CHECK(err == -ENOENT && !obj && strstr(bpfrt_last_error(), "/nonexistent/host.btf"), "%d %s",
	      err, bpfrt_last_error());
}

/* A vmlinux.h program's context reads are CO-RE relocations of struct
 * __sk_buff and xdp_md; without a target BTF they take the UAPI layout
 * (libbpf resolves them against the kernel's BTF, which has the same). */
TEST(context_structs_resolve_to_their_uapi_layout)
{
	struct bpfrt_object *obj = NULL;
	uint8_t pkt[20] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }; /* to broadcast */
	int err;

	REQUIRE(!bpfrt_object_open(tl_prog_path("core_ctx.bpf.o"), NULL, &obj), "%s",
		bpfrt_last_error());
	err = bpfrt_object_load(obj, &(struct bpfrt_object_load_opts){
		.sz = sizeof(struct bpfrt_object_load_opts), .jit = true });
	REQUIRE(!err, "%s", bpfrt_last_error());
	for (int mode = 0; mode < 2; mode++) {
		struct bpfrt_test_run_opts o = {
			.sz = sizeof(o), .data_in = pkt, .data_size_in = sizeof(pkt),
			.mode = mode ? BPFRT_EXEC_INTERP : BPFRT_EXEC_JIT,
		};

		CHECK(!bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "skb_core"), &o), "%s",
		      bpfrt_last_error());
		CHECK_EQ(o.retval, 20 * 256 + 1);  /* pkt_type 1: PACKET_BROADCAST */
		CHECK(!bpfrt_prog_test_run_opts(bpfrt_object_find_prog(obj, "xdp_core"), &o), "%s",
		      bpfrt_last_error());
		CHECK_EQ(o.retval, 0xff);
	}
	bpfrt_object_close(obj);
}
