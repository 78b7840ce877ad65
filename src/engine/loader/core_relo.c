/* CO-RE: the .BTF.ext core_relo records clang writes for
 * __builtin_preserve_access_index and the bpf_core_* builtins, resolved
 * against a target BTF with libbpf's rules (own code):
 *  - the local access string "0:1:2" is an array index on the root type,
 *    then member (struct/union) or element (array) indices;
 *  - target candidates are the types of the same kind whose name equals
 *    the local one's essential name (the part before "___", so flavors
 *    such as task_struct___v2 match task_struct);
 *  - named members are matched by name (through anonymous members),
 *    array elements by index; the field types must be compatible (ints
 *    and enums of any size, pointers, composites of the same kind, arrays
 *    of compatible elements);
 *  - every candidate that matches must give the same value, else the
 *    relocation is ambiguous (-EINVAL);
 *  - nothing matches: the *_EXISTS kinds give 0, every other kind poisons
 *    the instruction (`call 0xbad2310`, both halves of a lddw), which the
 *    verifier refuses if a path reaches it, naming the relocation.
 * Target BTF: the open's btf_custom_path (a raw BTF file or an ELF file
 * with a .BTF section, such as `pahole -J` makes from a host's DWARF),
 * then the kernel-layout types bpfrt provides (struct pt_regs, struct
 * bpfrt_tp_entry), then, for the program contexts of linux/bpf.h (struct
 * __sk_buff, xdp_md, ...), the object's own definition: those are UAPI,
 * laid out alike in every kernel and in bpfrt's contexts, so a vmlinux.h
 * program's context relocations resolve to what clang compiled (the
 * verifier checks every context access against the kind's rules anyway). */
#include "loader/object.h"
#include "core/error.h"
#include "isa/isa.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACCESS_MAX 64       /* libbpf's BPF_CORE_SPEC_MAX_LEN */
#define CHAIN_MAX 32

/* .BTF.ext header (libbpf's struct btf_ext_header) */
struct btf_ext_hdr {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len, line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len;
};

struct access {
	uint32_t type_id;         /* the type accessed into (struct/union/array) */
	uint32_t idx;             /* member or element index */
	const char *name;         /* member name; NULL for an array element */
};

struct spec {
	const struct btf *btf;
	uint32_t root_id;
	struct access acc[ACCESS_MAX];
	int len;
	int raw[ACCESS_MAX];
	int raw_len;
	uint64_t bit_off;
	uint32_t field_type;      /* the type of the field reached */
	uint32_t bitfield_sz;     /* bits, 0 if not a bitfield */
	bool bitfield;
};

/* Does the target name the relocation's root struct at all? (One it
 * names with other fields keeps libbpf's poison.) */
static bool target_names_root(const struct btf *tb, const struct spec *ls)
{
	const struct btf_type *t = btf__type_by_id(ls->btf, ls->root_id);
	const char *name = t ? btf__name_by_offset(ls->btf, t->name_off) : NULL;

	if (!name || !*name)
		return true; /* anonymous: nothing to go by */
	return tb && (btf__find_by_name_kind(tb, name, BTF_KIND_STRUCT) > 0 ||
		      btf__find_by_name_kind(tb, name, BTF_KIND_UNION) > 0);
}

static const struct btf_type *skip(const struct btf *btf, uint32_t id, uint32_t *res)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	for (int d = 0; t && (btf_is_mod(t) || btf_is_typedef(t)); d++) {
		if (d == CHAIN_MAX)
			return NULL;
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (res)
		*res = id;
	return t;
}

static size_t essential_len(const char *name)
{
	const char *f = strstr(name, "___");

	return f ? (size_t)(f - name) : strlen(name);
}

static bool names_match(const char *a, const char *b)
{
	size_t la = essential_len(a), lb = essential_len(b);

	return la == lb && !strncmp(a, b, la);
}

