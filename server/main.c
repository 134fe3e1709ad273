/*
 * relay: a real-time UDP relay on raw epoll.
 *
 * Start-up order matters: everything that can fail for a reason the
 * operator can fix (flags, the config file, ports in use, the admin port)
 * is checked before any loop thread runs, so a failed start leaves nothing
 * behind; then memory is locked and the loops go real-time; then systemd
 * hears READY=1. The main thread stays non-real-time, off the loops' CPUs,
 * and handles signals (signalfd), the admin endpoint and systemd.
 */
#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "addr.h"
#include "admin.h"
#include "conf.h"
#include "heartbeat.h"
#include "notify.h"
#include "rt.h"
#include "stats.h"
#include "tcp.h"
#include "tls.h"
#include "worker.h"

#define VERSION "1.0"
#define MAX_FLAGS 64

static const char usage[] =
"usage: relay --listen udp://ADDR:PORT|tcp://ADDR:PORT|tls://ADDR:PORT [--listen ...]\n"
"             --upstream udp://ADDR:PORT|echo [--upstream tcp://ADDR:PORT|tls://HOST:PORT]\n"
"             [--config FILE] [--admin ADDR:PORT|off] [--cpus LIST]\n"
"             [--sched fifo|other] [--rt-priority N] [--rt-budget PCT]\n"
"             [--tick-us N] [--allow-non-rt]\n"
"             [--flow-idle-ms N] [--flow-wait-ms N] [--max-flows N] [--max-datagram N] [--batch N]\n"
"             [--udp-gro] [--drain-ms N] [--socket-buffer BYTES]\n"
"             [--stats-file FILE] [--heartbeat FILE]\n"
"             [--cert FILE --key FILE] [--alpn LIST] [--ca FILE] [--max-conns N]\n"
"             [--tcp-buffer BYTES] [--handshake-timeout-ms N]\n"
"             [--connect-timeout-ms N] [--tcp-idle-ms N]\n"
"             [--tcp-kernel-stamps yes|no] [--first-byte-timeout-ms N]\n"
"             [--max-conns-per-source N]\n"
"       relay --check-config --config FILE [flags]\n"
"\n"
"Relays UDP datagrams from the listeners to the upstream and the replies back\n"
"to each client (one upstream socket per client 4-tuple). One real-time\n"
"(SCHED_FIFO) loop thread per CPU in --cpus, each with its own SO_REUSEPORT\n"
"socket. IPv6 addresses go in brackets: udp://[::1]:5353.\n"
"\n"
"Streams on the same loops: tcp://ADDR:PORT listeners relay connections to a\n"
"tcp://ADDR:PORT or tls://HOST:PORT upstream (TLS originated, verified against\n"
"--ca); tls://ADDR:PORT listeners terminate TLS (1.2 or 1.3) with --cert and\n"
"--key. Give --upstream once per kind when udp:// and tcp:// listeners mix.\n"
"\n"
"  --listen URL         listen here (repeatable; replaces the file's list)\n"
"  --upstream URL|echo  relay to this address; echo reflects to the sender\n"
"                       (one udp:// or echo, one tcp:// or tls://)\n"
"  --config FILE        INI file with a [relay] section (see relay(8))\n"
"  --admin ADDR:PORT    HTTP /metrics /stats /healthz /hgrm/* (127.0.0.1:9310)\n"
"  --cpus LIST          one loop per CPU, e.g. 1 or 2-3 (default 0)\n"
"  --sched fifo|other   loops real-time (fifo), or ordinary tasks for a CPU\n"
"                       shared with busy ones (other) (fifo)\n"
"  --rt-priority N      SCHED_FIFO priority of the loops, 1-99 (50)\n"
"  --rt-budget PCT      a SCHED_FIFO loop busier than this share of its CPU\n"
"                       runs SCHED_OTHER until it keeps up, 10-100 (50)\n"
"  --tick-us N          loop timer interval, 50-1000000 us (1000)\n"
"  --allow-non-rt       run SCHED_OTHER when real-time is refused\n"
"  --flow-idle-ms N     close a flow idle this long (30000)\n"
"  --max-flows N        flows per loop; when full, one not waiting for a\n"
"                       reply makes room, else a new flow is dropped (4096)\n"
"  --flow-wait-ms N     a reply outstanding this long is taken for lost (2000)\n"
"  --max-datagram N     larger datagrams are dropped, 64-65535 (4096)\n"
"  --batch N            datagrams per recvmmsg/sendmmsg, 1-256 (32)\n"
"  --udp-gro            receive runs of one flow coalesced (UDP_GRO) and send\n"
"                       them on as one segmented write (UDP_SEGMENT)\n"
"  --drain-ms N         on SIGTERM, wait this long for replies (1000)\n"
"  --socket-buffer N    SO_RCVBUF/SO_SNDBUF bytes (kernel default)\n"
"  --stats-file FILE    on exit write FILE (JSON), FILE-derived .hgrm files\n"
"                       and .timeseries.csv\n"
"  --heartbeat FILE     publish loop progress in FILE (server/heartbeat.h)\n"
"  --cert FILE          tls:// listeners: PEM certificate chain\n"
"  --key FILE           tls:// listeners: its private key (mode 0600)\n"
"  --alpn LIST          tls:// listeners: ALPN protocols, ours first\n"
"                       (h2,http/1.1); the chosen one is offered upstream\n"
"  --ca FILE            tls:// upstream: verify it against these CAs (system's)\n"
"  --max-conns N        stream connections per loop; then accepting pauses (4096)\n"
"  --tcp-buffer N       bytes buffered per connection and direction (16384)\n"
"  --handshake-timeout-ms N  client TLS handshake deadline (5000)\n"
"  --connect-timeout-ms N    upstream connect (and TLS) deadline (5000)\n"
"  --tcp-idle-ms N      close a connection idle this long (60000)\n"
"  --first-byte-timeout-ms N  close a client silent this long after its\n"
"                       accept (0: never, the default)\n"
"  --max-conns-per-source N  connections one address (IPv6: /64) may hold\n"
"                       per loop; more are reset (0: any, the default)\n"
"  --tcp-kernel-stamps yes|no  time TCP bytes from their kernel receive time\n"
"                       (yes: includes the wait for the loop; stamps every\n"
"                       packet on the host) or from relay's read (no)\n"
"  --check-config       validate the configuration and exit\n"
"  --help, --version\n"
"\n"
"Signals: SIGHUP reloads the file (listeners and upstream; flows of other\n"
"listeners stay), SIGTERM/SIGINT drain and exit 0.\n"
"Exit: 0 ok, 64 usage, 78 config file, 69 address in use or unavailable,\n"
"71 the system refused (real-time, memory locking), 70 internal error.\n";

