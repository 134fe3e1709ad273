/*
 * libFuzzer target for the admin endpoint (server/admin.c over libevent's
 * evhttp, with metrics.c and stats.c behind it): the input is what up to
 * MAX_CLIENTS clients do, each over its own connection to the real
 * endpoint on a real event_base: send bytes (raw, or pieces of requests
 * from a table: request lines, headers, a 1 KiB header line to reach the
 * 8 KiB limit), half-close, close, and when the loop runs and time passes
 * (the sweep that runs every ADMIN_SWEEP_MS). The listening socket is an
 * AF_UNIX one handed to admin_serve, so a byte sent is a byte the server
 * can read, with no network stack in between: the same input runs the
 * same way every time, and nothing sleeps. (Most of a run's time is
 * evhttp's and the pages' own work under ASan: some hundreds of runs a
 * second.)
 *
 * The target includes admin.c, as fuzz_tcp includes tcp.c, to run the
 * sweep and read the connection count directly.
 *
 * The oracle, for each connection once its client is done with it:
 *  - what the client received is a sequence of well-formed HTTP responses
 *    (status line, headers, a body framed by Content-Length or the close,
 *    none for HEAD) with a status admin can send: 200, 404, 503 and the
 *    refusals 400 and 505 from admin; 400, 413, 417, 501 (and the 100
 *    before a chunked body) from evhttp's refusals;
 *  - where the client's bytes are requests of a plain grammar (model()
 *    below), the statuses are exactly the expected ones, in order: 200 for
 *    each page (/healthz: 503 when the view says draining or stalled), 404
 *    for any other path, 400 for a request line and headers over 8 KiB,
 *    413 for a body, 501 for a method other than GET and HEAD, 505 for a
 *    version other than HTTP/1.0 and 1.1 (below HTTP/2), 400 for a HEAD
 *    with a length (its body would be the next request); and
 *    nothing more after a response that closes the connection. A client
 *    that closed or half-closed early may miss answers, never get others;
 *  - past what the model knows, nothing is answered for bytes that hold
 *    no complete line and stay within the limit, and no more answers come
 *    than there are ends of header blocks, plus one refusal; a connection
 *    that lived through its grace in sweeps (ADMIN_GRACE_TICKS) may have
 *    been closed to make room or past its deadline: it may miss answers;
 *  - at most ADMIN_MAX_CONNS connections are open at once, and once every
 *    client is gone and a sweep ran the count is back to zero, accepting
 *    on again.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../server/admin.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CLIENTS	20	/* more than ADMIN_MAX_CONNS: some wait */
#define MAX_SENT	(256 << 10)	/* per connection */
#define MAX_RECEIVED	(16 << 20)
#define MAX_ROUNDS	256	/* loop rounds in one settle() */
#define QUIET_ROUNDS	4	/* rounds with nothing new: settled */

struct client {
	int fd;			/* -1: not connected */
	unsigned id;		/* its abstract address: which connection */
	uint64_t born;		/* admin's tick at its connect */
	char *sent, *got;
	size_t nsent, ngot, capsent, capgot;
	bool fin;		/* it half-closed */
	bool eof;		/* the server closed (or reset) */
};

static struct event_base *base;
static struct admin *ad;
static struct sockaddr_un server;
static socklen_t server_len;
static struct client clients[MAX_CLIENTS];
static unsigned next_id;

/* The view: one loop, a udp:// listener and its echo upstream. */
static struct stats loop_stats;
static struct stats *const stats_list[1] = { &loop_stats };
static struct stats_sched sched = { .policy = "SCHED_OTHER", .why = "fuzz" };
static struct heartbeat_file *hb;
static bool draining;
static struct stats_label udp_label = { .id = 0, .text = "udp://127.0.0.1:53" };
static struct stats_label udp_up = { .id = 0, .text = "echo" };
static const int one_label = 1;
static struct stats_reloads reloads = { .applied = 2, .failed = 1 };
static struct admin_view view = {
	.stats = stats_list, .n = 1, .sched = &sched, .draining = &draining,
	.tick_us = 1000, .udp_labels = &udp_label, .nudp_labels = &one_label,
	.udp_upstreams = &udp_up, .nudp_upstreams = &one_label,
	.reloads = &reloads,
};

