/* Verifier C corpus: Linux's kernel-object kfuncs (tasks, cgroups,
 * cpumasks, keys, files) and bpf_cast_to_kern_ctx, loaded privileged
 * (BPFRT_F_ALLOW_PTR_LEAKS, Linux's CAP_BPF). The structs are declared
 * here, as a program's BTF names them (without CO-RE, so their layout is
 * this file's; Linux would check it against its own, hence no Linux
 * verdicts). Accepted syscall programs run: nothing of the kind exists in
 * user space, so the lookups give NULL and the not-found path runs.
 * struct mm_struct is CO-RE (preserve_access_index) with no target BTF
 * naming it: its field offsets resolve to this file's layout, which only
 * loads through pointers typed from this BTF may use.
 * @task_from_pid_release: accept ; linux: skip
 * @current_task_acquire_release: accept ; linux: skip
 * @cgroup_from_id_acquire_release: accept ; linux: skip
 * @cpumask_create_set_test: accept ; linux: skip
 * @cast_to_kern_ctx: accept ; linux: skip
 * @user_key_lookup_put: accept ; linux: skip
 * @exe_file_of_current: accept ; linux: skip
 * @d_path_of_file_arg: accept ; linux: skip
 * @release_unchecked: reject "Possibly NULL pointer passed to trusted arg0" ; linux: skip
 * @release_null: reject "Possibly NULL pointer passed to trusted arg0" ; linux: skip
 * @leak_task: reject "Unreleased reference" ; linux: skip
 * @use_after_release: reject "!read_ok" ; linux: skip
 * @release_twice: reject "!read_ok" ; linux: skip
 * @walked_pointer_untrusted: reject "must be referenced or trusted" ; linux: skip
 * @wrong_struct: reject "expected pointer to STRUCT task_struct but R1 has a pointer to STRUCT cgroup" ; linux: skip
 * @stack_pointer_as_task: reject "expected=ptr_task_struct" ; linux: skip
 * @release_unacquired_arg: reject "expects refcounted" ; linux: skip
 * @raw_tp_task_kfunc: reject "calling kernel function bpf_task_from_pid is not allowed" ; linux: skip
 * @d_path_outside_lsm: reject "calling kernel function bpf_get_task_exe_file is not allowed" ; linux: skip
 * @sleepable_kfunc_not_sleepable: reject "must be sleepable" ; linux: skip
 * @d_path_buffer_too_small: reject "invalid access to map value" ; linux: skip
 * @acquired_released_at_offset: reject "must have zero offset" ; linux: skip
 * @core_kernel_struct_through_typed_pointer: accept ; linux: skip
 * @core_kernel_struct_elsewhere: reject "resolved to the program's own layout" ; linux: skip
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

struct mm_struct {
	unsigned long start_code;
	unsigned long end_code;
} __attribute__((preserve_access_index));
struct task_struct {
	int pid;
	int tgid;
	struct task_struct *parent;
	struct mm_struct *mm;
};
struct cgroup {
	int level;
	unsigned long long id;
};
struct cpumask {
	unsigned long bits[2];
};
struct bpf_cpumask {
	struct cpumask cpumask;
	int usage;
};
struct bpf_key {
	int serial;
};
struct path {
	void *mnt;
	void *dentry;
};
struct file {
	unsigned int f_flags;
	struct path f_path;
};

extern struct task_struct *bpf_task_from_pid(int pid) __ksym;
extern struct task_struct *bpf_task_acquire(struct task_struct *p) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern struct cgroup *bpf_cgroup_from_id(unsigned long long cgid) __ksym;
extern struct cgroup *bpf_cgroup_acquire(struct cgroup *cgrp) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;
extern struct bpf_cpumask *bpf_cpumask_create(void) __ksym;
extern struct bpf_cpumask *bpf_cpumask_acquire(struct bpf_cpumask *cpumask) __ksym;
extern void bpf_cpumask_release(struct bpf_cpumask *cpumask) __ksym;
extern void bpf_cpumask_set_cpu(unsigned int cpu, struct bpf_cpumask *cpumask) __ksym;
extern int bpf_cpumask_test_cpu(unsigned int cpu, const struct cpumask *cpumask) __ksym;
extern struct bpf_key *bpf_lookup_user_key(unsigned int serial, unsigned long long flags) __ksym;
extern void bpf_key_put(struct bpf_key *key) __ksym;
extern struct file *bpf_get_task_exe_file(struct task_struct *task) __ksym;
extern void bpf_put_file(struct file *file) __ksym;
extern int bpf_path_d_path(struct path *path, char *buf, unsigned long buf__sz) __ksym;
extern void *bpf_cast_to_kern_ctx(void *ctx) __ksym;

static struct task_struct *(*current_task)(void) = (void *)BPF_FUNC_get_current_task_btf;

static char buf[64];

/* ---- accepted ---- */

SEC("syscall")
int task_from_pid_release(void *ctx)
{
	struct task_struct *t = bpf_task_from_pid(1);
	int pid;

	if (!t)
		return 0;
	pid = t->pid;
	bpf_task_release(t);
	return pid;
}

SEC("syscall")
int current_task_acquire_release(void *ctx)
{
	struct task_struct *cur = current_task(), *a;
	int tgid = cur->tgid; /* fault-safe: no kernel task here, it reads 0 */

	a = bpf_task_acquire(cur);
	if (a)
		bpf_task_release(a);
	return tgid;
}

SEC("syscall")
int cgroup_from_id_acquire_release(void *ctx)
{
	struct cgroup *c = bpf_cgroup_from_id(1), *ref;

	if (!c)
		return 0;
	ref = bpf_cgroup_acquire(c);
	if (ref)
		bpf_cgroup_release(ref);
	bpf_cgroup_release(c);
	return 1;
}

