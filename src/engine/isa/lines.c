/* Line-by-line reading (lines.h). */
#include "isa/lines.h"

#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bpfrt_for_each_line(const char *text, unsigned *lineno,
			int (*fn)(void *ctx, char *line), void *ctx, const char *who)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	for (const char *p = text; *p && !err;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		(*lineno)++;
		if (len + 1 > cap) {
			char *n = realloc(line, len + 1);

			if (!n) {
				err = bpfrt_err(-ENOMEM, "%s: out of memory", who);
				break;
			}
			line = n;
			cap = len + 1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		err = fn(ctx, line);
		p += len + (eol ? 1 : 0);
	}
	free(line);
	return err;
}
