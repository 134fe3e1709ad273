/*
 * admin: evhttp request handlers over a snapshot merged per request.
 *
 * Out of file descriptors, the connection waiting to be accepted would make
 * libevent's listener fire again at once, for ever (logging each time). A
 * descriptor held in reserve lets the admin thread take that connection and
 * answer 503 "out of file descriptors": a health check learns why at once
 * instead of timing out. When even the reserve is gone, accepting pauses
 * for ADMIN_PAUSE_MS.
 *
 * A connection must deliver a whole request, and take its answer, within
 * ADMIN_DEADLINE_TICKS sweeps (5 s) of its accept or of its previous
 * answer, or it is shut down: evhttp's own timeout is per read, so a
 * client sending a header byte every few seconds would hold a connection
 * for hours. At most ADMIN_MAX_CONNS connections are open at once; at the
 * cap the oldest one past ADMIN_GRACE_TICKS (a client that has not sent a
 * request that long is no health check) makes room for the next, else
 * the listener stops accepting and the kernel's backlog holds the rest
 * until a sweep finds one old enough: slow clients, however many, cannot
 * keep /healthz waiting more than a few grace periods. Age is counted in
 * sweeps, not read from a clock, so that the same events give the same
 * closes. evhttp (libevent 2.1) has no cap nor a hook
 * when a connection closes, so each connection's bufferevent is made here
 * (evhttp_set_bevcb) and kept with a reference of ours. When evhttp is done
 * with a connection it shuts down its sending side and frees the
 * bufferevent, which clears its callbacks (evhttp keeps its event callback
 * set for as long as it uses one); our reference keeps it, and its
 * descriptor, until a sweep sees the cleared callback and lets it go.
 * Sweeps run at each new connection and every ADMIN_SWEEP_MS while any is
 * open, so a finished connection holds its descriptor that long at most.
 */
#include "admin.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>	/* the request's version: no getter in 2.1 */
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "metrics.h"

#define ADMIN_PAUSE_MS	100
/* A request line and headers beyond this are refused (our requests are a
 * line and a Host:): without it one client holding a header open grows
 * our (locked) memory without bound. */
#define ADMIN_MAX_HEADERS	8192
/* Within CONF_FD_MAIN, the main thread's share of the descriptor budget. */
#define ADMIN_MAX_CONNS		16
#define ADMIN_SWEEP_MS		100
#define ADMIN_DEADLINE_TICKS	50	/* 5 s of sweeps */
#define ADMIN_GRACE_TICKS	5	/* 500 ms: a request's first segment is
					 * long there, even over a WAN */

struct admin_conn {
	struct bufferevent *bev;
	uint64_t since;		/* the tick of its accept or last answer */
	bool closing;		/* an answer saying "Connection: close" is out */
};

struct admin {
	struct evhttp *http;
	struct evhttp_bound_socket *sock;
	struct evconnlistener *listener;
	struct admin_conn conns[ADMIN_MAX_CONNS];
	int nconns;
	bool capped;		/* accepting stopped at the cap */
	struct event *sweeper;
	uint64_t ticks;		/* sweeps by the timer */
	const struct admin_view *v;
	struct stats_snapshot snap;
	struct admin_counts counts;
	int port;
};

/* One per process, as descriptors are: /dev/null, opened at start. */
static int reserve_fd = -1;
/* The open endpoint (the accept error callback gets evhttp's argument). */
static struct admin *open_admin;

static void resume_accepting(evutil_socket_t fd, short what, void *arg)
{
	struct admin *ad = open_admin;
	(void)fd;
	(void)what;
	(void)arg;
	if (ad)
		evconnlistener_enable(ad->listener);
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	static const char reply[] = "HTTP/1.0 503 Service Unavailable\r\n"
		"Content-Type: text/plain\r\nContent-Length: 24\r\n"
		"Connection: close\r\n\r\nout of file descriptors\n";
	int e = EVUTIL_SOCKET_ERROR();
	(void)arg;		/* evhttp's */
	if (open_admin)
		open_admin->counts.no_fd++;
	if ((e == EMFILE || e == ENFILE) && reserve_fd >= 0) {
		close(reserve_fd);
		int fd = accept4(evconnlistener_get_fd(l), NULL, NULL,
				 SOCK_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, reply, sizeof(reply) - 1);
			close(fd);
		}
		reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return;
	}
	/* No reserve, or another failure (ENOBUFS, ENOMEM): do not spin. */
	struct timeval tv = { 0, ADMIN_PAUSE_MS * 1000 };
	evconnlistener_disable(l);
	event_base_once(evconnlistener_get_base(l), -1, EV_TIMEOUT,
			resume_accepting, NULL, &tv);
	if (reserve_fd < 0)
		reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void on_output(struct evbuffer *buf, const struct evbuffer_cb_info *info,
		      void *arg);

