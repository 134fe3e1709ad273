/* newfile: a temporary file next to the target, renamed over it. */
#include "newfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(struct newfile *nf, FILE *f, const char *what, int e,
		char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s%s", nf->path, what, strerror(e));
	newfile_abort(nf, f);
	return -1;
}

int newfile_open(struct newfile *nf, const char *path, char *err,
		 size_t errlen)
{
	nf->fd = -1;
	nf->tmp[0] = 0;
	if ((size_t)snprintf(nf->path, sizeof(nf->path), "%s", path) >=
		    sizeof(nf->path) ||
	    (size_t)snprintf(nf->tmp, sizeof(nf->tmp), "%s.XXXXXX", path) >=
		    sizeof(nf->tmp)) {
		nf->tmp[0] = 0;
		snprintf(err, errlen, "%.200s...: name too long", path);
		return -1;
	}
	nf->fd = mkostemp(nf->tmp, O_CLOEXEC);
	if (nf->fd < 0) {
		nf->tmp[0] = 0;
		return fail(nf, NULL, "cannot create a file next to it: ",
			    errno, err, errlen);
	}
	/* mkostemp makes it 0600; readers (a watchdog, a report) are not
	 * necessarily us */
	if (fchmod(nf->fd, 0644) < 0)
		return fail(nf, NULL, "", errno, err, errlen);
	return 0;
}

FILE *newfile_stream(struct newfile *nf, char *err, size_t errlen)
{
	FILE *f = fdopen(nf->fd, "w");
	if (!f)
		fail(nf, NULL, "", errno, err, errlen);
	return f;
}

int newfile_commit(struct newfile *nf, FILE *f, char *err, size_t errlen)
{
	errno = 0;
	int bad = f ? ferror(f) : 0;
	int rc = f ? fclose(f) : close(nf->fd);
	nf->fd = -1;
	if (rc != 0 || bad)
		return fail(nf, NULL, "", errno ? errno : EIO, err, errlen);
	if (rename(nf->tmp, nf->path) < 0)
		return fail(nf, NULL, "cannot replace it: ", errno, err,
			    errlen);
	nf->tmp[0] = 0;
	return 0;
}

void newfile_abort(struct newfile *nf, FILE *f)
{
	if (f)
		fclose(f);
	else if (nf->fd >= 0)
		close(nf->fd);
	nf->fd = -1;
	if (nf->tmp[0])
		unlink(nf->tmp);
	nf->tmp[0] = 0;
}

int newfile_write(const char *path, int (*put)(FILE *f, const void *arg),
		  const void *arg, char *err, size_t errlen)
{
	struct newfile nf;
	if (newfile_open(&nf, path, err, errlen) < 0)
		return -1;
	FILE *f = newfile_stream(&nf, err, errlen);
	if (!f)
		return -1;
	errno = 0;
	if (put(f, arg) < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 errno ? strerror(errno) : "write error");
		newfile_abort(&nf, f);
		return -1;
	}
	return newfile_commit(&nf, f, err, errlen);
}
