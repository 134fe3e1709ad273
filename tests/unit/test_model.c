/* Unit tests for lab/model: the lock kinds' sharing and writer
 * preference, the time series windows, and the summary's counts, JSON and
 * verdict. (Priority inheritance itself: test_model_pi.c, it needs RT.) */
#include "check.h"
#include "../../lab/model/model.h"
#include "../../lab/model/msum.h"
#include "../../lab/model/mseries.h"
#include "../../lab/model/rlock.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* True once thread tid sleeps (in the kernel: blocked on the lock's futex),
 * polled for up to 2 s. */
static int blocked(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[n] = 0;
			char *end = strrchr(buf, ')');
			if (end && end[1] == ' ' && end[2] == 'S')
				return 1;
		}
		sleep_ms(10);
	}
	return 0;
}

struct taker {
	struct rlock *lock;
	int excl;
	atomic_int tid;
	atomic_int got;		/* order in which it got the lock, 0: not yet */
	atomic_int *order;
};

static void *take(void *arg)
{
	struct taker *t = arg;
	atomic_store(&t->tid, (int)syscall(SYS_gettid));
	int e = t->excl ? rlock_lock_excl(t->lock) : rlock_lock_shared(t->lock);
	if (e == 0) {
		atomic_store(&t->got, atomic_fetch_add(t->order, 1) + 1);
		rlock_unlock(t->lock);
	}
	return NULL;
}

static void start(pthread_t *th, struct taker *t, struct rlock *l, int excl,
		  atomic_int *order)
{
	*t = (struct taker){ .lock = l, .excl = excl, .order = order };
	pthread_create(th, NULL, take, t);
	while (!atomic_load(&t->tid))
		sleep_ms(1);
}

static void test_names(void)
{
	for (int k = 0; k < RLOCK_KINDS; k++) {
		enum rlock_kind got = RLOCK_KINDS;
		CHECK(rlock_parse(rlock_name((enum rlock_kind)k), &got) == 0);
		CHECK_EQ_INT(got, k);
	}
	enum rlock_kind got;
	CHECK(rlock_parse("spinlock", &got) == -1);
	CHECK(strcmp(rlock_name(RLOCK_PI_MUTEX), "pi_mutex") == 0);
}

/* rwlock: readers share; once a writer waits, a new reader queues behind it
 * (the stock kernel's behaviour that stalls every producer). */
static void test_rwlock_prefers_writer(void)
{
	struct rlock l;
	atomic_int order = 0;
	pthread_t r2th, wth, r3th;
	struct taker r2, w, r3;
	CHECK(rlock_init(&l, RLOCK_RWLOCK) == 0);
	CHECK(rlock_lock_shared(&l) == 0);

	start(&r2th, &r2, &l, 0, &order);
	pthread_join(r2th, NULL);
	CHECK_EQ_INT(atomic_load(&r2.got), 1);	/* shared with us */

	start(&wth, &w, &l, 1, &order);
	CHECK(blocked(atomic_load(&w.tid)));
	start(&r3th, &r3, &l, 0, &order);
	CHECK(blocked(atomic_load(&r3.tid)));
	CHECK_EQ_INT(atomic_load(&r3.got), 0);	/* queued behind the writer */

	rlock_unlock(&l);
	pthread_join(wth, NULL);
	pthread_join(r3th, NULL);
	CHECK_EQ_INT(atomic_load(&w.got), 2);
	CHECK_EQ_INT(atomic_load(&r3.got), 3);
	rlock_destroy(&l);
}

/* The mutex kinds: shared is exclusive too, as the fix's spinlock is. */
static void test_mutex_excludes(enum rlock_kind kind)
{
	struct rlock l;
	atomic_int order = 0;
	pthread_t th;
	struct taker t;
	CHECK(rlock_init(&l, kind) == 0);
	CHECK(rlock_lock_shared(&l) == 0);
	start(&th, &t, &l, 0, &order);
	CHECK(blocked(atomic_load(&t.tid)));
	CHECK_EQ_INT(atomic_load(&t.got), 0);
	rlock_unlock(&l);
	pthread_join(th, NULL);
	CHECK_EQ_INT(atomic_load(&t.got), 1);
	rlock_destroy(&l);
}

static char *csv_of(const struct mseries *s, const char *comment, int events)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK((events ? mseries_write_events(s, f, comment) :
			mseries_write_csv(s, f, comment)) == 0);
	fclose(f);
	return buf;
}

static void test_series(void)
{
	struct mseries s;
	CHECK(mseries_init(&s, 0, 1000, 25) == -1);
	CHECK(mseries_init(&s, 100000, 1000, 0) == -1);
	/* 4 windows; waits over 25 us are stalls */
	CHECK(mseries_init(&s, 100000, 400000000LL, 25) == 0);
	CHECK_EQ_INT(s.cap, 4);
	mseries_record(&s, 50000000LL, 10);
	mseries_record(&s, 150000000LL, 20);
	mseries_record(&s, 199999999LL, 30);
	mseries_record(&s, 350000000LL, 5);
	mseries_record(&s, 900000000LL, 7);	/* past the end: last window */
	mseries_finish(&s, 400000000LL);
	CHECK_EQ_INT(s.nrows, 4);
	char *csv = csv_of(&s, "epmodel test\nsecond line", 0);
	CHECK(strcmp(csv, "# epmodel test\n# second line\n"
			  "t_s,count,p50_us,p99_us,max_us\n"
			  "0.100,1,10,10,10\n"
			  "0.200,2,20,30,30\n"
			  "0.300,0,,,\n"
			  "0.400,2,5,7,7\n") == 0);
	free(csv);
	csv = csv_of(&s, "stalls", 1);
	CHECK(strcmp(csv, "# stalls\n"
			  "t_s,kind,duration_ms,detail\n"
			  "0.200,stall,0.030,\"the consumer waited for the lock\"\n")
	      == 0);
	free(csv);
	mseries_free(&s);

	/* A run cut short by a signal: only the windows it covered. */
	CHECK(mseries_init(&s, 100000, 3000000000LL, 50000) == 0);
	mseries_record(&s, 10, 1);
	mseries_finish(&s, 150000000LL);
	CHECK_EQ_INT(s.nrows, 2);
	CHECK_EQ_INT(s.nstalls, 0);
	mseries_free(&s);
}

