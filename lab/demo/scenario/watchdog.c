#include "watchdog.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "rt.h"

/* How long the poller waits for the quota writer before calling it broken. */
#define WRITER_ANSWER_MS 2000

static double secs(const struct watchdog *w, int64_t ns)
{
	return (double)(ns - w->t0_ns) / 1e9;
}

static void note_problem(struct watchdog *w, const char *what)
{
	if (!w->problem[0])
		snprintf(w->problem, sizeof(w->problem), "%s", what);
}

static void *writer_main(void *arg)
{
	struct watchdog *w = arg;
	char why[256];
	w->req_status = 0;
	if (rt_pin(w->cfg.writer_cpu, why, sizeof(why)) < 0 ||
	    rt_set_fifo(w->cfg.prio, why, sizeof(why)) < 0) {
		snprintf(w->req_err, sizeof(w->req_err), "quota writer: %s", why);
		w->req_status = -1;
		sem_post(&w->done_sem);
		return NULL;
	}
	sem_post(&w->done_sem);
	for (;;) {
		while (sem_wait(&w->req_sem) < 0 && errno == EINTR)
			;
		if (w->req == WD_EXIT)
			return NULL;
		int64_t quota = w->req == WD_LIFT ? -1 : w->cfg.quota_us;
		w->req_status = cg_set_quota(w->cg, quota, w->cfg.period_us,
					     w->req_err, sizeof(w->req_err));
		w->req_done_ns = clock_ns(CLOCK_MONOTONIC);
		sem_post(&w->done_sem);
	}
}

static int wait_done(struct watchdog *w, int ms)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	int rc;
	while ((rc = sem_clockwait(&w->done_sem, CLOCK_MONOTONIC, &until)) < 0 &&
	       errno == EINTR)
		;
	return rc;
}

/* Have the writer thread lift or restore the quota; returns the time it was
 * written, or -1 (problem noted) when it failed or did not answer. */
static int64_t request(struct watchdog *w, enum wd_request r)
{
	if (!w->writer_up)
		return -1;
	w->req = r;
	sem_post(&w->req_sem);
	if (wait_done(w, WRITER_ANSWER_MS) < 0) {
		/* It may answer later; a late answer must not be taken for the
		 * next request's, so stop using it. */
		w->writer_up = false;
		note_problem(w, "the quota writer did not answer within 2 s");
		return -1;
	}
	if (w->req_status < 0) {
		note_problem(w, w->req_err);
		return -1;
	}
	return w->req_done_ns;
}

static void event(struct watchdog *w, double t, const char *kind, double ms,
		  const char *detail)
{
	fprintf(w->events, "%.4f,%s,%.1f,\"%s\"\n", t, kind, ms, detail);
	fflush(w->events);
	/* The same line on stderr: the guest's console tells the story even
	 * when the guest never gets to send its results. */
	fprintf(stderr, "demo-scenario: %8.3f s %s %.1f ms %s\n", t, kind, ms, detail);
}

static void quota_event(struct watchdog *w, int64_t at, bool lift, const char *why)
{
	char detail[160];
	if (lift)
		snprintf(detail, sizeof(detail), "cpu.max max %lld%s",
			 (long long)w->cfg.period_us, why);
	else
		snprintf(detail, sizeof(detail), "cpu.max %lld %lld%s",
			 (long long)w->cfg.quota_us, (long long)w->cfg.period_us, why);
	event(w, secs(w, at), lift ? "quota_lift" : "quota_restore", 0, detail);
}

static void stall_event(struct watchdog *w, const struct wd_stall *s)
{
	char detail[200];
	if (s->end_s < 0)
		snprintf(detail, sizeof(detail),
			 "no relay progress; quota lifted at %.3f; still stuck at the end",
			 s->lift_s);
	else
		snprintf(detail, sizeof(detail),
			 "no relay progress; quota lifted at %.3f; ended %.1f ms after the lift%s",
			 s->lift_s, (s->end_s - s->lift_s) * 1000,
			 s->cleared ? "" : " (quota already restored)");
	double end = s->end_s < 0 ? s->restore_s : s->end_s;
	event(w, s->start_s, "stall", (end - s->start_s) * 1000, detail);
}

