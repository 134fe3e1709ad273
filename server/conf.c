/*
 * conf: one table (conf_opts, lib/opt.h) describes every key: its type,
 * range, default, where it lives in struct conf, whether a reload may
 * change it and its line of usage. The file parser, the flags (main.c),
 * the defaults and reload all read it, and a unit test holds relay(8) to
 * it (tests/unit/test_conf_man.c).
 */
#include "conf.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cgroup.h"
#include "opt.h"
#include "rt.h"
#include "why.h"

/* What a key holds, for reload's comparison (opt's types say how to parse
 * it), and whether a new value needs a restart. In the descriptor's tag. */
enum key_kind { K_INT, K_BOOL, K_SCHED, K_LISTEN, K_UPSTREAM, K_ADMIN, K_CPUS,
		K_PATH, K_GID, K_PEERS };
#define K_KIND(tag)	((enum key_kind)((tag) & 0xff))
#define RELOAD		0
#define RESTART		0x100

static int parse_listen(void *base, const char *v, char *why, size_t whylen);
static int parse_upstream(void *base, const char *v, char *why, size_t whylen);
static int parse_admin(void *base, const char *v, char *why, size_t whylen);
static int parse_cpus(void *base, const char *v, char *why, size_t whylen);
static int parse_sched(void *base, const char *v, char *why, size_t whylen);
static int parse_mode(void *base, const char *v, char *why, size_t whylen);
static int parse_group(void *base, const char *v, char *why, size_t whylen);
static int parse_allow(void *base, const char *v, char *why, size_t whylen);
static int parse_watch(void *base, const char *v, char *why, size_t whylen);

#define F(field) offsetof(struct conf, field)
/* A key whose field has its name: an int within [lo, hi], a bool, a path;
 * and one parsed by a function of its own. */
#define INT(k, lo, hi, d, ch, a, h) { .name = #k, .type = OPT_INT, \
	.off = F(k), .min = lo, .max = hi, .def = d, .arg = a, .help = h, \
	.tag = K_INT | ch }
#define BOOL(k, d, b, ch, h) { .name = #k, .type = OPT_BOOL, .off = F(k), \
	.def = d, .bare = b, .arg = "yes|no", .help = h, .tag = K_BOOL | ch }
#define PATH(k, ch, a, h) { .name = #k, .type = OPT_STR, .off = F(k), \
	.size = CONF_PATH_MAX, .arg = a, .help = h, .tag = K_PATH | ch }
#define FUNC(k, field, kind, fn, d, ch, a, h) { .name = #k, .type = OPT_FUNC, \
	.off = F(field), .parse = fn, .def = d, .arg = a, .help = h, \
	.tag = kind | ch }

