// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * serve: keep the probes of running processes attached and serve, over HTTP
 * (libmicrohttpd, loopback by default):
 *
 *   /metrics               per (process, function) aggregates in the
 *                          Prometheus text format (user/web/metrics.c)
 *   /capture?ms=N&format=F the calls of the next N ms as a trace file,
 *                          through the exporter F (chrome by default)
 *
 * Threads: the main thread attaches, drains the ring buffer and decodes, as
 * `record` does; libmicrohttpd runs one thread per connection, so a capture
 * that waits for its window does not hold up a scrape.  One mutex guards
 * everything the two share -- the session tables (the decoder adds threads,
 * processes and call paths), the aggregates and the open captures -- and is
 * taken by the main thread around each drain of the ring buffer (not per
 * record), and by a request for the little while it reads or registers.
 *
 * Memory: aggregates only (processes x functions, and the interned call
 * paths); a capture streams its calls into its exporter's temporary file,
 * which goes away once sent.  Between captures nothing grows with the number
 * of calls.
 */
#include <errno.h>
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cmds.h"
#include "serve.h"
#include "options.h"
#include "capture/capture.h"
#include "cost/governor.h"
#include "exporters/exporter.h"
#include "web/httpd.h"
#include "base/log.h"
#include "web/metrics.h"
#include "web/metrics_coro.h"
#include "symbols/debugsyms.h"
#include "model/session.h"
#include "base/util.h"

#define CAPTURE_MAX_MS		60000
#define CAPTURE_DEFAULT_MS	1000
#define MAX_CAPTURES		8	/* open at once; more get 429 */
/*
 * Calls kept per capture: at a million calls a second a 60 s window would
 * be a 9 GB Chrome file, and speedscope sorts a thread's calls in memory
 * (24 bytes each).  Further calls are counted, not kept, and the reply says so.
 */
#define CAPTURE_MAX_CALLS	5000000
/* Checked every this many kept calls (an ftello per open capture). */
#define CAPTURE_CHECK_EVERY	256
/* How often a waiting capture looks whether its client went away. */
#define CAPTURE_POLL_MS		200
/* A capture whose window ended this long ago is closed even if the buffer never empties. */
#define CAPTURE_GRACE_NS	2000000000ull
#define PRUNE_EVERY_NS		5000000000ull

/* One /capture request: its window in session time and its own exporter. */
struct capture {
	struct capture *next;
	const struct exporter_ops *ops;
	struct exporter *exp;
	char *path;		/* the exporter's destination, in the temporary directory */
	uint64_t start, end;	/* ns since the session's t0 */
	uint64_t ncalls, nlost;
	uint64_t ndropped;	/* calls past CAPTURE_MAX_CALLS or --capture-limit */
	int err;
	bool full;		/* at --capture-limit: keeps no more calls */
	bool done;
};

