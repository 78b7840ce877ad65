/* Helpers and kfuncs: host functions BPF code calls, by id (helpers) or by
 * name (kfuncs, `extern ... __ksym`).
 *
 * Ownership: the registry copies struct bpfrt_helper; a helper's name
 * string must stay valid while it is registered (a kfunc's name is copied
 * and kept by bpfrt). bpfrt_helper_info copies an entry out into the
 * caller's struct; bpfrt_helper_get (deprecated) returns the registry's
 * entry itself: valid until that id is registered again or unregistered.
 *
 * These calls act on the default environment (bpfrt/env.h has others).
 * A program calls the functions registered when it was loaded: each
 * program keeps a copy of the entries it calls, so registering an id
 * again, or unregistering it, changes what later loads call, never what
 * a loaded program calls (interpreter and JIT alike).
 *
 * Thread safety: registration and loads may run concurrently on any
 * threads (the tables are under a lock; runs never read them).
 * bpfrt_helper_info copies the entry under the lock (a consistent entry,
 * before or after a concurrent registration). bpfrt_helper_get returns
 * the live entry, which a concurrent registration of the same id may be
 * rewriting: it is deprecated, kept for the callers that have it. */
#ifndef BPFRT_PUBLIC_HELPERS_H
#define BPFRT_PUBLIC_HELPERS_H

#include "bpfrt/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPFRT_MAX_HELPER_ID    1024 /* Linux helper ids, then host kfuncs */
#define BPFRT_KFUNC_ID_BASE    512

typedef uint64_t (*bpfrt_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3,
				    uint64_t r4, uint64_t r5);

/* Argument and return kinds, as the verifier will need them. */
enum bpfrt_arg_type {
	BPFRT_ARG_NONE = 0,      /* argument unused */
	BPFRT_ARG_ANYTHING,      /* any scalar; a pointer only with BPFRT_F_ALLOW_PTR_LEAKS
				  * (the helper may then touch a stack pointer's whole frame) */
	BPFRT_ARG_PTR_TO_CTX,
	BPFRT_ARG_PTR_TO_MEM,    /* followed by a BPFRT_ARG_CONST_SIZE */
	BPFRT_ARG_PTR_TO_UNINIT_MEM,
	BPFRT_ARG_CONST_SIZE,
	BPFRT_ARG_CONST_SIZE_OR_ZERO,
	BPFRT_ARG_CONST_MAP_PTR,
	BPFRT_ARG_PTR_TO_MAP_KEY,
	BPFRT_ARG_PTR_TO_MAP_VALUE,
	BPFRT_ARG_PTR_TO_FUNC,
	BPFRT_ARG_PTR_TO_STACK_OR_NULL, /* a callback's context (bpf_loop); for a helper
					 * without a callback argument before it, the
					 * helper may touch the whole frame */
	BPFRT_ARG_PTR_TO_RINGBUF_MEM,
	BPFRT_ARG_PTR_TO_LONG,   /* 8 writable bytes (an output u64) */
	BPFRT_ARG_PTR_TO_CONST_STR, /* NUL-terminated string in a read-only map */
	BPFRT_ARG_PTR_TO_UNINIT_MAP_VALUE, /* value_size bytes the helper writes
					    * (map_pop_elem, map_peek_elem) */
	BPFRT_ARG_PTR_TO_SPIN_LOCK, /* the struct bpf_spin_lock of a map value
				     * (bpf_spin_lock, bpf_spin_unlock) */
	/* struct bpf_dynptr (16 bytes, layout in bpfrt/dynptr.h): */
	BPFRT_ARG_PTR_TO_DYNPTR,       /* an initialised dynptr of any kind, which the
					* helper reads (the memory it names may be written) */
	BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_LOCAL,   /* 16 stack bytes the helper makes a
						 * local dynptr (dynptr_from_mem) */
	BPFRT_ARG_PTR_TO_UNINIT_DYNPTR_RINGBUF, /* ...a ringbuf dynptr holding a
						 * reference (ringbuf_reserve_dynptr) */
	BPFRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE, /* a ringbuf dynptr the helper
						  * releases (submit/discard_dynptr) */
	/* sockets (Linux's struct bpf_sock, bpf_tcp_sock; bpfrt's own helpers
	 * never find one, see docs/SUPPORTED.md): */
	BPFRT_ARG_PTR_TO_SOCK_COMMON,  /* a non-NULL socket pointer of any kind */
	BPFRT_ARG_PTR_TO_SOCK_RELEASE, /* a non-NULL socket pointer holding a reference
					* (a lookup's), which the helper releases */
	BPFRT_ARG_PTR_TO_CTX_OR_NULL,  /* the context, unmodified, or 0 */
};