/* Flags are kept as (key, value) so a reload can apply them again on top
 * of the re-read file. */
struct flag { const char *key; const char *value; };

struct relay {
	const char *config_path;
	cpu_set_t cpus_at_start;	/* before the main thread left the loops' */
	struct flag flags[MAX_FLAGS];
	int nflags;
	struct conf conf;
	struct listener { struct addr a; int id; } reg[CONF_MAX_LISTEN];
	int nreg, next_id;
	struct worker *w;
	struct stats **stats;
	int nw;
	struct stats_sched sched;
	struct heartbeat_file *hb;
	bool draining;
	int64_t start_ns;
	struct event_base *base;
	struct admin_view view;
	struct stats_snapshot snap;
	uint64_t last_in, last_out, last_drops;
	uint64_t last_seq[CONF_MAX_CPUS];
	int64_t last_status_ns, last_watchdog_ns;
	uint64_t watchdog_usec;
	/* Streams. */
	struct tls *tls_server, *tls_client;
	struct tcp_settings streams;
	const struct tcp_stats **tcp;
	struct tcp_label tcp_labels[CONF_MAX_LISTEN];
	int ntcp_labels;
	char tcp_upstream[ADDR_TEXT_MAX];
	/* Datagrams, as the metrics name them: the listeners, and the last
	 * STATS_MAX_UPSTREAM upstreams by slot (see upstream_id). */
	struct stats_label udp_labels[CONF_MAX_LISTEN];
	int nudp_labels;
	struct stats_label udp_up[STATS_MAX_UPSTREAM];
	int nudp_up, next_up_id, up_id;
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* defaults, file, flags, checks. Returns 0 or the exit status. */
static int load_conf(struct relay *r, struct conf *c, char *err, size_t errlen)
{
	conf_defaults(c);
	if (r->config_path && conf_load_file(c, r->config_path, err, errlen) < 0)
		return EX_CONFIG;
	for (int i = 0; i < r->nflags; i++) {
		char why[600];
		if (conf_set(c, r->flags[i].key, r->flags[i].value, CONF_FLAG,
			     why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--%s", why);
			for (char *p = err + 2; *p && *p != ':' && *p != ' '; p++)
				if (*p == '_')
					*p = '-';
			return EX_USAGE;
		}
	}
	if (conf_validate(c, &r->cpus_at_start, err, errlen) < 0)
		return r->config_path ? EX_CONFIG : EX_USAGE;
	return 0;
}

static int parse_args(struct relay *r, int argc, char **argv, bool *check)
{
	enum { O_CHECK = 256, O_HELP, O_VERSION, O_CONFIG, O_KEY };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, O_KEY },
		{ "upstream", required_argument, NULL, O_KEY },
		{ "admin", required_argument, NULL, O_KEY },
		{ "cpus", required_argument, NULL, O_KEY },
		{ "sched", required_argument, NULL, O_KEY },
		{ "rt-priority", required_argument, NULL, O_KEY },
		{ "rt-budget", required_argument, NULL, O_KEY },
		{ "tick-us", required_argument, NULL, O_KEY },
		{ "allow-non-rt", no_argument, NULL, O_KEY },
		{ "flow-idle-ms", required_argument, NULL, O_KEY },
		{ "max-flows", required_argument, NULL, O_KEY },
		{ "flow-wait-ms", required_argument, NULL, O_KEY },
		{ "max-datagram", required_argument, NULL, O_KEY },
		{ "batch", required_argument, NULL, O_KEY },
		{ "udp-gro", no_argument, NULL, O_KEY },
		{ "drain-ms", required_argument, NULL, O_KEY },
		{ "socket-buffer", required_argument, NULL, O_KEY },
		{ "stats-file", required_argument, NULL, O_KEY },
		{ "heartbeat", required_argument, NULL, O_KEY },
		{ "cert", required_argument, NULL, O_KEY },
		{ "key", required_argument, NULL, O_KEY },
		{ "ca", required_argument, NULL, O_KEY },
		{ "alpn", required_argument, NULL, O_KEY },
		{ "max-conns", required_argument, NULL, O_KEY },
		{ "tcp-buffer", required_argument, NULL, O_KEY },
		{ "handshake-timeout-ms", required_argument, NULL, O_KEY },
		{ "connect-timeout-ms", required_argument, NULL, O_KEY },
		{ "tcp-idle-ms", required_argument, NULL, O_KEY },
		{ "tcp-kernel-stamps", required_argument, NULL, O_KEY },
		{ "first-byte-timeout-ms", required_argument, NULL, O_KEY },
		{ "max-conns-per-source", required_argument, NULL, O_KEY },
		{ "config", required_argument, NULL, O_CONFIG },
		{ "check-config", no_argument, NULL, O_CHECK },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ 0 }
	};
	static char keys[MAX_FLAGS][32];
	int idx, o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, &idx)) != -1) {
		switch (o) {
		case O_KEY: {
			if (r->nflags == MAX_FLAGS) {
				fprintf(stderr, "relay: more than %d flags\n",
					MAX_FLAGS);
				return EX_USAGE;
			}
			char *k = keys[r->nflags];
			snprintf(k, sizeof(keys[0]), "%s", opts[idx].name);
			for (char *p = k; *p; p++)
				if (*p == '-')
					*p = '_';
			r->flags[r->nflags].key = k;
			r->flags[r->nflags++].value = optarg ? optarg : "true";
			break;
		}
		case O_CONFIG:
			r->config_path = optarg;
			break;
		case O_CHECK:
			*check = true;
			break;
		case O_HELP:
			fputs(usage, stdout);
			exit(0);
		case O_VERSION:
			printf("relay %s\n", VERSION);
			exit(0);
		case ':':
			fprintf(stderr, "relay: %s needs a value\n%s",
				argv[optind - 1], usage);
			return EX_USAGE;
		default:
			fprintf(stderr, "relay: unknown option '%s'\n%s",
				argv[optind - 1], usage);
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "relay: unexpected argument '%s'\n%s",
			argv[optind], usage);
		return EX_USAGE;
	}
	if (*check && !r->config_path && r->nflags == 0) {
		fprintf(stderr, "relay: --check-config needs --config FILE\n");
		return EX_USAGE;
	}
	return 0;
}