struct serve_ctx {
	pthread_mutex_t lock;
	pthread_cond_t done;	/* a capture was closed */
	atomic_int waiting;	/* requests waiting for the lock: the drain loop lets them in */
	struct bp_session s;
	struct capture *cap;
	struct metrics *m;
	struct coro_metrics *cm;	/* per coroutine function (spans) */
	struct capture *captures;	/* open */
	size_t ncaptures;
	uint64_t nserved;	/* captures returned */
	uint64_t seq;		/* capture file names */
	uint64_t capture_limit;
	_Atomic uint64_t sending;	/* bytes of closed captures not sent yet */
	bool stopping;
	size_t top;
	const char *token;	/* every request's "Authorization: Bearer TOKEN", or NULL */
	struct httpd_addr addr;
	char tmpdir[64];
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void lock(struct serve_ctx *x)
{
	atomic_fetch_add(&x->waiting, 1);
	pthread_mutex_lock(&x->lock);
	atomic_fetch_sub(&x->waiting, 1);
}

static void unlock(struct serve_ctx *x)
{
	pthread_mutex_unlock(&x->lock);
}

/* ---------------------------------------------------------------- captures */

/* Do the open captures and those being sent hold --capture-limit bytes or more? */
static bool captures_full(struct serve_ctx *x)
{
	uint64_t held = atomic_load(&x->sending);
	const struct capture *c;

	for (c = x->captures; c; c = c->next)
		if (c->exp)
			held += exporter__bytes(c->exp);
	return held >= x->capture_limit;
}

/* The session as a capture sees it: time starts at its window. */
static struct bp_session capture_session(const struct serve_ctx *x, const struct capture *c,
					 uint64_t end)
{
	struct bp_session cs = x->s;

	cs.t0 += c->start;
	cs.duration = end > c->start ? end - c->start : 0;
	cs.ncalls = c->ncalls;
	cs.lost_total = c->nlost;
	return cs;
}

static void capture_event(struct serve_ctx *x, struct capture *c, const struct bp_event *ev)
{
	struct bp_session cs;
	struct bp_event e = *ev;

	if (c->err)
		return;
	if (e.kind == BP_EV_CALL) {
		/* the calls wholly inside the window */
		if (e.call.begin < c->start || e.call.end > c->end)
			return;
		if (!c->full && c->ncalls % CAPTURE_CHECK_EVERY == 0)
			c->full = captures_full(x);
		if (c->ncalls >= CAPTURE_MAX_CALLS || c->full) {
			c->ndropped++;
			return;
		}
		e.call.begin -= c->start;
		e.call.end -= c->start;
		c->ncalls++;
	} else if (e.kind == BP_EV_LOSS) {
		if (e.loss.ts < c->start || e.loss.ts > c->end)
			return;
		e.loss.ts -= c->start;
		c->nlost += e.loss.count;
	} else {
		return;
	}
	cs = capture_session(x, c, c->end);
	c->err = exporter__event(c->exp, &cs, &e);
}

/* Writes the capture out and wakes its request.  Under the lock. */
static void capture_close(struct serve_ctx *x, struct capture *c, uint64_t now)
{
	struct bp_session cs = capture_session(x, c, now < c->end ? now : c->end);
	struct capture **pp;

	if (!c->err)
		c->err = exporter__finish(c->exp, &cs);
	exporter__free(c->exp);
	c->exp = NULL;
	c->done = true;
	for (pp = &x->captures; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	x->ncaptures--;
	if (!c->err)
		x->nserved++;
	pthread_cond_broadcast(&x->done);
}

/*
 * After a drain that started at `polled` (session time) and emptied the
 * buffer: every record of a window that ended before it has been decoded.
 */
/* Has a capture's window ended by `t` (it then wants every record up to t)? */
static bool capture_due(const struct serve_ctx *x, uint64_t t)
{
	const struct capture *c;

	for (c = x->captures; c; c = c->next)
		if (t > c->end)
			return true;
	return false;
}

static void close_captures(struct serve_ctx *x, uint64_t polled, bool drained, uint64_t now)
{
	struct capture *c, *next;

	for (c = x->captures; c; c = next) {
		next = c->next;
		if ((drained && polled > c->end) || now > c->end + CAPTURE_GRACE_NS || x->stopping)
			capture_close(x, c, now);
	}
}

/* Every decoded event (under the lock: it runs inside tracer__poll). */
static int sink(void *ctx, const struct bp_event *ev)
{
	struct serve_ctx *x = ctx;
	struct capture *c;

	coro_metrics__event(x->cm, &x->s, ev);
	if (ev->kind == BP_EV_CALL)
		metrics__add_call(x->m, &x->s, &ev->call);
	else if (ev->kind == BP_EV_ANNOT && ev->annot.kind == BP_ANNOT_DROP)
		metrics__drop(x->m, (uint32_t)ev->annot.value,
			      (uint64_t)((int64_t)(x->s.t0 + ev->annot.ts) + x->s.realtime_offset));
	for (c = x->captures; c; c = c->next)
		capture_event(x, c, ev);
	return 0;
}

/* ---------------------------------------------------------------- HTTP */

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static uint64_t rss_bytes(void)
{
	unsigned long size, rss;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &rss);
	fclose(f);
	return n == 2 ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static enum MHD_Result serve_metrics(struct serve_ctx *x, struct MHD_Connection *conn)
{
	struct metrics_extra ex = { .cpu_ns = cpu_ns(), .rss_bytes = rss_bytes() };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return httpd__reply_text(conn, 500, "out of memory");
	lock(x);
	ex.lost = x->s.lost_total;
	ex.traced_processes = capture__ntargets(x->cap);
	ex.decoder_threads = decoder__nthreads(capture__decoder(x->cap));
	ex.captures = x->nserved;
	ex.captures_running = x->ncaptures;
	capture__slowdown(x->cap, &ex.slowdown, &ex.slowdown_recent, &ex.max_slowdown);
	err = metrics__write(x->m, &x->s, x->top, &ex, f);
	if (!err)
		err = coro_metrics__write(x->cm, &x->s, x->top, f);
	unlock(x);
	if (fclose(f) || err) {
		free(buf);
		return httpd__reply_text(conn, 500, "cannot write the metrics");
	}
	return httpd__reply_take(conn, 200, "text/plain; version=0.0.4; charset=utf-8", buf, len);
}

static const struct {
	const char *format, *ctype, *ext;
} capture_formats[] = {
	{ "chrome", "application/json", ".json" },
	{ "perfetto", "application/octet-stream", ".pftrace" },
	{ "speedscope", "application/json", ".speedscope.json" },
	{ "pprof", "application/octet-stream", ".pb.gz" },
	{ "folded", "text/plain; charset=utf-8", ".folded" },
	{ "csv", "text/csv; charset=utf-8", ".csv" },
	{ "dot", "text/vnd.graphviz; charset=utf-8", ".dot" },
};

/* A capture's reply was sent (or its client left): its file's bytes are free. */
static void capture_sent(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct serve_ctx *x = cls;
	uint64_t *size = *con_cls;

	if (size) {
		atomic_fetch_sub(&x->sending, *size);
		free(size);
		*con_cls = NULL;
	}
}

static enum MHD_Result serve_capture(struct serve_ctx *x, struct MHD_Connection *conn,
				     void **con_cls)
{
	const char *ms_arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "ms");
	const char *fmt = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "format");
	struct capture *c = NULL;
	unsigned long ms = CAPTURE_DEFAULT_MS;
	size_t k, nf = sizeof(capture_formats) / sizeof(capture_formats[0]);
	char name[64];
	enum MHD_Result ret;
	int fd, err;