enum bpfrt_ret_type {
	BPFRT_RET_INTEGER = 0,
	BPFRT_RET_VOID,
	BPFRT_RET_PTR_TO_MAP_VALUE_OR_NULL,
	BPFRT_RET_PTR_TO_RINGBUF_MEM_OR_NULL,
	/* memory inside the dynptr argument, or NULL (dynptr_data): as many
	 * bytes as the constant size argument says */
	BPFRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL,
	/* a socket or NULL: a struct bpf_sock (full socket), the struct
	 * bpf_sock fields every socket has (sock_common), a struct
	 * bpf_tcp_sock. A lookup's (no socket argument) holds a reference
	 * the program must release; a cast of a socket argument shares that
	 * argument's reference */
	BPFRT_RET_PTR_TO_SOCKET_OR_NULL,
	BPFRT_RET_PTR_TO_SOCK_COMMON_OR_NULL,
	BPFRT_RET_PTR_TO_TCP_SOCK_OR_NULL,
	/* the value of the CONST_MAP_PTR argument's map, never NULL
	 * (get_local_storage) */
	BPFRT_RET_PTR_TO_MAP_VALUE,
};

struct bpfrt_helper {
	const char *name;
	bpfrt_helper_fn fn;
	enum bpfrt_ret_type ret;
	enum bpfrt_arg_type args[5];
};

/* Registers (or replaces) helper `id` for the loads that follow. */
BPFRT_API int bpfrt_helper_register(uint32_t id, const struct bpfrt_helper *helper);
BPFRT_API int bpfrt_helper_unregister(uint32_t id);

/* A registered helper as bpfrt_helper_info reports it: the fields of
 * struct bpfrt_helper. An output struct of the options convention
 * (bpfrt/opts.h): the caller sets sz (BPFRT_OPTS, or
 * `= { .sz = sizeof(x) }`); bpfrt writes only the fields wholly within sz
 * and zeroes a newer caller's bytes past the fields it knows. */
struct bpfrt_helper_info {
	size_t sz;                  /* set by the caller: sizeof(struct bpfrt_helper_info) */
	const char *name;           /* the registrant's string (see Ownership) */
	bpfrt_helper_fn fn;
	enum bpfrt_ret_type ret;
	enum bpfrt_arg_type args[5];
};
#define bpfrt_helper_info__first_field name
#define bpfrt_helper_info__last_field args
/* Copies helper id of the default environment into *info. Returns 0,
 * -ENOENT (id not registered) or -EINVAL (NULL info, an sz that does not
 * reach name, or above BPFRT_OPTS_SZ_MAX), with bpfrt_last_error()
 * naming the id or the struct. */
BPFRT_API int bpfrt_helper_info(uint32_t id, struct bpfrt_helper_info *info);
/* Deprecated: bpfrt_helper_info copies the entry out. The registry's live
 * entry, or NULL if id is not registered. */
BPFRT_API const struct bpfrt_helper *bpfrt_helper_get(uint32_t id);

/* Host kfuncs: named C functions that BPF code declares as
 * `extern ... __ksym` and calls; the loader resolves them by name. Returns
 * the id (>= BPFRT_KFUNC_ID_BASE) the calls are bound to, or -errno. */
BPFRT_API int bpfrt_kfunc_register(const char *name, const struct bpfrt_helper *proto);
/* Id of the kfunc registered under name, or -ENOENT. */
BPFRT_API int bpfrt_kfunc_id(const char *name);

/* Linux's helpers (map_lookup_elem ... loop, under their Linux ids) are
 * registered in the default environment on its first program load (a new
 * environment has them from its creation), each only where its id is still
 * free: an embedder's own helper under a Linux id wins, and registering
 * one later replaces the default. Idempotent; call it to make the defaults
 * visible to bpfrt_helper_info() before any load. */
BPFRT_API void bpfrt_helpers_init(void);

/* bpf_get_current_pid_tgid, _uid_gid, _comm and _cgroup_id answer from a
 * per-thread cache, re-read after fork (tracked) and after this call,
 * which the embedder makes after what bpfrt cannot see: a setuid/setgid
 * family call, prctl(PR_SET_NAME) or pthread_setname_np (any thread), a
 * write to /proc/self/task/TID/comm, a move to another cgroup. Every
 * thread re-reads at its next call. Async-signal-safe. */
BPFRT_API void bpfrt_identity_changed(void);

#ifdef __cplusplus
}
#endif
#endif
