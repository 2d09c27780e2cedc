// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * view: show a recording in the browser.  A local HTTP server (libmicrohttpd,
 * 127.0.0.1) serves one page (user/web/view-page.html, built in) with
 *   - the per-function table: for an archive, the report component's JSON;
 *     for a Chrome or speedscope JSON file, computed by the page from it;
 *   - the timeline, flame graph and sandwich views of speedscope, served from
 *     its npm package (never copied into this repository), on the profile
 *     converted to speedscope's format on the fly (archives) or as it is;
 *   - the call graph: the DOT exporter's output rendered by Graphviz
 *     `dot -Tsvg` (for JSON inputs the page builds the DOT itself).
 * Needs no privileges.  Conversions are made at the first request that needs
 * them, into a temporary directory removed at exit; Ctrl-C ends the server.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "cmds.h"
#include "exporters/exporter.h"
#include "web/httpd.h"
#include "web/timeline.h"
#include "base/json.h"
#include "base/log.h"
#include "report/diff.h"
#include "report/report.h"
#include "model/session.h"
#include "base/util.h"

#define DEFAULT_ARCHIVE	"bpfprof.data"
#define SPEEDSCOPE_REL	"tests/clients/node_modules/speedscope/dist/release"
#define MAX_DOT_UPLOAD	(16u << 20)
#define DOT_TIMEOUT_S	60
/*
 * Past this many calls a recording is "big": the browser gets the timeline a
 * window at a time (web/timeline.c) and speedscope gets the folded call paths
 * for its flame graph, never every call (a speedscope file of 10 M calls is
 * ~0.5 GB; chrome://tracing stops near 1 M events).
 */
#define BIG_CALLS	1000000

/* The page, built into the binary from user/web/view-page.html (NUL-terminated). */
__asm__(".section .rodata\n"
	".global bpfprof_view_page\n"
	".type bpfprof_view_page, @object\n"
	"bpfprof_view_page:\n"
	".incbin \"user/web/view-page.html\"\n"
	".byte 0\n"
	".previous\n");
extern const char bpfprof_view_page[];

/* `view BASE NEW`'s page: the diff table and a differential flame graph. */
__asm__(".section .rodata\n"
	".global bpfprof_diff_page\n"
	".type bpfprof_diff_page, @object\n"
	"bpfprof_diff_page:\n"
	".incbin \"user/web/diff-page.html\"\n"
	".byte 0\n"
	".previous\n");
extern const char bpfprof_diff_page[];

enum input_kind { IN_ARCHIVE, IN_CHROME, IN_SPEEDSCOPE };

static const char *const kind_names[] = { "archive", "chrome", "speedscope" };

struct view_ctx {
	const char *file;
	const char *name;	/* its base name, for the page */
	enum input_kind kind;
	char *speedscope;	/* speedscope's dist/release directory, NULL: not found */
	char *dot;		/* Graphviz dot, NULL: not found */
	struct httpd_addr addr;
	char token[HTTPD_TOKEN_LEN + 1];	/* every URL starts with /TOKEN/ */
	char tmpdir[64];
	pthread_mutex_t lock;	/* the conversions below, made once */
	char *report;		/* archive: the report JSON */
	size_t report_len;
	uint64_t ncalls;	/* archive: calls recorded */
	uint64_t duration;	/* archive: ns */
	/*
	 * An archive's whole-recording timeline, made at start in a thread of
	 * its own while the report is read (two replays on two CPUs): the
	 * first timeline a page asks for is then ready when the table is.
	 */
	pthread_t overview_thread;
	bool overview_started, overview_joined;
	char *overview;
	size_t overview_len;
	int overview_err;
	bool big;		/* archive of more than BIG_CALLS calls */
	char *profile;		/* the file speedscope loads (archive: made on the first request) */
	char *svg;		/* archive: the call graph (made on the first request) */
	char *graph_err;	/* why there is no graph */
	unsigned long seq;
	const char *file2;	/* view BASE NEW: the new recording (file is the base) */
	char *diff;		/* ... and their diff's JSON (user/report/diff.c) */
	size_t diff_len;
};