	if (ms_arg) {
		char *end;

		errno = 0;
		ms = strtoul(ms_arg, &end, 10);
		if (errno || end == ms_arg || *end || ms_arg[0] == '-' || ms < 1 ||
		    ms > CAPTURE_MAX_MS)
			return httpd__reply_text(conn, 400, "ms must be 1 to %d (milliseconds)",
						 CAPTURE_MAX_MS);
	}
	for (k = 0; k < nf && fmt && strcmp(fmt, capture_formats[k].format); k++)
		;
	if (!fmt)
		k = 0;
	if (k == nf)
		return httpd__reply_text(conn, 400,
					 "unknown format '%s': chrome, perfetto, speedscope, pprof, "
					 "folded, csv or dot", fmt);

	lock(x);
	if (x->stopping) {
		unlock(x);
		return httpd__reply_text(conn, 503, "bpfprof is stopping");
	}
	if (x->ncaptures >= MAX_CAPTURES) {
		unlock(x);
		return httpd__reply_text(conn, 429, "%d captures are running: try again later",
					 MAX_CAPTURES);
	}
	c = xcalloc(1, sizeof(*c));
	c->ops = exporter__find(capture_formats[k].format);
	c->start = now_ns(CLOCK_MONOTONIC) - x->s.t0;
	c->end = c->start + ms * 1000000ull;
	if (!c->ops || asprintf(&c->path, "%s/capture-%" PRIu64 "%s", x->tmpdir, ++x->seq,
				capture_formats[k].ext) < 0) {
		unlock(x);
		free(c);
		return httpd__reply_text(conn, 500, "cannot start a capture");
	}
	err = exporter__new(c->ops, c->path, &x->s, &c->exp);
	if (err) {
		unlock(x);
		free(c->path);
		free(c);
		return httpd__reply_text(conn, 500, "cannot write a capture: %s", strerror(-err));
	}
	c->next = x->captures;
	x->captures = c;
	x->ncaptures++;
	while (!c->done) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += CAPTURE_POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&x->done, &x->lock, &until);
		/* nobody to send it to (a closed tab, an <img> gone): stop recording it */
		if (!c->done && httpd__client_gone(conn)) {
			c->err = -ECANCELED;
			capture_close(x, c, now_ns(CLOCK_MONOTONIC) - x->s.t0);
		}
	}
	unlock(x);

	err = c->err;
	fd = err ? -1 : open(c->path, O_RDONLY | O_CLOEXEC);
	if (!err && fd < 0)
		err = -errno;
	unlink(c->path);	/* the open descriptor keeps it until it is sent */
	if (!err) {
		struct stat st;
		uint64_t *size = xmalloc(sizeof(*size));

		*size = fstat(fd, &st) ? 0 : (uint64_t)st.st_size;
		atomic_fetch_add(&x->sending, *size);
		*con_cls = size;	/* capture_sent() gives it back */
	}
	if (err == -ECANCELED) {
		p_dbg("capture: the client left, capture dropped");
		ret = MHD_NO;
	} else if (err) {
		ret = httpd__reply_text(conn, 500, "the capture failed: %s", strerror(-err));
	} else {
		snprintf(name, sizeof(name), "bpfprof-capture-%lums%s", ms, capture_formats[k].ext);
		ret = httpd__reply_fd(conn, 200, capture_formats[k].ctype, fd, name, c->ndropped);
	}
	free(c->path);
	free(c);
	return ret;
}

