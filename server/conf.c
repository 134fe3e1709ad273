/*
 * conf: one table describes every key (its type, range, where it lives in
 * struct conf and whether a reload may change it), so the file parser, the
 * flags, reload and the man page agree.
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

#include "rt.h"
#include "why.h"

enum key_type { K_INT, K_BOOL, K_SCHED, K_LISTEN, K_UPSTREAM, K_ADMIN, K_CPUS,
		K_PATH };

struct key {
	const char *name;
	enum key_type type;
	size_t off;
	long min, max;
	enum { RELOAD, RESTART } change;	/* what a new value needs */
};

#define F(field) offsetof(struct conf, field)
static const struct key keys[] = {
	{ "listen",        K_LISTEN,   F(listen),        0, 0, RELOAD },
	{ "upstream",      K_UPSTREAM, F(upstream),      0, 0, RELOAD },
	{ "admin",         K_ADMIN,    F(admin),         0, 0, RESTART },
	{ "cpus",          K_CPUS,     F(cpus),          0, 0, RESTART },
	{ "sched",         K_SCHED,    F(sched_other),   0, 0, RESTART },
	{ "rt_priority",   K_INT,      F(rt_priority),   1, 99, RESTART },
	{ "rt_budget",     K_INT,      F(rt_budget),     10, 100, RESTART },
	{ "tick_us",       K_INT,      F(tick_us),       50, 1000000, RESTART },
	{ "allow_non_rt",  K_BOOL,     F(allow_non_rt),  0, 0, RESTART },
	{ "flow_idle_ms",  K_INT,      F(flow_idle_ms),  1, 86400000, RELOAD },
	{ "max_flows",     K_INT,      F(max_flows),     1, 1 << 20, RESTART },
	{ "flow_wait_ms",  K_INT,      F(flow_wait_ms),  1, 86400000, RELOAD },
	{ "max_datagram",  K_INT,      F(max_datagram),  64, 65535, RESTART },
	{ "batch",         K_INT,      F(batch),         1, 256, RESTART },
	{ "udp_gro",       K_BOOL,     F(udp_gro),       0, 0, RESTART },
	{ "drain_ms",      K_INT,      F(drain_ms),      0, 60000, RELOAD },
	{ "socket_buffer", K_INT,      F(socket_buffer), 0, 1 << 30, RESTART },
	{ "stats_file",    K_PATH,     F(stats_file),    0, 0, RESTART },
	{ "heartbeat",     K_PATH,     F(heartbeat),     0, 0, RESTART },
	{ "cert",          K_PATH,     F(cert),          0, 0, RELOAD },
	{ "key",           K_PATH,     F(key),           0, 0, RELOAD },
	{ "ca",            K_PATH,     F(ca),            0, 0, RELOAD },
	{ "alpn",          K_PATH,     F(alpn),          0, 0, RELOAD },
	{ "max_conns",     K_INT,      F(max_conns),     1, 1 << 20, RELOAD },
	{ "tcp_buffer",    K_INT,      F(tcp_buffer),    1024, 1 << 24, RELOAD },
	{ "handshake_timeout_ms", K_INT, F(handshake_timeout_ms), 1, 600000, RELOAD },
	{ "connect_timeout_ms",   K_INT, F(connect_timeout_ms),   1, 600000, RELOAD },
	{ "tcp_idle_ms",   K_INT,      F(tcp_idle_ms),   1, 86400000, RELOAD },
	{ "tcp_kernel_stamps", K_BOOL, F(tcp_kernel_stamps), 0, 0, RELOAD },
	{ "first_byte_timeout_ms", K_INT, F(first_byte_timeout_ms), 0, 600000, RELOAD },
	{ "max_conns_per_source",  K_INT, F(max_conns_per_source),  0, 1 << 20, RELOAD },
};
#define NKEYS ((int)(sizeof(keys) / sizeof(keys[0])))
_Static_assert(NKEYS <= 64, "set_mask has a bit per key");

