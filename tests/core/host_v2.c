/* Another build of struct host_task (see host_v1.c): fields reordered,
 * one inserted before them, prio widened, and a field v1 lacks. */
#include <stddef.h>
#include <string.h>

struct host_task {
	long state;
	char comm[16];
	unsigned int uid;
	int nice;
	int prio;
	int pid;
};

size_t host_v2_fill(void *buf, size_t size)
{
	struct host_task t = { .state = 3, .pid = 4321, .uid = 88, .prio = -7, .nice = 9 };

	strcpy(t.comm, "worker2");
	if (size < sizeof(t))
		return 0;
	memcpy(buf, &t, sizeof(t));
	return sizeof(t);
}
