#include "clock.h"

struct timespec clock_ns_ts(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

int64_t clock_rx_stamp_ns(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int64_t ns = clock_cmsg_ns(c);
		if (ns)
			return ns;
	}
	return 0;
}
