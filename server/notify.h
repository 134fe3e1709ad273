/*
 * notify: the systemd service protocol (READY=1, STATUS=, WATCHDOG=1,
 * STOPPING=1). With libsystemd it is sd_notify; the static build speaks
 * the datagram to $NOTIFY_SOCKET itself (one sendto). Without
 * $NOTIFY_SOCKET every call does nothing.
 */
#ifndef RELAY_NOTIFY_H
#define RELAY_NOTIFY_H

#include <stdint.h>

/* Send one state string ("READY=1\nSTATUS=..."). */
void notify_send(const char *state);

/* The watchdog interval systemd expects pings within, in microseconds, or
 * 0 when no watchdog is set for this process. */
uint64_t notify_watchdog_usec(void);

#endif
