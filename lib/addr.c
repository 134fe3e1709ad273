/*
 * addr: endpoint parsing. Numeric addresses are converted with inet_pton
 * first, so they never touch the resolver (which a static binary in an
 * initramfs does not have); only what is not numeric goes to getaddrinfo.
 */
#include "addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

static const struct {
	const char *prefix;
	enum addr_kind kind;
} schemes[] = {
	{ "udp://", ADDR_UDP },
	{ "tcp://", ADDR_TCP },
	{ "tls://", ADDR_TLS },
	{ "unix://", ADDR_UNIX },
};

static const char *kind_scheme(enum addr_kind kind)
{
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (schemes[i].kind == kind)
			return schemes[i].prefix;
	return "";
}

int addr_socktype(enum addr_kind kind)
{
	switch (kind) {
	case ADDR_UDP:
	case ADDR_UNIX: return SOCK_DGRAM;
	case ADDR_TCP:
	case ADDR_TLS: return SOCK_STREAM;
	case ADDR_ECHO: break;
	}
	return 0;
}

static int fail(int err, char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(int err, char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

/* The rest of a unix:// address: "/PATH" or "@NAME". */
static int parse_unix(struct addr *a, const char *text, const char *rest,
		      char *why, size_t whylen)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&a->sa;
	bool abstract = rest[0] == '@';
	const char *name = abstract ? rest + 1 : rest;
	size_t n = strlen(name);
	if (!abstract && rest[0] != '/')
		return fail(EINVAL, why, whylen, "'%s': expected unix:///PATH "
			    "(an absolute path) or unix://@NAME (abstract)", text);
	if (abstract && !n)
		return fail(EINVAL, why, whylen, "'%s': empty abstract name "
			    "after '@'", text);
	/* A path needs its NUL inside sun_path; an abstract name its
	 * leading one. */
	if (n + 1 > sizeof(un->sun_path))
		return fail(EINVAL, why, whylen, "'%s': %s of %zu bytes, over "
			    "the %zu an AF_UNIX address holds", text,
			    abstract ? "name" : "path", n,
			    sizeof(un->sun_path) - 1);
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path + abstract, name, n);
	a->salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			       1);
	return 0;
}

/* Numeric IPv6 with an optional "%scope" (interface name or index). */
static int parse_v6(const char *host, struct sockaddr_in6 *s6)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	if (strlen(host) >= sizeof(buf))
		return -1;
	strcpy(buf, host);
	char *pct = strchr(buf, '%');
	if (pct)
		*pct++ = 0;
	if (inet_pton(AF_INET6, buf, &s6->sin6_addr) != 1)
		return -1;
	if (pct) {
		char *end;
		unsigned long idx = strtoul(pct, &end, 10);
		if (*pct && !*end)
			s6->sin6_scope_id = (uint32_t)idx;
		else if ((s6->sin6_scope_id = if_nametoindex(pct)) == 0)
			return -1;
	}
	return 0;
}

int addr_parse(struct addr *a, const char *text, int flags, char *why,
	       size_t whylen)
{
	memset(a, 0, sizeof(*a));
	if (!text || !*text)
		return fail(EINVAL, why, whylen, "empty address: expected "
			    "udp://ADDR:PORT%s", flags & ADDR_ALLOW_ECHO ?
			    " or echo" : "");
	if (strcmp(text, "echo") == 0) {
		if (!(flags & ADDR_ALLOW_ECHO))
			return fail(EINVAL, why, whylen, "'echo' is not "
				    "allowed here: expected udp://ADDR:PORT");
		a->kind = ADDR_ECHO;
		return 0;
	}

	const char *rest = NULL;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].prefix);
		if (strncmp(text, schemes[i].prefix, n) == 0) {
			a->kind = schemes[i].kind;
			rest = text + n;
		}
	}
	if (!rest) {
		const char *sep = strstr(text, "://");
		if (sep)
			return fail(EINVAL, why, whylen, "'%s': unknown scheme "
				    "'%.*s' (expected udp://, tcp://, tls://, "
				    "unix://%s)",
				    text, (int)(sep - text), text,
				    flags & ADDR_ALLOW_ECHO ? " or echo" : "");
		if (!(flags & ADDR_NO_SCHEME_TCP))
			return fail(EINVAL, why, whylen, "'%s': missing scheme "
				    "(expected udp://ADDR:PORT)", text);
		a->kind = ADDR_TCP;
		rest = text;
	}
	if (a->kind == ADDR_UNIX)
		return parse_unix(a, text, rest, why, whylen);

	/* Split host and port. */
	char host[256];
	const char *port;
	if (rest[0] == '[') {
		const char *close = strchr(rest, ']');
		if (!close)
			return fail(EINVAL, why, whylen, "'%s': missing ']' "
				    "after the IPv6 address", text);
		if ((size_t)(close - rest - 1) >= sizeof(host))
			return fail(EINVAL, why, whylen, "'%s': address too "
				    "long", text);
		memcpy(host, rest + 1, (size_t)(close - rest - 1));
		host[close - rest - 1] = 0;
		if (close[1] != ':')
			return fail(EINVAL, why, whylen, "'%s': missing ':PORT' "
				    "after ']'", text);
		port = close + 2;
		if (!host[0])
			return fail(EINVAL, why, whylen, "'%s': empty IPv6 "
				    "address in brackets", text);
	} else {
		const char *colon = strrchr(rest, ':');
		if (!colon)
			return fail(EINVAL, why, whylen, "'%s': missing ':PORT'",
				    text);
		if (memchr(rest, ':', (size_t)(colon - rest)))
			return fail(EINVAL, why, whylen, "'%s': an IPv6 address "
				    "must be in brackets, as in udp://[::1]:PORT",
				    text);
		if ((size_t)(colon - rest) >= sizeof(host))
			return fail(EINVAL, why, whylen, "'%s': host name too "
				    "long", text);
		memcpy(host, rest, (size_t)(colon - rest));
		host[colon - rest] = 0;
		port = colon + 1;
		if (!host[0])
			return fail(EINVAL, why, whylen, "'%s': missing address "
				    "before ':PORT' (use 0.0.0.0 or [::] for "
				    "any)", text);
	}

	char *end;
	errno = 0;
	long p = strtol(port, &end, 10);
	if (!*port || *end || errno || port[0] == '-' || port[0] == '+')
		return fail(EINVAL, why, whylen, "'%s': port '%s' is not a "
			    "number", text, port);
	long lo = flags & ADDR_ALLOW_PORT0 ? 0 : 1;
	if (p < lo || p > 65535)
		return fail(EINVAL, why, whylen, "'%s': port %ld out of range "
			    "%ld..65535", text, p, lo);

	struct sockaddr_in *s4 = (struct sockaddr_in *)&a->sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->sa;
	if (rest[0] != '[' && inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)p);
		a->salen = sizeof(*s4);
		return 0;
	}
	if (rest[0] == '[') {
		if (parse_v6(host, s6) < 0)
			return fail(EINVAL, why, whylen, "'%s': '%s' is not an "
				    "IPv6 address", text, host);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)p);
		a->salen = sizeof(*s6);
		return 0;
	}
	if (flags & ADDR_NUMERIC)
		return fail(EINVAL, why, whylen, "'%s': '%s' is not a numeric "
			    "IPv4 address (names are not resolved here)", text,
			    host);

	struct addrinfo hints = { .ai_socktype = addr_socktype(a->kind) };
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || !res)
		return fail(ENOENT, why, whylen, "'%s': cannot resolve '%s': %s",
			    text, host, rc ? gai_strerror(rc) : "no address");
	memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
	a->salen = res->ai_addrlen;
	if (a->sa.ss_family == AF_INET)
		s4->sin_port = htons((uint16_t)p);
	else
		s6->sin6_port = htons((uint16_t)p);
	freeaddrinfo(res);
	return 0;
}