SEC("syscall")
int cpumask_create_set_test(void *ctx)
{
	struct bpf_cpumask *m = bpf_cpumask_create(), *ref;
	int set;

	if (!m)
		return 0;
	ref = bpf_cpumask_acquire(m);
	bpf_cpumask_set_cpu(0, m);
	set = bpf_cpumask_test_cpu(0, (const struct cpumask *)ref);
	bpf_cpumask_release(ref);
	bpf_cpumask_release(m);
	return set;
}

SEC("syscall")
int cast_to_kern_ctx(void *ctx)
{
	void *k = bpf_cast_to_kern_ctx(ctx);

	return k != 0;
}

SEC("lsm.s/bpf")
int BPF_PROG(user_key_lookup_put)
{
	struct bpf_key *k = bpf_lookup_user_key(1, 0);

	if (k)
		bpf_key_put(k);
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(exe_file_of_current, struct file *file)
{
	struct file *exe = bpf_get_task_exe_file(current_task());

	if (!exe)
		return 0;
	bpf_put_file(exe);
	return 0;
}

SEC("lsm.s/file_open")
int BPF_PROG(d_path_of_file_arg, struct file *file)
{
	bpf_path_d_path(&file->f_path, buf, sizeof(buf));
	return 0;
}

/* ---- rejected ---- */

SEC("syscall")
int release_unchecked(void *ctx)
{
	bpf_task_release(bpf_task_from_pid(1));
	return 0;
}

SEC("syscall")
int release_null(void *ctx)
{
	bpf_task_release((struct task_struct *)0);
	return 0;
}

SEC("syscall")
int leak_task(void *ctx)
{
	struct task_struct *t = bpf_task_from_pid(1);

	return t ? 1 : 0;
}

SEC("syscall")
__attribute__((naked)) int use_after_release(void *ctx)
{
	asm volatile("r1 = 1;"
		     "call %[from_pid];"
		     "if r0 == 0 goto 1f;"
		     "r6 = r0;"
		     "r1 = r0;"
		     "call %[release];"
		     "r0 = *(u32 *)(r6 + 0);"
		     "exit;"
		     "1: r0 = 0;"
		     "exit;"
		     :: [from_pid] "i"(bpf_task_from_pid), [release] "i"(bpf_task_release)
		     : "memory");
}

SEC("syscall")
__attribute__((naked)) int release_twice(void *ctx)
{
	asm volatile("r1 = 1;"
		     "call %[from_pid];"
		     "if r0 == 0 goto 1f;"
		     "r6 = r0;"
		     "r1 = r0;"
		     "call %[release];"
		     "r1 = r6;"
		     "call %[release];"
		     "1: r0 = 0;"
		     "exit;"
		     :: [from_pid] "i"(bpf_task_from_pid), [release] "i"(bpf_task_release)
		     : "memory");
}

SEC("syscall")
int walked_pointer_untrusted(void *ctx)
{
	struct task_struct *a = bpf_task_acquire(current_task()->parent);

	if (a)
		bpf_task_release(a);
	return 0;
}

SEC("syscall")
int wrong_struct(void *ctx)
{
	struct cgroup *c = bpf_cgroup_from_id(1);

	if (!c)
		return 0;
	bpf_task_release((struct task_struct *)c);
	return 0;
}

SEC("syscall")
int stack_pointer_as_task(void *ctx)
{
	unsigned long long x = 0;
	struct task_struct *a = bpf_task_acquire((struct task_struct *)&x);

	if (a)
		bpf_task_release(a);
	return 0;
}

SEC("lsm.s/file_open")
int BPF_PROG(release_unacquired_arg, struct file *file)
{
	bpf_put_file(file);
	return 0;
}

SEC("raw_tp/x")
int raw_tp_task_kfunc(void *ctx)
{
	struct task_struct *t = bpf_task_from_pid(1);

	if (t)
		bpf_task_release(t);
	return 0;
}

SEC("syscall")
int d_path_outside_lsm(void *ctx)
{
	struct file *f = bpf_get_task_exe_file(current_task());

	if (!f)
		return 0;
	bpf_path_d_path(&f->f_path, buf, sizeof(buf));
	bpf_put_file(f);
	return 0;
}

SEC("lsm/bpf")
int BPF_PROG(sleepable_kfunc_not_sleepable)
{
	struct bpf_key *k = bpf_lookup_user_key(1, 0);

	if (k)
		bpf_key_put(k);
	return 0;
}

SEC("lsm.s/file_open")
int BPF_PROG(d_path_buffer_too_small, struct file *file)
{
	bpf_path_d_path(&file->f_path, buf, sizeof(buf) * 2);
	return 0;
}

SEC("syscall")
__attribute__((naked)) int acquired_released_at_offset(void *ctx)
{
	asm volatile("r1 = 1;"
		     "call %[from_pid];"
		     "if r0 == 0 goto 1f;"
		     "r1 = r0;"
		     "r1 += 4;"
		     "call %[release];"
		     "1: r0 = 0;"
		     "exit;"
		     :: [from_pid] "i"(bpf_task_from_pid), [release] "i"(bpf_task_release)
		     : "memory");
}

SEC("syscall")
int core_kernel_struct_through_typed_pointer(void *ctx)
{
	struct mm_struct *mm = current_task()->mm;

	return mm->end_code != 0; /* fault-safe: reads 0 */
}

static struct mm_struct fake_mm;

SEC("syscall")
int core_kernel_struct_elsewhere(void *ctx)
{
	return fake_mm.end_code != 0;
}