static void describe(const struct conf *c, FILE *out)
{
	char a[ADDR_TEXT_MAX];
	fprintf(out, "listen");
	for (int i = 0; i < c->nlisten; i++)
		fprintf(out, " %s", addr_format(&c->listen[i], a, sizeof(a)));
	if (c->has_upstream)
		fprintf(out, "; upstream %s", addr_format(&c->upstream, a,
							 sizeof(a)));
	if (c->has_tcp_upstream)
		fprintf(out, "; upstream %s", addr_format(&c->tcp_upstream, a,
							 sizeof(a)));
	fprintf(out, "; cpus");
	for (int i = 0; i < c->ncpus; i++)
		fprintf(out, "%s%d", i ? "," : " ", c->cpus[i]);
	if (c->sched_other)
		fprintf(out, "; sched other");
	else
		fprintf(out, "; rt_priority %d; rt_budget %d%%", c->rt_priority,
			c->rt_budget);
	fprintf(out, "; tick_us %d; max_flows %d; flow_idle_ms %d\n",
		c->tick_us, c->max_flows, c->flow_idle_ms);
}

/* Open listener a on every loop into fds[]; all or nothing. */
static int open_everywhere(const struct relay *r, const struct addr *a,
			   int *fds, char *err, size_t errlen)
{
	for (int i = 0; i < r->conf.ncpus; i++) {
		fds[i] = a->kind == ADDR_UDP ?
			udp_open_listener(a, r->conf.socket_buffer,
					  r->conf.udp_gro, err, errlen) :
			tcp_open_listener(a, err, errlen);
		if (fds[i] < 0) {
			while (i-- > 0)
				close(fds[i]);
			return -1;
		}
	}
	return 0;
}

