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

#include "newfile.h"

static size_t hb_size(int nloops)
{
	return sizeof(struct heartbeat_file) +
	       (size_t)nloops * sizeof(struct heartbeat_loop);
}

/* The header goes in before the file has its name: a watchdog that opens
 * the name finds a whole heartbeat file or the previous one. */
static void hb_header(struct heartbeat_file *hb, int nloops, int64_t start_ns)
{
	memcpy(hb->magic, HEARTBEAT_MAGIC, 8);
	hb->version = HEARTBEAT_VERSION;
	hb->nloops = (uint32_t)nloops;
	hb->pid = (uint64_t)getpid();
	hb->start_mono_ns = (uint64_t)start_ns;
}

struct heartbeat_file *heartbeat_open(const char *path, int nloops,
				      int64_t start_ns, char *err,
				      size_t errlen)
{
	size_t size = hb_size(nloops);
	void *p;
	char why[4200];
	if (!path) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			snprintf(err, errlen, "heartbeat (memory): %s",
				 strerror(errno));
			return NULL;
		}
		hb_header(p, nloops, start_ns);
		return p;
	}
	struct newfile nf;
	if (newfile_open(&nf, path, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "heartbeat %s", why);
		return NULL;
	}
	p = MAP_FAILED;
	if (ftruncate(nf.fd, (off_t)size) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, nf.fd,
			 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "heartbeat %s: %s", path, strerror(errno));
		newfile_abort(&nf, NULL);
		return NULL;
	}
	hb_header(p, nloops, start_ns);
	if (newfile_commit(&nf, NULL, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "heartbeat %s", why);
		munmap(p, size);
		return NULL;
	}
	return p;
}

void heartbeat_close(struct heartbeat_file *hb)
{
	if (hb)
		munmap(hb, hb_size((int)hb->nloops));
}
