/*
 * control: the listener registry, reload on its own thread, drain (see
 * control.h for why reload has a thread).
 */
#include "control.h"

#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sysexits.h>
#include <unistd.h>

/* How long a loop may take to apply a reload before it counts as stalled. */
#define RELOAD_WAIT_MS	5000

int control_load_conf(const struct control *ctl, struct conf *c, char *err,
		      size_t errlen)
{
	conf_defaults(c);
	if (ctl->config_path &&
	    conf_load_file(c, ctl->config_path, err, errlen) < 0)
		return EX_CONFIG;
	for (int i = 0; i < ctl->nflags; i++) {
		char why[600];
		if (conf_set(c, ctl->flags[i].key, ctl->flags[i].value,
			     CONF_FLAG, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--%s", why);
			for (char *p = err + 2; *p && *p != ':' && *p != ' '; p++)
				if (*p == '_')
					*p = '-';
			return EX_USAGE;
		}
	}
	if (conf_validate(c, &ctl->cpus_at_start, err, errlen) < 0)
		return ctl->config_path ? EX_CONFIG : EX_USAGE;
	return 0;
}

void control_describe(const struct conf *c, FILE *out)
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
static int open_everywhere(const struct conf *c, const struct addr *a,
			   int *fds, char *err, size_t errlen)
{
	for (int i = 0; i < c->ncpus; i++) {
		fds[i] = a->kind == ADDR_UDP ?
			udp_open_listener(a, c->socket_buffer, c->udp_gro, err,
					  errlen) :
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

int control_make_tls(const struct conf *c, struct tls **server,
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
		char *save;
		for (char *line = strtok_r(warn, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
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
static void listener_labels(struct control *ctl)
{
	ctl->ntcp_labels = ctl->nudp_labels = 0;
	for (int i = 0; i < ctl->nreg; i++) {
		const struct control_listener *g = &ctl->reg[i];
		if (g->a.kind == ADDR_UDP) {
			struct stats_label *l =
				&ctl->udp_labels[ctl->nudp_labels++];
			l->id = g->id;
			addr_format(&g->a, l->text, sizeof(l->text));
		} else {
			struct tcp_label *l =
				&ctl->tcp_labels[ctl->ntcp_labels++];
			l->id = g->id;
			addr_format(&g->a, l->text, sizeof(l->text));
		}
	}
	ctl->tcp_upstream[0] = 0;
	if (ctl->conf.has_tcp_upstream)
		addr_format(&ctl->conf.tcp_upstream, ctl->tcp_upstream,
			    sizeof(ctl->tcp_upstream));
}

/* The id the loops count the UDP upstream of c under: the one it has while
 * it is still shown, else the next. Reads only what the main thread changes
 * between reloads. */
static int upstream_pick(const struct control *ctl, const struct conf *c)
{
	if (!c->has_upstream)
		return ctl->up_id;
	char text[ADDR_TEXT_MAX];
	addr_format(&c->upstream, text, sizeof(text));
	for (int i = 0; i < ctl->nudp_up; i++)
		if (strcmp(ctl->udp_up[i].text, text) == 0)
			return ctl->udp_up[i].id;
	return ctl->next_up_id;
}

/* Make id, picked for c, the current upstream; a new one takes the slot of
 * the oldest shown. */
static void upstream_show(struct control *ctl, const struct conf *c, int id)
{
	ctl->up_id = id;
	if (!c->has_upstream || id < ctl->next_up_id)
		return;
	ctl->next_up_id = id + 1;
	struct stats_label *l = &ctl->udp_up[id % STATS_MAX_UPSTREAM];
	l->id = id;
	addr_format(&c->upstream, l->text, sizeof(l->text));
	if (ctl->nudp_up < STATS_MAX_UPSTREAM)
		ctl->nudp_up++;
}

int control_listen(struct control *ctl, char *err, size_t errlen)
{
	const struct conf *c = &ctl->conf;
	for (int j = 0; j < c->nlisten; j++) {
		int col[CONF_MAX_CPUS];
		if (open_everywhere(c, &c->listen[j], col, err, errlen) < 0)
			return EX_UNAVAILABLE;
		for (int i = 0; i < c->ncpus; i++)
			ctl->start_fds[i][j] = col[i];
		ctl->reg[j].a = c->listen[j];
		ctl->reg[j].id = ctl->next_id++;
	}
	ctl->nreg = c->nlisten;
	listener_labels(ctl);
	upstream_show(ctl, c, upstream_pick(ctl, c));	/* 0 */
	return 0;
}

int control_init_loops(struct control *ctl, struct heartbeat_file *hb,
		       int64_t start_ns, char *err, size_t errlen)
{
	const struct conf *c = &ctl->conf;
	int ids[CONF_MAX_LISTEN];
	enum addr_kind kinds[CONF_MAX_LISTEN];
	for (int j = 0; j < ctl->nreg; j++) {
		ids[j] = ctl->reg[j].id;
		kinds[j] = ctl->reg[j].a.kind;
	}
	struct tcp_settings streams;
	stream_settings(c, ctl->tls_server, ctl->tls_client, &streams);
	ctl->nw = c->ncpus;
	ctl->w = calloc((size_t)ctl->nw, sizeof(*ctl->w));
	ctl->stats = calloc((size_t)ctl->nw, sizeof(*ctl->stats));
	ctl->tcp = calloc((size_t)ctl->nw, sizeof(*ctl->tcp));
	if (!ctl->w || !ctl->stats || !ctl->tcp) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < ctl->nw; i++) {
		if (worker_init(&ctl->w[i], i, c->cpus[i], c, &streams, ids,
				ctl->start_fds[i], kinds, ctl->nreg,
				&hb->loop[i], start_ns, err, errlen) < 0)
			return -1;
		ctl->stats[i] = &ctl->w[i].stats;
		ctl->tcp[i] = &ctl->w[i].tcp.stats;
	}
	return 0;
}

/* The reload thread: read the file, make the contexts, open the new
 * listeners and hand the loops their commands; into ctl->next. Touches
 * nothing the main thread reads. */
static void reload_prepare(struct control *ctl)
{
	struct control_reload *n = &ctl->next;
	struct conf *nc = &n->conf;
	char err[1024], fixed[512];
	memset(n, 0, sizeof(*n));
	if (control_load_conf(ctl, nc, err, sizeof(err)) ||
	    control_make_tls(nc, &n->tls_server, &n->tls_client, err,
			     sizeof(err))) {
		fprintf(stderr, "relay: reload failed, keeping the running "
			"configuration: %s\n", err);
		return;
	}
	conf_keep_fixed(nc, &ctl->conf, fixed, sizeof(fixed));
	if (fixed[0])
		fprintf(stderr, "relay: reload: %s cannot change without a "
			"restart; keeping the running value\n", fixed);

	struct worker_cmd cmd = { .upstream = nc->upstream,
				  .flow_idle_ms = nc->flow_idle_ms,
				  .flow_wait_ms = nc->flow_wait_ms,
				  .drain_ms = nc->drain_ms };
	stream_settings(nc, n->tls_server, n->tls_client, &cmd.tcp);
	int fds[CONF_MAX_LISTEN][CONF_MAX_CPUS];
	n->next_id = ctl->next_id;
	for (int i = 0; i < ctl->nreg; i++) {
		bool still = false;
		for (int j = 0; j < nc->nlisten; j++)
			still |= addr_equal(&ctl->reg[i].a, &nc->listen[j]);
		if (still)
			n->reg[n->nreg++] = ctl->reg[i];
		else
			cmd.remove_id[cmd.nremove++] = ctl->reg[i].id;
	}
	for (int j = 0; j < nc->nlisten; j++) {
		bool have = false;
		for (int i = 0; i < ctl->nreg; i++)
			have |= addr_equal(&ctl->reg[i].a, &nc->listen[j]);
		if (have)
			continue;
		if (open_everywhere(nc, &nc->listen[j], fds[cmd.nadd], err,
				    sizeof(err)) < 0) {
			fprintf(stderr, "relay: reload failed, keeping the "
				"running configuration: %s\n", err);
			for (int k = 0; k < cmd.nadd; k++)
				for (int i = 0; i < ctl->nw; i++)
					close(fds[k][i]);
			tls_free(n->tls_server);
			tls_free(n->tls_client);
			return;
		}
		cmd.add_id[cmd.nadd] = n->next_id++;
		cmd.add_kind[cmd.nadd] = nc->listen[j].kind;
		n->reg[n->nreg].a = nc->listen[j];
		n->reg[n->nreg++].id = cmd.add_id[cmd.nadd];
		cmd.nadd++;
	}
	cmd.upstream_id = n->up_id = upstream_pick(ctl, nc);
	n->nadd = cmd.nadd;
	n->nremove = cmd.nremove;
	n->answered = true;
	for (int i = 0; i < ctl->nw; i++) {
		struct worker_cmd *wc = malloc(sizeof(*wc));
		if (!wc) {
			fprintf(stderr, "relay: reload: out of memory\n");
			n->answered = false;
			break;
		}
		*wc = cmd;
		for (int k = 0; k < cmd.nadd; k++)
			wc->add_fd[k] = fds[k][i];
		if (worker_command(&ctl->w[i], wc, RELOAD_WAIT_MS) < 0) {
			fprintf(stderr, "relay: reload: loop %d did not answer "
				"within %d s (stalled?)\n", i,
				RELOAD_WAIT_MS / 1000);
			n->answered = false;
		} else {
			free(wc);
		}
	}
	n->ok = true;
}

static void *reload_main(void *arg)
{
	struct control *ctl = arg;
	reload_prepare(ctl);
	uint64_t one = 1;
	(void)!write(ctl->reload_efd, &one, sizeof(one));
	return NULL;
}

/* On the main thread, once the reload thread is done: join it and adopt
 * what it prepared. */
static void reload_finish(struct control *ctl)
{
	uint64_t v;
	pthread_join(ctl->reload_thread, NULL);
	(void)!read(ctl->reload_efd, &v, sizeof(v));
	ctl->reloading = false;
	struct control_reload *n = &ctl->next;
	if (!n->ok)
		return;
	/* The loops accept with the new contexts now; the old ones go with
	 * the last connection made from them. A loop that has not answered
	 * may still use them: then they stay. */
	if (n->answered) {
		tls_free(ctl->tls_server);
		tls_free(ctl->tls_client);
	}
	ctl->tls_server = n->tls_server;
	ctl->tls_client = n->tls_client;
	memcpy(ctl->reg, n->reg, sizeof(n->reg));
	ctl->nreg = n->nreg;
	ctl->next_id = n->next_id;
	ctl->conf = n->conf;
	listener_labels(ctl);
	upstream_show(ctl, &ctl->conf, n->up_id);
	fprintf(stderr, "relay: reloaded (%d added, %d removed): ", n->nadd,
		n->nremove);
	control_describe(&ctl->conf, stderr);
}

static void on_reload_done(evutil_socket_t fd, short what, void *arg)
{
	struct control *ctl = arg;
	(void)fd;
	(void)what;
	reload_finish(ctl);
	if (ctl->reload_again) {
		ctl->reload_again = false;
		control_reload(ctl);
	}
}

int control_attach(struct control *ctl, struct event_base *base)
{
	ctl->reload_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ctl->reload_efd < 0)
		return -1;
	ctl->reload_ev = event_new(base, ctl->reload_efd, EV_READ | EV_PERSIST,
				   on_reload_done, ctl);
	return ctl->reload_ev && event_add(ctl->reload_ev, NULL) == 0 ? 0 : -1;
}

void control_reload(struct control *ctl)
{
	if (ctl->reloading) {
		fprintf(stderr, "relay: reload: one is under way; the file is "
			"read again when it is done\n");
		ctl->reload_again = true;
		return;
	}
	/* Its signals stay blocked (inherited): only the signalfd sees them. */
	int e = pthread_create(&ctl->reload_thread, NULL, reload_main, ctl);
	if (e) {
		fprintf(stderr, "relay: reload failed, keeping the running "
			"configuration: cannot start its thread: %s\n",
			strerror(e));
		return;
	}
	ctl->reloading = true;
}

int control_drain(struct control *ctl)
{
	if (ctl->reloading)
		reload_finish(ctl);
	int rc = 0;
	for (int i = 0; i < ctl->nw; i++) {
		struct worker_cmd *wc = calloc(1, sizeof(*wc));
		if (!wc)
			return EX_SOFTWARE;
		wc->drain = true;
		wc->upstream = ctl->conf.upstream;
		wc->upstream_id = ctl->up_id;
		wc->flow_idle_ms = ctl->conf.flow_idle_ms;
		wc->flow_wait_ms = ctl->conf.flow_wait_ms;
		wc->drain_ms = ctl->conf.drain_ms;
		stream_settings(&ctl->conf, ctl->tls_server, ctl->tls_client,
				&wc->tcp);
		if (worker_command(&ctl->w[i], wc, ctl->conf.drain_ms +
				   RELOAD_WAIT_MS) < 0) {
			fprintf(stderr, "relay: loop %d did not stop (stalled?)\n",
				i);
			rc = EX_SOFTWARE;
			continue;
		}
		free(wc);
	}
	if (rc)
		return rc;
	for (int i = 0; i < ctl->nw; i++)
		worker_join(&ctl->w[i]);
	return 0;
}

void control_free(struct control *ctl)
{
	for (int i = 0; i < ctl->nw; i++)
		stats_free(&ctl->w[i].stats);
	if (ctl->reload_ev)
		event_free(ctl->reload_ev);
	if (ctl->reload_efd >= 0)
		close(ctl->reload_efd);
	free(ctl->w);
	free(ctl->stats);
	free(ctl->tcp);
	tls_free(ctl->tls_server);
	tls_free(ctl->tls_client);
}
