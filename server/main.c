/*
 * relay: a real-time UDP, TCP and TLS relay on raw epoll. This file is
 * the command line: flags become (key, value) pairs that conf_set checks
 * like the file's (and a reload applies again); service.h runs what they
 * say.
 */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "control.h"
#include "service.h"

#define VERSION "1.0"

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
"                       accept (10000; 0: never)\n"
"  --max-conns-per-source N  connections one address (IPv6: /64) may hold\n"
"                       per loop; more are reset (1024; 0: any)\n"
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

static int parse_args(struct control *ctl, int argc, char **argv, bool *check)
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
	static char keys[CONTROL_MAX_FLAGS][32];
	int idx, o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, &idx)) != -1) {
		switch (o) {
		case O_KEY: {
			if (ctl->nflags == CONTROL_MAX_FLAGS) {
				fprintf(stderr, "relay: more than %d flags\n",
					CONTROL_MAX_FLAGS);
				return EX_USAGE;
			}
			char *k = keys[ctl->nflags];
			snprintf(k, sizeof(keys[0]), "%s", opts[idx].name);
			for (char *p = k; *p; p++)
				if (*p == '-')
					*p = '_';
			ctl->flags[ctl->nflags].key = k;
			ctl->flags[ctl->nflags++].value = optarg ? optarg : "true";
			break;
		}
		case O_CONFIG:
			ctl->config_path = optarg;
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
	if (*check && !ctl->config_path && ctl->nflags == 0) {
		fprintf(stderr, "relay: --check-config needs --config FILE\n");
		return EX_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct control ctl = { .reload_efd = -1 };
	bool check = false;
	sched_getaffinity(0, sizeof(ctl.cpus_at_start), &ctl.cpus_at_start);
	int rc = parse_args(&ctl, argc, argv, &check);
	if (rc)
		return rc;
	char err[1024];
	rc = control_load_conf(&ctl, &ctl.conf, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "relay: %s\n", err);
		if (rc == EX_USAGE)
			fprintf(stderr, "relay: try relay --help\n");
		return rc;
	}
	rc = control_make_tls(&ctl.conf, &ctl.tls_server, &ctl.tls_client, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "relay: %s\n", err);
		return rc;
	}
	if (check) {
		printf("relay: configuration OK: ");
		control_describe(&ctl.conf, stdout);
		return 0;
	}
	return service_run(&ctl);
}