const struct opt conf_opts[] = {
	FUNC(listen, listen, K_LISTEN, parse_listen, NULL, RELOAD, "URL",
	     "listen here (repeatable; replaces the file's list)"),
	FUNC(upstream, upstream, K_UPSTREAM, parse_upstream, NULL, RELOAD,
	     "URL|echo", "relay to this address; echo reflects to the sender\n"
	     "(one udp:// or echo, one tcp:// or tls://;\n"
	     "udp:// and unix:// listeners share the first)"),
	FUNC(admin, admin, K_ADMIN, parse_admin, "127.0.0.1:9310", RESTART,
	     "ADDR:PORT", "HTTP /metrics /stats /healthz /hgrm/*,\nor off"),
	FUNC(cpus, cpus, K_CPUS, parse_cpus, "0", RESTART, "LIST",
	     "one loop per CPU, e.g. 1 or 2-3"),
	FUNC(sched, sched_other, K_SCHED, parse_sched, "fifo", RESTART,
	     "fifo|other", "loops real-time (fifo), or ordinary tasks for a\n"
	     "CPU shared with busy ones (other)"),
	INT(rt_priority, 1, 99, "50", RESTART, "N",
	    "SCHED_FIFO priority of the loops, 1-99"),
	INT(rt_budget, 10, 100, "50", RESTART, "PCT",
	    "a SCHED_FIFO loop busier than this share of its CPU\n"
	    "runs SCHED_OTHER until it keeps up, 10-100"),
	INT(tick_us, 50, 1000000, "1000", RESTART, "N",
	    "loop timer interval, 50-1000000 us"),
	BOOL(allow_non_rt, NULL, "true", RESTART,
	     "run SCHED_OTHER when real-time is refused"),
	INT(flow_idle_ms, 1, 86400000, "30000", RELOAD, "N",
	    "close a flow idle this long"),
	INT(max_flows, 1, 1 << 20, "4096", RESTART, "N",
	    "flows per loop; when full, one not waiting for a\n"
	    "reply makes room, else a new flow is dropped"),
	INT(flow_wait_ms, 1, 86400000, "2000", RELOAD, "N",
	    "a reply outstanding this long is taken for lost"),
	INT(max_datagram, 64, 65535, "4096", RESTART, "N",
	    "larger datagrams are dropped, 64-65535"),
	INT(batch, 1, 256, "32", RESTART, "N",
	    "datagrams per recvmmsg/sendmmsg, 1-256"),
	BOOL(udp_gro, NULL, "true", RESTART,
	     "receive runs of one flow coalesced (UDP_GRO) and send\n"
	     "them on as one segmented write (UDP_SEGMENT)"),
	INT(drain_ms, 0, 60000, "1000", RELOAD, "N",
	    "on SIGTERM, wait this long for replies"),
	INT(socket_buffer, 0, 1 << 30, "0", RESTART, "N",
	    "SO_RCVBUF/SO_SNDBUF bytes, 0: the kernel's"),
	FUNC(unix_mode, unix_mode, K_INT, parse_mode, NULL, RESTART, "MODE",
	     "unix:///PATH listeners: the socket file's mode,\n"
	     "e.g. 0660 (none: what the umask leaves)"),
	FUNC(unix_group, unix_gid, K_GID, parse_group, NULL, RESTART, "GROUP",
	     "unix:///PATH listeners: the socket file's group\n"
	     "(a name or a gid; relay must be in it)"),
	FUNC(unix_allow, unix_allow, K_PEERS, parse_allow, NULL, RELOAD, "LIST",
	     "unix:// listeners: take datagrams only from these\n"
	     "senders: uid:ID,gid:ID,... (none: anyone)"),
	PATH(stats_file, RESTART, "FILE",
	     "on exit write FILE (JSON), FILE-derived .hgrm files,\n"
	     ".timeseries.csv and .metrics.prom (/metrics)"),
	PATH(heartbeat, RESTART, "FILE",
	     "publish loop progress in FILE (server/heartbeat.h)"),
	PATH(cert, RELOAD, "FILE", "tls:// listeners: PEM certificate chain"),
	PATH(key, RELOAD, "FILE", "tls:// listeners: its private key (mode 0600)"),
	PATH(ca, RELOAD, "FILE",
	     "tls:// upstream: verify it against these CAs\n"
	     "(none: the system's)"),
	PATH(alpn, RELOAD, "LIST", "tls:// listeners: ALPN protocols, ours first\n"
	     "(h2,http/1.1); the chosen one is offered upstream"),
	INT(max_conns, 1, 1 << 20, "4096", RELOAD, "N",
	    "stream connections per loop; then accepting pauses"),
	INT(tcp_buffer, 1024, 1 << 24, "16384", RELOAD, "N",
	    "bytes buffered per connection and direction"),
	INT(handshake_timeout_ms, 1, 600000, "5000", RELOAD, "N",
	    "client TLS handshake deadline"),
	INT(connect_timeout_ms, 1, 600000, "5000", RELOAD, "N",
	    "upstream connect (and TLS) deadline"),
	INT(tcp_idle_ms, 1, 86400000, "60000", RELOAD, "N",
	    "close a connection idle this long"),
	BOOL(tcp_kernel_stamps, "yes", NULL, RELOAD,
	     "time TCP bytes from their kernel receive time\n"
	     "(yes: includes the wait for the loop; stamps every\n"
	     "packet on the host) or from relay's read (no)"),
	INT(first_byte_timeout_ms, 0, 600000, "10000", RELOAD, "N",
	    "close a client silent this long after its accept\n(0: never)"),
	INT(max_conns_per_source, 0, 1 << 20, "1024", RELOAD, "N",
	    "connections one address (IPv6: /64) may hold per\n"
	    "loop; more are reset (0: any)"),
	{ .name = "kernel_btf", .type = OPT_STR, .off = F(kernel_btf),
	  .size = CONF_PATH_MAX, .def = "/sys/kernel/btf/vmlinux",
	  .arg = "FILE", .tag = K_PATH | RESTART,
	  .help = "the running kernel's BTF, read at start for\n"
		  "relay_kernel_info (deploy/kernel-markers)" },
	INT(late_us, 100, 10000000, "5000", RESTART, "N",
	    "a tick handled this late, or data that waited this\n"
	    "long for its wake-up, is a late wake-up, 100-10000000 us"),
	FUNC(watch_cgroups, watch_cgroups, K_PATH, parse_watch, NULL, RELOAD,
	     "LIST", "co-tenants' cgroup v2 groups to watch: slices\n"
	     "(loadgen.slice) or paths, comma-separated (up to 8)"),
	INT(watch_interval_ms, 1, 1000, "10", RELOAD, "N",
	    "read the watched groups' cpu.stat this often"),
};
const int conf_nopts = (int)(sizeof(conf_opts) / sizeof(conf_opts[0]));
_Static_assert(sizeof(conf_opts) / sizeof(conf_opts[0]) <= 64,
	       "set_mask has a bit per key");

