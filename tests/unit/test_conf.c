/* Unit tests for server/conf: a full file, flags over the file, and each
 * kind of bad input with the file:line and the words the message must
 * carry. */
#include "check.h"
#include "conf.h"

#include <string.h>

static char err[1024];

static int load(struct conf *c, const char *text)
{
	conf_defaults(c);
	err[0] = 0;
	return conf_load_string(c, text, "t.ini", err, sizeof(err));
}

static void bad(const char *text, const char *want)
{
	struct conf c;
	CHECK_EQ_INT(load(&c, text), -1);
	if (!strstr(err, want))
		fprintf(stderr, "  got '%s', want '%s'\n", err, want);
	CHECK(strstr(err, want) != NULL);
}

/* text must load into c. */
static void good(struct conf *c, const char *text)
{
	int rc = load(c, text);
	if (rc)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ_INT(rc, 0);
}

static void test_good(void)
{
	struct conf c;
	good(&c,
		"; relay\n"
		"[relay]\n"
		"listen = udp://127.0.0.1:5000\n"
		"listen = udp://[::1]:5000   ; inline comment\n"
		"# a comment\n"
		"upstream = udp://127.0.0.1:53\n"
		"admin = 127.0.0.1:0\n"
		"cpus = 0\n"
		"rt_priority = 70\n"
		"tick_us = 50\n"
		"allow_non_rt = yes\n"
		"flow_idle_ms = 500\n"
		"max_flows = 100\n"
		"max_datagram = 1500\n"
		"batch = 64\n"
		"udp_gro = on\n"
		"tcp_kernel_stamps = no\n"
		"drain_ms = 0\n"
		"socket_buffer = 1048576\n"
		"stats_file = out/relay.json\n"
		"heartbeat = hb\n");
	CHECK_EQ_INT(c.nlisten, 2);
	CHECK_EQ_INT(c.rt_priority, 70);
	CHECK_EQ_INT(c.tick_us, 50);
	CHECK(c.allow_non_rt);
	CHECK(c.udp_gro);
	CHECK(!c.tcp_kernel_stamps);
	CHECK_EQ_INT(c.max_flows, 100);
	CHECK_EQ_INT(c.drain_ms, 0);
	CHECK(strcmp(c.stats_file, "out/relay.json") == 0);
	CHECK_EQ_INT(addr_port(&c.upstream), 53);
	CHECK_EQ_INT(conf_validate(&c, NULL, err, sizeof(err)), 0);

	/* Flags override: one --listen replaces the file's list. */
	CHECK_EQ_INT(conf_set(&c, "listen", "udp://127.0.0.1:6000", CONF_FLAG,
			      err, sizeof(err)), 0);
	CHECK_EQ_INT(c.nlisten, 1);
	CHECK_EQ_INT(addr_port(&c.listen[0]), 6000);
	CHECK_EQ_INT(conf_set(&c, "listen", "udp://127.0.0.1:6001", CONF_FLAG,
			      err, sizeof(err)), 0);
	CHECK_EQ_INT(c.nlisten, 2);
	CHECK_EQ_INT(conf_set(&c, "tick_us", "100", CONF_FLAG, err,
			      sizeof(err)), 0);
	CHECK_EQ_INT(c.tick_us, 100);
	CHECK_EQ_INT(conf_set(&c, "upstream", "echo", CONF_FLAG, err,
			      sizeof(err)), 0);
	CHECK_EQ_INT(c.upstream.kind, ADDR_ECHO);
	CHECK_EQ_INT(conf_set(&c, "admin", "off", CONF_FLAG, err,
			      sizeof(err)), 0);
	CHECK(c.admin_off);
}

static void test_bad(void)
{
	bad("[relay]\nbogus = 1\n", "t.ini:2: unknown key 'bogus'");
	bad("[relay]\n\n[other]\n", "t.ini:3: unknown section [other]");
	bad("[other]\nlisten = udp://1.2.3.4:5\n", "t.ini:1: unknown section");
	bad("listen = udp://1.2.3.4:5\n", "t.ini:1: 'listen' outside a section");
	bad("[relay]\ntick_us = 10\n", "t.ini:2: tick_us: 10 out of range 50..1000000");
	bad("[relay]\ntick_us = 1x\n", "t.ini:2: tick_us: '1x' is not an integer");
	bad("[relay]\nrt_priority = 100\n", "rt_priority: 100 out of range 1..99");
	bad("[relay]\nallow_non_rt = maybe\n", "t.ini:2: allow_non_rt: 'maybe' is not a boolean");
	bad("[relay]\nbatch = 4\nbatch = 5\n", "t.ini:3: batch: set twice");
	bad("[relay]\nlisten = udp://1.2.3.4\n", "t.ini:2: listen: 'udp://1.2.3.4': missing ':PORT'");
	bad("[relay]\nupstream = tcp://1.2.3.4:5\nupstream = tcp://1.2.3.4:6\n", "t.ini:3: upstream: a tcp/tls upstream set twice");
	bad("[relay]\nlisten = udp://1.2.3.4:5\nlisten = udp://1.2.3.4:5\n", "t.ini:3: listen: 'udp://1.2.3.4:5' given twice");
	bad("[relay]\nlisten = tcp://1.2.3.4:5\nlisten = tls://1.2.3.4:5\n", "t.ini:3: listen: 'tls://1.2.3.4:5' is on the port of 'tcp://1.2.3.4:5'");
	bad("[relay]\nupstream = udp://no-such-host.invalid:5\n", "t.ini:2: upstream: 'udp://no-such-host.invalid:5': cannot resolve");
	bad("[relay]\nupstream = echo\nupstream = udp://1.2.3.4:6\n", "t.ini:3: upstream: a udp upstream set twice");
	bad("[relay]\ncpus = 2-1\n", "t.ini:2: cpus:");
	bad("[relay]\nadmin = nowhere\n", "t.ini:2: admin:");
	bad("[relay]\nlisten\n", "t.ini:2: syntax error");
	bad("[relay\n", "t.ini:1: syntax error");
	bad("[relay]\nbatch =\n", "t.ini:2: batch: empty value");
	bad("[relay]\nbatch = 4\n  batch = 5\n", "t.ini:3: indented line");
	char longline[400];
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "[relay]\nstats_file = ", 21);
	strcpy(longline + sizeof(longline) - 2, "\n");
	bad(longline, "t.ini:2: line longer than");
	/* The first error is the one reported. */
	bad("[relay]\nbatch = 0\nbogus = 1\n", "t.ini:2: batch: 0 out of range");
}

