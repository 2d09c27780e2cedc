// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * symbolize: a recording named after the fact, from the debug files of its
 * modules' build-ids (symbols/resymbolize.c), copied through the merge
 * loop (archive/merge.c), which shares the functions renamed alike.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "options.h"
#include "archive/merge.h"
#include "base/log.h"
#include "exporters/exporter.h"
#include "symbols/debugsyms.h"
#include "symbols/resymbolize.h"

const struct cmd_def symbolize_def = {
	.name = "symbolize",
	.summary = "name what a recording could not: functions, sample frames, arguments",
	.synopsis = "[--debug-dir DIR] [--debuginfod URL] -o OUT [--format FMT] IN.bpfprof",
	.about = "Name the functions of a recording made where their debug files were\n"
		 "missing (FILE+0xADDR functions, \"[unknown] FILE+0xOFFSET\" sample\n"
		 "frames), and give every function its definition file:line and typed\n"
		 "signature, from the debug file of each module's build-id: in the\n"
		 "--debug-dir directories and /usr/lib/debug (DIR/.build-id/xx/yyyy.debug,\n"
		 "or by the module's path: DIR/PATH.debug, DIR/NAME.debug, DIR/NAME, of the\n"
		 "same build-id), then from debuginfod (--debuginfod or DEBUGINFOD_URLS).\n"
		 "The output is a new recording (.bpfprof) or any other format; every\n"
		 "exporter, report and diff then see the names.  Recordings made before format 1.4 keep no\n"
		 "build-ids: nothing in them can be named.",
	.tables = (const struct opt_def *const[]){ opts_output, opts_debug, opts_quiet, opts_help,
						    NULL },
	.formats = true,
};

struct rename {
	const struct debug_conf *debug;
	struct resymbolize_stats *st;
};

static void rename_tables(void *ctx, struct bp_session *in)
{
	struct rename *r = ctx;

	resymbolize__session(in, r->debug, r->st);
}

int symbolize__run(const char *in, const char *out, const struct exporter_ops *ops,
		   const struct debug_conf *debug, struct resymbolize_stats *st)
{
	struct exporter_sink x = { .ops = ops, .out = out };
	struct rename r = { .debug = debug, .st = st };
	struct bp_session s;
	int err;

	err = merge__run_tables(&in, 1, &s, rename_tables, &r, exporter__sink_begin,
				exporter__sink_event, &x);
	if (!err)
		err = exporter__finish(x.e, &s);
	exporter__free(x.e);
	session__free(&s);
	return err;
}

int cmd_symbolize(int argc, char **argv)
{
	struct cmd_opts o = { .def = &symbolize_def };
	struct resymbolize_stats st = { 0 };
	const struct exporter_ops *ops;
	struct opts_getopt g;
	int c, err;

	opts__getopt(&symbolize_def, "", &g);
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		err = opts__take(&o, c, argv);
		if (err)
			return err > 0 ? 0 : 2;
	}
	ops = opts__output(&o);
	if (!ops)
		return 2;
	if (optind != argc - 1) {
		p_err("symbolize needs one recording (see 'bpfprof symbolize --help')");
		return 2;
	}
	err = symbolize__run(argv[optind], o.output, ops, &o.debug, &st);
	debugsyms__reset();
	opts__free(&o);
	if (!err && strcmp(o.output, "-"))
		p_info("named %zu functions and frames, described %zu, from the debug files of %zu "
		       "modules%s; wrote %s", st.named, st.described, st.modules,
		       st.missing ? " (some had none: warned above)" : "", o.output);
	return err ? 1 : 0;
}