/* A POSTed body (the page's DOT for a JSON input). */
struct upload {
	char *buf;
	size_t len;
	bool too_big;
};

static volatile sig_atomic_t stop_signal;

/* ---------------------------------------------------------------- finding things */

static bool is_dir_with(const char *dir, const char *file)
{
	char p[PATH_MAX + 128];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return !access(p, R_OK);
}

/*
 * speedscope's static build: --speedscope-dir, $BPFPROF_SPEEDSCOPE, the test
 * clients beside the binary (a source tree), or a global npm install.
 */
static char *find_speedscope(const char *opt)
{
	static const char *const global[] = {
		"/usr/local/lib/node_modules/speedscope/dist/release",
		"/usr/lib/node_modules/speedscope/dist/release",
		"/usr/share/nodejs/speedscope/dist/release",
	};
	char self[PATH_MAX], p[PATH_MAX + 64], *slash;
	const char *env = getenv("BPFPROF_SPEEDSCOPE");
	ssize_t n;
	size_t i;

	if (opt)
		return is_dir_with(opt, "index.html") ? realpath(opt, NULL) : NULL;
	if (env && *env)
		return is_dir_with(env, "index.html") ? realpath(env, NULL) : NULL;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(p, sizeof(p), "%s/" SPEEDSCOPE_REL, self);
			if (is_dir_with(p, "index.html"))
				return realpath(p, NULL);
		}
	}
	for (i = 0; i < sizeof(global) / sizeof(global[0]); i++)
		if (is_dir_with(global[i], "index.html"))
			return xstrdup(global[i]);
	return NULL;
}

/* An executable in $PATH, or NULL. */
static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *r = NULL;

	copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !r; dir = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/%s", *dir ? dir : ".", name);
		if (!access(p, X_OK))
			r = xstrdup(p);
	}
	free(copy);
	return r;
}

