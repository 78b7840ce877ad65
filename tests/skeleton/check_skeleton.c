/* Uses the skeleton `bpfrt gen skeleton` made of tests/progs/skeleton.bpf.o
 * as a user would (C and C++: tests/test_gen_skeleton.sh builds it both
 * ways): every typed global sits where the object's symbol says, before
 * and after load; knobs set before load reach the program; the program's
 * writes are read back through the typed pointers and the maps; attach
 * and detach through the skeleton. Prints one line per failed check and
 * "skeleton ok" at the end; exits 1 on any failure. */
#include "skeleton.skel.h"

#include <bpfrt/tracepoint.h>
#include <stdio.h>

BPFRT_DECLARE_TRACEPOINT(skeleton_event);
BPFRT_DEFINE_TRACEPOINT(skeleton_event);

static int failures;

#define EXPECT(cond)                                                              \
	do {                                                                       \
		if (!(cond)) {                                                     \
			printf("line %d: %s failed (%s)\n", __LINE__, #cond,       \
			       bpfrt_last_error());                                 \
			failures++;                                                \
		}                                                                  \
	} while (0)

/* The typed field is the object's variable: same address, same size. */
static int same(struct skeleton_bpf *s, const char *name, const void *field, size_t size)
{
	size_t sz = 0;
	void *p = bpfrt_object_global(s->obj, name, &sz);

	if (p == field && sz == size)
		return 1;
	printf("%s: skeleton field %p (%zu bytes), object variable %p (%zu bytes)\n", name, field,
	       size, p, sz);
	return 0;
}

#define SAME(s, sec, var) EXPECT(same(s, #var, &(s)->sec->var, sizeof((s)->sec->var)))

static void check_layout(struct skeleton_bpf *s)
{
	SAME(s, rodata, mode);
	SAME(s, rodata, scale);
	SAME(s, rodata, verbose);
	SAME(s, bss, small);
	SAME(s, bss, origin);
	SAME(s, bss, last_word);
	SAME(s, bss, history);
	SAME(s, bss, stats);
	SAME(s, data, seeded);
	SAME(s, data, seeded_short);
	SAME(s, data, flags_word);
	SAME(s, data_custom, custom_counter);
	SAME(s, rodata_knobs, custom_limit);
}

static int run_step(struct skeleton_bpf *s, uint64_t *retval)
{
	struct bpfrt_test_run_opts o;
	int err;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	err = bpfrt_prog_test_run_opts(s->progs.step, &o);
	*retval = o.retval;
	return err;
}

int main(void)
{
	struct skeleton_bpf *s = skeleton_bpf__open();
	struct bpfrt_object_load_opts lo;
	point_t pt;
	uint32_t key = 0;
	uint64_t r0 = 0;

	if (!s) {
		printf("open: %s\n", bpfrt_last_error());
		return 1;
	}
	EXPECT(s->progs.step != NULL);
	EXPECT(s->maps.points == NULL); /* maps exist once loaded */
	check_layout(s);
	/* the initial values, from the object */
	EXPECT(s->rodata->mode == MODE_COUNT && s->rodata->scale == 3 && s->rodata->verbose);
	EXPECT(s->data->seeded == 11 && s->data->seeded_short == 5);
	EXPECT(s->data->flags_word.a == 5 && s->data->flags_word.b == 17 && s->data->flags_word.c == -3);
	EXPECT(s->data_custom->custom_counter == 100 && s->rodata_knobs->custom_limit == 9);
	EXPECT(s->bss->stats.calls == 0 && s->bss->origin.x == 0);
	/* knobs, set before load */
	s->rodata->scale = 5;
	s->rodata_knobs->custom_limit = 2;
	s->bss->small = 'k';
	memset(&lo, 0, sizeof(lo));
	lo.sz = sizeof(lo);
	lo.jit = true;
	if (skeleton_bpf__load_opts(s, &lo)) {
		printf("load: %s\n", bpfrt_last_error());
		skeleton_bpf__destroy(s);
		return 1;
	}
	check_layout(s); /* the pointers moved to the live storage */
	EXPECT(s->maps.points && s->maps.bss && s->maps.rodata && s->maps.data_custom &&
	       s->maps.rodata_knobs && s->maps.data);
	EXPECT(s->rodata->scale == 5 && s->bss->small == 'k');
	EXPECT(run_step(s, &r0) == 0 && r0 == 16);
	EXPECT(run_step(s, &r0) == 0);
	EXPECT(s->bss->stats.calls == 2 && s->bss->stats.total == 10);
	EXPECT(s->bss->origin.x == 10 && s->bss->origin.y == -2 && s->bss->origin.tag == 'k');
	EXPECT(s->bss->last_word.b[0] == 4 && s->bss->last_word.b[3] == 1);
	EXPECT(s->bss->history[1] == 1 && s->bss->history[2] == 2);
	EXPECT(s->data_custom->custom_counter == 104);
	EXPECT(bpfrt_map_lookup_elem(s->maps.points, &key, &pt) == 0 && pt.x == 10);
	/* a user-space write the next run sees */
	s->data->seeded = 20;
	EXPECT(run_step(s, &r0) == 0 && r0 == 25);

	/* attach through the skeleton: the tracepoint runs it */
	EXPECT(skeleton_bpf__attach(s) == 0 && s->links.step != NULL);
	BPFRT_TRACEPOINT(skeleton_event);
	EXPECT(s->bss->stats.calls == 4);
	EXPECT(skeleton_bpf__attach(s) == 0); /* attached already: kept */
	skeleton_bpf__detach(s);
	EXPECT(s->links.step == NULL);
	BPFRT_TRACEPOINT(skeleton_event);
	EXPECT(s->bss->stats.calls == 4);
	skeleton_bpf__destroy(s);

	/* open_and_load: interpreted, defaults */
	s = skeleton_bpf__open_and_load();
	EXPECT(s != NULL);
	if (s) {
		EXPECT(run_step(s, &r0) == 0 && r0 == 16 && s->bss->stats.total == 3);
		skeleton_bpf__destroy(s);
	}
	/* open_opts: the skeleton's name unless the options give one */
	{
		struct bpfrt_object_open_opts oo;

		memset(&oo, 0, sizeof(oo));
		oo.sz = sizeof(oo);
		s = skeleton_bpf__open_opts(&oo);
		EXPECT(s && !strcmp(bpfrt_object_name(s->obj), "skeleton_bpf"));
		skeleton_bpf__destroy(s);
		oo.name = "mine";
		s = skeleton_bpf__open_opts(&oo);
		EXPECT(s && !strcmp(bpfrt_object_name(s->obj), "mine"));
		skeleton_bpf__destroy(s);
	}
	skeleton_bpf__destroy(NULL);
	if (failures)
		return 1;
	printf("skeleton ok\n");
	return 0;
}
