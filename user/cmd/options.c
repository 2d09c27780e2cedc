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
#include "capture/governor.h"
#include "symbols/debugsyms.h"

/* The capture group's parsers (options.h, OPTS_CAPTURE_ROWS): 0 or nonzero (printed). */
static int cap_pid(struct capture_opts *co, const char *arg)
{
	return parse_pids(arg, &co->pids, &co->npids);
}

static int cap_function(struct capture_opts *co, const char *arg)
{
	strv_push(&co->includes, &co->nincludes, arg);
	return 0;
}

static int cap_exclude(struct capture_opts *co, const char *arg)
{
	strv_push(&co->excludes, &co->nexcludes, arg);
	return 0;
}

static int cap_buffer_size(struct capture_opts *co, const char *arg)
{
	return parse_buffer_size(arg, &co->buffer_size);
}

static int cap_no_follow(struct capture_opts *co, const char *arg)
{
	co->no_follow = true;
	return 0;
}

static int cap_no_skip_endbr(struct capture_opts *co, const char *arg)
{
	co->no_skip_endbr = true;
	return 0;
}

static int cap_debug_dir(struct capture_opts *co, const char *arg)
{
	debugsyms__add_dir(arg);
	return 0;
}

static int cap_no_compensation(struct capture_opts *co, const char *arg)
{
	co->no_compensation = true;
	return 0;
}

static int cap_compensate(struct capture_opts *co, const char *arg)
{
	co->no_compensation = false;
	return 0;
}

static int cap_max_overhead(struct capture_opts *co, const char *arg)
{
	return governor__parse_limit(arg, &co->max_overhead);
}

static const struct capture_row {
	int val;
	int (*take)(struct capture_opts *co, const char *arg);
	const char *help;
} capture_rows[] = {
#define CAPTURE_ROW(name, has_arg, val, take, help)	{ val, take, help },
	OPTS_CAPTURE_ROWS(CAPTURE_ROW)
#undef CAPTURE_ROW
};

static int take_capture(struct capture_opts *co, int c, const char *arg)
{
	size_t i;

	for (i = 0; i < sizeof(capture_rows) / sizeof(capture_rows[0]); i++)
		if (capture_rows[i].val == c)
			return capture_rows[i].take(co, arg);
	return -ENOENT;
}

static int take_min_time(const char *arg, uint64_t *min_time)
{
	if (parse_duration(arg, min_time)) {
		p_err("invalid --min-time '%s' (e.g. 100us, 2ms)", arg);
		return -EINVAL;
	}
	return 0;
}

static int take_filter(struct event_filter *f, int c, const char *arg)
{
	switch (c) {
	case OPT_MIN_TIME:
		return take_min_time(arg, &f->min_time);
	case 'p':
		return parse_ids("--pid", arg, &f->pids, &f->npids);
	case 't':
		return parse_ids("--tid", arg, &f->tids, &f->ntids);
	}
	return -ENOENT;
}

int opts__take(struct cmd_opts *o, int c, char **argv)
{
	int err;

	switch (c) {
	case 'q':
		quiet = true;
		return 0;
	case 'v':
		verbose++;
		return 0;
	case 'h':
		o->usage(stdout, o->cmd);
		return OPTS_HELP;
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
	case 'o':
		o->output = optarg;
		return 0;
	case OPT_FORMAT:
		o->format = optarg;
		return 0;
	case OPT_PARTIAL:
		archive__accept_unfinished(true);
		return 0;
	}
	if (o->capture) {
		err = take_capture(o->capture, c, optarg);
		if (err != -ENOENT)
			return err ? -EINVAL : 0;
	}
	if (o->filter) {
		err = take_filter(o->filter, c, optarg);
		if (err != -ENOENT)
			return err ? -EINVAL : 0;
	}
	if (o->min_time && c == OPT_MIN_TIME)
		return take_min_time(optarg, o->min_time);
	if (o->top && c == 'n') {
		unsigned long v;

		err = parse_count("--top", optarg, 0, SIZE_MAX, &v);
		*o->top = v;
		return err;
	}
	if (o->depth && c == OPT_DEPTH) {
		unsigned long v;

		err = parse_count("--depth", optarg, 0, UINT32_MAX, &v);
		*o->depth = v;
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
	size_t i;

	for (i = 0; i < sizeof(capture_rows) / sizeof(capture_rows[0]); i++) {
		const struct capture_row *r = &capture_rows[i];

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
	fprintf(f, "  -q, --quiet            no summary\n"
		   "  -v, --verbose          more messages (twice: libbpf debug)\n"
		   "  -h, --help             this help\n");
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
