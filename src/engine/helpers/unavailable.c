/* Linux helpers that name kernel objects a user-space runtime does not
 * have. A program calling one is rejected at verification with the
 * helper's Linux name and this reason, so its author knows the call must
 * go rather than wait for bpfrt to add it. Helpers that could have a
 * user-space meaning (signals, namespaces, cgroup ancestors, ...) are not
 * listed: bpfrt may add them (docs/SUPPORTED.md lists what it has). */
#include "helpers/unavailable.h"

#include <linux/bpf.h>
#include <stddef.h>

#define NO_TASK "there is no kernel task in user space"
#define NO_PERF "bpfrt programs have no perf events to read"
#define NO_KERNEL_MEM "there are no kernel objects or per-CPU kernel variables in user space"

static const struct {
	int32_t id;
	const char *why;
} unavailable[] = {
	{ BPF_FUNC_get_current_task, NO_TASK },
	{ BPF_FUNC_task_pt_regs, NO_TASK },
	{ BPF_FUNC_get_task_stack, NO_TASK },
	{ BPF_FUNC_task_storage_get, NO_TASK },
	{ BPF_FUNC_task_storage_delete, NO_TASK },
	{ BPF_FUNC_copy_from_user_task, NO_TASK },
	{ BPF_FUNC_find_vma, "it takes a kernel task (from get_current_task_btf), and there is "
			     "none in user space" },
	{ BPF_FUNC_current_task_under_cgroup, NO_TASK },
	{ BPF_FUNC_perf_event_read, NO_PERF },
	{ BPF_FUNC_perf_event_read_value, NO_PERF },
	{ BPF_FUNC_perf_prog_read_value, NO_PERF },
	{ BPF_FUNC_read_branch_records, NO_PERF },
	{ BPF_FUNC_get_branch_snapshot, "the CPU's branch records (LBR) are not readable from "
					"user space" },
	{ BPF_FUNC_per_cpu_ptr, NO_KERNEL_MEM },
	{ BPF_FUNC_this_cpu_ptr, NO_KERNEL_MEM },
	{ BPF_FUNC_d_path, "there are no kernel dentries in user space" },
	{ BPF_FUNC_ima_inode_hash, "there is no kernel integrity measurement in user space" },
	{ BPF_FUNC_ima_file_hash, "there is no kernel integrity measurement in user space" },
	{ BPF_FUNC_bprm_opts_set, "there is no kernel exec in progress in user space" },
	{ BPF_FUNC_inode_storage_get, NO_KERNEL_MEM },
	{ BPF_FUNC_inode_storage_delete, NO_KERNEL_MEM },
};

const char *bpfrt_helper_unavailable_reason(int64_t id)
{
	for (size_t i = 0; i < sizeof(unavailable) / sizeof(unavailable[0]); i++)
		if (unavailable[i].id == id)
			return unavailable[i].why;
	return NULL;
}
