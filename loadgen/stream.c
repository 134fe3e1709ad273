/* stream: byte queues around a non-blocking TCP socket. */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int stream_init(struct stream *s, int fd, size_t msg)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->msg = msg;
	s->icap = msg * 64 > 65536 ? msg * 64 : 65536;
	s->in = malloc(s->icap);
	if (!s->in) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void stream_free(struct stream *s)
{
	free(s->out);
	free(s->in);
	s->out = s->in = NULL;
}

uint8_t *stream_append(struct stream *s)
{
	if (s->olen + s->msg > s->ocap) {
		if (s->olen + s->msg > STREAM_MAX_OUT)
			return NULL;
		size_t cap = s->ocap ? s->ocap * 2 : s->msg * 64;
		while (cap < s->olen + s->msg)
			cap *= 2;
		uint8_t *p = realloc(s->out, cap);
		if (!p)
			return NULL;
		s->out = p;
		s->ocap = cap;
	}
	uint8_t *m = s->out + s->olen;
	memset(m, 0, s->msg);
	s->olen += s->msg;
	return m;
}

int stream_flush(struct stream *s)
{
	size_t done = 0;
	while (done < s->olen) {
		ssize_t n = send(s->fd, s->out + done, s->olen - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		return -1;
	}
	memmove(s->out, s->out + done, s->olen - done);
	s->olen -= done;
	return s->olen == 0;
}

bool stream_pending(const struct stream *s)
{
	return s->olen > 0;
}

int stream_read(struct stream *s, int rounds,
		void (*fn)(void *arg, const uint8_t *msg, size_t len),
		void *arg)
{
	for (int r = 0; r < rounds; r++) {
		ssize_t n = recv(s->fd, s->in + s->ilen, s->icap - s->ilen,
				 MSG_DONTWAIT);
		if (n == 0)
			return 1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		s->ilen += (size_t)n;
		size_t off = 0;
		for (; s->ilen - off >= s->msg; off += s->msg)
			fn(arg, s->in + off, s->msg);
		memmove(s->in, s->in + off, s->ilen - off);
		s->ilen -= off;
	}
	return 0;
}
