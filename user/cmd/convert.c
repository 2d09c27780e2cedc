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
#include "exporters/exporter.h"
#include "base/log.h"
#include "model/session.h"
#include "base/util.h"

#define DEFAULT_ARCHIVE "bpfprof.data"

struct convert_opts {
	const char *input;
	const char *output;
	const char *format;
	struct event_filter filter;	/* --min-time, --pid, --tid */
};

static void usage(FILE *f)
{
	size_t i;

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
		   "  -h, --help         this help\n\noutput formats:\n");
	for (i = 0; exporter_table[i]; i++)
		fprintf(f, "  %-10s %-18s %s\n", exporter_table[i]->name,
			exporter_table[i]->suffix ? exporter_table[i]->suffix : "",
			exporter_table[i]->help);
}

/* Returns 0, 1 for --help, or -EINVAL. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	enum { OPT_FORMAT = 256, OPT_MIN_TIME, OPT_PARTIAL };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:p:t:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = optarg;
			break;
		case OPT_PARTIAL:
			archive__accept_unfinished(true);
			break;
		case OPT_MIN_TIME:
			if (parse_duration(optarg, &o->filter.min_time)) {
				p_err("invalid --min-time '%s' (e.g. 100us, 2ms)", optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			if (parse_ids("--pid", optarg, &o->filter.pids, &o->filter.npids))
				return -EINVAL;
			break;
		case 't':
			if (parse_ids("--tid", optarg, &o->filter.tids, &o->filter.ntids))
				return -EINVAL;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "see 'bpfprof convert --help'\n");
			return -EINVAL;
		}
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
	if (!o->output) {
		p_err("convert needs -o OUT ('-' for standard output)");
		return -EINVAL;
	}
	return 0;
}

static int convert(const struct convert_opts *o)
{
	const struct exporter_ops *ops;
	uint64_t nout = 0;
	int err;

	ops = exporter__choose(o->format, o->output, "convert");
	if (!ops)
		return -EINVAL;
	err = replay__export(o->input, &o->filter, ops, o->output, &nout);
	if (!err && strcmp(o->output, "-"))
		p_info("wrote %s (%" PRIu64 " events)", o->output, nout);
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