void conf_defaults(struct conf *c)
{
	char why[256];
	memset(c, 0, sizeof(*c));
	c->unix_mode = -1;
	c->unix_gid = (gid_t)-1;
	if (opt_defaults(conf_opts, conf_nopts, c, why, sizeof(why)) < 0) {
		fprintf(stderr, "relay: %s\n", why);	/* the table is wrong */
		abort();
	}
}

/* The descriptor of key as the file spells it; NULL if none. */
static const struct opt *find_key(const char *key)
{
	return opt_find(conf_opts, conf_nopts, key);
}

int conf_known_key(const char *key)
{
	return find_key(key) != NULL;
}

static int parse_listen(void *base, const char *value, char *why,
			size_t whylen)
{
	struct conf *c = base;
	struct addr a;
	if (addr_parse(&a, value, c->addr_flags, why, whylen) < 0)
		return -1;
	if (c->listen_origin != c->origin) {
		c->nlisten = 0;
		c->listen_origin = c->origin;
	}
	for (int i = 0; i < c->nlisten; i++) {
		if (addr_equal(&c->listen[i], &a))
			return why_set(why, whylen, "'%s' given twice", value);
		/* SO_REUSEPORT would let both bind and split the connections
		 * between them. */
		if (addr_same_socket(&c->listen[i], &a)) {
			char other[ADDR_TEXT_MAX];
			addr_format(&c->listen[i], other, sizeof(other));
			return why_set(why, whylen, "'%s' is on the port of '%s'; "
				       "one port takes one of tcp:// and tls://",
				       value, other);
		}
	}
	if (c->nlisten == CONF_MAX_LISTEN)
		return why_set(why, whylen, "more than %d listeners",
			       CONF_MAX_LISTEN);
	c->listen[c->nlisten++] = a;
	return 0;
}

/* One for datagrams (udp://, echo) and one for streams (tcp://, tls://), so
 * both kinds of listener can be mixed. */
