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
#include "base/log.h"
#include "base/util.h"
#include "capture/capture.h"
#include "exporters/exporter.h"
#include "model/filter.h"
#include "symbols/debugsyms.h"
#include "model/session.h"
#include "report/report.h"
#include "symbols/select.h"

struct record_opts {
	bool attach;		/* attach mode: --pid */
	const char *output;
	const char *format;
	char **includes, **excludes;
	size_t nincludes, nexcludes;
	pid_t *pids;
	size_t npids;
	uint64_t duration;	/* ns, 0: until the targets exit */
	uint64_t min_time;	/* ns: shorter calls are left out of the output */
	uint64_t buffer_size;
	bool no_follow;
	bool no_skip_endbr;
	bool compensate;		/* --compensate */
	unsigned sample_hz;	/* --sample[=HZ]; 0: off */
	bool offcpu;
	bool all;		/* -a: every process */
	bool no_wakeups;
	bool gated;
	char **usdts;		/* -U [LIB:]PROVIDER:NAME */
	size_t nusdts;
	bool deps;		/* data edges (implies argument capture) */
	bool no_kernel_stacks;
	enum stack_mode stack;	/* --stack */
	unsigned stack_size;	/* --stack-size, 0: default */
	bool as_root;
	bool args;
	char **argv;		/* record: the command */
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

static void usage(FILE *f, bool attach)
{
	size_t i;

	if (attach)
		fprintf(f, "usage: bpfprof attach --pid PID[,PID...] [options]\n\n"
			   "Trace the function calls of running processes (all their threads, and\n"
			   "the processes they fork) until --duration, Ctrl-C, or their exit.\n\n");
	else
		fprintf(f, "usage: bpfprof record [options] -- COMMAND [ARGS...]\n\n"
			   "Run COMMAND and trace its function calls (all threads, and the processes\n"
			   "it forks) until it and its children exit.  Exits with COMMAND's status.\n\n");
	fprintf(f,
		"options:\n"
		"  -o, --output FILE      output file; format from its name (see below)\n"
		"      --format FMT       output format, overriding the file name\n"
		"  -F, --function GLOB    trace functions of the main executable matching GLOB\n"
		"  -F LIB:GLOB            ... of shared libraries whose file name matches LIB,\n"
		"                         e.g. -F 'libc.so*:malloc' (also when dlopen'd later)\n"
		"  -F py:[FILE:]QUALNAME  Python functions of a CPython target, e.g.\n"
		"                         -F 'py:handle_*', -F 'py:app.py:Server.*'\n"
		"  -N, --exclude [LIB:|py:]GLOB  do not trace these (wins over -F)\n"
		"                         default: every function of the main executable;\n"
		"                         for CPython (python3.11), its Python functions\n"
		"      --min-time DUR     leave calls shorter than DUR out of the output\n"
		"                         (they still count in the summary)\n"
		"      --buffer-size SIZE ring buffer size (default 16M; more = fewer losses)\n"
		"      --no-follow        do not trace processes forked by the targets\n"
		"      --no-skip-endbr    probe each function's first instruction, not the first\n"
		"                         emulated one past endbr64 or a harmless prefix\n"
		"      --compensate       take the probes' own cost (measured on this machine) out\n"
		"                         of every call and its parents; default: the raw clock\n"
		"                         (--no-compensation)\n"
		"  -d, --duration DUR     stop after DUR (e.g. 500ms, 10s, 2m)\n"
		"      --sample[=HZ]      sample stacks on cpu-clock (default 999 Hz); with no\n"
		"                         -F, sampling only (no function probes)\n"
		"      --offcpu           record where threads block, and for how long\n"
		"      --no-kernel-stacks user stacks only\n"
		"      --stack=fp|dwarf|auto  user stacks by frame pointers, or by DWARF\n"
		"                         unwinding of a stack copy (default auto: DWARF,\n"
		"                         frame pointers where DWARF falls short)\n"
		"      --stack-size SIZE  user stack bytes copied per sample (default 16k,\n"
		"                         at most 64k)\n"
		"      --args             record the six integer argument registers and the\n"
		"                         return value of each call (shown in the output)\n"
		"      --deps             data edges: a call that returned a pointer -> the later\n"
		"                         calls that received it (implies --args)\n"
		"      --no-wakeups       no wakeup edges (on by default when tracing calls)\n"
		"  -U, --usdt [LIB:]PROVIDER:NAME  trace this USDT probe (its arguments are\n"
		"                         recorded); bpfprof.h probes are traced without -U\n"
		"      --gated            record only inside BPFPROF_START()/BPFPROF_STOP()\n"
		"                         windows (process-wide)\n"
		"      --debug-dir DIR    also look for debug files (names for stripped\n"
		"                         binaries) in DIR, as in /usr/lib/debug; repeatable\n"
		"  -a, --all              every process on the system (with --sample/--offcpu,\n"
		"                         or -F LIB:GLOB); COMMAND is then optional\n");
	if (attach)
		fprintf(f, "  -p, --pid PID[,PID]    processes to trace (repeatable)\n");
	else
		fprintf(f, "      --as-root          under sudo, run COMMAND as root (default: as the\n"
			   "                         invoking user, from SUDO_UID/SUDO_GID)\n");
	fprintf(f, "  -q, --quiet            no summary\n"
		   "  -v, --verbose          more messages (twice: libbpf debug)\n"
		   "  -h, --help             this help\n\noutput formats:\n");
	for (i = 0; exporter_table[i]; i++)
		fprintf(f, "  %-10s %-18s %s\n", exporter_table[i]->name, exporter_table[i]->suffix,
			exporter_table[i]->help);
	fprintf(f, "\nWithout -o, the archive bpfprof.data is written (see 'bpfprof report',\n"
		   "'bpfprof convert').  Ctrl-C stops the recording and writes what was captured.\n");
}

/* Returns 0, 1 for --help (exit 0), or -EINVAL. */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	enum { OPT_FORMAT = 256, OPT_MIN_TIME, OPT_BUFFER, OPT_NO_FOLLOW, OPT_AS_ROOT, OPT_ARGS,
	       OPT_NO_SKIP_ENDBR, OPT_SAMPLE, OPT_OFFCPU, OPT_NO_KSTACKS, OPT_NO_WAKEUPS, OPT_DEPS,
	       OPT_GATED, OPT_STACK, OPT_STACK_SIZE, OPT_DEBUG_DIR, OPT_NO_COMP, OPT_COMP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "function", required_argument, NULL, 'F' },
		{ "exclude", required_argument, NULL, 'N' },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER },
		{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
		{ "no-skip-endbr", no_argument, NULL, OPT_NO_SKIP_ENDBR },
		{ "no-compensation", no_argument, NULL, OPT_NO_COMP },
		{ "compensate", no_argument, NULL, OPT_COMP },
		{ "sample", optional_argument, NULL, OPT_SAMPLE },
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "no-kernel-stacks", no_argument, NULL, OPT_NO_KSTACKS },
		{ "stack", required_argument, NULL, OPT_STACK },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "all", no_argument, NULL, 'a' },
		{ "args", no_argument, NULL, OPT_ARGS },
		{ "deps", no_argument, NULL, OPT_DEPS },
		{ "no-wakeups", no_argument, NULL, OPT_NO_WAKEUPS },
		{ "usdt", required_argument, NULL, 'U' },
		{ "gated", no_argument, NULL, OPT_GATED },
		{ "as-root", no_argument, NULL, OPT_AS_ROOT },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	int c;

	o->buffer_size = 16ull << 20;	/* ~200 ms of headroom at 1 M calls/s; drained every 1 MB or 50 ms */
	/* '+': stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+o:F:N:U:d:p:aqvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = optarg;
			break;
		case 'F':
			strv_push(&o->includes, &o->nincludes, optarg);
			break;
		case 'N':
			strv_push(&o->excludes, &o->nexcludes, optarg);
			break;
		case OPT_MIN_TIME:
			if (parse_duration(optarg, &o->min_time)) {
				p_err("invalid --min-time '%s' (e.g. 100us, 2ms)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_BUFFER:
			if (parse_buffer_size(optarg, &o->buffer_size))
				return -EINVAL;
			break;
		case OPT_NO_FOLLOW:
			o->no_follow = true;
			break;
		case OPT_SAMPLE: {
			char *end;
			unsigned long hz = optarg ? strtoul(optarg, &end, 10) : 999;

			if (optarg && (*end || hz < 1 || hz > 100000)) {
				p_err("invalid --sample rate '%s' (1 to 100000 Hz)", optarg);
				return -EINVAL;
			}
			o->sample_hz = hz;
			break;
		}
		case OPT_OFFCPU:
			o->offcpu = true;
			break;
		case OPT_ARGS:
			o->args = true;
			break;
		case OPT_DEPS:
			o->deps = o->args = true;
			break;
		case OPT_NO_WAKEUPS:
			o->no_wakeups = true;
			break;
		case 'U':
			strv_push(&o->usdts, &o->nusdts, optarg);
			break;
		case OPT_GATED:
			o->gated = true;
			break;
		case OPT_DEBUG_DIR:
			debugsyms__add_dir(optarg);
			break;
		case OPT_NO_KSTACKS:
			o->no_kernel_stacks = true;
			break;
		case OPT_STACK:
			if (sampler__parse_stack(optarg, &o->stack))
				return -EINVAL;
			break;
		case OPT_STACK_SIZE:
			if (sampler__parse_stack_size(optarg, &o->stack_size))
				return -EINVAL;
			break;
		case 'a':
			o->all = true;
			break;
		case OPT_NO_COMP:
			o->compensate = false;
			break;
		case OPT_COMP:
			o->compensate = true;
			break;
		case OPT_NO_SKIP_ENDBR:
			o->no_skip_endbr = true;
			break;
		case OPT_AS_ROOT:
			o->as_root = true;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration) || !o->duration) {
				p_err("invalid --duration '%s' (e.g. 500ms, 10s, 2m)", optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			if (!o->attach) {
				p_err("--pid belongs to 'bpfprof attach'");
				return -EINVAL;
			}
			if (parse_pids(optarg, &o->pids, &o->npids))
				return -EINVAL;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout, o->attach);
			return 1;
		default:
			fprintf(stderr, "see 'bpfprof %s --help'\n", o->attach ? "attach" : "record");
			return -EINVAL;
		}
	}
	if (o->attach) {
		if (optind < argc) {
			p_err("unexpected argument '%s' (to start a command use 'bpfprof record')",
			      argv[optind]);
			return -EINVAL;
		}
		if (!o->npids) {
			p_err("attach needs --pid PID");
			return -EINVAL;
		}
	} else if (optind < argc) {
		o->argv = argv + optind;
	} else if (!o->all) {
		p_err("no command given: bpfprof record [options] -- COMMAND [ARGS...]");
		return -EINVAL;
	}
	if ((o->stack != STACK_AUTO || o->stack_size) && !o->sample_hz && !o->offcpu) {
		p_err("--stack and --stack-size shape sampled stacks: add --sample or --offcpu");
		return -EINVAL;
	}
	if (o->gated && o->all) {
		p_err("--gated needs the targets' BPFPROF_START/STOP, not -a");
		return -EINVAL;
	}
	if (o->all) {
		size_t i;

		for (i = 0; i < o->nincludes; i++) {
			const char *lib, *glob;
			char *copy = select__split(o->includes[i], &lib, &glob);

			free(copy);
			if (!lib) {
				p_err("-a traces every process: name the library, -F LIB:GLOB ('%s')",
				      o->includes[i]);
				return -EINVAL;
			}
		}
		if (!o->sample_hz && !o->offcpu && !o->nincludes) {
			p_err("-a needs --sample, --offcpu or -F LIB:GLOB");
			return -EINVAL;
		}
		if (!o->argv && !o->duration)
			p_info("recording every process until Ctrl-C (or use --duration)");
	}
	return 0;
}

/* The output: the archive bpfprof.data by default, like perf.data. */
static int open_output(struct record_opts *o, struct record_ctx *rc)
{
	const struct exporter_ops *ops;

	if (!o->output && !o->format) {
		/* Like perf.data: keep everything, look at it later with report/convert. */
		o->output = "bpfprof.data";
		return exporter__new(&archive_exporter, o->output, &rc->s, &rc->exp);
	}
	ops = exporter__choose(o->format, o->output, o->attach ? "attach" : "record");
	if (!ops)
		return -EINVAL;
	if (!o->output) {
		p_err("--format needs -o FILE ('-' for standard output)");
		return -EINVAL;
	}
	return exporter__new(ops, o->output, &rc->s, &rc->exp);
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
	if (o->all)
		print_top_processes(rc);
	if (s->lost_total)
		p_warn("%llu records lost: the ring buffer was full; try --buffer-size 256M",
		       (unsigned long long)s->lost_total);
	if (rc->exp)
		fprintf(stderr, "bpfprof: wrote %s (%llu events)\n", o->output,
			(unsigned long long)rc->exported);
}

