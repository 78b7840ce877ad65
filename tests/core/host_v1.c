/* One build of a host program's struct host_task (tests/test_core.c reads
 * it through CO-RE): the BTF of this layout is generated from this
 * object's DWARF by pahole (mk/test-objects.mk), as mk/bpfrt-host.mk
 * says a host does it. */
#include <stddef.h>
#include <string.h>

struct host_task {
	int pid;
	unsigned int uid;
	short prio;
	char comm[16];
};

size_t host_v1_fill(void *buf, size_t size)
{
	struct host_task t = { .pid = 1234, .uid = 77, .prio = -5 };

	strcpy(t.comm, "worker1");
	if (size < sizeof(t))
		return 0;
	memcpy(buf, &t, sizeof(t));
	return sizeof(t);
}