/* Archive, Chrome trace or speedscope file?  0 or -errno (printed). */
static int detect_kind(const char *path, enum input_kind *kind)
{
	char buf[65536];
	size_t n, i;
	FILE *f;

	if (archive__probe(path) > 0) {
		*kind = IN_ARCHIVE;
		return 0;
	}
	f = fopen(path, "rb");
	if (!f) {
		int err = -errno;

		p_err("cannot open %s: %s", path, strerror(-err));
		return err;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (i = 0; i < n && strchr(" \t\r\n", buf[i]); i++)
		;
	if (i < n && buf[i] == '[') {
		*kind = IN_CHROME;	/* the JSON Array Format of the Trace Event Format */
		return 0;
	}
	if (i < n && buf[i] == '{') {
		if (strstr(buf, "speedscope.app/file-format-schema")) {
			*kind = IN_SPEEDSCOPE;
			return 0;
		}
		if (strstr(buf, "\"traceEvents\"")) {
			*kind = IN_CHROME;
			return 0;
		}
	}
	p_err("%s: not a bpfprof archive, Chrome trace (JSON) or speedscope file", path);
	return -EINVAL;
}

/* ---------------------------------------------------------------- conversions */

/* The report component's JSON of an archive; reading it whole also checks the file. */
static int make_report(struct view_ctx *v)
{
	/* the page shows the functions, not the tree: a deep recursion's tree is large */
	struct report_opts ro = { .format = REPORT_JSON, .no_tree = true };
	struct report *rep = NULL;
	struct bp_session s;
	FILE *f = NULL;
	int err;

	session__init(&s);
	err = report__new(&ro, &rep);
	if (err)
		goto cleanup;
	err = replay__report(v->file, NULL, &s, rep);
	if (err)
		goto cleanup;
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
static int make_diff(struct view_ctx *v)
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
		err = cmd_diff_load(d, paths);
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
	return replay__export(v->file, NULL, ops, path, NULL);
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

static void *make_overview(void *arg)
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

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
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

static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct upload *u = *con_cls;

	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}

/* ---------------------------------------------------------------- the command */

/* xdg-open (or another opener) URL, in the background; its pid or 0. */
static pid_t open_browser(const char *url)
{
	static const char *const openers[] = { "xdg-open", "sensible-browser", "x-www-browser" };
	char *argv[3] = { NULL, (char *)url, NULL };
	pid_t pid = 0;
	size_t i;

	for (i = 0; i < sizeof(openers) / sizeof(openers[0]); i++) {
		char *p = find_in_path(openers[i]);
		int err;

		if (!p)
			continue;
		argv[0] = p;
		/* the user's environment: the opener needs DISPLAY, the session bus... */
		err = posix_spawn(&pid, p, NULL, NULL, argv, environ);
		free(p);
		if (!err)
			return pid;
		pid = 0;
	}
	p_warn("no browser opener (xdg-open, sensible-browser) found: open %s yourself", url);
	return 0;
}

/*
 * --open: the browser gets a file that redirects to the URL, not the URL
 * itself: an opener's and a browser's command line can be read by every
 * user (/proc/PID/cmdline), the file only by us (the temporary directory is
 * 0700).
 */
static pid_t open_browser_at(const struct view_ctx *v, const char *url)
{
	char path[sizeof(v->tmpdir) + 16];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/open.html", v->tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		p_warn("cannot write %s: %s: open %s yourself", path, strerror(errno), url);
		return 0;
	}
	fprintf(f, "<!DOCTYPE html><meta charset=\"utf-8\"><title>bpfprof view</title>"
		"<meta http-equiv=\"refresh\" content=\"0;url=%s\"><a href=\"%s\">%s</a>\n",
		url, url, url);
	if (fclose(f)) {
		p_warn("cannot write %s: %s: open %s yourself", path, strerror(errno), url);
		return 0;
	}
	return open_browser(path);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bpfprof view [options] [FILE]\n"
		"       bpfprof view [options] BASE NEW\n\n"
		"Show a recording in the browser: the functions with their calls and times,\n"
		"the timeline, flame graph and sandwich views (speedscope), and the call\n"
		"graph (Graphviz).  FILE is an archive (default " DEFAULT_ARCHIVE "), a Chrome\n"
		"trace (.json) or a speedscope file.  Serves on 127.0.0.1 and prints the URL;\n"
		"Ctrl-C ends it.  An archive of more than 1,000,000 calls gets a timeline sent a\n"
		"window at a time (short calls merged until zoomed in) and a flame graph of its\n"
		"call paths; a call graph of more than 60 functions folds the rest into one node.\n"
		"With two archives, BASE and NEW: their diff (as 'bpfprof diff'): the function\n"
		"table and a differential flame graph.\n\n"
		"options:\n"
		"  -p, --port N             port (default: any free one)\n"
		"      --open               open the page in the browser (xdg-open)\n"
		"      --speedscope-dir DIR speedscope's dist/release directory (default: from\n"
		"                           BPFPROF_SPEEDSCOPE, the source tree's tests/clients,\n"
		"                           or a global npm install)\n"
		"  -h, --help               this help\n");
}

