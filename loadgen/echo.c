/* echo: bind, then reflect batches of datagrams forever. */
#include "echo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sysexits.h>
#include <unistd.h>

#define BATCH	64
#define BUFLEN	65536

int echo_serve(const struct addr *listen, char *err, size_t errlen)
{
	static char bufs[BATCH][BUFLEN];
	struct sockaddr_storage peers[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char text[ADDR_TEXT_MAX];
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
	if (bind(fd, (const struct sockaddr *)&listen->sa, listen->salen) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s",
			 addr_format(listen, text, sizeof(text)), strerror(errno));
		close(fd);
		return EX_UNAVAILABLE;
	}
	fprintf(stderr, "loadgen echo: listening on %s\n",
		addr_format(listen, text, sizeof(text)));
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = BUFLEN;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &peers[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(peers[i]);
		}
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++)
			iov[i].iov_len = msgs[i].msg_len;
		for (int done = 0; done < n;) {
			int r = sendmmsg(fd, msgs + done, (unsigned)(n - done), 0);
			done += r > 0 ? r : 1;	/* a failed datagram is dropped */
		}
	}
}
