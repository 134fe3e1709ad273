/*
 * demo-scenario: one run of the demo on the running kernel (a QEMU guest, or
 * this host). relay runs SCHED_FIFO on one CPU with its timerfd tick in the
 * epoll set; loadgen sends through it at a constant rate from a cgroup with
 * a tight cpu.max on the same CPU; a watchdog on another CPU lifts the quota
 * when the relay stops making progress and records the stall. An RT ticker
 * on the other CPU (ticker.h) wakes the relay and measures how long its own
 * datagrams wait: the RT waker the fix is about. Freeze probes (probe.h)
 * tell the host's pauses of the guest apart from the kernel's.
 *
 * Everything lands in --out: running.json once loadgen sends (where a
 * driver that runs beside the scenario finds its cgroup and the relay),
 * scenario.json (parameters, kernel, stalls, cgroup counters, how each
 * process ended), events.csv (stalls, quota lifts and restores), cpu.stat
 * (the kernel's own), and the files relay and loadgen write (relay.json,
 * loadgen.json, *.hgrm, *.timeseries.csv, *.log).
 *
 * Exit status: 0 the run completed; 1 it ran but something went wrong on
 * the way (listed under "problems" in scenario.json); 64 bad command line;
 * 69 relay or loadgen did not start; 70 internal failure (cannot write the
 * results); 71 the system refused (cgroup, RT priority).
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "addr.h"
#include "cgroup.h"
#include "clock.h"
#include "hist.h"
#include "newfile.h"
#include "params.h"
#include "probe.h"
#include "results.h"
#include "spawn.h"
#include "ticker.h"
#include "watch.h"
#include "watchdog.h"

/* The freeze probes (probe.h): above every thread of the scenario, a
 * wake-up every 5 ms (few enough not to change how the senders are
 * preempted), a wake-up 5 ms late or more is a freeze. */
#define PROBE_PRIO 90
#define PROBE_US 5000
#define PROBE_MIN_LATE_NS (5 * 1000000LL)

/* What the run needs to hand around; one per process. */
struct run {
	struct params p;
	struct cg cg;
	struct child relay, loadgen;
	struct ticker ticker;
	struct probe probe[2];	/* freeze probes: the watchdog's CPU, the relay's */
	int64_t t0_ns, stop_ns, deadline_ns;
	int64_t origin_ns;	/* the harness's periodic threads' grid (run_scenario) */
	json_t *problems;
	char beat_path[512];
	char udp_addr[64];		/* relay's UDP listener: the ticker's */
	char relay_addr[ADDR_TEXT_MAX];	/* where loadgen sends */
	int old_qlen;		/* max_dgram_qlen before (af_unix), or 0 */
	char cg_path[4096];	/* kept for the results: cg_close clears r->cg */
	bool loadgen_interrupted;	/* we ended it at the run's end */
};

static void problem(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "demo-scenario: %s\n", buf);
	json_array_append_new(r->problems, json_string(buf));
}

static void path(char *buf, size_t len, const char *dir, const char *file)
{
	snprintf(buf, len, "%s/%s", dir, file);
}

/* The relay is ready when its heartbeat file exists and advances. */
static bool relay_ready(struct run *r, int within_ms)
{
	struct heartbeat_map b;
	char err[256];
	uint64_t first = 0, now;
	int64_t ns;
	bool mapped = false;
	struct timespec step = { 0, 20 * 1000 * 1000 };
	for (int waited = 0; waited < within_ms; waited += 20) {
		if (child_poll(&r->relay))
			break;
		if (!mapped && heartbeat_map_open(&b, r->beat_path, err, sizeof(err)) == 0) {
			mapped = true;
			heartbeat_map_read(&b, &first, &ns);
		} else if (mapped) {
			heartbeat_map_read(&b, &now, &ns);
			if (now != first) {
				heartbeat_map_close(&b);
				return true;
			}
		}
		nanosleep(&step, NULL);
	}
	if (mapped)
		heartbeat_map_close(&b);
	return false;
}

