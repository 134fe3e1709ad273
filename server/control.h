/*
 * control: the running configuration and what applies it to the loops: the
 * listener registry (each listener's address and its id, stable across
 * reloads), the TLS contexts, the names the metrics show, reload (SIGHUP)
 * and drain (SIGTERM).
 *
 * A reload resolves names (getaddrinfo blocks), reads certificates and
 * waits for every loop to take its command: seconds with a slow resolver.
 * It runs on a thread of its own, so the main thread's event loop (admin,
 * the systemd watchdog) never waits for it. The main thread adopts the
 * result when that thread is done: what admin reads changes only there.
 */
#ifndef RELAY_CONTROL_H
#define RELAY_CONTROL_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>

#include "addr.h"
#include "conf.h"
#include "heartbeat.h"
#include "sockfile.h"
#include "stats.h"
#include "tcp.h"
#include "tls.h"
#include "watch.h"
#include "worker.h"

#define CONTROL_MAX_FLAGS	64

struct event_base;
struct event;

/* A command-line flag, kept so a reload can apply it again on top of the
 * re-read file. */
struct control_flag { const char *key; const char *value; };

/* A listener: its address, its id, and for a unix:///PATH the file it
 * was bound as. */
struct control_listener { struct addr a; int id; struct sockfile file; };

/* The listeners one loop has: the configuration's, unless a reload did
 * not reach it (then those of the last one that did). The next reload
 * starts from here, so what a loop missed it gets then. */
struct control_loop {
	struct control_listener reg[CONF_MAX_LISTEN];
	int nreg;
	bool behind;		/* the last reload did not reach it */
};

/* What a reload prepared on its thread, for the main thread to adopt. */
struct control_reload {
	struct conf conf;
	struct tls *tls_server, *tls_client;
	struct control_listener reg[CONF_MAX_LISTEN];
	bool made[CONF_MAX_LISTEN];	/* its socket file made by this reload */
	int nreg, next_id, up_id, nadd, nremove;
	struct control_loop loops[CONF_MAX_CPUS];
	bool ok;		/* it was handed to the loops: adopt it */
};

struct control {
	/* From the command line. */
	const char *config_path;
	cpu_set_t cpus_at_start;	/* before the main thread left the loops' */
	struct control_flag flags[CONTROL_MAX_FLAGS];
	int nflags;

	struct conf conf;		/* running */
	struct tls *tls_server, *tls_client;	/* each loop holds its own */
	struct control_listener reg[CONF_MAX_LISTEN];	/* conf's listeners */
	int nreg, next_id;
	struct control_loop loops[CONF_MAX_CPUS];	/* what each has */
	struct stats_reloads reloads;	/* how reloads ended, for admin */
	int start_fds[CONF_MAX_CPUS][CONF_MAX_LISTEN];	/* until the loops own them */
	struct worker *w;
	struct stats **stats;		/* w[i].stats, for admin */
	const struct tcp_stats **tcp;	/* w[i].tcp.stats */
	int nw;

	/* Names as the metrics show them: the listeners, the stream upstream
	 * ("" when none) and the last STATS_MAX_UPSTREAM UDP upstreams by
	 * slot (id % STATS_MAX_UPSTREAM). */
	struct tcp_label tcp_labels[CONF_MAX_LISTEN];
	int ntcp_labels;
	char tcp_upstream[ADDR_TEXT_MAX];
	struct stats_label udp_labels[CONF_MAX_LISTEN];
	struct sockfile udp_files[CONF_MAX_LISTEN];	/* theirs, for admin */
	int nudp_labels;
	struct stats_label udp_up[STATS_MAX_UPSTREAM];
	int nudp_up, next_up_id, up_id;

	/* The co-tenants' groups, read on the main thread (watch.h). */
	struct watch watch;
	struct event *watch_ev;

	/* The reload thread. */
	pthread_t reload_thread;
	bool reloading, reload_again;
	int reload_efd;			/* the thread's "done" to the main loop */
	struct event *reload_ev;
	struct control_reload next;
};

/* Defaults, the file, the flags, the checks, into c. Returns 0 or the exit
 * status (EX_USAGE for a bad flag, EX_CONFIG for the file) with err filled. */
int control_load_conf(const struct control *ctl, struct conf *c, char *err,
		      size_t errlen);

/* The TLS contexts c asks for (NULL where it asks for none), made from the
 * files at once so a wrong file is reported at start-up and on a reload
 * alike. Returns 0, or EX_CONFIG with nothing made and err filled. */
int control_make_tls(const struct conf *c, struct tls **server,
		     struct tls **client, char *err, size_t errlen);

/* One line saying what c runs: listeners, upstreams, CPUs, scheduling. */
void control_describe(const struct conf *c, FILE *out);

/* Open every listener of ctl->conf on every loop, before anything else is
 * made. Returns 0, or EX_UNAVAILABLE with err filled. */
int control_listen(struct control *ctl, char *err, size_t errlen);

/* Initialise the loops (not started) with those listeners, publishing
 * progress in hb. Returns 0, or -1 with err filled. */
int control_init_loops(struct control *ctl, struct heartbeat_file *hb,
		       int64_t start_ns, char *err, size_t errlen);

/* Watch for finished reloads on base (the main thread's), and read the
 * watched groups there every watch_interval_ms. Returns 0 or -1. */
int control_attach(struct control *ctl, struct event_base *base);

/* Start a reload on its thread (SIGHUP); one asked for while another runs
 * follows it. */
void control_reload(struct control *ctl);

/* Wait for a reload under way, then stop the loops: drain each, join.
 * Returns 0, or EX_SOFTWARE when a loop did not stop. */
int control_drain(struct control *ctl);

/* Free what control_init_loops and control_attach made (after control_drain). */
void control_free(struct control *ctl);

/* Remove the socket files of the listeners (unix:///PATH) that are still
 * the ones relay made: at exit, whatever the loops did. */
void control_remove_files(struct control *ctl);

#endif
