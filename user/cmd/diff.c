// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: compare two recordings (.bpfprof archives), per function and per call
 * path, with the statistics of user/report/diff.c.  Needs no privileges.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive/replay.h"
#include "base/log.h"
#include "base/util.h"
#include "cmds.h"
#include "options.h"
#include "model/session.h"
#include "report/diff.h"

enum {
	OPT_SAMPLE = OPT_OWN, OPT_ALPHA, OPT_MIN_CHANGE, OPT_MIN_CALLS,
	OPT_FAIL_ABOVE, OPT_MIN_TOTAL, OPT_NO_PATHS, OPT_ALL_PATHS, OPT_BASE, OPT_NEW,
	OPT_ALL_CALLS,
};

static const struct opt_def diff_rows[] = {
	{ "format", required_argument, OPT_FORMAT, "FMT",
	  "pretty (default), json, csv (the function table), or\n"
	  "folded (\"stack BASE NEW\" lines: flamegraph.pl's\n"
	  "differential input; self ns per call path, or samples)",
	  "pretty json csv folded" },
	OPT_ARG("base", OPT_BASE, "FILE", "a recording of the base side (repeatable: runs)"),
	OPT_ARG("new", OPT_NEW, "FILE", "a recording of the new side (repeatable: runs)"),
	OPT_FLAG("sample", OPT_SAMPLE, "compare on-cpu stack samples, not traced calls"),
	OPT_FLAG("all-calls", OPT_ALL_CALLS,
		 "test every timed call, not the faster quarter of each\n"
		 "side's (the time other tasks took from a call only\n"
		 "adds)"),
	/* the test */
	OPT_ARG("alpha", OPT_ALPHA, "A", "family-wise error rate of the tests (default 0.05)"),
	OPT_ARG("min-change", OPT_MIN_CHANGE, "PCT",
		"changes of the median per call within +-PCT are not\n"
		"counted as changes (default 2%%; 0: any change)"),
	OPT_ARG("min-calls", OPT_MIN_CALLS, "N",
		"timed calls each side needs for a verdict (default 20;\n"
		"with --sample: samples of a row, both sides together)"),
	/* the gate */
	OPT_ARG("fail-above", OPT_FAIL_ABOVE, "PCT",
		"exit 1 when a function's shift (relative to the whole\n"
		"run's) is significant and above 1+PCT at the lower end\n"
		"of its interval; the offenders are printed on stderr.\n"
		"Exit 0 otherwise"),
	OPT_ARG("min-total", OPT_MIN_TOTAL, "DUR",
		"the gate ignores functions whose total time in NEW is\n"
		"below DUR (default 0)"),
	OPT_END
};

/* what is printed, after the size group */
static const struct opt_def diff_view_rows[] = {
	OPT_FLAG("no-paths", OPT_NO_PATHS, "no call-path view"),
	OPT_FLAG("all-paths", OPT_ALL_PATHS,
		 "every call path, also those whose time moved less than\n"
		 "0.5%% of the traced time"),
	OPT_END
};

const struct cmd_def diff_def = {
	.name = "diff",
	.summary = "compare two recordings: what got slower, per function, and how sure",
	.synopsis = "[options] BASE NEW\n"
		    "[options] BASE1 BASE2 [...] -- NEW1 NEW2 [...]\n"
		    "[options] --base BASE1 --base BASE2 --new NEW1 --new NEW2",
	.about = "Compare two recordings (.bpfprof archives), or several runs of each side:\n"
		 "per function, both sides' calls, total, self and p50/p90/p99 per call, the\n"
		 "change of the median per call with a confidence interval, and whether it is\n"
		 "significant; then the call paths where the time moved.  Functions match by\n"
		 "name and module file name, so two builds, hosts or runs compare.  Recordings\n"
		 "with stack samples only (or with --sample) compare sample shares per function\n"
		 "and per stack.",
	.tables = (const struct opt_def *const[]){ diff_rows, opts_size, diff_view_rows,
		opts_help, NULL },
	.notes = "The whole run's shift (the machine: frequency, load; or a change of\n"
		 "everything) is estimated from all functions and shown on its own line;\n"
		 "each function is tested relative to it (from 4 functions tested).\n"
		 "One recording a side: Mann-Whitney U on log per-call durations (the faster\n"
		 "quarter of a uniform sample of up to 2048 timed calls per function and side),\n"
		 "against the --min-change margin, Holm-corrected over the functions; shift =\n"
		 "Hodges-Lehmann ratio new/base with its (1-alpha) interval.  Several a side\n"
		 "(at least 2 each): the runs are the samples: Welch's t on each run's p12.5 per\n"
		 "call (log), less the run's shift.  Exit status: 0, 1 on --fail-above\n"
		 "offenders or errors, 2 on usage errors.",
};