/* An AF_UNIX datagram socket queues net.unix.max_dgram_qlen datagrams
 * (10 by default) and then blocks its senders, where a UDP socket would
 * hold a receive buffer's worth: room for what a UDP relay would buffer,
 * so that the two transports differ in the waker and nothing else. Taken
 * by each socket when it is made, so set before relay and loadgen start;
 * the old value is put back at the end. */
#define UNIX_QLEN	4096
#define UNIX_QLEN_FILE	"/proc/sys/net/unix/max_dgram_qlen"
#define UNIX_SNDBUF	"8388608"

static int qlen_read(void)
{
	FILE *f = fopen(UNIX_QLEN_FILE, "r");
	int v = -1;
	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static int qlen_write(int v)
{
	FILE *f = fopen(UNIX_QLEN_FILE, "w");
	if (!f)
		return -1;
	int rc = fprintf(f, "%d\n", v) < 0 ? -1 : 0;
	return fclose(f) == 0 ? rc : -1;
}

/* Where loadgen reaches relay: its UDP listener on loopback, which the
 * ticker always uses, or an abstract AF_UNIX name of this run's with room
 * in its queue. */
static int relay_address(struct run *r)
{
	const struct params *p = &r->p;
	snprintf(r->udp_addr, sizeof(r->udp_addr), "udp://127.0.0.1:%d", p->port);
	if (!p->af_unix) {
		snprintf(r->relay_addr, sizeof(r->relay_addr), "%s", r->udp_addr);
		return 0;
	}
	snprintf(r->relay_addr, sizeof(r->relay_addr), "unix://@relay-demo-%d", (int)getpid());
	r->old_qlen = qlen_read();
	if (r->old_qlen < 0 || (r->old_qlen < UNIX_QLEN && qlen_write(UNIX_QLEN) < 0)) {
		problem(r, "cannot set %s to %d: %s", UNIX_QLEN_FILE, UNIX_QLEN, strerror(errno));
		return -1;
	}
	fprintf(stderr, "demo-scenario: loadgen sends to %s, %s %d (was %d)\n", r->relay_addr,
		UNIX_QLEN_FILE, r->old_qlen < UNIX_QLEN ? UNIX_QLEN : r->old_qlen, r->old_qlen);
	return 0;
}

static int start_relay(struct run *r)
{
	const struct params *p = &r->p;
	if (relay_address(r) < 0)
		return -1;
	char cpu[16], prio[16], tick[16], stats[512], log[512], err[256];
	snprintf(cpu, sizeof(cpu), "%d", p->cpu);
	snprintf(prio, sizeof(prio), "%d", p->relay_prio);
	snprintf(tick, sizeof(tick), "%d", p->tick_us);
	path(stats, sizeof(stats), p->out, "relay.json");
	path(log, sizeof(log), p->out, "relay.log");
	snprintf(r->beat_path, sizeof(r->beat_path), "%s/relay-demo-%d.heartbeat",
		 p->run_dir, (int)getpid());
	/* With af_unix, relay answers loadgen through its AF_UNIX socket,
	 * whose send buffer holds every answer until the (throttled) sender
	 * reads it, where UDP charges the receiver: room for a quota
	 * period's worth, or the answers to loadgen fail (tx_full). */
	char *argv[] = { (char *)p->relay, "--listen", r->udp_addr, "--upstream", "echo",
		"--cpus", cpu, "--rt-priority", prio, "--tick-us", tick,
		"--stats-file", stats, "--heartbeat", r->beat_path, "--admin", "off",
		/* The demo is about a relay that stays SCHED_FIFO: never let
		 * the overload guard drop it to SCHED_OTHER. */
		"--rt-budget", "100",
		/* A handful of sender sockets: keeps the descriptor need
		 * within a guest's default limit. */
		"--max-flows", "64",
		NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	size_t n = 0;
	while (argv[n])
		n++;
	/* The co-tenant's group: relay.metrics.prom then says when relay was
	 * late while it was throttled, as on a host. relay reads cgroup v2's
	 * cpu.stat only; on a v1 host the scenario runs without the watch. */
	if (r->cg.version == 2) {
		argv[n++] = "--watch-cgroups";
		argv[n++] = r->cg_path;
	}
	/* af_unix: loadgen's listener too. */
	if (p->af_unix) {
		argv[n++] = "--listen";
		argv[n++] = r->relay_addr;
		argv[n++] = "--socket-buffer";
		argv[n++] = UNIX_SNDBUF;
	}
	if (child_start(&r->relay, "relay", argv, log, err, sizeof(err)) < 0) {
		problem(r, "%s", err);
		return -1;
	}
	if (relay_ready(r, 10000)) {
		fprintf(stderr, "demo-scenario: relay ready after %.2f s\n",
			(double)(clock_ns(CLOCK_MONOTONIC) - r->t0_ns) / 1e9);
	} else {
		char how[64];
		child_stop(&r->relay, SIGTERM, 2000);
		child_describe(&r->relay, how, sizeof(how));
		problem(r, "relay did not start making progress within 10 s (%s; see relay.log)", how);
		return -1;
	}
	/* The periodic RT threads of the harness (freeze probes, watchdog) wake
	 * on whole milliseconds from one origin (40-50 ms from now, a 10 ms boundary), the RT ticker half a
	 * millisecond off them. On the virtual clock their phases never drift:
	 * had the ticker's slots fallen on a probe's or the poller's wake-up,
	 * every one of its samples would have carried their (higher priority)
	 * run, which is the harness measuring itself. */
	r->origin_ns = (clock_ns(CLOCK_MONOTONIC) / 10000000 + 5) * 10000000;
	return 0;
}

static int put_json(FILE *f, const void *doc)
{
	return json_dumpf((const json_t *)doc, f, JSON_INDENT(1)) < 0 || fputc('\n', f) == EOF
		? -1 : 0;
}

/* running.json (docs/formats.md), once loadgen sends: what a driver that
 * runs its own load beside the scenario needs (a capacity cell's RT
 * client, and the trace of the co-tenant's threads), so that it reads no
 * log. Written whole under its name, never half. */
static int write_running(const struct run *r, char *err, size_t errlen)
{
	char file[512];
	path(file, sizeof(file), r->p.out, "running.json");
	json_t *doc = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i}", "cgroup", r->cg.path,
		"relay_udp", r->udp_addr, "loadgen_target", r->relay_addr,
		"relay_pid", (int)r->relay.pid, "loadgen_pid", (int)r->loadgen.pid,
		"senders", r->p.senders);
	if (!doc) {
		snprintf(err, errlen, "running.json: out of memory");
		return -1;
	}
	int rc = newfile_write(file, put_json, doc, err, errlen);
	json_decref(doc);
	return rc;
}

