// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record and attach: select functions, load and attach the tracer, drain the
 * ring buffer through the decoder into the output, end cleanly on target
 * exit, --duration, or a signal.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmds.h"
#include "options.h"
#include "base/log.h"
#include "base/util.h"
#include "capture/capture.h"
#include "cost/governor.h"
#include "exporters/exporter.h"
#include "model/filter.h"
#include "symbols/debugsyms.h"
#include "symbols/debuginfod.h"
#include "symbols/resymbolize.h"
#include "model/session.h"
#include "report/report.h"

struct record_opts {
	bool attach;		/* attach mode: --pid */
	struct cmd_opts cmd;	/* -o, --format, -q, -v, -h */
	struct capture_opts co;	/* what is traced, and how */
	uint64_t duration;	/* ns, 0: until the targets exit */
	uint64_t min_time;	/* ns: shorter calls are left out of the output */
};

struct record_ctx {
	struct bp_session s;
	struct proc_count {
		uint32_t pid;
		uint64_t samples;
	} *top;			/* samples per process, for the summary */
	size_t ntop;
	struct exporter *exp;
	struct report *rep;
	struct event_filter filter;
	uint64_t exported;
	/* debuginfod and an output that is not an archive: recorded into the archive
	 * `late` first, named when late debug files arrive, then written as `final` */
	bool via_late;	/* through_archive(), decided before the first fetch */
	char *late;
	const struct exporter_ops *final;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Every decoded event: aggregates, then the output. */
static int sink(void *ctx, const struct bp_event *ev)
{
	struct record_ctx *rc = ctx;

	int err = report__add(rc->rep, &rc->s, ev);
	size_t i;

	if (err)
		return err;
	if (ev->kind == BP_EV_SAMPLE && !(ev->sample.flags & BP_SAMPLE_F_OFFCPU)) {
		for (i = 0; i < rc->ntop && rc->top[i].pid != ev->sample.pid; i++)
			;
		if (i == rc->ntop) {
			rc->top = xrealloc(rc->top, (rc->ntop + 1) * sizeof(*rc->top));
			rc->top[rc->ntop].pid = ev->sample.pid;
			rc->top[rc->ntop++].samples = 0;
		}
		rc->top[i].samples++;
	}
	if (!filter__keep(&rc->filter, ev))	/* --min-time */
		return 0;
	if (!rc->exp)
		return 0;
	rc->exported++;
	return exporter__event(rc->exp, &rc->s, ev);
}

static int by_samples(const void *a, const void *b)
{
	const struct proc_count *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

static void print_top_processes(struct record_ctx *rc)
{
	size_t i;
	uint64_t total = 0;

	for (i = 0; i < rc->ntop; i++)
		total += rc->top[i].samples;
	if (!total)
		return;
	qsort(rc->top, rc->ntop, sizeof(*rc->top), by_samples);
	fprintf(stderr, "  %8s  %6s  %8s  %s\n", "samples", "%", "pid", "process");
	for (i = 0; i < rc->ntop && i < 10; i++) {
		const struct bp_process *p = NULL;
		size_t j;

		for (j = 0; j < rc->s.nprocs; j++)
			if (rc->s.procs[j].pid == rc->top[i].pid)
				p = &rc->s.procs[j];
		fprintf(stderr, "  %8llu  %5.1f%%  %8u  %s\n", (unsigned long long)rc->top[i].samples,
			100.0 * rc->top[i].samples / total, rc->top[i].pid,
			p && p->name ? p->name : "?");
	}
}

/* ---------------------------------------------------------------- options */

enum { OPT_AS_ROOT = OPT_OWN, OPT_ARGS, OPT_SAMPLE, OPT_OFFCPU, OPT_NO_KSTACKS,
       OPT_NO_WAKEUPS, OPT_DEPS, OPT_GATED, OPT_STACK, OPT_STACK_SIZE };

/* record's and attach's own options, after the capture group's */
static const struct opt_def trace_rows[] = {
	OPT_ARG("duration", 'd', "DUR", "stop after DUR (e.g. 500ms, 10s, 2m)"),
	{ "sample", optional_argument, OPT_SAMPLE, "HZ",
	  "sample stacks on cpu-clock (default 999 Hz); with no\n"
	  "-F, sampling only (no function probes)" },
	OPT_FLAG("offcpu", OPT_OFFCPU, "record where threads block, and for how long"),
	OPT_FLAG("no-kernel-stacks", OPT_NO_KSTACKS, "user stacks only"),
	{ "stack", required_argument, OPT_STACK, "fp|dwarf|auto",
	  "user stacks by frame pointers, or by DWARF\n"
	  "unwinding of a stack copy (default auto: DWARF,\n"
	  "frame pointers where DWARF falls short)", "fp dwarf auto" },
	OPT_ARG("stack-size", OPT_STACK_SIZE, "SIZE",
		"user stack bytes copied per sample (default 16k,\n"
		"at most 64k)"),
	OPT_FLAG("args", OPT_ARGS, "record each call's arguments and return value, typed\n"
		 "from DWARF (names, integers, enums, strings, structs;\n"
		 "doubles unavailable); without DWARF the raw registers"),
	OPT_FLAG("deps", OPT_DEPS, "data edges: a call that returned a pointer -> the\n"
		 "later calls that received it (implies --args)"),
	OPT_FLAG("no-wakeups", OPT_NO_WAKEUPS, "no wakeup edges (on by default when tracing calls)"),
	OPT_ARG("usdt", 'U', "[LIB:]PROVIDER:NAME[(TYPE,...)]",
		"trace this USDT probe (its arguments are\n"
		"recorded; TYPE str shows one as a string, e.g.\n"
		"-U 'python3*:python:function__entry(str,str,int)');\n"
		"LIB as -F's (also dlopen'd later); bpfprof.h probes\n"
		"are traced without -U"),
	OPT_FLAG("gated", OPT_GATED, "record only inside BPFPROF_START()/BPFPROF_STOP()\n"
		 "windows (process-wide)"),
	OPT_FLAG("all", 'a', "every process on the system (with --sample/--offcpu,\n"
		 "or -F LIB:GLOB); record's COMMAND and attach's --pid\n"
		 "are then optional"),
	OPT_END
};

static const struct opt_def record_rows[] = {
	OPT_FLAG("as-root", OPT_AS_ROOT, "under sudo, run COMMAND as root (default: as the\n"
		 "invoking user, from SUDO_UID/SUDO_GID)"),
	OPT_END
};

static const char *record_default(int val)
{
	return val == OPT_BUFFER ? "16M" : val == OPT_MAX_OVH ? "exact, every selected function" :
	       NULL;
}

static const char *attach_default(int val)
{
	return val == OPT_BUFFER ? "16M" :
	       val == OPT_MAX_OVH ? ATTACH_MAX_OVERHEAD_S " (at most 1.25x slower)" : NULL;
}

#define TRACE_NOTES \
	"Without -o, the archive bpfprof.data is written (see 'bpfprof report',\n" \
	"'bpfprof convert').  Ctrl-C stops the recording and writes what was captured.\n" \
	"On a terminal, one status line (elapsed, calls/s, lost records, estimated\n" \
	"slowdown, functions dropped) is rewritten in place and erased at the end."

const struct cmd_def record_def = {
	.name = "record",
	.summary = "run a command and trace its function calls",
	.synopsis = "[options] -- COMMAND [ARGS...]",
	.about = "Run COMMAND and trace its function calls (all threads, and the processes\n"
		 "it forks) until it and its children exit.  Exits with COMMAND's status.",
	.tables = (const struct opt_def *const[]){ opts_output, opts_capture, opts_debug,
		opts_min_time, trace_rows, record_rows, opts_quiet, opts_help, NULL },
	.dflt = record_default,
	.notes = TRACE_NOTES,
	.formats = true,
};

const struct cmd_def attach_def = {
	.name = "attach",
	.summary = "trace running processes",
	.synopsis = "--pid PID[,PID...] [options]",
	.about = "Trace the function calls of running processes (all their threads, and\n"
		 "the processes they fork) until --duration, Ctrl-C, or their exit.",
	.tables = (const struct opt_def *const[]){ opts_targets, opts_output, opts_capture,
		opts_debug, opts_min_time, trace_rows, opts_quiet, opts_help, NULL },
	.dflt = attach_default,
	.notes = TRACE_NOTES,
	.formats = true,
};

/* Returns 0, 1 for --help (exit 0), or -EINVAL. */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	struct opts_getopt g;
	struct capture_opts *co = &o->co;
	int c, err;

	o->cmd = (struct cmd_opts){ .def = o->attach ? &attach_def : &record_def,
				    .capture = co, .min_time = &o->min_time };
	/* ~200 ms of headroom at 1 M calls/s; drained every 1 MB or 50 ms */
	opts__capture_defaults(co, 16ull << 20);
	/* a running process serves someone: bounded unless --max-overhead off */
	if (o->attach)
		co->max_overhead = ATTACH_MAX_OVERHEAD;
	/* the Python probes' fall-back samples in their place (capture.h) */
	co->fallback_hz = CAPTURE_FALLBACK_HZ;
	opterr = 0;
	/* '+': stop at the first non-option, the command. */
	opts__getopt(o->cmd.def, "+", &g);
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SAMPLE: {
			char *end;
			unsigned long hz = optarg ? strtoul(optarg, &end, 10) : 999;

			if (optarg && (*end || hz < 1 || hz > 100000)) {
				p_err("invalid --sample rate '%s' (1 to 100000 Hz)", optarg);
				return -EINVAL;
			}
			co->sample_hz = hz;
			break;
		}
		case OPT_OFFCPU:
			co->offcpu = true;
			break;
		case OPT_ARGS:
			co->args = true;
			break;
		case OPT_DEPS:
			co->deps = co->args = true;
			break;
		case OPT_NO_WAKEUPS:
			co->no_wakeups = true;
			break;
		case 'U':
			strv_push(&co->usdts, &co->nusdts, optarg);
			break;
		case OPT_GATED:
			co->gated = true;
			break;
		case OPT_NO_KSTACKS:
			co->no_kernel_stacks = true;
			break;
		case OPT_STACK:
			if (sampler__parse_stack(optarg, &co->stack))
				return -EINVAL;
			break;
		case OPT_STACK_SIZE:
			if (sampler__parse_stack_size(optarg, &co->stack_size))
				return -EINVAL;
			break;
		case 'a':
			co->all = true;
			break;
		case OPT_AS_ROOT:
			co->as_root = true;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration) || !o->duration) {
				p_err("invalid --duration '%s' (e.g. 500ms, 10s, 2m)", optarg);
				return -EINVAL;
			}
			break;
		default:	/* the shared options (options.h), getopt's errors */
			err = opts__take(&o->cmd, c, argv);
			if (err)
				return err;
		}
	}
	opts__apply(&o->cmd);
	if (o->attach) {
		if (optind < argc) {
			p_err("unexpected argument '%s' (to start a command use 'bpfprof record')",
			      argv[optind]);
			return -EINVAL;
		}
		if (!co->npids && !co->all) {
			p_err("attach needs --pid PID (or -a: every process)");
			return -EINVAL;
		}
	} else if (optind < argc) {
		co->argv = argv + optind;
	} else if (!co->all) {
		p_err("no command given: bpfprof record [options] -- COMMAND [ARGS...]");
		return -EINVAL;
	}
	if (capture_opts__validate(co))
		return -EINVAL;
	if (co->all && !co->argv && !o->duration)
		p_info("recording every process until Ctrl-C (or use --duration)");
	return 0;
}

