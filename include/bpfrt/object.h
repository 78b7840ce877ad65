/* Objects: ELF files built by `clang -O2 -g -target bpf` with libbpf
 * conventions, opened, loaded and used like a libbpf skeleton.
 *
 * Ownership: the object owns its programs and maps (global data
 * included); bpfrt_object_close frees them (a program still attached or in
 * another object's prog array lives on until that use ends, and the maps
 * with it). Never bpfrt_prog_free or bpfrt_map_free them. Names, the
 * license and global-variable pointers belong to the object.
 *
 * Thread safety: open, load and close of one object are not synchronised:
 * one thread at a time until it is loaded. Once loaded, its programs and
 * maps are used from any thread as bpfrt/prog.h and bpfrt/map.h say; the
 * lookups (next/find) only read the object. */
#ifndef BPFRT_PUBLIC_OBJECT_H
#define BPFRT_PUBLIC_OBJECT_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfrt/prog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_object;
struct bpfrt_prog;
struct bpfrt_map;
struct bpfrt_env;

struct bpfrt_object_open_opts {
	size_t sz;         /* sizeof(struct bpfrt_object_open_opts) */
	const char *name;  /* object name; default: file name */
	/* Kernel config lines ("CONFIG_X=y\n...") for the object's __kconfig
	 * externs, taking precedence over the running kernel's config (read
	 * from /boot/config-RELEASE or /proc/config.gz), as libbpf's kconfig
	 * option. A CONFIG_ extern found in neither is 0 if __weak, else the
	 * open fails naming it; LINUX_KERNEL_VERSION is uname's release. */
	const char *kconfig;
	/* CO-RE target BTF (libbpf's btf_custom_path): the types the
	 * object's preserve_access_index relocations are resolved against,
	 * a raw BTF file or an ELF file with a .BTF section, e.g. a host
	 * build's object after `pahole -J` (mk/bpfrt-host.mk). Searched
	 * before the kernel-layout types bpfrt provides (struct pt_regs,
	 * struct trace_entry); NULL: those only. */
	const char *btf_custom_path;
};
#define bpfrt_object_open_opts__last_field btf_custom_path

struct bpfrt_object_load_opts {
	size_t sz;         /* sizeof(struct bpfrt_object_load_opts) */
	bool jit;          /* JIT-compile every program */
	bool trusted;      /* skip the verifier (every program is verified otherwise) */
	char *log_buf;     /* verifier log of the program that failed */
	size_t log_size;
	uint32_t log_level; /* 0, 1 or 2 as bpfrt_verify_opts */
	uint32_t prog_flags; /* BPFRT_F_* added to every program's own flags */
	/* Where the programs' helpers and kfuncs (__ksym names) are found
	 * (bpfrt/env.h); NULL: the default environment. */
	struct bpfrt_env *env;
	/* BPFRT_MAP_F_* (bpfrt/map.h) for every map of a kind that takes
	 * them: BPFRT_MAP_F_SHARED puts arrays, per-CPU arrays (global data
	 * included) and ring buffers in shared memory another process can
	 * map (bpfrt_map_shm); maps of the other kinds are made without. */
	uint64_t map_bpfrt_flags;
};
#define bpfrt_object_load_opts__last_field map_bpfrt_flags

BPFRT_API int bpfrt_object_open(const char *path, const struct bpfrt_object_open_opts *opts,
				struct bpfrt_object **obj);
/* bpfrt_object_open for an ELF image in memory (libbpf's
 * bpf_object__open_mem; what a generated skeleton embeds): the bytes are
 * copied, buf may go once this returns. opts->name names the object
 * (default "mem"). */
BPFRT_API int bpfrt_object_open_mem(const void *buf, size_t size,
				    const struct bpfrt_object_open_opts *opts,
				    struct bpfrt_object **obj);
/* Creates the maps, links, verifies (unless trusted) and prepares every
 * program. One attempt per object, as libbpf: any later call, after a
 * success or a failure, is refused (-EINVAL naming the object); after a
 * failure, close the object and open it again. The programs become
 * usable (runs, attach, prog array slots) only once the whole load has
 * succeeded: while it is under way, and after it failed (which frees
 * every program's code and the maps), they are refused as not loaded. */
