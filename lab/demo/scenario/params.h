/*
 * params: demo-scenario's parameters, each written once. The table below
 * is a lib/opt table: it gives the command line (--name-with-dashes), the
 * usage text, the defaults on each clock, the keys of a run spec's
 * "scenario" object (lab/README.md), the "params" object of scenario.json
 * and --describe, which the lab's drivers and lab/README.md's names table
 * read.
 *
 * The host clock's defaults are demo-scenario's own (a run on this host,
 * the capacity grid's cells, which set what they vary). The virtual clock
 * (kernel/vm/boot) runs an instruction per nanosecond, several times what
 * TCG gets through on the host clock: the senders need a higher rate to
 * exhaust their quota, and the patched kernel's RT tail (well under a
 * millisecond) justifies a lower late limit (lab/demo/README.md has the
 * runs). A 20 ms quota period (5 % of a CPU, cpu.max's 1 ms minimum
 * quota) halves the work a guest second holds, and with it the host time
 * a run takes, at about half the stock stalls, still far above the margin
 * the verdict needs. There the co-tenant wakes the relay over AF_UNIX
 * (af_unix 1): over loopback UDP its wake-up runs in its softirq section
 * and shares the relay socket's wait-queue lock with the RT ticker's, and
 * a task blocked on either lends the throttled holder its priority; 6.1's
 * ktimers/N ends every wait that way, and on 6.12 the scenario's own RT
 * threads once did through a whole run (lab/demo/README.md, "The waker").
 * 15 s of load there instead of 30: half the host time of a traced run,
 * and still some 80 stock stalls and a patched RT p99.9 thousands of
 * times below the stock one (docs/measurements.md).
 */
#ifndef SCENARIO_PARAMS_H
#define SCENARIO_PARAMS_H

#include <jansson.h>
#include <stdbool.h>

/* X(name, min, max, default on the host clock, on the virtual clock, arg,
 * help) */
#define SCENARIO_PARAMS(X) \
	X(duration_s, 1, 3600, 30, 15, "S", "how long loadgen sends") \
	X(rate_pps, 1, 1000000, 2000, 30000, "PPS", \
	  "datagrams per second, all senders\ntogether") \
	X(senders, 1, 64, 2, 2, "N", "loadgen sender threads, all in the quota") \
	X(spin_us, 0, 10000, 0, 0, "US", \
	  "each sender busy-waits this long before each send\n" \
	  "(loadgen --spin-us): at or above its interval the\n" \
	  "senders fill any quota") \
	X(cpu_quota_pct, 1, 100, 10, 5, "PCT", \
	  "the senders' cpu.max quota, % of one CPU per\nperiod") \
	X(period_us, 1000, 1000000, 10000, 20000, "US", "the quota period") \
	X(tick_us, 50, 1000000, 1000, 1000, "US", \
	  "relay's timerfd tick in its epoll set\n(relay --tick-us)") \
	X(cpu, 0, 1023, 1, 1, "N", \
	  "the CPU of relay, the senders and the quota\nwriter") \
	X(watchdog_cpu, 0, 1023, 0, 0, "N", "the CPU the watchdog polls from") \
	X(relay_prio, 1, 98, 50, 50, "N", "relay's SCHED_FIFO priority") \
	X(watchdog_prio, 2, 99, 60, 60, "N", "the watchdog's, above the relay's") \
	X(ticker_us, 0, 1000000, 10000, 10000, "US", \
	  "an RT client pings the relay this often; 0: none") \
	X(ticker_prio, 1, 98, 40, 40, "N", "its SCHED_FIFO priority") \
	X(ticker_cpu, -1, 1023, 0, 0, "N", "its CPU; -1: the relay's (cpu)") \
	X(ticker_lead_us, 0, 5000, 200, 200, "US", \
	  "it wakes this early and waits for each slot on the\n" \
	  "clock; 0: sleeps to it") \
	X(late_ms, 1, 600000, 50, 5, "MS", \
	  "RT datagrams slower than this are\nlate") \
	X(list_over_us, 1, 600000000, 150, 150, "US", \
	  "RT datagrams slower than this are listed with their\n" \
	  "times, to be explained") \
	X(stall_ms, 2, 600000, 200, 200, "MS", "no relay progress this long is a stall") \
	X(poll_ms, 1, 1000, 10, 10, "MS", "heartbeat poll interval") \
	X(lift_ms, 1, 600000, 1000, 1000, "MS", \
	  "give the quota back if a stall outlives a lift\nby this") \
	X(port, 1, 65535, 7700, 7700, "N", "relay's UDP port on 127.0.0.1") \
	X(af_unix, 0, 1, 0, 1, "0|1", \
	  "1: loadgen sends to relay over an abstract AF_UNIX\n" \
	  "datagram socket instead (its sends wake relay from\n" \
	  "their own context, outside any softirq); the RT\n" \
	  "ticker stays on UDP") \
	X(grace_s, 1, 3600, 15, 15, "S", \
	  "hard limit past duration_s for everything to end")

struct params {
#define PARAMS_FIELD(name, min, max, host, virt, arg, help) int name;
	SCENARIO_PARAMS(PARAMS_FIELD)
#undef PARAMS_FIELD
	const char *relay, *loadgen, *out, *run_dir;
	bool watch;		/* --watch: the watchdog alone (watch.h) */
	const char *heartbeat, *cgroup;	/* --watch: the relay's, the co-tenant's */
};

/* Fill p from the clock's defaults (--clock, else the last --spec's
 * "clock", else the host's), then from argv in order: a --spec FILE sets
 * what its "scenario" object names, a flag after it wins. A run needs
 * --relay, --loadgen and --out; --watch (watch.h) --heartbeat, --cgroup
 * and --out. --resolve prints
 * the resolved parameters as JSON, --describe the table, --help the
 * usage, each then exits 0 (a driver checks a spec that way before it
 * boots a guest). Returns 0, or -1 after saying on stderr what was wrong
 * and where. */
int params_parse(int argc, char **argv, struct params *p);

/* The parameters as the "params" object of scenario.json. */
json_t *params_json(const struct params *p);

#endif
