#include "testlib.h"
#include "bpfrt/bpfrt.h"
#include <errno.h>

TEST(load_rejects_empty)
{
	struct bpfrt_prog *p = (void *)1;
	CHECK(bpfrt_prog_load(NULL, 0, NULL, &p) == -EINVAL);
	CHECK(p == NULL);
	CHECK(bpfrt_last_error()[0] != '\0');
}
