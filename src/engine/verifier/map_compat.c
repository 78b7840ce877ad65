/* Which helpers a program may call with which map kinds: Linux's
 * check_map_func_compatibility, both ways. A map kind that lists helpers
 * takes only those; a helper that lists kinds takes only those. The
 * generic element helpers (lookup/update/delete) take every kind not
 * listed, which is what Linux's default case does. Host kfuncs take any
 * map: they are trusted with what they declare. */
#include "verifier/vstate.h"

#include <stddef.h>

#define MAX_LIST 8

struct compat_rule {
	int32_t key;               /* map type (by_map) or helper id (by_func) */
	int32_t allowed[MAX_LIST]; /* helper ids (by_map) or map types (by_func); 0 ends */
};

/* The map kinds that take a fixed set of helpers. (Helper id 0,
 * BPF_FUNC_unspec, is never callable, so 0 can end the lists.) */
static const struct compat_rule by_map[] = {
	{ BPF_MAP_TYPE_PROG_ARRAY, { BPF_FUNC_tail_call } },
	{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, { BPF_FUNC_perf_event_read, BPF_FUNC_perf_event_output,
					   BPF_FUNC_skb_output, BPF_FUNC_perf_event_read_value,
					   BPF_FUNC_xdp_output } },
	{ BPF_MAP_TYPE_RINGBUF, { BPF_FUNC_ringbuf_output, BPF_FUNC_ringbuf_reserve,
				  BPF_FUNC_ringbuf_query, BPF_FUNC_ringbuf_reserve_dynptr,
				  BPF_FUNC_ringbuf_submit_dynptr,
				  BPF_FUNC_ringbuf_discard_dynptr } },
	{ BPF_MAP_TYPE_USER_RINGBUF, { BPF_FUNC_user_ringbuf_drain } },
	{ BPF_MAP_TYPE_STACK_TRACE, { BPF_FUNC_get_stackid } },
	{ BPF_MAP_TYPE_CGROUP_ARRAY, { BPF_FUNC_skb_under_cgroup,
				       BPF_FUNC_current_task_under_cgroup } },
	{ BPF_MAP_TYPE_ARRAY_OF_MAPS, { BPF_FUNC_map_lookup_elem } },
	{ BPF_MAP_TYPE_HASH_OF_MAPS, { BPF_FUNC_map_lookup_elem } },
	{ BPF_MAP_TYPE_QUEUE, { BPF_FUNC_map_peek_elem, BPF_FUNC_map_pop_elem,
				BPF_FUNC_map_push_elem } },
	{ BPF_MAP_TYPE_STACK, { BPF_FUNC_map_peek_elem, BPF_FUNC_map_pop_elem,
				BPF_FUNC_map_push_elem } },
	{ BPF_MAP_TYPE_BLOOM_FILTER, { BPF_FUNC_map_peek_elem, BPF_FUNC_map_push_elem } },
	{ BPF_MAP_TYPE_SOCKMAP, { BPF_FUNC_sk_redirect_map, BPF_FUNC_sock_map_update,
				  BPF_FUNC_msg_redirect_map, BPF_FUNC_sk_select_reuseport,
				  BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem,
				  BPF_FUNC_map_delete_elem } },
	{ BPF_MAP_TYPE_SOCKHASH, { BPF_FUNC_sk_redirect_hash, BPF_FUNC_sock_hash_update,
				   BPF_FUNC_msg_redirect_hash, BPF_FUNC_sk_select_reuseport,
				   BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem,
				   BPF_FUNC_map_delete_elem } },
	{ BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, { BPF_FUNC_sk_select_reuseport } },
	{ BPF_MAP_TYPE_XSKMAP, { BPF_FUNC_redirect_map, BPF_FUNC_map_lookup_elem } },
	{ BPF_MAP_TYPE_DEVMAP, { BPF_FUNC_redirect_map, BPF_FUNC_map_lookup_elem } },
	{ BPF_MAP_TYPE_DEVMAP_HASH, { BPF_FUNC_redirect_map, BPF_FUNC_map_lookup_elem } },
	{ BPF_MAP_TYPE_CPUMAP, { BPF_FUNC_redirect_map } },
	{ BPF_MAP_TYPE_SK_STORAGE, { BPF_FUNC_sk_storage_get, BPF_FUNC_sk_storage_delete,
				     BPF_FUNC_kptr_xchg } },
	{ BPF_MAP_TYPE_CGROUP_STORAGE, { BPF_FUNC_get_local_storage } },
	{ BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, { BPF_FUNC_get_local_storage } },
};