/* the recordings of each side: [0] base, [1] new */
struct diff_sides {
	char **files[2];
	size_t nfiles[2];
};

/* one option of diff's own (the others go to opts__take) into @o or @sides */
static int diff_take_opt(int c, struct diff_opts *o, struct diff_sides *sides)
{
	unsigned long v;
	char *end;
	int err = 0;

	switch (c) {
	case OPT_FORMAT:
		if (!strcmp(optarg, "pretty")) {
			o->format = DIFF_PRETTY;
		} else if (!strcmp(optarg, "json")) {
			o->format = DIFF_JSON;
		} else if (!strcmp(optarg, "csv")) {
			o->format = DIFF_CSV;
		} else if (!strcmp(optarg, "folded")) {
			o->format = DIFF_FOLDED;
		} else {
			p_err("unknown format '%s': want pretty, json, csv or folded", optarg);
			err = -EINVAL;
		}
		break;
	case OPT_SAMPLE:
		o->mode = DIFF_SAMPLES;
		break;
	case OPT_BASE:
	case OPT_NEW:
		strv_push(&sides->files[c == OPT_NEW], &sides->nfiles[c == OPT_NEW], optarg);
		break;
	case OPT_ALL_CALLS:
		o->all_calls = true;
		break;
	case OPT_ALPHA:
		errno = 0;
		o->alpha = strtod(optarg, &end);
		if (errno || end == optarg || *end || !(o->alpha > 0 && o->alpha < 1)) {
			p_err("invalid --alpha '%s': want a number between 0 and 1", optarg);
			err = -EINVAL;
		}
		break;
	case OPT_MIN_CHANGE:
		err = diff__parse_pct(optarg, &o->min_change);
		if (err)
			p_err("invalid --min-change '%s': want a percentage (2%%, 0.5)", optarg);
		break;
	case OPT_FAIL_ABOVE:
		err = diff__parse_pct(optarg, &o->fail_above);
		if (err)
			p_err("invalid --fail-above '%s': want a percentage (5%%, 10)", optarg);
		break;
	case OPT_MIN_CALLS:
		err = parse_count("--min-calls", optarg, 0, UINT32_MAX, &v);
		if (!err && v < 2) {
			p_err("invalid --min-calls '%s': at least 2", optarg);
			err = -EINVAL;
		}
		o->min_calls = v;
		break;
	case OPT_MIN_TOTAL:
		err = parse_duration(optarg, &o->min_total);
		if (err)
			p_err("invalid --min-total '%s': want a duration (500us, 10ms, 1s)",
			      optarg);
		break;
	case OPT_NO_PATHS:
		o->no_paths = true;
		break;
	case OPT_ALL_PATHS:
		o->all_paths = true;
		break;
	}
	return err;
}

/*
 * The recordings of each side from the operands: BASE NEW, or BASE... -- NEW...
 * (@dashdash: the index of "--", or -1), unless --base/--new named them.
 */