static int start_loadgen(struct run *r)
{
	const struct params *p = &r->p;
	char rate[16], dur[16], cpu[16], threads[16], spin[16];
	char json[512], hgrm[512], ts[512], log[512], err[256];
	snprintf(rate, sizeof(rate), "%d", p->rate_pps);
	snprintf(dur, sizeof(dur), "%d", p->duration_s);
	snprintf(cpu, sizeof(cpu), "%d", p->cpu);
	snprintf(threads, sizeof(threads), "%d", p->senders);
	snprintf(spin, sizeof(spin), "%d", p->spin_us);
	path(json, sizeof(json), p->out, "loadgen.json");
	path(hgrm, sizeof(hgrm), p->out, "loadgen.hgrm");
	path(ts, sizeof(ts), p->out, "loadgen.timeseries.csv");
	path(log, sizeof(log), p->out, "loadgen.log");
	char *argv[] = { (char *)p->loadgen, "--target", r->relay_addr, "--rate", rate,
		"--duration", dur, "--threads", threads, "--cpus", cpu,
		"--cgroup", r->cg.path, "--json", json, "--hgrm", hgrm,
		"--timeseries", ts, "--spin-us", spin, NULL };
	if (child_start(&r->loadgen, "loadgen", argv, log, err, sizeof(err)) < 0) {
		problem(r, "%s", err);
		return -1;
	}
	fprintf(stderr, "demo-scenario: loadgen sending %d pps for %d s from %d threads in %s\n",
		p->rate_pps, p->duration_s, p->senders, r->cg.path);
	if (write_running(r, err, sizeof(err)) < 0) {
		problem(r, "%s", err);
		return -1;
	}
	if (p->spin_us)
		fprintf(stderr, "demo-scenario: its senders spin %d us before each send\n", p->spin_us);
	/* Its own --duration ends it, plus its start-up and its 2 s wait for
	 * late replies when it kept up. */
	r->stop_ns = clock_ns(CLOCK_MONOTONIC) + (int64_t)(p->duration_s + 3) * 1000000000;
	return 0;
}