static void setup(void)
{
	char err[256];
	signal(SIGPIPE, SIG_IGN);	/* as relay does (service.c) */
	base = event_base_new();
	hb = calloc(1, sizeof(*hb) + sizeof(hb->loop[0]));
	if (!base || !hb || stats_init(&loop_stats, 1) < 0)
		abort();
	view.hb = hb;
	view.start_ns = 1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	server.sun_family = AF_UNIX;
	int n = snprintf(server.sun_path + 1, sizeof(server.sun_path) - 1,
			 "relay-fuzz-admin-%d", (int)getpid());
	server_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	if (fd < 0 || bind(fd, (struct sockaddr *)&server, server_len) < 0 ||
	    listen(fd, 64) < 0)
		abort();
	ad = admin_serve(base, fd, &view, err, sizeof(err));
	if (!ad) {
		fprintf(stderr, "fuzz_admin: %s\n", err);
		abort();
	}
	for (int k = 0; k < MAX_CLIENTS; k++)
		clients[k].fd = -1;
}

/* ---- what a client does ---- */

static void append(char **buf, size_t *n, size_t *cap, const char *p,
		   size_t len)
{
	if (*n + len > *cap) {
		*cap = (*n + len) * 2;
		*buf = realloc(*buf, *cap);
		if (!*buf)
			abort();
	}
	memcpy(*buf + *n, p, len);
	*n += len;
}

/* Each connection comes from an address of its own, so the server's
 * side of it can be told apart (accepted()). */
static void client_connect(struct client *c)
{
	struct sockaddr_un me = { .sun_family = AF_UNIX };
	c->id = ++next_id;
	int n = snprintf(me.sun_path + 1, sizeof(me.sun_path) - 1,
			 "relay-fuzz-admin-%d.%u", (int)getpid(), c->id);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0 ||
	    bind(c->fd, (struct sockaddr *)&me,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
	    connect(c->fd, (struct sockaddr *)&server, server_len) < 0)
		abort();	/* the backlog (64) holds every client */
	c->nsent = c->ngot = 0;
	c->fin = c->eof = false;
	c->born = ad->ticks;
}

static void client_send(struct client *c, const void *p, size_t len)
{
	if (c->fd < 0)
		client_connect(c);
	if (c->fin || c->nsent + len > MAX_SENT)
		return;
	ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
	if (n > 0)	/* what the server may read: all the model sees */
		append(&c->sent, &c->nsent, &c->capsent, p, (size_t)n);
}

/* Take what arrived; true if anything did. */
static bool client_read(struct client *c)
{
	static char buf[65536];
	bool any = false;
	while (c->fd >= 0 && !c->eof) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			if (c->ngot + (size_t)n > MAX_RECEIVED)
				abort();	/* answers without end */
			append(&c->got, &c->ngot, &c->capgot, buf, (size_t)n);
		} else if (n == 0 || errno == ECONNRESET || errno == EPIPE) {
			c->eof = true;
		} else {
			break;
		}
		any = true;
	}
	return any;
}

/* ---- the loop ---- */

/* Run the loop until nothing moves: no client gets a byte and the
 * connection count stays for QUIET_ROUNDS rounds. */
static void settle(void)
{
	int quiet = 0;
	for (int r = 0; r < MAX_ROUNDS && quiet < QUIET_ROUNDS; r++) {
		int before = ad->nconns;
		bool any = false;
		event_base_loop(base, EVLOOP_NONBLOCK);
		for (int k = 0; k < MAX_CLIENTS; k++)
			any |= client_read(&clients[k]);
		if (ad->nconns > ADMIN_MAX_CONNS)
			abort();
		quiet = any || ad->nconns != before ? 0 : quiet + 1;
	}
	if (quiet < QUIET_ROUNDS)
		abort();	/* busy for ever */
}

/* Whether connection id is one admin accepted and still holds. */
static bool accepted(unsigned id)
{
	for (int i = 0; i < ad->nconns; i++) {
		struct sockaddr_un peer;
		socklen_t len = sizeof(peer);
		unsigned got;
		int fd = (int)bufferevent_getfd(ad->conns[i].bev);
		if (fd >= 0 &&
		    getpeername(fd, (struct sockaddr *)&peer, &len) == 0 &&
		    len > offsetof(struct sockaddr_un, sun_path) + 1 &&
		    sscanf(peer.sun_path + 1, "relay-fuzz-admin-%*d.%u", &got) == 1 &&
		    got == id)
			return true;
	}
	return false;
}

/* ---- the model: what a request of a plain grammar gets ---- */

#define MAX_EXPECT	512

