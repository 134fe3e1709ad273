/*
 * epmodel: the userspace model of the epoll ready-list locking. Runs each
 * lock kind in turn with the same producers, quota and consumer, writes the
 * result files and prints the comparison.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "cgroup.h"
#include "mflags.h"
#include "model.h"
#include "msum.h"
#include "rt.h"

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
	struct mflags f;
	char err[1024];
	if (mflags_parse(&f, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "epmodel: %s\n", err);
		return EX_USAGE;
	}
	if (f.help) {
		mflags_usage(stdout);
		return 0;
	}
	if (f.describe || f.resolve) {
		json_t *j = f.describe ? mflags_describe() : mflags_json(&f.p);
		int rc = j ? json_dumpf(j, stdout, JSON_SORT_KEYS) : -1;
		json_decref(j);
		if (rc < 0 || putchar('\n') == EOF) {
			fprintf(stderr, "epmodel: cannot print the JSON\n");
			return EX_SOFTWARE;
		}
		return 0;
	}
	struct model_params p = f.p;
	if (p.cpu < 0)
		p.cpu = last_allowed_cpu();
	const char *out = f.out;

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
	if (cg_set_quota(&cg, cg_quota_us(p.cpu_quota_pct, p.period_us),
			 p.period_us, err, sizeof(err)) != 0) {
		fprintf(stderr, "epmodel: %s\n", err);
		cg_close(&cg);
		return EX_OSERR;
	}

	struct model_result rs[RLOCK_KINDS];
	int done = 0, status = 0, signo = 0;
	for (int i = 0; i < f.nkinds && !signo; i++) {
		fprintf(stderr, "epmodel: %s, %d s\n", rlock_name(f.kinds[i]),
			p.duration_s);
		status = model_run(&p, f.kinds[i], &cg, &sigs, &rs[i], err,
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
