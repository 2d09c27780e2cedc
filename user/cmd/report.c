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

enum { OPT_NO_TREE = OPT_OWN, OPT_TREE_ONLY, OPT_EDGES, OPT_MARKS, OPT_ARGS };

static const struct opt_def report_rows[] = {
	{ "format", required_argument, OPT_FORMAT, "FMT",
	  "pretty (default), json, or csv (the flat table; the\n"
	  "tree with --tree-only, the marks, edges or argument\n"
	  "groups with --marks, --edges, --args)", "pretty json csv" },
	/* which rows */
	{ "sort", required_argument, 's', "KEY",
	  "total (default, inclusive time), self, calls, avg, max",
	  "total self calls avg max" },
	OPT_END
};

static const struct opt_def report_which_rows[] = {
	OPT_ARG("pid", 'p', "PID", "only calls of process PID"),
	OPT_ARG("tid", 't', "TID", "only calls of thread TID"),
	/* which views */
	OPT_FLAG("no-tree", OPT_NO_TREE, "only the flat table"),
	OPT_FLAG("tree-only", OPT_TREE_ONLY, "only the call tree"),
	OPT_FLAG("marks", OPT_MARKS, "only the BPFPROF_MARK checkpoints, per thread: time\n"
		 "since the previous mark and since the first"),
	OPT_FLAG("edges", OPT_EDGES, "only the dependency edges (fork, wakeup, data): source\n"
		 "-> target function, kind, count, wake-to-run latency"),
	OPT_ARG("args", OPT_ARGS, "FUNC:PARAM", "only the calls of FUNC (a glob) grouped by the\n"
		"value of its parameter PARAM (or return), as recorded\n"
		"with record --args: calls, total, avg, max per value"),
	OPT_END
};

const struct cmd_def report_def = {
	.name = "report",
	.summary = "print per-function times and the call tree of a recording",
	.synopsis = "[options] [FILE]",
	.about = "Print the functions of a recording (FILE, default " DEFAULT_ARCHIVE ", as\n"
		 "written by 'bpfprof record' without -o or with -o X.bpfprof) with their\n"
		 "calls and times, then the call tree by call path.  On a terminal, reading\n"
		 "a big archive shows how far it is (one line, erased; bpfprof -q: none).",
	.tables = (const struct opt_def *const[]){ report_rows, opts_size, report_which_rows,
		opts_read, opts_help, NULL },
	.notes = "columns: total is inclusive time, counted once for recursive functions\n"
		 "(nested activations are inside the outermost one); self excludes traced\n"
		 "callees; avg, min, max, p50, p99 are over single calls (p50/p99 within\n"
		 "3.2%); wall is total as a percentage of the recording's duration.",
};

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct cmd_opts co = { .def = &report_def, .top = &o.top, .depth = &o.depth };
	struct opts_getopt g;
	struct report *rep = NULL;
	struct bp_session s;
	const char *path = DEFAULT_ARCHIVE;
	unsigned long v;
	int c, err = 0;

	session__init(&s);
	opterr = 0;	/* our own messages: one "bpfprof: " line, like every other error */
	opts__getopt(&report_def, "", &g);
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
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
		case OPT_ARGS:
			o.args = optarg;
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
	opts__apply(&co);
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
	err = report__read(rep, path, co.partial, NULL, &s, NULL);
	if (err)
		goto cleanup;	/* the reader or the report said why, in one line */
	err = report__print(rep, &s, stdout);
	/* main() checks stdout and reports the write error */
cleanup:
	opts__free(&co);
	report__free(rep);
	session__free(&s);
	if (err == OPTS_HELP)
		return 0;
	return err ? (err == -EINVAL ? 2 : 1) : 0;
}
