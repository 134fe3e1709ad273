/*
 * why: the error text every parser and set-up function here hands back to
 * its caller in a (char *why, size_t whylen) buffer.
 */
#ifndef RELAY_WHY_H
#define RELAY_WHY_H

#include <stddef.h>

/* Format the reason into why (nothing when why is NULL or whylen 0) and
 * return -1, so that a failure path reads `return why_set(...)`. */
int why_set(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