struct expect {
	int n;			/* responses it knows */
	int status[MAX_EXPECT];
	bool head[MAX_EXPECT];
	bool known;		/* every byte sent is accounted for */
	size_t rest;		/* else: where the unknown bytes start */
	bool refusal;		/* they ended in a request over the limit */
};

static bool is_token(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '-';
}

static bool is_path(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || (ch && strchr("/._~-", ch));
}

static bool is_query(char ch)
{
	return is_path(ch) || ch == '=' || ch == '&';
}

static int healthz_status(void)
{
	return draining || hb->loop[0].mono_ns == 1 ? 503 : 200;
}

static int page_status(const char *path, size_t len)
{
	static const char *const pages[] = { "/metrics", "/stats",
		"/hgrm/rx_latency", "/hgrm/wake_latency",
		"/hgrm/tick_lateness" };
	if (len == 8 && memcmp(path, "/healthz", 8) == 0)
		return healthz_status();
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (strlen(pages[i]) == len && memcmp(path, pages[i], len) == 0)
			return 200;
	return 404;
}

/* "METHOD /path[?query] HTTP/0.d" or "HTTP/1.d"; 0: not of the grammar
 * (HTTP/2 and up evhttp refuses 400 from its request line alone). body:
 * the method is one evhttp reads a body for. */
static int request_line(const char *p, size_t len, bool *get, bool *head,
			bool *body, int *major, int *minor, int *status)
{
	size_t m = 0, i;
	while (m < len && m < 16 && p[m] >= 'A' && p[m] <= 'Z')
		m++;
	if (m == 0 || m == 16 || m + 1 >= len || p[m] != ' ' ||
	    p[m + 1] != '/' || (m + 2 < len && p[m + 2] == '/'))
		return 0;
	for (i = m + 1; i < len && is_path(p[i]); i++)
		;
	size_t path_end = i;
	if (i < len && p[i] == '?')
		for (i++; i < len && is_query(p[i]); i++)
			;
	if (len - i != 9 || memcmp(p + i, " HTTP/", 6) != 0 ||
	    p[i + 6] < '0' || p[i + 6] > '1' || p[i + 7] != '.' ||
	    p[i + 8] < '0' || p[i + 8] > '9')
		return 0;
	/* Methods evhttp knows (others it refuses 400 or 501 by their
	 * length), and whether it reads a body for them. */
	static const struct { const char *name; bool body; } methods[] = {
		{ "GET", true }, { "POST", true }, { "PUT", true },
		{ "PATCH", true }, { "DELETE", true }, { "OPTIONS", true },
		{ "HEAD", false }, { "TRACE", false }, { "CONNECT", true },
	};
	size_t k = 0;
	while (k < sizeof(methods) / sizeof(methods[0]) &&
	       (strlen(methods[k].name) != m || memcmp(p, methods[k].name, m)))
		k++;
	if (k == sizeof(methods) / sizeof(methods[0]))
		return 0;
	*get = k == 0;
	*head = k == 6;
	*body = methods[k].body;
	*major = p[i + 6] - '0';
	*minor = p[i + 8] - '0';
	*status = page_status(p + m + 1, path_end - m - 1);
	return 1;
}

/* "Name: value", the value printable; what it says of the connection
 * and the body. 0: not of the grammar (or a header the model leaves to
 * evhttp: Transfer-Encoding, Expect, a second Connection or length). */
