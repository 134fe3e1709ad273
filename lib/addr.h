/*
 * addr: the endpoint syntax relay and loadgen share on their command lines
 * and in config files:
 *
 *   udp://ADDR:PORT   tcp://ADDR:PORT   tls://ADDR:PORT   echo
 *   unix:///PATH   unix://@NAME
 *
 * unix:// is an AF_UNIX datagram socket, at a file system PATH or at NAME
 * in the abstract namespace (no file; it goes away with the socket).
 * ADDR is an IPv4 address, an IPv6 address in brackets ("[::1]",
 * "[fe80::1%eth0]") or a host name (resolved once, at parse time, unless
 * ADDR_NUMERIC is given: the static build has no resolver configuration).
 * Every failure fills why with a sentence that quotes the input and says
 * what is wrong with it.
 */
#ifndef RELAY_ADDR_H
#define RELAY_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

enum addr_kind {
	ADDR_UDP,
	ADDR_TCP,
	ADDR_TLS,
	ADDR_ECHO,	/* no socket: reflect to the sender */
	ADDR_UNIX,	/* AF_UNIX datagrams */
};

struct addr {
	enum addr_kind kind;
	struct sockaddr_storage sa;	/* unset for ADDR_ECHO */
	socklen_t salen;
};

/* addr_parse flags. */
#define ADDR_ALLOW_ECHO		0x1	/* accept "echo" */
#define ADDR_NUMERIC		0x2	/* no name resolution */
#define ADDR_ALLOW_PORT0	0x4	/* port 0 (any free port) is fine */
#define ADDR_NO_SCHEME_TCP	0x8	/* "ADDR:PORT" without scheme means tcp */

/* Longest text addr_format writes, with its terminating NUL (unix:// and
 * the longest sun_path). */
#define ADDR_TEXT_MAX		120

/* Parse text into a. Returns 0, or -1 with why filled (errno EINVAL for
 * bad syntax or range, ENOENT when a name does not resolve). */
int addr_parse(struct addr *a, const char *text, int flags, char *why,
	       size_t whylen);

/* Write a back in the syntax addr_parse reads ("udp://[::1]:53", "echo").
 * Returns buf. */
char *addr_format(const struct addr *a, char *buf, size_t len);

/* Write a socket address as "1.2.3.4:5", "[::1]:5", "/run/x.sock" or
 * "@name" (an abstract AF_UNIX name; "(unnamed)" for none). Returns buf. */
char *addr_format_sa(const struct sockaddr *sa, char *buf, size_t len);

/* The port of a (0 for echo and unix). */
int addr_port(const struct addr *a);

/* 1 when both denote the same kind and socket address, else 0. */
int addr_equal(const struct addr *a, const struct addr *b);

/* 1 when a and b would bind one socket address of one socket type (tcp://
 * and tls:// on one port), whatever their kinds, else 0. */
int addr_same_socket(const struct addr *a, const struct addr *b);

/* The socket type of a kind: SOCK_DGRAM for udp and unix, SOCK_STREAM for
 * tcp and tls, 0 for echo. */
int addr_socktype(enum addr_kind kind);

/* A non-blocking, close-on-exec socket of type for a listener on a, with
 * SO_REUSEPORT (one per loop; not for unix://, which has no such option)
 * and, for IPv6, IPV6_V6ONLY ([::]:P and 0.0.0.0:P are two listeners). Returns the fd, or -1 with err filled. */
int addr_listen_socket(const struct addr *a, int type, char *err,
		       size_t errlen);

/* Bind fd to a (and listen with backlog when backlog > 0): an IP address
 * or an abstract unix:// name (a unix:///PATH is server/sockfile.h's).
 * Returns fd, or closes it and returns -1 with err naming the address and
 * the likely cause (port or name in use, no such local address), errno
 * kept. */
int addr_bind_listener(const struct addr *a, int fd, int backlog, char *err,
		       size_t errlen);

#endif
