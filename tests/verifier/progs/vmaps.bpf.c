/* Verifier C corpus: map lookups, map values, globals.
 * One line per program: @NAME: accept | reject "reason" ; linux: same|accept|reject|skip (why)
 * @null_deref_after_lookup: reject "invalid mem access 'map_value_or_null'" ; linux: same
 * @lookup_checked: accept ; linux: same
 * @oob_map_value: reject "invalid access to map value" ; linux: same
 * @map_value_last_byte: accept ; linux: same
 * @var_index_unchecked: reject "unbounded min value" ; linux: same
 * @var_index_checked: accept ; linux: same
 * @var_index_off_by_one: reject "invalid access to map value" ; linux: same
 * @atomic_fetch_index: accept ; linux: same
 * @lookup_null_key: reject "R2" ; linux: same
 * @lookup_uninit_key: reject "invalid indirect read from stack" ; linux: accept (as root Linux allows uninitialized stack reads, perfmon_capable; bpfrt never does)
 * @update_short_value: reject "invalid indirect read from stack" ; linux: accept (same: the uninitialized 8 bytes are allowed to root)
 * @update_value_ok: accept ; linux: same
 * @global_array_oob: reject "invalid access to map value" ; linux: same
 * @rodata_write: reject "write into map forbidden" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct val { long a, b; };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, int);
	__type(value, struct val);
} h SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, char[64]);
} a SEC(".maps");

long g;
long arr[16];
const volatile int ro = 3;

SEC("raw_tp/x")
int null_deref_after_lookup(void *ctx)
{
	int k = 1;
	struct val *v = bpf_map_lookup_elem(&h, &k);

	return v->a;
}

SEC("raw_tp/x")
int lookup_checked(void *ctx)
{
	int k = 1;
	struct val *v = bpf_map_lookup_elem(&h, &k);

	return v ? v->a : 0;
}

SEC("raw_tp/x")
int oob_map_value(void *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&a, &k);

	if (!v)
		return 0;
	return *(volatile long *)(v + 60);
}

SEC("raw_tp/x")
int map_value_last_byte(void *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&a, &k);

	if (!v)
		return 0;
	return *(volatile char *)(v + 63);
}

SEC("raw_tp/x")
int var_index_unchecked(unsigned long long *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&a, &k);
	unsigned long i = ctx[0];

	if (!v)
		return 0;
	return v[i];
}

SEC("raw_tp/x")
int var_index_checked(unsigned long long *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&a, &k);
	unsigned long i = ctx[0];

	if (!v || i >= 64)
		return 0;
	return v[i];
}

SEC("raw_tp/x")
int var_index_off_by_one(unsigned long long *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&a, &k);
	unsigned long i = ctx[0];

	if (!v || i > 64)
		return 0;
	return v[i];
}

/* an index from an atomic fetch-and-add on a global, bounds-checked before
 * it indexes an array */
SEC("raw_tp/x")
int atomic_fetch_index(void *ctx)
{
	long i = __sync_fetch_and_add(&g, 1);

	if (i >= 0 && i < 16)
		arr[i] = i;
	return 0;
}

SEC("raw_tp/x")
int lookup_null_key(void *ctx)
{
	struct val *v = bpf_map_lookup_elem(&h, (void *)0);

	return v ? 1 : 0;
}

SEC("raw_tp/x")
int lookup_uninit_key(void *ctx)
{
	int k;
	struct val *v;

	asm volatile("" : "=m"(k));
	v = bpf_map_lookup_elem(&h, &k);
	return v ? 1 : 0;
}

SEC("raw_tp/x")
int update_short_value(void *ctx)
{
	int k = 1;
	long small[2];

	small[0] = 1;
	asm volatile("" : "+m"(small[0]));
	return bpf_map_update_elem(&h, &k, small, 0);
}

SEC("raw_tp/x")
int update_value_ok(void *ctx)
{
	int k = 1;
	struct val v = { 1, 2 };

	return bpf_map_update_elem(&h, &k, &v, 0);
}

SEC("raw_tp/x")
int global_array_oob(unsigned long long *ctx)
{
	unsigned long i = ctx[0] & 31;

	return arr[i];
}

SEC("raw_tp/x")
int rodata_write(void *ctx)
{
	*(volatile int *)&ro = 5;
	return 0;
}
