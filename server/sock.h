/*
 * sock: one end of a relayed byte stream, plain TCP or TLS, behind a small
 * table of operations (the shape of wrk's sock table), so the relay loop
 * has one code path for both and no "if (tls)" in it.
 *
 * Every operation is non-blocking. After each call s->want holds the epoll
 * events (EPOLLIN, EPOLLOUT) that must arrive before the same operation can
 * make progress again, or 0 when it may be retried at once. TLS may need to
 * write in order to read and the other way round, so a caller must take
 * want as it comes rather than assume EPOLLIN for reads.
 *
 * A read shorter than asked for is taken to have emptied the socket, so
 * want says EPOLLIN without a second read to see EAGAIN: edge-triggered
 * epoll reports the next arrival. It does not report a FIN that arrived
 * together with the data (one wake-up, one event), so once the owner has
 * seen EPOLLRDHUP it sets s->rdhup and reads go on until the end of the
 * stream instead.
 *
 * With sock_stamp_arrivals, reads record the kernel receive time of the
 * bytes they return (SO_TIMESTAMPNS, CLOCK_REALTIME) in s->rx_ns, for TLS
 * too: its records are read through a BIO of our own.
 */
#ifndef RELAY_SOCK_H
#define RELAY_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why a connection failed; handshake failures are counted by these. After
 * the handshake only reset, io, peer_alert and protocol occur. */
#define SOCK_FAILS(X) \
	X(none,          "no failure") \
	X(eof,           "the peer closed the connection during the handshake") \
	X(reset,         "the peer reset the connection") \
	X(io,            "a socket error other than a reset") \
	X(not_tls,       "the peer does not speak TLS (garbage or plain text)") \
	X(version,       "no TLS version in common (TLS 1.2 is the minimum)") \
	X(cipher,        "no cipher suite or group in common") \
	X(peer_alert,    "the peer refused the handshake with an alert") \
	X(cert_expired,  "the peer's certificate has expired or is not yet valid") \
	X(cert_verify,   "the peer's certificate did not verify (CA, name)") \
	X(protocol,      "another TLS protocol error") \
	X(timeout,       "the handshake did not finish in time")

#define SOCK_F(name, help) SOCK_FAIL_##name,
enum sock_fail { SOCK_FAILS(SOCK_F) SOCK_NFAILS };
#undef SOCK_F

/* What an operation returns. */
enum sock_rc {
	SOCK_OK,	/* done (reads and writes: *n > 0 bytes moved) */
	SOCK_AGAIN,	/* wait for s->want, then call again */
	SOCK_EOF,	/* read: the peer will send no more */
	SOCK_ERROR,	/* s->fail says why; the connection is unusable */
};

struct sock;
struct ssl_st;

struct sock_ops {
	const char *name;
	/* Finish the connection set-up (the TLS handshake; nothing for plain). */
	enum sock_rc (*handshake)(struct sock *s);
	/* Read up to len bytes into buf; *n is the count on SOCK_OK. */
	enum sock_rc (*read)(struct sock *s, void *buf, size_t len, size_t *n);
	/* Write up to len bytes from buf; *n is the count on SOCK_OK. After
	 * SOCK_AGAIN the next write must offer the same bytes again (TLS). */
	enum sock_rc (*write)(struct sock *s, const void *buf, size_t len,
			      size_t *n);
	/* Send no more (TLS close_notify, then FIN); reading stays possible. */
	enum sock_rc (*shutdown)(struct sock *s);
	/* Release everything; abort sends a reset instead of a FIN. */
	void (*close)(struct sock *s, bool abort);
};

struct sock {
	const struct sock_ops *ops;
	int fd;
	struct ssl_st *ssl;	/* TLS only */
	uint32_t want;		/* see above */
	enum sock_fail fail;	/* why the last SOCK_ERROR */
	int64_t rx_ns;		/* kernel receive time of the last read, 0 unknown */
	bool rdhup;		/* the peer's FIN is queued (EPOLLRDHUP seen) */
	bool peer_eof;		/* TLS: the BIO read the peer's FIN */
	bool drained;		/* TLS: the BIO's last read emptied the socket */
	int sys_errno;		/* TLS: the BIO's socket error in this call */
};

/* A plain TCP connection on the non-blocking socket fd (ownership passes). */
void sock_init_plain(struct sock *s, int fd);

/* A TLS connection over fd with ssl (accept or connect state already set;
 * ownership of both passes). Returns 0, or -1 when OpenSSL is out of
 * memory (nothing is released then). */
int sock_init_tls(struct sock *s, int fd, struct ssl_st *ssl);

/* Have reads record the kernel receive time in s->rx_ns. While any socket
 * asks, the kernel stamps every packet it receives, for all of the host. */
void sock_stamp_arrivals(struct sock *s);

/* Short name of a failure ("not_tls"), for metric labels and logs. */
const char *sock_fail_name(enum sock_fail f);

/* One-line description of a failure. */
const char *sock_fail_help(enum sock_fail f);

#endif
