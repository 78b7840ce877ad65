/* What Linux says of LSM hooks by name, for lsm programs (lsm/HOOK): the
 * hooks BPF may not attach to (bpf_lsm's disabled set), the hooks that
 * return void (no return-value rule) or bool ([0, 1]); every other hook
 * returns 0 or -errno, so a program must return a value in [-4095, 0].
 * The names are those of the kernel's include/linux/lsm_hook_defs.h
 * (Linux 6.12); a kernel-layout fact bpfrt cannot read from a kernel BTF
 * it does not have. */
#include "core/prog_kind.h"

#include <string.h>

static const char *const disabled[] = {
	"vm_enough_memory", "inode_need_killpriv", "inode_getsecurity", "inode_listsecurity",
	"inode_copy_up_xattr", "getselfattr", "getprocattr", "setprocattr", "key_getsecurity",
	"audit_rule_match", "xfrm_decode_session", "ismaclabel",
};

static const char *const void_hooks[] = {
	"bprm_committing_creds", "bprm_committed_creds", "sb_delete", "sb_free_security",
	"sb_free_mnt_opts", "path_post_mknod", "inode_free_security", "inode_free_security_rcu",
	"inode_post_create_tmpfile", "inode_post_setattr", "inode_post_setxattr",
	"inode_post_removexattr", "inode_post_set_acl", "inode_post_remove_acl", "inode_getsecid",
	"file_release", "file_free_security", "backing_file_free", "file_set_fowner", "task_free",
	"cred_free", "cred_transfer", "cred_getsecid", "current_getsecid_subj", "task_getsecid_obj",
	"task_to_inode", "ipc_getsecid", "msg_msg_free_security", "msg_queue_free_security",
	"shm_free_security", "sem_free_security", "d_instantiate", "release_secctx",
	"inode_invalidate_secctx", "sk_free_security", "sk_clone_security", "sk_getsecid",
	"sock_graft", "inet_csk_clone", "inet_conn_established", "secmark_refcount_inc",
	"secmark_refcount_dec", "req_classify_flow", "sctp_sk_clone", "xfrm_policy_free_security",
	"xfrm_state_free_security", "key_post_create_or_update", "audit_rule_free", "bpf_map_free",
	"bpf_prog_free", "bpf_token_free", "initramfs_populated", "bdev_free_security",
};

static const char *const bool_hooks[] = {
	"xfrm_state_pol_flow_match", "audit_rule_known", "inode_xattr_skipcap",
};

static bool in(const char *const *list, size_t n, const char *hook)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], hook))
			return true;
	return false;
}

#define IN(list, hook) in(list, sizeof(list) / sizeof(list[0]), hook)

bool bpfrt_lsm_hook_disabled(const char *hook)
{
	return hook && IN(disabled, hook);
}

bool bpfrt_lsm_hook_ret_range(const char *hook, int64_t *min, int64_t *max)
{
	if (!hook || !*hook || IN(void_hooks, hook))
		return false; /* no hook named yet, or its value is ignored */
	if (IN(bool_hooks, hook)) {
		*min = 0;
		*max = 1;
	} else {
		*min = -4095; /* -MAX_ERRNO */
		*max = 0;
	}
	return true;
}

/* The struct pointer parameters of the hooks whose arguments programs
 * most often pass to kfuncs (lsm_hook_defs.h): NULL for a parameter that
 * is no struct pointer. Linux types every hook's arguments from its BTF;
 * bpfrt knows these, and types them from the program's own BTF (the
 * structs it names), trusted as Linux's. */
static const struct {
	const char *hook;
	const char *args[4];
} hook_args[] = {
	{ "file_open", { "file" } },
	{ "file_permission", { "file" } },
	{ "file_ioctl", { "file" } },
	{ "file_mprotect", { "vm_area_struct" } },
	{ "mmap_file", { "file" } },
	{ "task_alloc", { "task_struct" } },
	{ "task_free", { "task_struct" } },
	{ "task_kill", { "task_struct" } },
	{ "bprm_check_security", { "linux_binprm" } },
	{ "bprm_committed_creds", { "linux_binprm" } },
	{ "inode_getattr", { "path" } },
	{ "inode_getxattr", { "mnt_idmap", "dentry" } },
	{ "inode_unlink", { "inode", "dentry" } },
	{ "inode_rename", { "inode", "dentry", "inode", "dentry" } },
	{ "path_unlink", { "path", "dentry" } },
	{ "path_mkdir", { "path", "dentry" } },
	{ "sb_mount", { NULL, "path" } },
	{ "socket_connect", { "socket", "sockaddr" } },
	{ "socket_bind", { "socket", "sockaddr" } },
};

const char *bpfrt_lsm_hook_arg_struct(const char *hook, unsigned i)
{
	for (size_t k = 0; hook && i < 4 && k < sizeof(hook_args) / sizeof(hook_args[0]); k++)
		if (!strcmp(hook_args[k].hook, hook))
			return hook_args[k].args[i];
	return NULL;
}