static int header(const char *p, size_t len, int *conn, long *length)
{
	size_t i = 0;
	while (i < len && is_token(p[i]))
		i++;
	if (i == 0 || i + 1 >= len || p[i] != ':' || p[i + 1] != ' ')
		return 0;
	size_t name = i, v = i + 2;
	if (v >= len || p[v] == ' ' || p[len - 1] == ' ')
		return 0;
	for (i = v; i < len; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return 0;
	const char *val = p + v;
	size_t vlen = len - v;
	if (name == 10 && strncasecmp(p, "connection", 10) == 0) {
		if (*conn)
			return 0;
		if (vlen == 5 && strncasecmp(val, "close", 5) == 0)
			*conn = 1;
		else if (vlen == 10 && strncasecmp(val, "keep-alive", 10) == 0)
			*conn = 2;
		else
			return 0;
	} else if (name == 14 && strncasecmp(p, "content-length", 14) == 0) {
		if (*length >= 0 || vlen > 6)
			return 0;
		*length = 0;
		for (i = 0; i < vlen; i++) {
			if (val[i] < '0' || val[i] > '9')
				return 0;
			*length = *length * 10 + (val[i] - '0');
		}
	} else if ((name == 17 && strncasecmp(p, "transfer-encoding", 17) == 0) ||
		   (name == 6 && strncasecmp(p, "expect", 6) == 0)) {
		return 0;
	}
	return 1;
}

/* Walk the requests in sent[] as evhttp reads them, one after the other
 * while the connection stays open. */
static void model(const char *sent, size_t n, struct expect *e)
{
	size_t at = 0;
	memset(e, 0, sizeof(*e));
	while (e->n < MAX_EXPECT) {
		size_t sum = 0, p = at;	/* line lengths, without EOLs */
		int lines = 0, conn = 0, major = 0, minor = 0, status = 0;
		long length = -1;
		bool get = false, head = false, body = false, ended = false;
		while (p < n && !ended) {
			const char *nl = memchr(sent + p, '\n', n - p);
			if (!nl)
				break;
			size_t end = (size_t)(nl - sent);
			if (end == p || sent[end - 1] != '\r')
				goto unknown;	/* a bare LF: evhttp's rules */
			size_t len = end - 1 - p;
			sum += len;
			if (lines == 0 ?
			    !request_line(sent + p, len, &get, &head, &body,
					  &major, &minor, &status) :
			    len != 0 && !header(sent + p, len, &conn, &length))
				goto unknown;
			ended = lines > 0 && len == 0;
			lines++;
			p = end + 1;
		}
		/* The limit counts lines without their EOLs and, while one
		 * is unfinished, what of it waits: the count at the last read
		 * is over it (400: evhttp tells it from no other bad header),
		 * or within it by more than the '\r' an
		 * earlier read may have seen alone; at the limit itself it
		 * depends on how the reads fell. */
		size_t count = sum + (ended ? 0 : n - p);
		if (count > ADMIN_MAX_HEADERS) {
			e->status[e->n++] = 400;
			e->known = true;
			return;
		}
		if (count == ADMIN_MAX_HEADERS)
			goto unknown;
		if (!ended) {
			e->known = true;	/* waits for the rest */
			return;
		}
		/* A body (max_body_size 0) before the method: then only GET
		 * and HEAD (evhttp's refusals), then admin's: the version,
		 * a length on HEAD (whose body evhttp does not read), the
		 * path. */
		bool closes = minor == 0 ? conn != 2 : conn == 1;
		bool admin = false;
		if (length > 0 && body)
			status = 413, closes = true;
		else if (!get && !head)
			status = 501, closes = true;
		else if (major == 0 || minor > 1)
			status = 505, closes = admin = true;
		else if (length > 0)
			status = 400, closes = admin = true;
		else
			admin = true;
		e->head[e->n] = head && admin;	/* admin's answer: no body */
		e->status[e->n++] = status;
		at = p;
		if (closes || at == n) {
			e->known = true;
			return;
		}
	}
unknown:
	e->rest = at;
}

/* ---- the oracle ---- */

struct response {
	int status;
	size_t end;		/* where the next one starts */
};

enum method { OTHER, HEAD, UNKNOWN };

/* Parse one response at got[at..]; 0: it is cut short; -1: malformed.
 * To a request of unknown method, a response with a length is taken for
 * HEAD's (no body) when what follows its header is the next response or
 * the close. */
static int parse_response(const char *got, size_t n, size_t at,
			  enum method m, bool eof, struct response *r)
{
	const char *p = got + at;
	size_t len = n - at;
	const char *hdrs_end = memmem(p, len, "\r\n\r\n", 4);
	if (!hdrs_end)
		return len > 16384 ? -1 : 0;
	/* HTTP/major.minor: evhttp answers in the request's version as
	 * its sscanf read it, whatever it is (HTTP/0.1, HTTP/1.11 and
	 * HTTP/1.-12 included). */
	size_t v = 5;
	if (len < 17 || memcmp(p, "HTTP/", 5) != 0)
		return -1;
	while (v < len && ((p[v] >= '0' && p[v] <= '9') || p[v] == '.' ||
			   p[v] == '-'))
		v++;
	if (v == 5 || v + 5 > len || p[v] != ' ' || p[v + 4] != ' ')
		return -1;
	r->status = 0;
	for (size_t i = v + 1; i < v + 4; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		r->status = r->status * 10 + (p[i] - '0');
	}
	long length = -1;
	for (const char *line = memmem(p, len, "\r\n", 2) + 2; line < hdrs_end;) {
		const char *eol = memmem(line, (size_t)(hdrs_end + 2 - line), "\r\n", 2);
		const char *colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || colon == line || colon[1] != ' ')
			return -1;
		if (colon - line == 14 && strncasecmp(line, "Content-Length", 14) == 0)
			length = strtol(colon + 2, NULL, 10);
		line = eol + 2;
	}
	size_t body = (size_t)(hdrs_end + 4 - got);
	if (m == UNKNOWN && length > 0 && r->status != 413 &&
	    ((body == n && eof) ||
	     (n - body >= 5 && memcmp(got + body, "HTTP/", 5) == 0)))
		m = HEAD;
	if (m == HEAD || r->status / 100 == 1)
		r->end = body;
	else if (length >= 0)
		r->end = body + (size_t)length;
	else if (eof)
		r->end = n;	/* delimited by the close */
	else
		return 0;
	return r->end <= n ? 1 : 0;
}

