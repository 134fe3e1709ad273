/*
 * certs: fresh test certificates for the TLS unit tests, made at run time by
 * tests/fixtures/tls/make-certs.sh in a directory of their own (no private
 * key is ever committed). A test without the openssl command is skipped.
 */
#ifndef RELAY_CERTS_H
#define RELAY_CERTS_H

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static char certs_dir[512];

/* Make the certificates under $TEST_TMP/<tag>.XXXXXX, or skip the test. */
static void certs_make(const char *tag)
{
	char cmd[5000];
	const char *tmp = getenv("TEST_TMP");
	snprintf(certs_dir, sizeof(certs_dir), "%s/%s.XXXXXX",
		 tmp ? tmp : P_tmpdir, tag);
	if (!mkdtemp(certs_dir))
		CHECK_SKIP("cannot make a temporary directory");
	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>&1",
		 check_fixture("tls/make-certs.sh"), certs_dir);
	if (system(cmd) != 0)
		CHECK_SKIP("the openssl command cannot make test certificates");
}

/* The path of one made file; the last four results stay valid. */
static const char *cert(const char *name)
{
	static char path[4][600];
	static int i;
	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", certs_dir, name);
	return path[i];
}

/* Remove the directory certs_make made. */
static void certs_remove(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", certs_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", certs_dir);
}

#endif