static const char *relo_kind_str(uint32_t kind)
{
	static const char *const s[] = {
		"byte_off", "byte_sz", "field_exists", "signed", "lshift_u64", "rshift_u64",
		"local_type_id", "target_type_id", "type_exists", "type_size", "enumval_exists",
		"enumval_value", "type_matches",
	};

	return kind < sizeof(s) / sizeof(s[0]) ? s[kind] : "unknown";
}

static bool is_field_kind(uint32_t k)
{
	return k <= BPF_CORE_FIELD_RSHIFT_U64;
}

static bool is_type_kind(uint32_t k)
{
	return k >= BPF_CORE_TYPE_ID_LOCAL && k <= BPF_CORE_TYPE_SIZE;
}

static bool is_enumval_kind(uint32_t k)
{
	return k == BPF_CORE_ENUMVAL_EXISTS || k == BPF_CORE_ENUMVAL_VALUE;
}

/* ---- the local access, from the access string ---- */

static int parse_spec(const struct btf *btf, uint32_t root, const char *str, uint32_t kind,
		      struct spec *s)
{
	const struct btf_type *t;
	uint32_t id;

	memset(s, 0, sizeof(*s));
	s->btf = btf;
	s->root_id = root;
	for (const char *p = str; *p;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || s->raw_len == ACCESS_MAX || (*end && *end != ':'))
			return -EINVAL;
		s->raw[s->raw_len++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (!s->raw_len)
		return -EINVAL;
	t = skip(btf, root, &id);
	if (!t)
		return -EINVAL;
	if (is_type_kind(kind) || kind == BPF_CORE_TYPE_MATCHES)
		return s->raw_len == 1 && s->raw[0] == 0 ? 0 : -EINVAL;
	if (is_enumval_kind(kind)) {
		if (!(btf_is_enum(t) || btf_is_enum64(t)) || s->raw_len != 1 ||
		    s->raw[0] >= btf_vlen(t))
			return -EINVAL;
		s->acc[0] = (struct access){ id, (uint32_t)s->raw[0],
					     btf__name_by_offset(btf, btf_is_enum(t) ?
						btf_enum(t)[s->raw[0]].name_off :
						btf_enum64(t)[s->raw[0]].name_off) };
		s->len = 1;
		return 0;
	}
	/* a field: raw[0] indexes an array of the root type */
	{
		int64_t sz = btf__resolve_size(btf, id);

		if (sz < 0)
			return -EINVAL;
		s->bit_off = (uint64_t)s->raw[0] * (uint64_t)sz * 8;
		s->acc[s->len++] = (struct access){ id, (uint32_t)s->raw[0], NULL };
	}
	for (int i = 1; i < s->raw_len; i++) {
		t = skip(btf, id, &id);
		if (!t)
			return -EINVAL;
		if (btf_is_composite(t)) {
			const struct btf_member *m;
			const char *name;

			if (s->raw[i] >= btf_vlen(t))
				return -EINVAL;
			m = btf_members(t) + s->raw[i];
			s->bit_off += btf_member_bit_offset(t, (uint32_t)s->raw[i]);
			s->bitfield_sz = btf_member_bitfield_size(t, (uint32_t)s->raw[i]);
			name = btf__name_by_offset(btf, m->name_off);
			if (name && *name) {
				if (s->len == ACCESS_MAX)
					return -E2BIG;
				s->acc[s->len++] = (struct access){ id, (uint32_t)s->raw[i], name };
			}
			id = m->type;
		} else if (btf_is_array(t)) {
			const struct btf_array *a = btf_array(t);
			int64_t esz = btf__resolve_size(btf, a->type);

			if (esz < 0 || s->len == ACCESS_MAX)
				return -EINVAL;
			s->acc[s->len++] = (struct access){ id, (uint32_t)s->raw[i], NULL };
			s->bit_off += (uint64_t)s->raw[i] * (uint64_t)esz * 8;
			s->bitfield_sz = 0;
			id = a->type;
		} else {
			return -EINVAL;
		}
	}
	s->field_type = id;
	s->bitfield = s->bitfield_sz != 0;
	return 0;
}

/* "struct host_task.pid" for messages */
static void spec_str(const struct spec *s, char *buf, size_t size)
{
	const struct btf_type *t = btf__type_by_id(s->btf, s->root_id);
	const char *root = t ? btf__name_by_offset(s->btf, t->name_off) : "?";
	size_t n = (size_t)snprintf(buf, size, "%s %s",
				    t && btf_is_union(t) ? "union" : t && btf_is_enum(t) ? "enum" :
				    "struct", root && *root ? root : "(anon)");

	for (int i = 1; i < s->len && n < size; i++)
		n += (size_t)(s->acc[i].name ? snprintf(buf + n, size - n, ".%s", s->acc[i].name)
					     : snprintf(buf + n, size - n, "[%u]", s->acc[i].idx));
	if (s->len == 1 && s->acc[0].name && n < size)
		snprintf(buf + n, size - n, "::%s", s->acc[0].name);
}

/* ---- compatibility ---- */

static bool fields_compat(const struct btf *lb, uint32_t lid, const struct btf *tb, uint32_t tid,
			  int depth)
{
	const struct btf_type *l = skip(lb, lid, &lid), *t = skip(tb, tid, &tid);

	if (!l || !t || depth > CHAIN_MAX)
		return false;
	if (btf_is_composite(l) && btf_is_composite(t))
		return btf_kind(l) == btf_kind(t);
	if ((btf_is_int(l) || btf_is_any_enum(l)) && (btf_is_int(t) || btf_is_any_enum(t)))
		return true;
	if (btf_kind(l) != btf_kind(t))
		return btf_is_fwd(l) || btf_is_fwd(t);
	switch (btf_kind(l)) {
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
		return true;
	case BTF_KIND_FLOAT:
		return l->size == t->size;
	case BTF_KIND_ARRAY:
		return fields_compat(lb, btf_array(l)->type, tb, btf_array(t)->type, depth + 1);
	default:
		return false;
	}
}

/* Finds member name in composite type id of the target (descending
 * into anonymous members), adding its bit offset; *found_id: the member's
 * type, *bits: its bitfield size. */
static bool match_member(const struct btf *tb, uint32_t id, const char *name, uint64_t *bit_off,
			 uint32_t *found_id, uint32_t *bits, int depth)
{
	const struct btf_type *t = skip(tb, id, &id);

	if (!t || !btf_is_composite(t) || depth > CHAIN_MAX)
		return false;
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const struct btf_member *m = btf_members(t) + i;
		const char *mn = btf__name_by_offset(tb, m->name_off);
		uint64_t off = *bit_off + btf_member_bit_offset(t, i);

		if (mn && *mn) {
			if (!names_match(mn, name) || strlen(mn) != strlen(name))
				continue;
			*bit_off = off;
			*found_id = m->type;
			*bits = btf_member_bitfield_size(t, i);
			return true;
		}
		if (match_member(tb, m->type, name, &off, found_id, bits, depth + 1)) {
			*bit_off = off;
			return true;
		}
	}
	return false;
}

