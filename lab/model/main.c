/*
 * epmodel: the userspace model of the epoll ready-list locking. Runs each
 * lock kind in turn with the same producers, quota and consumer, writes the
 * result files and prints the comparison.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "cgroup.h"
#include "model.h"
#include "msum.h"
#include "rt.h"

static void usage(FILE *out)
{
	fputs(
"usage: epmodel [OPTION]...\n"
"Producers in a CPU-quota cgroup take a lock shared, a SCHED_FIFO consumer\n"
"takes it exclusive every tick; all on one CPU. Reports how long the consumer\n"
"waited, per lock kind. Needs root (cgroup, SCHED_FIFO).\n"
"\n"
"  -v, --variant LIST  lock kinds, comma-separated: rwlock, pi_mutex, mutex\n"
"                      (default: all three, in that order)\n"
"  -d, --duration S    seconds per lock kind (default 3)\n"
"  -q, --cpu-quota-pct PCT  the producers' cpu.max quota, % of one CPU\n"
"                      per period (default 5)\n"
"  -p, --period-us US  the cpu.max period (default 100000)\n"
"  -n, --producers N   producer threads (default 2)\n"
"  -c, --cpu N         the CPU everything runs on (default: the last allowed)\n"
"  -P, --prio N        the consumer's SCHED_FIFO priority (default 50)\n"
"  -t, --tick US       the consumer takes the lock this often (default 1000)\n"
"      --hold US       a producer's critical section (default 20)\n"
"      --gap US        a producer's work between sections (default 2)\n"
"      --window US     time series window (default 100000)\n"
"  -o, --out DIR       where the result files go (default .; created)\n"
"  -h, --help\n"
"\n"
"Writes DIR/<variant>.hgrm, DIR/<variant>.timeseries.csv, DIR/summary.json.\n"
"Exit status: 0 done, 64 bad usage, 70 internal failure, 71 the system\n"
"refused (cgroup, SCHED_FIFO, pinning), 128+N ended by signal N.\n", out);
}

/* Parse a whole decimal number in [lo, hi] or exit with EX_USAGE. */
static long long number(const char *opt, const char *s, long long lo,
			long long hi)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "epmodel: %s wants a number from %lld to %lld, "
			"not '%s'\n", opt, lo, hi, s);
		exit(EX_USAGE);
	}
	return v;
}

/* Parse LIST into kinds; returns how many, or exits with EX_USAGE. */
static int parse_variants(char *list, enum rlock_kind *kinds)
{
	int n = 0;
	for (char *save, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		enum rlock_kind k;
		if (rlock_parse(name, &k) != 0) {
			fprintf(stderr, "epmodel: no lock kind '%s' (rwlock, "
				"pi_mutex, mutex)\n", name);
			exit(EX_USAGE);
		}
		for (int i = 0; i < n; i++) {
			if (kinds[i] == k) {
				fprintf(stderr, "epmodel: '%s' given twice\n",
					name);
				exit(EX_USAGE);
			}
		}
		kinds[n++] = k;
	}
	if (n == 0) {
		fprintf(stderr, "epmodel: --variant names no lock kind\n");
		exit(EX_USAGE);
	}
	return n;
}

