/* Unit tests for lib/results: the docs/formats.md percentile object (keys,
 * order, types), .hgrm files (the shared fixture, and the error message)
 * and the time series rows, with and without extra columns, against
 * tests/fixtures/results/. RESULTS_WRITE_FIXTURE=1 prints what was made. */
#include "check.h"
#include "results.h"

#include <string.h>
#include <unistd.h>

/* The whole of path, NUL-terminated (caller frees), or NULL. */
static char *read_all(const char *path, size_t *len)
{
	char *buf = NULL;
	FILE *in = fopen(path, "r"), *mem = open_memstream(&buf, len);
	int c;
	while (in && (c = getc(in)) != EOF)
		putc(c, mem);
	fclose(mem);
	if (!in) {
		free(buf);
		return NULL;
	}
	fclose(in);
	return buf;
}

static void check_fixture_text(const char *name, const char *got, size_t len)
{
	if (getenv("RESULTS_WRITE_FIXTURE"))
		fputs(got, stdout);
	size_t n;
	char *want = read_all(check_fixture(name), &n);
	CHECK(want != NULL);
	if (!want)
		return;
	CHECK_EQ_INT(len, n);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "%s: got:\n%s", name, got);
	CHECK(strcmp(got, want) == 0);
	free(want);
}

/* The values of the hgrm fixture: 1 .. 10000 us. */
static void fill_1to10000(struct hist *h)
{
	CHECK(hist_init_us(h) == 0);
	for (int64_t v = 1; v <= 10000; v++)
		hist_record(h, v);
}

static void test_percentiles(void)
{
	struct hist h;
	fill_1to10000(&h);
	json_t *j = results_percentiles(&h);
	char *text = json_dumps(j, JSON_PRESERVE_ORDER |
				   JSON_REAL_PRECISION(6));
	char *line = NULL;
	CHECK(text && asprintf(&line, "%s\n", text) > 0);
	if (line)
		check_fixture_text("results/percentiles.json", line,
				   strlen(line));
	free(line);
	free(text);
	CHECK(json_is_real(json_object_get(j, "mean")));
	CHECK(json_is_integer(json_object_get(j, "max")));
	json_decref(j);

	/* empty: every key still there, zeros */
	hist_reset(&h);
	j = results_percentiles(&h);
	CHECK_EQ_INT(json_object_size(j), 8);
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "count")), 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "p99_99")), 0);
	CHECK(json_real_value(json_object_get(j, "mean")) == 0.0);
	json_decref(j);
	hist_free(&h);
}

static void test_hgrm(void)
{
	const char *tmp = getenv("TEST_TMP");
	char path[4200], err[4400];
	snprintf(path, sizeof(path), "%s/test_results.%d.hgrm",
		 tmp ? tmp : P_tmpdir, (int)getpid());
	struct hist h;
	fill_1to10000(&h);
	CHECK(results_write_hgrm(&h, path, err, sizeof(err)) == 0);
	size_t n;
	char *got = read_all(path, &n);
	CHECK(got != NULL);
	/* the same bytes as hist_write_hgrm's fixture (ms, 5 ticks) */
	if (got)
		check_fixture_text("hist_1to10000.hgrm", got, n);
	free(got);
	unlink(path);

	err[0] = 0;
	CHECK(results_write_hgrm(&h, "/nonexistent/dir/x.hgrm", err,
				 sizeof(err)) == -1);
	CHECK(strcmp(err, "/nonexistent/dir/x.hgrm: cannot create a file "
		      "next to it: No such file or directory") == 0);
	hist_free(&h);
}

static void test_series(void)
{
	struct hist h;
	struct results_window w[3], none = { 0 };
	CHECK(hist_init_us(&h) == 0);
	for (int64_t v = 1; v <= 100; v++)
		hist_record(&h, v);
	results_window_of(&w[0], &h);
	CHECK_EQ_INT(w[0].count, 100);
	CHECK_EQ_INT(w[0].p50_us, 50);
	CHECK_EQ_INT(w[0].p99_us, 99);
	CHECK_EQ_INT(w[0].max_us, 100);
	hist_reset(&h);
	results_window_of(&w[1], &h);
	CHECK_EQ_INT(w[1].count, 0);
	CHECK_EQ_INT(w[1].max_us, 0);
	hist_record(&h, 150000);
	hist_record(&h, 200000);
	results_window_of(&w[2], &h);
	hist_free(&h);

	const int64_t ms = 1000000;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	/* the five standard columns, 100 ms windows */
	results_series_header(f, "test_results\nstandard columns", NULL);
	for (int i = 0; i < 3; i++)
		results_series_row(f, i, 100 * ms, &w[i], NULL);
	/* extra columns (as relay's rx_*), 250 ms windows, a trailing
	 * newline in the comment makes no empty comment line */
	results_series_header(f, "extra columns\n", ",rx_count,rx_p50_us,"
			      "rx_p99_us,rx_max_us");
	results_series_row(f, 0, 250 * ms, &w[0], &w[2]);
	results_series_row(f, 1, 250 * ms, &none, &none);
	results_series_row(f, 39, 250 * ms, &w[2], &w[1]);
	results_comment(f, NULL);
	results_comment(f, "a\nb");
	CHECK(!ferror(f));
	fclose(f);
	check_fixture_text("results/timeseries.csv", buf, len);
	free(buf);
}

int main(void)
{
	test_percentiles();
	test_hgrm();
	test_series();
	return check_done();
}
