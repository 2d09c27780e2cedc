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

/*
 * The shared groups as data: one row an option, X(long name, getopt's
 * argument kind, value: a short letter or an OPT_*, the function that parses
 * it (options.c), its --help lines: NULL where each command describes it in
 * its own layout).  getopt's rows (OPTS_<GROUP>_LONGOPTS, in a command's
 * table), the parsing (opts__take: every row of that value, until one takes
 * it) and the shared help (opts__capture_help, opts__common_help, in the
 * rows' order) all come from these rows.  A parser leaves an option whose
 * group the command did not ask for (cmd_opts) to the next row.
 */
/* -q -v -h: every command. */
#define OPTS_COMMON_ROWS(X) \
	X("quiet", no_argument, 'q', take_quiet, \
	  "  -q, --quiet            no summary\n") \
	X("verbose", no_argument, 'v', take_verbose, \
	  "  -v, --verbose          more messages (twice: libbpf debug)\n") \
	X("help", no_argument, 'h', take_help, \
	  "  -h, --help             this help\n")
/* -o and --format: commands that write one output. */
#define OPTS_OUTPUT_ROWS(X) \
	X("output", required_argument, 'o', take_output, NULL) \
	X("format", required_argument, OPT_FORMAT, take_format, NULL)
/* --partial: commands that read a recording. */
#define OPTS_READ_ROWS(X) \
	X("partial", no_argument, OPT_PARTIAL, take_partial, NULL)
/*
 * What the probes trace and how: record, attach, serve.  Help that shows a
 * default takes it as its %s: the command's buffer size, its --max-overhead.
 */
#define OPTS_CAPTURE_ROWS(X) \
	X("function", required_argument, 'F', cap_function, \
	  "  -F, --function GLOB    trace functions of the main executable matching GLOB\n" \
	  "  -F LIB:GLOB            ... of the ELF files whose file name matches LIB\n" \
	  "                         (libraries, also dlopen'd later, and the executable),\n" \
	  "                         e.g. -F 'libc.so*:malloc'\n" \
	  "  -F py:[FILE:]QUALNAME  Python functions of a CPython target, e.g.\n" \
	  "                         -F 'py:handle_*', -F 'py:app.py:Server.*'\n") \
	X("exclude", required_argument, 'N', cap_exclude, \
	  "  -N, --exclude [LIB:|py:]GLOB  do not trace these (wins over -F)\n" \
	  "                         default: every function of the main executable;\n" \
	  "                         for CPython (python3.11), its Python functions\n") \
	X("buffer-size", required_argument, OPT_BUFFER, cap_buffer_size, \
	  "      --buffer-size SIZE ring buffer size (default %s; more = fewer losses)\n") \
	X("no-follow", no_argument, OPT_NO_FOLLOW, cap_no_follow, \
	  "      --no-follow        do not trace processes forked by the targets\n") \
	X("no-skip-endbr", no_argument, OPT_NO_SKIP_ENDBR, cap_no_skip_endbr, \
	  "      --no-skip-endbr    probe each function's first instruction, not the first\n" \
	  "                         emulated one past endbr64 or a harmless prefix\n") \
	X("compensate", no_argument, OPT_COMP, cap_compensate, \
	  "      --compensate       take the probes' own cost out of every call and its\n" \
	  "                         parents (calibrated, then measured in each traced\n" \
	  "                         process as it runs); default: the raw clock\n" \
	  "                         (--no-compensation)\n") \
	X("no-compensation", no_argument, OPT_NO_COMP, cap_no_compensation, NULL) \
	X("max-overhead", required_argument, OPT_MAX_OVH, cap_max_overhead, \
	  "      --max-overhead PCT keep the probes' estimated slowdown of the traced\n" \
	  "                         processes under PCT percent (100: at most twice as\n" \
	  "                         slow) by dropping first the functions whose calls\n" \
	  "                         last about their probe's own cost; they are named in\n" \
	  "                         the summary, /metrics and every output (CPython's\n" \
	  "                         probes, which fire for dropped functions too, are\n" \
	  "                         detached when they alone pass the limit)\n" \
	  "                         (default: %s; 'off': exact)\n") \
	X("debug-dir", required_argument, OPT_DEBUG_DIR, cap_debug_dir, \
	  "      --debug-dir DIR    also look for debug files (names for stripped\n" \
	  "                         binaries) in DIR, as in /usr/lib/debug; repeatable\n") \
	X("pid", required_argument, 'p', cap_pid, NULL)
/* Which events of a recording: convert (and --min-time alone: record). */
#define OPTS_FILTER_ROWS(X) \
	X("min-time", required_argument, OPT_MIN_TIME, take_min_time, NULL) \
	X("pid", required_argument, 'p', take_filter_pid, NULL) \
	X("tid", required_argument, 't', take_filter_tid, NULL)
/* How much of a table and a tree to print: report, diff. */
#define OPTS_SIZE_ROWS(X) \
	X("top", required_argument, 'n', take_top, NULL) \
	X("depth", required_argument, OPT_DEPTH, take_depth, NULL)

/* getopt_long's rows of a group, each followed by a comma. */
#define OPTS_ROW_LONGOPT(name, has_arg, val, take, help)	{ name, has_arg, NULL, val },
#define OPTS_COMMON_LONGOPTS	OPTS_COMMON_ROWS(OPTS_ROW_LONGOPT)
#define OPTS_OUTPUT_LONGOPTS	OPTS_OUTPUT_ROWS(OPTS_ROW_LONGOPT)
#define OPTS_READ_LONGOPTS	OPTS_READ_ROWS(OPTS_ROW_LONGOPT)
#define OPTS_CAPTURE_LONGOPTS	OPTS_CAPTURE_ROWS(OPTS_ROW_LONGOPT)
#define OPTS_FILTER_LONGOPTS	OPTS_FILTER_ROWS(OPTS_ROW_LONGOPT)
#define OPTS_SIZE_LONGOPTS	OPTS_SIZE_ROWS(OPTS_ROW_LONGOPT)

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
/* Frees the lists of the capture options: -p, -F, -N, and record's -U. */
void opts__capture_free(struct capture_opts *co);

/* An output is needed: -o given, and a format (--format or the name) known. */
const struct exporter_ops *opts__output(const struct cmd_opts *o);

/* The help lines of the shared groups, in the commands' column layout. */
void opts__capture_help(FILE *f, const char *buffer_default, const char *overhead_default);
void opts__common_help(FILE *f);
void opts__formats_help(FILE *f);

#endif
