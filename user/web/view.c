// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * view's server: the page, the report and diff tables, speedscope's files,
 * the windowed timeline and the call graph, made from the recording on
 * demand (user/cmd/view.c is the command: options, the browser, signals).
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "archive/archive.h"
#include "archive/replay.h"
#include "exporters/exporter.h"
#include "httpd.h"
#include "timeline.h"
#include "base/json.h"
#include "base/log.h"
#include "base/status.h"
#include "report/diff.h"
#include "report/report.h"
#include "model/session.h"
#include "base/util.h"
#include "view.h"

#define MAX_DOT_UPLOAD	(16u << 20)
#define DOT_TIMEOUT_S	60
#define BIG_CALLS	1000000

/* A file of user/web/ in the binary, NUL-terminated, as the string `sym`. */
#define EMBED(sym, file)						\
	__asm__(".section .rodata\n.global " #sym "\n.type " #sym ", @object\n"	\
		#sym ":\n.incbin \"user/web/" file "\"\n.byte 0\n.previous\n");	\
	extern const char sym[]

EMBED(bpfprof_view_page, "view-page.html");
/* `view BASE NEW`'s page: the diff table and a differential flame graph. */
EMBED(bpfprof_diff_page, "diff-page.html");
/* the frame and tables both pages share */
EMBED(bpfprof_page_css, "page.css");


static const char *const kind_names[] = { "archive", "chrome", "speedscope" };


/* A POSTed body (the page's DOT for a JSON input). */
struct upload {
	char *buf;
	size_t len;
	bool too_big;
};


/* ---------------------------------------------------------------- conversions */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The report component's JSON of an archive; reading it whole also checks the file. */
int view_make_report(struct view_ctx *v)
{
	/* the page shows the functions, not the tree: a deep recursion's tree is large */
	struct report_opts ro = { .format = REPORT_JSON, .no_tree = true };
	struct report *rep = NULL;
	double start = mono_s();
	struct bp_session s;
	FILE *f = NULL;
	int err;

	session__init(&s);
	err = report__new(&ro, &rep);
	if (err)
		goto cleanup;
	/*
	 * The page cannot be opened before its URL, and tens of millions of
	 * calls take seconds to read: the replay's status line says how far it
	 * is (base/status.h), and what was read stays on the terminal.
	 */
	err = report__read(rep, v->file, false, NULL, &s, NULL);
	if (err)
		goto cleanup;
	if (status__on() && mono_s() - start >= STATUS_READ_AFTER)
		fprintf(stderr, "bpfprof: read %s: %" PRIu64 " calls in %.1f s\n", v->name,
			s.ncalls, mono_s() - start);
	f = open_memstream(&v->report, &v->report_len);
	if (!f) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = report__print(rep, &s, f);
	v->ncalls = s.ncalls;
	v->duration = s.duration;
	v->big = s.ncalls > BIG_CALLS;
cleanup:
	if (f && fclose(f) && !err)
		err = -EIO;
	report__free(rep);
	session__free(&s);
	return err;
}

/* view BASE NEW: the diff of the two archives, with every call path (for the flame graph). */
int view_make_diff(struct view_ctx *v)
{
	char *paths[2] = { (char *)v->file, (char *)v->file2 };
	struct diff_opts o;
	struct diff *d = NULL;
	FILE *f = NULL;
	int err;

	diff__default_opts(&o);
	o.format = DIFF_JSON;
	o.all_paths = true;
	err = diff__new(&o, &d);
	if (!err)
		err = diff__read(d, paths, 1, paths + 1, 1);
	if (!err)
		err = diff__compute(d);
	if (err)
		goto cleanup;	/* printed */
	f = open_memstream(&v->diff, &v->diff_len);
	if (!f) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = diff__print(d, f);
cleanup:
	if (f && fclose(f) && !err)
		err = -EIO;
	diff__free(d);
	return err;
}

/* Replays the archive into `ops`, written to `path`.  0 or -errno (printed). */
static int convert(const struct view_ctx *v, const struct exporter_ops *ops, const char *path)
{
	return exporter__replay(v->file, false, NULL, ops, path, NULL);
}

/*
 * dot -Tsvg IN > OUT, at most DOT_TIMEOUT_S seconds.  0, or -errno with *why
 * (malloc'd) saying what went wrong for the page.
 */
static int run_dot(const char *dot, const char *in, const char *out, char **why)
{
	char *argv[] = { (char *)"dot", (char *)"-Tsvg", (char *)in, NULL };
	char errpath[PATH_MAX], msg[2048] = "";
	posix_spawn_file_actions_t fa;
	int err, status = 0, i;
	pid_t pid;
	FILE *ef;

	snprintf(errpath, sizeof(errpath), "%s.err", out);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	err = posix_spawn(&pid, dot, &fa, NULL, argv, NULL);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		*why = xasprintf("cannot run %s: %s", dot, strerror(err));
		return -err;
	}
	for (i = 0; i < DOT_TIMEOUT_S * 100; i++) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (i == DOT_TIMEOUT_S * 100) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		*why = xasprintf("Graphviz dot took more than %d s on this graph: stopped", DOT_TIMEOUT_S);
		unlink(errpath);
		return -ETIMEDOUT;
	}
	ef = fopen(errpath, "r");
	if (ef) {
		size_t n = fread(msg, 1, sizeof(msg) - 1, ef);

		msg[n] = 0;
		fclose(ef);
	}
	unlink(errpath);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		*why = xasprintf("Graphviz dot failed (%s %d): %s",
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg);
		return -EIO;
	}
	return 0;
}