/* Another format than an archive, written to a file, while debuginfod may bring files late. */
static bool through_archive(struct record_opts *o)
{
	const struct exporter_ops *ops;

	const char *urls = o->co.debug && o->co.debug->debuginfod ? o->co.debug->debuginfod :
			   getenv("DEBUGINFOD_URLS");

	/* (asked before capture__new() sets the client up: its configuration) */
	if (!o->cmd.output || !strcmp(o->cmd.output, "-") || !strncmp(o->cmd.output, "/dev/", 5) ||
	    !urls || !*urls)
		return false;
	ops = o->cmd.format ? exporter__find(o->cmd.format) : exporter__for_path(o->cmd.output);
	return ops && ops != &archive_exporter;
}

/*
 * The output: the archive bpfprof.data by default, like perf.data.  With
 * debuginfod, another format written to a file goes through an archive
 * beside it (OUT.late.bpfprof), which late debug files can name before it
 * is written as OUT (finish_output).
 */
static int open_output(struct record_opts *o, struct record_ctx *rc)
{
	const struct exporter_ops *ops;

	if (!o->cmd.output && !o->cmd.format) {
		/* Like perf.data: keep everything, look at it later with report/convert. */
		o->cmd.output = "bpfprof.data";
		return exporter__new(&archive_exporter, o->cmd.output, &rc->s, &rc->exp);
	}
	ops = opts__output(&o->cmd);
	if (!ops)
		return -EINVAL;
	if (rc->via_late) {
		rc->final = ops;
		rc->late = xasprintf("%s.late.bpfprof", o->cmd.output);
		return exporter__new(&archive_exporter, rc->late, &rc->s, &rc->exp);
	}
	return exporter__new(ops, o->cmd.output, &rc->s, &rc->exp);
}