/* The request's "Authorization: Bearer TOKEN", compared in constant time. */
static bool bearer_ok(struct MHD_Connection *conn, const char *token)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	size_t n = strlen(token), i;
	unsigned char diff = 0;

	if (!h || strncmp(h, "Bearer ", 7) || strlen(h + 7) != n)
		return false;
	for (i = 0; i < n; i++)
		diff |= (unsigned char)h[7 + i] ^ (unsigned char)token[i];
	return !diff;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct serve_ctx *x = cls;
	enum MHD_Result ret;

	if (!httpd__request_ok(&x->addr, conn, &ret))
		return ret;
	if (x->token && !bearer_ok(conn, x->token))
		return httpd__reply_text(conn, 401, "this server wants its token: "
					 "'Authorization: Bearer TOKEN' (serve --token-file)");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return httpd__reply_text(conn, 405, "only GET");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(x, conn);
	if (!strcmp(url, "/capture"))
		return serve_capture(x, conn, con_cls);
	if (!strcmp(url, "/"))
		return httpd__reply_text(conn, 200,
			"bpfprof serve\n\n"
			"/metrics                     Prometheus metrics of the traced functions\n"
			"/capture?ms=N&format=FORMAT  the calls of the next N ms (1 to %d) as a trace:\n"
			"                             chrome (default), speedscope, pprof, folded,\n"
			"                             csv or dot", CAPTURE_MAX_MS);
	return httpd__reply_text(conn, 404, "not found: %s (try /metrics or /capture?ms=500)", url);
}

/* ---------------------------------------------------------------- attaching */

static bool pid_alive(uint32_t pid, void *ctx)
{
	return !kill((pid_t)pid, 0) || errno != ESRCH;
}

static bool thread_gone(uint32_t tid, uint32_t pid, void *ctx)
{
	return syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, 0) && errno == ESRCH;
}

/*
 * What exited processes and threads left (at @now, ns of CLOCK_MONOTONIC):
 * aggregates, threads whose exit was lost, threads no open capture can name.
 * Returns decoder__reap's result.
 */
static int serve_prune(struct serve_ctx *x, uint64_t now)
{
	size_t k = metrics__prune(x->m, pid_alive, NULL) +
		   coro_metrics__prune(x->cm, pid_alive, NULL);
	uint64_t keep = now - x->s.t0 > PRUNE_EVERY_NS ? now - x->s.t0 - PRUNE_EVERY_NS : 0;
	struct capture *c;
	int err;

	if (k)
		p_dbg("dropped the aggregates of %zu functions of exited processes", k);
	/* exited threads: kept while a capture may still name them */
	for (c = x->captures; c; c = c->next)
		if (c->start < keep)
			keep = c->start;
	/* threads whose exit record was lost: gone, silent for a while */
	err = decoder__reap(capture__decoder(x->cap), now - x->s.t0 > PRUNE_EVERY_NS ?
			    now - x->s.t0 - PRUNE_EVERY_NS : 0, thread_gone, NULL, &k);
	if (k)
		p_dbg("closed %zu threads whose exit was not seen", k);
	k = session__prune_threads(&x->s, keep);
	if (k)
		p_dbg("forgot %zu exited threads", k);
	k = session__prune_procs(&x->s, pid_alive, NULL);
	if (k)
		p_dbg("forgot %zu exited processes", k);
	return err;
}

/*
 * Drain the capture until a signal or the targets are gone, closing the
 * captures whose window has ended and pruning every PRUNE_EVERY_NS; between
 * drains, requests waiting for the lock go first.
 */