int wd_init(struct watchdog *w, const struct wd_config *cfg, struct cg *cg,
	    FILE *events, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	w->cg = cg;
	w->t0_ns = clock_ns(CLOCK_MONOTONIC);
	w->events = events;
	fprintf(events, "t_s,kind,duration_ms,detail\n");
	sem_init(&w->req_sem, 0, 0);
	sem_init(&w->done_sem, 0, 0);
	int rc = pthread_create(&w->writer, NULL, writer_main, w);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the quota writer thread: %s",
			 strerror(rc));
		return -1;
	}
	wait_done(w, WRITER_ANSWER_MS);
	if (w->req_status < 0) {
		snprintf(err, errlen, "%s", w->req_err);
		pthread_join(w->writer, NULL);
		return -1;
	}
	w->writer_up = true;
	return 0;
}

int wd_apply_quota(struct watchdog *w, char *err, size_t errlen)
{
	if (request(w, WD_RESTORE) < 0) {
		snprintf(err, errlen, "%s", w->problem);
		return -1;
	}
	return 0;
}

/* Record the relay loop's kernel stack (/proc/TID/stack): where the relay
 * was while it made no progress. */
static void relay_stack(struct watchdog *w, struct wd_stall *s)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/stack", heartbeat_map_oldest_tid(&w->beat));
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	size_t used = 0;
	int frames = 0;
	for (char *line = strtok(buf, "\n"); line && frames < 6; line = strtok(NULL, "\n")) {
		char *name = strchr(line, ']');
		if (!name)
			continue;
		name += 1 + strspn(name + 1, " ");
		name[strcspn(name, "+ ")] = 0;
		used += (size_t)snprintf(s->stack + used, used < sizeof(s->stack) ?
					 sizeof(s->stack) - used : 0, "%s%s",
					 frames++ ? " < " : "", name);
	}
}

static void stall_begins(struct watchdog *w, int64_t last_ns, int64_t now)
{
	if (w->nstalls == WD_MAX_STALLS) {
		note_problem(w, "more stalls than the watchdog can record");
		return;
	}
	struct wd_stall *s = &w->stalls[w->nstalls++];
	*s = (struct wd_stall){ .start_s = secs(w, last_ns), .detected_s = secs(w, now),
				.lift_s = -1, .end_s = -1, .restore_s = -1 };
	w->stuck = true;
	relay_stack(w, s);
	fprintf(stderr, "demo-scenario: %8.3f s no relay progress since %.3f s (relay at %s): "
		"lifting the quota\n", s->detected_s, s->start_s, s->stack[0] ? s->stack : "?");
	int64_t at = request(w, WD_LIFT);
	if (at >= 0) {
		w->lifted = true;
		s->lift_s = secs(w, at);
		quota_event(w, at, true, "");
	}
}

static void restore(struct watchdog *w, struct wd_stall *s, const char *why)
{
	int64_t at = request(w, WD_RESTORE);
	if (at < 0)
		return;
	w->lifted = false;
	s->restore_s = secs(w, at);
	quota_event(w, at, false, why);
}

static void stall_ends(struct watchdog *w, int64_t progress_ns)
{
	struct wd_stall *s = &w->stalls[w->nstalls - 1];
	s->end_s = secs(w, progress_ns);
	s->cleared = w->lifted;
	w->stuck = false;
	if (w->lifted)
		restore(w, s, "");
	stall_event(w, s);
}

