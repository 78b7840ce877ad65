/* Slow paths of the attached-program fast path (run.h): counters and the
 * copy-on-write program arrays. */
#include "attach/run.h"
#include "attach/helpers_tracing.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

__thread struct bpfrt_attach_tls bpfrt_attach_tls
	__attribute__((tls_model("initial-exec")));

/* Links the tracing helpers' constructor wherever this file is linked (a
 * static archive takes only the objects something refers to). */
__attribute__((used)) static void (*const link_tracing_helpers)(void) =
	bpfrt_tracing_helpers_init;

void bpfrt_attach_count_miss(struct bpfrt_prog *prog)
{
	atomic_fetch_add_explicit(&prog->attach_misses, 1, memory_order_relaxed);
}

void bpfrt_attach_count_abort(struct bpfrt_prog *prog)
{
	atomic_fetch_add_explicit(&prog->attach_aborts, 1, memory_order_relaxed);
}

uint64_t bpfrt_prog_misses(const struct bpfrt_prog *prog)
{
	return prog ? atomic_load_explicit(&prog->attach_misses, memory_order_relaxed) : 0;
}

uint64_t bpfrt_prog_aborts(const struct bpfrt_prog *prog)
{
	return prog ? atomic_load_explicit(&prog->attach_aborts, memory_order_relaxed) : 0;
}

struct bpfrt_prog_array *bpfrt_prog_array_alloc(uint32_t cnt)
{
	struct bpfrt_prog_array *arr;

	arr = calloc(1, sizeof(*arr) + (size_t)cnt * sizeof(arr->items[0]));
	if (arr)
		arr->cnt = cnt;
	return arr;
}

static void prog_array_free_cb(struct bpfrt_rcu_head *head)
{
	free((char *)head - offsetof(struct bpfrt_prog_array, rcu));
}

void bpfrt_prog_array_free_rcu(struct bpfrt_prog_array *arr)
{
	if (arr)
		bpfrt_rcu_call_head(&arr->rcu, prog_array_free_cb);
}

int bpfrt_prog_array_add(struct bpfrt_prog_array *_Atomic *slot,
			 const struct bpfrt_prog_array_item *item)
{
	struct bpfrt_prog_array *old = atomic_load_explicit(slot, memory_order_relaxed);
	uint32_t cnt = old ? old->cnt : 0;
	struct bpfrt_prog_array *arr = bpfrt_prog_array_alloc(cnt + 1);

	if (!arr)
		return bpfrt_err(-ENOMEM, "attach: out of memory for the program array");
	if (cnt)
		memcpy(arr->items, old->items, cnt * sizeof(arr->items[0]));
	arr->items[cnt] = *item;
	/* release: a reader that sees the new array sees its items. */
	atomic_store_explicit(slot, arr, memory_order_release);
	bpfrt_prog_array_free_rcu(old);
	return 0;
}

int bpfrt_prog_array_remove(struct bpfrt_prog_array *_Atomic *slot, const void *link,
			    bool sync)
{
	struct bpfrt_prog_array *old = atomic_load_explicit(slot, memory_order_relaxed);
	struct bpfrt_prog_array *arr = NULL;
	uint32_t i, n = 0;

	for (i = 0; old && i < old->cnt; i++)
		if (old->items[i].link == link)
			break;
	if (!old || i == old->cnt)
		return -ENOENT;
	if (old->cnt > 1) {
		arr = bpfrt_prog_array_alloc(old->cnt - 1);
		if (!arr)
			return bpfrt_err(-ENOMEM, "detach: out of memory for the program array");
		for (i = 0; i < old->cnt; i++)
			if (old->items[i].link != link)
				arr->items[n++] = old->items[i];
	}
	atomic_store_explicit(slot, arr, memory_order_release);
	if (sync) {
		bpfrt_rcu_synchronize();
		free(old);
	} else {
		bpfrt_prog_array_free_rcu(old);
	}
	return 0;
}