/* An AF_UNIX address as its path or "@name". Only a's own sun_path is
 * read: an abstract name is its bytes up to the first NUL, which is as
 * autobind and this file make them. */
static void format_un(const struct sockaddr_un *un, char *buf, size_t len)
{
	size_t max = sizeof(un->sun_path) - 1;
	if (un->sun_path[0])
		snprintf(buf, len, "%.*s", (int)max, un->sun_path);
	else if (un->sun_path[1])
		snprintf(buf, len, "@%.*s", (int)max, un->sun_path + 1);
	else
		snprintf(buf, len, "(unnamed)");
}

char *addr_format_sa(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		if (s6->sin6_scope_id)
			snprintf(buf, len, "[%s%%%u]:%u", ip, s6->sin6_scope_id,
				 ntohs(s6->sin6_port));
		else
			snprintf(buf, len, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_UNIX) {
		format_un((const struct sockaddr_un *)sa, buf, len);
	} else {
		snprintf(buf, len, "(family %d)", sa->sa_family);
	}
	return buf;
}

char *addr_format(const struct addr *a, char *buf, size_t len)
{
	if (a->kind == ADDR_ECHO) {
		snprintf(buf, len, "echo");
		return buf;
	}
	char sa[ADDR_TEXT_MAX];
	addr_format_sa((const struct sockaddr *)&a->sa, sa, sizeof(sa));
	snprintf(buf, len, "%s%s", kind_scheme(a->kind), sa);
	return buf;
}

int addr_port(const struct addr *a)
{
	if (a->kind == ADDR_ECHO || a->kind == ADDR_UNIX)
		return 0;
	if (a->sa.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a->sa)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)&a->sa)->sin6_port);
}

/* Same socket address: family, address and port. */
static int same_sa(const struct addr *a, const struct addr *b)
{
	return a->salen == b->salen && memcmp(&a->sa, &b->sa, a->salen) == 0;
}

int addr_equal(const struct addr *a, const struct addr *b)
{
	if (a->kind != b->kind)
		return 0;
	return a->kind == ADDR_ECHO || same_sa(a, b);
}

int addr_same_socket(const struct addr *a, const struct addr *b)
{
	int type = addr_socktype(a->kind);
	return type && type == addr_socktype(b->kind) && same_sa(a, b);
}

int addr_listen_socket(const struct addr *a, int type, char *err,
		       size_t errlen)
{
	char text[ADDR_TEXT_MAX];
	int fd = socket(a->sa.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		addr_format(a, text, sizeof(text));
		snprintf(err, errlen, "%s: socket: %s", text, strerror(errno));
		return -1;
	}
	int one = 1;
	if (a->sa.ss_family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (a->sa.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	return fd;
}

int addr_bind_listener(const struct addr *a, int fd, int backlog, char *err,
		       size_t errlen)
{
	if (bind(fd, (const struct sockaddr *)&a->sa, a->salen) == 0 &&
	    (backlog <= 0 || listen(fd, backlog) == 0))
		return fd;
	int e = errno;
	char text[ADDR_TEXT_MAX];
	addr_format(a, text, sizeof(text));
	snprintf(err, errlen, "%s: cannot listen: %s%s", text, strerror(e),
		 e != EADDRINUSE ? (e == EADDRNOTAVAIL ?
				    " (no interface has this address)" : "") :
		 a->kind == ADDR_UNIX ? " (another program holds this name: "
					"an abstract name has no owner, so any "
					"program may take it first; a "
					"unix:///PATH in a directory only relay "
					"may write cannot be taken)" :
		 " (another program holds this port)");
	close(fd);
	errno = e;
	return -1;
}