static bool has_listener(const struct conf *c, enum addr_kind kind)
{
	for (int i = 0; i < c->nlisten; i++)
		if (c->listen[i].kind == kind)
			return true;
	return false;
}

/* The TLS contexts c asks for (NULL where it asks for none), made from the
 * files before any loop sees them, so that a wrong file is reported at
 * once, at start-up and on a reload alike. Returns 0, or EX_CONFIG with
 * nothing made. */
static int make_tls(const struct conf *c, struct tls **server,
		    struct tls **client, char *err, size_t errlen)
{
	char warn[2048], why[1024];
	*server = *client = NULL;
	if (has_listener(c, ADDR_TLS)) {
		*server = tls_server_new(c->cert, c->key, c->alpn, warn,
					 sizeof(warn), why, sizeof(why));
		if (!*server) {
			snprintf(err, errlen, "%s", why);
			return EX_CONFIG;
		}
		for (char *line = strtok(warn, "\n"); line;
		     line = strtok(NULL, "\n"))
			fprintf(stderr, "relay: warning: %s\n", line);
	}
	if (c->has_tcp_upstream && c->tcp_upstream.kind == ADDR_TLS) {
		*client = tls_client_new(c->ca[0] ? c->ca : NULL, why,
					 sizeof(why));
		if (!*client) {
			snprintf(err, errlen, "%s", why);
			tls_free(*server);
			*server = NULL;
			return EX_CONFIG;
		}
	}
	return 0;
}

/* What the loops' stream path needs from c and the TLS contexts. */
static void stream_settings(const struct conf *c, struct tls *server,
			    struct tls *client, struct tcp_settings *t)
{
	memset(t, 0, sizeof(*t));
	t->upstream = c->tcp_upstream;
	snprintf(t->upstream_host, sizeof(t->upstream_host), "%s",
		 c->tcp_upstream_host);
	t->upstream_tls = client;
	t->server_tls = server;
	t->buffer = c->tcp_buffer;
	t->max_conns = c->max_conns;
	t->max_per_source = c->max_conns_per_source;
	t->first_byte_ms = c->first_byte_timeout_ms;
	t->handshake_ms = c->handshake_timeout_ms;
	t->connect_ms = c->connect_timeout_ms;
	t->idle_ms = c->tcp_idle_ms;
	t->kernel_stamps = c->tcp_kernel_stamps;
}

/* The listeners and the stream upstream as the metrics name them. */
static void listener_labels(struct relay *r)
{
	r->ntcp_labels = r->nudp_labels = 0;
	for (int i = 0; i < r->nreg; i++) {
		const struct listener *g = &r->reg[i];
		if (g->a.kind == ADDR_UDP) {
			struct stats_label *l =
				&r->udp_labels[r->nudp_labels++];
			l->id = g->id;
			addr_format(&g->a, l->text, sizeof(l->text));
		} else {
			struct tcp_label *l = &r->tcp_labels[r->ntcp_labels++];
			l->id = g->id;
			addr_format(&g->a, l->text, sizeof(l->text));
		}
	}
	if (r->conf.has_tcp_upstream)
		addr_format(&r->conf.tcp_upstream, r->tcp_upstream,
			    sizeof(r->tcp_upstream));
}

/* The id the loops count the UDP upstream of c under: the one it had when
 * it is still shown, else the next, which takes the slot of the oldest. */
static int upstream_id(struct relay *r, const struct conf *c)
{
	if (!c->has_upstream)
		return r->up_id;
	char text[ADDR_TEXT_MAX];
	addr_format(&c->upstream, text, sizeof(text));
	for (int i = 0; i < r->nudp_up; i++)
		if (strcmp(r->udp_up[i].text, text) == 0)
			return r->udp_up[i].id;
	int id = r->next_up_id++;
	struct stats_label *l = &r->udp_up[id % STATS_MAX_UPSTREAM];
	l->id = id;
	memcpy(l->text, text, sizeof(text));
	if (r->nudp_up < STATS_MAX_UPSTREAM)
		r->nudp_up++;
	return id;
}