static const char *no_dot_msg(void)
{
	return "Graphviz dot is not installed, so the call graph cannot be drawn "
	       "(Debian: apt-get install graphviz).";
}

/* The archive's call graph as SVG, made once.  Under v->lock. */
static int make_graph(struct view_ctx *v)
{
	char dotpath[PATH_MAX], svg[PATH_MAX];
	int err;

	if (v->svg || v->graph_err)
		return v->svg ? 0 : -EIO;
	if (!v->dot) {
		v->graph_err = xstrdup(no_dot_msg());
		return -ENOENT;
	}
	snprintf(dotpath, sizeof(dotpath), "%s/graph.dot", v->tmpdir);
	snprintf(svg, sizeof(svg), "%s/graph.svg", v->tmpdir);
	err = convert(v, &dot_exporter, dotpath);
	if (err) {
		v->graph_err = xasprintf("cannot write the DOT graph: %s", strerror(-err));
		return err;
	}
	err = run_dot(v->dot, dotpath, svg, &v->graph_err);
	if (err)
		return err;
	v->svg = xstrdup(svg);
	return 0;
}

/* The file speedscope loads: the input itself, or the archive converted once.  Under v->lock. */
static int make_profile(struct view_ctx *v)
{
	char path[PATH_MAX];
	int err;

	if (v->profile)
		return 0;
	/* big: the call paths with their times (bounded by distinct paths), not every call */
	snprintf(path, sizeof(path), "%s/%s", v->tmpdir,
		 v->big ? "profile.folded" : "profile.speedscope.json");
	err = convert(v, v->big ? &folded_exporter : &speedscope_exporter, path);
	if (!err)
		v->profile = xstrdup(path);
	return err;
}

/* ---------------------------------------------------------------- HTTP */

static enum MHD_Result reply_file(struct MHD_Connection *c, const char *path, const char *ctype)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return httpd__reply_text(c, 404, "not found");
	}
	return httpd__reply_fd(c, 200, ctype ? ctype : httpd__mime(path), fd, NULL, 0);
}

/* A file of speedscope's build: plain relative names only. */
static enum MHD_Result serve_speedscope(struct view_ctx *v, struct MHD_Connection *c,
					const char *rel)
{
	char path[PATH_MAX];
	const char *p;

	if (!v->speedscope)
		return httpd__reply_text(c, 404, "speedscope is not installed");
	if (!*rel)
		rel = "index.html";
	for (p = rel; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
		      ('0' <= *p && *p <= '9') || strchr("._-/", *p)))
			return httpd__reply_text(c, 404, "not found");
	if (rel[0] == '/' || rel[0] == '.' || strstr(rel, "/.") || strstr(rel, "//"))
		return httpd__reply_text(c, 404, "not found");
	snprintf(path, sizeof(path), "%s/%s", v->speedscope, rel);
	return reply_file(c, path, NULL);
}

static enum MHD_Result serve_info(struct view_ctx *v, struct MHD_Connection *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return httpd__reply_text(c, 500, "out of memory");
	fputs("{\"file\":", f);
	json_str(f, v->name);
	fprintf(f, ",\"kind\":\"%s\",\"speedscope\":%s,\"dot\":%s,\"profile\":\"profile/%s\"",
		kind_names[v->kind], v->speedscope ? "true" : "false", v->dot ? "true" : "false",
		v->kind == IN_CHROME ? "trace.json" : v->big ? "profile.folded" :
		"profile.speedscope.json");
	fprintf(f, ",\"duration\":%" PRIu64, v->duration);
	fprintf(f, ",\"calls\":%" PRIu64 ",\"big\":%s,\"big_calls\":%d", v->ncalls,
		v->big ? "true" : "false", BIG_CALLS);
	fputs(",\"speedscope_hint\":", f);
	json_str(f, v->speedscope ? "" :
		 "speedscope (the timeline and flame graph) is not installed.  Install its npm "
		 "package: 'scripts/setup.sh' (make deps) in the bpfprof source tree (npm ci in "
		 "tests/clients), or 'npm install -g speedscope'; or give its dist/release "
		 "directory with --speedscope-dir DIR or BPFPROF_SPEEDSCOPE=DIR.");
	fputs("}\n", f);
	if (fclose(f)) {
		free(buf);
		return httpd__reply_text(c, 500, "out of memory");
	}
	return httpd__reply_take(c, 200, "application/json", buf, len);
}