static int parse_upstream(void *base, const char *value, char *why,
			  size_t whylen)
{
	struct conf *c = base;
	struct addr a;
	if (addr_parse(&a, value, ADDR_ALLOW_ECHO | c->addr_flags, why,
		       whylen) < 0)
		return -1;
	if (a.kind == ADDR_UNIX)
		return why_set(why, whylen, "'%s': the upstream cannot be "
			       "unix:// (udp://, tcp://, tls:// or echo); "
			       "unix:// is for listeners", value);
	bool stream = a.kind == ADDR_TCP || a.kind == ADDR_TLS;
	bool *has = stream ? &c->has_tcp_upstream : &c->has_upstream;
	if (c->origin == CONF_FILE && *has)
		return why_set(why, whylen, "a %s upstream set twice",
			       stream ? "tcp/tls" : "udp");
	if (!stream) {
		c->upstream = a;
	} else {
		const char *h = strstr(value, "://") + 3;
		size_t n = *h == '[' ? strcspn(++h, "]") :
			   (size_t)(strrchr(h, ':') - h);
		if (n >= sizeof(c->tcp_upstream_host))
			return why_set(why, whylen, "'%s': host name too long",
				       value);
		memcpy(c->tcp_upstream_host, h, n);
		c->tcp_upstream_host[n] = 0;
		c->tcp_upstream = a;
	}
	*has = true;
	return 0;
}

static int parse_admin(void *base, const char *value, char *why,
		       size_t whylen)
{
	struct conf *c = base;
	char e[256];
	c->admin_off = strcmp(value, "off") == 0;
	if (c->admin_off)
		return 0;
	if (addr_parse(&c->admin, value, ADDR_NO_SCHEME_TCP | ADDR_ALLOW_PORT0 |
		       c->addr_flags, e, sizeof(e)) < 0)
		return why_set(why, whylen, "%s (or 'off')", e);
	if (c->admin.kind != ADDR_TCP)
		return why_set(why, whylen, "'%s': expected ADDR:PORT or "
			       "tcp://ADDR:PORT", value);
	return 0;
}

static int parse_cpus(void *base, const char *value, char *why, size_t whylen)
{
	struct conf *c = base;
	int n = rt_parse_cpus(value, c->cpus, CONF_MAX_CPUS, why, whylen);
	if (n < 0)
		return -1;
	c->ncpus = n;
	return 0;
}

static int parse_sched(void *base, const char *value, char *why, size_t whylen)
{
	struct conf *c = base;
	if (strcmp(value, "fifo") && strcmp(value, "other"))
		return why_set(why, whylen, "'%s' is not a policy (fifo or "
			       "other)", value);
	c->sched_other = strcmp(value, "other") == 0;
	return 0;
}

static int parse_mode(void *base, const char *value, char *why,
		      size_t whylen)
{
	struct conf *c = base;
	char *end;
	long v = strtol(value, &end, 8);
	/* No set-id nor sticky bits: they mean nothing on a socket. */
	if (!*value || *end || v < 0 || v > 0777)
		return why_set(why, whylen, "'%s' is not a mode (octal, 0 to "
			       "0777, e.g. 0660)", value);
	c->unix_mode = (int)v;
	return 0;
}

static int parse_group(void *base, const char *value, char *why,
		       size_t whylen)
{
	struct conf *c = base;
	uint32_t gid;
	if (peer_id(true, value, &gid, why, whylen) < 0)
		return -1;
	c->unix_gid = (gid_t)gid;
	return 0;
}

static int parse_allow(void *base, const char *value, char *why,
		       size_t whylen)
{
	return peer_parse(&((struct conf *)base)->unix_allow, value, why,
			  whylen);
}

/* Each name resolved to its directory now, so that a group that is not
 * there is refused where it was named (file:line, or the flag), at start
 * and at reload alike. */
