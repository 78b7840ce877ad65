/* x86-64 decoding and relocation of displaced instructions (insn_x86.h).
 *
 * Zydis decodes; it is loaded with dlopen on the first decode, so
 * libbpfrt needs it only where a kprobe is attached. The relocated code is
 * written with the JIT's encoder (jit/x86_64/emit.h). */
#include "attach/insn_x86.h"
#include "core/error.h"

#include <errno.h>
#include <string.h>

#if defined(__x86_64__)
#include "jit/x86_64/emit.h"

#include <Zydis/Zydis.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The Zydis functions used, from the library the headers describe. */
static struct {
	ZyanStatus (*decoder_init)(ZydisDecoder *, ZydisMachineMode, ZydisStackWidth);
	ZyanStatus (*decode_full)(const ZydisDecoder *, const void *, ZyanUSize,
				  ZydisDecodedInstruction *, ZydisDecodedOperand *);
	ZyanStatus (*calc_absolute)(const ZydisDecodedInstruction *, const ZydisDecodedOperand *,
				    ZyanU64, ZyanU64 *);
	ZydisDecoder dec;
	char lib[48];
	char why[160];          /* empty once loaded */
} zydis = { .why = "not loaded" };

static void zydis_load(void)
{
	void *h;

	/* Debian's soname is major.minor; others use the major alone */
	snprintf(zydis.lib, sizeof(zydis.lib), "libZydis.so.%u",
		 (unsigned)ZYDIS_VERSION_MAJOR(ZYDIS_VERSION));
	h = dlopen(zydis.lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		char exact[sizeof(zydis.lib) + 16];

		snprintf(exact, sizeof(exact), "%s.%u", zydis.lib,
			 (unsigned)ZYDIS_VERSION_MINOR(ZYDIS_VERSION));
		h = dlopen(exact, RTLD_NOW | RTLD_LOCAL);
		if (h)
			snprintf(zydis.lib, sizeof(zydis.lib), "%.40s", exact);
	}
	if (!h) {
		snprintf(zydis.why, sizeof(zydis.why), "%s", dlerror());
		return;
	}
	*(void **)&zydis.decoder_init = dlsym(h, "ZydisDecoderInit");
	*(void **)&zydis.decode_full = dlsym(h, "ZydisDecoderDecodeFull");
	*(void **)&zydis.calc_absolute = dlsym(h, "ZydisCalcAbsoluteAddress");
	if (!zydis.decoder_init || !zydis.decode_full || !zydis.calc_absolute) {
		snprintf(zydis.why, sizeof(zydis.why), "%s lacks the decoder functions", zydis.lib);
		return;
	}
	if (!ZYAN_SUCCESS(zydis.decoder_init(&zydis.dec, ZYDIS_MACHINE_MODE_LONG_64,
					     ZYDIS_STACK_WIDTH_64))) {
		snprintf(zydis.why, sizeof(zydis.why), "%s: decoder initialisation failed",
			 zydis.lib);
		return;
	}
	zydis.why[0] = 0;
}

/* The decoder, or NULL with the error set naming the library. */
static const ZydisDecoder *decoder(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, zydis_load);
	if (zydis.why[0]) {
		bpfrt_err(-ENOTSUP, "kprobe: the x86-64 decoder %s cannot be loaded (%s); "
			  "install Zydis %u to decode probed instructions",
			  zydis.lib, zydis.why, (unsigned)ZYDIS_VERSION_MAJOR(ZYDIS_VERSION));
		return NULL;
	}
	return &zydis.dec;
}

static bool uses_rsp(const ZydisDecodedOperand *op)
{
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return op->reg.value == ZYDIS_REGISTER_RSP;
	if (op->type == ZYDIS_OPERAND_TYPE_MEMORY)
		return op->mem.base == ZYDIS_REGISTER_RSP || op->mem.index == ZYDIS_REGISTER_RSP;
	return false;
}