/* The helpers that take a fixed set of map kinds. */
static const struct compat_rule by_func[] = {
	{ BPF_FUNC_tail_call, { BPF_MAP_TYPE_PROG_ARRAY } },
	{ BPF_FUNC_perf_event_read, { BPF_MAP_TYPE_PERF_EVENT_ARRAY } },
	{ BPF_FUNC_perf_event_output, { BPF_MAP_TYPE_PERF_EVENT_ARRAY } },
	{ BPF_FUNC_perf_event_read_value, { BPF_MAP_TYPE_PERF_EVENT_ARRAY } },
	{ BPF_FUNC_skb_output, { BPF_MAP_TYPE_PERF_EVENT_ARRAY } },
	{ BPF_FUNC_xdp_output, { BPF_MAP_TYPE_PERF_EVENT_ARRAY } },
	{ BPF_FUNC_ringbuf_output, { BPF_MAP_TYPE_RINGBUF } },
	{ BPF_FUNC_ringbuf_reserve, { BPF_MAP_TYPE_RINGBUF } },
	{ BPF_FUNC_ringbuf_query, { BPF_MAP_TYPE_RINGBUF } },
	{ BPF_FUNC_ringbuf_reserve_dynptr, { BPF_MAP_TYPE_RINGBUF } },
	{ BPF_FUNC_ringbuf_submit_dynptr, { BPF_MAP_TYPE_RINGBUF } },
	{ BPF_FUNC_ringbuf_discard_dynptr, { BPF_MAP_TYPE_RINGBUF } },
	{ BPF_FUNC_user_ringbuf_drain, { BPF_MAP_TYPE_USER_RINGBUF } },
	{ BPF_FUNC_get_stackid, { BPF_MAP_TYPE_STACK_TRACE } },
	{ BPF_FUNC_current_task_under_cgroup, { BPF_MAP_TYPE_CGROUP_ARRAY } },
	{ BPF_FUNC_skb_under_cgroup, { BPF_MAP_TYPE_CGROUP_ARRAY } },
	{ BPF_FUNC_map_pop_elem, { BPF_MAP_TYPE_QUEUE, BPF_MAP_TYPE_STACK } },
	{ BPF_FUNC_map_peek_elem, { BPF_MAP_TYPE_QUEUE, BPF_MAP_TYPE_STACK,
				    BPF_MAP_TYPE_BLOOM_FILTER } },
	{ BPF_FUNC_map_push_elem, { BPF_MAP_TYPE_QUEUE, BPF_MAP_TYPE_STACK,
				    BPF_MAP_TYPE_BLOOM_FILTER } },
	{ BPF_FUNC_map_lookup_percpu_elem, { BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_PERCPU_HASH,
					     BPF_MAP_TYPE_LRU_PERCPU_HASH } },
	{ BPF_FUNC_sk_redirect_map, { BPF_MAP_TYPE_SOCKMAP } },
	{ BPF_FUNC_sock_map_update, { BPF_MAP_TYPE_SOCKMAP } },
	{ BPF_FUNC_msg_redirect_map, { BPF_MAP_TYPE_SOCKMAP } },
	{ BPF_FUNC_sk_redirect_hash, { BPF_MAP_TYPE_SOCKHASH } },
	{ BPF_FUNC_sock_hash_update, { BPF_MAP_TYPE_SOCKHASH } },
	{ BPF_FUNC_msg_redirect_hash, { BPF_MAP_TYPE_SOCKHASH } },
	{ BPF_FUNC_sk_select_reuseport, { BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, BPF_MAP_TYPE_SOCKMAP,
					  BPF_MAP_TYPE_SOCKHASH } },
	{ BPF_FUNC_redirect_map, { BPF_MAP_TYPE_DEVMAP, BPF_MAP_TYPE_DEVMAP_HASH,
				   BPF_MAP_TYPE_CPUMAP, BPF_MAP_TYPE_XSKMAP } },
	{ BPF_FUNC_sk_storage_get, { BPF_MAP_TYPE_SK_STORAGE } },
	{ BPF_FUNC_sk_storage_delete, { BPF_MAP_TYPE_SK_STORAGE } },
	{ BPF_FUNC_get_local_storage, { BPF_MAP_TYPE_CGROUP_STORAGE,
					BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE } },
	{ BPF_FUNC_for_each_map_elem, { BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_PERCPU_ARRAY,
					BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_PERCPU_HASH,
					BPF_MAP_TYPE_LRU_HASH, BPF_MAP_TYPE_LRU_PERCPU_HASH } },
};

