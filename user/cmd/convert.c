// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * convert: replay a .bpfprof archive into any output format, optionally only
 * some processes/threads and only calls of at least --min-time.  The archive
 * streams through the exporter, so memory stays bounded by the tables.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive/archive.h"
#include "cmds.h"
#include "exporters/exporter.h"
#include "base/log.h"
#include "model/session.h"
#include "base/util.h"

#define DEFAULT_ARCHIVE "bpfprof.data"

struct convert_opts {
	const char *input;
	const char *output;
	const char *format;
	uint64_t min_time;
	uint32_t *pids, *tids;
	size_t npids, ntids;
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: bpfprof convert -o OUT [options] [FILE]\n\n"
		   "Write the recording FILE (default " DEFAULT_ARCHIVE ") in another format.\n\n"
		   "options:\n"
		   "  -o, --output OUT   output file ('-': standard output); format from its name\n"
		   "      --format FMT   output format, overriding the name\n"
		   "      --min-time DUR leave calls shorter than DUR out (e.g. 100us, 2ms)\n"
		   "  -p, --pid PID[,PID]  only these processes (repeatable)\n"
		   "  -t, --tid TID[,TID]  only these threads (repeatable)\n"
		   "  -q, --quiet        no summary line\n"
		   "  -h, --help         this help\n\noutput formats:\n");
	for (i = 0; exporter_table[i]; i++)
		fprintf(f, "  %-10s %-18s %s\n", exporter_table[i]->name,
			exporter_table[i]->suffix ? exporter_table[i]->suffix : "",
			exporter_table[i]->help);
}

static int add_ids(const char *opt, const char *arg, uint32_t **ids, size_t *n)
{
	char *copy = xstrdup(arg), *save = NULL, *tok, *end;
	unsigned long v;
	int err = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno || end == tok || *end || tok[0] == '-' || v == 0 || v > UINT32_MAX) {
			p_err("invalid %s '%s'", opt, tok);
			err = -EINVAL;
			break;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = v;
	}
	free(copy);
	return err;
}

static bool has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Returns 0, 1 for --help, or -EINVAL. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	enum { OPT_FORMAT = 256, OPT_MIN_TIME };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:p:t:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = optarg;
			break;
		case OPT_MIN_TIME:
			if (parse_duration(optarg, &o->min_time)) {
				p_err("invalid --min-time '%s' (e.g. 100us, 2ms)", optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			if (add_ids("--pid", optarg, &o->pids, &o->npids))
				return -EINVAL;
			break;
		case 't':
			if (add_ids("--tid", optarg, &o->tids, &o->ntids))
				return -EINVAL;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "see 'bpfprof convert --help'\n");
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc) {
		p_err("convert takes one archive, not '%s' too (to combine archives: bpfprof merge)",
		      argv[optind]);
		return -EINVAL;
	}
	if (!o->input)
		o->input = DEFAULT_ARCHIVE;
	if (!o->output) {
		p_err("convert needs -o OUT ('-' for standard output)");
		return -EINVAL;
	}
	return 0;
}

static const struct exporter_ops *output_ops(const char *format, const char *output)
{
	const struct exporter_ops *ops;

	ops = format ? exporter__find(format) : exporter__for_path(output);
	if (!ops) {
		if (format)
			p_err("unknown format '%s' (see 'bpfprof convert --help')", format);
		else
			p_err("cannot tell the format of '%s' from its name: use --format", output);
	}
	return ops;
}

static bool keep_task(const struct convert_opts *o, uint32_t pid, uint32_t tid)
{
	return (!o->npids || has_id(o->pids, o->npids, pid)) &&
	       (!o->ntids || has_id(o->tids, o->ntids, tid));
}

static bool keep_call(const struct convert_opts *o, const struct bp_call *c)
{
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;

	if (dur < o->min_time)
		return false;
	return keep_task(o, c->pid, c->tid);
}

static bool keep_event(const struct convert_opts *o, const struct bp_event *ev)
{
	switch (ev->kind) {
	case BP_EV_CALL:
		return keep_call(o, &ev->call);
	case BP_EV_SAMPLE:
		return keep_task(o, ev->sample.pid, ev->sample.tid);
	case BP_EV_ANNOT:
		return keep_task(o, ev->annot.pid, ev->annot.tid);
	case BP_EV_EDGE:
		/* Causality across the filter's border is the point of an edge: either end. */
		return keep_task(o, ev->edge.src_pid, ev->edge.src_tid) ||
		       keep_task(o, ev->edge.dst_pid, ev->edge.dst_tid);
	default:
		return true;	/* losses concern every process */
	}
}

/*
 * With --pid/--tid, the thread and process tables lose what was filtered
 * out, so the output names only what it shows.
 */
static void filter_tables(const struct convert_opts *o, struct bp_session *s)
{
	size_t i, j, k;

	if (!o->npids && !o->ntids)
		return;
	for (i = j = 0; i < s->nthreads; i++) {
		const struct bp_thread *t = &s->threads[i];

		if ((o->npids && !has_id(o->pids, o->npids, t->pid)) ||
		    (o->ntids && !has_id(o->tids, o->ntids, t->tid)))
			continue;
		s->threads[j++] = *t;	/* order kept: still sorted by tid */
	}
	s->nthreads = j;
	for (i = j = 0; i < s->nprocs; i++) {
		struct bp_process *p = &s->procs[i];
		bool keep = o->npids ? has_id(o->pids, o->npids, p->pid) : true;

		if (keep && o->ntids) {
			keep = false;
			for (k = 0; k < s->nthreads && !keep; k++)
				keep = s->threads[k].pid == p->pid;
		}
		if (!keep) {
			free(p->name);
			continue;
		}
		s->procs[j++] = *p;
	}
	s->nprocs = j;
}

static int convert(const struct convert_opts *o)
{
	const struct exporter_ops *ops;
	struct archive_reader *r = NULL;
	struct exporter *e = NULL;
	struct bp_session s;
	struct bp_event ev;
	uint64_t nout = 0;
	int err;

	session__init(&s);
	ops = output_ops(o->format, o->output);
	if (!ops)
		return -EINVAL;
	err = archive__open(o->input, &s, &r);
	if (err)
		goto cleanup;
	err = exporter__new(ops, o->output, &s, &e);
	if (err)
		goto cleanup;
	while ((err = archive__next(r, &ev)) > 0) {
		if (!keep_event(o, &ev))
			continue;
		err = exporter__event(e, &s, &ev);
		if (err)
			goto cleanup;
		nout++;
	}
	if (err)
		goto cleanup;
	filter_tables(o, &s);
	err = exporter__finish(e, &s);
	if (err)
		goto cleanup;
	if (strcmp(o->output, "-"))
		p_info("wrote %s (%" PRIu64 " events)", o->output, nout);
cleanup:
	exporter__free(e);
	archive__close(r);
	session__free(&s);
	return err;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_opts o = { 0 };
	int err;

	err = parse_args(argc, argv, &o);
	if (err)
		err = err > 0 ? 0 : 2;
	else
		err = convert(&o) ? 1 : 0;
	free(o.pids);
	free(o.tids);
	return err;
}
