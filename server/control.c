/*
 * control: the listener registry, reload on its own thread, drain (see
 * control.h for why reload has a thread).
 */
#include "control.h"

#include <errno.h>
#include <event2/event.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sysexits.h>
#include <unistd.h>

#include "clock.h"

/* How long a loop may take to apply a reload before it counts as stalled. */
#define RELOAD_WAIT_MS	5000

/* The reload thread's stack (see control_reload). */
#define RELOAD_STACK	(2 * 1024 * 1024)

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

/* Open one socket of listener a for a loop, its file (unix:///PATH) into
 * file. Returns it, or -1 with err. */
static int open_listener(const struct conf *c, const struct addr *a,
			 struct sockfile *file, char *err, size_t errlen)
{
	memset(file, 0, sizeof(*file));
	if (addr_socktype(a->kind) == SOCK_STREAM)
		return tcp_open_listener(a, err, errlen);
	const struct udp_listen l = {
		.socket_buffer = c->socket_buffer, .gro = c->udp_gro,
		.max_datagram = c->max_datagram, .batch = c->batch,
		.perm = { .mode = c->unix_mode, .gid = c->unix_gid },
	};
	char warn[512];
	int fd = udp_open_listener(a, &l, file, warn, sizeof(warn), err, errlen);
	if (fd >= 0 && warn[0])
		fprintf(stderr, "relay: warning: %s\n", warn);
	return fd;
}

/* Open listener a on every loop into fds[] (a unix:// one has one loop,
 * and its file goes into file); all or nothing. */
static int open_everywhere(const struct conf *c, const struct addr *a,
			   int *fds, struct sockfile *file, char *err,
			   size_t errlen)
{
	for (int i = 0; i < c->ncpus; i++) {
		fds[i] = open_listener(c, a, file, err, errlen);
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
		if (addr_socktype(g->a.kind) == SOCK_DGRAM) {
			ctl->udp_files[ctl->nudp_labels] = g->file;
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
		if (open_everywhere(c, &c->listen[j], col, &ctl->reg[j].file,
				    err, errlen) < 0)
			return EX_UNAVAILABLE;
		for (int i = 0; i < c->ncpus; i++)
			ctl->start_fds[i][j] = col[i];
		ctl->reg[j].a = c->listen[j];
		ctl->reg[j].id = ctl->next_id++;
		ctl->nreg = j + 1;	/* its file is removed at exit */
	}
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
		memcpy(ctl->loops[i].reg, ctl->reg, sizeof(ctl->reg));
		ctl->loops[i].nreg = ctl->nreg;
	}
	watch_configure(&ctl->watch, c, ctl->stats, ctl->nw);
	return 0;
}

/* The index of the listener at a (with id, unless id < 0) in reg[n], or -1. */
static int find_listener(const struct control_listener *reg, int n,
			 const struct addr *a, int id)
{
	for (int i = 0; i < n; i++)
		if (addr_equal(&reg[i].a, a) && (id < 0 || reg[i].id == id))
			return i;
	return -1;
}

/* The listener at a in the configuration or on a loop a reload did not
 * reach, or NULL. */
static const struct control_listener *running_listener(
	const struct control *ctl, const struct addr *a)
{
	int k = find_listener(ctl->reg, ctl->nreg, a, -1);
	if (k >= 0)
		return &ctl->reg[k];
	for (int i = 0; i < ctl->nw; i++) {
		const struct control_loop *lp = &ctl->loops[i];
		if ((k = find_listener(lp->reg, lp->nreg, a, -1)) >= 0)
			return &lp->reg[k];
	}
	return NULL;
}

/* Listener a of the reload n as n->reg[j]: under the id it runs under,
 * with its file; or, new, or a unix:///PATH whose file someone removed
 * or replaced, under a new id: the loop then closes the old socket and
 * takes one bound anew. Returns whether it is one the running
 * configuration lacks. */
static bool listener_take(const struct control *ctl, struct control_reload *n,
			  int j, const struct addr *a)
{
	const struct control_listener *run = running_listener(ctl, a);
	struct control_listener *g = &n->reg[j];
	g->a = *a;
	memset(&g->file, 0, sizeof(g->file));
	if (run && !sockfile_present(&run->file)) {
		fprintf(stderr, "relay: reload: %s: the socket file relay made "
			"there was removed or replaced; binding it again\n",
			run->file.path);
		run = NULL;
	}
	if (!run) {
		g->id = n->next_id++;
		return true;
	}
	g->id = run->id;
	g->file = run->file;
	return find_listener(ctl->reg, ctl->nreg, a, run->id) < 0;
}

