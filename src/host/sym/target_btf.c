/* The host's target BTF for typed arguments (verifier/btf_access.c): the
 * .BTF of the module that defines the traced function, as pahole -J puts
 * it there (mk/bpfrt-host.mk). Registered with the verifier before main;
 * linked wherever debuginfo.c is (the trampolines' attach path). DWARF
 * alone types no arguments: the struct layouts come from BTF only. */
#include "sym/debuginfo.h"
#include "sym/symbols.h"
#include "verifier/verifier.h"

#include <bpf/btf.h>
#include <stdio.h>
#include <string.h>

static const struct btf *target_btf(const char *target, bool tracepoint, char *why,
				    size_t why_len)
{
	const struct bpfrt_sym *sym;
	const struct btf *btf;
	const char *name = strrchr(target, ':');

	if (tracepoint) {
		/* a tracepoint's declaration is in its defining module, which
		 * the symbol table does not name: btf_custom_path does */
		snprintf(why, why_len, "host tracepoints are typed from btf_custom_path only");
		return NULL;
	}
	name = name ? name + 1 : target;
	if (bpfrt_sym_lookup(target, &sym)) {
		snprintf(why, why_len, "no host function %s to find its module's BTF by", target);
		return NULL;
	}
	btf = bpfrt_module_btf(sym->module);
	if (!btf) {
		snprintf(why, why_len, "%s has no .BTF (build it with -g and run pahole -J on it, "
			 "or give btf_custom_path)", sym->module->path);
		return NULL;
	}
	if (btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) <= 0) {
		snprintf(why, why_len, "the .BTF of %s does not describe %s", sym->module->path,
			 name);
		return NULL;
	}
	return btf;
}

__attribute__((constructor)) void bpfrt_target_btf_init(void)
{
	bpfrt_verifier_set_target_btf(target_btf);
}
