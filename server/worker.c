/*
 * worker: the loop thread. Its tick (a periodic CLOCK_MONOTONIC timerfd in
 * the same epoll set as the sockets) expires flows, closes statistics
 * windows, publishes the heartbeat and measures its own lateness: a tick
 * handled late means the thread was kept from running, whatever the reason.
 */
#include "worker.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "rt.h"
#include "tls.h"

#define STACK_SIZE	(4 * 1024 * 1024)	/* static TLS lives here too */
#define STACK_PREFAULT	(256 * 1024)

_Static_assert(STATS_MAX_LISTEN == CONF_MAX_LISTEN, "a stats slot each");

static sem_t started_sem;
static pthread_once_t sem_once = PTHREAD_ONCE_INIT;
static void sem_setup(void) { sem_init(&started_sem, 0, 0); }

static bool any_pending(struct worker *w)
{
	return w->tcp.nconns > 0 || udp_pending(&w->udp);
}

static bool on_tick(struct loop *l, struct loop_handler *h, uint32_t events)
{
	struct worker *w = container_of(h, struct worker, tick_h);
	struct stats *s = &w->stats;
	uint64_t exp;
	(void)l;
	(void)events;
	if (read(w->tfd, &exp, sizeof(exp)) != sizeof(exp))
		return false;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	/* Late by the time since the first expiry we had not handled. */
	int64_t late = now - w->next_tick_ns;
	w->next_tick_ns += (int64_t)exp * w->tick_us * 1000;
	if (now >= s->win_end_ns)
		udp_count_drops(&w->udp);
	stats_roll_window(s, now, false);
	stats_record_tick(s, late > 0 ? late / 1000 : 0);
	stats_add(&s->counter[S_ticks], 1);
	if (exp > 1)
		stats_add(&s->counter[S_ticks_missed], exp - 1);

	udp_tick(&w->udp, now);

	if (w->realtime) {
		int change = budget_check(&w->budget, now, w->loop.idle_ns);
		stats_add(&s->counter[S_rt_demotions], change > 0);
		stats_add(&s->counter[S_ticks_demoted], w->budget.demoted);
	}
	tcp_tick(&w->tcp);
	heartbeat_beat(w->hb, now, s->counter[S_ticks],
		       s->counter[S_rx_packets] + s->counter[S_reply_packets]);
	if (w->drain_deadline && (now >= w->drain_deadline || !any_pending(w)))
		w->stop = true;
	return false;
}

static void remove_listener(struct worker *w, int id)
{
	tcp_remove_listener(&w->tcp, id);
	udp_remove_listener(&w->udp, id);
}

static int add_listener(struct worker *w, int id, int fd,
			enum addr_kind kind)
{
	if (addr_socktype(kind) == SOCK_STREAM)
		return tcp_add_listener(&w->tcp, id, fd, kind == ADDR_TLS);
	return udp_add_listener(&w->udp, id, fd);
}

/* The states of a command: worker_command posts it; the loop takes it
 * from the mailbox, applies it and marks it done, unless the poster gave
 * up on it first (abandoned), and then frees it. */
enum { CMD_POSTED, CMD_DONE, CMD_ABANDONED };

