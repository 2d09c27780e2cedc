// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report: read a .bpfprof archive and print the per-function table and the
 * call tree (user/report/).  Needs no privileges: it only reads a file.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive/archive.h"
#include "archive/replay.h"
#include "cmds.h"
#include "options.h"
#include "base/log.h"
#include "base/util.h"
#include "report/report.h"
#include "model/session.h"

#define DEFAULT_ARCHIVE "bpfprof.data"

static void usage(FILE *f, const char *cmd)
{
	(void)cmd;
	fprintf(f, "usage: bpfprof report [options] [FILE]\n\n"
		   "Print the functions of a recording (FILE, default " DEFAULT_ARCHIVE ", as\n"
		   "written by 'bpfprof record' without -o or with -o X.bpfprof) with their\n"
		   "calls and times, then the call tree by call path.\n\n"
		   "options:\n"
		   "      --format FMT   pretty (default), json, or csv (the flat table; the\n"
		   "                     tree with --tree-only)\n"
		   "  -s, --sort KEY     total (default, inclusive time), self, calls, avg, max\n"
		   "  -n, --top N        only the first N functions of the flat table\n"
		   "      --depth N      only the first N levels of the call tree\n"
		   "  -p, --pid PID      only calls of process PID\n"
		   "  -t, --tid TID      only calls of thread TID\n"
		   "      --no-tree      only the flat table\n"
		   "      --tree-only    only the call tree\n"
		   "      --marks        only the BPFPROF_MARK checkpoints, per thread: time\n"
		   "                     since the previous mark and since the first\n"
		   "      --edges        only the dependency edges (fork, wakeup, data): source\n"
		   "                     -> target function, kind, count, wake-to-run latency\n"
		   "      --partial      read an unfinished recording (bpfprof was killed: its\n"
		   "                     OUT.tmp.PID.XXXXXX) up to its last complete block\n"
		   "  -h, --help         this help\n\n"
		   "columns: total is inclusive time, counted once for recursive functions\n"
		   "(nested activations are inside the outermost one); self excludes traced\n"
		   "callees; avg, min, max, p50, p99 are over single calls (p50/p99 within\n"
		   "3.2%%); wall is total as a percentage of the recording's duration.\n");
}

/* A positive decimal that fits in `max`; 0 or -EINVAL with the message printed. */
int cmd_report(int argc, char **argv)
{
	enum { OPT_NO_TREE = OPT_OWN, OPT_TREE_ONLY, OPT_EDGES, OPT_MARKS };
	static const struct option longopts[] = {
		OPTS_READ_LONGOPTS OPT_ARG("format", OPT_FORMAT),
		/* which rows */
		OPT_ARG("sort", 's'), OPTS_SIZE_LONGOPTS OPT_ARG("pid", 'p'), OPT_ARG("tid", 't'),
		/* which views */
		OPT_FLAG("no-tree", OPT_NO_TREE), OPT_FLAG("tree-only", OPT_TREE_ONLY),
		OPT_FLAG("edges", OPT_EDGES), OPT_FLAG("marks", OPT_MARKS),
		OPT_FLAG("help", 'h'),
		{ NULL },
	};
	struct report_opts o = { 0 };
	struct cmd_opts co = { .cmd = "report", .usage = usage, .top = &o.top, .depth = &o.depth };
	struct report *rep = NULL;
	struct bp_session s;
	const char *path = DEFAULT_ARCHIVE;
	unsigned long v;
	int c, err = 0;

	session__init(&s);
	opterr = 0;	/* our own messages: one "bpfprof: " line, like every other error */
	while ((c = getopt_long(argc, argv, ":s:n:p:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			err = report__parse_format(optarg, &o.format);
			if (err)
				p_err("unknown format '%s': want pretty, json or csv", optarg);
			break;
		case 's':
			err = report__parse_sort(optarg, &o.sort);
			if (err)
				p_err("unknown sort key '%s': want total, self, calls, avg or max",
				      optarg);
			break;
		case 'p':
			err = parse_count("pid", optarg, 1, INT_MAX, &v);
			o.pid = v;
			break;
		case 't':
			err = parse_count("tid", optarg, 1, INT_MAX, &v);
			o.tid = v;
			break;
		case OPT_NO_TREE:
			o.no_tree = true;
			break;
		case OPT_EDGES:
			o.edges = true;
			break;
		case OPT_MARKS:
			o.marks = true;
			break;
		case OPT_TREE_ONLY:
			o.tree_only = true;
			break;
		default:	/* -h, --partial, getopt's errors */
			err = opts__take(&co, c, argv);
			break;
		}
		if (err)
			goto cleanup;
	}
	if (o.no_tree && o.tree_only) {
		p_err("--no-tree and --tree-only leave nothing to print");
		err = -EINVAL;
		goto cleanup;
	}
	if (argc - optind > 1) {
		p_err("report reads one file, got %d (see 'bpfprof report --help')", argc - optind);
		err = -EINVAL;
		goto cleanup;
	}
	if (optind < argc)
		path = argv[optind];

	err = report__new(&o, &rep);
	if (err)
		goto cleanup;
	/* the report applies --pid/--tid itself (the same rules: model/filter.h) */
	err = report__read(rep, path, NULL, &s, NULL);
	if (err)
		goto cleanup;	/* the reader or the report said why, in one line */
	err = report__print(rep, &s, stdout);
	/* main() checks stdout and reports the write error */
cleanup:
	report__free(rep);
	session__free(&s);
	if (err == OPTS_HELP)
		return 0;
	return err ? (err == -EINVAL ? 2 : 1) : 0;
}
