// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* merge: options; the merging itself is user/archive/merge.c. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "archive/merge.h"
#include "base/log.h"
#include "exporters/exporter.h"

static void usage(FILE *f)
{
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
	enum { OPT_FORMAT = 256 };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	const char *output = NULL, *format = NULL;
	const struct exporter_ops *ops;
	int c, err;

	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_FORMAT:
			format = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "see 'bpfprof merge --help'\n");
			return 2;
		}
	}
	if (!output) {
		p_err("merge needs -o OUT ('-' for standard output)");
		return 2;
	}
	if (optind >= argc) {
		p_err("merge needs at least one archive");
		return 2;
	}
	ops = exporter__choose(format, output, "merge");
	if (!ops)
		return 2;

	err = merge__run((const char *const *)argv + optind, argc - optind, ops, output);
	if (!err && strcmp(output, "-"))
		p_info("merged %d recordings into %s", argc - optind, output);
	return err ? 1 : 0;
}
