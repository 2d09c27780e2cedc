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

static void usage(FILE *f, const char *cmd)
{
	(void)cmd;
	fprintf(f, "usage: bpfprof convert -o OUT [options] [FILE]\n\n"
		   "Write the recording FILE (default " DEFAULT_ARCHIVE ") in another format.\n\n"
		   "options:\n"
		   "  -o, --output OUT   output file ('-': standard output); format from its name\n"
		   "      --format FMT   output format, overriding the name\n"
		   "      --min-time DUR leave calls shorter than DUR out (e.g. 100us, 2ms)\n"
		   "  -p, --pid PID[,PID]  only these processes (repeatable)\n"
		   "  -t, --tid TID[,TID]  only these threads (repeatable)\n"
		   "      --partial      read an unfinished recording (bpfprof was killed: its\n"
		   "                     OUT.tmp.PID.XXXXXX) up to its last complete block\n"
		   "  -q, --quiet        no summary line\n"
		   "  -h, --help         this help\n");
	opts__formats_help(f);
}

/* Returns 0, 1 for --help, or -EINVAL. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	static const struct option longopts[] = {
		OPTS_OUTPUT_LONGOPTS
		OPTS_FILTER_LONGOPTS
		OPTS_READ_LONGOPTS
		OPTS_COMMON_LONGOPTS
		{ NULL },
	};
	int c, err;

	o->cmd = (struct cmd_opts){ .cmd = "convert", .usage = usage, .filter = &o->filter };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:p:t:qvh", longopts, NULL)) != -1) {
		err = opts__take(&o->cmd, c, argv);
		if (err)
			return err == -ENOENT ? -EINVAL : err;
	}
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

	err = exporter__replay(o->input, &o->filter, o->ops, o->cmd.output, &nout);
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
	return err;
}
