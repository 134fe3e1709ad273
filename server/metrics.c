/*
 * metrics: one row per family (name, type, help, what writes its samples);
 * metrics_write prints each row's # HELP and # TYPE and its samples.
 */
#include "metrics.h"

#include <stddef.h>
#include <string.h>

#include "sockfile.h"
#include "tcp.h"

#define HELP(name, help) help,
#define NAME(name, help) #name,
static const char *const counter_help[] = { STATS_COUNTERS(HELP) };
static const char *const drop_name[] = { STATS_DROPS(NAME) };
static const char *const drop_help[] = { STATS_DROPS(HELP) };
static const char *const error_name[] = { STATS_ERRORS(NAME) };
static const char *const error_help[] = { STATS_ERRORS(HELP) };
static const char *const wakeup_name[] = { STATS_WAKEUPS(NAME) };
static const char *const wakeup_help[] = { STATS_WAKEUPS(HELP) };
#undef HELP
#undef NAME

/* A label value escaped (label_value): the text format's escapes take
 * two bytes, U+FFFD three, for each byte of the text. */
#define LABEL_MAX	(3 * ADDR_TEXT_MAX)

/* Which part of the configuration a family belongs to: it is shown only
 * when relay has that part. */
enum section { TOTALS, RELOADS, KERNEL, WATCH, UDP_LISTENERS, UNIX_FILES,
	       UDP_UPSTREAMS, TCP_LISTENERS, TCP_UPSTREAM, ADMIN };

/* What one request's families are made of, summed once. */
struct view {
	FILE *out;
	const struct admin_view *v;
	const struct stats_snapshot *snap;
	const struct admin_counts *a;
	int nl, nu, ntl;
	int nfiles;			/* unix:///PATH listeners among nl */
	struct stats_part l[STATS_MAX_LISTEN], u[STATS_MAX_UPSTREAM];
	char lsel[STATS_MAX_LISTEN][LABEL_MAX + 32];
	char usel[STATS_MAX_UPSTREAM][LABEL_MAX + 32];
	char tl[TCP_MAX_LISTEN][LABEL_MAX];	/* the stream listeners' */
	struct tcp_totals t[TCP_MAX_LISTEN];
	uint64_t tu[TCP_NUCOUNTERS], ths[SOCK_NFAILS];
	const char *tup;		/* the stream upstream, NULL: none */
	char tup_label[LABEL_MAX];
};