int cmd_view(int argc, char **argv)
{
	enum { OPT_OPEN = 256, OPT_SPEEDSCOPE };
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "open", no_argument, NULL, OPT_OPEN },
		{ "speedscope-dir", required_argument, NULL, OPT_SPEEDSCOPE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	struct view_ctx v = { .file = DEFAULT_ARCHIVE };
	const char *ss_opt = NULL, *slash;
	struct MHD_Daemon *d = NULL;
	bool want_open = false, lock_made = false;
	unsigned long port = 0;
	sigset_t set, old;
	pid_t opener = 0;
	char url[128], *end;
	int c, err = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			errno = 0;
			port = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || port > 65535) {
				p_err("invalid --port '%s' (0 to 65535)", optarg);
				return 2;
			}
			break;
		case OPT_OPEN:
			want_open = true;
			break;
		case OPT_SPEEDSCOPE:
			ss_opt = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			p_err("option '%s' needs a value (see 'bpfprof view --help')", argv[optind - 1]);
			return 2;
		default:
			p_err("unknown option '%s' (see 'bpfprof view --help')", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc)
		v.file = argv[optind++];
	if (optind < argc)
		v.file2 = argv[optind++];
	if (optind < argc) {
		p_err("view shows one recording or the diff of two, not '%s' too (to combine: "
		      "bpfprof merge)", argv[optind]);
		return 2;
	}
	slash = strrchr(v.file, '/');
	v.name = slash ? slash + 1 : v.file;

	if (pthread_mutex_init(&v.lock, NULL)) {
		err = -ENOMEM;
		goto cleanup;
	}
	lock_made = true;
	if (v.file2) {
		/* the diff page draws its own flame graph: no speedscope, no dot */
		err = make_diff(&v);	/* both archives read whole: a bad one fails here */
		if (err)
			goto cleanup;
	} else {
		err = detect_kind(v.file, &v.kind);
		if (err)
			goto cleanup;
		if (v.kind == IN_ARCHIVE) {
			sigset_t all, prev;

			/* the thread starts with every signal blocked: Ctrl-C is main's to take */
			sigfillset(&all);
			pthread_sigmask(SIG_BLOCK, &all, &prev);
			v.overview_started = !pthread_create(&v.overview_thread, NULL, make_overview, &v);
			pthread_sigmask(SIG_SETMASK, &prev, NULL);
			err = make_report(&v);	/* reads it whole: a bad archive fails here */
			if (err)
				goto cleanup;
		}
		v.speedscope = find_speedscope(ss_opt);
		if (!v.speedscope) {
			if (ss_opt)
				p_warn("%s: no speedscope build there (index.html)", ss_opt);
			p_warn("speedscope is not installed: no flame graph (scripts/setup.sh, "
			       "or npm install -g speedscope, or --speedscope-dir DIR)");
		}
		v.dot = find_in_path("dot");
		if (!v.dot)
			p_warn("Graphviz dot is not installed: no call graph (apt-get install "
			       "graphviz)");
	}
	snprintf(v.tmpdir, sizeof(v.tmpdir), "/tmp/bpfprof-view.XXXXXX");
	if (!mkdtemp(v.tmpdir)) {
		err = -errno;
		v.tmpdir[0] = 0;
		p_err("cannot create a temporary directory: %s", strerror(-err));
		goto cleanup;
	}

	/* Signals are taken by sigtimedwait() below, never by the server's threads. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	err = httpd__token_new(v.token);
	if (err) {
		p_err("cannot make the page's token: %s", strerror(-err));
		goto cleanup;
	}
	httpd__loopback(&v.addr, port);
	d = httpd__start(&v.addr, MHD_USE_THREAD_PER_CONNECTION, handler, &v, request_done);
	if (!d) {
		err = -EADDRNOTAVAIL;
		goto cleanup;
	}
	httpd__url(&v.addr, url, sizeof(url));
	strcat(url, "/");
	strcat(url, v.token);
	strcat(url, "/");
	printf("%s\n", url);
	fflush(stdout);
	if (v.file2)
		p_info("showing the diff of %s and %s at %s (Ctrl-C ends)", v.file, v.file2, url);
	else
		p_info("showing %s at %s (Ctrl-C ends)", v.file, url);
	if (want_open)
		opener = open_browser_at(&v, url);
	while (!stop_signal) {
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &(struct timespec){ .tv_sec = 1 });

		if (sig > 0)
			stop_signal = sig;
		if (opener > 0 && waitpid(opener, NULL, WNOHANG) == opener)
			opener = 0;
	}
	err = 0;
cleanup:
	if (d)
		MHD_stop_daemon(d);
	if (v.overview_started && !v.overview_joined)
		pthread_join(v.overview_thread, NULL);
	free(v.overview);
	if (lock_made)
		pthread_mutex_destroy(&v.lock);
	remove_tmpdir(v.tmpdir);
	free(v.report);
	free(v.diff);
	free(v.profile);
	free(v.svg);
	free(v.graph_err);
	free(v.speedscope);
	free(v.dot);
	return err ? 1 : 0;
}
