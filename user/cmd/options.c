// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The options several commands share (options.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "options.h"
#include "base/log.h"
#include "archive/archive.h"
#include "base/util.h"
#include "exporters/exporter.h"
#include "cost/governor.h"
#include "symbols/debugsyms.h"

/*
 * The parsers of the rows (options.h): 0, OPTS_HELP, -EINVAL (printed), or
 * -ENOENT when the command did not ask for the option's group.
 */
static int take_quiet(struct cmd_opts *o, const char *arg)
{
	quiet = true;
	return 0;
}

static int take_verbose(struct cmd_opts *o, const char *arg)
{
	verbose++;
	return 0;
}

static int take_help(struct cmd_opts *o, const char *arg)
{
	o->usage(stdout, o->cmd);
	return OPTS_HELP;
}

static int take_output(struct cmd_opts *o, const char *arg)
{
	o->output = arg;
	return 0;
}

static int take_format(struct cmd_opts *o, const char *arg)
{
	o->format = arg;
	return 0;
}

static int take_partial(struct cmd_opts *o, const char *arg)
{
	archive__accept_unfinished(true);
	return 0;
}

/* The capture group, when the command has one; its parsers' errors are printed. */
#define CAPTURE_OR_ENOENT(o)	do { if (!(o)->capture) return -ENOENT; } while (0)
#define EINVAL_IF(err)		((err) ? -EINVAL : 0)

static int cap_pid(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	return EINVAL_IF(parse_pids(arg, &o->capture->pids, &o->capture->npids));
}

static int cap_function(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	strv_push(&o->capture->includes, &o->capture->nincludes, arg);
	return 0;
}

static int cap_exclude(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	strv_push(&o->capture->excludes, &o->capture->nexcludes, arg);
	return 0;
}

static int cap_buffer_size(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	return EINVAL_IF(parse_buffer_size(arg, &o->capture->buffer_size));
}

static int cap_no_follow(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	o->capture->no_follow = true;
	return 0;
}

static int cap_no_skip_endbr(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	o->capture->no_skip_endbr = true;
	return 0;
}

static int cap_debug_dir(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	debugsyms__add_dir(arg);
	return 0;
}

static int cap_no_compensation(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	o->capture->no_compensation = true;
	return 0;
}

static int cap_compensate(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	o->capture->no_compensation = false;
	return 0;
}

static int cap_max_overhead(struct cmd_opts *o, const char *arg)
{
	CAPTURE_OR_ENOENT(o);
	return EINVAL_IF(governor__parse_limit(arg, &o->capture->max_overhead));
}

/* --min-time: into the filter group's filter, or alone (record) */
static int take_min_time(struct cmd_opts *o, const char *arg)
{
	uint64_t *min_time = o->filter ? &o->filter->min_time : o->min_time;

	if (!min_time)
		return -ENOENT;
	if (parse_duration(arg, min_time)) {
		p_err("invalid --min-time '%s' (e.g. 100us, 2ms)", arg);
		return -EINVAL;
	}
	return 0;
}

static int take_filter_pid(struct cmd_opts *o, const char *arg)
{
	if (!o->filter)
		return -ENOENT;
	return EINVAL_IF(parse_ids("--pid", arg, &o->filter->pids, &o->filter->npids));
}

static int take_filter_tid(struct cmd_opts *o, const char *arg)
{
	if (!o->filter)
		return -ENOENT;
	return EINVAL_IF(parse_ids("--tid", arg, &o->filter->tids, &o->filter->ntids));
}

static int take_top(struct cmd_opts *o, const char *arg)
{
	unsigned long v;
	int err;

	if (!o->top)
		return -ENOENT;
	err = parse_count("--top", arg, 0, SIZE_MAX, &v);
	*o->top = v;
	return err;
}

static int take_depth(struct cmd_opts *o, const char *arg)
{
	unsigned long v;
	int err;

	if (!o->depth)
		return -ENOENT;
	err = parse_count("--depth", arg, 0, UINT32_MAX, &v);
	*o->depth = v;
	return err;
}

struct opt_row {
	int val;
	int (*take)(struct cmd_opts *o, const char *arg);
	const char *help;
};

#define ROW(name, has_arg, val, take, help)	{ val, take, help },
static const struct opt_row common_rows[] = { OPTS_COMMON_ROWS(ROW) { 0 } };
static const struct opt_row capture_rows[] = { OPTS_CAPTURE_ROWS(ROW) { 0 } };
/* every row, in the order a value is offered to them ('p': capture first, then filter) */
static const struct opt_row all_rows[] = {
	OPTS_COMMON_ROWS(ROW) OPTS_OUTPUT_ROWS(ROW) OPTS_READ_ROWS(ROW)
	OPTS_CAPTURE_ROWS(ROW) OPTS_FILTER_ROWS(ROW) OPTS_SIZE_ROWS(ROW) { 0 }
};
#undef ROW

int opts__take(struct cmd_opts *o, int c, char **argv)
{
	const struct opt_row *r;
	int err;

	switch (c) {
	case ':':
		p_err("option '%s' needs a value (see 'bpfprof %s --help')", argv[optind - 1],
		      o->cmd);
		return -EINVAL;
	case '?':
		if (optopt)
			p_err("unknown option '-%c' (see 'bpfprof %s --help')", optopt, o->cmd);
		else
			p_err("unknown option '%s' (see 'bpfprof %s --help')", argv[optind - 1],
			      o->cmd);
		return -EINVAL;
	}
	for (r = all_rows; r->take; r++) {
		if (r->val != c)
			continue;
		err = r->take(o, optarg);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

void opts__capture_defaults(struct capture_opts *co, uint64_t buffer_size)
{
	co->buffer_size = buffer_size;
	co->no_compensation = true;	/* the raw clock unless --compensate (README) */
}

void opts__capture_free(struct capture_opts *co)
{
	free(co->pids);
	free(co->includes);
	free(co->excludes);
	free(co->usdts);
}

const struct exporter_ops *opts__output(const struct cmd_opts *o)
{
	if (!o->output) {
		p_err("%s needs -o OUT ('-' for standard output)", o->cmd);
		return NULL;
	}
	return exporter__choose(o->format, o->output, o->cmd);
}

void opts__capture_help(FILE *f, const char *buffer_default, const char *overhead_default)
{
	const struct opt_row *r;

	for (r = capture_rows; r->take; r++) {
		/* the rows' own text (options.h): %s only where a default is shown */
		if (r->val == OPT_BUFFER)
			fprintf(f, r->help, buffer_default);
		else if (r->val == OPT_MAX_OVH)
			fprintf(f, r->help, overhead_default);
		else if (r->help)
			fputs(r->help, f);
	}
}

void opts__common_help(FILE *f)
{
	const struct opt_row *r;

	for (r = common_rows; r->take; r++)
		fputs(r->help, f);
}

void opts__formats_help(FILE *f)
{
	size_t i;

	fprintf(f, "\noutput formats:\n");
	for (i = 0; exporter_table[i]; i++)
		fprintf(f, "  %-10s %-18s %s\n", exporter_table[i]->name,
			exporter_table[i]->suffix ? exporter_table[i]->suffix : "",
			exporter_table[i]->help);
}
