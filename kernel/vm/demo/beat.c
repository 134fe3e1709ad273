#include "beat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/heartbeat.h"

int beat_open(struct beat *b, const char *path, char *err, size_t errlen)
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
void beat_read(const struct beat *b, uint64_t *progress, int64_t *mono_ns)
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

int beat_oldest_tid(const struct beat *b)
{
	const struct heartbeat_file *h = b->map;
	uint32_t oldest = 0;
	for (uint32_t i = 1; i < h->nloops; i++)
		if (__atomic_load_n(&h->loop[i].mono_ns, __ATOMIC_ACQUIRE) <
		    __atomic_load_n(&h->loop[oldest].mono_ns, __ATOMIC_ACQUIRE))
			oldest = i;
	return h->loop[oldest].pid;
}

int64_t beat_start_ns(const struct beat *b)
{
	return (int64_t)((const struct heartbeat_file *)b->map)->start_mono_ns;
}

void beat_close(struct beat *b)
{
	if (b->map)
		munmap((void *)b->map, b->len);
	b->map = NULL;
}