static void fake(struct model_result *r, enum rlock_kind kind,
		 const int64_t *waits, int n)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	hist_init_us(&r->waits);
	for (int i = 0; i < n; i++)
		hist_record(&r->waits, waits[i]);
}

static void test_summary(void)
{
	static const int64_t stock[] = { 5, 8, 60000, 95000, 97000, 40000 };
	static const int64_t pi[] = { 0, 3, 30, 60 };
	static const int64_t slow_pi[] = { 3, 25000 };
	struct model_result rs[3];
	fake(&rs[0], RLOCK_RWLOCK, stock, 6);
	fake(&rs[1], RLOCK_PI_MUTEX, pi, 4);
	CHECK_EQ_INT(msum_over(&rs[0].waits, MODEL_STALL_US), 3);
	CHECK_EQ_INT(msum_over(&rs[1].waits, MSUM_PI_LIMIT_US), 0);

	char v[512];
	msum_verdict(v, sizeof(v), rs, 2);
	CHECK(strstr(v, "rwlock 97.") != NULL);
	CHECK(strstr(v, "pi_mutex 0.060 ms") != NULL);
	CHECK(strstr(v, "rwlock/pi_mutex 16") != NULL);	/* 97000/60 */
	CHECK(strstr(v, "boosts") != NULL);

	msum_verdict(v, sizeof(v), rs, 1);
	CHECK(strstr(v, "run both") != NULL);

	fake(&rs[2], RLOCK_PI_MUTEX, slow_pi, 2);
	msum_verdict(v, sizeof(v), (struct model_result[]){ rs[0], rs[2] }, 2);
	CHECK(strstr(v, "no clear separation") != NULL);

	struct model_params p;
	model_defaults(&p);
	json_t *j = msum_json(&p, 2, rs, 2, "the verdict");
	CHECK_EQ_INT(json_integer_value(json_object_get(
		json_object_get(j, "rwlock"), "waits_over_50ms")), 3);
	CHECK_EQ_INT(json_integer_value(json_object_get(
		json_object_get(j, "rwlock"), "waits")), 6);
	json_t *pct = json_object_get(json_object_get(j, "pi_mutex"), "wait_us");
	CHECK_EQ_INT(json_integer_value(json_object_get(pct, "max")), 60);
	CHECK_EQ_INT(json_integer_value(json_object_get(pct, "count")), 4);
	static const char *const keys[] = { "p50", "p90", "p99", "p99_9",
					    "p99_99", "max", "count", "mean" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK(json_is_number(json_object_get(pct, keys[i])));
	CHECK(json_object_get(j, "mutex") == NULL);
	CHECK_EQ_INT(json_integer_value(json_object_get(
		json_object_get(j, "params"), "quota_us")), 5000);
	CHECK(strcmp(json_string_value(json_object_get(j, "verdict")),
		     "the verdict") == 0);
	json_decref(j);

	for (int i = 0; i < 3; i++)
		hist_free(&rs[i].waits);
}

/* The three files of a variant, named after it, in the formats the report
 * reads: hgrm in ms, the time series and the stall events. */
static void test_files(void)
{
	const char *tmp = getenv("TEST_TMP");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/test_model.XXXXXX", tmp ? tmp : P_tmpdir);
	CHECK(mkdtemp(dir) != NULL);
	struct model_params p;
	model_defaults(&p);
	struct model_result r = { .kind = RLOCK_MUTEX };
	CHECK(hist_init_us(&r.waits) == 0);
	CHECK(mseries_init(&r.series, p.window_us, p.duration_s * 1000000000LL,
			   MODEL_STALL_US) == 0);
	hist_record(&r.waits, 95000);
	mseries_record(&r.series, 5000000, 95000);
	mseries_finish(&r.series, p.duration_s * 1000000000LL);

	char err[256], path[4200], line[256];
	CHECK(msum_write_variant(dir, &p, &r, err, sizeof(err)) == 0);
	static const char *const first[][2] = {
		{ "mutex.hgrm", "       Value     Percentile TotalCount 1/(1-Percentile)\n" },
		{ "mutex.timeseries.csv", "# epmodel mutex: RT consumer's wait for the lock, every 1000 us\n" },
		{ "mutex.events.csv", "# epmodel mutex: every wait of the RT consumer over 50 ms, from when it began\n" },
	};
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, first[i][0]);
		FILE *f = fopen(path, "r");
		CHECK(f != NULL);
		if (!f)
			continue;
		CHECK(fgets(line, sizeof(line), f) != NULL);
		CHECK(strcmp(line, first[i][1]) == 0);
		fclose(f);
		unlink(path);
	}
	CHECK(msum_write_variant("/nonexistent/dir", &p, &r, err, sizeof(err))
	      == -1);
	CHECK(strstr(err, "/nonexistent/dir/mutex.hgrm") != NULL);
	rmdir(dir);
	model_result_free(&r);
}

int main(void)
{
	test_names();
	test_rwlock_prefers_writer();
	test_mutex_excludes(RLOCK_PI_MUTEX);
	test_mutex_excludes(RLOCK_MUTEX);
	test_series();
	test_summary();
	test_files();
	return check_done();
}
