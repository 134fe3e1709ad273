/*
 * loadgen: open-loop UDP load generator. Sends at a constant rate on a
 * fixed schedule, measures latency from each datagram's intended send time
 * (so a stall in the system under test shows in full) and from its actual
 * send time, optionally under a CPU bandwidth quota whose throttling it
 * reports next to the latency.
 */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "echo.h"
#include "merge.h"
#include "opts.h"
#include "output.h"
#include "run.h"
#include "sweep.h"

static int single(const struct opts *o)
{
	char err[1536] = "";
	struct run_result r;
	int status = run_once(o, o->rate, o->quota_pct, &r, err, sizeof(err));
	if (status && status != 130) {
		fprintf(stderr, "loadgen: %s\n", err);
		run_result_free(&r);
		return status;
	}
	if (status == 130)
		fprintf(stderr, "loadgen: interrupted; results so far:\n");
	output_table(stdout, o, &r);
	if (!r.rate_ok)
		fprintf(stderr, "loadgen: achieved %.0f pps, %.1f%% below the "
			"target %.0f pps: the sender fell behind (max schedule "
			"error %lld us); use more --threads, a lower --rate or "
			"more CPU\n", r.achieved_rate,
			(1 - r.achieved_rate / r.target_rate) * 100,
			r.target_rate, (long long)hist_max(&r.sched_err));
	if (output_files(o, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen: %s\n", err);
		if (!status)
			status = EX_CANTCREAT;
	}
	if (!status && r.sent && !r.received) {
		fprintf(stderr, "loadgen: no reply came back from %s (%llu "
			"datagrams refused)\n", o->target_text,
			(unsigned long long)r.refused);
		status = EX_UNAVAILABLE;
	}
	run_result_free(&r);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[1536];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);
	opts_defaults(&o);
	if (opts_parse(&o, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen: %s\n", err);
		return EX_USAGE;
	}
	switch (o.mode) {
	case OPTS_HELP:
		opts_usage(stdout);
		return 0;
	case OPTS_ECHO: {
		int status = echo_serve(&o.listen, o.service_us, err, sizeof(err));
		fprintf(stderr, "loadgen echo: %s\n", err);
		return status;
	}
	case OPTS_SWEEP: {
		run_signals();
		int status = sweep_run(&o, err, sizeof(err));
		if (status)
			fprintf(stderr, "loadgen: %s\n", err);
		return status;
	}
	case OPTS_RUN:
		break;
	}
	run_signals();
	return single(&o);
}