/* A command of its own for a loop: proto, with references to its TLS
 * contexts. NULL when out of memory. */
static struct worker_cmd *cmd_new(const struct worker_cmd *proto)
{
	struct worker_cmd *wc = malloc(sizeof(*wc));
	if (!wc)
		return NULL;
	*wc = *proto;
	tls_ref(wc->tcp.server_tls);
	tls_ref(wc->tcp.upstream_tls);
	return wc;
}

/* Loop i's command to go from the listeners it has to n's, with the
 * sockets it lacks opened (the files they make noted in n). NULL with err
 * filled when one cannot be. */
static struct worker_cmd *loop_cmd(const struct control *ctl, int i,
				   struct control_reload *n,
				   const struct worker_cmd *proto, char *err,
				   size_t errlen)
{
	const struct control_loop *lp = &ctl->loops[i];
	struct worker_cmd *wc = cmd_new(proto);
	if (!wc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (int j = 0; j < lp->nreg; j++)
		if (find_listener(n->reg, n->nreg, &lp->reg[j].a,
				  lp->reg[j].id) < 0)
			wc->remove_id[wc->nremove++] = lp->reg[j].id;
	for (int j = 0; j < n->nreg; j++) {
		struct control_listener *g = &n->reg[j];
		if (find_listener(lp->reg, lp->nreg, &g->a, g->id) >= 0)
			continue;
		struct sockfile file;
		int fd = open_listener(&n->conf, &g->a, &file, err, errlen);
		if (fd < 0) {
			worker_cmd_release(wc);
			return NULL;
		}
		if (file.path[0]) {
			g->file = file;
			n->made[j] = true;
		}
		wc->add_id[wc->nadd] = g->id;
		wc->add_kind[wc->nadd] = g->a.kind;
		wc->add_fd[wc->nadd++] = fd;
	}
	return wc;
}

/* Hand loop i its command and record what it has now in n->loops[i]:
 * n's listeners but those it could not add, or, when it did not take
 * the command, what it had (and the command is released here). */
static void loop_reload(struct control *ctl, int i, struct control_reload *n,
			struct worker_cmd *wc)
{
	struct control_loop *next = &n->loops[i];
	enum worker_fate fate = worker_command(&ctl->w[i], wc, RELOAD_WAIT_MS);
	if (fate == WORKER_NOT_TAKEN) {
		worker_cmd_release(wc);
		*next = ctl->loops[i];
		next->behind = true;
		fprintf(stderr, "relay: reload: loop %d (CPU %d) did not take "
			"it within %d ms (stalled?); it keeps its previous "
			"configuration until a reload reaches it\n", i,
			ctl->w[i].cpu, RELOAD_WAIT_MS);
		return;
	}
	next->nreg = 0;
	next->behind = false;
	for (int j = 0; j < n->nreg; j++) {
		bool failed = false;
		for (int k = 0; fate == WORKER_APPLIED && k < wc->nadd; k++)
			failed |= wc->add_id[k] == n->reg[j].id &&
				  wc->add_fd[k] < 0;
		if (!failed)
			next->reg[next->nreg++] = n->reg[j];
	}
	if (fate == WORKER_APPLIED)
		free(wc);
	else	/* the loop frees it; it has no choice but to apply it */
		fprintf(stderr, "relay: reload: loop %d (CPU %d) took it but "
			"had not applied it within %d ms; it applies it when it "
			"runs again\n", i, ctl->w[i].cpu, RELOAD_WAIT_MS);
	if (next->nreg < n->nreg)
		fprintf(stderr, "relay: reload: loop %d (CPU %d) could not "
			"watch %d of the new listeners\n", i, ctl->w[i].cpu,
			n->nreg - next->nreg);
}

/* The reload thread: read the file, make the contexts, open the sockets
 * each loop lacks and hand the loops their commands; into ctl->next.
 * Touches nothing the main thread reads. */
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

	n->next_id = ctl->next_id;
	for (int j = 0; j < nc->nlisten; j++)
		n->nadd += listener_take(ctl, n, j, &nc->listen[j]);
	n->nreg = nc->nlisten;
	n->nremove = ctl->nreg + n->nadd - n->nreg;
	struct worker_cmd proto = { .upstream = nc->upstream,
				    .flow_idle_ms = nc->flow_idle_ms,
				    .flow_wait_ms = nc->flow_wait_ms,
				    .drain_ms = nc->drain_ms,
				    .unix_allow = nc->unix_allow };
	stream_settings(nc, n->tls_server, n->tls_client, &proto.tcp);
	proto.upstream_id = n->up_id = upstream_pick(ctl, nc);

	/* Every command made before any is handed over: a socket that
	 * cannot be opened fails the whole reload, on no loop. */
	struct worker_cmd *wc[CONF_MAX_CPUS];
	for (int i = 0; i < ctl->nw; i++) {
		wc[i] = loop_cmd(ctl, i, n, &proto, err, sizeof(err));
		if (wc[i])
			continue;
		fprintf(stderr, "relay: reload failed, keeping the running "
			"configuration: %s\n", err);
		while (i-- > 0)
			worker_cmd_release(wc[i]);
		for (int j = 0; j < n->nreg; j++)
			if (n->made[j])
				sockfile_remove(&n->reg[j].file);
		tls_free(n->tls_server);
		tls_free(n->tls_client);
		return;
	}
	for (int i = 0; i < ctl->nw; i++)
		loop_reload(ctl, i, n, wc[i]);
	n->ok = true;
}

