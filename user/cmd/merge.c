// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* merge: options; the merging itself is user/archive/merge.c. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "options.h"
#include "archive/merge.h"
#include "base/log.h"
#include "exporters/exporter.h"

static void usage(FILE *f, const char *cmd)
{
	(void)cmd;
	fprintf(f, "usage: bpfprof merge -o OUT [--format FMT] FILE...\n\n"
		   "Merge archives (runs, hosts) into one recording on one time axis (wall\n"
		   "clock).  The output format follows OUT's name (.bpfprof: an archive) or\n"
		   "--format.  A pid that two inputs share is renumbered in the later one,\n"
		   "and its process name keeps the original: \"name (host:pid)\".\n\n"
		   "options:\n"
		   "  -o, --output OUT   output file ('-': standard output)\n"
		   "      --format FMT   output format, overriding the name\n"
		   "  -q, --quiet        no summary line\n"
		   "  -h, --help         this help\n");
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		OPTS_OUTPUT_LONGOPTS
		OPTS_COMMON_LONGOPTS
		{ NULL },
	};
	struct cmd_opts o = { .cmd = "merge", .usage = usage };
	struct exporter_sink x = { 0 };
	struct bp_session s;
	int c, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qvh", longopts, NULL)) != -1) {
		err = opts__take(&o, c, argv);
		if (err)
			return err > 0 ? 0 : 2;
	}
	x.ops = opts__output(&o);
	if (!x.ops)
		return 2;
	x.out = o.output;
	if (optind >= argc) {
		p_err("merge needs at least one archive");
		return 2;
	}
	err = merge__run((const char *const *)argv + optind, argc - optind, &s,
			 exporter__sink_begin, exporter__sink_event, &x);
	if (!err)
		err = exporter__finish(x.e, &s);
	exporter__free(x.e);
	session__free(&s);
	if (!err && strcmp(o.output, "-"))
		p_info("merged %d recordings into %s", argc - optind, o.output);
	return err ? 1 : 0;
}