static int diff_operands(int argc, char **argv, int dashdash, struct diff_sides *sides)
{
	size_t i;

	if (dashdash > 0 || !(sides->nfiles[0] || sides->nfiles[1])) {
		if (sides->nfiles[0] || sides->nfiles[1]) {
			p_err("--base/--new, or BASE... -- NEW...: not both");
			return -EINVAL;
		}
		if (dashdash > 0) {
			for (i = optind; i < (size_t)argc; i++)
				strv_push(&sides->files[0], &sides->nfiles[0], argv[i]);
			for (i = dashdash + 1; argv[i]; i++)
				strv_push(&sides->files[1], &sides->nfiles[1], argv[i]);
		} else if (argc - optind == 2) {
			strv_push(&sides->files[0], &sides->nfiles[0], argv[optind]);
			strv_push(&sides->files[1], &sides->nfiles[1], argv[optind + 1]);
		} else {
			p_err("diff compares two recordings, BASE and NEW (or runs of each: BASE... -- "
			      "NEW...); got %d (see 'bpfprof diff --help')", argc - optind);
			return -EINVAL;
		}
	} else if (optind < argc) {
		p_err("--base/--new, or BASE NEW: not both (extra '%s')", argv[optind]);
		return -EINVAL;
	}
	if (!sides->nfiles[0] || !sides->nfiles[1]) {
		p_err("diff needs recordings on both sides: got %zu base and %zu new",
		      sides->nfiles[0], sides->nfiles[1]);
		return -EINVAL;
	}
	return 0;
}

/*
 * Read both sides, compare, print, and gate (--fail-above): *@status 1 when
 * the gate found offenders.  A bad file is -EIO (exit 1, not a usage error).
 */
static int diff_run(const struct diff_opts *o, const struct diff_sides *sides, int *status)
{
	struct diff *d = NULL;
	size_t bad;
	int err;

	err = diff__new(o, &d);
	if (err)
		goto out;
	err = diff__read(d, sides->files[0], sides->nfiles[0], sides->files[1],
			 sides->nfiles[1]);
	if (err) {
		err = -EIO;	/* printed */
		goto out;
	}
	err = diff__compute(d);
	if (err) {
		err = -EIO;
		goto out;
	}
	if (o->fail_above >= 0 && diff__mode(d) != DIFF_CALLS) {
		p_err("--fail-above gates on per-call times: these recordings have stack samples only");
		err = -EIO;
		goto out;
	}
	err = diff__print(d, stdout);
	if (err)
		goto out;	/* main() reports the write error */
	if (o->fail_above >= 0) {
		/* after the table, so a CI log shows the whole picture, then the verdict */
		fflush(stdout);
		bad = diff__gate(d, stderr);
		if (bad) {
			p_err("%zu function%s slower by more than %.4g%% (--fail-above)", bad,
			      bad == 1 ? "" : "s", o->fail_above * 100);
			*status = 1;
		}
	}
out:
	diff__free(d);
	return err;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o;
	struct cmd_opts co = { .def = &diff_def, .top = &o.top, .depth = &o.depth };
	struct opts_getopt g;
	struct diff_sides sides = { { NULL, NULL }, { 0, 0 } };
	int c, err = 0, status = 0, dashdash = -1;

	diff__default_opts(&o);
	/* BASE... -- NEW...: what follows "--" is the new side (getopt sees only what precedes) */
	for (c = 1; c < argc; c++)
		if (!strcmp(argv[c], "--")) {
			dashdash = c;
			break;
		}
	if (dashdash > 0)
		argc = dashdash;
	opts__getopt(&diff_def, "", &g);
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		if (c >= OPT_OWN || c == OPT_FORMAT)
			err = diff_take_opt(c, &o, &sides);
		else	/* -h, getopt's errors */
			err = opts__take(&co, c, argv);
		if (err)
			goto cleanup;
	}
	err = diff_operands(argc, argv, dashdash, &sides);
	if (err)
		goto cleanup;
	if (o.fail_above >= 0 && o.mode == DIFF_SAMPLES) {
		p_err("--fail-above gates on per-call times: it needs traced calls, not --sample");
		err = -EINVAL;
		goto cleanup;
	}
	err = diff_run(&o, &sides, &status);
cleanup:
	free(sides.files[0]);
	free(sides.files[1]);
	if (err == OPTS_HELP)
		return 0;
	return err ? (err == -EINVAL ? 2 : 1) : status;
}
