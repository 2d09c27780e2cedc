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
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cmds.h"
#include "options.h"
#include "web/httpd.h"
#include "base/log.h"
#include "base/util.h"
#include "web/view.h"

#define DEFAULT_ARCHIVE	"bpfprof.data"

static volatile sig_atomic_t stop_signal;

/* ---------------------------------------------------------------- the command */

/* xdg-open (or another opener) URL, in the background; its pid or 0. */
static pid_t open_browser(const char *url)
{
	static const char *const openers[] = { "xdg-open", "sensible-browser", "x-www-browser" };
	char *argv[3] = { NULL, (char *)url, NULL };
	pid_t pid = 0;
	size_t i;

	for (i = 0; i < sizeof(openers) / sizeof(openers[0]); i++) {
		char *p = view_find_in_path(openers[i]);
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

enum { OPT_OPEN = OPT_OWN, OPT_SPEEDSCOPE };

static const struct opt_def view_rows[] = {
	OPT_ARG("port", 'p', "N", "port (default: any free one)"),
	OPT_FLAG("open", OPT_OPEN, "open the page in the browser (xdg-open)"),
	{ "speedscope-dir", required_argument, OPT_SPEEDSCOPE, "DIR",
	  "speedscope's dist/release directory (default: from\n"
	  "BPFPROF_SPEEDSCOPE, the installed share/bpfprof, the\n"
	  "source tree's tests/clients, or a global npm install)", "@dirs" },
	OPT_END
};

const struct cmd_def view_def = {
	.name = "view",
	.summary = "show a recording in the browser: functions, timeline, graph",
	.synopsis = "[options] [FILE]\n"
		    "[options] BASE NEW",
	.about = "Show a recording in the browser: the functions with their calls and times,\n"
		 "the timeline, flame graph and sandwich views (speedscope), and the call\n"
		 "graph (Graphviz).  FILE is an archive (default " DEFAULT_ARCHIVE "), a Chrome\n"
		 "trace (.json) or a speedscope file.  Serves on 127.0.0.1 and prints the URL\n"
		 "(on a terminal, how far it is in reading a big archive first); Ctrl-C ends it.\n"
		 "An archive of more than 1,000,000 calls gets a timeline sent a window at a time\n"
		 "(short calls merged until zoomed in; any number of threads, grouped in foldable\n"
		 "processes; URL#timeline) and a flame graph of its call paths; a call graph of\n"
		 "more than 60 functions folds the rest into one node.\n"
		 "With two archives, BASE and NEW: their diff (as 'bpfprof diff'): the function\n"
		 "table and a differential flame graph.",
	.tables = (const struct opt_def *const[]){ view_rows, opts_help, NULL },
};

/*
 * What the page shows, made before serving: the diff of two archives, or one
 * recording's kind, its report (an archive: read whole, so a bad one fails
 * here, while the overview is made in a thread), and the tools the other
 * views need (speedscope, dot).
 */
static int view_prepare(struct view_ctx *v, const char *ss_opt)
{
	int err;

	if (v->file2) {
		/* the diff page draws its own flame graph: no speedscope, no dot */
		err = view_make_diff(v);	/* both archives read whole: a bad one fails here */
		if (err)
			return err;
	} else {
		err = view_detect_kind(v->file, &v->kind);
		if (err)
			return err;
		if (v->kind == IN_ARCHIVE) {
			sigset_t all, prev;

			/* the thread starts with every signal blocked: Ctrl-C is main's to take */
			sigfillset(&all);
			pthread_sigmask(SIG_BLOCK, &all, &prev);
			v->overview_started = !pthread_create(&v->overview_thread, NULL, view_make_overview, v);
			pthread_sigmask(SIG_SETMASK, &prev, NULL);
			err = view_make_report(v);	/* reads it whole: a bad archive fails here */
			if (err)
				return err;
		}
		v->speedscope = view_find_speedscope(ss_opt);
		if (!v->speedscope) {
			if (ss_opt)
				p_warn("%s: no speedscope build there (index.html)", ss_opt);
			p_warn("speedscope is not installed: no flame graph (scripts/setup.sh, "
			       "or npm install -g speedscope, or --speedscope-dir DIR)");
		}
		v->dot = view_find_in_path("dot");
		if (!v->dot)
			p_warn("Graphviz dot is not installed: no call graph (apt-get install "
			       "graphviz)");
	}
	return 0;
}

/*
 * Serve @v on 127.0.0.1:@port (0: any free port) until a signal (Ctrl-C):
 * the temporary directory, the page's token, the URL printed, the browser
 * opened on --open.
 */
static int view_serve(struct view_ctx *v, unsigned long port, bool want_open)
{
	struct httpd *d = NULL;
	sigset_t set, old;
	pid_t opener = 0;
	char url[128];
	int err;

	snprintf(v->tmpdir, sizeof(v->tmpdir), "/tmp/bpfprof-view.XXXXXX");
	if (!mkdtemp(v->tmpdir)) {
		err = -errno;
		v->tmpdir[0] = 0;
		p_err("cannot create a temporary directory: %s", strerror(-err));
		goto out;
	}

	/* Signals are taken by sigtimedwait() below, never by the server's threads. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	err = httpd__token_new(v->token);
	if (err) {
		p_err("cannot make the page's token: %s", strerror(-err));
		goto out;
	}
	httpd__loopback(&v->addr, port);
	d = httpd__start(&v->addr, -1, MHD_USE_THREAD_PER_CONNECTION, view_handler, v, view_request_done);
	if (!d) {
		err = -EADDRNOTAVAIL;
		goto out;
	}
	httpd__url(&v->addr, url, sizeof(url));
	strcat(url, "/");
	strcat(url, v->token);
	strcat(url, "/");
	printf("%s\n", url);
	fflush(stdout);
	if (v->file2)
		p_info("showing the diff of %s and %s at %s (Ctrl-C ends)", v->file, v->file2, url);
	else
		p_info("showing %s at %s (Ctrl-C ends)", v->file, url);
	if (want_open)
		opener = open_browser_at(v, url);
	while (!stop_signal) {
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &(struct timespec){ .tv_sec = 1 });

		if (sig > 0)
			stop_signal = sig;
		if (opener > 0 && waitpid(opener, NULL, WNOHANG) == opener)
			opener = 0;
	}
	err = 0;
out:
	httpd__stop(d);
	return err;
}

/* what view_prepare and view_serve made (@lock_made: v->lock was) */
static void view_ctx_free(struct view_ctx *v, bool lock_made)
{
	if (v->overview_started && !v->overview_joined)
		pthread_join(v->overview_thread, NULL);
	free(v->overview);
	if (lock_made)
		pthread_mutex_destroy(&v->lock);
	remove_tmpdir(v->tmpdir);
	free(v->report);
	free(v->diff);
	free(v->profile);
	free(v->svg);
	free(v->graph_err);
	free(v->speedscope);
	free(v->dot);
}

int cmd_view(int argc, char **argv)
{
	struct cmd_opts co = { .def = &view_def };
	struct opts_getopt g;
	struct view_ctx v = { .file = DEFAULT_ARCHIVE };
	const char *ss_opt = NULL, *slash;
	bool want_open = false, lock_made = false;
	unsigned long port = 0;
	int c, err = 0;

	opterr = 0;
	opts__getopt(&view_def, "", &g);
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_count("--port", optarg, 0, 65535, &port))
				return 2;
			break;
		case OPT_OPEN:
			want_open = true;
			break;
		case OPT_SPEEDSCOPE:
			ss_opt = optarg;
			break;
		default:	/* -h, getopt's errors */
			err = opts__take(&co, c, argv);
			return err > 0 ? 0 : 2;
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
	err = view_prepare(&v, ss_opt);
	if (err)
		goto cleanup;
	err = view_serve(&v, port, want_open);
cleanup:
	view_ctx_free(&v, lock_made);
	return err ? 1 : 0;
}