/* Let our reference to a connection's bufferevent go, with our watch on
 * its output. */
static void release(struct admin *ad, struct bufferevent *bev)
{
	evbuffer_remove_cb(bufferevent_get_output(bev), on_output, ad);
	bufferevent_decref(bev);
}

/* Shut connection i down and let it go. evhttp's next read or write on
 * it fails, and it frees the connection then, so the descriptor outlives
 * the slot by one round of the loop. */
static void drop(struct admin *ad, int i)
{
	struct bufferevent *bev = ad->conns[i].bev;
	shutdown(bufferevent_getfd(bev), SHUT_RDWR);
	release(ad, bev);
	ad->conns[i] = ad->conns[--ad->nconns];
}

/* evhttp closes after an answer that says "Connection: close", except on
 * a CONNECT's connection, which it keeps reading (a tunnel's) whatever
 * the header says; and its own refusals (413 for a body, 501) go out
 * before handle() sees the request. So what leaves is watched: once such
 * an answer has gone to the socket, the connection is shut down, and
 * nothing after it is read as a request. Header lines are added one at a
 * time; bodies (ours, evhttp's error pages) break lines with "\n" alone. */
static void on_output(struct evbuffer *buf, const struct evbuffer_cb_info *info,
		      void *arg)
{
	static const char close_hdr[] = "\r\nConnection: close\r\n";
	struct admin *ad = arg;
	for (int i = 0; i < ad->nconns; i++) {
		struct admin_conn *c = &ad->conns[i];
		if (bufferevent_get_output(c->bev) != buf)
			continue;
		size_t len = evbuffer_get_length(buf);
		if (info->n_added && !c->closing) {
			/* The added bytes and the line end before them. */
			size_t back = info->n_added + 2 > len ? len : info->n_added + 2;
			struct evbuffer_ptr from;
			evbuffer_ptr_set(buf, &from, len - back, EVBUFFER_PTR_SET);
			c->closing = evbuffer_search(buf, close_hdr, sizeof(close_hdr) - 1,
						     &from).pos >= 0;
		}
		if (c->closing && info->n_deleted && len == 0)
			shutdown(bufferevent_getfd(c->bev), SHUT_RDWR);
		return;
	}
}

/* At the cap, the oldest connection past its grace makes room. */
static void make_room(struct admin *ad)
{
	if (ad->nconns < ADMIN_MAX_CONNS)
		return;
	int old = 0;
	for (int i = 1; i < ad->nconns; i++)
		if (ad->conns[i].since < ad->conns[old].since)
			old = i;
	if (ad->ticks - ad->conns[old].since >= ADMIN_GRACE_TICKS) {
		drop(ad, old);
		ad->counts.evicted++;
	}
}

/* Drop our reference to every connection evhttp has freed (closing its
 * descriptor) and shut down those past their deadline, make room at the
 * cap, and accept again when below it. */
static void sweep(struct admin *ad)
{
	int kept = 0;
	for (int i = 0; i < ad->nconns; i++) {
		bufferevent_event_cb in_use;
		bufferevent_getcb(ad->conns[i].bev, NULL, NULL, &in_use, NULL);
		if (in_use && ad->ticks - ad->conns[i].since >= ADMIN_DEADLINE_TICKS) {
			shutdown(bufferevent_getfd(ad->conns[i].bev), SHUT_RDWR);
			ad->counts.timed_out++;
			in_use = NULL;
		}
		if (!in_use)
			release(ad, ad->conns[i].bev);
		else
			ad->conns[kept++] = ad->conns[i];
	}
	ad->nconns = kept;
	make_room(ad);
	ad->counts.conns = (uint64_t)ad->nconns;
	if (ad->capped && ad->nconns < ADMIN_MAX_CONNS) {
		ad->capped = false;
		evconnlistener_enable(ad->listener);
	}
	if (ad->nconns == 0)
		event_del(ad->sweeper);
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct admin *ad = arg;
	(void)fd;
	(void)what;
	ad->ticks++;
	sweep(ad);
}