/* The output is an archive in a file (bpfprof.data without -o or --format). */
static bool archive_file(struct record_opts *o)
{
	if (!o->cmd.output && !o->cmd.format)
		return true;
	if (!o->cmd.output || !strcmp(o->cmd.output, "-") || !strcmp(o->cmd.output, "/dev/stdout"))
		return false;
	return (o->cmd.format ? exporter__find(o->cmd.format) : exporter__for_path(o->cmd.output)) ==
	       &archive_exporter;
}

#define LATE_WAIT_MS	30000	/* at the end of a recording, for late debug files */

/*
 * Debug files debuginfod brought after their budget (debuginfod.h): the
 * archive written is named with them, as `bpfprof symbolize` would.
 * `shown`: the output as the user named it (another format: the archive is
 * the temporary it will be written from).
 */
static void name_late(const char *archive, const char *shown)
{
	struct resymbolize_stats st = { 0 };
	size_t pending = debuginfod__late_pending();
	const char *later = strcmp(archive, shown) ? "" : " (bpfprof symbolize names it later)";

	if (pending)
		p_info("waiting up to %u s for %zu debug files still coming from debuginfod",
		       LATE_WAIT_MS / 1000, pending);
	if (!debuginfod__wait_late(LATE_WAIT_MS)) {
		if (pending)
			p_warn("no debug file came from debuginfod in time: %s stays unnamed%s",
			       shown, later);
		return;
	}
	if (symbolize__run(archive, archive, &archive_exporter, NULL, &st))
		p_warn("cannot name %s with what debuginfod brought late%s", shown, later);
	else
		p_info("named %zu functions of %s with debug files debuginfod brought late",
		       st.named, shown);
}

