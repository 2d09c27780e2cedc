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

const struct cmd_def merge_def = {
	.name = "merge",
	.summary = "merge recordings of several runs or hosts on one time axis",
	.synopsis = "-o OUT [--format FMT] FILE...",
	.about = "Merge archives (runs, hosts) into one recording on one time axis (wall\n"
		 "clock).  The output format follows OUT's name (.bpfprof: an archive) or\n"
		 "--format.  A pid that two inputs share is renumbered in the later one,\n"
		 "and its process name keeps the original: \"name (host:pid)\".\n"
		 "On a terminal, reading big archives shows how far it is (one line).",
	.tables = (const struct opt_def *const[]){ opts_output, opts_quiet, opts_help, NULL },
	.formats = true,
};

int cmd_merge(int argc, char **argv)
{
	struct cmd_opts o = { .def = &merge_def };
	struct opts_getopt g;
	struct exporter_sink x = { 0 };
	struct bp_session s;
	int c, err;

	opts__getopt(&merge_def, "", &g);
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
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
		p_info("merged %d recording%s into %s", argc - optind, argc - optind == 1 ? "" : "s",
		       o.output);
	return err ? 1 : 0;
}
