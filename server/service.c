/*
 * service: start-up, the main thread's event loop, exit (see service.h).
 */
#include "service.h"

#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sysexits.h>
#include <unistd.h>

#include "admin.h"
#include "clock.h"
#include "metrics.h"
#include "newfile.h"
#include "notify.h"
#include "rt.h"

struct service {
	struct control *ctl;
	struct stats_sched sched;
	struct heartbeat_file *hb;
	bool draining;
	int64_t start_ns;
	struct event_base *base;
	struct admin_view view;
	struct kstate kernel;
	struct stats_snapshot snap;
	uint64_t last_in, last_out, last_drops;
	int64_t last_status_ns, last_watchdog_ns;
	uint64_t watchdog_usec;
};

static void status(struct service *s)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	struct control *ctl = s->ctl;
	stats_snapshot_take(&s->snap, ctl->stats, ctl->nw);
	double dt = (double)(now - s->last_status_ns) / 1e9;
	if (dt <= 0)
		dt = 1;
	const uint64_t *c = s->snap.counter;
	uint64_t in = c[S_rx_packets] + c[S_reply_packets];
	/* Echo replies are counted in tx_packets and reply_tx_packets. */
	uint64_t out = c[S_tx_packets] +
		(ctl->conf.upstream.kind == ADDR_ECHO ? 0 :
		 c[S_reply_tx_packets]);
	uint64_t drops = 0;
	for (int i = 0; i < STATS_NDROPS; i++)
		drops += s->snap.drop[i];
	char msg[512];
	snprintf(msg, sizeof(msg), "STATUS=%s%s%d: %.0f pkt/s in, %.0f pkt/s "
		 "out, %.0f drops/s, p99 %lld us, tick p99 %lld us, %lld flows",
		 s->sched.policy, s->sched.why[0] ? " (not real-time) " : " ",
		 s->sched.priority, (double)(in - s->last_in) / dt,
		 (double)(out - s->last_out) / dt,
		 (double)(drops - s->last_drops) / dt,
		 (long long)hist_percentile(&s->snap.rx, 99),
		 (long long)hist_percentile(&s->snap.tick, 99),
		 (long long)s->snap.flows_active);
	notify_send(msg);
	s->last_in = in;
	s->last_out = out;
	s->last_drops = drops;
	s->last_status_ns = now;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	(void)fd;
	(void)what;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	if (now - s->last_status_ns >= 1000000000LL)
		status(s);
	/* Ping the watchdog only while every loop makes progress: a stalled
	 * loop is what it is there to catch. */
	if (s->watchdog_usec &&
	    now - s->last_watchdog_ns >= (int64_t)s->watchdog_usec * 1000 / 2) {
		char why[256];
		if (admin_healthy(&s->view, why, sizeof(why))) {
			notify_send("WATCHDOG=1");
			s->last_watchdog_ns = now;
		}
	}
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	struct signalfd_siginfo si;
	(void)what;
	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			control_reload(s->ctl);
		} else {
			fprintf(stderr, "relay: %s: draining\n",
				strsignal((int)si.ssi_signo));
			event_base_loopexit(s->base, NULL);
		}
	}
}

/* Stop the loops, saying so to systemd and /healthz first. */
static int drain(struct service *s)
{
	s->draining = true;
	notify_send("STOPPING=1");
	return control_drain(s->ctl);
}

/* Keep the main thread (admin, signals) off the loops' CPUs when other
 * CPUs are left for it, and out of real-time if it was started there
 * (systemd's CPUSchedulingPolicy=fifo applies to the whole process). */
static void leave_loop_cpus(const struct conf *c)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);

	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int i = 0; i < c->ncpus; i++)
		CPU_CLR(c->cpus[i], &set);
	if (CPU_COUNT(&set) > 0)
		sched_setaffinity(0, sizeof(set), &set);
}

/* Start the loops; report the first that is not real-time. Returns 0 or
 * the exit status (the loops that started are stopped again). */