static int run(struct record_opts *o)
{
	struct capture_opts co = {
		.argv = o->attach ? NULL : o->argv,
		.pids = o->pids, .npids = o->npids,
		.all = o->all, .as_root = o->as_root, .verb = "attach",
		.includes = o->includes, .nincludes = o->nincludes,
		.excludes = o->excludes, .nexcludes = o->nexcludes,
		.no_skip_endbr = o->no_skip_endbr,
		.no_compensation = !o->compensate,
		.usdts = o->usdts, .nusdts = o->nusdts,
		.buffer_size = o->buffer_size,
		.no_follow = o->no_follow, .args = o->args, .deps = o->deps,
		.no_wakeups = o->no_wakeups, .gated = o->gated,
		.sample_hz = o->sample_hz, .offcpu = o->offcpu,
		.no_kernel_stacks = o->no_kernel_stacks, .stack = o->stack,
		.stack_size = o->stack_size,
	};
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
	err = capture__new(&co, &rc.s, sink, &rc, &cap);
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
	exit_code = stop_signal ? 128 + stop_signal : capture__exit_code(cap);
cleanup:
	capture__free(cap);
	exporter__free(rc.exp);
	report__free(rc.rep);
	session__free(&rc.s);
	free(rc.top);
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
	free(o.includes);
	free(o.excludes);
	free(o.usdts);
	free(o.pids);
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
