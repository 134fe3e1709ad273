/*
 * libFuzzer target for what loadgen does with the bytes the target sends
 * back (loadgen/sender.c over wire.c, track.c and stream.c): a target may
 * echo anything, including a forged header with this run's id (it saw it
 * in every datagram). Whatever comes back is a reply, a foreign datagram
 * or a duplicate, never a crash, an overflow or a latency below zero.
 *
 * Input: byte 0 picks the path. Even: datagrams, each a length byte and
 * that many bytes. Odd: a TCP byte stream of messages of 40 + byte 1 % 64
 * bytes (stream_read over a socketpair, then the rest of the input).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../loadgen/sender.h"
#include "../../loadgen/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RUN_ID		0x52454c59u	/* the seeds' run id */
#define PACKETS		256
#define START_NS	(1000 * 1000000000LL)
#define LAST_SEND_NS	(START_NS + 1000000000LL)
#define NOW_NS		(LAST_SEND_NS + 500000000LL)

/* A sender as sender_start leaves it, without its thread and sockets:
 * the run started at START_NS, sent PACKETS, the last at LAST_SEND_NS.
 * The histograms are made once and emptied for each input. */
static void fake_sender(struct sender *s)
{
	static struct hist corrected, uncorrected;
	if (!corrected.counts && (hist_init_us(&corrected) < 0 ||
				  hist_init_us(&uncorrected) < 0))
		abort();
	hist_reset(&corrected);
	hist_reset(&uncorrected);
	memset(s, 0, sizeof(*s));
	s->corrected = corrected;
	s->uncorrected = uncorrected;
	s->c.run_id = RUN_ID;
	s->c.timeout_ns = 200000000;
	s->sched.start_ns = START_NS;
	s->sched.next = s->sched.count = PACKETS;
	s->last_send_ns = LAST_SEND_NS;
	if (track_init(&s->track, PACKETS) < 0)
		abort();
}

static void on_message(void *arg, const uint8_t *msg, size_t len)
{
	sender_reply(arg, msg, len, NOW_NS);
}

static void datagrams(struct sender *s, const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		size_t len = *p++;
		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		sender_reply(s, p, len, NOW_NS);
		p += len;
	}
}

static void stream(struct sender *s, const uint8_t *p, const uint8_t *end)
{
	if (p == end)
		return;
	size_t msg = WIRE_HDR_LEN + *p++ % 64;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	if (p < end && write(sv[1], p, (size_t)(end - p)) != end - p)
		abort();	/* 4096 bytes at most: the socket takes them */
	close(sv[1]);
	struct stream st;
	if (stream_init(&st, sv[0], msg) < 0)
		abort();
	while (stream_read(&st, 4, on_message, s) == 0)
		;
	stream_free(&st);
	close(sv[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sender s;
	if (size < 1)
		return 0;
	fake_sender(&s);
	if (data[0] & 1)
		stream(&s, data + 1, data + size);
	else
		datagrams(&s, data + 1, data + size);
	/* every reply counted once, in both histograms, none below zero */
	uint64_t got = s.track.received;
	if (got > PACKETS || hist_count(&s.corrected) != got ||
	    hist_count(&s.uncorrected) != got ||
	    hist_min(&s.corrected) < 0 || hist_min(&s.uncorrected) < 0 ||
	    s.track.highest > PACKETS)
		abort();
	track_free(&s.track);
	return 0;
}