/* evhttp accepted a connection: its bufferevent, counted. evhttp sets its
 * callbacks and descriptor right after this returns, before any sweep can
 * run. */
static struct bufferevent *new_conn(struct event_base *base, void *arg)
{
	struct admin *ad = arg;
	sweep(ad);
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev || ad->nconns == ADMIN_MAX_CONNS)
		return bev;	/* not counted: evhttp copes, or it was the last */
	bufferevent_incref(bev);
	evbuffer_add_cb(bufferevent_get_output(bev), on_output, ad);
	ad->conns[ad->nconns++] = (struct admin_conn){ bev, ad->ticks, false };
	if (ad->nconns == 1) {
		struct timeval tv = { 0, ADMIN_SWEEP_MS * 1000 };
		event_add(ad->sweeper, &tv);
	}
	make_room(ad);
	ad->counts.conns = (uint64_t)ad->nconns;
	if (ad->nconns == ADMIN_MAX_CONNS) {
		ad->capped = true;
		ad->counts.capped++;
		evconnlistener_disable(ad->listener);
	}
	return bev;
}

int admin_healthy(const struct admin_view *v, char *why, size_t whylen)
{
	if (*v->draining) {
		snprintf(why, whylen, "draining\n");
		return 0;
	}
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	int64_t limit = 1000000000LL + (int64_t)v->tick_us * 1000;
	for (int i = 0; i < v->n; i++) {
		int64_t last = (int64_t)__atomic_load_n(&v->hb->loop[i].mono_ns,
							__ATOMIC_RELAXED);
		if (last == 0)
			last = v->start_ns;
		if (now - last > limit) {
			snprintf(why, whylen, "loop %d (CPU %d) made no progress "
				 "for %.0f ms\n", i, v->hb->loop[i].cpu,
				 (double)(now - last) / 1e6);
			return 0;
		}
	}
	return 1;
}

int admin_files_present(const struct admin_view *v, char *why,
			size_t whylen)
{
	for (int i = 0; v->udp_files && i < *v->nudp_labels; i++)
		if (!sockfile_present(&v->udp_files[i])) {
			snprintf(why, whylen, "%s: the socket file relay made "
				 "there was removed or replaced (SIGHUP binds "
				 "it again)\n", v->udp_labels[i].text);
			return 0;
		}
	return 1;
}

json_t *admin_json_parts(const struct admin_view *v)
{
	json_t *l = json_object(), *u = json_object();
	stats_json_parts(l, u, v->stats, v->n, v->udp_labels, *v->nudp_labels,
			 v->udp_upstreams, *v->nudp_upstreams);
	if (v->tcp)
		tcp_json(l, u, v->tcp, v->n, v->tcp_labels, *v->ntcp_labels,
			 *v->tcp_upstream ? v->tcp_upstream : NULL);
	return json_pack("{s:o, s:o}", "listeners", l, "upstreams", u);
}

/* Send what a FILE* writer produced (open_memstream) as the body; to a HEAD
 * request only its length, as evhttp (2.1) would send the body all the
 * same and a client keeping the connection would read it as the next
 * response. */
static void reply(struct evhttp_request *req, int code, const char *type,
		  const char *body, size_t len)
{
	struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
	struct evbuffer *out = evbuffer_new();
	if (!out) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		char n[24];
		snprintf(n, sizeof(n), "%zu", len);
		evhttp_add_header(headers, "Content-Length", n);
	} else {
		evbuffer_add(out, body, len);
	}
	evhttp_add_header(headers, "Content-Type", type);
	evhttp_send_reply(req, code, code == 200 ? "OK" : code == 404 ?
			  "Not Found" : code == 400 ? "Bad Request" :
			  code == 501 ? "Not Implemented" :
			  code == 505 ? "HTTP Version Not Supported" :
			  "Unavailable", out);
	evbuffer_free(out);
}

/* The refusal is out: shut the connection down ourselves, as on_output()
 * does for the connections it watches (a CONNECT's would stay open), for
 * one past the cap, which it does not watch. */
static void refused_sent(struct evhttp_request *req, void *arg)
{
	(void)arg;
	struct bufferevent *bev = evhttp_connection_get_bufferevent(
		evhttp_request_get_connection(req));
	evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

/* Refuse a request evhttp let through, and close the connection, so that
 * nothing after it is read as a request. */
static void refuse(struct evhttp_request *req, int code, const char *why)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Connection",
			  "close");
	evhttp_request_set_on_complete_cb(req, refused_sent, NULL);
	reply(req, code, "text/plain; charset=utf-8", why, strlen(why));
}