static void *reload_main(void *arg)
{
	struct control *ctl = arg;
	/* A umask of its own: binding a unix:///PATH changes it for a moment
	 * (sockfile.c), which must not reach a file another thread makes.
	 * Were it refused, none makes one while a reload runs: the stats
	 * file waits for it (control_drain). */
	if (unshare(CLONE_FS) < 0)
		fprintf(stderr, "relay: reload: unshare(CLONE_FS): %s\n",
			strerror(errno));
	reload_prepare(ctl);
	uint64_t one = 1;
	(void)!write(ctl->reload_efd, &one, sizeof(one));
	return NULL;
}

/* Whether listener g is still in the reload n: in its configuration or
 * on one of the nw loops. */
static bool kept(const struct control_reload *n, int nw,
		 const struct control_listener *g)
{
	if (find_listener(n->reg, n->nreg, &g->a, g->id) >= 0)
		return true;
	for (int i = 0; i < nw; i++)
		if (find_listener(n->loops[i].reg, n->loops[i].nreg, &g->a,
				  g->id) >= 0)
			return true;
	return false;
}

/* Remove the socket files of reg[n] that are still relay's: those of the
 * listeners the reload next does not keep (NULL: all of them). */
static void remove_files(const struct control_listener *reg, int n,
			 const struct control_reload *next, int nw)
{
	for (int j = 0; j < n; j++)
		if (!next || !kept(next, nw, &reg[j]))
			sockfile_remove(&reg[j].file);
}

static void watch_arm(struct control *ctl);

/* On the main thread, once the reload thread is done: join it and adopt
 * what it prepared. */
static void reload_finish(struct control *ctl)
{
	uint64_t v;
	pthread_join(ctl->reload_thread, NULL);
	(void)!read(ctl->reload_efd, &v, sizeof(v));
	ctl->reloading = false;
	struct control_reload *n = &ctl->next;
	if (!n->ok) {
		ctl->reloads.failed++;
		return;
	}
	/* The files of the listeners no loop serves any more go. */
	remove_files(ctl->reg, ctl->nreg, n, ctl->nw);
	for (int i = 0; i < ctl->nw; i++)
		remove_files(ctl->loops[i].reg, ctl->loops[i].nreg, n, ctl->nw);
	/* Each loop holds references of its own to the contexts it uses. */
	tls_free(ctl->tls_server);
	tls_free(ctl->tls_client);
	ctl->tls_server = n->tls_server;
	ctl->tls_client = n->tls_client;
	memcpy(ctl->reg, n->reg, sizeof(n->reg));
	ctl->nreg = n->nreg;
	ctl->next_id = n->next_id;
	memcpy(ctl->loops, n->loops, sizeof(ctl->loops[0]) * (size_t)ctl->nw);
	ctl->conf = n->conf;
	watch_configure(&ctl->watch, &ctl->conf, ctl->stats, ctl->nw);
	watch_arm(ctl);
	listener_labels(ctl);
	upstream_show(ctl, &ctl->conf, n->up_id);
	int behind = 0;
	for (int i = 0; i < ctl->nw; i++)
		behind += ctl->loops[i].behind;
	ctl->reloads.loops_behind = behind;
	if (behind)
		ctl->reloads.partial++;
	else
		ctl->reloads.applied++;
	fprintf(stderr, "relay: reloaded (%d added, %d removed", n->nadd,
		n->nremove);
	if (behind)
		fprintf(stderr, "; %d of %d loops not updated", behind,
			ctl->nw);
	fprintf(stderr, "): ");
	control_describe(&ctl->conf, stderr);
}

