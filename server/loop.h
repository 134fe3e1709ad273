/*
 * loop: the epoll backend of a loop thread, behind a narrow API. Sockets are
 * registered edge-triggered with a handler; a handler that stopped before
 * draining its socket (it bounds its work so the timer is never starved)
 * asks to be called again, and the loop does that after the other ready
 * handlers, without a system call, since edge-triggered epoll will not
 * report that socket again.
 */
#ifndef RELAY_LOOP_H
#define RELAY_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The object that embeds member ptr. */
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

struct loop;
struct loop_handler;

/* Called with the epoll events (EPOLLIN, EPOLLERR, ...). Returns true when
 * the handler left work undone and wants to be called again soon. */
typedef bool loop_fn(struct loop *l, struct loop_handler *h, uint32_t events);

/* Embed in the object a file descriptor belongs to. */
struct loop_handler {
	loop_fn *fn;
	bool again;		/* queued on the loop's again list */
	struct loop_handler *next_again;
};

#define LOOP_MAX_EVENTS 64

struct loop {
	int epfd;
	int64_t wake_ns;	/* CLOCK_REALTIME when a blocking epoll_wait
				 * returned; the handler that uses it zeroes it */
	int64_t idle_ns;	/* CLOCK_MONOTONIC time blocked in epoll_wait */
	struct loop_handler *again_head;	/* to run next round */
	struct loop_handler *again_run;		/* running this round */
};

/* Create the epoll instance. Returns 0, or -1 with errno. */
int loop_init(struct loop *l);

/* Release it (registered descriptors are the caller's to close). */
void loop_free(struct loop *l);

/* Watch fd for input (edge-triggered), calling h. Returns 0 or -1/errno. */
int loop_add(struct loop *l, int fd, struct loop_handler *h);

/* Watch fd for events (EPOLLIN, EPOLLOUT, EPOLLRDHUP or several; may be 0
 * for errors and hang-ups only), edge-triggered, calling h. Returns 0 or
 * -1/errno. */
int loop_add_events(struct loop *l, int fd, struct loop_handler *h,
		    uint32_t events);

/* Change what fd is watched for. A readiness that already holds is
 * reported at once. Returns 0 or -1/errno. */
int loop_mod(struct loop *l, int fd, struct loop_handler *h, uint32_t events);

/* Stop watching fd and forget h if it was queued to run again. */
void loop_del(struct loop *l, int fd, struct loop_handler *h);

/* Queue h to run once more after the current events. */
void loop_again(struct loop *l, struct loop_handler *h);

/* Wait up to timeout_ms (0 when handlers are queued to run again), run the
 * handlers of what is ready, then those queued. Returns the number of
 * epoll events, or -1 with errno (EINTR is not an error: returns 0). */
int loop_run_once(struct loop *l, int timeout_ms);

#endif