static void status(struct relay *r)
{
	int64_t now = mono_ns();
	stats_snapshot_take(&r->snap, r->stats, r->nw);
	double dt = (double)(now - r->last_status_ns) / 1e9;
	if (dt <= 0)
		dt = 1;
	const uint64_t *c = r->snap.counter;
	uint64_t in = c[S_rx_packets] + c[S_reply_packets];
	/* Echo replies are counted in tx_packets and reply_tx_packets. */
	uint64_t out = c[S_tx_packets] + (r->conf.upstream.kind == ADDR_ECHO ? 0 :
					c[S_reply_tx_packets]);
	uint64_t drops = 0;
	for (int i = 0; i < STATS_NDROPS; i++)
		drops += r->snap.drop[i];
	char msg[512];
	snprintf(msg, sizeof(msg), "STATUS=%s%s%d: %.0f pkt/s in, %.0f pkt/s "
		 "out, %.0f drops/s, p99 %lld us, tick p99 %lld us, %lld flows",
		 r->sched.policy, r->sched.why[0] ? " (not real-time) " : " ",
		 r->sched.priority, (double)(in - r->last_in) / dt,
		 (double)(out - r->last_out) / dt,
		 (double)(drops - r->last_drops) / dt,
		 (long long)hist_percentile(&r->snap.rx, 99),
		 (long long)hist_percentile(&r->snap.tick, 99),
		 (long long)r->snap.flows_active);
	notify_send(msg);
	r->last_in = in;
	r->last_out = out;
	r->last_drops = drops;
	r->last_status_ns = now;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct relay *r = arg;
	(void)fd;
	(void)what;
	int64_t now = mono_ns();
	if (now - r->last_status_ns >= 1000000000LL)
		status(r);
	/* Ping the watchdog only while every loop makes progress: a stalled
	 * loop is what it is there to catch. */
	if (r->watchdog_usec &&
	    now - r->last_watchdog_ns >= (int64_t)r->watchdog_usec * 1000 / 2) {
		char why[256];
		if (admin_healthy(&r->view, why, sizeof(why))) {
			notify_send("WATCHDOG=1");
			r->last_watchdog_ns = now;
		}
	}
}

