/*
 * metrics: the Prometheus text exposition (format 0.0.4) of /metrics.
 * Every family relay exports, its type and its help text are rows of one
 * table in metrics.c, which the exporter walks in order: a name is added,
 * renamed or documented there and nowhere else.
 *
 * Families, in order: relay_<counter>_total for each datagram counter
 * (stats.h), relay_drops_total{reason}, relay_errors_total{kind},
 * relay_flows_active, relay_realtime{policy}, the three latency
 * histograms, relay_reloads_total{result} and relay_reload_loops_behind;
 * relay_kernel_info{...} (kstate.h), relay_late_threshold_seconds,
 * relay_watch_interval_seconds and per watched group (watch.h; none: the
 * families without samples) relay_cgroup_*{cgroup} and
 * relay_late_while_throttled_total{cgroup};
 * then, when there are udp:// listeners, relay_udp_*
 * per listener; UDP upstreams, relay_udp_upstream_*; stream listeners or
 * a stream upstream, relay_tcp_*; a stream upstream, relay_tcp_upstream_*;
 * last the admin endpoint's relay_admin_*.
 */
#ifndef RELAY_METRICS_H
#define RELAY_METRICS_H

#include <stdio.h>

#include "admin.h"
#include "stats.h"

/* Write what v shows, with its totals already summed into snap, and the
 * admin endpoint's own counts a (NULL: no endpoint, none shown). */
void metrics_write(FILE *out, const struct admin_view *v,
		   const struct stats_snapshot *snap,
		   const struct admin_counts *a);

#endif