/* The target spec of local spec l in candidate cand; false: no match. */
static bool match_field(const struct spec *l, const struct btf *tb, uint32_t cand, struct spec *t)
{
	uint32_t id = cand;
	int64_t sz = btf__resolve_size(tb, cand);

	memset(t, 0, sizeof(*t));
	t->btf = tb;
	t->root_id = cand;
	if (sz < 0)
		return false;
	t->bit_off = (uint64_t)l->acc[0].idx * (uint64_t)sz * 8;
	t->acc[t->len++] = (struct access){ cand, l->acc[0].idx, NULL };
	for (int i = 1; i < l->len; i++) {
		const struct access *a = &l->acc[i];

		if (a->name) {
			uint32_t mid = 0, bits = 0;

			if (!match_member(tb, id, a->name, &t->bit_off, &mid, &bits, 0))
				return false;
			/* the local member's type against the target's */
			{
				const struct btf_type *lt = btf__type_by_id(l->btf, a->type_id);
				uint32_t ltype = btf_members(skip(l->btf, a->type_id, NULL))[a->idx].type;

				(void)lt;
				if (!fields_compat(l->btf, ltype, tb, mid, 0))
					return false;
			}
			t->acc[t->len++] = (struct access){ id, 0, a->name };
			t->bitfield_sz = bits;
			id = mid;
		} else {
			const struct btf_type *at = skip(tb, id, &id);
			int64_t esz;

			if (!at || !btf_is_array(at))
				return false;
			/* a flexible array (0 elements) takes any index */
			if (btf_array(at)->nelems && a->idx >= btf_array(at)->nelems)
				return false;
			esz = btf__resolve_size(tb, btf_array(at)->type);
			if (esz < 0)
				return false;
			t->bit_off += (uint64_t)a->idx * (uint64_t)esz * 8;
			t->acc[t->len++] = (struct access){ id, a->idx, NULL };
			t->bitfield_sz = 0;
			id = btf_array(at)->type;
		}
	}
	t->field_type = id;
	t->bitfield = t->bitfield_sz != 0;
	return true;
}