void conf_defaults(struct conf *c)
{
	char why[128];
	memset(c, 0, sizeof(*c));
	addr_parse(&c->admin, "127.0.0.1:9310", ADDR_NO_SCHEME_TCP, why,
		   sizeof(why));
	c->cpus[0] = 0;
	c->ncpus = 1;
	c->rt_priority = 50;
	c->rt_budget = 50;
	c->tick_us = 1000;
	c->flow_idle_ms = 30000;
	c->flow_wait_ms = 2000;
	c->max_flows = 4096;
	c->max_datagram = 4096;
	c->batch = 32;
	c->drain_ms = 1000;
	c->max_conns = 4096;
	c->tcp_buffer = 16384;
	c->handshake_timeout_ms = 5000;
	c->connect_timeout_ms = 5000;
	c->tcp_idle_ms = 60000;
	c->tcp_kernel_stamps = true;
	c->first_byte_timeout_ms = 10000;
	c->max_conns_per_source = 1024;
}

int conf_known_key(const char *key)
{
	for (int i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, key) == 0)
			return 1;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *yes[] = { "true", "yes", "on", "1" };
	static const char *no[] = { "false", "no", "off", "0" };
	for (int i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0)
			return *out = true, 0;
		if (strcmp(v, no[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

int conf_set(struct conf *c, const char *key, const char *value,
	     enum conf_origin origin, char *err, size_t errlen)
{
	const struct key *k = NULL;
	int idx = 0;
	for (; idx < NKEYS; idx++)
		if (strcmp(keys[idx].name, key) == 0) {
			k = &keys[idx];
			break;
		}
	if (!k)
		return why_set(err, errlen, "unknown key '%s'", key);
	if (k->type != K_LISTEN && k->type != K_UPSTREAM && origin == CONF_FILE &&
	    (c->set_mask & (1ull << idx)))
		return why_set(err, errlen, "%s: set twice", key);

	char *field = (char *)c + k->off;
	char why[256];
	switch (k->type) {
	case K_INT: {
		char *end;
		errno = 0;
		long v = strtol(value, &end, 10);
		if (!*value || *end || errno)
			return why_set(err, errlen, "%s: '%s' is not an integer",
				    key, value);
		if (v < k->min || v > k->max)
			return why_set(err, errlen, "%s: %ld out of range %ld..%ld",
				    key, v, k->min, k->max);
		*(int *)field = (int)v;
		break;
	}
	case K_BOOL:
		if (parse_bool(value, (bool *)field) < 0)
			return why_set(err, errlen, "%s: '%s' is not a boolean "
				    "(true/false, yes/no, on/off, 1/0)", key,
				    value);
		break;
	case K_SCHED:
		if (strcmp(value, "fifo") && strcmp(value, "other"))
			return why_set(err, errlen, "%s: '%s' is not a policy "
				    "(fifo or other)", key, value);
		*(bool *)field = strcmp(value, "other") == 0;
		break;
	case K_LISTEN: {
		struct addr a;
		if (addr_parse(&a, value, c->addr_flags, why, sizeof(why)) < 0)
			return why_set(err, errlen, "listen: %s", why);
		if (c->listen_origin != (int)origin) {
			c->nlisten = 0;
			c->listen_origin = (int)origin;
		}
		for (int i = 0; i < c->nlisten; i++) {
			if (addr_equal(&c->listen[i], &a))
				return why_set(err, errlen, "listen: '%s' given "
					    "twice", value);
			/* SO_REUSEPORT would let both bind and split the
			 * connections between them. */
			if (addr_same_socket(&c->listen[i], &a)) {
				char other[ADDR_TEXT_MAX];
				addr_format(&c->listen[i], other, sizeof(other));
				return why_set(err, errlen, "listen: '%s' is on "
					    "the port of '%s'; one port takes "
					    "one of tcp:// and tls://", value,
					    other);
			}
		}
		if (c->nlisten == CONF_MAX_LISTEN)
			return why_set(err, errlen, "listen: more than %d "
				    "listeners", CONF_MAX_LISTEN);
		c->listen[c->nlisten++] = a;
		break;
	}
	case K_UPSTREAM: {
		/* One for datagrams (udp://, echo) and one for streams
		 * (tcp://, tls://), so both kinds of listener can be mixed. */
		struct addr a;
		if (addr_parse(&a, value, ADDR_ALLOW_ECHO | c->addr_flags, why,
			       sizeof(why)) < 0)
			return why_set(err, errlen, "upstream: %s", why);
		bool stream = a.kind == ADDR_TCP || a.kind == ADDR_TLS;
		bool *has = stream ? &c->has_tcp_upstream : &c->has_upstream;
		if (origin == CONF_FILE && *has)
			return why_set(err, errlen, "upstream: a %s upstream set "
				    "twice", stream ? "tcp/tls" : "udp");
		if (!stream) {
			c->upstream = a;
		} else {
			const char *h = strstr(value, "://") + 3;
			size_t n = *h == '[' ? strcspn(++h, "]") :
				   (size_t)(strrchr(h, ':') - h);
			if (n >= sizeof(c->tcp_upstream_host))
				return why_set(err, errlen, "upstream: '%s': host "
					    "name too long", value);
			memcpy(c->tcp_upstream_host, h, n);
			c->tcp_upstream_host[n] = 0;
			c->tcp_upstream = a;
		}
		*has = true;
		break;
	}
	case K_ADMIN:
		c->admin_off = strcmp(value, "off") == 0;
		if (c->admin_off)
			break;
		if (addr_parse(&c->admin, value, ADDR_NO_SCHEME_TCP |
			       ADDR_ALLOW_PORT0 | c->addr_flags, why,
			       sizeof(why)) < 0)
			return why_set(err, errlen, "admin: %s (or 'off')", why);
		if (c->admin.kind != ADDR_TCP)
			return why_set(err, errlen, "admin: '%s': expected "
				    "ADDR:PORT or tcp://ADDR:PORT", value);
		break;
	case K_CPUS: {
		int n = rt_parse_cpus(value, c->cpus, CONF_MAX_CPUS, why,
				      sizeof(why));
		if (n < 0)
			return why_set(err, errlen, "cpus: %s", why);
		c->ncpus = n;
		break;
	}
	case K_PATH:
		if (strlen(value) >= CONF_PATH_MAX)
			return why_set(err, errlen, "%s: path longer than %d bytes",
				    key, CONF_PATH_MAX - 1);
		strcpy(field, value);
		break;
	}
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
	int nudp = 0, nstream = 0, ntls = 0;
	for (int i = 0; i < c->nlisten; i++) {
		nudp += c->listen[i].kind == ADDR_UDP;
		nstream += c->listen[i].kind != ADDR_UDP;
		ntls += c->listen[i].kind == ADDR_TLS;
	}
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

/* The bytes of struct conf that hold key k's value (K_CPUS and K_ADMIN have
 * a companion field: ncpus, admin_off). */
static size_t key_size(const struct key *k)
{
	switch (k->type) {
	case K_INT:
		return sizeof(int);
	case K_BOOL:
	case K_SCHED:
		return sizeof(bool);
	case K_PATH:
		return CONF_PATH_MAX;
	case K_CPUS:
		return sizeof(((struct conf *)0)->cpus);
	default:
		return sizeof(struct addr);
	}
}

static bool same_value(const struct key *k, const struct conf *a,
		       const struct conf *b)
{
	const char *fa = (const char *)a + k->off, *fb = (const char *)b + k->off;
	switch (k->type) {
	case K_PATH:
		return strcmp(fa, fb) == 0;
	case K_CPUS:
		return a->ncpus == b->ncpus &&
		       memcmp(a->cpus, b->cpus, sizeof(int) * (size_t)a->ncpus) == 0;
	case K_ADMIN:
		return a->admin_off == b->admin_off &&
		       (a->admin_off || addr_equal(&a->admin, &b->admin));
	default:
		return memcmp(fa, fb, key_size(k)) == 0;
	}
}

void conf_keep_fixed(struct conf *next, const struct conf *running,
		     char *changed, size_t len)
{
	size_t used = 0;
	if (len)
		changed[0] = 0;
	for (int i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		if (k->change == RELOAD || same_value(k, next, running))
			continue;
		if (used < len)
			used += (size_t)snprintf(changed + used, len - used, "%s%s",
						 used ? ", " : "", k->name);
		memcpy((char *)next + k->off, (const char *)running + k->off,
		       key_size(k));
		next->ncpus = running->ncpus;
		next->admin_off = running->admin_off;
	}
}

uint64_t conf_descriptors(const struct conf *c)
{
	uint64_t flows = 0, conns = 0;
	for (int i = 0; i < c->nlisten; i++) {
		if (c->listen[i].kind == ADDR_UDP)
			flows = (uint64_t)c->max_flows;
		else
			conns = 2 * (uint64_t)c->max_conns;
	}
	return (uint64_t)c->ncpus * (flows + conns + (uint64_t)c->nlisten +
				     CONF_FD_LOOP) + CONF_FD_MAIN;
}
