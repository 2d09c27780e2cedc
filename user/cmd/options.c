// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shared option groups and what is made of a command's tables (options.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmds.h"
#include "options.h"
#include "base/log.h"
#include "archive/archive.h"
#include "base/util.h"
#include "exporters/exporter.h"
#include "cost/governor.h"

/*
 * The parsers of the shared rows: 0, OPTS_HELP, -EINVAL (printed), or
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
	opts__usage(o->def, stdout);
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
	o->partial = true;
	return 0;
}

static int take_debug_dir(struct cmd_opts *o, const char *arg)
{
	struct stat st;

	/* a typo would only show as names missing later */
	if (stat(arg, &st)) {
		p_err("invalid --debug-dir '%s': %s", arg, strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		p_err("invalid --debug-dir '%s': not a directory", arg);
		return -EINVAL;
	}
	strv_push(&o->debug.dirs, &o->debug.ndirs, arg);
	return 0;
}

static int take_debuginfod(struct cmd_opts *o, const char *arg)
{
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8) &&
	    strncmp(arg, "file://", 7)) {
		p_err("--debuginfod: '%s' is not an http://, https:// or file:// URL", arg);
		return -EINVAL;
	}
	o->debug.debuginfod = arg;
	return 0;
}

static int take_debuginfod_timeout(struct cmd_opts *o, const char *arg)
{
	char *end;
	double s = strtod(arg, &end);

	if (end == arg || *end || !(s > 0) || s > 3600) {
		p_err("--debuginfod-timeout: '%s' is not a number of seconds in (0, 3600]", arg);
		return -EINVAL;
	}
	o->debug.debuginfod_ms = (unsigned)(s * 1000 + 0.5) ? (unsigned)(s * 1000 + 0.5) : 1;
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
	err = parse_count("--top", arg, 1, SIZE_MAX, &v);
	*o->top = v;
	return err;
}

static int take_depth(struct cmd_opts *o, const char *arg)
{
	unsigned long v;
	int err;

	if (!o->depth)
		return -ENOENT;
	err = parse_count("--depth", arg, 1, UINT32_MAX, &v);
	*o->depth = v;
	return err;
}

/* ---------------------------------------------------------------- the shared groups */

#define ROW(name, has_arg, val, arg, help, values, take) \
	{ name, has_arg, val, arg, help, values, take }

const struct opt_def opts_help[] = {
	ROW("help", no_argument, 'h', NULL, "this help", NULL, take_help),
	OPT_END
};

const struct opt_def opts_quiet[] = {
	ROW("quiet", no_argument, 'q', NULL, "no summary, status line or progress", NULL, take_quiet),
	ROW("verbose", no_argument, 'v', NULL, "more messages (twice: libbpf debug)", NULL,
	    take_verbose),
	OPT_END
};

const struct opt_def opts_output[] = {
	ROW("output", required_argument, 'o', "FILE",
	    "output file; format from its name (see below); '-'\n"
	    "or /dev/stdout: standard output.  As root, never\n"
	    "through a symbolic link another user owns, nor\n"
	    "onto a block device or another user's FIFO", NULL, take_output),
	ROW("format", required_argument, OPT_FORMAT, "FMT",
	    "output format, overriding the file name", "@formats", take_format),
	OPT_END
};

const struct opt_def opts_read[] = {
	ROW("partial", no_argument, OPT_PARTIAL, NULL,
	    "read an unfinished recording (bpfprof was killed: its\n"
	    "OUT.tmp.PID.XXXXXX) up to its last complete block", NULL, take_partial),
	OPT_END
};

const struct opt_def opts_capture[] = {
	ROW("function", required_argument, 'F', "GLOB",
	    "trace functions of the main executable matching GLOB;\n"
	    "LIB:GLOB: ... of the ELF files whose file name matches\n"
	    "LIB (libraries, also dlopen'd later, and the\n"
	    "executable), e.g. -F 'libc.so*:malloc'; LIB with a\n"
	    "'/': a path, or a glob over paths;\n"
	    "py:[FILE:]QUALNAME: Python functions of a CPython\n"
	    "target, e.g. -F 'py:handle_*', -F 'py:app.py:Server.*'.\n"
	    "Default: every function of the main executable; for\n"
	    "CPython (python3.11), its Python functions", "@functions", cap_function),
	ROW("exclude", required_argument, 'N', "[LIB:|py:]GLOB",
	    "do not trace these (wins over -F)", NULL, cap_exclude),
	ROW("buffer-size", required_argument, OPT_BUFFER, "SIZE",
	    "ring buffer size (default %s; more = fewer losses)", NULL, cap_buffer_size),
	ROW("no-follow", no_argument, OPT_NO_FOLLOW, NULL,
	    "do not trace processes forked by the targets", NULL, cap_no_follow),
	ROW("no-skip-endbr", no_argument, OPT_NO_SKIP_ENDBR, NULL,
	    "probe each function's first instruction, not the first\n"
	    "emulated one past endbr64 or a harmless prefix", NULL, cap_no_skip_endbr),
	ROW("compensate", no_argument, OPT_COMP, NULL,
	    "take the probes' own cost out of every call and its\n"
	    "parents (calibrated, then measured in each traced\n"
	    "process as it runs)", NULL, cap_compensate),
	ROW("no-compensation", no_argument, OPT_NO_COMP, NULL,
	    "durations on the raw clock (the default)", NULL, cap_no_compensation),
	ROW("max-overhead", required_argument, OPT_MAX_OVH, "PCT",
	    "keep the probes' estimated slowdown of the traced\n"
	    "processes under PCT percent (100: at most twice as\n"
	    "slow) by dropping first the functions whose calls\n"
	    "last about their probe's own cost; they are named in\n"
	    "the summary, /metrics and every output (CPython's\n"
	    "probes, which fire for dropped functions too, are\n"
	    "detached when they alone pass the limit; record and\n"
	    "attach then sample the stacks at 99 Hz)\n"
	    "(default: %s; 'off': exact)", "off", cap_max_overhead),
	OPT_END
};

