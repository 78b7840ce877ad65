/* Fault-free reads of arbitrary addresses.
 *
 * Where the host's fault handler is in place (core/extable.h), a read is
 * a plain copy whose loads are fault-safe (core/extable_copy.c): a fault
 * on the source continues at the copy's fixup, and the read returns
 * -EFAULT. No system call, so it is async-signal-safe and costs what a
 * copy does.
 *
 * Without the handler (an engine without the host, or a host whose
 * sigaction failed) the kernel does the copy: process_vm_readv on our own
 * pid gives EFAULT (or a short count) for an unmapped or unreadable source
 * instead of SIGSEGV. Where that system call is not allowed (seccomp, old
 * kernels) a pipe does the same: write(2) from a bad buffer fails with
 * EFAULT. */
#define _GNU_SOURCE
#include "helpers/probe.h"
#include "core/extable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROBE_PAGE 4096u

static _Atomic pid_t self_pid;
static _Atomic bool use_pipe;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_after_fork(void)
{
	atomic_store(&self_pid, getpid());
}

static void probe_init(void)
{
	atomic_store(&self_pid, getpid());
	pthread_atfork(NULL, NULL, probe_after_fork);
}

/* The pipe fallback: one non-blocking pipe per thread, emptied after
 * every chunk, so it never holds more than a page. */
static __thread int pipe_fd[2] = { -1, -1 };

static long pipe_read_chunk(void *dst, const void *src, size_t n)
{
	ssize_t w, r;

	if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_NONBLOCK | O_CLOEXEC))
		return -EFAULT;
	w = write(pipe_fd[1], src, n);
	if (w <= 0)
		return -EFAULT;
	r = read(pipe_fd[0], dst, (size_t)w);
	return r == w ? (long)w : -EFAULT;
}

/* Reads up to n bytes, stopping early only at unreadable memory. Returns
 * the bytes read (possibly 0) or -EFAULT if not even the first was. */
static long read_some(void *dst, const void *src, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)src, n };
	ssize_t got;

	pthread_once(&probe_once, probe_init);
	if (!atomic_load_explicit(&use_pipe, memory_order_relaxed)) {
		got = process_vm_readv(atomic_load_explicit(&self_pid, memory_order_relaxed),
				       &local, 1, &remote, 1, 0);
		if (got > 0)
			return got;
		if (got < 0 && errno != ENOSYS && errno != EPERM)
			return -EFAULT;
		if (got < 0)
			atomic_store(&use_pipe, true);
		else
			return -EFAULT;
	}
	/* Pipe writes of a page or less are all-or-nothing: go page by page. */
	size_t done = 0;

	while (done < n) {
		uintptr_t a = (uintptr_t)src + done;
		size_t chunk = PROBE_PAGE - (a & (PROBE_PAGE - 1));
		long r;

		if (chunk > n - done)
			chunk = n - done;
		r = pipe_read_chunk((char *)dst + done, (const void *)a, chunk);
		if (r < 0)
			break;
		done += (size_t)r;
	}
	return done ? (long)done : -EFAULT;
}

long bpfrt_probe_read_syscall(void *dst, const void *src, size_t n)
{
	size_t done = 0;

	while (done < n) {
		long r = read_some((char *)dst + done, (const char *)src + done, n - done);

		if (r <= 0) {
			memset(dst, 0, n);
			return -EFAULT;
		}
		done += (size_t)r;
	}
	return 0;
}

