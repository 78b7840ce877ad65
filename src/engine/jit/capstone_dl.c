/* capstone through dlopen (capstone_dl.h): the table is filled once, on
 * the first listing, and kept for the process's life (the library is
 * never closed: cs_insn arrays and handles may outlive any one caller). */
#include "jit/capstone_dl.h"

#ifndef BPFRT_NO_CAPSTONE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct bpfrt_capstone table;
static const struct bpfrt_capstone *loaded;
static char why_missing[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void *symbol(void *lib, const char *name)
{
	void *fn = dlsym(lib, name);

	if (!fn)
		snprintf(why_missing, sizeof(why_missing), "%s has no %s",
			 BPFRT_CAPSTONE_SONAME, name);
	return fn;
}

static void load(void)
{
	void *lib = dlopen(BPFRT_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		const char *err = dlerror();

		snprintf(why_missing, sizeof(why_missing), "%s",
			 err ? err : BPFRT_CAPSTONE_SONAME ": cannot be loaded");
		return;
	}
	/* POSIX: a function pointer converts from dlsym's void * */
	*(void **)&table.open = symbol(lib, "cs_open");
	*(void **)&table.disasm = symbol(lib, "cs_disasm");
	*(void **)&table.free = symbol(lib, "cs_free");
	*(void **)&table.close = symbol(lib, "cs_close");
	if (table.open && table.disasm && table.free && table.close)
		loaded = &table;
}

const struct bpfrt_capstone *bpfrt_capstone_get(const char **why)
{
	pthread_once(&load_once, load);
	if (!loaded && why)
		*why = why_missing;
	return loaded;
}
#endif
