/*
 * sock: the plain and TLS operation tables. TLS records travel through a
 * BIO of our own rather than OpenSSL's socket BIO, for two reasons: it
 * reads with recvmsg and so keeps the kernel receive timestamp, and it
 * sends with MSG_NOSIGNAL, so a peer that went away is an error to count,
 * never a SIGPIPE.
 */
#include "sock.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define SOCK_H(name, help) help,
static const char *const fail_help[] = { SOCK_FAILS(SOCK_H) };
#undef SOCK_H
#define SOCK_N(name, help) #name,
static const char *const fail_name[] = { SOCK_FAILS(SOCK_N) };
#undef SOCK_N

const char *sock_fail_name(enum sock_fail f)
{
	return (unsigned)f < SOCK_NFAILS ? fail_name[f] : "?";
}

const char *sock_fail_help(enum sock_fail f)
{
	return (unsigned)f < SOCK_NFAILS ? fail_help[f] : "?";
}

static enum sock_fail errno_fail(int e)
{
	return e == ECONNRESET || e == EPIPE || e == ECONNABORTED ?
		SOCK_FAIL_reset : SOCK_FAIL_io;
}

/* recv with the kernel receive time of the data. Returns what recvmsg
 * returns. */
static ssize_t recv_ts(struct sock *s, void *buf, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t r = recvmsg(s->fd, &m, MSG_DONTWAIT);
	if (r <= 0)
		return r;
	/* No stamp (the kernel turns them on lazily) is unknown, not the
	 * previous read's. */
	s->rx_ns = clock_rx_stamp_ns(&m);
	return r;
}

static void close_fd(int fd, bool abort)
{
	if (abort) {
		/* A zero linger time makes close send a reset. */
		struct linger lg = { 1, 0 };
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(fd);
}

/* ---- plain ---- */

static enum sock_rc plain_handshake(struct sock *s)
{
	s->want = 0;
	return SOCK_OK;
}

static enum sock_rc plain_read(struct sock *s, void *buf, size_t len, size_t *n)
{
	ssize_t r = recv_ts(s, buf, len);
	if (r > 0) {
		*n = (size_t)r;
		/* A short read emptied the socket, but for a FIN queued behind
		 * the data (see sock.h). */
		s->want = (size_t)r < len && !s->rdhup ? EPOLLIN : 0;
		return SOCK_OK;
	}
	if (r == 0) {
		s->want = 0;
		return SOCK_EOF;
	}
	if (errno == EAGAIN || errno == EINTR) {
		s->want = errno == EAGAIN ? EPOLLIN : 0;
		return SOCK_AGAIN;
	}
	s->want = 0;
	s->fail = errno_fail(errno);
	return SOCK_ERROR;
}

static enum sock_rc plain_write(struct sock *s, const void *buf, size_t len,
				size_t *n)
{
	ssize_t r = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r >= 0) {
		*n = (size_t)r;
		s->want = (size_t)r < len ? EPOLLOUT : 0;
		return SOCK_OK;
	}
	if (errno == EAGAIN || errno == EINTR) {
		s->want = errno == EAGAIN ? EPOLLOUT : 0;
		return SOCK_AGAIN;
	}
	s->want = 0;
	s->fail = errno_fail(errno);
	return SOCK_ERROR;
}

static enum sock_rc plain_shutdown(struct sock *s)
{
	s->want = 0;
	if (shutdown(s->fd, SHUT_WR) == 0)
		return SOCK_OK;
	s->fail = errno_fail(errno == ENOTCONN ? ECONNRESET : errno);
	return SOCK_ERROR;
}

static void plain_close(struct sock *s, bool abort)
{
	if (s->fd >= 0)
		close_fd(s->fd, abort);
	s->fd = -1;
}

static const struct sock_ops plain_ops = {
	.name = "tcp",
	.handshake = plain_handshake,
	.read = plain_read,
	.write = plain_write,
	.shutdown = plain_shutdown,
	.close = plain_close,
};

void sock_init_plain(struct sock *s, int fd)
{
	s->ops = &plain_ops;
	s->fd = fd;
	s->ssl = NULL;
	s->want = 0;
	s->fail = SOCK_FAIL_none;
	s->rx_ns = 0;
	s->rdhup = false;
	s->peer_eof = false;
	s->drained = false;
	s->sys_errno = 0;
}

