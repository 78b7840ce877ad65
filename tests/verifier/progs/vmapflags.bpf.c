/* Verifier C corpus: map access flags from the map definitions
 * (BPF_F_RDONLY_PROG, BPF_F_WRONLY_PROG) and .rodata, which the loader
 * freezes before verification.
 * One line per program: @NAME: accept | reject "reason" ; linux: same|accept|reject|skip (why)
 * @ro_read: accept ; linux: same
 * @ro_write: reject "write into map forbidden" ; linux: same
 * @ro_atomic: reject "write into map forbidden" ; linux: same
 * @ro_update: reject "write into map forbidden" ; linux: same
 * @ro_delete: reject "write into map forbidden" ; linux: same
 * @ro_helper_write: reject "write into map forbidden" ; linux: same
 * @wo_write: accept ; linux: same
 * @wo_helper_write: accept ; linux: same
 * @wo_read: reject "read from map forbidden" ; linux: same
 * @wo_atomic: reject "read from map forbidden" ; linux: same
 * @wo_as_key: reject "read from map forbidden" ; linux: same
 * @rodata_index_folded: accept ; linux: same
 * @data_index_not_folded: reject "unbounded min value" ; linux: same
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, int);
	__type(value, long);
} ro SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__uint(map_flags, BPF_F_WRONLY_PROG);
	__type(key, int);
	__type(value, long);
} wo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, long);
	__type(value, long);
} h SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, char[64]);
} buf SEC(".maps");

const volatile unsigned int knob = 3;   /* .rodata: frozen, folded */
unsigned int plain = 3;                 /* .data: may change, not folded */

SEC("raw_tp/x")
int ro_read(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&ro, &k);

	return v ? *v : 0;
}

SEC("raw_tp/x")
int ro_write(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&ro, &k);

	if (v)
		*v = 1;
	return 0;
}

SEC("raw_tp/x")
int ro_atomic(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&ro, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("raw_tp/x")
int ro_update(void *ctx)
{
	int k = 1;
	long val = 2;

	return bpf_map_update_elem(&ro, &k, &val, BPF_ANY);
}

SEC("raw_tp/x")
int ro_delete(void *ctx)
{
	int k = 1;

	return bpf_map_delete_elem(&ro, &k);
}

SEC("raw_tp/x")
int ro_helper_write(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&ro, &k);

	if (v)
		bpf_probe_read_kernel(v, sizeof(*v), (const void *)0);
	return 0;
}

SEC("raw_tp/x")
int wo_write(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&wo, &k);

	if (v)
		*v = 1;
	return 0;
}

SEC("raw_tp/x")
int wo_helper_write(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&wo, &k);

	if (v)
		bpf_probe_read_kernel(v, sizeof(*v), (const void *)0);
	return 0;
}

SEC("raw_tp/x")
int wo_read(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&wo, &k);

	return v ? *(volatile long *)v : 0;
}

SEC("raw_tp/x")
int wo_atomic(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&wo, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("raw_tp/x")
int wo_as_key(void *ctx)
{
	int k = 1;
	long *v = bpf_map_lookup_elem(&wo, &k);

	if (v)
		bpf_map_lookup_elem(&h, v);
	return 0;
}

/* No bounds check: safe only because knob is a constant. */
SEC("raw_tp/x")
int rodata_index_folded(void *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&buf, &k);

	return v ? v[knob] : 0;
}

SEC("raw_tp/x")
int data_index_not_folded(void *ctx)
{
	int k = 0;
	char *v = bpf_map_lookup_elem(&buf, &k);

	return v ? v[plain] : 0;
}