static bool on_command(struct loop *l, struct loop_handler *h, uint32_t events)
{
	struct worker *w = container_of(h, struct worker, cmd_h);
	uint64_t v;
	(void)l;
	(void)events;
	if (read(w->efd, &v, sizeof(v)) != sizeof(v))
		return false;
	struct worker_cmd *c = __atomic_exchange_n(&w->cmd, NULL, __ATOMIC_ACQUIRE);
	if (!c)
		return false;
	udp_count_drops(&w->udp);
	for (int i = 0; i < c->nremove; i++)
		remove_listener(w, c->remove_id[i]);
	for (int i = 0; i < c->nadd; i++)
		if (add_listener(w, c->add_id[i], c->add_fd[i],
				 c->add_kind[i]) < 0) {
			close(c->add_fd[i]);
			c->add_fd[i] = -1;
		}
	udp_loop_configure(&w->udp, &c->upstream, c->upstream_id,
			   c->flow_idle_ms, c->flow_wait_ms, &c->unix_allow);
	/* The command's TLS references become the loop's; the loop's old
	 * ones go (connections made from them hold their own). */
	struct tls *old_server = w->tcp.set.server_tls;
	struct tls *old_client = w->tcp.set.upstream_tls;
	tcp_loop_configure(&w->tcp, &c->tcp);
	tls_free(old_server);
	tls_free(old_client);
	w->drain_ns = (int64_t)c->drain_ms * 1000000;
	if (c->drain) {
		/* Streams: no new connections; open ones may finish. */
		tcp_stop_listening(&w->tcp);
		/* Relay what the kernel has queued; from now on only datagrams
		 * of existing flows are relayed, until their replies are in or
		 * drain_ms has passed. */
		udp_drain(&w->udp);
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		w->drain_deadline = now + w->drain_ns;
		if (!w->drain_deadline)
			w->drain_deadline = 1;
		if (now >= w->drain_deadline || !any_pending(w))
			w->stop = true;
	}
	/* Once done, c is the poster's: not a byte of it is touched after. */
	int posted = CMD_POSTED;
	if (!__atomic_compare_exchange_n(&c->state, &posted, CMD_DONE, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		free(c);	/* abandoned: what it carried is ours already */
	return false;
}

/* Stream latencies go where the datagrams' do. */
static void record_tcp(void *arg, enum tcp_latency what, int64_t us)
{
	struct worker *w = arg;
	if (what == TCP_LAT_WAKE)
		stats_record_wake(&w->stats, W_stream, us, 0);
	else
		stats_record_rx(&w->stats, us);
}

int worker_init(struct worker *w, int index, int cpu, const struct conf *c,
		const struct tcp_settings *tcp, const int *ids, const int *fds,
		const enum addr_kind *kinds, int n, struct heartbeat_loop *hb,
		int64_t start_ns, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	/* Both first: worker_free must find their listener slots empty. */
	tcp_loop_init(&w->tcp, &w->loop, tcp, record_tcp, w);
	/* The loop holds its own references to its TLS contexts. */
	tls_ref(tcp->server_tls);
	tls_ref(tcp->upstream_tls);
	const struct udp_settings udp = {
		.batch = c->batch, .max_datagram = c->max_datagram,
		.socket_buffer = c->socket_buffer, .max_flows = c->max_flows,
		.gro = c->udp_gro,
	};
	int udp_ok = udp_loop_init(&w->udp, &w->loop, &w->stats, hb, &udp);
	w->index = index;
	w->cpu = cpu;
	w->rt_priority = c->rt_priority;
	w->rt_budget = c->rt_budget;
	w->sched_other = c->sched_other;
	w->tick_us = c->tick_us;
	w->allow_non_rt = c->allow_non_rt;
	w->drain_ns = (int64_t)c->drain_ms * 1000000;
	w->hb = hb;
	w->start_ns = start_ns;
	w->tfd = w->efd = -1;
	w->budget.schedstat_fd = -1;
	w->loop.epfd = -1;
	pthread_once(&sem_once, sem_setup);

	if (loop_init(&w->loop) < 0 ||
	    (w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) < 0 ||
	    (w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		snprintf(err, errlen, "loop %d: %s", index, strerror(errno));
		goto fail;
	}
	if (udp_ok < 0 || stats_init(&w->stats, start_ns) < 0) {
		snprintf(err, errlen, "loop %d: out of memory", index);
		goto fail;
	}
	w->stats.late_us = c->late_us;
	udp_loop_configure(&w->udp, &c->upstream, 0, c->flow_idle_ms,
			   c->flow_wait_ms, &c->unix_allow);
	w->tick_h.fn = on_tick;
	w->cmd_h.fn = on_command;
	if (loop_add(&w->loop, w->tfd, &w->tick_h) < 0 ||
	    loop_add(&w->loop, w->efd, &w->cmd_h) < 0) {
		snprintf(err, errlen, "loop %d: epoll: %s", index, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < n; i++)
		if (add_listener(w, ids[i], fds[i], kinds[i]) < 0) {
			snprintf(err, errlen, "loop %d: epoll: %s", index,
				 strerror(errno));
			for (int j = i; j < n; j++)
				close(fds[j]);
			goto fail;
		}
	return 0;
fail:
	worker_free(w);
	return -1;
}

void worker_free(struct worker *w)
{
	udp_loop_free(&w->udp);
	if (w->tfd >= 0)
		close(w->tfd);
	if (w->efd >= 0)
		close(w->efd);
	w->tfd = w->efd = -1;
	budget_free(&w->budget);
	tcp_loop_free(&w->tcp);
	tls_free(w->tcp.set.server_tls);
	tls_free(w->tcp.set.upstream_tls);
	w->tcp.set.server_tls = w->tcp.set.upstream_tls = NULL;
	loop_free(&w->loop);
	/* The stats stay: the main thread writes them out after the join. */
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char why[400];
	if (rt_pin(w->cpu, why, sizeof(why)) < 0) {
		snprintf(w->why, sizeof(w->why), "loop %d: %s", w->index, why);
		w->started = -1;
		sem_post(&started_sem);
		return NULL;
	}
	if (w->sched_other) {
		snprintf(w->why, sizeof(w->why), "sched = other");
	} else if (rt_set_fifo(w->rt_priority, why, sizeof(why)) == 0) {
		w->realtime = true;
	} else {
		snprintf(w->why, sizeof(w->why), "%s", why);
		if (!w->allow_non_rt) {
			w->started = -1;
			sem_post(&started_sem);
			return NULL;
		}
	}
	rt_prefault_stack(STACK_PREFAULT);
	w->hb->cpu = w->cpu;
	w->hb->pid = gettid();

	int64_t tick = (int64_t)w->tick_us * 1000;
	w->next_tick_ns = clock_ns(CLOCK_MONOTONIC) + tick;
	struct itimerspec its = {
		.it_value = clock_ns_ts(w->next_tick_ns),
		.it_interval = clock_ns_ts(tick),
	};
	if (timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		snprintf(w->why, sizeof(w->why), "loop %d: timerfd: %s",
			 w->index, strerror(errno));
		w->started = -1;
		sem_post(&started_sem);
		return NULL;
	}
	if (w->realtime)
		budget_init(&w->budget, w->rt_budget, w->rt_priority, clock_ns(CLOCK_MONOTONIC),
			    w->loop.idle_ns);
	w->started = 1;
	sem_post(&started_sem);

	while (!w->stop) {
		int n = loop_run_once(&w->loop, 1000);
		if (n < 0) {
			stats_add(&w->stats.error[E_recv], 1);
			break;
		}
		stats_add(&w->stats.counter[S_wakeups], n > 0);
	}
	udp_count_drops(&w->udp);
	stats_roll_window(&w->stats, clock_ns(CLOCK_MONOTONIC), true);
	return NULL;
}

int worker_start(struct worker *w)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	int e = pthread_create(&w->thread, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (e) {
		snprintf(w->why, sizeof(w->why), "loop %d: cannot start a "
			 "thread: %s", w->index, strerror(e));
		return -1;
	}
	while (sem_wait(&started_sem) < 0 && errno == EINTR)
		;
	if (w->started < 0) {
		pthread_join(w->thread, NULL);
		return -1;
	}
	return 0;
}

/*
 * Who owns a command is settled by two atomic exchanges, so that it and
 * what it carries are applied or released exactly once, whatever the
 * timing:
 *
 *  - the mailbox pointer: the loop takes the command with an exchange
 *    (to NULL), a poster that stops waiting takes it back with a
 *    compare-and-swap (cmd -> NULL). Both are read-modify-writes of one
 *    word, so exactly one of them finds the command there: a command
 *    taken back was never seen by the loop and is wholly the poster's
 *    (WORKER_NOT_TAKEN), however late the loop wakes up afterwards (its
 *    exchange then finds NULL, or a newer command);
 *  - the command's state, once the loop has it: the loop moves it from
 *    posted to done when it has applied it, the poster from posted to
 *    abandoned when it stops waiting. Exactly one succeeds. Done: the
 *    memory is the poster's again (WORKER_APPLIED). Abandoned: the loop
 *    frees it when it is through, touching nothing else of the poster's
 *    (WORKER_TAKEN).
 *
 * Only one poster runs at a time (reloads follow one another, the drain
 * waits for a reload under way), so the mailbox is empty when it posts.
 * The deadline is on the monotonic clock: a poster starved along with the
 * loop must not wait longer for having slept less often.
 */
enum worker_fate worker_command(struct worker *w, struct worker_cmd *cmd,
				int timeout_ms)
{
	int64_t deadline = clock_ns(CLOCK_MONOTONIC) +
			   (int64_t)timeout_ms * 1000000;
	cmd->state = CMD_POSTED;
	__atomic_store_n(&w->cmd, cmd, __ATOMIC_RELEASE);
	uint64_t one = 1;
	bool told = write(w->efd, &one, sizeof(one)) == sizeof(one);
	const struct timespec ms = { 0, 1000000 };
	while (told) {
		if (__atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE) == CMD_DONE)
			return WORKER_APPLIED;
		if (clock_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		nanosleep(&ms, NULL);
	}
	struct worker_cmd *mine = cmd;
	if (__atomic_compare_exchange_n(&w->cmd, &mine, NULL, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return WORKER_NOT_TAKEN;
	int posted = CMD_POSTED;
	if (__atomic_compare_exchange_n(&cmd->state, &posted, CMD_ABANDONED,
					false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return WORKER_TAKEN;
	return WORKER_APPLIED;	/* done between the last look and now */
}

void worker_cmd_release(struct worker_cmd *cmd)
{
	for (int i = 0; i < cmd->nadd; i++)
		if (cmd->add_fd[i] >= 0)
			close(cmd->add_fd[i]);
	tls_free(cmd->tcp.server_tls);
	tls_free(cmd->tcp.upstream_tls);
	free(cmd);
}

void worker_join(struct worker *w)
{
	pthread_join(w->thread, NULL);
	worker_free(w);
}