void sock_stamp_arrivals(struct sock *s)
{
	int one = 1;
	setsockopt(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
}

/* ---- the BIO under TLS ---- */

static int bio_read(BIO *b, char *buf, size_t len, size_t *n)
{
	struct sock *s = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t r = recv_ts(s, buf, len);
	s->drained = r < (ssize_t)len;
	if (r > 0) {
		*n = (size_t)r;
		return 1;
	}
	*n = 0;
	if (r == 0)
		s->peer_eof = true;
	else if (errno == EAGAIN || errno == EINTR)
		BIO_set_retry_read(b);
	else
		s->sys_errno = errno;
	return 0;
}

static int bio_write(BIO *b, const char *buf, size_t len, size_t *n)
{
	struct sock *s = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t r = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r >= 0) {
		*n = (size_t)r;
		return 1;
	}
	*n = 0;
	if (errno == EAGAIN || errno == EINTR)
		BIO_set_retry_write(b);
	else
		s->sys_errno = errno;
	return 0;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct sock *s = BIO_get_data(b);
	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;	/* nothing is buffered here */
	case BIO_CTRL_EOF:
		return s->peer_eof;
	default:
		return 0;
	}
}

static int bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static void bio_method_setup(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
				     "relay socket");
	if (!m)
		return;
	BIO_meth_set_read_ex(m, bio_read);
	BIO_meth_set_write_ex(m, bio_write);
	BIO_meth_set_ctrl(m, bio_ctrl);
	BIO_meth_set_create(m, bio_create);
	bio_method = m;
}

/* ---- TLS ---- */

/* The failure behind an SSL_ERROR_SSL, from the first queued error. Once
 * the handshake is done no version, cipher or certificate is at stake and
 * the peer has shown it speaks TLS: only its alerts keep a reason of their
 * own (a "handshake_failure" alert then is not about ciphers). */
static enum sock_fail tls_classify(const struct sock *s, bool handshake)
{
	unsigned long e = ERR_peek_error();
	int reason = ERR_GET_REASON(e);
	/* Alerts from the peer have reasons SSL_AD_REASON_OFFSET + alert. */
	bool alert = reason >= SSL_AD_REASON_OFFSET &&
		     reason < SSL_AD_REASON_OFFSET + 256;
	if (!handshake)
		return alert ? SOCK_FAIL_peer_alert : SOCK_FAIL_protocol;
	long v = SSL_get_verify_result(s->ssl);
	switch (reason) {
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
		return v == X509_V_ERR_CERT_HAS_EXPIRED ||
		       v == X509_V_ERR_CERT_NOT_YET_VALID ?
			SOCK_FAIL_cert_expired : SOCK_FAIL_cert_verify;
	case SSL_R_WRONG_VERSION_NUMBER:
	case SSL_R_HTTP_REQUEST:
	case SSL_R_HTTPS_PROXY_REQUEST:
	case SSL_R_UNKNOWN_PROTOCOL:
	case SSL_R_PACKET_LENGTH_TOO_LONG:
	case SSL_R_RECORD_LENGTH_MISMATCH:
	case SSL_R_WRONG_SSL_VERSION:
	case SSL_R_UNEXPECTED_MESSAGE:
	case SSL_R_UNEXPECTED_RECORD:
	case SSL_R_LENGTH_MISMATCH:
	case SSL_R_LENGTH_TOO_SHORT:
	case SSL_R_BAD_PACKET_LENGTH:
		return SOCK_FAIL_not_tls;
	case SSL_R_UNSUPPORTED_PROTOCOL:
	case SSL_R_VERSION_TOO_LOW:
	case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
		return SOCK_FAIL_version;
	case SSL_R_NO_SHARED_CIPHER:
	case SSL_R_NO_SHARED_GROUPS:
	case SSL_R_NO_SUITABLE_KEY_SHARE:
	case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
		return SOCK_FAIL_cipher;
	}
	return alert ? SOCK_FAIL_peer_alert : SOCK_FAIL_protocol;
}

/* Turn a failed SSL_* call (ret <= 0) into a result; handshake: the call
 * was the handshake's. */