/* Names the recording with late debug files; through the archive: writes the output from it. */
static int finish_output(struct record_opts *o, struct record_ctx *rc)
{
	int err;

	if (!rc->late) {
		name_late(o->cmd.output, o->cmd.output);
		return 0;
	}
	name_late(rc->late, o->cmd.output);
	err = exporter__replay(rc->late, false, NULL, rc->final, o->cmd.output, NULL);
	if (err) {
		p_err("cannot write %s: %s; the recording is kept in %s", o->cmd.output,
		      strerror(-err), rc->late);
		return err;
	}
	unlink(rc->late);
	return 0;
}

static void print_summary(const struct record_opts *o, struct record_ctx *rc)
{
	const struct bp_session *s = &rc->s;
	char buf[32];

	fprintf(stderr, "bpfprof: %llu calls recorded in %s, %llu lost records",
		(unsigned long long)s->ncalls, fmt_duration(s->duration, buf, sizeof(buf)),
		(unsigned long long)s->lost_total);
	if (s->nunfinished)
		fprintf(stderr, ", %llu unfinished", (unsigned long long)s->nunfinished);
	if (s->nunwound)
		fprintf(stderr, ", %llu unwound (longjmp/exception)", (unsigned long long)s->nunwound);
	if (s->nexceptions)
		fprintf(stderr, ", %llu exceptions", (unsigned long long)s->nexceptions);
	if (s->nno_retprobe)
		fprintf(stderr, ", %llu too deep for return probes",
			(unsigned long long)s->nno_retprobe);
	fputc('\n', stderr);
	if (s->timing && s->ncalls)
		fprintf(stderr, "bpfprof: durations %s (--compensate)\n", s->timing);
	if (s->nsamples || s->noffcpu)
		fprintf(stderr, "bpfprof: %llu cpu samples (%llu with truncated stacks), "
			"%llu off-cpu intervals\n", (unsigned long long)s->nsamples,
			(unsigned long long)s->ntruncated, (unsigned long long)s->noffcpu);
	if (s->ncalls)
		report__print_summary(rc->rep, s, stderr, 10);
	else if (s->nfuncs && !s->nsamples && !s->noffcpu)
		/* "0 calls" alone reads like a broken tracer (issue 18: git) */
		p_warn("none of the traced functions was called: the work may be done in other "
		       "code (list a library's functions with 'bpfprof list', trace them with "
		       "-F 'LIB:GLOB') or sample where the time goes with --sample");
	if (o->co.all)
		print_top_processes(rc);
	if (s->lost_total)
		p_warn("%llu records lost: the ring buffer was full; try --buffer-size 256M",
		       (unsigned long long)s->lost_total);
	if (rc->exp)
		fprintf(stderr, "bpfprof: wrote %s (%llu events)\n", o->cmd.output,
			(unsigned long long)rc->exported);
}