static int serve_drain(struct serve_ctx *x)
{
	uint64_t next_prune = now_ns(CLOCK_MONOTONIC) + PRUNE_EVERY_NS;
	int err = 0;

	for (;;) {
		uint64_t polled = now_ns(CLOCK_MONOTONIC), now;
		bool gone, all;
		int n, spins;

		lock(x);
		/* a capture whose window has ended needs the records up to now */
		all = capture_due(x, polled - x->s.t0);
		n = capture__poll(x->cap, all);
		if (n < 0) {
			err = n;
			unlock(x);
			break;
		}
		now = now_ns(CLOCK_MONOTONIC);
		gone = capture__done(x->cap);
		if (stop_signal || gone)
			x->stopping = true;
		close_captures(x, polled - x->s.t0, all && n < CAPTURE_POLL_BUDGET, now - x->s.t0);
		if (now >= next_prune) {
			err = serve_prune(x, now);
			next_prune = now + PRUNE_EVERY_NS;
		}
		capture__status(x->cap);
		unlock(x);
		if (x->stopping) {
			if (gone && !stop_signal)
				p_info("the traced processes exited");
			break;
		}
		/* A request waits for the lock: let it in before the next drain. */
		for (spins = 0; atomic_load(&x->waiting) && spins < 1000; spins++)
			sched_yield();
		if (n == 0)
			capture__wait(x->cap, 2);	/* checks targets and signals; drains when due */
	}
	return err;
}

static int run(struct serve_opts *o)
{
	struct serve_ctx x = { .top = o->top, .addr = o->listen, .capture_limit = o->capture_limit,
			       .token = o->token };
	struct httpd *d = NULL;
	sigset_t block, old;
	char url[128];
	int err, lfd = -1;
	bool locks_made = false;

	session__init(&x.s);
	err = metrics__new(&x.m);
	if (!err)
		err = coro_metrics__new(&x.cm);
	if (err)
		goto cleanup;
	if (pthread_mutex_init(&x.lock, NULL) || pthread_cond_init(&x.done, NULL)) {
		err = -ENOMEM;
		goto cleanup;
	}
	locks_made = true;

	/* 1. What to trace: the first process's executable, as `attach` does. */
	err = capture__new(&o->co, &x.s, sink, &x, &x.cap);
	if (err)
		goto cleanup;

	/* 2. The temporary directory for captures, and the listening socket: fail early. */
	snprintf(x.tmpdir, sizeof(x.tmpdir), "/tmp/bpfprof-serve.XXXXXX");
	if (!mkdtemp(x.tmpdir)) {
		err = -errno;
		x.tmpdir[0] = 0;
		p_err("cannot create a temporary directory: %s", strerror(-err));
		goto cleanup;
	}

	/*
	 * Bound before the targets are held for the attach (~200 ms): a port
	 * in use is said without stopping them for nothing.  Connections wait
	 * in the backlog until the server starts below.
	 */
	lfd = httpd__listen(&x.addr);
	if (lfd < 0) {
		err = -EADDRNOTAVAIL;
		goto cleanup;
	}

	/*
	 * 3. Load and attach (the targets held still meanwhile).  A signal
	 * from here on ends serve once the attach is done (the probes then
	 * go cleanly): the socket is bound and said already, and a Ctrl-C or
	 * SIGTERM after that line must not kill bpfprof mid-attach.
	 */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	err = capture__start(x.cap);
	if (err)
		goto cleanup;

	/* 4. Serve.  Signals go to this thread only: the server's threads block them. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	d = httpd__start(&x.addr, lfd, MHD_USE_THREAD_PER_CONNECTION, handler, &x, capture_sent);
	lfd = -1;	/* the server's now, or closed */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d) {
		err = -EADDRNOTAVAIL;
		goto cleanup;
	}
	httpd__url(&x.addr, url, sizeof(url));
	printf("%s/metrics\n", url);
	fflush(stdout);
	p_info("serving %s/metrics and %s/capture?ms=N (Ctrl-C ends)", url, url);

	/* 5. Drain until a signal or the targets are gone. */
	err = serve_drain(&x);

cleanup:
	/* Requests still waiting get their capture as it stands, then the server stops. */
	if (locks_made) {
		lock(&x);
		x.stopping = true;
		close_captures(&x, 0, false, now_ns(CLOCK_MONOTONIC) - x.s.t0);
		unlock(&x);
	}
	httpd__stop(d);
	if (lfd >= 0)
		close(lfd);
	capture__free(x.cap);	/* the probes go after we do (bpfprof-release) */
	metrics__free(x.m);
	coro_metrics__free(x.cm);
	session__free(&x.s);
	remove_tmpdir(x.tmpdir);
	if (locks_made) {
		pthread_cond_destroy(&x.done);
		pthread_mutex_destroy(&x.lock);
	}
	return err ? 1 : 0;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { 0 };
	int err;

	err = serve__parse_args(argc, argv, &o);
	if (err)
		err = err > 0 ? 0 : 2;
	else
		err = run(&o);
	capture_opts__free(&o.co);
	opts__free(&o.cmd);
	free(o.token);
	return err;
}