/* false if rules has an entry for key whose list lacks value. */
static bool rule_allows(const struct compat_rule *rules, size_t n, int32_t key, int32_t value)
{
	for (size_t i = 0; i < n; i++) {
		if (rules[i].key != key)
			continue;
		for (int j = 0; j < MAX_LIST && rules[i].allowed[j]; j++)
			if (rules[i].allowed[j] == value)
				return true;
		return false;
	}
	return true;
}

bool vmap_func_compatible(const struct bpfrt_map *map, int32_t func_id)
{
	if (func_id >= BPFRT_KFUNC_ID_BASE)
		return true;
	return rule_allows(by_map, sizeof(by_map) / sizeof(by_map[0]), (int32_t)map->type,
			   func_id) &&
	       rule_allows(by_func, sizeof(by_func) / sizeof(by_func[0]), func_id,
			   (int32_t)map->type);
}

static bool is_sock_map(const struct bpfrt_map *map)
{
	return map->type == BPF_MAP_TYPE_SOCKMAP || map->type == BPF_MAP_TYPE_SOCKHASH;
}

/* Linux's may_update_sockmap: the program kinds that never hold a locked
 * socket may update and delete a sockmap's or sockhash's elements with
 * the generic helpers; sock_ops may delete (its dedicated update helpers
 * check the event). */
static bool may_update_sockmap(const struct venv *env, int32_t func_id)
{
	switch (env->prog->kind) {
	case BPFRT_PROG_ITER:
		return true;
	case BPFRT_PROG_SOCK_OPS:
		return func_id == BPF_FUNC_map_delete_elem;
	case BPFRT_PROG_SOCKET:
	case BPFRT_PROG_SCHED_CLS:
	case BPFRT_PROG_SCHED_ACT:
	case BPFRT_PROG_XDP:
	case BPFRT_PROG_SK_REUSEPORT:
	case BPFRT_PROG_FLOW_DISSECTOR:
	case BPFRT_PROG_SK_LOOKUP:
	case BPFRT_PROG_UNSPEC: /* bpfrt's test bench */
		return true;
	default:
		return false;
	}
}

const char *vmap_func_refused(const struct venv *env, const struct bpfrt_map *map,
			      int32_t func_id)
{
	bool generic_write = func_id == BPF_FUNC_map_update_elem ||
			     func_id == BPF_FUNC_map_delete_elem;

	if (is_sock_map(map) && generic_write && !may_update_sockmap(env, func_id))
		return "cannot update sockmap in this context";
	/* Linux types these results and values as sockets (PTR_TO_SOCKET,
	 * PTR_TO_XDP_SOCK), references the program must release, which
	 * bpfrt's verifier does not model: refused rather than typed as
	 * memory. bpfrt's maps of these kinds are always empty, so the
	 * lookup would always give NULL. */
	if ((is_sock_map(map) || map->type == BPF_MAP_TYPE_XSKMAP) &&
	    func_id == BPF_FUNC_map_lookup_elem)
		return "the map's elements are sockets, which bpfrt's verifier does not type "
		       "(its maps of this kind hold none)";
	if (is_sock_map(map) && func_id == BPF_FUNC_map_update_elem)
		return "the value must be a socket, which bpfrt's verifier does not type "
		       "(its maps of this kind hold none)";
	return NULL;
}

/* Linux's record_func_map: the helpers that change a map's contents. */
bool vmap_func_writes(int32_t func_id)
{
	return func_id == BPF_FUNC_map_update_elem || func_id == BPF_FUNC_map_delete_elem ||
	       func_id == BPF_FUNC_map_push_elem || func_id == BPF_FUNC_map_pop_elem;
}

/* Linux's bpf_cgroup_storage_assign: a program has at most one cgroup
 * storage of each kind (shared, per-CPU), the one bpf_get_local_storage
 * gives it. */
int vmap_check_prog_maps(struct venv *env)
{
	const struct bpfrt_prog *prog = env->prog;
	const struct bpfrt_map *storage[2] = { NULL, NULL };

	for (uint32_t i = 0; i < prog->map_ref_cnt; i++) {
		const struct bpfrt_map *map = prog->map_refs[i].map;
		int k;

		if (!map || (map->type != BPF_MAP_TYPE_CGROUP_STORAGE &&
			     map->type != BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE))
			continue;
		k = map->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
		if (storage[k] && storage[k] != map) {
			env->insn = prog->map_refs[i].insn;
			return verr(env, "only one cgroup storage of each type is allowed (map '%s' "
				    "after '%s')", map->name, storage[k]->name);
		}
		storage[k] = map;
	}
	return 0;
}