BPFRT_API int bpfrt_object_load(struct bpfrt_object *obj,
				const struct bpfrt_object_load_opts *opts);
/* Gives the object up; the caller must not use it, its programs or its
 * maps afterwards. Lifetimes, as Linux's references:
 *  - the object's prog arrays are emptied first (as Linux clears a prog
 *    array when its last user reference goes): tail calls through them
 *    then fall through, and no object is kept alive by its own slots;
 *  - each program is freed as bpfrt_prog_free: one still attached or in
 *    a slot of another object's prog array lives, and runs, until that
 *    link or slot lets it go;
 *  - the maps, global data included, are what such programs use: they
 *    are freed with the object's last program, not before. */
BPFRT_API void bpfrt_object_close(struct bpfrt_object *obj);

BPFRT_API const char *bpfrt_object_name(const struct bpfrt_object *obj);
BPFRT_API const char *bpfrt_object_license(const struct bpfrt_object *obj);

/* Programs: iterate with prev = NULL first; find by function name. Before
 * load, the returned program has no instructions that can run. */
BPFRT_API struct bpfrt_prog *bpfrt_object_next_prog(const struct bpfrt_object *obj,
						     const struct bpfrt_prog *prev);
BPFRT_API struct bpfrt_prog *bpfrt_object_find_prog(const struct bpfrt_object *obj,
						     const char *name);
BPFRT_API const char *bpfrt_prog_section(const struct bpfrt_prog *prog);
BPFRT_API enum bpfrt_prog_kind bpfrt_prog_kind(const struct bpfrt_prog *prog);
/* Whether bpfrt_object_load loads the program (libbpf's
 * bpf_program__autoload): true unless its SEC() name starts with '?'.
 * Set before the load (-EBUSY after it); a program not loaded is
 * refused by runs and attach as not loaded. */
BPFRT_API int bpfrt_prog_set_autoload(struct bpfrt_prog *prog, bool autoload);
BPFRT_API bool bpfrt_prog_autoload(const struct bpfrt_prog *prog);
/* The SEC() name is a sleepable variant (".s": lsm.s, fentry.s, uprobe.s,
 * ...). bpfrt runs every program where it may block, so it changes
 * nothing here but what the program says of itself. */
BPFRT_API bool bpfrt_prog_sleepable(const struct bpfrt_prog *prog);
/* Attach target from the section name ("syscalls/sys_enter_getpgid" for
 * tp/syscalls/sys_enter_getpgid), "" if none. */
BPFRT_API const char *bpfrt_prog_attach_target(const struct bpfrt_prog *prog);

/* Maps, including the global-data maps ".data", ".rodata", ".bss" (named
 * as libbpf's skeleton names them). Valid after open; created at load. */
BPFRT_API struct bpfrt_map *bpfrt_object_next_map(const struct bpfrt_object *obj,
						  const struct bpfrt_map *prev);
BPFRT_API struct bpfrt_map *bpfrt_object_find_map(const struct bpfrt_object *obj, const char *name);

/* Global variables by name, as a skeleton's obj->bss->hits: returns a
 * pointer to the variable (before load: the initial image, writable for
 * .data/.rodata/.bss so `const volatile` knobs can be set; after load:
 * the live storage) and its size. NULL with bpfrt_last_error() set if
 * there is no such variable. Load freezes .rodata* as libbpf does
 * (BPF_F_RDONLY_PROG, then bpfrt_map_freeze after the initial values):
 * after load its storage is read-only memory, so a write through the
 * pointer faults, and the verifier may have folded its values into the
 * programs. */
BPFRT_API void *bpfrt_object_global(const struct bpfrt_object *obj, const char *name, size_t *size);
/* A whole global-data section (".data", ".rodata", ".bss", ".data.NAME",
 * ".rodata.NAME"), as a skeleton's obj->bss and obj->rodata point at it:
 * before load the initial image (writable: set the knobs there), after
 * load the live storage, with bpfrt_object_global's rules (.rodata*
 * read-only). The pointer changes at load: take it again after. Its size
 * in *size (the section's). NULL with bpfrt_last_error() (-ENOENT) if the
 * object has no such section (an empty one makes no map). */
BPFRT_API void *bpfrt_object_global_data(const struct bpfrt_object *obj, const char *section,
					 size_t *size);

#ifdef __cplusplus
}
#endif
#endif
