/* Unit tests for server/tls: contexts from test certificates made fresh by
 * tests/fixtures/tls/make-certs.sh: a good pair, a key that does not match,
 * missing files, a key readable by others (warning), an expired
 * certificate (warning), ALPN lists, CA files. */
#include "check.h"
#include "certs.h"
#include "../../server/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static void test_good_pair(void)
{
	char warn[512], err[512];
	struct tls *t = tls_server_new(cert("server.pem"), cert("server.key"),
				       NULL, warn, sizeof(warn), err, sizeof(err));
	CHECK(t != NULL);
	CHECK_EQ_INT(strlen(warn), 0);
	tls_free(t);
}

static void test_mismatch(void)
{
	char warn[512], err[512] = "";
	struct tls *t = tls_server_new(cert("server.pem"), cert("other.key"),
				       NULL, warn, sizeof(warn), err, sizeof(err));
	CHECK(t == NULL);
	CHECK(strstr(err, "does not match") != NULL);
	CHECK(strstr(err, "other.key") != NULL);
	tls_free(t);
}

static void test_missing(void)
{
	char warn[512], err[512] = "";
	struct tls *t = tls_server_new(cert("nope.pem"), cert("server.key"),
				       NULL, warn, sizeof(warn), err, sizeof(err));
	CHECK(t == NULL);
	CHECK(strstr(err, "nope.pem") != NULL);
	t = tls_server_new(cert("server.pem"), cert("nope.key"), NULL, warn,
			   sizeof(warn), err, sizeof(err));
	CHECK(t == NULL);
	CHECK(strstr(err, "nope.key") != NULL);
	t = tls_server_new(NULL, NULL, NULL, warn, sizeof(warn), err,
			   sizeof(err));
	CHECK(t == NULL);
	CHECK(strstr(err, "--cert") != NULL);
	/* A certificate file that is not PEM. */
	t = tls_server_new(cert("db/ca.cnf"), cert("server.key"), NULL, warn,
			   sizeof(warn), err, sizeof(err));
	CHECK(t == NULL);
	CHECK(strstr(err, "ca.cnf") != NULL);
}

static void test_key_mode(void)
{
	char warn[512], err[512];
	CHECK(chmod(cert("server.key"), 0644) == 0);
	struct tls *t = tls_server_new(cert("server.pem"), cert("server.key"),
				       NULL, warn, sizeof(warn), err, sizeof(err));
	CHECK(t != NULL);
	CHECK(strstr(warn, "readable by everyone") != NULL);
	CHECK(strstr(warn, "chmod 600") != NULL);
	tls_free(t);
	CHECK(chmod(cert("server.key"), 0640) == 0);
	t = tls_server_new(cert("server.pem"), cert("server.key"), NULL, warn,
			   sizeof(warn), err, sizeof(err));
	CHECK(t != NULL);
	CHECK(strstr(warn, "readable by its group") != NULL);
	tls_free(t);
	CHECK(chmod(cert("server.key"), 0600) == 0);
}

static void test_expired(void)
{
	char warn[512], err[512];
	struct tls *t = tls_server_new(cert("expired.pem"), cert("server.key"),
				       NULL, warn, sizeof(warn), err, sizeof(err));
	CHECK(t != NULL);
	CHECK(strstr(warn, "expired") != NULL);
	tls_free(t);
}

static void test_alpn(void)
{
	char warn[512], err[512] = "";
	struct tls *t = tls_server_new(cert("server.pem"), cert("server.key"),
				       "h2,http/1.1", warn, sizeof(warn), err,
				       sizeof(err));
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_INT(t->alpn_len, 1 + 2 + 1 + 8);
		CHECK(memcmp(t->alpn, "\x02h2\x08http/1.1", 12) == 0);
	}
	tls_free(t);
	const char *bad[] = { "h2,,x", ",", "h2,", "" };
	for (int i = 0; i < 3; i++) {
		err[0] = 0;
		t = tls_server_new(cert("server.pem"), cert("server.key"),
				   bad[i], warn, sizeof(warn), err, sizeof(err));
		CHECK(t == NULL);
		CHECK(strstr(err, "empty protocol") != NULL);
	}
	/* An empty list means no ALPN at all. */
	t = tls_server_new(cert("server.pem"), cert("server.key"), bad[3], warn,
			   sizeof(warn), err, sizeof(err));
	CHECK(t != NULL);
	if (t)
		CHECK_EQ_INT(t->alpn_len, 0);
	tls_free(t);
}

static void test_client(void)
{
	char err[512] = "";
	struct tls *t = tls_client_new(cert("ca.pem"), err, sizeof(err));
	CHECK(t != NULL);
	tls_free(t);
	t = tls_client_new(cert("missing-ca.pem"), err, sizeof(err));
	CHECK(t == NULL);
	CHECK(strstr(err, "missing-ca.pem") != NULL);
	t = tls_client_new(NULL, err, sizeof(err));
	CHECK(t != NULL);
	tls_free(t);
}

int main(void)
{
	certs_make("tls");
	test_good_pair();
	test_mismatch();
	test_missing();
	test_key_mode();
	test_expired();
	test_alpn();
	test_client();
	certs_remove();
	return check_done();
}