static void test_validate(void)
{
	struct conf c;
	conf_defaults(&c);
	/* TCP latency is timed from the kernel receive time unless told. */
	CHECK(c.tcp_kernel_stamps);
	CHECK_EQ_INT(conf_validate(&c, NULL, err, sizeof(err)), -1);
	CHECK(strstr(err, "no listener") != NULL);
	conf_set(&c, "listen", "udp://127.0.0.1:5", CONF_FLAG, err, sizeof(err));
	CHECK_EQ_INT(conf_validate(&c, NULL, err, sizeof(err)), -1);
	CHECK(strstr(err, "no upstream") != NULL);
	conf_set(&c, "upstream", "echo", CONF_FLAG, err, sizeof(err));
	CHECK_EQ_INT(conf_validate(&c, NULL, err, sizeof(err)), 0);
	conf_set(&c, "cpus", "1000", CONF_FLAG, err, sizeof(err));
	CHECK_EQ_INT(conf_validate(&c, NULL, err, sizeof(err)), -1);
	CHECK(strstr(err, "CPU 1000 is not available") != NULL);
	conf_set(&c, "cpus", "0", CONF_FLAG, err, sizeof(err));
	conf_set(&c, "max_flows", "1048576", CONF_FLAG, err, sizeof(err));
	int rc = conf_validate(&c, NULL, err, sizeof(err));
	if (rc)		/* only where the descriptor limit is that low */
		CHECK(strstr(err, "RLIMIT_NOFILE") != NULL);
	CHECK(!conf_known_key("nope"));
	CHECK(conf_known_key("tick_us"));
}

/* The unix:// listeners' keys: a mode, a group and who may send, each
 * checked as it is read. */
static void test_unix(void)
{
	struct conf c;
	conf_defaults(&c);
	CHECK_EQ_INT(c.unix_mode, -1);
	CHECK(c.unix_gid == (gid_t)-1);
	CHECK_EQ_INT(c.unix_allow.n, 0);
	CHECK(peer_allowed(&c.unix_allow, 1000, 1000));	/* none: anyone */
	good(&c, "[relay]\nunix_mode = 0660\nunix_group = root\n"
		 "unix_allow = uid:0, gid:12345 ,uid:root,gid:0\n");
	CHECK_EQ_INT(c.unix_mode, 0660);
	CHECK_EQ_INT(c.unix_gid, 0);
	CHECK_EQ_INT(c.unix_allow.n, 4);
	CHECK(peer_allowed(&c.unix_allow, 0, 99));
	CHECK(peer_allowed(&c.unix_allow, 99, 12345));
	CHECK(!peer_allowed(&c.unix_allow, 12345, 99));	/* a gid, not a uid */
	CHECK(!peer_allowed(&c.unix_allow, 99, 99));
	good(&c, "[relay]\nunix_mode = 600\nunix_group = 4321\n");
	CHECK_EQ_INT(c.unix_mode, 0600);
	CHECK_EQ_INT(c.unix_gid, 4321);

	bad("[relay]\nunix_mode = 0999\n", "t.ini:2: unix_mode: '0999' is not a mode (octal, 0 to 0777");
	bad("[relay]\nunix_mode = 01660\n", "unix_mode: '01660' is not a mode");
	bad("[relay]\nunix_mode = rw\n", "unix_mode: 'rw' is not a mode");
	bad("[relay]\nunix_group = no-such-group-here\n",
	    "t.ini:2: unix_group: no group 'no-such-group-here' on this host");
	bad("[relay]\nunix_group = 4294967295\n", "unix_group: '4294967295' is not a group id");
	bad("[relay]\nunix_allow = user:0\n",
	    "t.ini:2: unix_allow: 'user:0': expected uid:ID or gid:ID");
	bad("[relay]\nunix_allow = uid:0,,gid:0\n", "unix_allow: '': expected uid:ID");
	bad("[relay]\nunix_allow = uid:\n", "unix_allow: an empty user id");
	bad("[relay]\nunix_allow = uid:no-such-user-here\n",
	    "unix_allow: no user 'no-such-user-here' on this host");
	bad("[relay]\nunix_allow = gid:65534\n",
	    "unix_allow: 'gid:65534': 65534 is the id every user and group a "
	    "user namespace does not map reads as");
	bad("[relay]\nunix_allow = uid:1,uid:2,uid:3,uid:4,uid:5,uid:6,uid:7,"
	    "uid:8,uid:9,uid:10,uid:11,uid:12,uid:13,uid:14,uid:15,uid:16,uid:17\n",
	    "unix_allow: more than 16 ids");
	bad("[relay]\nunix_allow = uid:0\nunix_allow = uid:1\n",
	    "t.ini:3: unix_allow: set twice");
}

int main(void)
{
	test_good();
	test_bad();
	test_validate();
	test_unix();
	return check_done();
}