static int parse_watch(void *base, const char *value, char *why,
		       size_t whylen)
{
	struct conf *c = base;
	char list[CONF_PATH_MAX], *save;
	if ((size_t)snprintf(list, sizeof(list), "%s", value) >= sizeof(list))
		return why_set(why, whylen, "longer than %d bytes",
			       CONF_PATH_MAX - 1);
	snprintf(c->watch_cgroups, sizeof(c->watch_cgroups), "%s", value);
	c->nwatch = 0;
	for (char *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		name += strspn(name, " \t");
		name[strcspn(name, " \t")] = 0;
		if (!*name)
			continue;
		if (c->nwatch == CONF_MAX_WATCH)
			return why_set(why, whylen, "more than %d groups",
				       CONF_MAX_WATCH);
		struct conf_cgroup *g = &c->watch[c->nwatch];
		if ((size_t)snprintf(g->name, sizeof(g->name), "%s", name) >=
		    sizeof(g->name))
			return why_set(why, whylen, "'%.40s...': a name longer "
				       "than %zu bytes", name, sizeof(g->name) - 1);
		for (int i = 0; i < c->nwatch; i++)
			if (strcmp(c->watch[i].name, name) == 0)
				return why_set(why, whylen, "'%s' given twice",
					       name);
		if (cg_watch_dir(name, g->dir, sizeof(g->dir), why, whylen) < 0)
			return -1;
		c->nwatch++;
	}
	return 0;
}

int conf_set(struct conf *c, const char *key, const char *value,
	     enum conf_origin origin, char *err, size_t errlen)
{
	const struct opt *o = find_key(key);
	if (!o)
		return why_set(err, errlen, "unknown key '%s'", key);
	int idx = (int)(o - conf_opts);
	enum key_kind kind = K_KIND(o->tag);
	if (kind != K_LISTEN && kind != K_UPSTREAM && origin == CONF_FILE &&
	    (c->set_mask & (1ull << idx)))
		return why_set(err, errlen, "%s: set twice", key);
	char why[256];
	c->origin = (int)origin;
	if (opt_parse(o, c, value, why, sizeof(why)) < 0)
		return why_set(err, errlen, "%s: %s", key, why);
	c->set_mask |= 1ull << idx;
	return 0;
}

/* inih gives the line a handler error happened on only through its return
 * value, and only for the first error; the reader below counts lines so the
 * handler can say which line its own message belongs to. */
struct parse {
	struct conf *c;
	const char *text;
	size_t pos;
	int line;
	int err_line;		/* line of the first error we explain */
	char msg[512];
};

static void note(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct parse *p, const char *fmt, ...)
{
	if (p->err_line)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	p->err_line = p->line;
}

static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	if (!p->text[p->pos])
		return NULL;
	const char *start = p->text + p->pos;
	size_t len = strcspn(start, "\n");
	bool nl = start[len] == '\n';
	p->pos += len + nl;
	p->line++;
	if (memchr(start, 0, len) || len + 2 > (size_t)num) {
		note(p, "line longer than %d bytes", num - 2);
		strcpy(str, "[\n");	/* make inih count an error here too */
		return str;
	}
	if (len && (start[0] == ' ' || start[0] == '\t') &&
	    start[strspn(start, " \t")] != '\n' &&
	    start[strspn(start, " \t")] != 0 &&
	    !strchr(";#", start[strspn(start, " \t")])) {
		note(p, "indented line: continuation lines are not supported");
		strcpy(str, "[\n");
		return str;
	}
	/* Section headers are checked here: inih does not tell the handler
	 * about a section that holds no keys. */
	const char *s = start + strspn(start, " \t");
	if (*s == '[') {
		size_t n = strcspn(s + 1, "]\n");
		if (s[1 + n] == ']' && (n != 5 || strncmp(s + 1, "relay", 5)))
			note(p, "unknown section [%.*s] (expected [relay])",
			     (int)n, s + 1);
	}
	memcpy(str, start, len);
	str[len] = '\n';
	str[len + 1] = 0;
	return str;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse *p = user;
	char why[400];
	if (!*section) {
		note(p, "'%s' outside a section (put it under [relay])", name);
		return 0;
	}
	if (strcmp(section, "relay") != 0) {
		note(p, "unknown section [%s] (expected [relay])", section);
		return 0;
	}
	if (!*value) {
		note(p, "%s: empty value", name);
		return 0;
	}
	if (conf_set(p->c, name, value, CONF_FILE, why, sizeof(why)) < 0) {
		note(p, "%s", why);
		return 0;
	}
	return 1;
}