static enum MHD_Result serve_profile(struct view_ctx *v, struct MHD_Connection *c)
{
	int err;

	if (v->kind != IN_ARCHIVE)
		return reply_file(c, v->file, "application/json");
	pthread_mutex_lock(&v->lock);
	err = make_profile(v);
	pthread_mutex_unlock(&v->lock);
	if (err)
		return httpd__reply_text(c, 500, "cannot convert %s: %s", v->name, strerror(-err));
	return reply_file(c, v->profile, "application/json");
}

/* Query argument `name` as a number, or `def` when absent. */
static bool arg_u64(struct MHD_Connection *c, const char *name, uint64_t def, uint64_t *out)
{
	const char *a = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	char *end;

	*out = def;
	if (!a)
		return true;
	errno = 0;
	*out = strtoull(a, &end, 10);
	return !errno && end != a && !*end && a[0] != '-';
}

void *view_make_overview(void *arg)
{
	struct view_ctx *v = arg;
	struct timeline_req rq = { .t0 = 0, .t1 = 0, .px = 2000 };

	/* a bad archive is reported once, by the report's reading of it */
	log_muted = true;
	v->overview_err = timeline__json(v->file, &rq, &v->overview, &v->overview_len);
	return NULL;
}

/* /timeline.json?t0=NS&t1=NS&px=N: a window of a big archive (web/timeline.c). */
static enum MHD_Result serve_timeline(struct view_ctx *v, struct MHD_Connection *c)
{
	struct timeline_req rq;
	uint64_t t0, t1, px;
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (v->kind != IN_ARCHIVE)
		return httpd__reply_text(c, 404, "only archives have a windowed timeline");
	if (!arg_u64(c, "t0", 0, &t0) || !arg_u64(c, "t1", 0, &t1) || !arg_u64(c, "px", 1000, &px) ||
	    (t1 && t1 <= t0) || px < 1 || px > 100000)
		return httpd__reply_text(c, 400, "t0, t1: ns with t0 < t1 (t1 0: the end); px: 1 to 100000");
	if (t0 == 0 && (!t1 || t1 >= v->duration)) {
		/* the whole recording: the one made at start */
		pthread_mutex_lock(&v->lock);
		if (v->overview_started && !v->overview_joined) {
			pthread_join(v->overview_thread, NULL);
			v->overview_joined = true;
		}
		pthread_mutex_unlock(&v->lock);
		if (v->overview_joined && !v->overview_err)
			return httpd__reply(c, 200, "application/json", v->overview, v->overview_len);
	}
	rq.t0 = t0;
	rq.t1 = t1 ? t1 : v->duration > t0 ? v->duration : 0;
	rq.px = (unsigned int)px;
	err = timeline__json(v->file, &rq, &buf, &len);
	if (err)
		return httpd__reply_text(c, 500, "cannot read %s: %s", v->name, strerror(-err));
	return httpd__reply_take(c, 200, "application/json", buf, len);
}

static enum MHD_Result serve_graph(struct view_ctx *v, struct MHD_Connection *c)
{
	int err;

	if (v->kind != IN_ARCHIVE)
		return httpd__reply_text(c, 404, "POST the DOT text of the graph");
	pthread_mutex_lock(&v->lock);
	err = make_graph(v);
	pthread_mutex_unlock(&v->lock);
	if (err)
		return httpd__reply_text(c, err == -ENOENT ? 503 : 500, "%s", v->graph_err);
	return reply_file(c, v->svg, "image/svg+xml");
}

