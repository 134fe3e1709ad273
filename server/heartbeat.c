/*
 * heartbeat: the file is sized and mapped once at start-up; after that the
 * loops only store into the mapping (mlockall keeps it resident).
 */
#include "heartbeat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t hb_size(int nloops)
{
	return sizeof(struct heartbeat_file) +
	       (size_t)nloops * sizeof(struct heartbeat_loop);
}

struct heartbeat_file *heartbeat_open(const char *path, int nloops,
				      int64_t start_ns, char *err,
				      size_t errlen)
{
	size_t size = hb_size(nloops);
	void *p = MAP_FAILED;
	int e = 0;
	if (!path) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		e = errno;
	} else {
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			snprintf(err, errlen, "heartbeat %s: %s", path,
				 strerror(errno));
			return NULL;
		}
		if (ftruncate(fd, (off_t)size) == 0)
			p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, 0);
		e = errno;
		close(fd);
	}
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "heartbeat %s: %s", path ? path : "(memory)",
			 strerror(e));
		return NULL;
	}
	struct heartbeat_file *hb = p;
	memcpy(hb->magic, HEARTBEAT_MAGIC, 8);
	hb->version = HEARTBEAT_VERSION;
	hb->nloops = (uint32_t)nloops;
	hb->pid = (uint64_t)getpid();
	hb->start_mono_ns = (uint64_t)start_ns;
	return hb;
}

void heartbeat_close(struct heartbeat_file *hb)
{
	if (hb)
		munmap(hb, hb_size((int)hb->nloops));
}
