/* Objects opened from memory (bpfrt_object_open_mem, what a generated
 * skeleton embeds) and whole global-data sections
 * (bpfrt_object_global_data, a skeleton's typed obj->rodata/obj->bss):
 * the image before load, the live storage after. */
#include "testlib.h"
#include "prog_support.h"
#include "bpfrt/bpfrt.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)n : 0;
	fclose(f);
	return buf;
}

static int count_records(void *ctx, void *data, size_t len)
{
	(*(int *)ctx)++;
	return 0;
}

/* ringbuf.bpf.o from a buffer freed right after open: the knob in
 * .rodata set through the section image, the program's counters read
 * through the .bss section after load. */
TEST(open_mem_knob_through_section_image)
{
	struct bpfrt_object *obj;
	struct bpfrt_prog *p;
	size_t len, ro_size, bss_size;
	char *img = slurp(tl_prog_path("ringbuf.bpf.o"), &len);
	char *ro, *bss, *bss_loaded;
	uint32_t *nr_events;
	uint64_t r0;
	int records = 0;

	REQUIRE(img, "cannot read ringbuf.bpf.o");
	REQUIRE(bpfrt_object_open_mem(img, len, &(struct bpfrt_object_open_opts){
		.sz = sizeof(struct bpfrt_object_open_opts), .name = "ringbuf" }, &obj) == 0,
		"%s", bpfrt_last_error());
	memset(img, 0, len); /* the object has its own copy */
	free(img);
	CHECK_STR_EQ(bpfrt_object_name(obj), "ringbuf");
	ro = bpfrt_object_global_data(obj, ".rodata", &ro_size);
	bss = bpfrt_object_global_data(obj, ".bss", &bss_size);
	nr_events = bpfrt_object_global(obj, "nr_events", NULL);
	REQUIRE(ro && bss && nr_events, "%s", bpfrt_last_error());
	/* the variable lies inside its section's image */
	CHECK((char *)nr_events >= ro && (char *)nr_events + 4 <= ro + ro_size);
	CHECK_EQ(*nr_events, 30u);
	CHECK(bss_size >= 8 && bss_size % 4 == 0, "bss %zu bytes", bss_size);
	*nr_events = 4;
	REQUIRE(bpfrt_object_load(obj, NULL) == 0, "%s", bpfrt_last_error());

	/* after load: the live storage, not the image */
	bss_loaded = bpfrt_object_global_data(obj, ".bss", NULL);
	REQUIRE(bss_loaded);
	CHECK(bss_loaded != bss);
	CHECK(bpfrt_object_global_data(obj, ".rodata", NULL) ==
	      (void *)((char *)bpfrt_object_global(obj, "nr_events", NULL) - ((char *)nr_events - ro)));
	CHECK(!tl_memory_writable(bpfrt_object_global_data(obj, ".rodata", NULL)),
	      ".rodata is read-only after load");
	CHECK(tl_memory_writable(bss_loaded));
	p = bpfrt_object_find_prog(obj, "produce");
	REQUIRE(p);
	CHECK_EQ(run_zero_ctx(p, BPFRT_EXEC_INTERP, &r0), 0, "%s", bpfrt_last_error());
	CHECK_EQ(*(uint32_t *)bpfrt_object_global(obj, "next_seq", NULL), 4u);
	CHECK((char *)bpfrt_object_global(obj, "next_seq", NULL) >= bss_loaded &&
	      (char *)bpfrt_object_global(obj, "next_seq", NULL) < bss_loaded + bss_size);
	/* seq 0 output, 1 submitted, 2 discarded, 3 output */
	CHECK_EQ(bpfrt_ringbuf_consume(bpfrt_object_find_map(obj, "rb"), count_records, &records), 3);
	CHECK_EQ(records, 3);
	bpfrt_object_close(obj);
}

TEST(global_data_missing_section_is_enoent)
{
	struct bpfrt_object *obj;

	REQUIRE(bpfrt_object_open(tl_prog_path("ringbuf.bpf.o"), NULL, &obj) == 0);
	CHECK(bpfrt_object_global_data(obj, ".data.nope", NULL) == NULL);
	CHECK(strstr(bpfrt_last_error(), ".data.nope") && strstr(bpfrt_last_error(), "ringbuf.bpf.o"),
	      "%s", bpfrt_last_error());
	/* a map that is not global data has no section image */
	CHECK(bpfrt_object_global_data(obj, "rb", NULL) == NULL);
	CHECK(bpfrt_object_global_data(obj, NULL, NULL) == NULL);
	bpfrt_object_close(obj);
}

TEST(open_mem_refuses_bad_images)
{
	static const char not_elf[] = "this is not an ELF file, only text";
	struct bpfrt_object *obj = (struct bpfrt_object *)1;

	CHECK_EQ(bpfrt_object_open_mem(not_elf, sizeof(not_elf), NULL, &obj), -EINVAL);
	CHECK(obj == NULL);
	CHECK(strstr(bpfrt_last_error(), "not an ELF file") && strstr(bpfrt_last_error(), "memory"),
	      "%s", bpfrt_last_error());
	CHECK_EQ(bpfrt_object_open_mem(NULL, 10, NULL, &obj), -EINVAL);
	CHECK_EQ(bpfrt_object_open_mem(not_elf, 0, NULL, &obj), -EINVAL);
	/* a truncated BPF object is refused, not read past its end */
	{
		size_t len;
		char *img = slurp(tl_prog_path("ringbuf.bpf.o"), &len);

		REQUIRE(img);
		CHECK(bpfrt_object_open_mem(img, len / 2, NULL, &obj) < 0);
		CHECK(obj == NULL);
		free(img);
	}
}
