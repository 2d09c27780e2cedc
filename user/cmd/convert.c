// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * convert: replay a .bpfprof archive into any output format, optionally only
 * some processes/threads and only calls of at least --min-time.  The archive
 * streams through the exporter, so memory stays bounded by the tables.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive/archive.h"
#include "archive/replay.h"
#include "cmds.h"
#include "options.h"
#include "exporters/exporter.h"
#include "base/log.h"
#include "model/session.h"
#include "base/util.h"

#define DEFAULT_ARCHIVE "bpfprof.data"

struct convert_opts {
	struct cmd_opts cmd;		/* -o, --format, --partial, -q, -h */
	const struct exporter_ops *ops;	/* from -o/--format */
	const char *input;
	struct event_filter filter;	/* --min-time, --pid, --tid */
};

const struct cmd_def convert_def = {
	.name = "convert",
	.summary = "write a recording (.bpfprof archive) in another format",
	.synopsis = "-o OUT [options] [FILE]",
	.about = "Write the recording FILE (default " DEFAULT_ARCHIVE ") in another format.\n"
		 "On a terminal, reading a big archive shows how far it is (one line).",
	.tables = (const struct opt_def *const[]){ opts_output, opts_min_time, opts_filter,
		opts_read, opts_quiet, opts_help, NULL },
	.formats = true,
};

/* Returns 0, 1 for --help, or -EINVAL. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	struct opts_getopt g;
	int c, err;

	o->cmd = (struct cmd_opts){ .def = &convert_def, .filter = &o->filter };
	opts__getopt(&convert_def, "", &g);
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		err = opts__take(&o->cmd, c, argv);
		if (err)
			return err == -ENOENT ? -EINVAL : err;
	}
	opts__apply(&o->cmd);
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc) {
		p_err("convert takes one archive, not '%s' too (to combine archives: bpfprof merge)",
		      argv[optind]);
		return -EINVAL;
	}
	if (!o->input)
		o->input = DEFAULT_ARCHIVE;
	o->ops = opts__output(&o->cmd);
	return o->ops ? 0 : -EINVAL;
}

static int convert(const struct convert_opts *o)
{
	uint64_t nout = 0;
	int err;

	err = exporter__replay(o->input, o->cmd.partial, &o->filter, o->ops, o->cmd.output, &nout);
	if (!err && strcmp(o->cmd.output, "-"))
		p_info("wrote %s (%" PRIu64 " events)", o->cmd.output, nout);
	return err;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_opts o = { 0 };
	int err;

	err = parse_args(argc, argv, &o);
	if (err)
		err = err > 0 ? 0 : 2;
	else
		err = convert(&o) ? 1 : 0;
	filter__free(&o.filter);
	opts__free(&o.cmd);
	return err;
}
