/* Ordinary host code, built without any special flags: kprobes go on any
 * instruction of a function that has a symbol. */
#include "parse.h"

/* Decimal digits to a number; -1 for anything else. noinline keeps the
 * calls (a probe sees only calls that happen). */
__attribute__((noinline)) long parse_number(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}
