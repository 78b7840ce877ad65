/* STUB: replaced by the structural validator. Treats the whole program as
 * one subprogram with a 512-byte frame. */
#include "verifier/validate.h"
#include <stdlib.h>
int bpfrt_validate(struct bpfrt_prog *prog)
{
	prog->subprogs = calloc(1, sizeof(*prog->subprogs));
	prog->insn_subprog = calloc(prog->insn_cnt, sizeof(uint32_t));
	prog->subprogs[0] = (struct bpfrt_subprog){ 0, prog->insn_cnt, 512, 512, 1 };
	prog->subprog_cnt = 1;
	prog->stack_depth = 512;
	return 0;
}