static int last_allowed_cpu(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (int c = CPU_SETSIZE - 1; c > 0; c--)
		if (CPU_ISSET(c, &set))
			return c;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "duration", required_argument, NULL, 'd' },
		{ "cpu-quota-pct", required_argument, NULL, 'q' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "producers", required_argument, NULL, 'n' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "prio", required_argument, NULL, 'P' },
		{ "tick", required_argument, NULL, 't' },
		{ "hold", required_argument, NULL, 'H' },
		{ "gap", required_argument, NULL, 'G' },
		{ "window", required_argument, NULL, 'W' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct model_params p;
	model_defaults(&p);
	p.cpu = last_allowed_cpu();
	enum rlock_kind kinds[RLOCK_KINDS] = { RLOCK_RWLOCK, RLOCK_PI_MUTEX,
					       RLOCK_MUTEX };
	int nkinds = RLOCK_KINDS;
	const char *out = ".";
	long long quota_pct = p.quota_us * 100 / p.period_us;
	int c;
	while ((c = getopt_long(argc, argv, "v:d:q:p:n:c:P:t:o:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'v': nkinds = parse_variants(optarg, kinds); break;
		case 'd': p.duration_ns = number("--duration", optarg, 1, 3600)
					  * 1000000000LL; break;
		case 'q': quota_pct = number("--cpu-quota-pct", optarg, 1, 100);
			  break;
		case 'p': p.period_us = number("--period-us", optarg, 1000,
					       1000000); break;
		case 'n': p.producers = (int)number("--producers", optarg, 1,
						    64); break;
		case 'c': p.cpu = (int)number("--cpu", optarg, 0,
					      CPU_SETSIZE - 1); break;
		case 'P': p.prio = (int)number("--prio", optarg, 1, 99); break;
		case 't': p.tick_us = number("--tick", optarg, 50, 1000000);
			  break;
		case 'H': p.hold_us = number("--hold", optarg, 0, 100000);
			  break;
		case 'G': p.gap_us = number("--gap", optarg, 0, 100000); break;
		case 'W': p.window_us = number("--window", optarg, 1000,
					       10000000); break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "epmodel: unexpected argument '%s'\n",
			argv[optind]);
		return EX_USAGE;
	}
	p.quota_us = quota_pct * p.period_us / 100;
	if (p.quota_us < 1000 || quota_pct == 100) {
		fprintf(stderr, "epmodel: --cpu-quota-pct %lld of --period-us %lld is "
			"%lld us: below the 1000 us cpu.max allows, or a quota that "
			"never throttles\n", quota_pct, (long long)p.period_us,
			(long long)p.quota_us);
		return EX_USAGE;
	}

	/* Every thread inherits this mask; model_run takes the signals with
	 * sigtimedwait, so a ^C still ends in cg_close. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (mkdir(out, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "epmodel: cannot create %s: %s\n", out,
			strerror(errno));
		return EX_SOFTWARE;
	}

	char err[1024];
	/* Writing cpu.max starts the quota's period timer on the writing CPU;
	 * write it from the producers' CPU, as the VM harness does. */
	if (rt_pin(p.cpu, err, sizeof(err)) != 0) {
		fprintf(stderr, "epmodel: %s\n", err);
		return EX_OSERR;
	}
	struct cg cg;
	if (cg_open(&cg, NULL, "model", true, err, sizeof(err)) != 0) {
		fprintf(stderr, "epmodel: %s\n", err);
		return EX_OSERR;
	}
	if (cg_set_quota(&cg, p.quota_us, p.period_us, err, sizeof(err)) != 0) {
		fprintf(stderr, "epmodel: %s\n", err);
		cg_close(&cg);
		return EX_OSERR;
	}

	struct model_result rs[RLOCK_KINDS];
	int done = 0, status = 0, signo = 0;
	for (int i = 0; i < nkinds && !signo; i++) {
		fprintf(stderr, "epmodel: %s, %.1f s\n", rlock_name(kinds[i]),
			(double)p.duration_ns / 1e9);
		status = model_run(&p, kinds[i], &cg, &sigs, &rs[i], err,
				   sizeof(err));
		done++;
		if (status) {
			fprintf(stderr, "epmodel: %s\n", err);
			break;
		}
		signo = rs[i].signo;
	}
	int version = cg.version;
	cg_close(&cg);

	if (!status) {
		char verdict[512];
		msum_verdict(verdict, sizeof(verdict), rs, done);
		json_t *summary = msum_json(&p, version, rs, done, verdict);
		for (int i = 0; i < done && !status; i++)
			if (msum_write_variant(out, &p, &rs[i], err,
					       sizeof(err)) != 0)
				status = EX_SOFTWARE;
		if (!status && msum_write_json(out, summary, err,
					       sizeof(err)) != 0)
			status = EX_SOFTWARE;
		json_decref(summary);
		if (status)
			fprintf(stderr, "epmodel: %s\n", err);
		else
			msum_table(stdout, rs, done, verdict);
	}
	for (int i = 0; i < done; i++)
		model_result_free(&rs[i]);
	if (!status && signo) {
		fprintf(stderr, "epmodel: stopped by signal %d\n", signo);
		status = 128 + signo;
	}
	return status;
}
