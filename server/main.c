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

#include "conf.h"
#include "control.h"
#include "service.h"

#define VERSION "1.0"

/* The usage around the options the key table prints. */
static const char usage_head[] =
"usage: relay --listen udp://ADDR:PORT|tcp://ADDR:PORT|tls://ADDR:PORT|unix:///PATH\n"
"             [--listen ...]\n"
"             --upstream udp://ADDR:PORT|echo [--upstream tcp://ADDR:PORT|tls://HOST:PORT]\n"
"             [--config FILE] [options]\n"
"       relay --check-config --config FILE [options]\n"
"\n"
"Relays UDP datagrams from the listeners to the upstream and the replies back\n"
"to each client (one upstream socket per client 4-tuple). One real-time\n"
"(SCHED_FIFO) loop thread per CPU in --cpus, each with its own SO_REUSEPORT\n"
"socket. IPv6 addresses go in brackets: udp://[::1]:5353.\n"
"\n"
"Local clients: unix:///PATH or unix://@NAME (abstract) listeners take AF_UNIX\n"
"datagrams on the same path (one CPU in --cpus; each client binds a name).\n"
"\n"
"Streams on the same loops: tcp://ADDR:PORT listeners relay connections to a\n"
"tcp://ADDR:PORT or tls://HOST:PORT upstream (TLS originated, verified against\n"
"--ca); tls://ADDR:PORT listeners terminate TLS (1.2 or 1.3) with --cert and\n"
"--key. Give --upstream once per kind when udp:// and tcp:// listeners mix.\n"
"\n"
"Each option is also a key of the config file's [relay] section, with _ for -\n"
"(defaults in brackets):\n";

static const char usage_tail[] =
"  --config FILE        INI file with a [relay] section (see relay(8))\n"
"  --check-config       validate the configuration and exit\n"
"  --help, --version\n"
"\n"
"Signals: SIGHUP reloads the file (listeners and upstream; flows of other\n"
"listeners stay), SIGTERM/SIGINT drain and exit 0.\n"
"Exit: 0 ok, 64 usage, 78 config file, 69 address in use or unavailable,\n"
"71 the system refused (real-time, memory locking), 70 internal error.\n";

static void usage(FILE *f)
{
	fputs(usage_head, f);
	opt_usage(f, conf_opts, conf_nopts);
	fputs(usage_tail, f);
}

static int parse_args(struct control *ctl, int argc, char **argv, bool *check)
{
	enum { O_CHECK = 256, O_HELP, O_VERSION, O_CONFIG, O_KEY };
	static const struct option fixed[] = {
		{ "config", required_argument, NULL, O_CONFIG },
		{ "check-config", no_argument, NULL, O_CHECK },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
	};
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	/* The keys' rows first, so that an index below conf_nopts is the
	 * key's; then the fixed ones and the zero row. */
	static struct option opts[64 + NFIXED + 1];
	static char names[2048];
	if (conf_nopts > 64 ||
	    opt_longopts(conf_opts, conf_nopts, opts, names, sizeof(names),
			 O_KEY) < 0) {
		fprintf(stderr, "relay: the key table outgrew parse_args\n");
		return EX_SOFTWARE;
	}
	memcpy(opts + conf_nopts, fixed, sizeof(fixed));
	opts[conf_nopts + NFIXED] = (struct option){ 0 };
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
			const struct opt *k = &conf_opts[idx];
			ctl->flags[ctl->nflags].key = k->name;
			ctl->flags[ctl->nflags++].value = optarg ? optarg : k->bare;
			break;
		}
		case O_CONFIG:
			ctl->config_path = optarg;
			break;
		case O_CHECK:
			*check = true;
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		case O_VERSION:
			printf("relay %s\n", VERSION);
			exit(0);
		case ':':
			fprintf(stderr, "relay: %s needs a value\n",
				argv[optind - 1]);
			usage(stderr);
			return EX_USAGE;
		default:
			fprintf(stderr, "relay: unknown option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "relay: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
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
