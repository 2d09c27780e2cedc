// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve's options: its table, its help, its parser (serve.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "serve.h"
#include "base/log.h"
#include "base/util.h"

enum { OPT_TOP = OPT_OWN, OPT_CAPTURE_LIMIT, OPT_TOKEN_FILE };

static const struct opt_def serve_rows[] = {
	OPT_ARG("listen", 'l', "ADDR:PORT", "where to serve (default " DEFAULT_LISTEN ";\n"
		"port 0: any free)"),
	{ "token-file", required_argument, OPT_TOKEN_FILE, "FILE",
	  "serve only requests with 'Authorization: Bearer TOKEN',\n"
	  "TOKEN the first line of FILE (16 to 256 characters; as\n"
	  "Prometheus' bearer_token_file); for a port other users\n"
	  "can reach", "@files" },
	OPT_END
};

static const struct opt_def serve_size_rows[] = {
	OPT_ARG("top", OPT_TOP, "K", "export the K functions with the most time (default 50;\n"
		"0: all)"),
	OPT_ARG("capture-limit", OPT_CAPTURE_LIMIT, "SIZE",
		"bytes all captures may hold at once, in /tmp\n"
		"(default 512M); past it a capture keeps no more calls"),
	OPT_END
};

static const char *serve_default(int val)
{
	return val == OPT_BUFFER ? "64M" : val == OPT_MAX_OVH ? "10 (at most 1.1x slower)" : NULL;
}

const struct cmd_def serve_def = {
	.name = "serve",
	.summary = "trace running processes; Prometheus metrics and captures over HTTP",
	.synopsis = "--pid PID[,PID...] [options]",
	.about = "Trace the function calls of running processes and serve, over HTTP:\n"
		 "  /metrics                     calls, time, self time and a latency histogram\n"
		 "                               per function and process (Prometheus format)\n"
		 "  /capture?ms=N&format=FORMAT  a trace of the next N ms (up to 60000): chrome\n"
		 "                               (default), perfetto, speedscope, pprof, folded,\n"
		 "                               csv, dot\n"
		 "until Ctrl-C or the processes exit.  Only aggregates are kept between captures.",
	.tables = (const struct opt_def *const[]){ opts_targets, serve_rows, opts_capture,
		opts_debug, serve_size_rows, opts_quiet, opts_help, NULL },
	.dflt = serve_default,
	.notes = "The URL of /metrics is printed on standard output once the probes are attached.\n"
		 "On a terminal, one status line (elapsed, calls/s, lost records, estimated\n"
		 "slowdown, functions dropped) is rewritten in place and erased at the end.",
};

/* --token-file: its first line, 16 to 256 characters of printable ASCII. */
static int read_token(const char *path, char **token)
{
	char buf[260];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f) {
		p_err("cannot read --token-file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	n = strcspn(buf, "\r\n");
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			n = 0;
	if (n < 16 || n > 256) {
		p_err("--token-file %s: want one line of 16 to 256 printable characters, no spaces",
		      path);
		return -EINVAL;
	}
	free(*token);
	*token = xstrdup(buf);
	return 0;
}

int serve__parse_args(int argc, char **argv, struct serve_opts *o)
{
	struct opts_getopt g;
	const char *listen = DEFAULT_LISTEN;
	unsigned long v;
	int c, err;

	o->cmd = (struct cmd_opts){ .def = &serve_def, .capture = &o->co };
	opts__capture_defaults(&o->co, 64ull << 20);
	o->co.verb = "serve";
	/* captures hold calls and losses: no edges, and the probed images stay */
	o->co.no_wakeups = true;
	o->co.no_exec_follow = true;
	o->co.max_overhead = DEFAULT_MAX_OVERHEAD;	/* a long-running service: bounded */
	o->top = DEFAULT_TOP;
	o->capture_limit = DEFAULT_CAPTURE_LIMIT;
	opterr = 0;
	opts__getopt(&serve_def, "", &g);
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		default:	/* the shared options (options.h), getopt's errors */
			err = opts__take(&o->cmd, c, argv);
			if (err)
				return err;
			break;
		case 'l':
			listen = optarg;
			break;
		case OPT_TOP:
			if (parse_count("--top", optarg, 0, 1000000, &v))
				return -EINVAL;
			o->top = v;
			break;
		case OPT_TOKEN_FILE:
			if (read_token(optarg, &o->token))
				return -EINVAL;
			break;
		case OPT_CAPTURE_LIMIT:
			if (parse_size(optarg, &o->capture_limit) || o->capture_limit < 4096) {
				p_err("invalid --capture-limit '%s': want a size of 4k or more "
				      "(e.g. 64M, 2G)", optarg);
				return -EINVAL;
			}
			break;
		}
	}
	opts__apply(&o->cmd);
	if (optind < argc) {
		p_err("unexpected argument '%s': serve traces running processes (--pid)",
		      argv[optind]);
		return -EINVAL;
	}
	if (!o->co.npids) {
		p_err("serve needs --pid PID (the processes to trace)");
		return -EINVAL;
	}
	return httpd__parse_listen("--listen", listen, &o->listen);
}

