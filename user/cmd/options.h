/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The options several commands share, parsed and described in one place so
 * that `-F`, `--buffer-size` or `-o` mean the same thing, take the same
 * values and fail with the same message in record, attach, serve, convert
 * and merge.  A command's getopt loop offers each option to opts__take()
 * first and handles only what it returns -ENOENT for; its long option table
 * includes the OPTS_*_LONGOPTS rows of the groups it takes.
 */
#ifndef BPFPROF_OPTIONS_H
#define BPFPROF_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include "capture/capture.h"
#include "model/filter.h"

/* Long-only option values of the shared groups; a command's own start at OPT_OWN. */
enum {
	OPT_FORMAT = 256, OPT_MIN_TIME, OPT_PARTIAL,
	OPT_BUFFER, OPT_NO_FOLLOW, OPT_NO_SKIP_ENDBR, OPT_DEBUG_DIR, OPT_NO_COMP, OPT_COMP,
	OPT_MAX_OVH,
	OPT_DEPTH,
	OPT_OWN = 320,
};

/* A command's own long options: with a value, without. */
#define OPT_ARG(name, val)	{ name, required_argument, NULL, val }
#define OPT_FLAG(name, val)	{ name, no_argument, NULL, val }

/* -q -v -h: every command. */
#define OPTS_COMMON_LONGOPTS \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "help", no_argument, NULL, 'h' }
/* -o and --format: commands that write one output. */
#define OPTS_OUTPUT_LONGOPTS \
	{ "output", required_argument, NULL, 'o' }, \
	{ "format", required_argument, NULL, OPT_FORMAT }
/* What the probes trace and how: record, attach, serve. */
#define OPTS_CAPTURE_LONGOPTS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "function", required_argument, NULL, 'F' }, \
	{ "exclude", required_argument, NULL, 'N' }, \
	{ "buffer-size", required_argument, NULL, OPT_BUFFER }, \
	{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW }, \
	{ "no-skip-endbr", no_argument, NULL, OPT_NO_SKIP_ENDBR }, \
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR }, \
	{ "no-compensation", no_argument, NULL, OPT_NO_COMP }, \
	{ "compensate", no_argument, NULL, OPT_COMP }, \
	{ "max-overhead", required_argument, NULL, OPT_MAX_OVH }
/* Which events of a recording: convert. */
#define OPTS_FILTER_LONGOPTS \
	{ "min-time", required_argument, NULL, OPT_MIN_TIME }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "tid", required_argument, NULL, 't' }

/* How much of a table and a tree to print: report, diff. */
#define OPTS_SIZE_LONGOPTS \
	{ "top", required_argument, NULL, 'n' }, \
	{ "depth", required_argument, NULL, OPT_DEPTH }

struct cmd_opts {
	const char *cmd;		/* "record", ...: named in messages */
	void (*usage)(FILE *f, const char *cmd);	/* -h */
	const char *output, *format;	/* -o, --format */
	struct capture_opts *capture;	/* the capture group, or NULL */
	struct event_filter *filter;	/* the filter group, or NULL */
	uint64_t *min_time;		/* --min-time alone (record), or NULL */
	size_t *top;			/* -n/--top N (0: all), or NULL */
	uint32_t *depth;		/* --depth N (0: all), or NULL */
};

#define OPTS_HELP	1	/* opts__take(): --help was printed, exit 0 */

/*
 * Takes getopt_long's `c` (with opterr = 0 and a leading ':' in the short
 * option string) if it is a shared option.  Returns 0 (taken), OPTS_HELP,
 * -EINVAL (printed) or -ENOENT (not a shared option: an error in `default:`).
 */
int opts__take(struct cmd_opts *o, int c, char **argv);
/* The buffer size is the capture's default when none is given. */
void opts__capture_defaults(struct capture_opts *co, uint64_t buffer_size);

/* An output is needed: -o given, and a format (--format or the name) known. */
const struct exporter_ops *opts__output(const struct cmd_opts *o);

/* The help lines of the shared groups, in the commands' column layout. */
void opts__capture_help(FILE *f, const char *buffer_default, const char *overhead_default);
void opts__common_help(FILE *f);
void opts__formats_help(FILE *f);

#endif