const struct opt_def opts_targets[] = {
	ROW("pid", required_argument, 'p', "PID[,PID]", "processes to trace (repeatable)",
	    "@pids", cap_pid),
	OPT_END
};

const struct opt_def opts_debug[] = {
	ROW("debug-dir", required_argument, OPT_DEBUG_DIR, "DIR",
	    "also look for debug files (names for stripped\n"
	    "binaries) in DIR, as in /usr/lib/debug\n"
	    "(DIR/.build-id/xx/yyyy.debug, or by .gnu_debuglink);\n"
	    "repeatable", "@dirs", take_debug_dir),
	ROW("debuginfod", required_argument, OPT_DEBUGINFOD, "URL",
	    "fetch the debug file of a binary no local source\n"
	    "names from this debuginfod server, by build-id\n"
	    "(default: DEBUGINFOD_URLS; cache:\n"
	    "DEBUGINFOD_CACHE_PATH, else as root\n"
	    "/var/cache/bpfprof/debuginfod)", NULL, take_debuginfod),
	ROW("debuginfod-timeout", required_argument, OPT_DEBUGINFOD_TIMEOUT, "SEC",
	    "give each debuginfod fetch at most SEC seconds,\n"
	    "then go on unnamed (default: 2, or\n"
	    "BPFPROF_DEBUGINFOD_TIMEOUT)", NULL, take_debuginfod_timeout),
	OPT_END
};

const struct opt_def opts_min_time[] = {
	ROW("min-time", required_argument, OPT_MIN_TIME, "DUR",
	    "leave calls shorter than DUR out of the output\n"
	    "(e.g. 100us, 2ms)", NULL, take_min_time),
	OPT_END
};

const struct opt_def opts_filter[] = {
	ROW("pid", required_argument, 'p', "PID[,PID]", "only these processes (repeatable)", NULL,
	    take_filter_pid),
	ROW("tid", required_argument, 't', "TID[,TID]", "only these threads (repeatable)", NULL,
	    take_filter_tid),
	OPT_END
};

const struct opt_def opts_size[] = {
	ROW("top", required_argument, 'n', "N", "only the first N functions (default: all)", NULL,
	    take_top),
	ROW("depth", required_argument, OPT_DEPTH, "N",
	    "only the first N levels of the call tree (paths)", NULL, take_depth),
	OPT_END
};
#undef ROW

#define FOR_EACH_OPT(d, t, r) \
	for (const struct opt_def *const *t = (d)->tables; *t; t++) \
		for (const struct opt_def *r = *t; r->name; r++)

/* ---------------------------------------------------------------- parsing */

void opts__getopt(const struct cmd_def *d, const char *mode, struct opts_getopt *g)
{
	size_t n = 0;
	char *s = g->shortopts;

	s += sprintf(s, "%s:", mode);	/* ':': a missing value is reported as ':' */
	FOR_EACH_OPT(d, t, r) {
		if (n == OPTS_MAX)
			break;
		g->longopts[n++] = (struct option){ r->name, r->has_arg, NULL, r->val };
		if (r->val < 256) {
			*s++ = r->val;
			if (r->has_arg == required_argument)
				*s++ = ':';
			else if (r->has_arg == optional_argument)
				s += sprintf(s, "::");
		}
	}
	*s = '\0';
	g->longopts[n] = (struct option){ 0 };
}

int opts__take(struct cmd_opts *o, int c, char **argv)
{
	const char *cmd = o->def->name;
	int err;

	switch (c) {
	case ':':
		p_err("option '%s' needs a value (see 'bpfprof %s --help')", argv[optind - 1], cmd);
		return -EINVAL;
	case '?':
		if (optopt)
			p_err("unknown option '-%c' (see 'bpfprof %s --help')", optopt, cmd);
		else
			p_err("unknown option '%s' (see 'bpfprof %s --help')", argv[optind - 1], cmd);
		return -EINVAL;
	}
	/* the command's own tables only: a value means one option in each command */
	FOR_EACH_OPT(o->def, t, r) {
		if (r->val != c || !r->take)
			continue;
		err = r->take(o, optarg);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

void opts__apply(const struct cmd_opts *o)
{
	if (o->capture)
		o->capture->debug = &o->debug;
}

void opts__free(struct cmd_opts *o)
{
	free(o->debug.dirs);
	o->debug.dirs = NULL;
	o->debug.ndirs = 0;
}

void opts__capture_defaults(struct capture_opts *co, uint64_t buffer_size)
{
	co->buffer_size = buffer_size;
	co->no_compensation = true;	/* the raw clock unless --compensate (docs/probe-cost.md) */
}

const struct exporter_ops *opts__output(const struct cmd_opts *o)
{
	if (!o->output) {
		p_err("%s needs -o OUT ('-' for standard output)", o->def->name);
		return NULL;
	}
	return exporter__choose(o->format, o->output, o->def->name);
}
