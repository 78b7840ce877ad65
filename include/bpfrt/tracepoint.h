/* Tracepoints in host code: static events that bpfrt programs attach to
 * (tp/NAME and raw_tp/NAME sections, see attach.h).
 *
 * Ownership: a struct bpfrt_tracepoint is the host module's (static
 * storage made by BPFRT_DEFINE_TRACEPOINT); bpfrt keeps it registered
 * until the module's destructors unregister it, and owns only the
 * program array it publishes in it. Thread safety: sites fire on any
 * thread while programs are attached and detached on others; the
 * registry and the patching are serialised inside bpfrt.
 *
 *   // in a header (or the .c file):
 *   BPFRT_DECLARE_TRACEPOINT(request_done, int status, const char *path);
 *   // in exactly one .c file of the program or library, after it:
 *   BPFRT_DEFINE_TRACEPOINT(request_done);
 *   // anywhere after the declaration:
 *   BPFRT_TRACEPOINT(request_done, st, req->path);
 *
 * The prototype is a C parameter list (names optional, at most 12
 * parameters, integers and pointers; use a typedef for a function-pointer
 * type); the call is type-checked against it. Arguments are evaluated only
 * when a program is attached.
 *
 * Disabled cost (x86-64): one 5-byte nop at the site. Each expansion of
 * BPFRT_TRACEPOINT records the nop's address, the address of its
 * out-of-line firing code and its tracepoint in the ELF section
 * __bpfrt_tracepoints; attaching the first program rewrites the nop into a
 * jmp to the firing code (breakpoint-first cross-modification through
 * /proc/self/mem, host text is never made writable), detaching the last one
 * restores the nop. Elsewhere the site tests a flag.
 *
 * Every translation unit that includes this header registers its module's
 * site table (a constructor; modules loaded with dlopen() are patched when
 * their constructors run), and each BPFRT_DEFINE_TRACEPOINT registers the
 * tracepoint under its name. Attach targets: "NAME" or "CATEGORY/NAME"
 * (any category, so tp/myapp/request_done finds request_done).
 *
 * Program context, argument i as u64 (integers cast, signed ones
 * sign-extended):
 *   raw_tp: u64 args[nargs]                    args[i]    at ctx + 8*i
 *   tp:     struct bpfrt_tp_entry, then args   args[i]    at ctx + 8 + 8*i */
#ifndef BPFRT_PUBLIC_TRACEPOINT_H
#define BPFRT_PUBLIC_TRACEPOINT_H

#include "bpfrt/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPFRT_TP_MAX_ARGS 12

/* The 8-byte header of a tp/ program's context (Linux's trace_entry has
 * type, flags, preempt_count, pid in the same 8 bytes). */
struct bpfrt_tp_entry {
	uint16_t id;            /* tracepoint id (bpfrt_tracepoint_id) */
	uint8_t nargs;
	uint8_t flags;          /* 0 */
	int32_t tid;            /* thread that fired it */
};

struct bpfrt_tracepoint {
	const char *name;
	const char *proto;      /* the parameter list as written */
	uint32_t nargs;
	/* Set at registration and attach; do not touch. */
	uint32_t id;
	uint32_t prog_cnt;
	bool registered;
	bool enabled;           /* sites jump to the firing code */
#ifdef __cplusplus
	void *progs;            /* same layout; C++ code never touches it */
#else
	void *_Atomic progs;    /* RCU-published program array */
#endif
	struct bpfrt_tracepoint *next;
};

/* One site: a static-branch nop and where it jumps when enabled. */
struct bpfrt_tp_site {
	uintptr_t addr;
	uintptr_t target;
	struct bpfrt_tracepoint *tp;
};

/* Registers tp (by name) and the site table [start, stop) of the calling
 * module; either may be NULL. Idempotent. Sites of enabled tracepoints in a
 * newly registered table are patched at once. */
BPFRT_API void bpfrt_tracepoint_register(struct bpfrt_tracepoint *tp,
					 const struct bpfrt_tp_site *start,
					 const struct bpfrt_tp_site *stop);

/* Undoes bpfrt_tracepoint_register for a module going away (dlclose; the
 * headers' destructors call it). Detach the programs of a module's
 * tracepoints before unloading it. */
BPFRT_API void bpfrt_tracepoint_unregister(struct bpfrt_tracepoint *tp,
					   const struct bpfrt_tp_site *start);

/* Runs the programs attached to tp; ctx[0] is filled with the header,
 * ctx[1..nargs] hold the arguments. Called by the sites' firing code. */
