/* Unit tests for lib/addr: every accepted form, and a clear error naming
 * the input for every rejected one. */
#include "check.h"
#include "addr.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char why[256];

static void ok(const char *text, int flags, const char *formatted)
{
	struct addr a;
	why[0] = 0;
	int rc = addr_parse(&a, text, flags, why, sizeof(why));
	CHECK_EQ_INT(rc, 0);
	if (rc) {
		fprintf(stderr, "  %s: %s\n", text, why);
		return;
	}
	char buf[ADDR_TEXT_MAX];
	addr_format(&a, buf, sizeof(buf));
	if (strcmp(buf, formatted) != 0)
		fprintf(stderr, "  %s formats as %s, want %s\n", text, buf, formatted);
	CHECK(strcmp(buf, formatted) == 0);
}

/* Must fail, and the message must contain want. */
static void bad(const char *text, int flags, const char *want)
{
	struct addr a;
	why[0] = 0;
	CHECK_EQ_INT(addr_parse(&a, text, flags, why, sizeof(why)), -1);
	if (!strstr(why, want))
		fprintf(stderr, "  '%s': message '%s' lacks '%s'\n", text, why, want);
	CHECK(strstr(why, want) != NULL);
}

/* addr_bind_listener on an abstract unix:// name: one taken first is
 * refused, saying that any program may take one (a path's binding is
 * server/sockfile's). */
static void test_abstract_bind(void)
{
	char text[64], err[512];
	snprintf(text, sizeof(text), "unix://@relay-addr-%d", (int)getpid());
	struct addr a;
	CHECK_EQ_INT(addr_parse(&a, text, 0, why, sizeof(why)), 0);
	int first = addr_listen_socket(&a, SOCK_DGRAM, err, sizeof(err));
	CHECK_EQ_INT(addr_bind_listener(&a, first, 0, err, sizeof(err)), first);
	int fd = addr_listen_socket(&a, SOCK_DGRAM, err, sizeof(err));
	CHECK_EQ_INT(addr_bind_listener(&a, fd, 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(errno, EADDRINUSE);
	CHECK(strstr(err, text) && strstr(err, "another program holds this "
					   "name: an abstract name has no "
					   "owner"));
	close(first);
}

int main(void)
{
	ok("udp://127.0.0.1:5353", 0, "udp://127.0.0.1:5353");
	ok("udp://[::1]:53", 0, "udp://[::1]:53");
	ok("udp://[2001:db8::1]:65535", 0, "udp://[2001:db8::1]:65535");
	ok("udp://[fe80::1%1]:9", 0, "udp://[fe80::1%1]:9");
	ok("tcp://10.0.0.1:80", ADDR_NUMERIC, "tcp://10.0.0.1:80");
	ok("tls://[::]:443", 0, "tls://[::]:443");
	ok("echo", ADDR_ALLOW_ECHO, "echo");
	ok("udp://0.0.0.0:0", ADDR_ALLOW_PORT0, "udp://0.0.0.0:0");
	ok("127.0.0.1:9100", ADDR_NO_SCHEME_TCP, "tcp://127.0.0.1:9100");
	ok("udp://localhost:7", 0, "udp://127.0.0.1:7");
	ok("unix:///run/relay.sock", 0, "unix:///run/relay.sock");
	ok("unix://@relay-demo", 0, "unix://@relay-demo");

	char longest[140];
	snprintf(longest, sizeof(longest), "unix:///%0106d", 0);	/* 107 */
	ok(longest, 0, longest);
	snprintf(longest, sizeof(longest), "unix:///%0107d", 0);
	bad(longest, 0, "path of 108 bytes, over the 107");
	bad("unix://run/relay.sock", 0, "expected unix:///PATH");
	bad("unix://", 0, "expected unix:///PATH");
	bad("unix://@", 0, "empty abstract name");
	bad("unixx://@a", 0, "unknown scheme 'unixx'");

	bad("", 0, "empty address");
	bad("echo", 0, "not allowed");
	bad("sctp://1.2.3.4:5", 0, "unknown scheme 'sctp'");
	bad("1.2.3.4:5", 0, "missing scheme");
	bad("udp://1.2.3.4", 0, "missing ':PORT'");
	bad("udp://::1:53", 0, "must be in brackets");
	bad("udp://[::1:53", 0, "missing ']'");
	bad("udp://[::1]53", 0, "missing ':PORT' after ']'");
	bad("udp://[]:53", 0, "empty IPv6");
	bad("udp://[1.2.3.4]:53", 0, "is not an IPv6 address");
	bad("udp://:53", 0, "missing address");
	bad("udp://1.2.3.4:", 0, "is not a number");
	bad("udp://1.2.3.4:5x", 0, "is not a number");
	bad("udp://1.2.3.4:-1", 0, "is not a number");
	bad("udp://1.2.3.4:70000", 0, "out of range 1..65535");
	bad("udp://1.2.3.4:0", 0, "out of range 1..65535");
	bad("udp://1.2.3.256:5", ADDR_NUMERIC, "not a numeric");
	bad("udp://no-such-host.invalid:5", 0, "cannot resolve 'no-such-host.invalid'");

	struct addr a, b;
	addr_parse(&a, "udp://[::1]:53", 0, why, sizeof(why));
	addr_parse(&b, "udp://[::1]:53", 0, why, sizeof(why));
	CHECK(addr_equal(&a, &b));
	CHECK_EQ_INT(addr_port(&a), 53);
	addr_parse(&b, "tcp://[::1]:53", 0, why, sizeof(why));
	CHECK(!addr_equal(&a, &b));
	CHECK(!addr_same_socket(&a, &b));	/* udp and tcp: two sockets */
	addr_parse(&a, "tls://[::1]:53", 0, why, sizeof(why));
	CHECK(addr_same_socket(&a, &b));	/* tcp and tls: one */
	addr_parse(&a, "tls://[::1]:54", 0, why, sizeof(why));
	CHECK(!addr_same_socket(&a, &b));
	addr_parse(&a, "echo", ADDR_ALLOW_ECHO, why, sizeof(why));
	CHECK(!addr_same_socket(&a, &a));
	CHECK_EQ_INT(addr_socktype(ADDR_UDP), SOCK_DGRAM);
	CHECK_EQ_INT(addr_socktype(ADDR_TLS), SOCK_STREAM);
	CHECK_EQ_INT(addr_socktype(ADDR_UNIX), SOCK_DGRAM);

	addr_parse(&a, "unix://@x", 0, why, sizeof(why));
	addr_parse(&b, "unix:///x", 0, why, sizeof(why));
	CHECK(!addr_equal(&a, &b));
	CHECK_EQ_INT(addr_port(&a), 0);
	addr_parse(&b, "unix://@x", 0, why, sizeof(why));
	CHECK(addr_equal(&a, &b) && addr_same_socket(&a, &b));
	addr_parse(&b, "unix://@xy", 0, why, sizeof(why));
	CHECK(!addr_equal(&a, &b));
	test_abstract_bind();
	return check_done();
}