static int start_loops(struct service *s)
{
	struct control *ctl = s->ctl;
	const struct conf *c = &ctl->conf;
	s->sched.policy = "SCHED_FIFO";
	s->sched.priority = c->rt_priority;
	for (int i = 0; i < ctl->nw; i++) {
		struct worker *w = &ctl->w[i];
		if (worker_start(w) < 0) {
			fprintf(stderr, "relay: %s%s\n", w->why,
				w->started < 0 && !c->allow_non_rt ?
				" (or run with --allow-non-rt)" : "");
			ctl->nw = i;	/* drain only the ones that run */
			drain(s);
			return EX_OSERR;
		}
		if (!w->realtime && !s->sched.why[0]) {
			s->sched.policy = "SCHED_OTHER";
			s->sched.priority = 0;
			snprintf(s->sched.why, sizeof(s->sched.why), "%s", w->why);
			if (!c->sched_other)
				fprintf(stderr, "relay: running SCHED_OTHER, "
					"not real-time (--allow-non-rt): %s\n",
					w->why);
		}
	}
	/* Locked after the loops started, so a refused SCHED_FIFO is what
	 * gets reported first; MCL_CURRENT covers their stacks too. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* A sanitizer's shadow memory is terabytes of reserved address space:
	 * locking it cannot work, and these builds are for tests anyway. */
	fprintf(stderr, "relay: sanitizer build: memory not locked\n");
#else
	char err[512];
	if (rt_lock_memory(err, sizeof(err)) < 0) {
		if (!c->allow_non_rt && !c->sched_other) {
			fprintf(stderr, "relay: %s (or --allow-non-rt)\n", err);
			drain(s);
			return EX_OSERR;
		}
		fprintf(stderr, "relay: warning: %s; continuing unlocked "
			"(--allow-non-rt)\n", err);
	}
#endif
	return 0;
}

static void say_admin(const struct conf *c, struct admin *ad)
{
	char text[ADDR_TEXT_MAX];
	struct addr bound = c->admin;
	in_port_t port = htons((in_port_t)admin_port(ad));
	if (bound.sa.ss_family == AF_INET)
		((struct sockaddr_in *)&bound.sa)->sin_port = port;
	else
		((struct sockaddr_in6 *)&bound.sa)->sin6_port = port;
	fprintf(stderr, "relay: admin on http://%s/metrics\n",
		addr_format_sa((struct sockaddr *)&bound.sa, text, sizeof(text)));
}

static int put_metrics(FILE *f, const void *arg)
{
	const struct service *s = arg;
	metrics_write(f, &s->view, &s->snap, NULL);
	return ferror(f) ? -1 : 0;
}

static int write_stats_file(struct service *s)
{
	struct control *ctl = s->ctl;
	char err[1024];
	stats_snapshot_take(&s->snap, ctl->stats, ctl->nw);
	double dur = (double)(clock_ns(CLOCK_MONOTONIC) - s->start_ns) / 1e9;
	if (stats_write_files(ctl->conf.stats_file, &s->snap, &s->sched, dur,
			      admin_json_parts(&s->view), ctl->stats, ctl->nw,
			      err, sizeof(err)) < 0) {
		fprintf(stderr, "relay: stats file: %s\n", err);
		return EX_OSERR;
	}
	/* /metrics as a scrape at exit would have read it: a run without
	 * an admin endpoint (a VM guest) leaves it for the same tools. */
	char file[4096];
	stats_derived(file, sizeof(file), ctl->conf.stats_file, "metrics",
		      ".prom");
	if (newfile_write(file, put_metrics, s, err, sizeof(err)) < 0) {
		fprintf(stderr, "relay: stats file: %s\n", err);
		return EX_OSERR;
	}
	return 0;
}

/* What the running kernel carries, said once in the log too. */
static int read_kernel(struct service *s, const struct conf *c)
{
	char err[512];
	if (kstate_read(&s->kernel, kstate_markers, c->kernel_btf,
			"/sys/kernel/realtime", err, sizeof(err)) < 0) {
		fprintf(stderr, "relay: %s\n", err);	/* the build is wrong */
		return EX_SOFTWARE;
	}
	if (s->kernel.why[0])
		fprintf(stderr, "relay: kernel: %s; relay_kernel_info says "
			"what it cannot tell is unknown\n", s->kernel.why);
	fprintf(stderr, "relay: kernel:");
	for (int i = 0; i < s->kernel.n; i++)
		fprintf(stderr, " %s %s%s", s->kernel.item[i].name,
			s->kernel.item[i].value, i + 1 < s->kernel.n ? "," : "\n");
	return 0;
}

