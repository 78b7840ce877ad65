/* Socket pointers (Linux's PTR_TO_SOCKET, PTR_TO_SOCK_COMMON,
 * PTR_TO_TCP_SOCK) and the socket helpers' references.
 *
 *  - A lookup (sk_lookup_tcp, sk_lookup_udp, skc_lookup_tcp) returns a
 *    socket or NULL holding a new reference (ref_obj_id, also its id): the
 *    program must release it (sk_release) on every path that got one, and
 *    the NULL branch of its check drops it (alu.c, mark_null_outcome).
 *  - A cast of a socket argument (sk_fullsock, tcp_sock, skc_to_tcp_sock)
 *    returns another view of the same socket or NULL: a new id for its
 *    own NULL check, the argument's reference, so releasing either makes
 *    both unusable and a NULL cast releases nothing.
 *  - get_listener_sock's listener is not reference counted (RCU, as in
 *    Linux): no reference, and sk_release refuses it.
 *  - __sk_buff->sk (an 8-byte load) is a sock_common or NULL without a
 *    reference.
 *  - Their fields are read at the widths of Linux's bpf_sock_is_valid_access,
 *    bpf_sock_common_is_valid_access and bpf_tcp_sock_is_valid_access
 *    (restated, not copied); never written, never moved by arithmetic.
 *
 * At run time bpfrt has no sockets: the lookups and casts return NULL and
 * skb->sk loads are rewritten into r = 0 after verification
 * (vsock_rewrite_ctx_loads), so no socket field is ever read, whatever a
 * caller's context holds there. */
#include "verifier/vstate.h"

#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>

#define FSIZE(T, f) sizeof(((T *)0)->f)
#define OFFEND(T, f) (offsetof(T, f) + FSIZE(T, f))

bool vsock_is_sock_type(uint8_t type)
{
	return type == PTR_TO_SOCKET || type == PTR_TO_SOCK_COMMON || type == PTR_TO_TCP_SOCK;
}

static bool is_lookup(int32_t id)
{
	return id == BPF_FUNC_sk_lookup_tcp || id == BPF_FUNC_sk_lookup_udp ||
	       id == BPF_FUNC_skc_lookup_tcp;
}

int vsock_check_arg(struct venv *env, int regno, enum bpfrt_arg_type t, uint32_t *release_ref)
{
	const struct vreg *r = reg_at(env, regno);
	const char *want = t == BPFRT_ARG_PTR_TO_SOCK_RELEASE ? "sock" : "sock_common";

	if (!vsock_is_sock_type(r->type) || (r->flags & PTR_MAYBE_NULL))
		return verr(env, "R%d type=%s expected=%s", regno, vreg_type_str(r), want);
	if (r->off || !tnum_equals_const(r->var_off, 0))
		return verr(env, "R%d must have zero offset when passed to a socket helper", regno);
	if (t != BPFRT_ARG_PTR_TO_SOCK_RELEASE)
		return 0;
	if (!r->ref_obj_id)
		return verr(env, "R%d must be referenced when passed to release function", regno);
	*release_ref = r->ref_obj_id;
	return 0;
}

/* The socket argument of a cast, or NULL. */
static const struct vreg *sock_arg(struct venv *env, const struct bpfrt_helper *h)
{
	for (int a = 0; a < 5; a++)
		if (h->args[a] == BPFRT_ARG_PTR_TO_SOCK_COMMON)
			return reg_at(env, a + 1);
	return NULL;
}

int vsock_prepare_result(struct venv *env, int32_t id, const struct bpfrt_helper *h,
			 struct vreg *out)
{
	const struct vreg *arg = sock_arg(env, h);
	uint8_t type = h->ret == BPFRT_RET_PTR_TO_SOCKET_OR_NULL ? PTR_TO_SOCKET :
		       h->ret == BPFRT_RET_PTR_TO_SOCK_COMMON_OR_NULL ? PTR_TO_SOCK_COMMON :
		       PTR_TO_TCP_SOCK;
	uint32_t ref = 0;
	int err;

	if (is_lookup(id) && (err = vacquire_ref(env, &ref)))
		return err;
	mark_ptr(out, type);
	out->flags = PTR_MAYBE_NULL;
	if (ref) {
		out->id = ref;
		out->ref_obj_id = ref;
	} else {
		out->id = ++env->id_gen;
		if (arg && id != BPF_FUNC_get_listener_sock)
			out->ref_obj_id = arg->ref_obj_id;
	}
	return 0;
}

