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
#include <sys/stat.h>
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

/* The reader. */

int heartbeat_map_open(struct heartbeat_map *b, const char *path, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "heartbeat %s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 ||
	    (size_t)st.st_size < sizeof(struct heartbeat_file) + sizeof(struct heartbeat_loop)) {
		snprintf(err, errlen, "heartbeat %s: shorter than a relay heartbeat", path);
		close(fd);
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "heartbeat %s: mmap: %s", path, strerror(errno));
		return -1;
	}
	const struct heartbeat_file *h = m;
	size_t need = sizeof(*h) + (size_t)h->nloops * sizeof(h->loop[0]);
	if (memcmp(h->magic, HEARTBEAT_MAGIC, 8) != 0 || h->version != HEARTBEAT_VERSION ||
	    h->nloops < 1 || need > (size_t)st.st_size) {
		snprintf(err, errlen, "heartbeat %s: not a version %d relay heartbeat",
			 path, HEARTBEAT_VERSION);
		munmap(m, (size_t)st.st_size);
		return -1;
	}
	b->map = m;
	b->len = (size_t)st.st_size;
	return 0;
}

/* With several loops the relay has made progress only when every loop has:
 * the oldest loop's last update is what counts. Its mono_ns only grows, so
 * it serves as the progress counter too. */
void heartbeat_map_read(const struct heartbeat_map *b, uint64_t *progress, int64_t *mono_ns)
{
	const struct heartbeat_file *h = b->map;
	uint64_t oldest = UINT64_MAX;
	for (uint32_t i = 0; i < h->nloops; i++) {
		uint64_t ns = __atomic_load_n(&h->loop[i].mono_ns, __ATOMIC_ACQUIRE);
		if (ns < oldest)
			oldest = ns;
	}
	*progress = oldest;
	*mono_ns = (int64_t)oldest;
}

int heartbeat_map_oldest_tid(const struct heartbeat_map *b)
{
	const struct heartbeat_file *h = b->map;
	uint32_t oldest = 0;
	for (uint32_t i = 1; i < h->nloops; i++)
		if (__atomic_load_n(&h->loop[i].mono_ns, __ATOMIC_ACQUIRE) <
		    __atomic_load_n(&h->loop[oldest].mono_ns, __ATOMIC_ACQUIRE))
			oldest = i;
	return h->loop[oldest].pid;
}

int64_t heartbeat_map_start_ns(const struct heartbeat_map *b)
{
	return (int64_t)((const struct heartbeat_file *)b->map)->start_mono_ns;
}

void heartbeat_map_close(struct heartbeat_map *b)
{
	if (b->map)
		munmap((void *)b->map, b->len);
	b->map = NULL;
}
