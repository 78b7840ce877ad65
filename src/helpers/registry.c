#include "helpers/helpers.h"
#include "core/error.h"

static struct bpfrt_helper registry[BPFRT_MAX_HELPER_ID];

const struct bpfrt_helper *bpfrt_helper_table(void)
{
	return registry;
}

int bpfrt_helper_register(uint32_t id, const struct bpfrt_helper *helper)
{
	if (id >= BPFRT_MAX_HELPER_ID)
		return bpfrt_err(-EINVAL, "helper id %u out of range (max %u)", id,
				 BPFRT_MAX_HELPER_ID - 1);
	if (!helper || !helper->fn)
		return bpfrt_err(-EINVAL, "helper %u: no function", id);
	registry[id] = *helper;
	return 0;
}

int bpfrt_helper_unregister(uint32_t id)
{
	if (id >= BPFRT_MAX_HELPER_ID || !registry[id].fn)
		return bpfrt_err(-ENOENT, "helper %u is not registered", id);
	registry[id] = (struct bpfrt_helper){ 0 };
	return 0;
}

const struct bpfrt_helper *bpfrt_helper_get(uint32_t id)
{
	if (id >= BPFRT_MAX_HELPER_ID || !registry[id].fn)
		return NULL;
	return &registry[id];
}