long bpfrt_probe_read_str_syscall(void *dst, const void *src, size_t size)
{
	char *out = dst;
	char bounce[256];
	size_t done = 0;

	if (size == 0)
		return 0;
	/* Small steps that never cross a page: a string ending just before
	 * an unmapped page must not fail because the next page is
	 * unreadable. The bounce buffer keeps bytes after the NUL out of
	 * dst, which holds the string, NUL-padded to size: the verifier
	 * counts the whole buffer as written (ARG_PTR_TO_UNINIT_MEM), so no
	 * byte of it may keep what the stack held before. As Linux's
	 * strncpy_from_*_nofault, up to size bytes are read, the last of a
	 * cut string then replaced by the NUL. */
	while (done < size) {
		uintptr_t a = (uintptr_t)src + done;
		size_t chunk = PROBE_PAGE - (a & (PROBE_PAGE - 1));
		char *nul;
		long r;

		if (chunk > size - done)
			chunk = size - done;
		if (chunk > sizeof(bounce))
			chunk = sizeof(bounce);
		r = read_some(bounce, (const void *)a, chunk);
		if (r <= 0) {
			memset(dst, 0, size);
			return -EFAULT;
		}
		nul = memchr(bounce, 0, (size_t)r);
		if (nul) {
			size_t len = done + (size_t)(nul - bounce) + 1;

			memcpy(out + done, bounce, (size_t)(nul - bounce) + 1);
			memset(out + len, 0, size - len);
			return (long)len;
		}
		memcpy(out + done, bounce, (size_t)r);
		done += (size_t)r;
	}
	out[size - 1] = 0;
	return (long)size;
}

/* ---- the plain copies, where the fault handler is in place ---------------- */

long bpfrt_probe_read(void *dst, const void *src, size_t n)
{
	if (!bpfrt_extable_ready())
		return bpfrt_probe_read_syscall(dst, src, n);
	if (bpfrt_probe_copy(dst, src, n)) {
		memset(dst, 0, n);
		return -EFAULT;
	}
	return 0;
}

long bpfrt_probe_read_str(void *dst, const void *src, size_t size)
{
	char *out = dst;
	long got;

	if (size == 0)
		return 0;
	if (!bpfrt_extable_ready())
		return bpfrt_probe_read_str_syscall(dst, src, size);
	/* up to size bytes, none past the string's NUL; a cut string's last
	 * byte becomes its NUL (Linux's strncpy_from_*_nofault) */
	got = bpfrt_probe_copy_str(dst, src, size);
	if (got <= 0) {
		memset(dst, 0, size);
		return -EFAULT;
	}
	if (out[got - 1] != 0) {        /* no NUL in size bytes: cut */
		out[size - 1] = 0;
		return (long)size;
	}
	/* NUL-padded to size, as the kernel-copy path leaves it */
	memset(out + got, 0, size - (size_t)got);
	return got;
}

/* ---- fault-safe writes (probe_write_user) ----------------------------------- */

/* Pipe fallback: the source into the pipe, then out of it into dst: a
 * read(2) into memory that is not writable fails with EFAULT. Whatever a
 * failed read left in the pipe is drained, so the next chunk starts
 * clean. */
static long pipe_write_chunk(void *dst, const void *src, size_t n)
{
	ssize_t w, r;
	char drain[256];

	if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_NONBLOCK | O_CLOEXEC))
		return -EFAULT;
	w = write(pipe_fd[1], src, n);
	if (w <= 0)
		return -EFAULT;
	r = read(pipe_fd[0], dst, (size_t)w);
	if (r == w)
		return 0;
	while (read(pipe_fd[0], drain, sizeof(drain)) > 0)
		;
	return -EFAULT;
}

long bpfrt_probe_write(void *dst, const void *src, size_t n)
{
	struct iovec local = { (void *)src, n }, remote = { dst, n };
	size_t done = 0;
	ssize_t put;

	if (!n)
		return 0;
	pthread_once(&probe_once, probe_init);
	if (!atomic_load_explicit(&use_pipe, memory_order_relaxed)) {
		put = process_vm_writev(atomic_load_explicit(&self_pid, memory_order_relaxed),
					&local, 1, &remote, 1, 0);
		if (put == (ssize_t)n)
			return 0;
		if (put >= 0 || (errno != ENOSYS && errno != EPERM))
			return -EFAULT;
		atomic_store(&use_pipe, true);
	}
	while (done < n) {
		uintptr_t a = (uintptr_t)dst + done;
		size_t chunk = PROBE_PAGE - (a & (PROBE_PAGE - 1));

		if (chunk > n - done)
			chunk = n - done;
		if (pipe_write_chunk((void *)a, (const char *)src + done, chunk))
			return -EFAULT;
		done += chunk;
	}
	return 0;
}
