/*
 * sockfile: a unix:// path bound with its mode and group, and the file
 * known afterwards.
 *
 * bind() makes the socket's file itself, with the permission bits the
 * umask leaves and the caller's group; a mode and a group asked for can
 * only be set after. Done plainly (bind, then chmod and chown the path)
 * that leaves two holes: for a moment the file has the umask's bits and
 * relay's group, which may let in someone the final file would not (a
 * umask of 0002, a member of relay's group); and the path is looked up
 * again, so whoever may write the directory could put a symlink there in
 * between and have relay chmod what it points to. So the socket is bound
 * with the owner's bits alone (the umask masks the rest while bind runs),
 * the path is opened once with O_PATH | O_NOFOLLOW and the file checked
 * to be a socket of relay's, and its group and then its mode are set
 * through that descriptor: the file only ever gains access, once it has
 * its group, and no name is followed twice. (Binding in a private
 * directory and renaming the file into place would close both holes too,
 * but a socket keeps the name it was bound to: its clients would see the
 * replies come from the temporary path.)
 *
 * The umask is the process's: the binding thread must be the only one
 * making files then. relay binds at start, before its threads run, and in
 * the reload thread, which has a file system context of its own
 * (control.c).
 */
#include "sockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Close fd and say why a could not be bound; -1 with errno e. */
static int fail(const struct addr *a, int fd, int e, const char *why,
		char *err, size_t errlen)
{
	char text[ADDR_TEXT_MAX];
	snprintf(err, errlen, "%s: cannot listen: %s%s",
		 addr_format(a, text, sizeof(text)), strerror(e), why);
	close(fd);
	errno = e;
	return -1;
}

/* Whether a's path is a socket nobody serves any more (what a relay that
 * was killed leaves behind): connecting to it is refused. Anything else,
 * a live socket or another file, stays. */
static bool stale(const struct addr *a)
{
	const char *path = ((const struct sockaddr_un *)&a->sa)->sun_path;
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool refused = connect(fd, (const struct sockaddr *)&a->sa, a->salen) < 0
		       && errno == ECONNREFUSED;
	close(fd);
	return refused;
}

/* Note in f which file st is. */
static void identify(struct sockfile *f, const struct statx *st)
{
	f->dev_major = st->stx_dev_major;
	f->dev_minor = st->stx_dev_minor;
	f->ino = st->stx_ino;
	f->has_born = st->stx_mask & STATX_BTIME;
	f->born = f->has_born ? st->stx_btime : (struct statx_timestamp){ 0 };
}

/* bind() with the umask mask for the file it makes. */
static int bind_masked(int fd, const struct addr *a, mode_t mask)
{
	mode_t was = umask(mask);
	int rc = bind(fd, (const struct sockaddr *)&a->sa, a->salen);
	int e = errno;
	umask(was);
	errno = e;
	return rc;
}

int sockfile_bind(int fd, const struct addr *a, const struct sockfile_perm *p,
		  struct sockfile *f, char *err, size_t errlen)
{
	const char *path = ((const struct sockaddr_un *)&a->sa)->sun_path;
	memset(f, 0, sizeof(*f));
	mode_t umask_was = umask(0777);
	umask(umask_was);
	bool set = p->mode >= 0 || p->gid != (gid_t)-1;
	mode_t want = p->mode >= 0 ? (mode_t)p->mode : 0777 & ~umask_was;
	mode_t mask = set ? 0777 & ~(want & 0700) : umask_was;
	int rc = bind_masked(fd, a, mask);
	if (rc < 0 && errno == EADDRINUSE) {
		if (!stale(a) || unlink(path) < 0)
			return fail(a, fd, EADDRINUSE, " (a program serves this "
				    "address, or a file that is not a socket is "
				    "there)", err, errlen);
		rc = bind_masked(fd, a, mask);
	}
	if (rc < 0)
		return fail(a, fd, errno, "", err, errlen);

	int o = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct statx st;
	if (o < 0 || statx(o, "", AT_EMPTY_PATH, STATX_BASIC_STATS |
			   STATX_BTIME, &st) < 0 ||
	    !S_ISSOCK(st.stx_mode) || st.stx_uid != geteuid()) {
		int e = o < 0 ? errno : EEXIST;
		if (o >= 0)
			close(o);
		return fail(a, fd, e, " (the file changed as it was made: "
			    "whoever may write its directory replaced it)",
			    err, errlen);
	}
	snprintf(f->path, sizeof(f->path), "%s", path);
	identify(f, &st);
	/* chmod has no AT_EMPTY_PATH before Linux 6.6 (fchmodat2): the
	 * descriptor's own link in /proc names the file it holds. */
	char self[32];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", o);
	const char *what = NULL;
	if (p->gid != (gid_t)-1 &&
	    fchownat(o, "", (uid_t)-1, p->gid, AT_EMPTY_PATH) < 0)
		what = " (unix_group: relay must be a member of the group)";
	else if (set && chmod(self, want) < 0)
		what = " (unix_mode: set through /proc/self/fd, which must be "
		       "mounted)";
	int e = errno;
	close(o);
	if (!what)
		return fd;
	sockfile_remove(f);
	memset(f, 0, sizeof(*f));
	return fail(a, fd, e, what, err, errlen);
}

int sockfile_present(const struct sockfile *f)
{
	if (!f->path[0])
		return 1;
	struct statx st;
	struct sockfile now = { .path = "" };
	if (statx(AT_FDCWD, f->path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS |
		  STATX_BTIME, &st) < 0)
		return 0;
	identify(&now, &st);
	return now.dev_major == f->dev_major && now.dev_minor == f->dev_minor &&
	       now.ino == f->ino && now.has_born == f->has_born &&
	       now.born.tv_sec == f->born.tv_sec &&
	       now.born.tv_nsec == f->born.tv_nsec;
}

void sockfile_remove(const struct sockfile *f)
{
	/* Whoever may write the directory could still put a file there
	 * between the check and the unlink; it could as well remove ours. */
	if (f->path[0] && sockfile_present(f))
		unlink(f->path);
}
