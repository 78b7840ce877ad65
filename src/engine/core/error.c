#include "core/error.h"
#include "bpfrt/bpfrt.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

int bpfrt_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

void bpfrt_err_clear(void)
{
	last_error[0] = '\0';
}

const char *bpfrt_last_error(void)
{
	return last_error;
}