/* The value of a field relocation of spec s (local or target). */
static int field_value(const struct spec *s, uint32_t kind, uint64_t *val, uint32_t *byte_sz_out)
{
	const struct btf_type *ft = skip(s->btf, s->field_type, NULL);
	uint32_t byte_sz, byte_off, bit_sz;
	int64_t sz;

	if (!ft)
		return -EINVAL;
	if (kind == BPF_CORE_FIELD_EXISTS) {
		*val = 1;
		return 0;
	}
	if (s->bitfield) {
		bit_sz = s->bitfield_sz;
		byte_sz = ft->size;
		byte_off = (uint32_t)(s->bit_off / 8 / byte_sz * byte_sz);
		while (s->bit_off + bit_sz - (uint64_t)byte_off * 8 > (uint64_t)byte_sz * 8) {
			if (byte_sz >= 8)
				return -E2BIG;
			byte_sz *= 2;
			byte_off = (uint32_t)(s->bit_off / 8 / byte_sz * byte_sz);
		}
	} else {
		sz = btf__resolve_size(s->btf, s->field_type);
		if (sz < 0 || sz > UINT32_MAX || s->bit_off % 8)
			return -EINVAL;
		byte_sz = (uint32_t)sz;
		byte_off = (uint32_t)(s->bit_off / 8);
		bit_sz = byte_sz * 8;
	}
	if (byte_sz_out)
		*byte_sz_out = byte_sz;
	switch (kind) {
	case BPF_CORE_FIELD_BYTE_OFFSET:
		*val = byte_off;
		return 0;
	case BPF_CORE_FIELD_BYTE_SIZE:
		*val = byte_sz;
		return 0;
	case BPF_CORE_FIELD_SIGNED:
		*val = btf_is_any_enum(ft) ? !!btf_kflag(ft) :
		       btf_is_int(ft) ? !!(btf_int_encoding(ft) & BTF_INT_SIGNED) : 0;
		return 0;
	case BPF_CORE_FIELD_LSHIFT_U64: /* little-endian */
		*val = 64 - (s->bit_off + bit_sz - (uint64_t)byte_off * 8);
		return 0;
	case BPF_CORE_FIELD_RSHIFT_U64:
		*val = 64 - bit_sz;
		return 0;
	}
	return -EINVAL;
}

static bool types_compat(const struct btf *lb, uint32_t lid, const struct btf *tb, uint32_t tid)
{
	const struct btf_type *l = skip(lb, lid, NULL), *t = skip(tb, tid, NULL);

	if (!l || !t)
		return false;
	if ((btf_is_int(l) || btf_is_any_enum(l)) && (btf_is_int(t) || btf_is_any_enum(t)))
		return btf_kind(l) == btf_kind(t) || !btf_is_int(l);
	return btf_kind(l) == btf_kind(t);
}

