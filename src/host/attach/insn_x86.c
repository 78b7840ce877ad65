/* x86-64 decoding and relocation of displaced instructions (insn_x86.h). */
#include "attach/insn_x86.h"
#include "core/error.h"

#include <errno.h>
#include <string.h>

#if defined(__x86_64__)
#include <Zydis/Zydis.h>

static const ZydisDecoder *decoder(void)
{
	static ZydisDecoder dec;
	static _Atomic int ready;

	if (!ready) {
		/* Idempotent: racing initialisations write the same bytes. */
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		ready = 1;
	}
	return &dec;
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
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, &ops[i], addr, &abs)))
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
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int err;

	memset(insn, 0, sizeof(*insn));
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(decoder(), code, avail, &zi, ops)))
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

		if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], addr, &abs)))
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

static uint8_t *put_abs_jmp(uint8_t *p, uintptr_t target)
{
	static const uint8_t jmp_rip[6] = { 0xff, 0x25, 0, 0, 0, 0 }; /* jmp [rip+0] */

	memcpy(p, jmp_rip, 6);
	memcpy(p + 6, &target, 8);
	return p + 14;
}

/* Pushes ret without touching the flags: lea rsp,[rsp-8]; two dword movs. */
static uint8_t *put_push_ret(uint8_t *p, uintptr_t ret)
{
	static const uint8_t lea[5] = { 0x48, 0x8d, 0x64, 0x24, 0xf8 };
	uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);

	memcpy(p, lea, 5);
	p += 5;
	*p++ = 0xc7; *p++ = 0x04; *p++ = 0x24;               /* mov dword [rsp], lo */
	memcpy(p, &lo, 4);
	p += 4;
	*p++ = 0xc7; *p++ = 0x44; *p++ = 0x24; *p++ = 0x04;  /* mov dword [rsp+4], hi */
	memcpy(p, &hi, 4);
	return p + 4;
}

/* Copies the instruction to p (to run at at) with its disp32 fixed. */
static int put_copy(uint8_t *p, const struct bpfrt_x86_insn *insn, const uint8_t *code,
		    uintptr_t at)
{
	memcpy(p, code, insn->len);
	if (insn->rip_rel) {
		int64_t disp = (int64_t)(insn->target - (at + insn->len));
		int32_t d32 = (int32_t)disp;

		if (d32 != disp)
			return -ERANGE;
		memcpy(p + insn->disp_off, &d32, 4);
	}
	return insn->len;
}

int bpfrt_x86_relocate(const struct bpfrt_x86_insn *insn, const uint8_t *code,
		       uintptr_t from, uintptr_t at, uint8_t *out)
{
	uintptr_t next = from + insn->len;
	uint8_t *p = out;
	int n;

	switch (insn->kind) {
	case BPFRT_X86_JMP:
		return (int)(put_abs_jmp(p, insn->target) - out);
	case BPFRT_X86_JCC:
		/* jcc +2 (to the absolute jmp); jmp +14 (over it) */
		*p++ = insn->cond_op;
		*p++ = 2;
		*p++ = 0xeb;
		*p++ = 14;
		return (int)(put_abs_jmp(p, insn->target) - out);
	case BPFRT_X86_CALL:
		p = put_push_ret(p, next);
		return (int)(put_abs_jmp(p, insn->target) - out);
	case BPFRT_X86_CALL_IND:
		p = put_push_ret(p, next);
		n = put_copy(p, insn, code, at + (uintptr_t)(p - out));
		if (n < 0)
			return n;
		/* ff /2 (call) -> ff /4 (jmp), same operand */
		p[insn->modrm_off] = (uint8_t)((p[insn->modrm_off] & 0xc7) | (4 << 3));
		return (int)(p - out) + n;
	default:
		return put_copy(p, insn, code, at);
	}
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
