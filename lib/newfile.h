/*
 * newfile: write a file under its final name without ever opening that
 * name. The data goes to a fresh temporary file next to it (O_EXCL, a
 * random name), which then replaces the name with rename(2). Whatever was
 * at the name before -- a symlink to /etc/shadow, a hard link, a file of
 * someone else's -- is replaced as a directory entry, never followed or
 * truncated, and a reader sees the old file or the whole new one.
 */
#ifndef RELAY_NEWFILE_H
#define RELAY_NEWFILE_H

#include <stddef.h>
#include <stdio.h>

struct newfile {
	char path[4096];	/* the final name */
	char tmp[4096];		/* the temporary one, "" once gone */
	int fd;			/* the temporary file, mode 0644 */
};

/* Create the temporary file for path. Returns 0, or -1 with err filled
 * ("PATH: reason"). */
int newfile_open(struct newfile *nf, const char *path, char *err,
		 size_t errlen);

/* The temporary file as a stdio stream (nf->fd then belongs to it and
 * newfile_commit closes it). NULL on failure, with err filled. */
FILE *newfile_stream(struct newfile *nf, char *err, size_t errlen);

/* Close the file (f, or nf->fd when f is NULL) and move it to its final
 * name. Returns 0; -1 with err filled, and the temporary file removed, if
 * a write or the rename failed. */
int newfile_commit(struct newfile *nf, FILE *f, char *err, size_t errlen);

/* Give up: close and remove the temporary file. */
void newfile_abort(struct newfile *nf, FILE *f);

/* The whole sequence for a stdio writer: put(f, arg) writes the content
 * (returns < 0 on failure). Returns 0, or -1 with err filled. */
int newfile_write(const char *path, int (*put)(FILE *f, const void *arg),
		  const void *arg, char *err, size_t errlen);

#endif
