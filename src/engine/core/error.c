#include "core/error.h"
#include "bpfrt/bpfrt.h"
#include "core/thread_mem.h"

#include <stdarg.h>
#include <stdio.h>

/* The text of this thread's last error, outside static TLS
 * (core/thread_mem.h): NULL until the thread's first error. */
#define LAST_ERROR_SIZE 1024
static __thread void *last_error __attribute__((tls_model("initial-exec")));

int bpfrt_err(int err, const char *fmt, ...)
{
	char *buf = bpfrt_thread_mem(&last_error, LAST_ERROR_SIZE);
	va_list ap;

	if (!buf)
		return err;
	va_start(ap, fmt);
	vsnprintf(buf, LAST_ERROR_SIZE, fmt, ap);
	va_end(ap);
	return err;
}

void bpfrt_err_clear(void)
{
	if (last_error)
		*(char *)last_error = '\0';
}

const char *bpfrt_last_error(void)
{
	if (last_error)
		return last_error;
	return "";
}