static int serve(struct control *ctl)
{
	static struct service s;
	struct conf *c = &ctl->conf;
	char err[1024];
	s.ctl = ctl;
	s.start_ns = s.last_status_ns = clock_ns(CLOCK_MONOTONIC);

	/* conf_validate checked what it needs against the hard limit. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    was < conf_descriptors(c))
			fprintf(stderr, "relay: descriptor limit raised from "
				"%llu to %llu (%llu needed)\n",
				(unsigned long long)was,
				(unsigned long long)rl.rlim_max,
				(unsigned long long)conf_descriptors(c));
	}
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	/* Blocked before any thread starts, so only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "relay: signalfd: %s\n", strerror(errno));
		return EX_OSERR;
	}

	/* Listener sockets, one per loop each, before anything else runs. */
	int rc = control_listen(ctl, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "relay: %s\n", err);
		return rc;
	}
	s.hb = heartbeat_open(c->heartbeat[0] ? c->heartbeat : NULL, c->ncpus,
			      s.start_ns, err, sizeof(err));
	if (!s.hb || control_init_loops(ctl, s.hb, s.start_ns, err,
					sizeof(err)) < 0) {
		fprintf(stderr, "relay: %s\n", err);
		return EX_OSERR;
	}
	if ((rc = read_kernel(&s, c)))
		return rc;
	if (stats_snapshot_init(&s.snap) < 0) {
		fprintf(stderr, "relay: out of memory\n");
		return EX_OSERR;
	}
	s.view = (struct admin_view){ .stats = ctl->stats, .n = ctl->nw,
		.sched = &s.sched, .hb = s.hb, .draining = &s.draining,
		.start_ns = s.start_ns, .tick_us = c->tick_us,
		.udp_labels = ctl->udp_labels, .nudp_labels = &ctl->nudp_labels,
		.udp_files = ctl->udp_files,
		.udp_upstreams = ctl->udp_up, .nudp_upstreams = &ctl->nudp_up,
		.tcp = ctl->tcp, .tcp_labels = ctl->tcp_labels,
		.ntcp_labels = &ctl->ntcp_labels,
		.tcp_upstream = ctl->tcp_upstream, .reloads = &ctl->reloads,
		.kernel = &s.kernel, .watch = &ctl->watch };
	s.base = event_base_new();
	if (!s.base) {
		fprintf(stderr, "relay: event_base_new failed\n");
		return EX_SOFTWARE;
	}
	struct admin *ad = NULL;
	if (!c->admin_off) {
		ad = admin_open(s.base, &c->admin, &s.view, err, sizeof(err));
		if (!ad) {
			fprintf(stderr, "relay: %s\n", err);
			return EX_UNAVAILABLE;
		}
	}
	rc = start_loops(&s);
	if (rc)
		return rc;
	leave_loop_cpus(c);

	struct event *sev = event_new(s.base, sfd, EV_READ | EV_PERSIST,
				      on_signal, &s);
	struct event *tev = event_new(s.base, -1, EV_PERSIST, on_timer, &s);
	s.watchdog_usec = notify_watchdog_usec();
	struct timeval period = { 0, 250000 };
	if (!sev || !tev || event_add(sev, NULL) < 0 ||
	    event_add(tev, &period) < 0 || control_attach(ctl, s.base) < 0) {
		fprintf(stderr, "relay: cannot set up the main loop\n");
		return EX_SOFTWARE;
	}
	fprintf(stderr, "relay: ready: ");
	control_describe(c, stderr);
	if (ad)
		say_admin(c, ad);
	notify_send("READY=1");
	status(&s);

	event_base_dispatch(s.base);

	rc = drain(&s);
	if (rc == 0 && c->stats_file[0])
		rc = write_stats_file(&s);
	if (rc == 0) {
		stats_snapshot_free(&s.snap);
		event_free(sev);
		event_free(tev);
		admin_close(ad);
		control_free(ctl);
		event_base_free(s.base);
		heartbeat_close(s.hb);
		close(sfd);
		fprintf(stderr, "relay: stopped\n");
	}
	return rc;
}

int service_run(struct control *ctl)
{
	int rc = serve(ctl);
	/* However it ended (a drain, a start that failed), the socket files
	 * relay made go with it, and only those. */
	control_remove_files(ctl);
	return rc;
}