static void reload(struct relay *r)
{
	struct conf nc;
	char err[1024];
	if (load_conf(r, &nc, err, sizeof(err))) {
		fprintf(stderr, "relay: reload failed, keeping the running "
			"configuration: %s\n", err);
		return;
	}
	struct conf *c = &r->conf;
	static const struct { const char *key; size_t off, len; } fixed[] = {
#define FIXED(k) { #k, offsetof(struct conf, k), sizeof(((struct conf *)0)->k) }
		FIXED(cpus), FIXED(ncpus), FIXED(rt_priority), FIXED(tick_us),
		FIXED(sched_other), FIXED(rt_budget),
		FIXED(max_flows), FIXED(max_datagram), FIXED(batch), FIXED(udp_gro),
		FIXED(socket_buffer), FIXED(admin), FIXED(admin_off),
		FIXED(heartbeat), FIXED(stats_file), FIXED(allow_non_rt),
#undef FIXED
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (memcmp((char *)c + fixed[i].off, (char *)&nc + fixed[i].off,
			   fixed[i].len))
			fprintf(stderr, "relay: reload: %s cannot change without "
				"a restart; keeping the running value\n",
				fixed[i].key);

	/* Certificates, keys and CA files are read again, so one renewed at
	 * the same path is picked up; one that does not load changes nothing. */
	struct tls *server, *client;
	if (make_tls(&nc, &server, &client, err, sizeof(err))) {
		fprintf(stderr, "relay: reload failed, keeping the running "
			"configuration: %s\n", err);
		return;
	}
	struct worker_cmd cmd = { .upstream = nc.upstream,
				  .flow_idle_ms = nc.flow_idle_ms,
				  .flow_wait_ms = nc.flow_wait_ms,
				  .drain_ms = nc.drain_ms };
	stream_settings(&nc, server, client, &cmd.tcp);
	int fds[CONF_MAX_LISTEN][CONF_MAX_CPUS];
	struct listener keep[CONF_MAX_LISTEN];
	int nkeep = 0;
	for (int i = 0; i < r->nreg; i++) {
		bool still = false;
		for (int j = 0; j < nc.nlisten; j++)
			still |= addr_equal(&r->reg[i].a, &nc.listen[j]);
		if (still)
			keep[nkeep++] = r->reg[i];
		else
			cmd.remove_id[cmd.nremove++] = r->reg[i].id;
	}
	for (int j = 0; j < nc.nlisten; j++) {
		bool have = false;
		for (int i = 0; i < r->nreg; i++)
			have |= addr_equal(&r->reg[i].a, &nc.listen[j]);
		if (have)
			continue;
		if (open_everywhere(r, &nc.listen[j], fds[cmd.nadd], err,
				    sizeof(err)) < 0) {
			fprintf(stderr, "relay: reload failed, keeping the "
				"running configuration: %s\n", err);
			for (int k = 0; k < cmd.nadd; k++)
				for (int i = 0; i < r->nw; i++)
					close(fds[k][i]);
			tls_free(server);
			tls_free(client);
			return;
		}
		cmd.add_id[cmd.nadd] = r->next_id++;
		cmd.add_kind[cmd.nadd] = nc.listen[j].kind;
		keep[nkeep].a = nc.listen[j];
		keep[nkeep++].id = cmd.add_id[cmd.nadd];
		cmd.nadd++;
	}
	cmd.upstream_id = r->up_id = upstream_id(r, &nc);
	bool answered = true;
	for (int i = 0; i < r->nw; i++) {
		struct worker_cmd *wc = malloc(sizeof(*wc));
		if (!wc) {
			fprintf(stderr, "relay: reload: out of memory\n");
			return;
		}
		*wc = cmd;
		for (int k = 0; k < cmd.nadd; k++)
			wc->add_fd[k] = fds[k][i];
		if (worker_command(&r->w[i], wc, 5000) < 0) {
			fprintf(stderr, "relay: reload: loop %d did not answer "
				"within 5 s (stalled?)\n", i);
			answered = false;
		} else {
			free(wc);
		}
	}
	/* The loops accept with the new contexts now; the old ones go with
	 * the last connection made from them. A loop that has not answered
	 * may still use them: then they stay. */
	if (answered) {
		tls_free(r->tls_server);
		tls_free(r->tls_client);
	}
	r->tls_server = server;
	r->tls_client = client;
	memcpy(r->reg, keep, sizeof(keep));
	r->nreg = nkeep;
	memcpy(c->listen, nc.listen, sizeof(nc.listen));
	c->nlisten = nc.nlisten;
	c->upstream = nc.upstream;
	c->has_upstream = nc.has_upstream;
	c->tcp_upstream = nc.tcp_upstream;
	c->has_tcp_upstream = nc.has_tcp_upstream;
	memcpy(c->tcp_upstream_host, nc.tcp_upstream_host,
	       sizeof(c->tcp_upstream_host));
	c->max_conns = nc.max_conns;
	c->max_conns_per_source = nc.max_conns_per_source;
	c->first_byte_timeout_ms = nc.first_byte_timeout_ms;
	c->tcp_buffer = nc.tcp_buffer;
	c->handshake_timeout_ms = nc.handshake_timeout_ms;
	c->connect_timeout_ms = nc.connect_timeout_ms;
	c->tcp_idle_ms = nc.tcp_idle_ms;
	c->tcp_kernel_stamps = nc.tcp_kernel_stamps;
	memcpy(c->cert, nc.cert, sizeof(c->cert));
	memcpy(c->key, nc.key, sizeof(c->key));
	memcpy(c->ca, nc.ca, sizeof(c->ca));
	memcpy(c->alpn, nc.alpn, sizeof(c->alpn));
	listener_labels(r);
	r->view.tcp_upstream = c->has_tcp_upstream ? r->tcp_upstream : NULL;
	c->flow_idle_ms = nc.flow_idle_ms;
	c->flow_wait_ms = nc.flow_wait_ms;
	c->drain_ms = nc.drain_ms;
	fprintf(stderr, "relay: reloaded (%d added, %d removed): ", cmd.nadd,
		cmd.nremove);
	describe(c, stderr);
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	struct relay *r = arg;
	struct signalfd_siginfo si;
	(void)what;
	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(r);
		} else {
			fprintf(stderr, "relay: %s: draining\n",
				strsignal((int)si.ssi_signo));
			event_base_loopexit(r->base, NULL);
		}
	}
}

/* Stop the loops: drain each, then join. Returns 0 or EX_SOFTWARE. */
static int drain(struct relay *r)
{
	r->draining = true;
	notify_send("STOPPING=1");
	int rc = 0;
	for (int i = 0; i < r->nw; i++) {
		struct worker_cmd *wc = calloc(1, sizeof(*wc));
		if (!wc)
			return EX_SOFTWARE;
		wc->drain = true;
		wc->upstream = r->conf.upstream;
		wc->upstream_id = r->up_id;
		wc->flow_idle_ms = r->conf.flow_idle_ms;
		wc->flow_wait_ms = r->conf.flow_wait_ms;
		wc->drain_ms = r->conf.drain_ms;
		stream_settings(&r->conf, r->tls_server, r->tls_client,
				&wc->tcp);
		if (worker_command(&r->w[i], wc, r->conf.drain_ms + 5000) < 0) {
			fprintf(stderr, "relay: loop %d did not stop (stalled?)\n",
				i);
			rc = EX_SOFTWARE;
			continue;
		}
		free(wc);
	}
	if (rc)
		return rc;
	for (int i = 0; i < r->nw; i++)
		worker_join(&r->w[i]);
	return 0;
}

