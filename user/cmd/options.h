/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Options as data.  Every option of every command is one row (struct
 * opt_def) in exactly one table: a shared group below (options.c: -F,
 * --buffer-size, -o mean the same thing, take the same values and fail with
 * the same message in record, attach, serve, convert and merge) or a
 * command's own table (user/cmd/<command>.c).  A command is a struct
 * cmd_def: its synopsis, its prose and its tables in --help's order.  From
 * it come getopt_long's rows and short-option string (opts__getopt), the
 * --help text (opts__usage), the man page (opts__man, `make man`) and the
 * list shell completion reads (opts__list): help, man page and parser
 * cannot disagree.
 *
 * Parsing: a row with a `take` function (the shared groups) is parsed by
 * opts__take(); a command's getopt loop handles its own rows (take NULL) in
 * its switch and offers every other value to opts__take() in `default:`.
 */
#ifndef BPFPROF_OPTIONS_H
#define BPFPROF_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include "capture/capture.h"
#include "model/filter.h"
#include "symbols/debugsyms.h"

/* Long-only option values of the shared groups; a command's own start at OPT_OWN. */
enum {
	OPT_FORMAT = 256, OPT_MIN_TIME, OPT_PARTIAL,
	OPT_BUFFER, OPT_NO_FOLLOW, OPT_NO_SKIP_ENDBR, OPT_DEBUG_DIR, OPT_NO_COMP, OPT_COMP,
	OPT_MAX_OVH,
	OPT_DEPTH, OPT_DEBUGINFOD, OPT_DEBUGINFOD_TIMEOUT,
	OPT_OWN = 320,
};

struct cmd_opts;

/* One option. */
struct opt_def {
	const char *name;	/* long name ("output") */
	int has_arg;		/* getopt's no_argument, required_argument, optional_argument */
	int val;		/* its short letter, or an OPT_* (long only) */
	const char *arg;	/* the value's name in help ("FILE"), NULL without one */
	/*
	 * Help: lines of at most ~52 columns separated by '\n' (--help keeps
	 * them, the man page joins them).  "%s": the command's default for it
	 * (cmd_def.dflt).
	 */
	const char *help;
	/* What the value may be, for completion: words, or "@formats" (the exporters) */
	const char *values;
	/* The shared groups' parser: 0, OPTS_HELP, -EINVAL (printed); NULL: the command's */
	int (*take)(struct cmd_opts *o, const char *arg);
};

#define OPT_END		{ NULL }
/* A command's own rows: with a value (named `arg`), without one. */
#define OPT_ARG(name, val, arg, help)	{ name, required_argument, val, arg, help }
#define OPT_FLAG(name, val, help)	{ name, no_argument, val, NULL, help }

/* The shared groups, each ending with OPT_END (options.c). */
extern const struct opt_def opts_help[];	/* -h: every command */
extern const struct opt_def opts_quiet[];	/* -q, -v */
extern const struct opt_def opts_output[];	/* -o, --format: one output file */
extern const struct opt_def opts_read[];	/* --partial: commands that read a recording */
extern const struct opt_def opts_capture[];	/* what the probes trace and how */
extern const struct opt_def opts_targets[];	/* -p: the running processes (attach, serve) */
extern const struct opt_def opts_debug[];	/* --debug-dir, --debuginfod */
extern const struct opt_def opts_min_time[];	/* --min-time: no short calls in the output */
extern const struct opt_def opts_filter[];	/* -p, -t: which events (convert) */
extern const struct opt_def opts_size[];	/* -n, --depth: how much of a table and tree */

/* A command. */
struct cmd_def {
	const char *name;	/* "record" */
	const char *summary;	/* one line, bpfprof --help and the man page's NAME */
	const char *synopsis;	/* lines after "bpfprof NAME ", '\n' between forms */
	const char *about;	/* paragraphs ("\n\n" between them) */
	const struct opt_def *const *tables;	/* in --help's order, NULL-terminated */
	/* The text of a "%s" in a row's help: its default in this command. */
	const char *(*dflt)(int val);
	const char *notes;	/* after the options, or NULL */
	bool formats;		/* the output formats' table after the options */
};


struct cmd_opts {
	const struct cmd_def *def;	/* -h prints its help; its name in messages */
	const char *output, *format;	/* -o, --format */
	struct capture_opts *capture;	/* the capture group, or NULL */
	struct event_filter *filter;	/* the filter group, or NULL */
	uint64_t *min_time;		/* --min-time alone (record), or NULL */
	size_t *top;			/* -n/--top N (0: all), or NULL */
	uint32_t *depth;		/* --depth N (0: all), or NULL */
	/* fields the command hands down (not globals written while parsing) */
	struct debug_conf debug;	/* --debug-dir, --debuginfod, --debuginfod-timeout */
	bool partial;			/* --partial */
};

#define OPTS_HELP	1	/* opts__take(): --help was printed, exit 0 */
#define OPTS_MAX	64	/* options of one command */

/* getopt_long's rows and short options of a command; `mode` ("+", "") leads. */
struct opts_getopt {
	struct option longopts[OPTS_MAX + 1];
	char shortopts[2 * OPTS_MAX + 4];
};
void opts__getopt(const struct cmd_def *d, const char *mode, struct opts_getopt *g);

/*
 * Takes getopt_long's `c` (with opterr = 0 and a ':' in the short option
 * string) if it is a shared option.  Returns 0 (taken), OPTS_HELP, -EINVAL
 * (printed) or -ENOENT (not a shared option: an error in `default:`).
 */
int opts__take(struct cmd_opts *o, int c, char **argv);
/*
 * The capture group (if any) given the debug field (--debug-dir,
 * --debuginfod): capture__new hands it to the symbol reader.
 */
void opts__apply(const struct cmd_opts *o);
void opts__free(struct cmd_opts *o);
/* The buffer size is the capture's default when none is given. */
void opts__capture_defaults(struct capture_opts *co, uint64_t buffer_size);

/* An output is needed: -o given, and a format (--format or the name) known. */
const struct exporter_ops *opts__output(const struct cmd_opts *o);

/* --help; the man page (roff); the options one a line: "--name\t-c\tARG\tvalues". */
void opts__usage(const struct cmd_def *d, FILE *f);
void opts__man(const struct cmd_def *d, const char *version, FILE *f);
void opts__list(const struct cmd_def *d, FILE *f);
/* One option's --help lines. */
void opts__help_row(FILE *f, const struct opt_def *r, const char *help);
/* bpfprof(1): the commands (NULL-terminated) and bpfprof's own options (before a command). */
void opts__man_overview(const char *version, const struct cmd_def *const *defs,
			const struct opt_def *global, FILE *f);

#endif