/* The length of the UTF-8 sequence at s, or 0 when it is none: the second
 * byte's range leaves out overlong forms, surrogates and what lies past
 * U+10FFFF. s is NUL-terminated, and NUL ends any sequence. */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 :
		c < 0xf5 ? 4 : 0;
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	if (n > 1 && (s[1] < lo || s[1] > hi))
		return 0;
	for (int i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* text as a label value (LABEL_MAX bytes at out): the text format wants
 * backslash, double quote and line feed escaped, and UTF-8, which a
 * unix:// path need not be: a byte that is not is U+FFFD. Without it a
 * path with a quote in it ends the value early and breaks every scrape. */
static void label_value(const char *text, char *out)
{
	const unsigned char *s = (const unsigned char *)text;
	char *o = out, *end = out + LABEL_MAX - 4;
	while (*s && o < end) {
		int n = utf8_len(s);
		if (*s == '\\' || *s == '"' || *s == '\n') {
			*o++ = '\\';
			*o++ = *s == '\n' ? 'n' : (char)*s;
		} else if (n) {
			memcpy(o, s, (size_t)n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
		s += n;
	}
	*o = 0;
}

struct family {
	enum section section;
	const char *name, *type;
	const char *help;		/* NULL: counter arg's, per part */
	void (*samples)(struct view *m, const struct family *f);
	int arg;			/* a counter, histogram or part */
};

static void total(struct view *m, const struct family *f)
{
	fprintf(m->out, "%s %llu\n", f->name,
		(unsigned long long)m->snap->counter[f->arg]);
}

static void drops(struct view *m, const struct family *f)
{
	for (int i = 0; i < STATS_NDROPS; i++)
		fprintf(m->out, "# reason %s: %s\n%s{reason=\"%s\"} %llu\n",
			drop_name[i], drop_help[i], f->name, drop_name[i],
			(unsigned long long)m->snap->drop[i]);
}

static void errors(struct view *m, const struct family *f)
{
	for (int i = 0; i < STATS_NERRORS; i++)
		fprintf(m->out, "# kind %s: %s\n%s{kind=\"%s\"} %llu\n",
			error_name[i], error_help[i], f->name, error_name[i],
			(unsigned long long)m->snap->error[i]);
}

/* Each kind's help once, as a comment (the drops' way), then its count. */
static void late_wakeups(struct view *m, const struct family *f)
{
	for (int i = 0; i < STATS_NWAKEUPS; i++)
		fprintf(m->out, "# wakeup %s: %s\n%s{wakeup=\"%s\"} %llu\n",
			wakeup_name[i], wakeup_help[i], f->name,
			wakeup_name[i],
			(unsigned long long)m->snap->late_wakeups[i]);
}

static void flows_active(struct view *m, const struct family *f)
{
	fprintf(m->out, "%s %lld\n", f->name,
		(long long)m->snap->flows_active);
}

static void realtime(struct view *m, const struct family *f)
{
	fprintf(m->out, "%s{policy=\"%s\"} %d\n", f->name,
		m->v->sched->policy, m->v->sched->why[0] ? 0 : 1);
}

static void reloads(struct view *m, const struct family *f)
{
	const struct stats_reloads *r = m->v->reloads;
	static const char *const result[] = { "applied", "partial",
					      "failed" };
	const uint64_t n[] = { r->applied, r->partial, r->failed };
	for (int i = 0; i < 3; i++)
		fprintf(m->out, "%s{result=\"%s\"} %llu\n", f->name, result[i],
			(unsigned long long)n[i]);
}

static void loops_behind(struct view *m, const struct family *f)
{
	fprintf(m->out, "%s %d\n", f->name, m->v->reloads->loops_behind);
}

/* Buckets in seconds: 1-2-5 steps from 1 us to 10 s. */
static void histogram(struct view *m, const struct family *f)
{
	const struct hist *h = f->arg == 0 ? &m->snap->rx :
			       f->arg == 1 ? &m->snap->wake : &m->snap->tick;
	static const int steps[] = { 1, 2, 5 };
	for (int64_t decade = 1; decade <= 1000000; decade *= 10)
		for (int i = 0; i < 3; i++) {
			int64_t us = decade * steps[i];
			fprintf(m->out, "%s_bucket{le=\"%g\"} %llu\n", f->name,
				(double)us / 1e6,
				(unsigned long long)hist_count_le(h, us));
		}
	fprintf(m->out, "%s_bucket{le=\"+Inf\"} %llu\n", f->name,
		(unsigned long long)hist_count(h));
	fprintf(m->out, "%s_sum %.6f\n", f->name,
		hist_mean(h) * (double)hist_count(h) / 1e6);
	fprintf(m->out, "%s_count %llu\n", f->name,
		(unsigned long long)hist_count(h));
}

/* One sample: what kernel-markers says of the running kernel, each fact
 * and verdict a label. */
static void kernel_info(struct view *m, const struct family *f)
{
	const struct kstate *k = m->v->kernel;
	char value[LABEL_MAX];
	fprintf(m->out, "%s{", f->name);
	for (int i = 0; i < k->n; i++) {
		label_value(k->item[i].value, value);
		fprintf(m->out, "%s%s=\"%s\"", i ? "," : "", k->item[i].name,
			value);
	}
	fprintf(m->out, "} 1\n");
}

/* arg 0: late_us; 1: watch_interval_ms; in seconds. */
static void watch_setting(struct view *m, const struct family *f)
{
	const struct watch *w = m->v->watch;
	fprintf(m->out, "%s %g\n", f->name, f->arg ? w->interval_ms / 1e3 :
		(double)w->late_us / 1e6);
}

/* One sample per watched group; arg: what of it. */
enum { G_PERIODS, G_THROTTLED, G_THROTTLED_S, G_READABLE, G_LATE };
static void watched(struct view *m, const struct family *f)
{
	const struct watch *w = m->v->watch;
	char name[LABEL_MAX];
	for (int i = 0; i < w->n; i++) {
		const struct watch_group *g = &w->g[i];
		label_value(g->name, name);
		if (f->arg == G_LATE) {
			for (int k = 0; k < STATS_NWAKEUPS; k++)
				fprintf(m->out, "%s{cgroup=\"%s\",wakeup=\"%s\"} "
					"%llu\n", f->name, name, wakeup_name[k],
					(unsigned long long)g->late[k]);
			continue;
		}
		fprintf(m->out, "%s{cgroup=\"%s\"} ", f->name, name);
		switch (f->arg) {
		case G_PERIODS:
			fprintf(m->out, "%llu\n",
				(unsigned long long)g->stat.nr_periods);
			break;
		case G_THROTTLED:
			fprintf(m->out, "%llu\n",
				(unsigned long long)g->stat.nr_throttled);
			break;
		case G_THROTTLED_S:
			fprintf(m->out, "%.6f\n",
				(double)g->stat.throttled_us / 1e6);
			break;
		default:
			fprintf(m->out, "%d\n", g->readable);
		}
	}
}

static void udp_listener(struct view *m, const struct family *f)
{
	for (int j = 0; j < m->nl; j++)
		fprintf(m->out, "%s{%s} %llu\n", f->name, m->lsel[j],
			(unsigned long long)m->l[j].counter[f->arg]);
}

static void udp_upstream(struct view *m, const struct family *f)
{
	for (int j = 0; j < m->nu; j++)
		fprintf(m->out, "%s{%s} %llu\n", f->name, m->usel[j],
			(unsigned long long)m->u[j].counter[f->arg]);
}

/* arg 0: every drop per listener; 1: the upstream's per upstream. */
static void udp_drops(struct view *m, const struct family *f)
{
	bool up = f->arg;
	uint64_t mask = up ? STATS_UDMASK : ~0ULL;
	for (int j = 0; j < (up ? m->nu : m->nl); j++)
		for (int i = 0; i < STATS_NDROPS; i++)
			if (mask >> i & 1)
				fprintf(m->out, "%s{%s,reason=\"%s\"} %llu\n",
					f->name, up ? m->usel[j] : m->lsel[j],
					drop_name[i], (unsigned long long)
					(up ? m->u[j] : m->l[j]).drop[i]);
}

static void udp_flows(struct view *m, const struct family *f)
{
	for (int j = 0; j < m->nl; j++)
		fprintf(m->out, "%s{%s} %lld\n", f->name, m->lsel[j],
			(long long)m->l[j].flows_active);
}

static void unix_files(struct view *m, const struct family *f)
{
	const struct sockfile *file = m->v->udp_files;
	for (int j = 0; j < m->nl; j++)
		if (file[j].path[0])
			fprintf(m->out, "%s{%s} %d\n", f->name, m->lsel[j],
				sockfile_present(&file[j]));
}

static const char *tcp_text(const struct view *m, int i)
{
	return m->tl[i];
}

static void tcp_listener(struct view *m, const struct family *f)
{
	for (int i = 0; i < m->ntl; i++)
		fprintf(m->out, "%s{listener=\"%s\"} %llu\n", f->name,
			tcp_text(m, i), (unsigned long long)m->t[i].l[f->arg]);
}

static void tcp_active(struct view *m, const struct family *f)
{
	for (int i = 0; i < m->ntl; i++)
		fprintf(m->out, "%s{listener=\"%s\"} %lld\n", f->name,
			tcp_text(m, i), (long long)m->t[i].active);
}

/* Names of the reasons the stream families count by. Handshake failures
 * count from 1: reason 0 is no failure. */
static const char *close_reason(int k) { return tcp_close_name(k); }
static const char *fail_reason(int k) { return sock_fail_name(k); }

/* One sample per reason k from first up to n: counts[k], labelled
 * key="val" and the reason's name. */
static void reason_counts(const struct view *m, const struct family *f,
			  const char *key, const char *val,
			  const char *(*name)(int), const uint64_t *counts,
			  int first, int n)
{
	for (int k = first; k < n; k++)
		fprintf(m->out, "%s{%s=\"%s\",reason=\"%s\"} %llu\n", f->name,
			key, val, name(k), (unsigned long long)counts[k]);
}

static void tcp_closed(struct view *m, const struct family *f)
{
	for (int i = 0; i < m->ntl; i++)
		reason_counts(m, f, "listener", tcp_text(m, i), close_reason,
			      m->t[i].closed, 0, TCP_NCLOSES);
}

static void tcp_handshakes(struct view *m, const struct family *f)
{
	for (int i = 0; i < m->ntl; i++)
		reason_counts(m, f, "listener", tcp_text(m, i), fail_reason,
			      m->t[i].hs_failed, 1, SOCK_NFAILS);
}

static void tcp_upstream(struct view *m, const struct family *f)
{
	fprintf(m->out, "%s{upstream=\"%s\"} %llu\n", f->name, m->tup,
		(unsigned long long)m->tu[f->arg]);
}

static void tcp_upstream_handshakes(struct view *m, const struct family *f)
{
	reason_counts(m, f, "upstream", m->tup, fail_reason, m->ths, 1,
		      SOCK_NFAILS);
}

/* The admin endpoint's own counts: arg is the field's offset. */
static void admin_count(struct view *m, const struct family *f)
{
	uint64_t v;
	memcpy(&v, (const char *)m->a + f->arg, sizeof(v));
	fprintf(m->out, "%s %llu\n", f->name, (unsigned long long)v);
}

#define TOTAL(name, help) \
	{ TOTALS, "relay_" #name "_total", "counter", help, total, S_##name },
#define UDP_LISTENER(name) { UDP_LISTENERS, "relay_udp_" #name "_total", \
	"counter", NULL, udp_listener, S_##name },
#define UDP_UPSTREAM(name) { UDP_UPSTREAMS, "relay_udp_upstream_" #name \
	"_total", "counter", NULL, udp_upstream, S_##name },
#define TCP_LISTENER(name, help) { TCP_LISTENERS, "relay_tcp_" #name "_total", \
	"counter", help, tcp_listener, TCP_L_##name },
#define TCP_UPSTREAM_(name, help) { TCP_UPSTREAM, "relay_tcp_upstream_" #name \
	"_total", "counter", help, tcp_upstream, TCP_U_##name },

static const struct family families[] = {
	STATS_COUNTERS(TOTAL)
	{ TOTALS, "relay_drops_total", "counter",
	  "Datagrams dropped, by reason", drops, 0 },
	{ TOTALS, "relay_errors_total", "counter", "Errors, by kind",
	  errors, 0 },
	{ TOTALS, "relay_flows_active", "gauge", "Flows open now",
	  flows_active, 0 },
	{ TOTALS, "relay_realtime", "gauge",
	  "1 when the loops run SCHED_FIFO", realtime, 0 },
	{ TOTALS, "relay_rx_latency_seconds", "histogram",
	  "Kernel receive timestamp (TCP with tcp_kernel_stamps off: the "
	  "read) to handling", histogram, 0 },
	{ TOTALS, "relay_wake_latency_seconds", "histogram",
	  "Kernel receive timestamp to the epoll_wait wake-up that found it",
	  histogram, 1 },
	{ TOTALS, "relay_tick_lateness_seconds", "histogram",
	  "Lateness of timer ticks", histogram, 2 },
	{ TOTALS, "relay_late_wakeups_total", "counter",
	  "Wake-ups late_us or more late (relay_late_threshold_seconds), by "
	  "what woke the loop (wakeup): datagram and stream, data's wait for "
	  "the wake-up (the wake-up the epoll fix protects); non_rt_sender, an "
	  "AF_UNIX datagram from a sender not real-time (its own delays in "
	  "it); tick, relay's timer tick (a non-RT waker, the timer softirq)",
	  late_wakeups, 0 },
	{ RELOADS, "relay_reloads_total", "counter",
	  "Reloads, by result: applied (by every loop), partial (a loop did "
	  "not take it in time and keeps its previous configuration), failed "
	  "(refused; nothing changed)", reloads, 0 },
	{ RELOADS, "relay_reload_loops_behind", "gauge",
	  "Loops the last reload did not reach: they run an earlier "
	  "configuration until a reload does", loops_behind, 0 },

	{ KERNEL, "relay_kernel_info", "gauge",
	  "The running kernel as its BTF shows it (deploy/kernel-markers): "
	  "preempt_rt, eventpoll_lock (rwlock_t before the epoll fix, "
	  "spinlock_t after), throttle_model (task-based since 6.18, cfs_rq "
	  "before), and the verdict epoll_fix (fixed, missing, unknown: a "
	  "kernel whose BTF cannot be read)", kernel_info, 0 },
	{ KERNEL, "relay_late_threshold_seconds", "gauge",
	  "A wake-up this late counts in relay_late_wakeups_total (late_us)",
	  watch_setting, 0 },
	{ WATCH, "relay_watch_interval_seconds", "gauge",
	  "How often the watched groups' cpu.stat is read: the resolution of "
	  "relay_late_while_throttled_total (watch_interval_ms)",
	  watch_setting, 1 },
	{ WATCH, "relay_cgroup_periods_total", "counter",
	  "CPU bandwidth periods of a watched group (cpu.stat nr_periods)",
	  watched, G_PERIODS },
	{ WATCH, "relay_cgroup_throttled_periods_total", "counter",
	  "Periods a watched group was throttled in (cpu.stat nr_throttled)",
	  watched, G_THROTTLED },
	{ WATCH, "relay_cgroup_throttled_seconds_total", "counter",
	  "Time a watched group was throttled (cpu.stat throttled_usec), "
	  "added as each throttle ends; with the task-based throttle model "
	  "(6.18 and later) it starts when the first task of the group's "
	  "hierarchy is throttled, before it when the quota ran out",
	  watched, G_THROTTLED_S },
	{ WATCH, "relay_cgroup_readable", "gauge",
	  "1 while a watched group's cpu.stat can be read, 0 once it cannot "
	  "(the group was removed; its counters keep their last values)",
	  watched, G_READABLE },
	{ WATCH, "relay_late_while_throttled_total", "counter",
	  "relay's late wake-ups (relay_late_wakeups_total, the same wakeup "
	  "label) that overlapped a throttled period of a watched group, to "
	  "within relay_watch_interval_seconds", watched, G_LATE },

	STATS_LCOUNTERS(UDP_LISTENER)
	{ UDP_LISTENERS, "relay_udp_drops_total", "counter",
	  "Datagrams dropped, per listener and reason", udp_drops, 0 },
	{ UDP_LISTENERS, "relay_udp_flows_active", "gauge",
	  "Flows open now, per listener", udp_flows, 0 },
	{ UNIX_FILES, "relay_unix_socket_file_present", "gauge",
	  "1 while a unix:///PATH listener's path holds the socket file relay "
	  "made there, 0 once it was removed or replaced (SIGHUP binds it "
	  "again)", unix_files, 0 },

	STATS_UCOUNTERS(UDP_UPSTREAM)
	{ UDP_UPSTREAMS, "relay_udp_upstream_drops_total", "counter",
	  "Datagrams dropped, per upstream and reason", udp_drops, 1 },

	TCP_LCOUNTERS(TCP_LISTENER)
	{ TCP_LISTENERS, "relay_tcp_active_connections", "gauge",
	  "Connections open now", tcp_active, 0 },
	{ TCP_LISTENERS, "relay_tcp_closed_total", "counter",
	  "Connections closed, by reason", tcp_closed, 0 },
	{ TCP_LISTENERS, "relay_tcp_handshake_failures_total", "counter",
	  "Client TLS handshakes that failed, by reason", tcp_handshakes, 0 },

	TCP_UCOUNTERS(TCP_UPSTREAM_)
	{ TCP_UPSTREAM, "relay_tcp_upstream_handshake_failures_total",
	  "counter", "TLS handshakes with the upstream that failed, by reason",
	  tcp_upstream_handshakes, 0 },

	{ ADMIN, "relay_admin_no_fd_total", "counter",
	  "Times the admin endpoint could not accept: out of file descriptors",
	  admin_count, offsetof(struct admin_counts, no_fd) },
	{ ADMIN, "relay_admin_connections", "gauge",
	  "Admin connections open now",
	  admin_count, offsetof(struct admin_counts, conns) },
	{ ADMIN, "relay_admin_capped_total", "counter",
	  "Times the admin endpoint stopped accepting at its connection cap",
	  admin_count, offsetof(struct admin_counts, capped) },
	{ ADMIN, "relay_admin_timed_out_total", "counter",
	  "Admin connections closed without a request answered within 5 s",
	  admin_count, offsetof(struct admin_counts, timed_out) },
	{ ADMIN, "relay_admin_evicted_total", "counter",
	  "Admin connections closed at the cap to make room for a new one",
	  admin_count, offsetof(struct admin_counts, evicted) },
};

/* Sum what the per-listener and per-upstream families show. */
static void gather(struct view *m)
{
	const struct admin_view *v = m->v;
	m->nl = *v->nudp_labels;
	m->nu = *v->nudp_upstreams;
	char label[LABEL_MAX];
	for (int j = 0; j < m->nl; j++) {
		m->nfiles += v->udp_files && v->udp_files[j].path[0];
		stats_part_sum(&m->l[j], v->stats, v->n, false,
			       v->udp_labels[j].id);
		label_value(v->udp_labels[j].text, label);
		snprintf(m->lsel[j], sizeof(m->lsel[j]),
			 "listener=\"%s\",id=\"%d\"", label, v->udp_labels[j].id);
	}
	for (int j = 0; j < m->nu; j++) {
		stats_part_sum(&m->u[j], v->stats, v->n, true,
			       v->udp_upstreams[j].id);
		label_value(v->udp_upstreams[j].text, label);
		snprintf(m->usel[j], sizeof(m->usel[j]), "upstream=\"%s\"",
			 label);
	}
	m->ntl = v->tcp ? *v->ntcp_labels : 0;
	for (int i = 0; i < m->ntl; i++) {
		tcp_stats_listener(&m->t[i], v->tcp, v->n, v->tcp_labels[i].id);
		label_value(v->tcp_labels[i].text, m->tl[i]);
	}
	m->tup = NULL;
	if (v->tcp && *v->tcp_upstream) {
		tcp_stats_upstream(m->tu, m->ths, v->tcp, v->n);
		label_value(v->tcp_upstream, m->tup_label);
		m->tup = m->tup_label;
	}
}

static bool shown(const struct view *m, enum section s)
{
	switch (s) {
	case RELOADS:
		return m->v->reloads;
	case KERNEL:
		return m->v->kernel && m->v->watch;
	case WATCH:
		/* With no group watched, the families say what a group would
		 * show (their HELP and TYPE, no sample), so that a dashboard
		 * can be held to what relay exports on any host. */
		return m->v->watch;
	case UDP_LISTENERS:
		return m->nl > 0;
	case UNIX_FILES:
		return m->nfiles > 0;
	case UDP_UPSTREAMS:
		return m->nu > 0;
	case TCP_LISTENERS:
		return m->ntl > 0 || m->tup;
	case TCP_UPSTREAM:
		return m->tup;
	case ADMIN:
		return m->a;
	default:
		return true;
	}
}

void metrics_write(FILE *out, const struct admin_view *v,
		   const struct stats_snapshot *snap,
		   const struct admin_counts *a)
{
	static struct view m;	/* large; the main thread's only */
	memset(&m, 0, sizeof(m));
	m.out = out;
	m.v = v;
	m.snap = snap;
	m.a = a;
	gather(&m);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct family *f = &families[i];
		if (!shown(&m, f->section))
			continue;
		fprintf(out, "# HELP %s ", f->name);
		if (f->help)
			fputs(f->help, out);
		else
			fprintf(out, "%s, per %s", counter_help[f->arg],
				f->section == UDP_LISTENERS ? "listener" :
							      "upstream");
		fprintf(out, "\n# TYPE %s %s\n", f->name, f->type);
		f->samples(&m, f);
	}
}