/* admin's answers, and evhttp's refusals (417: an Expect it does not
 * know; 100: the go-ahead to send a chunked body, refused next). */
static bool allowed(int status)
{
	return status == 200 || status == 404 || status == 503 ||
	       status == 100 || status == 400 || status == 413 ||
	       status == 417 || status == 501 || status == 505;
}

/* Ends of header blocks: an empty line, or one that starts with a NUL
 * (evhttp takes lines for C strings). */
static size_t count_block_ends(const char *p, size_t n)
{
	size_t ends = 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (p[i] == '\n' && (p[i + 1] == '\n' || p[i + 1] == '\0' ||
				     (i + 2 < n && p[i + 1] == '\r' &&
				      p[i + 2] == '\n')))
			ends++;
	return ends;
}

/* Up to 2000 bytes of p, escaped C-style, a line per line of it. */
static void dump(const char *what, const char *p, size_t n)
{
	fprintf(stderr, "--- %s (%zu bytes)\n", what, n);
	for (size_t i = 0; i < n && i < 2000; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch == '\n')
			fputs("\\n\n", stderr);
		else if (ch == '\r')
			fputs("\\r", stderr);
		else if (ch < 0x20 || ch > 0x7e || ch == '\\')
			fprintf(stderr, "\\x%02x", ch);
		else
			fputc(ch, stderr);
	}
	fputc('\n', stderr);
}

/* The oracle's verdict, with what the connection saw, for the log. */
static void fail(const struct client *c, const char *why)
{
	fprintf(stderr, "fuzz_admin: connection %u: %s\n", c->id, why);
	dump("sent", c->sent, c->nsent);
	dump("received", c->got, c->ngot);
	abort();
}

/* Check what connection c got against what it sent. early: its client
 * stopped short (closed or half-closed), so answers may be missing;
 * waiting: admin never accepted it (the cap), so none may have come. */
static void check(const struct client *c, bool early, bool waiting)
{
	struct expect e;
	model(c->sent, c->nsent, &e);
	size_t at = 0;
	int i = 0;
	for (; at < c->ngot; i++) {
		struct response r;
		enum method m = i >= e.n ? UNKNOWN : e.head[i] ? HEAD : OTHER;
		int rc = parse_response(c->got, c->ngot, at, m, c->eof, &r);
		if (rc < 0)
			fail(c, "a malformed response");
		if (rc > 0 && !allowed(r.status))
			fail(c, "a status admin never sends");
		if (rc == 0) {
			if (!early && c->eof)
				fail(c, "a response cut short by the server");
			break;
		}
		if (i < e.n && r.status != e.status[i])
			fail(c, "not the answer to that request");
		at = r.end;
	}
	if (i <= e.n) {
		if (!early && !waiting && e.known && (i != e.n || at != c->ngot))
			fail(c, "an answer missing");
		return;
	}
	/* Answers past what the model knows: only for complete lines, at
	 * most one per header block and a refusal. */
	if (e.known)
		fail(c, "an answer to no request");
	const char *rest = c->sent + e.rest;
	size_t nrest = c->nsent - e.rest;
	if (!memchr(rest, '\n', nrest) && nrest <= ADMIN_MAX_HEADERS)
		fail(c, "an answer before a whole line");
	if ((size_t)(i - e.n) > count_block_ends(rest, nrest) + 1)
		fail(c, "more answers than requests");
}

/* Whether admin may have closed c's connection at the cap or its
 * deadline, answered or not. */
