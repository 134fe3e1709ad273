/*
 * watch: demo-scenario --watch, the scenario's watchdog alone, around a
 * relay and a co-tenant that others started (a systemd test host: relay
 * with --heartbeat from relay.service, the co-tenant in loadgen.slice).
 * The demo's stalls are found and ended the same way there, with the same
 * parameters, and recorded in the same scenario.json, which the kernel
 * trace's analysis (lab/ktrace/explain) reads.
 */
#ifndef DEMO_WATCH_H
#define DEMO_WATCH_H

#include "params.h"

/* Check that the co-tenant's cgroup (p->cgroup) holds the parameters'
 * quota, write it again from the relay's CPU (watchdog.h says why), watch
 * the relay's heartbeat (p->heartbeat) until SIGTERM or SIGINT, or until
 * duration_s + grace_s are up (an open stall is seen to its end first),
 * and write p->out/scenario.json and events.csv. Returns demo-scenario's
 * exit status: 0 watched, 1 with problems (in scenario.json), 69 no relay
 * heartbeat, 70 the results cannot be written, 71 the cgroup or an RT
 * priority was refused, 78 the cgroup's quota is not the parameters'. */
int watch_run(const struct params *p);

#endif