/* Decodable but not relocatable: the caller reports it if it matters. */
static int refuse(struct bpfrt_x86_insn *insn, const char *why)
{
	insn->bad = why;
	return 0;
}

/* The rip-relative memory operand, if any, and its absolute address. */
static int rip_operand(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops,
		       uintptr_t addr, struct bpfrt_x86_insn *insn)
{
	for (unsigned int i = 0; i < zi->operand_count; i++) {
		ZyanU64 abs;

		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY || ops[i].mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (zi->raw.disp.size != 32 ||
		    !ZYAN_SUCCESS(zydis.calc_absolute(zi, &ops[i], addr, &abs)))
			return refuse(insn, "unusual rip-relative operand");
		insn->rip_rel = true;
		insn->disp_off = zi->raw.disp.offset;
		insn->target = (uintptr_t)abs;
		return 0;
	}
	return 0;
}

int bpfrt_x86_decode(const uint8_t *code, size_t avail, uintptr_t addr,
		     struct bpfrt_x86_insn *insn)
{
	const ZydisDecoder *dec = decoder();
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int err;

	memset(insn, 0, sizeof(*insn));
	if (!dec)
		return -ENOTSUP;
	if (!ZYAN_SUCCESS(zydis.decode_full(dec, code, avail, &zi, ops)))
		return bpfrt_err(-EINVAL, "kprobe: no valid instruction at %#lx", (unsigned long)addr);
	insn->len = zi.length;
	insn->kind = BPFRT_X86_PLAIN;
	switch (zi.mnemonic) {
	case ZYDIS_MNEMONIC_INT3:
		return refuse(insn, "int3 (another breakpoint is there)");
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INTO:
		return refuse(insn, "software interrupt");
	default:
		break;
	}
	err = rip_operand(&zi, ops, addr, insn);
	if (err)
		return err;
	switch (zi.meta.category) {
	case ZYDIS_CATEGORY_RET:
		if (zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return refuse(insn, "far return");
		insn->kind = BPFRT_X86_RET;
		return 0;
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_COND_BR:
		break;
	default:
		/* rip-relative memory operands count as relative too */
		if ((zi.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && !insn->rip_rel)
			return refuse(insn, "relative operand of an unsupported instruction");
		return 0;
	}
	if (zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return refuse(insn, "far branch");
	bool call = zi.meta.category == ZYDIS_CATEGORY_CALL;

	if (zi.raw.imm[0].is_relative) {
		ZyanU64 abs;

		if (!ZYAN_SUCCESS(zydis.calc_absolute(&zi, &ops[0], addr, &abs)))
			return refuse(insn, "branch target not computable");
		insn->target = (uintptr_t)abs;
		if (call) {
			insn->kind = BPFRT_X86_CALL;
		} else if (zi.meta.category == ZYDIS_CATEGORY_UNCOND_BR) {
			insn->kind = BPFRT_X86_JMP;
		} else {
			insn->kind = BPFRT_X86_JCC;
			if (zi.opcode_map == ZYDIS_OPCODE_MAP_0F && zi.opcode >= 0x80 &&
			    zi.opcode <= 0x8f) {
				insn->cond_op = (uint8_t)(zi.opcode - 0x10);
			} else if (zi.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
				   ((zi.opcode >= 0x70 && zi.opcode <= 0x7f) ||
				    (zi.opcode >= 0xe0 && zi.opcode <= 0xe3))) {
				if (zi.opcode >= 0xe0 && zi.raw.prefix_count)
					return refuse(insn, "loop/jrcxz with a prefix");
				insn->cond_op = zi.opcode;
			} else {
				return refuse(insn, "unknown conditional branch");
			}
		}
		return 0;
	}
	/* Indirect: jmp/call r/m64. */
	if (zi.opcode != 0xff || !(zi.attributes & ZYDIS_ATTRIB_HAS_MODRM))
		return refuse(insn, "unknown indirect branch");
	if (call) {
		if (uses_rsp(&ops[0]))
			return refuse(insn, "indirect call through rsp");
		insn->kind = BPFRT_X86_CALL_IND;
		insn->modrm_off = zi.raw.modrm.offset;
	} else {
		insn->kind = BPFRT_X86_JMP_IND;
	}
	return 0;
}

/* jmp [rip + 0]; .quad target: reaches anywhere, flags untouched. */
static void emit_abs_jmp(struct x86_buf *b, uintptr_t target)
{
	emit_rip_rm(b, false, 0xff, 4, 0);
	emit_u64(b, target);
}

/* Pushes ret without touching the flags: lea rsp,[rsp-8]; two dword movs. */
static void emit_push_ret(struct x86_buf *b, uintptr_t ret)
{
	emit_lea(b, true, RSP, RSP, -8);
	emit_rm(b, false, false, 0xc7, 0, RSP, 0, false);       /* mov dword [rsp], lo */
	emit_u32(b, (uint32_t)ret);
	emit_rm(b, false, false, 0xc7, 0, RSP, 4, false);       /* mov dword [rsp+4], hi */
	emit_u32(b, (uint32_t)(ret >> 32));
}

/* Copies the instruction (to run at `at`) with its disp32 fixed. */
static int emit_copy(struct x86_buf *b, const struct bpfrt_x86_insn *insn, const uint8_t *code,
		     uintptr_t at)
{
	size_t start = b->len;

	emit_bytes(b, code, insn->len);
	if (insn->rip_rel) {
		int64_t disp = (int64_t)(insn->target - (at + insn->len));

		if (!is_simm32(disp))
			return -ERANGE;
		if (!b->overflow) {
			int32_t d32 = (int32_t)disp;

			memcpy(b->p + start + insn->disp_off, &d32, 4);
		}
	}
	return 0;
}

int bpfrt_x86_relocate(const struct bpfrt_x86_insn *insn, const uint8_t *code,
		       uintptr_t from, uintptr_t at, uint8_t *out)
{
	struct x86_buf b = { .p = out, .cap = BPFRT_X86_RELOC_MAX };
	uintptr_t next = from + insn->len;
	size_t copy;
	int err = 0;

	switch (insn->kind) {
	case BPFRT_X86_JMP:
		emit_abs_jmp(&b, insn->target);
		break;
	case BPFRT_X86_JCC:
		/* jcc +2 (to the absolute jmp); jmp +14 (over it); the
		 * condition's own short opcode: 70..7f, loop or jrcxz */
		emit2(&b, insn->cond_op, 2);
		emit_jmp_rel8(&b, 14);
		emit_abs_jmp(&b, insn->target);
		break;
	case BPFRT_X86_CALL:
		emit_push_ret(&b, next);
		emit_abs_jmp(&b, insn->target);
		break;
	case BPFRT_X86_CALL_IND:
		emit_push_ret(&b, next);
		copy = b.len;
		err = emit_copy(&b, insn, code, at + copy);
		/* ff /2 (call) -> ff /4 (jmp), same operand */
		if (!err && !b.overflow)
			out[copy + insn->modrm_off] =
				(uint8_t)((out[copy + insn->modrm_off] & 0xc7) | (4 << 3));
		break;
	default:
		err = emit_copy(&b, insn, code, at);
		break;
	}
	if (err)
		return err;
	return b.overflow ? -E2BIG : (int)b.len;
}

#else /* !__x86_64__ */

int bpfrt_x86_decode(const uint8_t *code, size_t avail, uintptr_t addr,
		     struct bpfrt_x86_insn *insn)
{
	return bpfrt_err(-EOPNOTSUPP, "kprobe: x86-64 only");
}

int bpfrt_x86_relocate(const struct bpfrt_x86_insn *insn, const uint8_t *code,
		       uintptr_t from, uintptr_t at, uint8_t *out)
{
	return -EOPNOTSUPP;
}

#endif
