/*
 * check: the few macros the unit tests share. A failed CHECK prints where
 * and what, and the test exits 1 at the end; CHECK_SKIP exits 77.
 */
#ifndef RELAY_CHECK_H
#define RELAY_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures;
static int check_count;

#define CHECK(cond) do { \
	check_count++; \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		check_failures++; \
	} \
} while (0)

#define CHECK_EQ_INT(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	check_count++; \
	if (a_ != b_) { \
		fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
			__FILE__, __LINE__, #a, a_, #b, b_); \
		check_failures++; \
	} \
} while (0)

#define CHECK_SKIP(why) do { printf("skipped: %s\n", why); exit(77); } while (0)

/* Path of a file under tests/fixtures (the runner sets FIXTURES). */
static inline const char *check_fixture(const char *name)
{
	static char path[4096];
	const char *dir = getenv("FIXTURES");
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/fixtures", name);
	return path;
}

static inline int check_done(void)
{
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