/* Poll until loadgen is done, but never leave a stall open unless the hard
 * deadline has come; and stop early when the relay died. */
static bool keep_going(struct watchdog *w, void *arg)
{
	struct run *r = arg;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	if (now >= r->deadline_ns)
		return false;
	/* Stalls are watched for while the senders are in their cgroup. */
	w->armed = !child_poll(&r->loadgen);
	if (child_poll(&r->relay))
		return false;
	/* A sender held back by its quota falls behind its schedule and would
	 * send on past the run's length; the run has a fixed length instead.
	 * SIGINT makes loadgen write what it has (exit 130). */
	if (!r->loadgen_interrupted && !child_poll(&r->loadgen) &&
	    now >= r->stop_ns) {
		kill(r->loadgen.pid, SIGINT);
		r->loadgen_interrupted = true;
		fprintf(stderr, "demo-scenario: %d s are up: stopping loadgen\n", r->p.duration_s);
	}
	return !child_poll(&r->loadgen) || w->stuck;
}

/* loadgen ended well: by itself with 0, or with 130 after our SIGINT. */
static bool loadgen_ok(const struct run *r)
{
	return child_ok(&r->loadgen) ||
	       (r->loadgen_interrupted && r->loadgen.done && !r->loadgen.killed &&
		WIFEXITED(r->loadgen.status) && WEXITSTATUS(r->loadgen.status) == 130);
}

