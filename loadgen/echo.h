/*
 * echo: a UDP echo server (every datagram straight back to its sender), the
 * upstream for tests and benchmarks when relay or sockperf is not wanted.
 * Batches with recvmmsg/sendmmsg; runs until killed. With a service time
 * it is a target whose capacity is known: one server that takes a fixed
 * time per datagram.
 */
#ifndef LOADGEN_ECHO_H
#define LOADGEN_ECHO_H

#include "addr.h"

/* Serve on listen; with service_us > 0 each reply is due service_us after
 * its datagram arrived or after the previous reply was due, whichever is
 * later, and the thread spins until then. Returns an exit status
 * (sysexits) with err filled when it cannot bind; does not return
 * otherwise. */
int echo_serve(const struct addr *listen, int service_us, char *err,
	       size_t errlen);

#endif