int conf_load_string(struct conf *c, const char *text, const char *name,
		     char *err, size_t errlen)
{
	struct parse p = { .c = c, .text = text };
	/* The file's listeners replace the defaults' (there are none), and
	 * flags given later replace the file's. */
	c->listen_origin = CONF_FILE;
	int rc = ini_parse_stream(reader, &p, handler, &p);
	if (rc == 0 && !p.err_line)
		return 0;
	if (rc < 0)
		return why_set(err, errlen, "%s: cannot parse (out of memory)", name);
	if (p.err_line && (rc == 0 || p.err_line <= rc))
		return why_set(err, errlen, "%s:%d: %s", name, p.err_line, p.msg);
	return why_set(err, errlen, "%s:%d: syntax error (expected [relay], "
		    "key = value, or a ; or # comment)", name, rc);
}

int conf_load_file(struct conf *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return why_set(err, errlen, "%s: %s", path, strerror(errno));
	char *buf = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > (1u << 20)) {
				free(buf);
				fclose(f);
				return why_set(err, errlen, "%s: larger than 1 MiB",
					    path);
			}
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return why_set(err, errlen, "%s: out of memory", path);
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, 4096, f);
		len += n;
		if (n < 4096)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return why_set(err, errlen, "%s: read error", path);
	}
	buf[len] = 0;
	int rc = conf_load_string(c, buf, path, err, errlen);
	free(buf);
	return rc;
}