static bool enumval(const struct btf *b, uint32_t id, const char *name, int64_t *v)
{
	const struct btf_type *t = skip(b, id, NULL);

	for (uint32_t i = 0; t && btf_is_enum(t) && i < btf_vlen(t); i++)
		if (names_match(btf__name_by_offset(b, btf_enum(t)[i].name_off), name)) {
			*v = btf_kflag(t) ? (int64_t)btf_enum(t)[i].val
					  : (int64_t)(uint32_t)btf_enum(t)[i].val;
			return true;
		}
	for (uint32_t i = 0; t && btf_is_enum64(t) && i < btf_vlen(t); i++)
		if (names_match(btf__name_by_offset(b, btf_enum64(t)[i].name_off), name)) {
			*v = (int64_t)btf_enum64_value(btf_enum64(t) + i);
			return true;
		}
	return false;
}

/* ---- one relocation ---- */

struct relo_res {
	uint64_t val;
	bool poison;
	uint32_t new_sz, orig_sz; /* field byte sizes, for a load's width */
};

/* The value in target BTF tb (NULL: none): *found false if no candidate
 * matched. */
static int relo_in(const struct spec *l, uint32_t kind, const struct btf *tb, bool *found,
		   struct relo_res *res)
{
	const struct btf_type *lt = btf__type_by_id(l->btf, l->root_id);
	const char *lname = lt ? btf__name_by_offset(l->btf, lt->name_off) : NULL;
	uint32_t n = tb ? btf__type_cnt(tb) : 0;
	bool have = false;

	*found = false;
	if (!lt || !lname || !*lname)
		return -EINVAL; /* anonymous root types have no candidates (libbpf too) */
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(tb, id);
		const char *tn = btf__name_by_offset(tb, t->name_off);
		struct relo_res r = { 0 };
		struct spec ts;

		if (!tn || !names_match(tn, lname) || btf_kind(t) != btf_kind(lt))
			continue;
		if (is_field_kind(kind)) {
			uint32_t sz = 0;
			int err;

			if (!match_field(l, tb, id, &ts))
				continue;
			err = field_value(&ts, kind, &r.val, &sz);
			if (err)
				return err;
			r.new_sz = sz;
		} else if (is_type_kind(kind) || kind == BPF_CORE_TYPE_MATCHES) {
			if (!types_compat(l->btf, l->root_id, tb, id))
				continue;
			r.val = kind == BPF_CORE_TYPE_SIZE ? (uint64_t)btf__resolve_size(tb, id) :
				kind == BPF_CORE_TYPE_ID_TARGET ? id : 1;
		} else {
			int64_t v;

			if (!enumval(tb, id, l->acc[0].name, &v))
				continue;
			r.val = kind == BPF_CORE_ENUMVAL_VALUE ? (uint64_t)v : 1;
		}
		if (have && r.val != res->val)
			return -ESRCH; /* ambiguous: candidates disagree */
		*res = r;
		have = true;
	}
	*found = have;
	return 0;
}

/* ---- patching ---- */

static void poison(struct bpf_insn *insn)
{
	*insn = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = BPFRT_CORE_POISON };
}

static int bytes_to_size(uint32_t n)
{
	return n == 1 ? BPF_B : n == 2 ? BPF_H : n == 4 ? BPF_W : n == 8 ? BPF_DW : -1;
}

