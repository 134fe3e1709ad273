/*
 * echo: a UDP echo server (every datagram straight back to its sender), the
 * upstream for tests and benchmarks when relay or sockperf is not wanted.
 * Batches with recvmmsg/sendmmsg; runs until killed.
 */
#ifndef LOADGEN_ECHO_H
#define LOADGEN_ECHO_H

#include "addr.h"

/* Serve on listen. Returns an exit status (sysexits) with err filled when
 * it cannot bind; does not return otherwise. */
int echo_serve(const struct addr *listen, char *err, size_t errlen);

#endif