/* The page's own DOT text (JSON inputs): rendered once per request, then removed. */
static enum MHD_Result render_posted(struct view_ctx *v, struct MHD_Connection *c,
				     const struct upload *u)
{
	char in[PATH_MAX], out[PATH_MAX], *why = NULL;
	enum MHD_Result ret;
	unsigned long n;
	int fd, err;

	if (u->too_big)
		return httpd__reply_text(c, 413, "graph larger than %u bytes", MAX_DOT_UPLOAD);
	if (!v->dot)
		return httpd__reply_text(c, 503, "%s", no_dot_msg());
	pthread_mutex_lock(&v->lock);
	n = ++v->seq;
	pthread_mutex_unlock(&v->lock);
	snprintf(in, sizeof(in), "%s/posted-%lu.dot", v->tmpdir, n);
	snprintf(out, sizeof(out), "%s/posted-%lu.svg", v->tmpdir, n);
	fd = open(in, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, u->buf, u->len) != (ssize_t)u->len) {
		if (fd >= 0)
			close(fd);
		unlink(in);
		return httpd__reply_text(c, 500, "cannot write the graph: %s", strerror(errno));
	}
	close(fd);
	err = run_dot(v->dot, in, out, &why);
	unlink(in);
	if (err)
		ret = httpd__reply_text(c, 500, "%s", why ? why : "dot failed");
	else
		ret = reply_file(c, out, "image/svg+xml");
	unlink(out);	/* an open descriptor keeps it until sent */
	free(why);
	return ret;
}

enum MHD_Result view_handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct view_ctx *v = cls;
	struct upload *u = *con_cls;
	enum MHD_Result ret;

	if (!u && !httpd__request_ok(&v->addr, c, &ret))
		return ret;
	/*
	 * Any user of this machine can connect to a loopback port: only who
	 * was given the URL (it holds a random token) gets anything.
	 */
	if (!strcmp(url, "/favicon.ico"))	/* browsers ask at the root: there is none */
		return httpd__reply(c, 204, NULL, "", 0);
	url = httpd__strip_token(url, v->token);
	if (!url)
		return httpd__reply_text(c, 404, "not found (the URL bpfprof view printed has a token)");
	if (!*url) {
		/* the page's links are relative to /TOKEN/ */
		char *to = NULL;
		struct MHD_Response *r;

		if (asprintf(&to, "/%s/", v->token) < 0)
			return MHD_NO;
		r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
		if (!r) {
			free(to);
			return MHD_NO;
		}
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, to);
		ret = MHD_queue_response(c, 302, r);
		MHD_destroy_response(r);
		free(to);
		return ret;
	}
	if (!strcmp(method, "POST") && !strcmp(url, "/graph.svg")) {
		if (!u) {
			/* A custom header: a page of another origin cannot send it without asking. */
			if (!MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Bpfprof"))
				return httpd__reply_text(c, 403, "missing X-Bpfprof header");
			*con_cls = xcalloc(1, sizeof(*u));
			return MHD_YES;
		}
		if (*upload_size) {
			if (u->len + *upload_size > MAX_DOT_UPLOAD) {
				u->too_big = true;
			} else {
				u->buf = xrealloc(u->buf, u->len + *upload_size);
				memcpy(u->buf + u->len, upload, *upload_size);
				u->len += *upload_size;
			}
			*upload_size = 0;
			return MHD_YES;
		}
		return render_posted(v, c, u);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return httpd__reply_text(c, 405, "method not allowed");
	if (!strcmp(url, "/page.css"))
		return httpd__reply(c, 200, "text/css; charset=utf-8", bpfprof_page_css,
				    strlen(bpfprof_page_css));
	if (v->diff) {
		if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
			return httpd__reply(c, 200, "text/html; charset=utf-8", bpfprof_diff_page,
					    strlen(bpfprof_diff_page));
		if (!strcmp(url, "/diff.json"))
			return httpd__reply(c, 200, "application/json", v->diff, v->diff_len);
		return httpd__reply_text(c, 404, "not found: %s", url);
	}
	if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
		return httpd__reply(c, 200, "text/html; charset=utf-8", bpfprof_view_page,
				    strlen(bpfprof_view_page));
	if (!strcmp(url, "/info.json"))
		return serve_info(v, c);
	if (!strcmp(url, "/report.json")) {
		if (!v->report)
			return httpd__reply_text(c, 404, "only archives have a report");
		return httpd__reply(c, 200, "application/json", v->report, v->report_len);
	}
	if (!strncmp(url, "/profile/", 9))
		return serve_profile(v, c);
	if (!strcmp(url, "/timeline.json"))
		return serve_timeline(v, c);
	if (!strcmp(url, "/graph.svg"))
		return serve_graph(v, c);
	if (!strncmp(url, "/speedscope/", 12))
		return serve_speedscope(v, c, url + 12);
	if (!strcmp(url, "/speedscope"))
		return serve_speedscope(v, c, "");
	p_dbg("view: 404 for %s", url);
	return httpd__reply_text(c, 404, "not found: %s", url);
}

void view_request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct upload *u = *con_cls;

	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}
