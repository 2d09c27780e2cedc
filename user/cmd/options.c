// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The options several commands share (options.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "cmds.h"
#include "options.h"
#include "base/log.h"
#include "archive/archive.h"
#include "base/util.h"
#include "exporters/exporter.h"
#include "capture/governor.h"
#include "symbols/debugsyms.h"

static int take_capture(struct capture_opts *co, int c, const char *arg)
{
	switch (c) {
	case 'p':
		return parse_pids(arg, &co->pids, &co->npids);
	case 'F':
		strv_push(&co->includes, &co->nincludes, arg);
		return 0;
	case 'N':
		strv_push(&co->excludes, &co->nexcludes, arg);
		return 0;
	case OPT_BUFFER:
		return parse_buffer_size(arg, &co->buffer_size);
	case OPT_NO_FOLLOW:
		co->no_follow = true;
		return 0;
	case OPT_NO_SKIP_ENDBR:
		co->no_skip_endbr = true;
		return 0;
	case OPT_DEBUG_DIR:
		debugsyms__add_dir(arg);
		return 0;
	case OPT_NO_COMP:
		co->no_compensation = true;
		return 0;
	case OPT_COMP:
		co->no_compensation = false;
		return 0;
	case OPT_MAX_OVH:
		return governor__parse_limit(arg, &co->max_overhead);
	}
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
	fprintf(f,
		"  -F, --function GLOB    trace functions of the main executable matching GLOB\n"
		"  -F LIB:GLOB            ... of the ELF files whose file name matches LIB\n"
		"                         (libraries, also dlopen'd later, and the executable),\n"
		"                         e.g. -F 'libc.so*:malloc'\n"
		"  -F py:[FILE:]QUALNAME  Python functions of a CPython target, e.g.\n"
		"                         -F 'py:handle_*', -F 'py:app.py:Server.*'\n"
		"  -N, --exclude [LIB:|py:]GLOB  do not trace these (wins over -F)\n"
		"                         default: every function of the main executable;\n"
		"                         for CPython (python3.11), its Python functions\n"
		"      --buffer-size SIZE ring buffer size (default %s; more = fewer losses)\n"
		"      --no-follow        do not trace processes forked by the targets\n"
		"      --no-skip-endbr    probe each function's first instruction, not the first\n"
		"                         emulated one past endbr64 or a harmless prefix\n"
		"      --compensate       take the probes' own cost (measured on this machine) out\n"
		"                         of every call and its parents; default: the raw clock\n"
		"                         (--no-compensation)\n"
		"      --max-overhead PCT keep the probes' estimated slowdown of the traced\n"
		"                         processes under PCT percent (100: at most twice as\n"
		"                         slow) by dropping first the functions whose calls\n"
		"                         last about their probe's own cost; they are named in\n"
		"                         the summary, /metrics and every output\n"
		"                         (default: %s; 'off': exact)\n"
		"      --debug-dir DIR    also look for debug files (names for stripped\n"
		"                         binaries) in DIR, as in /usr/lib/debug; repeatable\n",
		buffer_default, overhead_default);
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