static bool old(const struct client *c)
{
	return ad->ticks - c->born >= ADMIN_GRACE_TICKS;
}

/* Every byte is freed with the connection: an input that leaves the heap
 * as it found it spares libFuzzer a leak check after each run. */
static void client_free(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	free(c->sent);
	free(c->got);
	c->sent = c->got = NULL;
	c->capsent = c->capgot = 0;
}

static void client_close(struct client *c, bool early)
{
	if (c->fd < 0)
		return;
	client_read(c);
	check(c, early || c->fin || old(c), false);
	client_free(c);
}

/* ---- the input ---- */

/* Pieces of requests, for the fuzzer to assemble without spelling them
 * out: the byte's low nibble picks one, the high one repeats it. */
static const char *const pieces[] = {
	"GET /metrics HTTP/1.1\r\n",
	"GET /stats HTTP/1.1\r\n",
	"GET /healthz HTTP/1.0\r\n",
	"HEAD /metrics HTTP/1.1\r\n",
	"GET /hgrm/rx_latency HTTP/1.1\r\n",
	"GET /nowhere?x=1 HTTP/1.1\r\n",
	"POST /metrics HTTP/1.1\r\n",
	"Host: localhost\r\n",
	"Connection: close\r\n",
	"Connection: keep-alive\r\n",
	"Content-Length: 4\r\n",
	"\r\n",
	"GET /hgrm/tick_lateness HTTP/1.0\r\n",
	"GET /healthz HTTP/1.9\r\n",
	"X-Pad: ",
	NULL,			/* 1 KiB header line */
};

static void send_piece(struct client *c, uint8_t b)
{
	static char pad[1024];
	const char *p = pieces[b & 15];
	size_t len;
	if (p) {
		len = strlen(p);
	} else {
		if (!pad[0]) {
			memset(pad, 'a', sizeof(pad));
			memcpy(pad, "X-Pad: ", 7);
			memcpy(pad + sizeof(pad) - 2, "\r\n", 2);
		}
		p = pad;
		len = sizeof(pad);
	}
	for (int r = 0; r <= b >> 4; r++)
		client_send(c, p, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base)
		setup();
	if (size < 1)
		return 0;
	/* The view: healthy, draining, or a loop stalled. */
	draining = (data[0] & 3) == 1;
	hb->loop[0].mono_ns = (data[0] & 3) == 2 ? 1 : (uint64_t)INT64_MAX / 2;
	for (size_t i = 1; i < size; i++) {
		uint8_t op = data[i];
		struct client *c = &clients[(op & 31) % MAX_CLIENTS];
		switch (op >> 5) {
		case 0:		/* bytes as they are: a length, then them */
			if (i + 1 < size) {
				size_t len = data[i + 1] + 1u;
				if (len > size - i - 2)
					len = size - i - 2;
				if (len)
					client_send(c, data + i + 2, len);
				i += 1 + len;
			}
			break;
		case 1:		/* a piece of a request */
			if (i + 1 < size)
				send_piece(c, data[++i]);
			break;
		case 2:
			settle();
			break;
		case 3:		/* one round: the loop may be caught midway */
			event_base_loop(base, EVLOOP_NONBLOCK);
			break;
		case 4:		/* half-close */
			if (c->fd >= 0 && !c->fin) {
				shutdown(c->fd, SHUT_WR);
				c->fin = true;
			}
			break;
		case 5:
			client_close(c, true);
			break;
		case 6:		/* ADMIN_SWEEP_MS passes */
			on_sweep(-1, EV_TIMEOUT, ad);
			break;
		case 7:
			if (c->fd < 0)
				client_connect(c);
			break;
		}
	}
	/* The clients wait for their answers while slots free up... */
	for (int r = 0; r < 4; r++) {
		settle();
		sweep(ad);
	}
	settle();
	for (int k = 0; k < MAX_CLIENTS; k++) {
		struct client *c = &clients[k];
		if (c->fd < 0)
			continue;
		bool waiting = !c->ngot && !c->eof && !accepted(c->id);
		client_read(c);
		check(c, c->fin || old(c), waiting);
		client_free(c);
	}
	/* ... then go, and every connection is let go. */
	for (int r = 0; r < 8 && (ad->nconns || ad->capped); r++) {
		settle();
		sweep(ad);
	}
	if (ad->nconns || ad->counts.conns || ad->capped)
		abort();
	return 0;
}
