/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * diff: what changed between two recordings (base and new), per function and
 * per call path, with the statistics to tell a real change from noise.
 *
 * Functions are matched by name and module file name (not by id, address or
 * pid), so two builds of one program, two hosts or two runs compare; call
 * paths by the chain of those (function, module) pairs from the outermost
 * traced call.  Both sides intern into the same tables while they stream.
 *
 * Memory is bounded by distinct functions and paths: per function and side a
 * fixed set of counters and a reservoir of at most RESERVOIR_MAX per-call
 * durations (stats.h), per path and side four counters.  Nothing grows with
 * the number of calls or samples.
 *
 * Calls mode compares per-call durations, the faster quarter of each side's
 * (the time other tasks took only adds), relative to the whole run's shift
 * (the weighted median of the functions' shifts: the machine).  One
 * recording a side: Mann-Whitney U on log durations, against a margin
 * (--min-change: a change smaller than it is not counted as one),
 * Holm-corrected over the functions tested, with the Hodges-Lehmann ratio
 * and its confidence interval.  Several a side (diff__side_done() once per
 * recording): the runs are the samples, Welch's t on each run's p12.5.
 * Sample mode compares shares of stack samples per function and per stack
 * (two-proportion test, Holm).
 */
#ifndef BPFPROF_DIFF_H
#define BPFPROF_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/session.h"

struct diff;

enum diff_format {
	DIFF_PRETTY,
	DIFF_JSON,
	DIFF_CSV,
	DIFF_FOLDED,	/* FlameGraph difffolded input: "a;b;c BASE NEW" per stack */
};

enum diff_mode {
	DIFF_AUTO,	/* calls when both sides have calls, else samples when both have samples */
	DIFF_CALLS,
	DIFF_SAMPLES,
};

struct diff_opts {
	enum diff_format format;
	enum diff_mode mode;
	double alpha;		/* family-wise error rate, 0.05 */
	double min_change;	/* fraction: per-call changes within +-this are not counted */
	uint64_t min_calls;	/* per side, for a verdict; also samples per row in sample mode */
	double fail_above;	/* fraction; < 0: no gate */
	uint64_t min_total;	/* ns: the gate ignores functions whose new total is below */
	size_t top;		/* rows of the tables, 0: all */
	uint32_t depth;		/* levels of the path view, 0: all */
	bool no_paths;		/* no call-path view */
	bool all_paths;		/* every path, not only those where time moved */
	bool all_calls;		/* test every timed call, not the faster quarter of each side */
};

/* Defaults: alpha 0.05, min_change 2%, min_calls 20, no gate. */
void diff__default_opts(struct diff_opts *o);

int diff__new(const struct diff_opts *o, struct diff **out);
/*
 * One event of side 0 (base) or 1 (new), read from the session s (complete
 * enough for the event: the archive defines functions and paths before the
 * events naming them).  0, or -EBADMSG for an event naming an unknown
 * function or path.  Touches only that side's state: the two sides may be
 * read at the same time in two threads.
 */
int diff__add(struct diff *d, int side, const struct bp_session *s, const struct bp_event *ev);
/*
 * After the last event of a recording of a side, with its complete session:
 * matches its functions and paths by name into the tables both sides share
 * (under the diff's lock: the other side's thread may read on, or fold at
 * the same time), keeps the recording's own estimate per function (the test
 * across runs) and its header (name shown, command, duration).  A side may
 * get several recordings, one after the other (runs).  0, or -EBADMSG for a
 * path table that is not a tree.
 */
int diff__side_done(struct diff *d, int side, const struct bp_session *s, const char *label);
/*
 * Picks the mode and runs the statistics.  -EINVAL with a message when the
 * recordings cannot be compared (no calls on one side only, no samples with
 * --sample, nothing at all, several recordings on one side and one on the
 * other).
 */
int diff__compute(struct diff *d);
/* The tables in opts->format.  0 or -EIO. */
int diff__print(struct diff *d, FILE *f);
/*
 * The --fail-above gate: the functions whose per-call time rose
 * significantly, relative to the whole run's, and by more than
 * opts->fail_above (the lower end of the shift's confidence interval above
 * 1 + fail_above), with a new total of at least min_total; each printed on
 * f as one line, the shift beside its interval.  Returns how many.
 */
size_t diff__gate(struct diff *d, FILE *f);
/* Which mode diff__compute() chose. */
enum diff_mode diff__mode(const struct diff *d);
void diff__free(struct diff *d);
/*
 * Recordings into the two sides (read.c): base[0..nbase) the base side's,
 * new[0..nnew) the new side's (one recording each, or several runs each),
 * the two sides read at once in two threads.  0 or -errno (printed).
 */
int diff__read(struct diff *d, char **base, size_t nbase, char **new, size_t nnew);

/* "5", "5%", "0.5%" -> 0.05, 0.005; 0 or -EINVAL (negative, not a number). */
int diff__parse_pct(const char *arg, double *out);

#endif
