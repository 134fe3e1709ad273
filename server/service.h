/*
 * service: relay as a running service. Start-up in an order where
 * everything the operator can fix (ports in use, the admin port) fails
 * before any loop thread runs, so a failed start leaves nothing behind;
 * then memory is locked and the loops go real-time; then systemd hears
 * READY=1. The main thread stays non-real-time, off the loops' CPUs, and
 * runs an event loop for signals (signalfd), the admin endpoint, systemd's
 * STATUS= and its watchdog; reloads run beside it (control.h).
 */
#ifndef RELAY_SERVICE_H
#define RELAY_SERVICE_H

#include "control.h"

/* Run the configuration ctl holds (loaded, TLS made) until SIGTERM or
 * SIGINT; drain, write the stats file. Returns the exit status. */
int service_run(struct control *ctl);

#endif