static enum sock_rc tls_result(struct sock *s, int ret, bool handshake)
{
	enum sock_rc rc = SOCK_ERROR;
	s->want = 0;
	switch (SSL_get_error(s->ssl, ret)) {
	case SSL_ERROR_WANT_READ:
		s->want = EPOLLIN;
		rc = SOCK_AGAIN;
		break;
	case SSL_ERROR_WANT_WRITE:
		s->want = EPOLLOUT;
		rc = SOCK_AGAIN;
		break;
	case SSL_ERROR_ZERO_RETURN:
		rc = SOCK_EOF;
		break;
	case SSL_ERROR_SYSCALL:
		s->fail = s->sys_errno ? errno_fail(s->sys_errno) :
			  SOCK_FAIL_eof;
		break;
	case SSL_ERROR_SSL:
		s->fail = tls_classify(s, handshake);
		break;
	default:
		s->fail = SOCK_FAIL_protocol;
		break;
	}
	/* The error queue is per thread; leave nothing for the next call. */
	ERR_clear_error();
	return rc;
}

static enum sock_rc tls_handshake(struct sock *s)
{
	s->sys_errno = 0;
	int r = SSL_do_handshake(s->ssl);
	if (r == 1) {
		s->want = 0;
		return SOCK_OK;
	}
	enum sock_rc rc = tls_result(s, r, true);
	if (rc == SOCK_EOF) {
		s->fail = SOCK_FAIL_eof;
		rc = SOCK_ERROR;
	}
	return rc;
}

static enum sock_rc tls_read(struct sock *s, void *buf, size_t len, size_t *n)
{
	s->sys_errno = 0;
	if (SSL_read_ex(s->ssl, buf, len, n) == 1) {
		/* With read-ahead the BIO asks for more than a record; when it
		 * got less and nothing is left buffered (a record, or the
		 * close_notify behind the data), the socket is empty, as after
		 * a short plain read. */
		s->want = s->drained && !SSL_has_pending(s->ssl) && !s->rdhup ?
			  EPOLLIN : 0;
		return SOCK_OK;
	}
	enum sock_rc rc = tls_result(s, 0, false);
	/* A peer that closes without close_notify has still finished. */
	if (rc == SOCK_ERROR && s->fail == SOCK_FAIL_eof)
		rc = SOCK_EOF;
	return rc;
}

static enum sock_rc tls_write(struct sock *s, const void *buf, size_t len,
			      size_t *n)
{
	s->sys_errno = 0;
	if (SSL_write_ex(s->ssl, buf, len, n) == 1) {
		s->want = 0;
		return SOCK_OK;
	}
	enum sock_rc rc = tls_result(s, 0, false);
	/* Once the peer's close_notify is in, OpenSSL reports a send that
	 * failed as the end of the stream (SSL_ERROR_ZERO_RETURN). A write
	 * has no end of stream: it is the socket's error, and taken for
	 * anything else the write would be retried at once, forever. */
	if (rc == SOCK_EOF) {
		s->fail = errno_fail(s->sys_errno ? s->sys_errno : EPIPE);
		rc = SOCK_ERROR;
	}
	return rc;
}

static enum sock_rc tls_shutdown(struct sock *s)
{
	s->sys_errno = 0;
	int r = SSL_shutdown(s->ssl);
	if (r < 0) {
		enum sock_rc rc = tls_result(s, r, false);
		return rc == SOCK_EOF ? SOCK_OK : rc;
	}
	/* close_notify is out; we do not wait for the peer's (0) since the
	 * other direction may still carry data. */
	return plain_shutdown(s);
}

static void tls_close(struct sock *s, bool abort)
{
	SSL_free(s->ssl);	/* frees the BIO too */
	s->ssl = NULL;
	plain_close(s, abort);
}

static const struct sock_ops tls_ops = {
	.name = "tls",
	.handshake = tls_handshake,
	.read = tls_read,
	.write = tls_write,
	.shutdown = tls_shutdown,
	.close = tls_close,
};

int sock_init_tls(struct sock *s, int fd, struct ssl_st *ssl)
{
	pthread_once(&bio_once, bio_method_setup);
	BIO *b = bio_method ? BIO_new(bio_method) : NULL;
	if (!b)
		return -1;
	sock_init_plain(s, fd);
	BIO_set_data(b, s);
	SSL_set_bio(ssl, b, b);
	s->ops = &tls_ops;
	s->ssl = ssl;
	return 0;
}