static int patch(struct bpf_insn *insn, size_t room, const struct relo_res *r, uint32_t kind,
		 char *why, size_t why_size)
{
	uint8_t cls = insn_class(insn);

	if (insn_is_lddw(insn)) {
		if (room < 2)
			return snprintf(why, why_size, "lddw without its second half"), -EINVAL;
		insn[0].imm = (int32_t)(uint32_t)r->val;
		insn[1].imm = (int32_t)(uint32_t)(r->val >> 32);
		return 0;
	}
	if ((cls == BPF_ALU || cls == BPF_ALU64) && BPF_SRC(insn->code) == BPF_K) {
		if (r->val > INT32_MAX && cls == BPF_ALU64)
			return snprintf(why, why_size, "value %llu does not fit an imm",
					(unsigned long long)r->val), -ERANGE;
		insn->imm = (int32_t)(uint32_t)r->val;
		return 0;
	}
	if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
		if (kind != BPF_CORE_FIELD_BYTE_OFFSET || r->val > INT16_MAX)
			return snprintf(why, why_size, "value %llu is no offset for a memory access",
					(unsigned long long)r->val), -ERANGE;
		insn->off = (int16_t)r->val;
		/* the field changed size: the access follows it (libbpf) */
		if (r->new_sz && r->new_sz != r->orig_sz) {
			int sz = bytes_to_size(r->new_sz);

			if (bpf_size_bytes(insn_size(insn)) != r->orig_sz || sz < 0 ||
			    insn_mode(insn) != BPF_MEM)
				return snprintf(why, why_size, "the field is %u bytes in the target, "
						"%u here, and the access cannot follow", r->new_sz,
						r->orig_sz), -EINVAL;
			insn->code = (uint8_t)(BPF_MODE(insn->code) | (uint8_t)sz | cls);
		}
		return 0;
	}
	return snprintf(why, why_size, "instruction 0x%02x cannot be relocated", insn->code),
	       -EINVAL;
}

/* ---- the object's records and target BTFs ---- */