void vsock_mark_ctx_sk(struct venv *env, struct vreg *dst)
{
	mark_ptr(dst, PTR_TO_SOCK_COMMON);
	dst->flags = PTR_MAYBE_NULL;
	dst->id = ++env->id_gen;
	env->aux[env->insn].sk_null_load = true;
}

bool vsock_ctx_sk_field(const struct venv *env, int32_t off, uint32_t size)
{
	/* the __sk_buff kinds (ctx_rules.c allows only the whole 8-byte
	 * read; the flow dissector's rules refuse it) */
	return env->kind->ctx.sk_field && off == (int32_t)offsetof(struct __sk_buff, sk) &&
	       size == 8;
}

/* A power-of-two part of a field of dflt bytes (its first byte: the caller
 * checked the offset is a multiple of the size). */
static bool narrow_ok(uint32_t size, uint32_t dflt)
{
	return size <= dflt && !(size & (size - 1));
}

static bool bpf_sock_ok(uint32_t off, uint32_t size)
{
	typedef struct bpf_sock S;

	if (off >= sizeof(S) || off % size)
		return false;
	if (off == offsetof(S, state) || off == offsetof(S, family) || off == offsetof(S, type) ||
	    off == offsetof(S, protocol) || off == offsetof(S, src_port) ||
	    off == offsetof(S, rx_queue_mapping) ||
	    (off >= offsetof(S, src_ip4) && off < OFFEND(S, src_ip4)) ||
	    (off >= offsetof(S, src_ip6) && off < OFFEND(S, src_ip6)) ||
	    (off >= offsetof(S, dst_ip4) && off < OFFEND(S, dst_ip4)) ||
	    (off >= offsetof(S, dst_ip6) && off < OFFEND(S, dst_ip6)))
		return narrow_ok(size, 4);
	if (off >= offsetof(S, dst_port) && off < OFFEND(S, dst_port))
		/* a 4-byte load of the 2-byte port (older programs'), or
		 * parts of it */
		return size == 4 || narrow_ok(size, FSIZE(S, dst_port));
	if (off >= OFFEND(S, dst_port) && off < offsetof(S, dst_ip4))
		return false; /* the padding after the port */
	return size == 4;
}

static bool sock_common_ok(uint32_t off, uint32_t size)
{
	typedef struct bpf_sock S;

	/* type, protocol, mark, priority: a full socket's */
	if (off >= offsetof(S, type) && off < OFFEND(S, priority))
		return false;
	return bpf_sock_ok(off, size);
}

static bool tcp_sock_ok(uint32_t off, uint32_t size)
{
	typedef struct bpf_tcp_sock S;

	if (off >= OFFEND(S, icsk_retransmits) || off % size)
		return false;
	if (off == offsetof(S, bytes_received) || off == offsetof(S, bytes_acked))
		return size == 8;
	return size == 4;
}

int vsock_check_access(struct venv *env, int regno, const struct vreg *reg, int32_t off,
		       uint32_t size, bool write, struct vreg *dst)
{
	const char *name = vreg_type_str(reg);
	int64_t at = (int64_t)reg->off + off;
	bool ok;

	if (write)
		return verr(env, "R%d cannot write into %s", regno, name);
	if (!tnum_equals_const(reg->var_off, 0) || at < 0)
		return verr(env, "R%d invalid %s access off=%lld size=%u", regno, name,
			    (long long)at, size);
	ok = reg->type == PTR_TO_SOCKET ? bpf_sock_ok((uint32_t)at, size) :
	     reg->type == PTR_TO_SOCK_COMMON ? sock_common_ok((uint32_t)at, size) :
	     tcp_sock_ok((uint32_t)at, size);
	if (!ok)
		return verr(env, "R%d invalid %s access off=%lld size=%u", regno, name,
			    (long long)at, size);
	if (dst) {
		memset(dst, 0, sizeof(*dst));
		dst->type = SCALAR;
		vreg_mark_load(dst, size, false);
	}
	return 0;
}

void vsock_rewrite_ctx_loads(struct venv *env)
{
	for (uint32_t pc = 0; pc < env->n; pc++) {
		struct bpf_insn *insn = &env->prog->insns[pc];

		if (!env->aux[pc].sk_null_load || insn_class(insn) != BPF_LDX)
			continue;
		*insn = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
					   .dst_reg = insn->dst_reg };
	}
}
