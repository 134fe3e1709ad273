/*
 * notify: sd_notify where we have libsystemd, else the same datagram.
 */
#include "notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>

void notify_send(const char *state)
{
	sd_notify(0, state);
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;
	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}
#else
#include <sys/socket.h>
#include <sys/un.h>

void notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (!path || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sun.sun_path))
		return;
	strcpy(sun.sun_path, path);
	if (path[0] == '@')	/* abstract namespace */
		sun.sun_path[0] = 0;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun,
	       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path)));
	close(fd);
}

uint64_t notify_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	if (!usec || (pid && strtol(pid, NULL, 10) != getpid()))
		return 0;
	return strtoull(usec, NULL, 10);
}
#endif