BPFRT_API void bpfrt_tracepoint_fire(struct bpfrt_tracepoint *tp, uint64_t *ctx);

/* The sites' out-of-line calls: arguments in registers, the context
 * built in the callee's frame, so the host function keeps no buffer for a
 * disabled tracepoint. N = number of arguments. */
#define __BPFRT_TP_FIRE_DECL(n, ...) \
	BPFRT_API void bpfrt_tracepoint_fire##n(struct bpfrt_tracepoint *tp, ##__VA_ARGS__) \
		__attribute__((cold, noinline));
typedef uint64_t __bpfrt_u64;
__BPFRT_TP_FIRE_DECL(0)
__BPFRT_TP_FIRE_DECL(1, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(2, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(3, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(4, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(5, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(6, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(7, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(8, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(9, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(10, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(11, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64)
__BPFRT_TP_FIRE_DECL(12, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64, __bpfrt_u64,
		     __bpfrt_u64, __bpfrt_u64)

/* Registered tracepoint named name ("NAME" or "CATEGORY/NAME"), or NULL. */
BPFRT_API struct bpfrt_tracepoint *bpfrt_tracepoint_find(const char *name);
/* Whether tp's sites currently jump to the firing code. */
BPFRT_API bool bpfrt_tracepoint_enabled(const struct bpfrt_tracepoint *tp);
/* Copies up to max of tp's sites (nop address, jump target); returns the
 * total number. */
BPFRT_API size_t bpfrt_tracepoint_sites(const struct bpfrt_tracepoint *tp,
					struct bpfrt_tp_site *sites, size_t max);
/* One line per registered tracepoint: name, nargs, proto, sites, programs. */
BPFRT_API int bpfrt_tracepoint_list(FILE *out);

/* ---- macros ---------------------------------------------------------- */

#define __BPFRT_TP_SYM(name) __bpfrt_tp_##name
/* C++ has its own static_assert, and -Wextra there wants every member
 * of a designated initializer named. */
#ifdef __cplusplus
#define __BPFRT_TP_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define __BPFRT_TP_INIT_REST .id = 0, .prog_cnt = 0, .registered = false, \
	.enabled = false, .progs = 0, .next = 0,
#else
#define __BPFRT_TP_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define __BPFRT_TP_INIT_REST
#endif

#define __BPFRT_NARGS_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n
#define BPFRT_NARGS(...) \
	__BPFRT_NARGS_(0, ##__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)

#define __BPFRT_TP_U64(x) , (uint64_t)(uintptr_t)(x)
#define __BPFRT_TP_MAP0()
#define __BPFRT_TP_MAP1(a) __BPFRT_TP_U64(a)
#define __BPFRT_TP_MAP2(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP1(__VA_ARGS__)
#define __BPFRT_TP_MAP3(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP2(__VA_ARGS__)
#define __BPFRT_TP_MAP4(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP3(__VA_ARGS__)
#define __BPFRT_TP_MAP5(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP4(__VA_ARGS__)
#define __BPFRT_TP_MAP6(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP5(__VA_ARGS__)
#define __BPFRT_TP_MAP7(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP6(__VA_ARGS__)
#define __BPFRT_TP_MAP8(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP7(__VA_ARGS__)
#define __BPFRT_TP_MAP9(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP8(__VA_ARGS__)
#define __BPFRT_TP_MAP10(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP9(__VA_ARGS__)
#define __BPFRT_TP_MAP11(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP10(__VA_ARGS__)
#define __BPFRT_TP_MAP12(a, ...) __BPFRT_TP_U64(a) __BPFRT_TP_MAP11(__VA_ARGS__)
#define __BPFRT_TP_CAT_(a, b) a##b
#define __BPFRT_TP_CAT(a, b) __BPFRT_TP_CAT_(a, b)
/* ", (u64)a, (u64)b ..." for every argument. */
#define __BPFRT_TP_CASTS(...) \
	__BPFRT_TP_CAT(__BPFRT_TP_MAP, BPFRT_NARGS(__VA_ARGS__))(__VA_ARGS__)

/* Each module's own table (hidden: a library's references do not bind to
 * the executable's); weak: a module without sites has none. */
extern const struct bpfrt_tp_site __start___bpfrt_tracepoints[]
	__attribute__((weak, visibility("hidden")));
extern const struct bpfrt_tp_site __stop___bpfrt_tracepoints[]
	__attribute__((weak, visibility("hidden")));

static void __attribute__((constructor, unused)) __bpfrt_tp_register_module(void)
{
	bpfrt_tracepoint_register(NULL, __start___bpfrt_tracepoints,
				  __stop___bpfrt_tracepoints);
}

static void __attribute__((destructor, unused)) __bpfrt_tp_unregister_module(void)
{
	bpfrt_tracepoint_unregister(NULL, __start___bpfrt_tracepoints);
}

#if defined(__x86_64__) && !defined(BPFRT_TP_NO_STATIC_BRANCH)
/* The static branch: a 5-byte nop (0f 1f 44 00 00) whose site entry names
 * the nop, the label of the firing code and the tracepoint (by its symbol,
 * so -fPIC code needs no "i" operand). */
#define __BPFRT_TP_BRANCH_FN(name)						\
static inline __attribute__((always_inline, unused)) bool			\
__bpfrt_tp_branch_##name(void)							\
{										\
	__asm__ goto("1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"		\
		     ".pushsection __bpfrt_tracepoints, \"aw\"\n\t"		\
		     ".balign 8\n\t"						\
		     ".quad 1b, %l[l_yes], __bpfrt_tp_" #name "\n\t"		\
		     ".popsection"						\
		     : : : : l_yes);						\
	return false;								\
l_yes:										\
	return true;								\
}
#else
#define __BPFRT_TP_BRANCH_FN(name)						\
static inline __attribute__((always_inline, unused)) bool			\
__bpfrt_tp_branch_##name(void)							\
{										\
	return __atomic_load_n(&__BPFRT_TP_SYM(name).enabled, __ATOMIC_RELAXED);\
}
#endif

/* The prototype function only type-checks calls (its parameters are
 * never used: hosts built with -Wextra -Werror must not see a warning). */
#define BPFRT_DECLARE_TRACEPOINT(name, ...)					\
	extern struct bpfrt_tracepoint __BPFRT_TP_SYM(name);			\
	_Pragma("GCC diagnostic push")						\
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")		\
	static inline __attribute__((unused)) void				\
	__bpfrt_tp_proto_##name(__VA_ARGS__) {}					\
	_Pragma("GCC diagnostic pop")						\
	static const char __bpfrt_tp_protostr_##name[]				\
		__attribute__((unused)) = #__VA_ARGS__;				\
	enum { __bpfrt_tp_nargs_##name = BPFRT_NARGS(__VA_ARGS__) };		\
	__BPFRT_TP_BRANCH_FN(name)						\
	__BPFRT_TP_STATIC_ASSERT(BPFRT_NARGS(__VA_ARGS__) <= BPFRT_TP_MAX_ARGS,	\
				 "tracepoint " #name ": more than 12 arguments")

/* The tracepoint object itself, in one .c file where the declaration is
 * visible. */
#define BPFRT_DEFINE_TRACEPOINT(tpname)						\
	struct bpfrt_tracepoint __BPFRT_TP_SYM(tpname) = {			\
		.name = #tpname,							\
		.proto = __bpfrt_tp_protostr_##tpname,				\
		.nargs = __bpfrt_tp_nargs_##tpname,				\
		__BPFRT_TP_INIT_REST						\
	};									\
	static void __attribute__((constructor))				\
	__bpfrt_tp_register_##tpname(void)					\
	{									\
		bpfrt_tracepoint_register(&__BPFRT_TP_SYM(tpname),		\
					  __start___bpfrt_tracepoints,		\
					  __stop___bpfrt_tracepoints);		\
	}									\
	static void __attribute__((destructor))					\
	__bpfrt_tp_unregister_##tpname(void)					\
	{									\
		bpfrt_tracepoint_unregister(&__BPFRT_TP_SYM(tpname), NULL);	\
	}									\
	__BPFRT_TP_STATIC_ASSERT(1, "")

/* Fires tracepoint name with the arguments if a program is attached. */
#define BPFRT_TRACEPOINT(name, ...)						\
	do {									\
		if (0)								\
			__bpfrt_tp_proto_##name(__VA_ARGS__);			\
		if (__builtin_expect(__bpfrt_tp_branch_##name(), 0))		\
			__BPFRT_TP_CAT(bpfrt_tracepoint_fire,			\
				       BPFRT_NARGS(__VA_ARGS__))(		\
				&__BPFRT_TP_SYM(name) __BPFRT_TP_CASTS(__VA_ARGS__)); \
	} while (0)

/* Whether a program is attached (for code that prepares arguments). */
#define BPFRT_TRACEPOINT_ENABLED(name) __builtin_expect(__bpfrt_tp_branch_##name(), 0)

#ifdef __cplusplus
}
#endif
#endif
