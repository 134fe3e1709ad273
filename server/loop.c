/*
 * loop: epoll, edge-triggered. loop_add asks for EPOLLIN only (stream
 * connections choose theirs with loop_add_events and loop_mod);
 * EPOLLERR and EPOLLHUP are always reported and reach the handler in events
 * (a connected UDP socket reports an ICMP port unreachable as EPOLLERR).
 */
#include "loop.h"

#include <errno.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

int loop_init(struct loop *l)
{
	l->again_head = NULL;
	l->again_run = NULL;
	l->wake_ns = 0;
	l->idle_ns = 0;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -1 : 0;
}

void loop_free(struct loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

int loop_add(struct loop *l, int fd, struct loop_handler *h)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = h };
	h->again = false;
	h->next_again = NULL;
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int loop_add_events(struct loop *l, int fd, struct loop_handler *h,
		    uint32_t events)
{
	struct epoll_event ev = { .events = events | EPOLLET, .data.ptr = h };
	h->again = false;
	h->next_again = NULL;
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int loop_mod(struct loop *l, int fd, struct loop_handler *h, uint32_t events)
{
	struct epoll_event ev = { .events = events | EPOLLET, .data.ptr = h };
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void loop_del(struct loop *l, int fd, struct loop_handler *h)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (!h->again)
		return;
	struct loop_handler **lists[2] = { &l->again_head, &l->again_run };
	for (int i = 0; i < 2; i++)
		for (struct loop_handler **p = lists[i]; *p; p = &(*p)->next_again)
			if (*p == h) {
				*p = h->next_again;
				h->again = false;
				return;
			}
}

void loop_again(struct loop *l, struct loop_handler *h)
{
	if (h->again)
		return;
	h->again = true;
	h->next_again = l->again_head;
	l->again_head = h;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	struct epoll_event ev[LOOP_MAX_EVENTS];
	bool blocking = !l->again_head && timeout_ms != 0;
	int64_t t0 = blocking ? clock_ns(CLOCK_MONOTONIC) : 0;
	int n = epoll_wait(l->epfd, ev, LOOP_MAX_EVENTS, blocking ? timeout_ms : 0);
	if (blocking)
		l->idle_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	/* Only a wait that could sleep measures a wake-up. */
	l->wake_ns = blocking && n > 0 ? clock_ns(CLOCK_REALTIME) : 0;
	for (int i = 0; i < n; i++) {
		struct loop_handler *h = ev[i].data.ptr;
		if (h->fn(l, h, ev[i].events))
			loop_again(l, h);
	}
	/* Run what is queued; handlers queued again while this runs wait for
	 * the next round, after the next epoll_wait (which then does not
	 * block). A handler deleted meanwhile is unlinked by loop_del. */
	l->again_run = l->again_head;
	l->again_head = NULL;
	while (l->again_run) {
		struct loop_handler *h = l->again_run;
		l->again_run = h->next_again;
		h->again = false;
		if (h->fn(l, h, EPOLLIN))
			loop_again(l, h);
	}
	return n;
}
