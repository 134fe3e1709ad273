/*
 * stream: fixed-size loadgen messages over a TCP connection. Every message
 * is exactly msg bytes (a wire header and zeros), so an echoed byte stream
 * splits back into messages without any other framing. Writes that the
 * socket does not take at once are queued and retried.
 */
#ifndef LOADGEN_STREAM_H
#define LOADGEN_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_MAX_OUT	(16u << 20)	/* queued bytes before giving up */

struct stream {
	int fd;			/* non-blocking, connected */
	size_t msg;		/* message size */
	uint8_t *out, *in;
	size_t olen, ocap, ilen, icap;
};

/* Returns 0, or -1 (ENOMEM). */
int stream_init(struct stream *s, int fd, size_t msg);
void stream_free(struct stream *s);

/* Room for one more zeroed message at the end of the queue, or NULL when
 * STREAM_MAX_OUT bytes wait already (the peer does not read). */
uint8_t *stream_append(struct stream *s);

/* Write what is queued: 1 all written, 0 some left (wait until the socket
 * is writable), -1 the connection failed (errno). */
int stream_flush(struct stream *s);

/* True when bytes wait to be written. */
bool stream_pending(const struct stream *s);

/* Read what has arrived and call fn for each whole message: 0 when the
 * socket is drained, 1 when the peer closed, -1 on an error (errno). At
 * most rounds reads. */
int stream_read(struct stream *s, int rounds,
		void (*fn)(void *arg, const uint8_t *msg, size_t len),
		void *arg);

#endif