/* The context structs of linux/bpf.h (stable UAPI layouts). */
static bool is_uapi_ctx(const struct spec *l)
{
	static const char *const names[] = {
		"__sk_buff", "xdp_md", "bpf_sock", "bpf_sock_addr", "bpf_sock_ops",
		"sk_msg_md", "sk_reuseport_md", "bpf_sk_lookup", "bpf_sysctl", "bpf_sockopt",
		"bpf_cgroup_dev_ctx", "bpf_perf_event_data", "bpf_raw_tracepoint_args",
		"bpf_flow_keys", "bpf_nf_ctx",
	};
	const struct btf_type *t = btf__type_by_id(l->btf, l->root_id);
	const char *name = t ? btf__name_by_offset(l->btf, t->name_off) : NULL;

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* The kernel-layout types bpfrt itself gives programs. */
static struct btf *builtin_btf(void)
{
	static const char *const regs[] = {
		"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx",
		"dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
	};
	struct btf *b = btf__new_empty();
	int ul, u16, s32, pt, tp;

	if (!b)
		return NULL;
	ul = btf__add_int(b, "long unsigned int", 8, 0);
	u16 = btf__add_int(b, "short unsigned int", 2, 0);
	s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	/* x86-64's struct pt_regs, as vmlinux.h names its fields */
	pt = btf__add_struct(b, "pt_regs", 21 * 8);
	for (int i = 0; pt > 0 && i < 21; i++)
		btf__add_field(b, regs[i], ul, i * 64, 0);
	/* struct bpfrt_tp_entry (bpfrt/tracepoint.h): the tracepoint header */
	tp = btf__add_struct(b, "trace_entry", 8);
	if (tp > 0) {
		btf__add_field(b, "type", u16, 0, 0);
		btf__add_field(b, "flags", btf__add_int(b, "unsigned char", 1, 0), 16, 0);
		btf__add_field(b, "preempt_count", btf__add_int(b, "unsigned char", 1, 0), 24, 0);
		btf__add_field(b, "pid", s32, 32, 0);
	}
	if (ul < 0 || u16 < 0 || s32 < 0 || pt < 0 || tp < 0) {
		btf__free(b);
		return NULL;
	}
	return b;
}

int obj_core_open(struct bpfrt_object *obj, const char *btf_path)
{
	libbpf_print_fn_t prev;

	if (btf_path) {
		prev = libbpf_set_print(NULL);
		obj->core_btf = btf__parse(btf_path, NULL);
		libbpf_set_print(prev);
		if (!obj->core_btf)
			return bpfrt_err(errno ? -errno : -EINVAL, "%s: target BTF %s: %s "
					 "(a raw BTF file or an ELF file with .BTF, e.g. pahole -J)",
					 obj->name, btf_path, strerror(errno ? errno : EINVAL));
	}
	obj->core_builtin = builtin_btf();
	if (!obj->core_builtin)
		return bpfrt_err(-ENOMEM, "%s: out of memory", obj->name);
	return 0;
}

void obj_core_close(struct bpfrt_object *obj)
{
	btf__free(obj->core_btf);
	btf__free(obj->core_builtin);
	obj->core_btf = obj->core_builtin = NULL;
}

/* The core_relo section of .BTF.ext: [start, end) of the first record
 * block, and the record size; 0 if there is none. */
static int core_records(const struct bpfrt_object *obj, const uint8_t **start, const uint8_t **end)
{
	struct btf_ext_hdr hdr = { 0 }, *h = &hdr;
	const uint8_t *base;
	size_t size;

	*start = *end = NULL;
	if (!obj->btf_ext_data || !obj->btf_ext_data->d_buf)
		return 0;
	base = obj->btf_ext_data->d_buf;
	size = obj->btf_ext_data->d_size;
	if (size < offsetof(struct btf_ext_hdr, core_relo_off))
		return bpfrt_err(-EINVAL, "%s: .BTF.ext: short header", obj->name);
	/* copied: a crafted file may leave the section misaligned */
	memcpy(&hdr, base, size < sizeof(hdr) ? size : sizeof(hdr));
	if (h->magic != 0xeB9F || h->hdr_len > size)
		return bpfrt_err(-EINVAL, "%s: .BTF.ext: bad header", obj->name);
	if (h->hdr_len < sizeof(*h) || !h->core_relo_len)
		return 0;
	if ((uint64_t)h->hdr_len + h->core_relo_off + h->core_relo_len > size ||
	    h->core_relo_len < 4)
		return bpfrt_err(-EINVAL, "%s: .BTF.ext: core_relo outside the section", obj->name);
	*start = base + h->hdr_len + h->core_relo_off;
	*end = *start + h->core_relo_len;
	return 0;
}

int obj_core_relocate(struct bpfrt_object *obj, size_t sec, size_t start, size_t len,
		      struct bpf_insn *out, size_t pos, size_t out_cnt, struct bpfrt_prog *prog)
{
	const uint8_t *p, *end;
	uint32_t rec_size;
	int idx = 0, err = core_records(obj, &p, &end);

	if (err || !p)
		return err;
	if (!obj->btf)
		return bpfrt_err(-EINVAL, "%s: CO-RE relocations without .BTF", obj->name);
	memcpy(&rec_size, p, 4);
	p += 4;
	if (rec_size < sizeof(struct bpf_core_relo))
		return bpfrt_err(-EINVAL, "%s: .BTF.ext: core_relo records of %u bytes", obj->name,
				 rec_size);
	while (p + 8 <= end) {
		uint32_t name_off, num;
		const char *secname;

		memcpy(&name_off, p, 4);
		memcpy(&num, p + 4, 4);
		p += 8;
		if ((uint64_t)num * rec_size > (uint64_t)(end - p))
			return bpfrt_err(-EINVAL, "%s: .BTF.ext: core_relo block past the end",
					 obj->name);
		secname = btf__name_by_offset(obj->btf, name_off);
		for (uint32_t i = 0; i < num; i++, p += rec_size, idx++) {
			struct bpf_core_relo r;
			struct relo_res res = { 0 };
			struct spec ls;
			const char *acc;
			char field[256], why[160] = "";
			bool found = false, guarded = false;
			size_t at;

			memcpy(&r, p, sizeof(r));
			if (!secname || strcmp(secname, obj->secs[sec].name) || r.insn_off % 8 ||
			    r.insn_off / 8 < start || r.insn_off / 8 >= start + len)
				continue;
			at = pos + r.insn_off / 8 - start;
			if (at >= out_cnt)
				return bpfrt_err(-EINVAL, "%s: CO-RE relocation #%d: bad insn", obj->name,
						 idx);
			acc = btf__name_by_offset(obj->btf, r.access_str_off);
			if (!acc || parse_spec(obj->btf, r.type_id, acc, r.kind, &ls))
				return bpfrt_err(-EINVAL, "%s: section %s: CO-RE relocation #%d (%s): "
						 "bad access string '%s' for type %u", obj->name,
						 secname, idx, relo_kind_str(r.kind), acc ? acc : "?",
						 r.type_id);
			spec_str(&ls, field, sizeof(field));
			if (r.kind == BPF_CORE_TYPE_ID_LOCAL) {
				res.val = r.type_id;
				found = true;
			} else {
				err = relo_in(&ls, r.kind, obj->core_btf, &found, &res);
				if (!err && !found)
					err = relo_in(&ls, r.kind, obj->core_builtin, &found, &res);
				if (!err && !found && is_uapi_ctx(&ls))
					err = relo_in(&ls, r.kind, obj->btf, &found, &res);
				/* a kernel struct's field offset, no target naming it:
				 * the program's own layout, which is how the verifier
				 * types kernel structs (the object's BTF), guarded */
				if (!err && !found && !obj->core_btf &&
				    r.kind == BPF_CORE_FIELD_BYTE_OFFSET &&
				    !target_names_root(obj->core_builtin, &ls)) {
					err = relo_in(&ls, r.kind, obj->btf, &found, &res);
					guarded = found;
				}
				if (err)
					return bpfrt_err(err == -ESRCH ? -EINVAL : err,
							 "%s: section %s: CO-RE relocation #%d (%s) of "
							 "%s: %s", obj->name, secname, idx,
							 relo_kind_str(r.kind), field,
							 err == -ESRCH ? "candidates in the target BTF "
							 "disagree" : "cannot be computed");
			}
			if (!found && (r.kind == BPF_CORE_FIELD_EXISTS || r.kind == BPF_CORE_TYPE_EXISTS ||
				       r.kind == BPF_CORE_ENUMVAL_EXISTS ||
				       r.kind == BPF_CORE_TYPE_MATCHES)) {
				res.val = 0;
				found = true;
			}
			if (found && is_field_kind(r.kind)) {
				uint64_t lv;

				field_value(&ls, r.kind, &lv, &res.orig_sz);
			}
			if (!found) {
				char msg[600];

				bool wide = insn_is_lddw(&out[at]) && at + 1 < out_cnt;

				poison(&out[at]);
				if (wide)
					poison(&out[at + 1]); /* lddw's second half, as libbpf */
				snprintf(msg, sizeof(msg), "CO-RE relocation #%d (%s) of %s: not "
					 "found in the target BTF%s (the instruction is poisoned, "
					 "libbpf's call 0xbad2310, and a path reaches it)", idx,
					 relo_kind_str(r.kind), field,
					 obj->core_btf ? "" : " (no btf_custom_path given)");
				err = bpfrt_prog_add_core_poison(prog, (uint32_t)at, msg);
				if (err)
					return err;
				continue;
			}
			err = patch(&out[at], out_cnt - at, &res, r.kind, why, sizeof(why));
			if (err)
				return bpfrt_err(err, "%s: section %s: CO-RE relocation #%d (%s) of %s "
						 "at insn %zu: %s", obj->name, secname, idx,
						 relo_kind_str(r.kind), field, at, why);
			if (guarded) {
				char msg[600];

				snprintf(msg, sizeof(msg), "CO-RE relocation #%d (%s) of %s: not found "
					 "in the target BTF (no btf_custom_path given): resolved to the "
					 "program's own layout, which only a load or step through a "
					 "pointer typed from the program's BTF (a kernel struct) may use",
					 idx, relo_kind_str(r.kind), field);
				err = bpfrt_prog_add_core_guard(prog, (uint32_t)at, msg);
				if (err)
					return err;
			}
		}
	}
	return 0;
}
