/*
 * sockfile: the file of a unix:///PATH listener. It is bound with the mode
 * and group asked for (unix_mode, unix_group) without a moment of wider
 * access, takes the place of a socket nobody serves any more, and is known
 * afterwards by its device, inode and birth time (a file system such as
 * ext4 gives a freed inode's number to the next file made): relay removes
 * only the file it made (when the listener goes, at exit) and sees when
 * someone removed or replaced it.
 */
#ifndef RELAY_SOCKFILE_H
#define RELAY_SOCKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include "addr.h"

/* A socket file relay made; path "" for none (an abstract name, IP). */
struct sockfile {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	struct statx_timestamp born;	/* where the file system keeps it */
	bool has_born;
};

/* What the file is made with. */
struct sockfile_perm {
	int mode;		/* permission bits; -1: what the umask leaves */
	gid_t gid;		/* its group; (gid_t)-1: the caller's, as for
				 * chown(2) */
};

/* Bind the AF_UNIX socket fd to a's path with p's mode and group. A file
 * at the path is replaced only when it is a socket nobody serves (what a
 * relay that was killed leaves). Changes the process's umask while it
 * binds: call it where no other thread creates files (see sockfile.c).
 * Returns fd with f filled, or closes fd and returns -1 with err naming
 * the address and why, errno kept. */
int sockfile_bind(int fd, const struct addr *a, const struct sockfile_perm *p,
		  struct sockfile *f, char *err, size_t errlen);

/* 1 when f's path still holds the file relay bound there (or f is none),
 * 0 when it was removed or replaced. */
int sockfile_present(const struct sockfile *f);

/* Remove f's file if its path still holds it; nothing else is touched. */
void sockfile_remove(const struct sockfile *f);

#endif