int wd_run(struct watchdog *w, const char *beat_path,
	   bool (*keep_going)(struct watchdog *w, void *arg), void *arg,
	   char *err, size_t errlen)
{
	char why[256];
	if (heartbeat_map_open(&w->beat, beat_path, err, errlen) < 0)
		return -1;
	w->t0_ns = heartbeat_map_start_ns(&w->beat);
	if (rt_pin(w->cfg.poll_cpu, why, sizeof(why)) < 0 ||
	    rt_set_fifo(w->cfg.prio, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "watchdog: %s", why);
		return -1;
	}
	uint64_t last;
	int64_t last_ns, lift_ns = 0;
	heartbeat_map_read(&w->beat, &last, &last_ns);
	int64_t prev = clock_ns(CLOCK_MONOTONIC), next = w->cfg.origin_ns;
	if (next < prev)	/* keep to the grid of whole milliseconds */
		next += (prev - next) / 1000000 * 1000000;
	/* How long the relay made no progress while this poller kept running:
	 * an emulated guest can freeze as a whole for a moment on a busy host,
	 * and that is no stall of the relay's. Each poll adds its interval, at
	 * most twice the poll period. */
	int64_t unmoved_ns = 0;
	while (keep_going(w, arg)) {
		/* During a stall, poll every millisecond: its end is measured
		 * to the poll. */
		int64_t step = (w->stuck ? 1 : w->cfg.poll_ms) * 1000000LL;
		next += step;
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		if (next < now - step)	/* fell far behind: no burst, same grid */
			next += (now - next) / step * step;
		struct timespec ts = clock_ns_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = clock_ns(CLOCK_MONOTONIC);
		double late = (double)(now - next) / 1e6;
		if (late > w->max_poll_gap_ms)
			w->max_poll_gap_ms = late;
		w->polls++;
		int64_t seen = now - prev;
		prev = now;

		uint64_t p;
		int64_t p_ns;
		heartbeat_map_read(&w->beat, &p, &p_ns);
		if (p != last) {
			last = p;
			last_ns = p_ns < now ? p_ns : now;
			unmoved_ns = 0;
			if (w->stuck)
				stall_ends(w, last_ns);
			continue;
		}
		unmoved_ns += seen < 2 * step ? seen : 2 * step;
		if (w->armed && !w->stuck && unmoved_ns >= w->cfg.stall_ms * 1000000LL) {
			stall_begins(w, last_ns, now);
			lift_ns = now;
		} else if (w->stuck && w->lifted &&
			   now - lift_ns >= w->cfg.lift_ms * 1000000LL) {
			restore(w, &w->stalls[w->nstalls - 1],
				"; the stall outlived the lift, quota restored anyway");
		}
	}
	return 0;
}

static json_t *stall_json(const struct wd_stall *s)
{
	bool ended = s->end_s >= 0;
	double last = ended ? s->end_s : s->restore_s;
	json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:b, s:b, s:s}",
		"start_s", s->start_s, "detected_s", s->detected_s,
		"lift_s", s->lift_s, "restore_s", s->restore_s,
		"length_ms", (last - s->start_s) * 1000, "ended", ended,
		"cleared", s->cleared, "relay_stack", s->stack);
	json_object_set_new(o, "end_s", ended ? json_real(s->end_s) : json_null());
	json_object_set_new(o, "after_lift_ms", ended && s->lift_s >= 0 ?
			    json_real((s->end_s - s->lift_s) * 1000) : json_null());
	return o;
}

json_t *wd_stalls_json(const struct watchdog *w)
{
	json_t *stalls = json_array();
	for (int i = 0; i < w->nstalls; i++)
		json_array_append_new(stalls, stall_json(&w->stalls[i]));
	return stalls;
}

void wd_close(struct watchdog *w)
{
	if (w->stuck && w->nstalls > 0) {
		struct wd_stall *s = &w->stalls[w->nstalls - 1];
		if (w->lifted)
			restore(w, s, "; end of run");
		if (s->restore_s < 0)
			s->restore_s = secs(w, clock_ns(CLOCK_MONOTONIC));
		stall_event(w, s);
		w->stuck = false;
	}
	if (w->writer_up) {
		w->req = WD_EXIT;
		sem_post(&w->req_sem);
		pthread_join(w->writer, NULL);
		w->writer_up = false;
	}
	heartbeat_map_close(&w->beat);
}
