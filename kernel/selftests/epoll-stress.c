// SPDX-License-Identifier: GPL-2.0
/*
 * epoll-stress: producer-side throughput of one epoll instance, in the spirit
 * of the stress-epoll tool quoted on the rwlock-to-spinlock thread (this is
 * our own implementation, not that tool).
 *
 * N producer threads each write to their own eventfd, watched edge-triggered
 * by one epoll instance, so every write runs ep_poll_callback() and takes
 * ep->lock: shared with the other producers on a stock kernel, exclusive on a
 * patched one. One consumer thread drains the instance with epoll_wait()
 * meanwhile, taking ep->lock exclusively on both. The result is the
 * producers' events per millisecond, printed as one JSON object.
 *
 *   epoll-stress [-t THREADS] [-n WRITES_PER_THREAD]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

static int epfd;
static long writes_per_thread = 100000;
static pthread_barrier_t start_line;
static atomic_int producers_left;
static atomic_long consumer_events;
static atomic_long consumer_waits;

static void die(const char *what)
{
	fprintf(stderr, "epoll-stress: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *producer(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint64_t one = 1;

	pthread_barrier_wait(&start_line);
	for (long i = 0; i < writes_per_thread; i++)
		if (write(fd, &one, sizeof(one)) != sizeof(one))
			die("write(eventfd)");
	atomic_fetch_sub(&producers_left, 1);
	return NULL;
}

/* Drains until every producer is done; a timeout keeps the exit check live. */
static void *consumer(void *arg)
{
	struct epoll_event ev[64];

	(void)arg;
	pthread_barrier_wait(&start_line);
	while (atomic_load(&producers_left) > 0) {
		int n = epoll_wait(epfd, ev, 64, 10);

		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		atomic_fetch_add(&consumer_waits, 1);
		if (n > 0)
			atomic_fetch_add(&consumer_events, n);
	}
	return NULL;
}

static long parse_count(const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > max) {
		fprintf(stderr, "epoll-stress: %s '%s': expected 1..%ld\n", opt, s, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS + 1];
	int threads = 4, opt;
	double t0, ms;

	while ((opt = getopt(argc, argv, "t:n:")) != -1) {
		switch (opt) {
		case 't':
			threads = (int)parse_count("-t", optarg, MAX_THREADS);
			break;
		case 'n':
			writes_per_thread = parse_count("-n", optarg, 1000000000L);
			break;
		default:
			fprintf(stderr, "usage: epoll-stress [-t THREADS] [-n WRITES_PER_THREAD]\n");
			return 2;
		}
	}

	epfd = epoll_create1(0);
	if (epfd < 0)
		die("epoll_create1");
	atomic_store(&producers_left, threads);
	if (pthread_barrier_init(&start_line, NULL, threads + 2))
		die("pthread_barrier_init");

	for (int i = 0; i < threads; i++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
		int fd = eventfd(0, EFD_NONBLOCK);

		if (fd < 0)
			die("eventfd");
		ev.data.fd = fd;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
			die("epoll_ctl");
		if (pthread_create(&tids[i], NULL, producer, (void *)(intptr_t)fd))
			die("pthread_create");
	}
	if (pthread_create(&tids[threads], NULL, consumer, NULL))
		die("pthread_create");

	pthread_barrier_wait(&start_line);
	t0 = now_ms();
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	ms = now_ms() - t0;
	pthread_join(tids[threads], NULL);

	printf("{\"bench\": \"epoll-stress\", \"threads\": %d, "
	       "\"writes_per_thread\": %ld, \"events\": %ld, \"ms\": %.3f, "
	       "\"events_per_ms\": %.1f, \"consumer_events\": %ld, "
	       "\"consumer_waits\": %ld}\n",
	       threads, writes_per_thread, threads * writes_per_thread, ms,
	       threads * writes_per_thread / ms, atomic_load(&consumer_events),
	       atomic_load(&consumer_waits));
	return 0;
}
