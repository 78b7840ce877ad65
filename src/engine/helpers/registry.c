#include "helpers/helpers.h"
#include "core/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct bpfrt_helper registry[BPFRT_MAX_HELPER_ID];

const struct bpfrt_helper *bpfrt_helper_table(void)
{
	return registry;
}

int bpfrt_helper_register(uint32_t id, const struct bpfrt_helper *helper)
{
	if (id >= BPFRT_KFUNC_ID_BASE)
		return bpfrt_err(-EINVAL, "helper id %u out of range (max %u; kfuncs use "
				 "bpfrt_kfunc_register)", id, BPFRT_KFUNC_ID_BASE - 1);
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

static pthread_mutex_t kfunc_lock = PTHREAD_MUTEX_INITIALIZER;

int bpfrt_kfunc_id(const char *name)
{
	int id = -ENOENT;

	pthread_mutex_lock(&kfunc_lock);
	for (uint32_t i = BPFRT_KFUNC_ID_BASE; i < BPFRT_MAX_HELPER_ID; i++)
		if (registry[i].fn && registry[i].name && !strcmp(registry[i].name, name)) {
			id = (int)i;
			break;
		}
	pthread_mutex_unlock(&kfunc_lock);
	return id;
}

int bpfrt_kfunc_register(const char *name, const struct bpfrt_helper *proto)
{
	int id = bpfrt_kfunc_id(name ? name : "");
	char *copy;

	if (!name || !*name || !proto || !proto->fn)
		return bpfrt_err(-EINVAL, "kfunc_register: name and function required");
	copy = strdup(name);
	if (!copy)
		return bpfrt_err(-ENOMEM, "kfunc_register: out of memory");
	pthread_mutex_lock(&kfunc_lock);
	if (id < 0)
		for (uint32_t i = BPFRT_KFUNC_ID_BASE; i < BPFRT_MAX_HELPER_ID; i++)
			if (!registry[i].fn) {
				id = (int)i;
				break;
			}
	if (id < 0) {
		pthread_mutex_unlock(&kfunc_lock);
		free(copy);
		return bpfrt_err(-ENOSPC, "kfunc_register: %s: table full", name);
	}
	/* A replaced kfunc keeps its id, so loaded programs call the new one. */
	if (registry[id].fn)
		free((char *)registry[id].name);
	registry[id] = *proto;
	registry[id].name = copy;
	pthread_mutex_unlock(&kfunc_lock);
	return id;
}
