#include "why.h"

#include <stdarg.h>
#include <stdio.h>

int why_set(char *why, size_t whylen, const char *fmt, ...)
{
	if (!why || !whylen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}
