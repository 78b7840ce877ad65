/* Global variables of every shape a generated skeleton lays out: structs,
 * unions, enums, arrays, bitfields, an anonymous struct, a bool, padding forced by
 * alignment, static variables (not part of the skeleton), custom .data.X
 * and .rodata.X sections, BTF-defined maps (an array, a queue). tests/test_gen_skeleton.sh
 * checks the host's layout against the object's symbols. */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

enum mode { MODE_OFF, MODE_COUNT = 3, MODE_SUM = 7 };

struct point {
	__u8 tag;
	__u64 x;           /* 7 bytes of padding before it */
	__s16 y;
};

union word {
	__u32 u;
	__u8 b[4];
};

typedef struct point point_t;

const volatile enum mode mode = MODE_COUNT;
const volatile __u32 scale = 3;
const volatile bool verbose = true;

char small;             /* .bss: a char, then an aligned struct */
point_t origin;
union word last_word;
__u64 history[4];
static __u64 hidden_count; /* static: not in the skeleton */
struct {
	__u32 calls;
	__u64 total;
} stats;

struct flags {
	__u32 a : 3, b : 5;
	__s32 c : 4;
};

int seeded = 11;
struct flags flags_word = { .a = 5, .b = 17, .c = -3 };
__u16 seeded_short = 5;

__u64 custom_counter SEC(".data.custom") = 100;
const volatile __u32 custom_limit SEC(".rodata.knobs") = 9;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, point_t);
} points SEC(".maps");

/* keyless: what bpfrt map dump pops */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 8);
	__type(value, point_t);
} pending SEC(".maps");

SEC("raw_tp/skeleton_event")
int step(void *ctx)
{
	__u32 k = 0;
	point_t *p = bpf_map_lookup_elem(&points, &k);

	stats.calls++;
	stats.total += scale;
	hidden_count++;
	history[stats.calls & 3] = stats.calls;
	origin.x += scale;
	origin.y -= 1;
	origin.tag = small;
	last_word.u = 0x01020304;
	custom_counter += custom_limit;
	if (p)
		p->x = origin.x;
	bpf_map_push_elem(&pending, &origin, BPF_EXIST);
	if (verbose && mode == MODE_COUNT)
		return seeded + seeded_short;
	return 0;
}