/* Why the headers may frame a body, or NULL when they cannot. evhttp
 * refuses a GET's body (413) but does not read HEAD's, so a body would
 * be taken for the next request: answered, it smuggles a response past a
 * proxy that knew the body for a body. And evhttp looks no further than
 * the first Content-Length (a second one, or "0" then "40", goes unseen)
 * and keeps a name's blanks before its colon ("Transfer-Encoding :
 * chunked" is another header to it), where a proxy may take the last
 * length or the trimmed name. RFC 9112 has a server refuse both (5.1,
 * 6.3), so every header is looked at here, not the first of a name. */
static const char *framing_refused(const struct evkeyvalq *in)
{
	const struct evkeyval *h;
	int lengths = 0;
	TAILQ_FOREACH(h, in, next) {
		if (h->key[strcspn(h->key, " \t")])
			return "whitespace in a header name\n";
		if (strcasecmp(h->key, "Transfer-Encoding") == 0)
			return "no request body on GET or HEAD\n";
		if (strcasecmp(h->key, "Content-Length") != 0)
			continue;
		if (lengths++)
			return "Content-Length given more than once\n";
		if (strcmp(h->value, "0") != 0)
			return "no request body on GET or HEAD\n";
	}
	return NULL;
}

/* What evhttp lets through that a proxy in front of us would read another
 * way: 0 if none (the request is answered), else the refusal sent. */
static int refused(struct evhttp_request *req)
{
	/* evhttp answers in whatever version the request names ("HTTP/1.9
	 * 200 OK"), which no client can rely on. */
	bool version = req->major == 1 && (req->minor == 0 || req->minor == 1);
	if (!version) {
		req->major = 1;
		req->minor = 1;
	}
	/* evhttp refuses the other methods itself (501), but CONNECT's
	 * refusal would leave the connection open (refused_sent()). */
	if (evhttp_request_get_command(req) == EVHTTP_REQ_CONNECT) {
		refuse(req, 501, "only GET and HEAD here\n");
		return 1;
	}
	if (!version) {
		refuse(req, 505, "only HTTP/1.0 and HTTP/1.1 here\n");
		return 1;
	}
	const char *framing = framing_refused(
		evhttp_request_get_input_headers(req));
	if (framing) {
		refuse(req, 400, framing);
		return 1;
	}
	return 0;
}

/* A request was read: the connection's next deadline counts from now. */
static void answered(struct admin *ad, struct evhttp_request *req)
{
	struct bufferevent *bev = evhttp_connection_get_bufferevent(
		evhttp_request_get_connection(req));
	for (int i = 0; i < ad->nconns; i++)
		if (ad->conns[i].bev == bev)
			ad->conns[i].since = ad->ticks;
}

static void handle(struct evhttp_request *req, void *arg)
{
	struct admin *ad = arg;
	const struct admin_view *v = ad->v;
	answered(ad, req);
	if (refused(req))
		return;
	const char *uri = evhttp_request_get_uri(req);
	struct evhttp_uri *parsed = evhttp_uri_parse(uri);
	const char *path = parsed ? evhttp_uri_get_path(parsed) : NULL;
	if (!path) {
		evhttp_send_error(req, 400, NULL);
		if (parsed)
			evhttp_uri_free(parsed);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		evhttp_send_error(req, 500, NULL);
		evhttp_uri_free(parsed);
		return;
	}
	int code = 200;
	const char *type = "text/plain; charset=utf-8";
	if (strcmp(path, "/healthz") == 0) {
		char why[256];
		if (admin_healthy(v, why, sizeof(why)) &&
		    admin_files_present(v, why, sizeof(why)))
			fputs("ok\n", f);
		else {
			fputs(why, f);
			code = 503;
		}
	} else {
		stats_snapshot_take(&ad->snap, v->stats, v->n);
		double up = (double)(clock_ns(CLOCK_MONOTONIC) - v->start_ns) / 1e9;
		const struct hist *h = NULL;
		if (strcmp(path, "/metrics") == 0) {
			type = "text/plain; version=0.0.4; charset=utf-8";
			metrics_write(f, v, &ad->snap, &ad->counts);
		} else if (strcmp(path, "/stats") == 0) {
			char *json = stats_json(&ad->snap, v->sched, up,
						admin_json_parts(v));
			type = "application/json";
			if (json)
				fprintf(f, "%s\n", json);
			free(json);
		} else if (strcmp(path, "/hgrm/rx_latency") == 0) {
			h = &ad->snap.rx;
		} else if (strcmp(path, "/hgrm/wake_latency") == 0) {
			h = &ad->snap.wake;
		} else if (strcmp(path, "/hgrm/tick_lateness") == 0) {
			h = &ad->snap.tick;
		} else {
			code = 404;
			fputs("not found: try /metrics, /stats, /healthz, "
			      "/hgrm/rx_latency, /hgrm/wake_latency, "
			      "/hgrm/tick_lateness\n", f);
		}
		if (h)
			hist_write_hgrm(h, f, 1000.0, 5);
	}
	fclose(f);
	reply(req, code, type, buf, len);
	free(buf);
	evhttp_uri_free(parsed);
}

