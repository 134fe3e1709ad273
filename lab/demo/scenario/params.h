/*
 * params: demo-scenario's parameters, each written once. The table below
 * gives the command line (--NAME-WITH-DASHES), the usage text, the
 * defaults, the keys of a run spec's "scenario" object (lab/README.md) and
 * the "params" object of scenario.json: one name and one unit for each.
 */
#ifndef SCENARIO_PARAMS_H
#define SCENARIO_PARAMS_H

#include <jansson.h>
#include <stdbool.h>

/* X(name, flag, min, max, default, help) */
#define SCENARIO_PARAMS(X) \
	X(duration_s, "duration-s", 1, 3600, 30, "how long loadgen sends (s)") \
	X(rate_pps, "rate-pps", 1, 1000000, 2000, "datagrams per second, all senders together") \
	X(senders, "senders", 1, 64, 2, "loadgen sender threads, all in the quota") \
	X(spin_us, "spin-us", 0, 10000, 0, \
	  "each sender busy-waits this long before each send (loadgen --spin-us): " \
	  "at or above its interval the senders fill any quota") \
	X(cpu_quota_pct, "cpu-quota-pct", 1, 100, 10, \
	  "the senders' cpu.max quota, % of one CPU per period") \
	X(period_us, "period-us", 1000, 1000000, 10000, "the quota period (us)") \
	X(tick_us, "tick-us", 10, 1000000, 1000, "relay's timerfd tick in its epoll set (us)") \
	X(cpu, "cpu", 0, 1023, 1, "the CPU of relay, the senders and the quota writer") \
	X(watchdog_cpu, "watchdog-cpu", 0, 1023, 0, "the CPU the watchdog polls from") \
	X(relay_prio, "relay-prio", 1, 98, 50, "relay's SCHED_FIFO priority") \
	X(watchdog_prio, "watchdog-prio", 2, 99, 60, "the watchdog's, above the relay's") \
	X(ticker_us, "ticker-us", 0, 1000000, 10000, \
	  "an RT client pings the relay this often (us); 0: none") \
	X(ticker_prio, "ticker-prio", 1, 98, 40, "its SCHED_FIFO priority") \
	X(ticker_cpu, "ticker-cpu", -1, 1023, 0, "its CPU; -1: the relay's (cpu)") \
	X(ticker_lead_us, "ticker-lead-us", 0, 5000, 200, \
	  "it wakes this early and waits for each slot on the clock (us); 0: sleeps to it") \
	X(late_ms, "late-ms", 1, 600000, 50, "RT datagrams slower than this are late (ms)") \
	X(list_over_us, "list-over-us", 1, 600000000, 150, \
	  "RT datagrams slower than this are listed with their times, to be explained (us)") \
	X(stall_ms, "stall-ms", 2, 600000, 200, "no relay progress this long is a stall (ms)") \
	X(poll_ms, "poll-ms", 1, 1000, 10, "heartbeat poll interval (ms)") \
	X(lift_ms, "lift-ms", 1, 600000, 1000, \
	  "give the quota back if a stall outlives a lift by this (ms)") \
	X(port, "port", 1, 65535, 7700, "relay's UDP port on 127.0.0.1") \
	X(af_unix, "af-unix", 0, 1, 0, \
	  "1: loadgen sends to relay over an abstract AF_UNIX datagram socket " \
	  "instead (its sends wake relay from their own context, outside any " \
	  "softirq); the RT ticker stays on UDP") \
	X(grace_s, "grace-s", 1, 3600, 15, "hard limit past duration_s for everything to end (s)")

struct params {
#define PARAMS_FIELD(name, flag, min, max, def, help) int name;
	SCENARIO_PARAMS(PARAMS_FIELD)
#undef PARAMS_FIELD
	const char *relay, *loadgen, *out, *run_dir;
};

/* Fill p from the defaults, then from argv in order: a --spec FILE sets
 * what its "scenario" object names, a flag after it wins. With --resolve
 * print the resolved parameters as JSON and exit 0 (a driver checks a spec
 * that way before it boots a guest). Returns 0, or -1 after saying on
 * stderr what was wrong and where. */
int params_parse(int argc, char **argv, struct params *p);

/* The parameters as the "params" object of scenario.json. */
json_t *params_json(const struct params *p);

#endif