/* Keep the main thread (admin, signals) off the loops' CPUs when other
 * CPUs are left for it, and out of real-time if it was started there
 * (systemd's CPUSchedulingPolicy=fifo applies to the whole process). */
static void leave_loop_cpus(const struct conf *c)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);

	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int i = 0; i < c->ncpus; i++)
		CPU_CLR(c->cpus[i], &set);
	if (CPU_COUNT(&set) > 0)
		sched_setaffinity(0, sizeof(set), &set);
}

static int run(struct relay *r)
{
	struct conf *c = &r->conf;
	char err[1024];
	r->start_ns = mono_ns();
	r->last_status_ns = r->start_ns;

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	/* Blocked before any thread starts, so only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "relay: signalfd: %s\n", strerror(errno));
		return EX_OSERR;
	}

	/* Listener sockets, one per loop each, before anything else runs. */
	int fds[CONF_MAX_CPUS][CONF_MAX_LISTEN];
	int ids[CONF_MAX_LISTEN];
	enum addr_kind kinds[CONF_MAX_LISTEN];
	for (int j = 0; j < c->nlisten; j++) {
		int col[CONF_MAX_CPUS];
		if (open_everywhere(r, &c->listen[j], col, err, sizeof(err)) < 0) {
			fprintf(stderr, "relay: %s\n", err);
			return EX_UNAVAILABLE;
		}
		for (int i = 0; i < c->ncpus; i++)
			fds[i][j] = col[i];
		r->reg[j].a = c->listen[j];
		r->reg[j].id = ids[j] = r->next_id++;
		kinds[j] = c->listen[j].kind;
	}
	r->nreg = c->nlisten;
	listener_labels(r);
	upstream_id(r, c);	/* 0, what the loops start with */
	stream_settings(c, r->tls_server, r->tls_client, &r->streams);

	r->hb = heartbeat_open(c->heartbeat[0] ? c->heartbeat : NULL, c->ncpus,
			       r->start_ns, err, sizeof(err));
	if (!r->hb) {
		fprintf(stderr, "relay: %s\n", err);
		return EX_OSERR;
	}
	r->nw = c->ncpus;
	r->w = calloc((size_t)r->nw, sizeof(*r->w));
	r->stats = calloc((size_t)r->nw, sizeof(*r->stats));
	r->tcp = calloc((size_t)r->nw, sizeof(*r->tcp));
	if (!r->w || !r->stats || !r->tcp || stats_snapshot_init(&r->snap) < 0) {
		fprintf(stderr, "relay: out of memory\n");
		return EX_OSERR;
	}
	for (int i = 0; i < r->nw; i++) {
		if (worker_init(&r->w[i], i, c->cpus[i], c, &r->streams, ids,
				fds[i], kinds, c->nlisten, &r->hb->loop[i],
				r->start_ns, err, sizeof(err)) < 0) {
			fprintf(stderr, "relay: %s\n", err);
			return EX_OSERR;
		}
		r->stats[i] = &r->w[i].stats;
		r->tcp[i] = &r->w[i].tcp.stats;
	}

	r->sched.policy = "SCHED_FIFO";
	r->sched.priority = c->rt_priority;
	r->view = (struct admin_view){ .stats = r->stats, .n = r->nw,
		.sched = &r->sched, .hb = r->hb, .draining = &r->draining,
		.start_ns = r->start_ns, .tick_us = c->tick_us,
		.udp_labels = r->udp_labels, .nudp_labels = &r->nudp_labels,
		.udp_upstreams = r->udp_up, .nudp_upstreams = &r->nudp_up,
		.tcp = r->tcp, .tcp_labels = r->tcp_labels,
		.ntcp_labels = &r->ntcp_labels,
		.tcp_upstream = c->has_tcp_upstream ? r->tcp_upstream : NULL };
	r->base = event_base_new();
	if (!r->base) {
		fprintf(stderr, "relay: event_base_new failed\n");
		return EX_SOFTWARE;
	}
	struct admin *ad = NULL;
	if (!c->admin_off) {
		ad = admin_open(r->base, &c->admin, &r->view, err, sizeof(err));
		if (!ad) {
			fprintf(stderr, "relay: %s\n", err);
			return EX_UNAVAILABLE;
		}
	}

	for (int i = 0; i < r->nw; i++) {
		if (worker_start(&r->w[i]) < 0) {
			fprintf(stderr, "relay: %s%s\n", r->w[i].why,
				r->w[i].started < 0 && !c->allow_non_rt ?
				" (or run with --allow-non-rt)" : "");
			r->nw = i;	/* drain only the ones that run */
			drain(r);
			return EX_OSERR;
		}
		if (!r->w[i].realtime && !r->sched.why[0]) {
			r->sched.policy = "SCHED_OTHER";
			r->sched.priority = 0;
			snprintf(r->sched.why, sizeof(r->sched.why), "%s",
				 r->w[i].why);
			if (!c->sched_other)
				fprintf(stderr, "relay: running SCHED_OTHER, "
					"not real-time (--allow-non-rt): %s\n",
					r->w[i].why);
		}
	}
	/* Locked after the loops started, so a refused SCHED_FIFO is what
	 * gets reported first; MCL_CURRENT covers their stacks too. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* A sanitizer's shadow memory is terabytes of reserved address space:
	 * locking it cannot work, and these builds are for tests anyway. */
	fprintf(stderr, "relay: sanitizer build: memory not locked\n");
#else
	if (rt_lock_memory(err, sizeof(err)) < 0) {
		if (!c->allow_non_rt && !c->sched_other) {
			fprintf(stderr, "relay: %s (or --allow-non-rt)\n", err);
			drain(r);
			return EX_OSERR;
		}
		fprintf(stderr, "relay: warning: %s; continuing unlocked "
			"(--allow-non-rt)\n", err);
	}
#endif
	leave_loop_cpus(c);

	struct event *sev = event_new(r->base, sfd, EV_READ | EV_PERSIST,
				      on_signal, r);
	struct event *tev = event_new(r->base, -1, EV_PERSIST, on_timer, r);
	r->watchdog_usec = notify_watchdog_usec();
	struct timeval period = { 0, 250000 };
	if (!sev || !tev || event_add(sev, NULL) < 0 ||
	    event_add(tev, &period) < 0) {
		fprintf(stderr, "relay: cannot set up the main loop\n");
		return EX_SOFTWARE;
	}
	fprintf(stderr, "relay: ready: ");
	describe(c, stderr);
	if (ad) {
		struct addr bound = c->admin;
		in_port_t port = htons((in_port_t)admin_port(ad));
		if (bound.sa.ss_family == AF_INET)
			((struct sockaddr_in *)&bound.sa)->sin_port = port;
		else
			((struct sockaddr_in6 *)&bound.sa)->sin6_port = port;
		fprintf(stderr, "relay: admin on http://%s/metrics\n",
			addr_format_sa((struct sockaddr *)&bound.sa, err,
				       sizeof(err)));
	}
	notify_send("READY=1");
	status(r);

	event_base_dispatch(r->base);

	int rc = drain(r);
	if (rc == 0 && c->stats_file[0]) {
		stats_snapshot_take(&r->snap, r->stats, r->nw);
		double dur = (double)(mono_ns() - r->start_ns) / 1e9;
		if (stats_write_files(c->stats_file, &r->snap, &r->sched, dur,
				      admin_json_parts(&r->view), r->stats,
				      r->nw, err, sizeof(err)) < 0) {
			fprintf(stderr, "relay: stats file: %s\n", err);
			rc = EX_OSERR;
		}
	}
	if (rc == 0) {
		for (int i = 0; i < r->nw; i++)
			stats_free(&r->w[i].stats);
		stats_snapshot_free(&r->snap);
		event_free(sev);
		event_free(tev);
		admin_close(ad);
		event_base_free(r->base);
		heartbeat_close(r->hb);
		free(r->w);
		free(r->stats);
		free(r->tcp);
		tls_free(r->tls_server);
		tls_free(r->tls_client);
		close(sfd);
		fprintf(stderr, "relay: stopped\n");
	}
	return rc;
}

int main(int argc, char **argv)
{
	static struct relay r;
	bool check = false;
	sched_getaffinity(0, sizeof(r.cpus_at_start), &r.cpus_at_start);
	int rc = parse_args(&r, argc, argv, &check);
	if (rc)
		return rc;
	char err[1024];
	rc = load_conf(&r, &r.conf, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "relay: %s\n", err);
		if (rc == EX_USAGE)
			fprintf(stderr, "relay: try relay --help\n");
		return rc;
	}
	rc = make_tls(&r.conf, &r.tls_server, &r.tls_client, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "relay: %s\n", err);
		return rc;
	}
	if (check) {
		printf("relay: configuration OK: ");
		describe(&r.conf, stdout);
		return 0;
	}
	return run(&r);
}