struct admin *admin_serve(struct event_base *base, int fd,
			  const struct admin_view *v, char *err, size_t errlen)
{
	struct admin *ad = calloc(1, sizeof(*ad));
	if (!ad || stats_snapshot_init(&ad->snap) < 0) {
		snprintf(err, errlen, "admin: out of memory");
		free(ad);
		close(fd);
		return NULL;
	}
	ad->v = v;
	ad->http = evhttp_new(base);
	ad->sock = ad->http ? evhttp_accept_socket_with_handle(ad->http, fd) :
			      NULL;
	if (!ad->sock) {
		snprintf(err, errlen, "admin: evhttp refused the socket");
		close(fd);
		admin_close(ad);
		return NULL;
	}
	ad->listener = evhttp_bound_socket_get_listener(ad->sock);
	evconnlistener_set_error_cb(ad->listener, on_accept_error);
	ad->sweeper = event_new(base, -1, EV_PERSIST, on_sweep, ad);
	if (!ad->sweeper) {
		snprintf(err, errlen, "admin: out of memory");
		admin_close(ad);
		return NULL;
	}
	evhttp_set_bevcb(ad->http, new_conn, ad);
	open_admin = ad;
	if (reserve_fd < 0)
		reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	evhttp_set_gencb(ad->http, handle, ad);
	/* evhttp refuses the rest before handle() sees them, and closes:
	 * another method 501 (CONNECT is refused in handle()), a body 413,
	 * a malformed request or one whose line and headers pass the limit
	 * 400. */
	evhttp_set_allowed_methods(ad->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_CONNECT);
	evhttp_set_max_headers_size(ad->http, ADMIN_MAX_HEADERS);
	evhttp_set_max_body_size(ad->http, 0);
	/* Per read: for a connection past the cap, which no sweep sees. */
	evhttp_set_timeout(ad->http, ADMIN_DEADLINE_TICKS * ADMIN_SWEEP_MS / 1000);
	return ad;
}

struct admin *admin_open(struct event_base *base, const struct addr *a,
			 const struct admin_view *v, char *err, size_t errlen)
{
	char text[ADDR_TEXT_MAX];
	addr_format(a, text, sizeof(text));
	int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (const struct sockaddr *)&a->sa, a->salen) < 0 ||
	    listen(fd, 64) < 0) {
		int e = errno;
		snprintf(err, errlen, "admin %s: cannot listen: %s", text,
			 strerror(e));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	struct admin *ad = admin_serve(base, fd, v, err, errlen);
	if (ad)
		ad->port = ntohs(ss.ss_family == AF_INET ?
				 ((struct sockaddr_in *)&ss)->sin_port :
				 ((struct sockaddr_in6 *)&ss)->sin6_port);
	return ad;
}

int admin_port(const struct admin *ad)
{
	return ad->port;
}

void admin_close(struct admin *ad)
{
	if (!ad)
		return;
	open_admin = NULL;
	if (ad->http)
		evhttp_free(ad->http);
	/* evhttp_free closed every connection: only our references are left. */
	for (int i = 0; i < ad->nconns; i++)
		release(ad, ad->conns[i].bev);
	if (ad->sweeper)
		event_free(ad->sweeper);
	if (reserve_fd >= 0)
		close(reserve_fd);
	reserve_fd = -1;
	stats_snapshot_free(&ad->snap);
	free(ad);
}