static void copy_file(struct run *r, const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out = in ? fopen(to, "w") : NULL;
	char buf[4096];
	size_t n;
	while (out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (!in || !out || ferror(in) || fclose(out) != 0)
		problem(r, "cannot copy %s to %s", from, to);
	if (in)
		fclose(in);
}

/* One of the ticker's histograms: its percentiles as o.key, and the
 * whole of it in the HdrHistogram percentile format as file. */
static void ticker_hist_json(struct run *r, json_t *o, const char *key, const struct hist *h,
			     const char *file)
{
	json_object_set_new(o, key, h->counts && hist_count(h) ? results_percentiles(h) : json_null());
	if (h->counts) {
		char name[512], err[256];
		path(name, sizeof(name), r->p.out, file);
		if (results_write_hgrm(h, name, err, sizeof(err)) < 0)
			problem(r, "%s", err);
	}
}

/* How many of probe p's freezes overlap a stall the watchdog recorded (to_s:
 * CLOCK_REALTIME ns to the stalls' seconds). On a stock kernel stalled by
 * the inversion, the stalled RT ticker holds its CPU's softirq lock (its
 * loopback send blocks inside it), so that CPU's softirq work and the
 * threads waiting for it stand still too, and a probe there can wake late:
 * the stall's doing, not a guest the host did not run. */
static int64_t freezes_in_stalls(const struct probe *p, const struct watchdog *w,
				 int64_t to_s, double elapsed_s)
{
	int64_t n = 0;
	for (int i = 0; i < p->nev; i++) {
		double from = (double)(p->ev[i].from_ns + to_s) / 1e9;
		double to = (double)(p->ev[i].to_ns + to_s) / 1e9;
		for (int k = 0; k < w->nstalls; k++) {
			const struct wd_stall *s = &w->stalls[k];
			if (from < (s->end_s < 0 ? elapsed_s : s->end_s) && to > s->start_s) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* The RT ticker's own view: due time to echo of its datagrams, and send
 * time to echo (ticker.h). */
static json_t *ticker_json(struct run *r, const struct watchdog *w)
{
	int64_t t0_ns = w->t0_ns;
	const struct ticker *t = &r->ticker;
	json_t *o = json_pack("{s:b, s:I, s:I, s:I, s:I, s:i, s:I, s:I}",
		"enabled", r->p.ticker_us > 0, "sent", (json_int_t)t->sent,
		"send_errors", (json_int_t)t->send_errors, "echoes", (json_int_t)t->echoes,
		"foreign", (json_int_t)t->foreign, "late_ms", r->p.late_ms,
		"late", (json_int_t)t->over, "late_uncorrected", (json_int_t)t->over_sent);
	/* A late sample during which the guest (or a vCPU) did not run is the
	 * host's doing: explained when, without the frozen time, it would not
	 * have been late. */
	const struct probe *pr[2] = { &r->probe[0], &r->probe[1] };
	int64_t explained = 0, late_ns = (int64_t)r->p.late_ms * 1000000;
	/* The listed samples on the time base of the results (seconds since
	 * t0 on CLOCK_MONOTONIC, which is also the kernel trace's clock):
	 * the trace analysis explains each one. */
	int64_t to_mono = clock_ns(CLOCK_MONOTONIC) - clock_ns(CLOCK_REALTIME) - t0_ns;
	double elapsed_s = (double)(clock_ns(CLOCK_MONOTONIC) - t0_ns) / 1e9;
	json_t *listed = json_array();
	for (int i = 0; i < t->nlate; i++) {
		int64_t lat = t->late[i].rx_ns - t->late[i].due_ns;
		json_array_append_new(listed, json_pack("{s:f, s:f}",
			"due_s", (double)(t->late[i].due_ns + to_mono) / 1e9,
			"echo_s", (double)(t->late[i].rx_ns + to_mono) / 1e9));
		if (lat <= late_ns)
			continue;
		int64_t frozen = probe_frozen_ns(pr, 2, t->late[i].due_ns, t->late[i].rx_ns);
		if (lat - frozen <= late_ns)
			explained++;
	}
	json_object_set_new(o, "list_over_us", json_integer(r->p.list_over_us));
	json_object_set_new(o, "listed", listed);
	json_object_set_new(o, "listed_complete", json_boolean(t->nlate < t->late_cap));
	json_object_set_new(o, "late_in_guest_freeze", json_integer(explained));
	json_object_set_new(o, "late_unexplained", json_integer((json_int_t)t->over - explained));
	json_t *fr = json_array();
	for (int i = 0; i < 2; i++) {
		const struct probe *p = &r->probe[i];
		/* Each freeze on the results' time base, for the trace analysis
		 * to say what held that CPU: the slot and the wake-up. */
		json_t *each = json_array();
		for (int j = 0; j < p->nev; j++)
			json_array_append_new(each, json_pack("{s:f, s:f}",
				"due_s", (double)(p->ev[j].from_ns + to_mono) / 1e9,
				"woke_s", (double)(p->ev[j].to_ns + to_mono) / 1e9));
		json_array_append_new(fr, json_pack("{s:i, s:i, s:I, s:I, s:I, s:f, s:f, s:I, s:o}",
			"cpu", p->cpu, "prio", p->prio, "wakes", (json_int_t)p->wakes,
			"freezes", (json_int_t)(p->nev + p->lost),
			"in_stalls", (json_int_t)freezes_in_stalls(p, w, to_mono, elapsed_s),
			"max_ms", (double)p->max_late_ns / 1e6, "total_ms", (double)p->total_ns / 1e6,
			"min_ms", (json_int_t)(p->min_late_ns / 1000000), "listed", each));
	}
	json_object_set_new(o, "freeze_probes", fr);
	ticker_hist_json(r, o, "latency_us", &t->lat, "ticker.hgrm");
	ticker_hist_json(r, o, "latency_uncorrected_us", &t->lat_sent, "ticker.uncorrected.hgrm");
	ticker_hist_json(r, o, "wake_late_us", &t->wake_late, "ticker.wake.hgrm");
	json_object_set_new(o, "lead_us", json_integer(r->p.ticker_lead_us));
	json_object_set_new(o, "paced_ms", json_real((double)t->paced_ns / 1e6));
	return o;
}

static int write_results(struct run *r, const struct watchdog *w, bool have_stat,
			 const struct cg_stat *st)
{
	struct utsname u;
	uname(&u);
	char relay_how[96], loadgen_how[96], out[512];
	child_describe(&r->relay, relay_how, sizeof(relay_how));
	child_describe(&r->loadgen, loadgen_how, sizeof(loadgen_how));
	json_t *stalls = wd_stalls_json(w);
	json_t *cg = json_pack("{s:i, s:s}", "version", r->cg.version, "path", r->cg_path);
	if (have_stat) {
		json_object_set_new(cg, "nr_periods", json_integer((json_int_t)st->nr_periods));
		json_object_set_new(cg, "nr_throttled", json_integer((json_int_t)st->nr_throttled));
		json_object_set_new(cg, "throttled_us", json_integer((json_int_t)st->throttled_us));
	}
	json_t *doc = json_pack("{s:o, s:s, s:s, s:s, s:f, s:s, s:I, s:o, s:{s:I, s:f}, s:o, s:{s:s, s:s}, s:b, s:o, s:o}",
		"params", params_json(&r->p), "kernel", u.release,
		"kernel_version", u.version, "machine", u.machine,
		"elapsed_s", (double)(clock_ns(CLOCK_MONOTONIC) - r->t0_ns) / 1e9,
		"time_base", "seconds since the relay started (relay.timeseries.csv)",
		"t0_mono_ns", (json_int_t)w->t0_ns,
		"stalls", stalls,
		"watchdog", "polls", (json_int_t)w->polls, "max_poll_late_ms", w->max_poll_gap_ms,
		"cgroup", cg,
		"processes", "relay", relay_how, "loadgen", loadgen_how,
		"loadgen_stopped_at_end", r->loadgen_interrupted,
		"ticker", ticker_json(r, w),
		"problems", json_incref(r->problems));
	path(out, sizeof(out), r->p.out, "scenario.json");
	int rc = json_dump_file(doc, out, JSON_INDENT(1) | JSON_REAL_PRECISION(7));
	json_decref(doc);
	if (rc < 0)
		fprintf(stderr, "demo-scenario: cannot write %s\n", out);
	return rc;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	if (params_parse(argc, argv, &r.p) < 0)
		return EX_USAGE;
	const struct params *p = &r.p;
	if (p->watch)
		return watch_run(p);
	char err[512], file[512];
	if (mkdir(p->out, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "demo-scenario: cannot create %s: %s\n", p->out, strerror(errno));
		return EX_CANTCREAT;
	}
	path(file, sizeof(file), p->out, "events.csv");
	FILE *events = fopen(file, "w");
	if (!events) {
		fprintf(stderr, "demo-scenario: cannot write %s: %s\n", file, strerror(errno));
		return EX_SOFTWARE;
	}
	if (cg_open(&r.cg, NULL, "demo", false, err, sizeof(err)) < 0) {
		fprintf(stderr, "demo-scenario: %s\n", err);
		cg_close(&r.cg);
		return EX_OSERR;
	}
	snprintf(r.cg_path, sizeof(r.cg_path), "%s", r.cg.path);
	struct wd_config cfg = { .poll_ms = p->poll_ms, .stall_ms = p->stall_ms,
		.lift_ms = p->lift_ms, .poll_cpu = p->watchdog_cpu, .writer_cpu = p->cpu,
		.prio = p->watchdog_prio, .quota_us = cg_quota_us(p->cpu_quota_pct, p->period_us),
		.period_us = p->period_us };
	static struct watchdog w;	/* large: the stall records */
	r.t0_ns = clock_ns(CLOCK_MONOTONIC);
	r.deadline_ns = r.t0_ns + (int64_t)(p->duration_s + p->grace_s) * 1000000000;
	if (wd_init(&w, &cfg, &r.cg, events, err, sizeof(err)) < 0 ||
	    wd_apply_quota(&w, err, sizeof(err)) < 0) {
		fprintf(stderr, "demo-scenario: %s\n", err);
		wd_close(&w);
		cg_close(&r.cg);
		fclose(events);
		return EX_OSERR;
	}
	r.problems = json_array();
	int status = 0;
	bool ran = false;
	if (start_relay(&r) < 0) {
		status = EX_UNAVAILABLE;
	} else if (probe_start(&r.probe[0], p->watchdog_cpu, PROBE_PRIO, PROBE_US, r.origin_ns,
			       PROBE_MIN_LATE_NS, err, sizeof(err)) < 0 ||
		   probe_start(&r.probe[1], p->cpu, PROBE_PRIO, PROBE_US, r.origin_ns,
			       PROBE_MIN_LATE_NS, err, sizeof(err)) < 0) {
		problem(&r, "%s", err);
		status = EX_OSERR;
	} else if (p->ticker_us > 0 &&
		   ticker_start(&r.ticker, p->port, p->ticker_cpu, p->ticker_prio, p->ticker_us,
				r.origin_ns + 500000, (int64_t)p->late_ms * 1000, p->list_over_us,
				p->ticker_lead_us, err, sizeof(err)) < 0) {
		problem(&r, "%s", err);
		status = EX_OSERR;
	} else if (start_loadgen(&r) < 0) {
		status = EX_UNAVAILABLE;
	} else {
		ran = true;
		w.cfg.origin_ns = r.origin_ns;
		if (wd_run(&w, r.beat_path, keep_going, &r, err, sizeof(err)) < 0) {
			problem(&r, "%s", err);
			status = EX_OSERR;
		}
	}

	/* loadgen is gone: nothing is throttled any more, the ticker can stop. */
	ticker_stop(&r.ticker);
	probe_stop(&r.probe[0]);
	probe_stop(&r.probe[1]);

	/* The counters first: they must cover the whole run and nothing after. */
	struct cg_stat st;
	bool have_stat = cg_read_stat(&r.cg, &st) == 0;
	char from[4200];
	snprintf(from, sizeof(from), "%s/cpu.stat", r.cg.path);
	path(file, sizeof(file), p->out, "cpu.stat");
	copy_file(&r, from, file);
	wd_close(&w);
	if (w.problem[0])
		problem(&r, "watchdog: %s", w.problem);
	if (ran && child_poll(&r.relay))
		problem(&r, "relay ended before the run did");
	if (!child_wait(&r.loadgen, 0) && r.loadgen.pid > 0 && child_stop(&r.loadgen, SIGINT, 3000))
		problem(&r, "loadgen had to be killed");
	if (child_stop(&r.relay, SIGTERM, 5000))
		problem(&r, "relay had to be killed");
	if (r.loadgen.pid > 0 && !loadgen_ok(&r))
		problem(&r, "loadgen did not exit cleanly (see loadgen.log)");
	if (r.relay.pid > 0 && !child_ok(&r.relay))
		problem(&r, "relay did not exit cleanly (see relay.log)");
	cg_close(&r.cg);
	unlink(r.beat_path);
	if (r.old_qlen > 0 && r.old_qlen < UNIX_QLEN && qlen_write(r.old_qlen) < 0)
		problem(&r, "cannot put %s back to %d: %s", UNIX_QLEN_FILE, r.old_qlen,
			strerror(errno));
	fprintf(stderr, "demo-scenario: done after %.1f s: %d stalls, relay %s\n",
		(double)(clock_ns(CLOCK_MONOTONIC) - r.t0_ns) / 1e9, w.nstalls,
		child_ok(&r.relay) ? "exited cleanly" : "did not exit cleanly");
	fclose(events);
	int wrote = write_results(&r, &w, have_stat, &st);
	ticker_free(&r.ticker);
	probe_free(&r.probe[0]);
	probe_free(&r.probe[1]);
	if (status == 0 && json_array_size(r.problems) > 0)
		status = 1;
	json_decref(r.problems);
	return wrote < 0 ? EX_SOFTWARE : status;
}