int conf_validate(const struct conf *c, const cpu_set_t *allowed, char *err,
		  size_t errlen)
{
	if (c->nlisten == 0)
		return why_set(err, errlen, "no listener: set listen = "
			    "udp://ADDR:PORT (or --listen)");
	int nudp = 0, nstream = 0, ntls = 0, nunix = 0;
	for (int i = 0; i < c->nlisten; i++) {
		bool dgram = addr_socktype(c->listen[i].kind) == SOCK_DGRAM;
		nudp += dgram;
		nstream += !dgram;
		ntls += c->listen[i].kind == ADDR_TLS;
		nunix += c->listen[i].kind == ADDR_UNIX;
	}
	/* Each loop has sockets of its own on a port (SO_REUSEPORT); an
	 * AF_UNIX name takes one socket, which one loop reads. */
	if (nunix && c->ncpus > 1)
		return why_set(err, errlen, "a unix:// listener is served by "
			    "one loop: set cpus to one CPU (it has %d)",
			    c->ncpus);
	if (nudp && !c->has_upstream)
		return why_set(err, errlen, "no upstream: set upstream = "
			    "udp://ADDR:PORT or echo (or --upstream)");
	if (nstream && !c->has_tcp_upstream)
		return why_set(err, errlen, "no upstream for the tcp:// and tls:// "
			    "listeners: set upstream = tcp://ADDR:PORT or "
			    "tls://HOST:PORT (or --upstream)");
	if (ntls && (!c->cert[0] || !c->key[0]))
		return why_set(err, errlen, "a tls:// listener needs a certificate "
			    "and a key: set cert and key (or --cert, --key)");
	cpu_set_t mine;
	CPU_ZERO(&mine);
	if (!allowed && sched_getaffinity(0, sizeof(mine), &mine) == 0)
		allowed = &mine;
	for (int i = 0; allowed && i < c->ncpus; i++)
		if (!CPU_ISSET(c->cpus[i], allowed))
			return why_set(err, errlen, "cpus: CPU %d is not available "
				    "to this process (it may use %d CPUs)",
				    c->cpus[i], CPU_COUNT(allowed));
	/* Everything relay may hold open at once, so that it refuses now
	 * rather than fail with EMFILE under load (see conf.h). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY) {
		uint64_t flows = nudp ? (uint64_t)c->max_flows : 0;
		uint64_t conns = nstream ? (uint64_t)c->max_conns : 0;
		uint64_t need = conf_descriptors(c);
		if (need > rl.rlim_max)
			return why_set(err, errlen, "descriptors: %d loop(s) x "
				    "(%llu flows + %llu connections x 2 + %d "
				    "listeners + %d) + %d "
				    "= %llu, but RLIMIT_NOFILE (hard) is %llu: "
				    "lower %s or raise the limit (LimitNOFILE=)",
				    c->ncpus, (unsigned long long)flows,
				    (unsigned long long)conns, c->nlisten,
				    CONF_FD_LOOP, CONF_FD_MAIN, (unsigned long long)need,
				    (unsigned long long)rl.rlim_max,
				    nudp && nstream ? "max_flows or max_conns" :
				    nudp ? "max_flows" : "max_conns");
	}
	return 0;
}

/* The bytes of struct conf that hold key o's value (K_CPUS and K_ADMIN
 * have a companion field: ncpus, admin_off). */
static size_t key_size(const struct opt *o)
{
	switch (K_KIND(o->tag)) {
	case K_INT:
		return sizeof(int);
	case K_BOOL:
	case K_SCHED:
		return sizeof(bool);
	case K_PATH:
		return CONF_PATH_MAX;
	case K_CPUS:
		return sizeof(((struct conf *)0)->cpus);
	case K_GID:
		return sizeof(gid_t);
	case K_PEERS:
		return sizeof(struct peer_list);
	default:
		return sizeof(struct addr);
	}
}

static bool same_value(const struct opt *o, const struct conf *a,
		       const struct conf *b)
{
	const char *fa = (const char *)a + o->off, *fb = (const char *)b + o->off;
	switch (K_KIND(o->tag)) {
	case K_PATH:
		return strcmp(fa, fb) == 0;
	case K_CPUS:
		return a->ncpus == b->ncpus &&
		       memcmp(a->cpus, b->cpus, sizeof(int) * (size_t)a->ncpus) == 0;
	case K_ADMIN:
		return a->admin_off == b->admin_off &&
		       (a->admin_off || addr_equal(&a->admin, &b->admin));
	default:
		return memcmp(fa, fb, key_size(o)) == 0;
	}
}

void conf_keep_fixed(struct conf *next, const struct conf *running,
		     char *changed, size_t len)
{
	size_t used = 0;
	if (len)
		changed[0] = 0;
	for (int i = 0; i < conf_nopts; i++) {
		const struct opt *o = &conf_opts[i];
		if (!(o->tag & RESTART) || same_value(o, next, running))
			continue;
		if (used < len)
			used += (size_t)snprintf(changed + used, len - used, "%s%s",
						 used ? ", " : "", o->name);
		memcpy((char *)next + o->off, (const char *)running + o->off,
		       key_size(o));
		next->ncpus = running->ncpus;
		next->admin_off = running->admin_off;
	}
}

uint64_t conf_descriptors(const struct conf *c)
{
	uint64_t flows = 0, conns = 0;
	for (int i = 0; i < c->nlisten; i++) {
		if (addr_socktype(c->listen[i].kind) == SOCK_DGRAM)
			flows = (uint64_t)c->max_flows;
		else
			conns = 2 * (uint64_t)c->max_conns;
	}
	return (uint64_t)c->ncpus * (flows + conns + (uint64_t)c->nlisten +
				     CONF_FD_LOOP) + CONF_FD_MAIN;
}
