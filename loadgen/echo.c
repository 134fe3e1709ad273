/* echo: bind, then reflect batches of datagrams forever. */
#include "echo.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define BATCH	64
#define BUFLEN	65536

/* Send the n datagrams at msgs back; a failed one is dropped. */
static void reflect(int fd, struct mmsghdr *msgs, int n)
{
	for (int done = 0; done < n;) {
		int r = sendmmsg(fd, msgs + done, (unsigned)(n - done), 0);
		done += r > 0 ? r : 1;
	}
}

/* Reply to each of the n datagrams at msgs when it is due: the service
 * time after its arrival (at[i], the kernel's CLOCK_REALTIME receive time;
 * 0: unknown, now) or after the previous reply was due (*due),
 * whichever is later. Time the thread spends receiving and sending, or
 * does not run at all, counts as service time spent, so the capacity is
 * 1e6/service_us datagrams per second on any host whose cost per datagram
 * is below the service time; a busy host delays replies, no more. */
static void serve(int fd, struct mmsghdr *msgs, const int64_t *at, int n,
		  int64_t service_ns, int64_t *due)
{
	int64_t off = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++) {
		int64_t t = at[i] ? at[i] - off : clock_ns(CLOCK_MONOTONIC);
		*due = (t > *due ? t : *due) + service_ns;
		while (clock_ns(CLOCK_MONOTONIC) < *due)
			;	/* busy, as a server computing its reply */
		reflect(fd, msgs + i, 1);
	}
}

int echo_serve(const struct addr *listen, int service_us, char *err,
	       size_t errlen)
{
	static char bufs[BATCH][BUFLEN];
	static char ctl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct sockaddr_storage peers[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char text[ADDR_TEXT_MAX];
	int64_t due = 0;
	int fd = socket(listen->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int one = 1, sz = 4 << 20;
	if (fd < 0) {
		snprintf(err, errlen, "cannot open a UDP socket: %s",
			 strerror(errno));
		return EX_OSERR;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (service_us)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&listen->sa, listen->salen) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s",
			 addr_format(listen, text, sizeof(text)), strerror(errno));
		close(fd);
		return EX_UNAVAILABLE;
	}
	fprintf(stderr, "loadgen echo: listening on %s\n",
		addr_format(listen, text, sizeof(text)));
	if (service_us)
		fprintf(stderr, "loadgen echo: %d us per datagram, capacity "
			"%.0f datagrams per second\n", service_us,
			1e6 / service_us);
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = BUFLEN;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &peers[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(peers[i]);
			msgs[i].msg_hdr.msg_control = ctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		int64_t at[BATCH];
		for (int i = 0; i < n; i++) {
			iov[i].iov_len = msgs[i].msg_len;
			/* the reply goes without the receive time */
			at[i] = clock_rx_stamp_ns(&msgs[i].msg_hdr);
			msgs[i].msg_hdr.msg_control = NULL;
			msgs[i].msg_hdr.msg_controllen = 0;
		}
		if (service_us)
			serve(fd, msgs, at, n, service_us * 1000LL, &due);
		else
			reflect(fd, msgs, n);
	}
}
