/*
 * epoll-falseneg: does epoll_wait() with a zero timeout ever say "nothing
 * ready" while an event is ready? Upstream's "eventpoll: Fix epoll_wait()
 * report false negative" (a seqcount around the ready list's hand-over to
 * a scan) closed such a window; Debian's 6.1 kernels do not carry it.
 *
 * One epoll instance watches --events eventfds, each written once and
 * never read: level-triggered, every one of them is ready for the whole
 * run. --threads threads, one per CPU in turn, call epoll_wait(ep, ev, 1,
 * 0) for --seconds. Each call takes one event, so each scan moves the
 * ready list aside and puts it back, which is where a lockless reader on
 * another CPU can find it empty. Any call that returns 0 is a false
 * negative. One JSON object on stdout: calls, false_negatives and their
 * rate (table.py bounds it over a kernel's passes).
 *
 *   epoll-falseneg [--threads N] [--events N] [--seconds S]
 *
 * Exit status: 0 none seen; 1 false negatives seen; 64 bad command line;
 * 71 the system refused a resource.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_EVENTS 1024

static int ep;
static atomic_bool stop;

struct waiter {
	pthread_t th;
	int cpu;
	uint64_t calls, misses, errors;
};

static void *wait_loop(void *arg)
{
	struct waiter *w = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	/* Pinning spreads the waiters over the CPUs; where it is refused
	 * they still run, wherever the scheduler puts them. */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct epoll_event ev;
		int n = epoll_wait(ep, &ev, 1, 0);
		w->calls++;
		if (n == 0)
			w->misses++;
		else if (n < 0 && errno != EINTR)
			w->errors++;
	}
	return NULL;
}

static int number(const char *flag, const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "epoll-falseneg: --%s '%s': expected a whole number in %ld..%ld\n",
			flag, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", 1, 0, 't' }, { "events", 1, 0, 'e' }, { "seconds", 1, 0, 's' }, { 0 } };
	long threads = 4, events = 2, seconds = 10;
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = ch == 't' ? number("threads", optarg, 2, MAX_THREADS, &threads) :
			  ch == 'e' ? number("events", optarg, 1, MAX_EVENTS, &events) :
			  ch == 's' ? number("seconds", optarg, 1, 3600, &seconds) : -1;
		if (bad)
			goto usage;
	}
	if (optind != argc)
		goto usage;

	ep = epoll_create1(0);
	if (ep < 0) {
		perror("epoll-falseneg: epoll_create1");
		return EX_OSERR;
	}
	for (long i = 0; i < events; i++) {
		int fd = eventfd(1, 0);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)i };
		if (fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			perror("epoll-falseneg: eventfd");
			return EX_OSERR;
		}
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct waiter w[MAX_THREADS] = { 0 };
	for (long i = 0; i < threads; i++) {
		w[i].cpu = (int)(i % (ncpu > 0 ? ncpu : 1));
		if (pthread_create(&w[i].th, NULL, wait_loop, &w[i])) {
			fprintf(stderr, "epoll-falseneg: cannot start thread %ld\n", i);
			return EX_OSERR;
		}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sleep((unsigned)seconds);
	atomic_store(&stop, true);
	uint64_t calls = 0, misses = 0, errors = 0;
	for (long i = 0; i < threads; i++) {
		pthread_join(w[i].th, NULL);
		calls += w[i].calls;
		misses += w[i].misses;
		errors += w[i].errors;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("{\"threads\": %ld, \"events\": %ld, \"cpus\": %ld, \"elapsed_s\": %.3f, "
	       "\"calls\": %llu, \"false_negatives\": %llu, \"errors\": %llu, "
	       "\"rate\": %.3g}\n",
	       threads, events, ncpu, elapsed, (unsigned long long)calls,
	       (unsigned long long)misses, (unsigned long long)errors,
	       calls ? (double)misses / (double)calls : 0.0);
	if (errors) {
		fprintf(stderr, "epoll-falseneg: %llu calls failed\n", (unsigned long long)errors);
		return EX_OSERR;
	}
	return misses ? 1 : 0;
usage:
	fprintf(stderr, "usage: epoll-falseneg [--threads 2-%d] [--events 1-%d] [--seconds 1-3600]\n",
		MAX_THREADS, MAX_EVENTS);
	return EX_USAGE;
}