static int run(struct record_opts *o)
{
	struct report_opts ro = { .no_percentiles = true };
	struct record_ctx rc = { .filter.min_time = o->min_time };
	struct capture *cap = NULL;
	uint64_t deadline = 0;
	int err, exit_code = 0;

	session__init(&rc.s);
	err = report__new(&ro, &rc.rep);
	if (err)
		goto cleanup;
	/* 1. What to trace; 2. where to write: fail before starting anything. */
	o->co.verb = "attach";
	/* an archive can be named after the fact: a slow fetch goes on meanwhile */
	rc.via_late = through_archive(o);
	debuginfod__want_late(archive_file(o) || rc.via_late);
	err = capture__new(&o->co, &rc.s, sink, &rc, &cap);
	if (err)
		goto cleanup;
	err = open_output(o, &rc);
	if (err)
		goto cleanup;

	/* 3. Load; start the command held; attach; release.  A signal from now on ends cleanly. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	err = capture__start(cap);
	if (err)
		goto cleanup;
	if (o->duration)
		deadline = now_ns(CLOCK_MONOTONIC) + o->duration;

	/* 4. Drain until the targets are gone, the time is up, or a signal. */
	for (;;) {
		int n = capture__poll(cap, false);

		if (n < 0) {
			err = n;
			goto cleanup;
		}
		if (capture__done(cap))
			break;
		capture__status(cap);
		if (stop_signal || (deadline && now_ns(CLOCK_MONOTONIC) >= deadline))
			capture__stop(cap);
		if (n == 0)
			capture__wait(cap, 2);	/* checks targets and signals; drains when due */
	}

	/* 5. Drain what is left, close open calls, finish the output. */
	err = capture__finish(cap);
	if (err)
		goto cleanup;
	if (rc.exp) {
		err = exporter__finish(rc.exp, &rc.s);
		if (err)
			goto cleanup;
	}
	if (!quiet)
		print_summary(o, &rc);
	err = finish_output(o, &rc);
	if (err)
		goto cleanup;
	exit_code = stop_signal ? 128 + stop_signal : capture__exit_code(cap);
cleanup:
	capture__free(cap);
	exporter__free(rc.exp);
	report__free(rc.rep);
	session__free(&rc.s);
	free(rc.top);
	free(rc.late);
	if (err)
		return 1;
	return exit_code;
}

static int record_main(int argc, char **argv, bool attach)
{
	struct record_opts o = { .attach = attach };
	int err;

	err = parse_args(argc, argv, &o);
	if (err) {
		err = err > 0 ? 0 : 2;
		goto out;
	}
	err = run(&o);
out:
	capture_opts__free(&o.co);
	opts__free(&o.cmd);
	return err;
}

int cmd_record(int argc, char **argv)
{
	return record_main(argc, argv, false);
}

int cmd_attach(int argc, char **argv)
{
	return record_main(argc, argv, true);
}
