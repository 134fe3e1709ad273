/*
 * conf: relay's configuration: defaults, then an INI file (one [relay]
 * section, parsed by inih, strict: unknown sections and keys, duplicates and
 * out-of-range values are errors with file:line), then command-line flags,
 * which go through the same setter (conf_set) so both are checked alike.
 */
#ifndef RELAY_CONF_H
#define RELAY_CONF_H

#include <stdbool.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "addr.h"
#include "opt.h"
#include "peer.h"

#define CONF_MAX_LISTEN	16
#define CONF_MAX_CPUS	64
#define CONF_PATH_MAX	1024
#define CONF_MAX_WATCH	8	/* watch_cgroups */
/* Descriptors besides flows, connections and listener sockets: each loop
 * has its epoll, timerfd, eventfd and schedstat file; the main thread its
 * stdio, epoll, signalfd, the reload's eventfd and thread, the notify
 * socket, the admin listener, its spare and a few admin connections,
 * and a margin for what the libraries open for a moment (the resolver,
 * OpenSSL reading files). */
#define CONF_FD_LOOP	4
#define CONF_FD_MAIN	32

struct conf {
	struct addr listen[CONF_MAX_LISTEN];
	int nlisten;
	struct addr upstream;
	bool has_upstream;
	struct addr admin;
	bool admin_off;			/* admin = off */
	int cpus[CONF_MAX_CPUS];
	int ncpus;
	bool sched_other;		/* sched = other: loops run SCHED_OTHER */
	int rt_priority;		/* SCHED_FIFO priority of the loops */
	int rt_budget;			/* % of a window a SCHED_FIFO loop may
					 * be busy before it runs SCHED_OTHER */
	int tick_us;			/* timerfd interval */
	bool allow_non_rt;
	int flow_idle_ms;		/* idle flows expire after this */
	int max_flows;			/* per loop thread */
	int flow_wait_ms;		/* a flow waiting for a reply this long
					 * may make room for a new one */
	int max_datagram;		/* larger datagrams are dropped */
	int batch;			/* recvmmsg/sendmmsg vector length */
	bool udp_gro;			/* coalesced receive, segmented send */
	int drain_ms;			/* SIGTERM: wait this long for replies */
	int socket_buffer;		/* SO_RCVBUF/SO_SNDBUF bytes, 0: kernel's */
	/* unix:// listeners. */
	int unix_mode;			/* a path's file's mode, -1: the umask's */
	gid_t unix_gid;			/* and its group, (gid_t)-1: relay's */
	struct peer_list unix_allow;	/* who may send; none: anyone who may
					 * reach the socket */
	char stats_file[CONF_PATH_MAX];
	char heartbeat[CONF_PATH_MAX];
	/* Streams: tcp:// and tls:// listeners. */
	struct addr tcp_upstream;	/* tcp:// or tls:// */
	bool has_tcp_upstream;
	char tcp_upstream_host[256];	/* its HOST, verified under TLS */
	char cert[CONF_PATH_MAX];	/* tls:// listeners: PEM chain */
	char key[CONF_PATH_MAX];	/* and its private key */
	char ca[CONF_PATH_MAX];		/* tls:// upstream: CA file ("": system) */
	char alpn[CONF_PATH_MAX];	/* "h2,http/1.1": ALPN on tls:// listeners */
	int max_conns;			/* per loop thread */
	int max_conns_per_source;	/* per loop and source, 0: any */
	int tcp_buffer;			/* bytes buffered per direction */
	int handshake_timeout_ms, connect_timeout_ms, tcp_idle_ms;
	int first_byte_timeout_ms;	/* 0: none */
	bool tcp_kernel_stamps;		/* TCP latency from the kernel receive
					 * time (else from the read) */
	int addr_flags;			/* extra addr_parse flags (ADDR_NUMERIC:
					 * never resolve names) */
	/* The kernel and its co-tenants (kstate.h, watch.h). */
	char kernel_btf[CONF_PATH_MAX];	/* the running kernel's BTF */
	int late_us;			/* a wake-up this late is late */
	char watch_cgroups[CONF_PATH_MAX];	/* as given */
	struct conf_cgroup {
		char name[256];		/* as given: loadgen.slice, /a/b */
		char dir[CONF_PATH_MAX];	/* its cgroup v2 directory */
	} watch[CONF_MAX_WATCH];
	int nwatch;
	int watch_interval_ms;		/* how often their cpu.stat is read */

	/* Bookkeeping for strictness: which keys were set, and whether the
	 * next "listen" from this origin replaces the list. */
	uint64_t set_mask;
	int listen_origin;
	int origin;			/* of the value being set */
};

/* Where a setting came from; flags override the file. */
enum conf_origin { CONF_DEFAULT, CONF_FILE, CONF_FLAG };

/* Fill c with the defaults. */
void conf_defaults(struct conf *c);

/* Set one key (file spelling, e.g. "tick_us") from text. "listen" adds a
 * listener; the first one from a new origin replaces the earlier list.
 * Setting a key twice from the file is an error; from flags the last wins.
 * Returns 0, or -1 with err filled ("tick_us: ..."). */
int conf_set(struct conf *c, const char *key, const char *value,
	     enum conf_origin origin, char *err, size_t errlen);

/* Parse INI text (name is used in messages). Returns 0, or -1 with err
 * "name:line: what is wrong". */
int conf_load_string(struct conf *c, const char *text, const char *name,
		     char *err, size_t errlen);

/* Read and parse a file. Returns 0, or -1 with err filled. */
int conf_load_file(struct conf *c, const char *path, char *err, size_t errlen);

/* Cross-key checks after everything is set (a listener, an upstream, CPUs
 * in allowed, or in the caller's affinity when NULL, descriptors enough:
 * conf_descriptors). Returns 0, or -1 with err filled. */
int conf_validate(const struct conf *c, const cpu_set_t *allowed, char *err,
		  size_t errlen);

/* Give every key a reload cannot change (cpus, tick_us, ...) its running
 * value in next, and name those next had changed in changed ("cpus,
 * tick_us"; "" when none). */
void conf_keep_fixed(struct conf *next, const struct conf *running,
		     char *changed, size_t len);

/* The descriptors relay may hold open at once running c: per loop its
 * flows (one each), stream connections (two each: client and upstream),
 * listener sockets and CONF_FD_LOOP; then CONF_FD_MAIN. conf_validate refuses c when this is above RLIMIT_NOFILE's
 * hard limit. */
uint64_t conf_descriptors(const struct conf *c);

/* 1 when key is a key conf_set knows. */
int conf_known_key(const char *key);

/* Every key, in the order of relay --help (lib/opt.h). */
extern const struct opt conf_opts[];
extern const int conf_nopts;

#endif
