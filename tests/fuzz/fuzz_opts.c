/*
 * libFuzzer target for loadgen's command line (loadgen/opts.c, and the
 * address and CPU list parsers of lib/ it calls): rates, times,
 * percentages and SLO lists are parsed by hand. The input is split at
 * newlines into arguments after "loadgen". Every command line either
 * parses into settings loadgen can run with, or fails with a one-line
 * message; never a crash, an overflow or a value outside its range.
 * Names are not resolved (ADDR_NUMERIC): no DNS queries, no waiting.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../loadgen/opts.h"
#include "../../loadgen/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

static bool runnable(const struct opts *o)
{
	if (o->mode == OPTS_HELP)
		return true;
	if (o->mode == OPTS_ECHO)
		return addr_port(&o->listen) != 0;
	double hi = o->mode == OPTS_SWEEP && o->sweep == OPTS_SWEEP_RATE
		? fmax(o->from, o->to) : o->rate;
	return o->threads >= 1 && o->threads <= OPTS_MAX_THREADS &&
	       o->flows >= o->threads && o->size >= WIRE_HDR_LEN &&
	       o->size <= WIRE_MAX_LEN && isfinite(hi) && hi > 0 &&
	       o->duration_s >= 0.001 && isfinite(o->duration_s) &&
	       o->timeout_ms >= 1 && o->window_ms >= 1 && o->pause_ms >= 0 &&
	       (o->quota_pct < 0 || (o->quota_pct > 0 && isfinite(o->quota_pct))) &&
	       o->period_us >= 1000 && o->period_us <= 1000000 &&
	       o->nslo >= 0 && o->nslo <= OPTS_MAX_SLO &&
	       o->ncpus >= 0 && o->ncpus <= OPTS_MAX_CPUS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an argument ends at a NUL byte, as it would in argv */
	char *text = strndup((const char *)data, size);
	if (!text)
		return 0;
	char *argv[MAX_ARGS + 2] = { "loadgen" };
	int argc = 1;
	for (char *save, *a = strtok_r(text, "\n", &save); a && argc <= MAX_ARGS;
	     a = strtok_r(NULL, "\n", &save))
		argv[argc++] = a;
	argv[argc] = NULL;

	struct opts o;
	char err[1536] = "";
	opts_defaults(&o);
	o.addr_flags = ADDR_NUMERIC;	/* no DNS queries from a fuzzer */
	if (opts_parse(&o, argc, argv, err, sizeof(err)) < 0) {
		if (!err[0] || strchr(err, '\n'))
			abort();
	} else if (!runnable(&o)) {
		abort();
	}
	/* the value parsers on their own, as sweep and tests call them */
	for (int i = 1; i < argc; i++) {
		struct opts_slo slo[OPTS_MAX_SLO];
		double rate;
		int64_t us;
		int n = opts_parse_slo(argv[i], slo, OPTS_MAX_SLO);
		if (n > OPTS_MAX_SLO || n == 0)
			abort();
		if (opts_parse_rate(argv[i], &rate) == 0 &&
		    !(rate > 0 && isfinite(rate)))
			abort();
		if (opts_parse_time_us(argv[i], &us) == 0 && us < 0)
			abort();
	}
	free(text);
	return 0;
}
