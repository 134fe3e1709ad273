/* Unit tests for server/sockfile: a unix:///PATH bound where nothing is,
 * over a socket left by a program that is gone, but not over a served
 * socket, a file or a symlink (nothing of theirs touched); with a mode and
 * a group under any umask; the longest path; and the file known by its
 * inode afterwards: removed or replaced, it is not relay's any more, and
 * only relay's own is removed. */
#include "check.h"
#include "sockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/relay-sockfile-XXXXXX", err[512];

static const struct sockfile_perm as_is = { .mode = -1, .gid = (gid_t)-1 };

/* A unix:// address for NAME in the test's directory. */
static struct addr at(const char *name)
{
	char text[300], why[256];
	struct addr a;
	snprintf(text, sizeof(text), "unix://%s/%s", dir, name);
	CHECK_EQ_INT(addr_parse(&a, text, 0, why, sizeof(why)), 0);
	return a;
}

static const char *path_of(const struct addr *a)
{
	return ((const struct sockaddr_un *)&a->sa)->sun_path;
}

/* Bind a new socket at a with p: its fd, or -1 (err, errno). */
static int bind_at(const struct addr *a, const struct sockfile_perm *p,
		   struct sockfile *f)
{
	int fd = addr_listen_socket(a, SOCK_DGRAM, err, sizeof(err));
	CHECK(fd >= 0);
	return sockfile_bind(fd, a, p, f, err, sizeof(err));
}

static void test_replace(void)
{
	struct addr a = at("s");
	struct sockfile f, g;
	int live = bind_at(&a, &as_is, &f);
	CHECK(live >= 0);
	CHECK(strcmp(f.path, path_of(&a)) == 0);
	CHECK_EQ_INT(sockfile_present(&f), 1);

	CHECK_EQ_INT(bind_at(&a, &as_is, &g), -1);
	CHECK_EQ_INT(errno, EADDRINUSE);
	CHECK(strstr(err, path_of(&a)) && strstr(err, "a program serves this address"));
	CHECK_EQ_INT(sockfile_present(&f), 1);

	close(live);		/* the path stays: a stale socket */
	int fd = bind_at(&a, &as_is, &g);
	CHECK(fd >= 0);
	CHECK_EQ_INT(sockfile_present(&f), 0);	/* another inode now */
	CHECK_EQ_INT(sockfile_present(&g), 1);
	sockfile_remove(&f);			/* not ours: stays */
	struct stat st;
	CHECK(lstat(path_of(&a), &st) == 0 && S_ISSOCK(st.st_mode));
	sockfile_remove(&g);
	CHECK(lstat(path_of(&a), &st) < 0 && errno == ENOENT);
	CHECK_EQ_INT(sockfile_present(&g), 0);
	close(fd);

	/* a file that is not a socket, and a symlink to one: refused,
	 * untouched */
	int file = open(path_of(&a), O_CREAT | O_WRONLY, 0600);
	CHECK(file >= 0);
	close(file);
	CHECK_EQ_INT(bind_at(&a, &as_is, &g), -1);
	CHECK(stat(path_of(&a), &st) == 0 && S_ISREG(st.st_mode) &&
	      (st.st_mode & 0777) == 0600);
	struct addr b = at("link");
	CHECK(symlink(path_of(&a), path_of(&b)) == 0);
	CHECK_EQ_INT(bind_at(&b, &as_is, &g), -1);
	CHECK(lstat(path_of(&b), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(stat(path_of(&a), &st) == 0 && S_ISREG(st.st_mode));
	unlink(path_of(&a));
	unlink(path_of(&b));

	/* no such directory */
	struct addr c = at("none/s");
	CHECK_EQ_INT(bind_at(&c, &as_is, &g), -1);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK(strstr(err, "cannot listen: No such file or directory"));
}

/* The mode and the group asked for, whatever the umask: 0 would leave
 * the file wider than asked, 0777 closed to all. */
static void test_perm(void)
{
	const mode_t masks[] = { 0, 022, 077, 0777 };
	gid_t other = getegid() == 0 ? 4321 : getegid();
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		mode_t was = umask(masks[i]);
		struct addr a = at("perm");
		struct sockfile f;
		const struct sockfile_perm p = { .mode = 0660, .gid = other };
		int fd = bind_at(&a, &p, &f);
		CHECK(fd >= 0);
		struct stat st;
		CHECK(lstat(path_of(&a), &st) == 0);
		CHECK(S_ISSOCK(st.st_mode));
		CHECK_EQ_INT(st.st_mode & 07777, 0660);
		CHECK_EQ_INT(st.st_gid, other);
		CHECK_EQ_INT(umask(was), masks[i]);	/* given back */
		sockfile_remove(&f);
		close(fd);

		/* no mode asked for: the umask's, as before */
		umask(masks[i]);
		fd = bind_at(&a, &as_is, &f);
		CHECK(fd >= 0);
		CHECK(lstat(path_of(&a), &st) == 0);
		CHECK_EQ_INT(st.st_mode & 0777, 0777 & ~masks[i]);
		umask(was);
		sockfile_remove(&f);
		close(fd);
	}
	/* a group relay is not in: refused, and no file left */
	if (geteuid() != 0) {
		struct addr a = at("perm");
		struct sockfile f;
		const struct sockfile_perm p = { .mode = 0660, .gid = 0 };
		CHECK_EQ_INT(bind_at(&a, &p, &f), -1);
		CHECK(strstr(err, "unix_group"));
		struct stat st;
		CHECK(lstat(path_of(&a), &st) < 0);
	}
}

/* The longest path a sun_path holds, 107 bytes. */
static void test_longest(void)
{
	char name[120];
	size_t n = 107 - strlen(dir) - 1;
	memset(name, 'x', n);
	name[n] = 0;
	struct addr a = at(name);
	CHECK_EQ_INT(strlen(path_of(&a)), 107);
	struct sockfile f;
	const struct sockfile_perm p = { .mode = 0600, .gid = (gid_t)-1 };
	int fd = bind_at(&a, &p, &f);
	CHECK(fd >= 0);
	CHECK_EQ_INT(strlen(f.path), 107);
	CHECK_EQ_INT(sockfile_present(&f), 1);
	sockfile_remove(&f);
	CHECK_EQ_INT(sockfile_present(&f), 0);
	close(fd);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	struct sockfile none = { .path = "" };
	CHECK_EQ_INT(sockfile_present(&none), 1);
	sockfile_remove(&none);
	test_replace();
	test_perm();
	test_longest();
	CHECK_EQ_INT(rmdir(dir), 0);	/* nothing left behind */
	return check_done();
}