static void on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct control *ctl = arg;
	(void)fd;
	(void)what;
	watch_poll(&ctl->watch, ctl->stats, ctl->nw, clock_ns(CLOCK_MONOTONIC));
}

/* Read the groups every watch_interval_ms, or not at all when none is
 * watched. */
static void watch_arm(struct control *ctl)
{
	if (!ctl->watch_ev)
		return;
	event_del(ctl->watch_ev);
	int ms = ctl->conf.watch_interval_ms;
	struct timeval tv = { ms / 1000, ms % 1000 * 1000 };
	if (ctl->conf.nwatch && event_add(ctl->watch_ev, &tv) < 0)
		fprintf(stderr, "relay: cannot read the watched groups: "
			"event_add failed\n");
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
	ctl->watch_ev = event_new(base, -1, EV_PERSIST, on_watch, ctl);
	if (!ctl->reload_ev || !ctl->watch_ev ||
	    event_add(ctl->reload_ev, NULL) < 0)
		return -1;
	watch_arm(ctl);
	return 0;
}

void control_reload(struct control *ctl)
{
	if (ctl->reloading) {
		fprintf(stderr, "relay: reload: one is under way; the file is "
			"read again when it is done\n");
		ctl->reload_again = true;
		return;
	}
	/* Its signals stay blocked (inherited): only the signalfd sees them.
	 * mlockall(MCL_FUTURE) locks a new thread's whole stack, and the C
	 * library keeps it for the next thread: the default 8 MiB would be
	 * 8 MiB of locked memory from the first reload on, for a thread that
	 * parses a file, loads certificates and resolves names. */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, RELOAD_STACK);
	int e = pthread_create(&ctl->reload_thread, &attr, reload_main, ctl);
	pthread_attr_destroy(&attr);
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
	struct worker_cmd proto = { .drain = true,
				    .upstream = ctl->conf.upstream,
				    .upstream_id = ctl->up_id,
				    .flow_idle_ms = ctl->conf.flow_idle_ms,
				    .flow_wait_ms = ctl->conf.flow_wait_ms,
				    .drain_ms = ctl->conf.drain_ms,
				    .unix_allow = ctl->conf.unix_allow };
	stream_settings(&ctl->conf, ctl->tls_server, ctl->tls_client,
			&proto.tcp);
	int rc = 0;
	for (int i = 0; i < ctl->nw; i++) {
		struct worker_cmd *wc = cmd_new(&proto);
		if (!wc)
			return EX_SOFTWARE;
		enum worker_fate fate = worker_command(&ctl->w[i], wc,
				ctl->conf.drain_ms + RELOAD_WAIT_MS);
		if (fate == WORKER_APPLIED) {
			free(wc);
			continue;
		}
		if (fate == WORKER_NOT_TAKEN)
			worker_cmd_release(wc);
		fprintf(stderr, "relay: loop %d did not stop (stalled?)\n", i);
		rc = EX_SOFTWARE;
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
	if (ctl->watch_ev)
		event_free(ctl->watch_ev);
	if (ctl->reload_efd >= 0)
		close(ctl->reload_efd);
	free(ctl->w);
	free(ctl->stats);
	free(ctl->tcp);
	tls_free(ctl->tls_server);
	tls_free(ctl->tls_client);
}

void control_remove_files(struct control *ctl)
{
	remove_files(ctl->reg, ctl->nreg, NULL, 0);
	for (int i = 0; i < ctl->nw; i++)
		remove_files(ctl->loops[i].reg, ctl->loops[i].nreg, NULL, 0);
}
